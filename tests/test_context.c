/* Runtime context: init parameters, argument parsing, the initialised/uninitialised state
 * machine, worker counts and scheduler as StarPU reports them, placement, status names and
 * precision parsing, and whether idle CPU workers sleep. */
#define _POSIX_C_SOURCE 200809L
#include "tq_test.h"
#include "core/tq_internal.h"

#include <dirent.h>
#include <starpu.h>
#include <starpu_scheduler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static void check_defaults(void)
{
    tq_init_params p;
    memset(&p, 0x5a, sizeof p);
    tq_init_params_default(&p);
    CHECK(p.ncpus == -1, "default ncpus %d", p.ncpus);
    CHECK(p.ncuda == -1, "default ncuda %d", p.ncuda);
    CHECK(p.sched == NULL, "default sched not NULL");
    CHECK(p.verbosity == 1, "default verbosity %d", p.verbosity);
    CHECK(p.use_mpi == -1, "default use_mpi %d", p.use_mpi);
    CHECK(p.sched_policy == NULL, "default sched_policy not NULL");
    CHECK(p.task_graph == NULL, "default task_graph not NULL");
    tq_init_params_default(NULL);   /* must not crash */
}

/* Runs tq_init_params_from_args on a copy of args (n entries) and returns the status. */
static tq_status parse(tq_init_params *p, int n, const char *const *args, int *argc_out,
                       char **argv_out)
{
    for (int i = 0; i < n; i++) argv_out[i] = (char *)args[i];
    argv_out[n] = NULL;
    *argc_out = n;
    tq_init_params_default(p);
    return tq_init_params_from_args(p, argc_out, argv_out);
}

static void check_from_args(void)
{
    tq_init_params p;
    char *argv[32];
    int argc;

    /* everything at once, interleaved with the caller's arguments */
    const char *a1[] = {"prog", "--ncpus", "3", "foo", "--ncuda", "0", "--sched", "eager", "bar",
                        "--verbosity", "2", "--no-mpi", "--dim", "4", "baz"};
    CHECK_OK(parse(&p, 15, a1, &argc, argv));
    CHECK(p.ncpus == 3, "ncpus %d", p.ncpus);
    CHECK(p.ncuda == 0, "ncuda %d", p.ncuda);
    CHECK(p.sched && !strcmp(p.sched, "eager"), "sched %s", p.sched ? p.sched : "(null)");
    CHECK(p.verbosity == 2, "verbosity %d", p.verbosity);
    CHECK(p.use_mpi == 0, "use_mpi %d", p.use_mpi);
    const char *left1[] = {"prog", "foo", "bar", "--dim", "4", "baz"};
    CHECK(argc == 6, "argc after parsing %d (expected 6)", argc);
    for (int i = 0; i < 6 && i < argc; i++)
        CHECK(!strcmp(argv[i], left1[i]), "argv[%d] = '%s' (expected '%s')", i, argv[i], left1[i]);
    CHECK(argv[argc] == NULL, "argv[argc] not NULL");

    /* --quiet sets verbosity 0; later options win; --ngpus is an alias of --ncuda */
    const char *a2[] = {"prog", "--verbosity", "2", "--quiet", "--ngpus", "1", "--ncpus", "-1"};
    CHECK_OK(parse(&p, 8, a2, &argc, argv));
    CHECK(p.verbosity == 0, "verbosity after --quiet %d", p.verbosity);
    CHECK(p.ncuda == 1, "ncuda via --ngpus %d", p.ncuda);
    CHECK(p.ncpus == -1, "ncpus -1 %d", p.ncpus);
    CHECK(p.sched == NULL, "sched untouched");
    CHECK(p.use_mpi == -1, "use_mpi untouched %d", p.use_mpi);
    CHECK(argc == 1 && !strcmp(argv[0], "prog") && argv[1] == NULL, "argc %d after consuming all", argc);

    /* nothing to consume: arguments unchanged */
    const char *a3[] = {"prog", "-n", "--ncpu", "x"};
    CHECK_OK(parse(&p, 4, a3, &argc, argv));
    CHECK(argc == 4, "argc %d", argc);
    for (int i = 0; i < 4 && i < argc; i++) CHECK(!strcmp(argv[i], a3[i]), "argv[%d] = %s", i, argv[i]);
    CHECK(p.ncpus == -1, "--ncpu (not an option) changed ncpus to %d", p.ncpus);

    /* bad values */
    const char *bad_int[] = {"abc", "", "3x", "-2", "1.5", "99999999999"};
    for (int k = 0; k < 6; k++) {
        const char *opts[] = {"--ncpus", "--ncuda", "--verbosity"};
        for (int o = 0; o < 3; o++) {
            const char *a[] = {"prog", opts[o], bad_int[k]};
            tq_status s = parse(&p, 3, a, &argc, argv);
            CHECK(s == TQ_ERR_INVALID_ARG, "%s '%s' returned %s", opts[o], bad_int[k], tq_status_name(s));
            CHECK(strstr(tq_last_error(), opts[o]) != NULL, "message for %s '%s' does not name the option: '%s'",
                  opts[o], bad_int[k], tq_last_error());
        }
    }
    /* --export-graph FILE: the task graph's file, consumed */
    const char *a4[] = {"prog", "--export-graph", "g.json", "rest"};
    CHECK_OK(parse(&p, 4, a4, &argc, argv));
    CHECK(p.task_graph && !strcmp(p.task_graph, "g.json"), "task_graph %s", p.task_graph ? p.task_graph : "(null)");
    CHECK(argc == 2 && !strcmp(argv[1], "rest"), "argc %d after --export-graph", argc);
    const char *a5[] = {"prog", "--export-graph", ""};
    CHECK_ERR(parse(&p, 3, a5, &argc, argv), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "--export-graph") != NULL, "message '%s'", tq_last_error());

    const char *missing[] = {"--ncpus", "--ncuda", "--verbosity", "--sched", "--export-graph"};
    for (int o = 0; o < 5; o++) {
        const char *a[] = {"prog", "foo", missing[o]};
        CHECK_ERR(parse(&p, 3, a, &argc, argv), TQ_ERR_INVALID_ARG);
    }
    CHECK_ERR(tq_init_params_from_args(NULL, &argc, argv), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_init_params_from_args(&p, NULL, argv), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_init_params_from_args(&p, &argc, NULL), TQ_ERR_INVALID_ARG);
}

static void check_not_initialized(void)
{
    CHECK(!tq_is_initialized(), "initialized before tq_init");
    /* a lattice can be made without the runtime; a field cannot */
    tq_lattice_params lp = {{4, 4, 4, 4}, {0, 0, 0, 0}, {0, 0, 0, 0}, 0};
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    if (lat) {
        tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
        tq_field *f = (tq_field *)&fp;   /* must be reset to NULL */
        CHECK_ERR(tq_field_create(lat, &fp, &f), TQ_ERR_NOT_INITIALIZED);
        CHECK(f == NULL, "tq_field_create returned a field before tq_init");
        tq_lattice_destroy(lat);
    }
    tq_runtime_info info;
    CHECK_ERR(tq_wait_all(), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_get_runtime_info(&info), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_get_runtime_info(NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_set_placement(TQ_WHERE_CPU), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_set_placement(TQ_WHERE_ANY), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_finalize(), TQ_ERR_NOT_INITIALIZED);

    /* rejected before StarPU is touched */
    tq_init_params p;
    tq_init_params_default(&p);
    p.verbosity = 0;
    p.ncpus = 0; p.ncuda = 0;
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    p.ncpus = -2; p.ncuda = -1;
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    p.ncpus = 1; p.ncuda = -5;
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    CHECK(!tq_is_initialized(), "initialized after a rejected tq_init");
}

/* One init/finalize cycle with ncpus CPU workers, no GPU and the given scheduler. */
static void check_cycle(int ncpus, const char *sched)
{
    tq_init_params p;
    tq_init_params_default(&p);
    p.ncpus = ncpus;
    p.ncuda = 0;
    p.sched = sched;
    p.verbosity = 0;
    p.use_mpi = 0;
    tq_status s = tq_init(&p);
    CHECK(s == TQ_SUCCESS, "tq_init(ncpus=%d, sched=%s): %s: %s", ncpus, sched, tq_status_name(s), tq_last_error());
    if (s) return;
    CHECK(tq_is_initialized(), "not initialized after tq_init");
    CHECK_ERR(tq_init(&p), TQ_ERR_ALREADY_INITIALIZED);
    CHECK_ERR(tq_init(NULL), TQ_ERR_ALREADY_INITIALIZED);
    CHECK(tq_is_initialized(), "a second tq_init broke the first");

    tq_runtime_info info;
    memset(&info, 0x5a, sizeof info);
    CHECK_OK(tq_get_runtime_info(&info));
    CHECK(info.ncpu_workers == ncpus, "ncpu_workers %d (asked for %d)", info.ncpu_workers, ncpus);
    CHECK(info.ncuda_workers == 0, "ncuda_workers %d (asked for 0)", info.ncuda_workers);
    CHECK(!strcmp(info.sched, sched), "scheduler '%.32s' (asked for '%s')", info.sched, sched);
    CHECK(info.mpi_rank == 0 && info.mpi_size == 1, "mpi rank %d size %d", info.mpi_rank, info.mpi_size);
    CHECK(info.built_with_cuda == 0 || info.built_with_cuda == 1, "built_with_cuda %d", info.built_with_cuda);
    CHECK(info.built_with_mpi == 0 || info.built_with_mpi == 1, "built_with_mpi %d", info.built_with_mpi);
    int maj = -1, min = -1, rev = -1;
    CHECK(sscanf(info.starpu_version, "%d.%d.%d", &maj, &min, &rev) == 3 && maj >= 1,
          "starpu_version '%.32s'", info.starpu_version);

    CHECK(tq_get_placement() == TQ_WHERE_ANY, "initial placement %d", (int)tq_get_placement());
    CHECK_ERR(tq_set_placement(TQ_WHERE_CUDA), TQ_ERR_UNSUPPORTED);
    CHECK(tq_get_placement() == TQ_WHERE_ANY, "failed tq_set_placement changed placement to %d", (int)tq_get_placement());
    CHECK_ERR(tq_set_placement((tq_where)7), TQ_ERR_INVALID_ARG);
    CHECK_OK(tq_set_placement(TQ_WHERE_CPU));
    CHECK(tq_get_placement() == TQ_WHERE_CPU, "placement %d after setting CPU", (int)tq_get_placement());
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    CHECK(tq_get_placement() == TQ_WHERE_ANY, "placement %d after setting ANY", (int)tq_get_placement());
    CHECK_OK(tq_wait_all());

    CHECK_OK(tq_finalize());
    CHECK(!tq_is_initialized(), "initialized after tq_finalize");
    CHECK_ERR(tq_finalize(), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_wait_all(), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_get_runtime_info(&info), TQ_ERR_NOT_INITIALIZED);
}

/* An unknown scheduling policy, as a parameter or in STARPU_SCHED (which StarPU lets
 * override the parameter), is refused before StarPU starts: StarPU itself would only warn
 * and run lws. The message names the valid policies, and a later tq_init works. */
static void check_unknown_sched(void)
{
    tq_init_params p;
    tq_init_params_default(&p);
    p.ncpus = 1;
    p.ncuda = 0;
    p.verbosity = 0;
    p.use_mpi = 0;

    p.sched = "nonexistent";
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "'nonexistent'") != NULL, "message does not name the policy: '%s'", tq_last_error());
    CHECK(strstr(tq_last_error(), "eager") && strstr(tq_last_error(), "dmda") && strstr(tq_last_error(), "lws"),
          "message does not list the valid policies: '%s'", tq_last_error());
    CHECK(!tq_is_initialized(), "initialized after an unknown scheduler");
    p.sched = "";
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    check_cycle(1, "eager");

    /* STARPU_SCHED is checked even when the parameter is valid */
    p.sched = "eager";
    setenv("STARPU_SCHED", "nonexistent", 1);
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "STARPU_SCHED") && strstr(tq_last_error(), "'nonexistent'") &&
          strstr(tq_last_error(), "dmda"), "message does not name STARPU_SCHED, its value and the policies: '%s'",
          tq_last_error());
    CHECK(!tq_is_initialized(), "initialized after an unknown STARPU_SCHED");
    /* a valid STARPU_SCHED rules over the parameter, as StarPU documents */
    setenv("STARPU_SCHED", "prio", 1);
    p.sched = "eager";
    tq_status s = tq_init(&p);
    CHECK(s == TQ_SUCCESS, "tq_init with STARPU_SCHED=prio: %s: %s", tq_status_name(s), tq_last_error());
    if (s == TQ_SUCCESS) {
        tq_runtime_info info;
        CHECK_OK(tq_get_runtime_info(&info));
        CHECK(!strcmp(info.sched, "prio"), "scheduler '%.32s' with STARPU_SCHED=prio", info.sched);
        CHECK_OK(tq_finalize());
    }
    unsetenv("STARPU_SCHED");
    check_cycle(1, "eager");

    /* the option parser refuses an unknown --sched at once */
    const char *a[] = {"prog", "--sched", "nonexistent"};
    char *argv[4];
    int argc;
    CHECK_ERR(parse(&p, 3, a, &argc, argv), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "'nonexistent'") && strstr(tq_last_error(), "dmda"),
          "--sched nonexistent: message '%s'", tq_last_error());

    /* an application's policy (examples/user_policy.c runs one): not with a name, and not
     * without its push and pop */
    tq_init_params_default(&p);
    p.ncpus = 1;
    p.ncuda = 0;
    p.verbosity = 0;
    p.use_mpi = 0;
    struct starpu_sched_policy half = {.policy_name = "half", .push_task = NULL, .pop_task = NULL};
    p.sched_policy = &half;
    p.sched = "eager";
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "sched_policy") && strstr(tq_last_error(), "'eager'"),
          "a name and a policy: message '%s'", tq_last_error());
    p.sched = NULL;
    CHECK_ERR(tq_init(&p), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "push_task") != NULL, "a policy without push and pop: message '%s'", tq_last_error());
    CHECK(!tq_is_initialized(), "initialized with a policy that cannot run");
    check_cycle(1, "eager");
}

static void check_status_names(void)
{
    static const char *names[] = {
        "TQ_SUCCESS", "TQ_ERR_INVALID_ARG", "TQ_ERR_NOT_INITIALIZED", "TQ_ERR_ALREADY_INITIALIZED",
        "TQ_ERR_NOMEM", "TQ_ERR_RUNTIME", "TQ_ERR_IO", "TQ_ERR_FORMAT", "TQ_ERR_CHECKSUM",
        "TQ_ERR_NOT_UNITARY", "TQ_ERR_UNSUPPORTED", "TQ_ERR_MISMATCH"};
    for (int s = 0; s <= (int)TQ_ERR_MISMATCH; s++) {
        const char *n = tq_status_name((tq_status)s);
        CHECK(n && !strcmp(n, names[s]), "tq_status_name(%d) = '%s' (expected '%s')", s, n ? n : "(null)", names[s]);
    }
    const char *u = tq_status_name((tq_status)99);
    CHECK(u && u[0], "tq_status_name of an unknown code is empty");
    for (int s = 0; s <= (int)TQ_ERR_MISMATCH; s++)
        CHECK(strcmp(u, names[s]), "unknown code named like %s", names[s]);
}

static void check_precision(void)
{
    static const struct { const char *s; tq_precision p; } ok[] = {
        {"double", TQ_DOUBLE}, {"d", TQ_DOUBLE}, {"single", TQ_SINGLE}, {"s", TQ_SINGLE},
        {"half", TQ_HALF}, {"h", TQ_HALF}};
    for (int k = 0; k < 6; k++) {
        tq_precision p = (tq_precision)0;
        CHECK_OK(tq_precision_parse(ok[k].s, &p));
        CHECK(p == ok[k].p, "'%s' parsed as %d", ok[k].s, (int)p);
    }
    static const char *bad[] = {"quad", "", "doubles", "half ", "4", "x"};
    for (int k = 0; k < 6; k++) {
        tq_precision p = TQ_SINGLE;
        CHECK_ERR(tq_precision_parse(bad[k], &p), TQ_ERR_INVALID_ARG);
        CHECK(p == TQ_SINGLE, "failed parse of '%s' changed the output", bad[k]);
    }
    tq_precision p;
    CHECK_ERR(tq_precision_parse(NULL, &p), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_precision_parse("double", NULL), TQ_ERR_INVALID_ARG);
    CHECK(!strcmp(tq_precision_name(TQ_DOUBLE), "double"), "name of TQ_DOUBLE");
    CHECK(!strcmp(tq_precision_name(TQ_SINGLE), "single"), "name of TQ_SINGLE");
    CHECK(!strcmp(tq_precision_name(TQ_HALF), "half"), "name of TQ_HALF");
    /* names parse back */
    tq_precision all[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
    for (int k = 0; k < 3; k++) {
        CHECK_OK(tq_precision_parse(tq_precision_name(all[k]), &p));
        CHECK(p == all[k], "round trip of %d", (int)all[k]);
    }
}

/* The GPUs each of the ranks sharing a node drives: every GPU to exactly one rank where
 * there are enough, ranks spread evenly over the GPUs where there are not. */
static void check_rank_gpus(void)
{
    for (int ngpus = 1; ngpus <= 8; ngpus++)
        for (int ranks = 1; ranks <= 8; ranks++) {
            int times[8] = {0}, most = 0, fewest = 1 << 30;
            for (int r = 0; r < ranks; r++) {
                int gpus[8];
                const int n = tq_internal_rank_gpus(r, ranks, ngpus, gpus);
                CHECK(n >= 1, "%d GPUs, %d ranks: rank %d gets no GPU", ngpus, ranks, r);
                if (n > most) most = n;
                if (n < fewest) fewest = n;
                for (int i = 0; i < n; i++) {
                    CHECK(gpus[i] >= 0 && gpus[i] < ngpus, "%d GPUs, %d ranks: rank %d gets GPU %d", ngpus, ranks, r, gpus[i]);
                    if (gpus[i] >= 0 && gpus[i] < ngpus) times[gpus[i]]++;
                }
            }
            CHECK(most - fewest <= 1, "%d GPUs, %d ranks: shares of %d to %d GPUs", ngpus, ranks, fewest, most);
            for (int g = 0; g < ngpus; g++) {
                const int want_lo = ranks <= ngpus ? 1 : ranks / ngpus, want_hi = ranks <= ngpus ? 1 : (ranks + ngpus - 1) / ngpus;
                CHECK(times[g] >= want_lo && times[g] <= want_hi, "%d GPUs, %d ranks: GPU %d driven by %d ranks", ngpus, ranks, g,
                      times[g]);
            }
        }
    int gpus[8];
    CHECK(tq_internal_rank_gpus(1, 2, 2, gpus) == 1 && gpus[0] == 1, "2 GPUs, 2 ranks: rank 1 drives GPU 1");
    CHECK(tq_internal_rank_gpus(0, 2, 4, gpus) == 2 && gpus[0] == 0 && gpus[1] == 1, "4 GPUs, 2 ranks: rank 0 drives 0 and 1");
    CHECK(tq_internal_rank_gpus(0, 2, 0, gpus) == 0, "no GPUs: none");
}

/* Idle CPU workers: with TQ_CPU_WORKERS_SLEEP=1 (the default on GPU nodes) they sleep, and
 * a task submitted afterwards still runs (a sleeping worker is woken); with 0 (the default
 * without GPUs) they spin. StarPU 1.3 keeps a worker awake while it sees no other worker
 * awake, and an idle spinning worker counts as asleep there; on a GPU node the GPU workers
 * are the ones running tasks. Here worker 0 holds a task that waits (without CPU) while the
 * others idle, and the test sums every thread's CPU time meanwhile: near zero when the idle
 * workers sleep, about a core per worker when they spin. */
static int ticks;
static void tick_cpu(void *buffers[], void *arg)
{
    (void)buffers;
    (void)arg;
    __atomic_add_fetch(&ticks, 1, __ATOMIC_RELAXED);
}
static struct starpu_codelet tick_cl = {.cpu_funcs = {tick_cpu}, .nbuffers = 0, .name = "test_tick"};

static void hold_cpu(void *buffers[], void *arg)
{
    (void)buffers;
    const double s = *(const double *)arg;
    const struct timespec t = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&t, NULL);
}
static struct starpu_codelet hold_cl = {.cpu_funcs = {hold_cpu}, .nbuffers = 0, .name = "test_hold"};

enum { MAX_THREADS = 256 };

/* CPU ticks (user + system) of each of this process's threads; returns how many, -1 when
 * /proc cannot be read */
static int thread_cpu_ticks(long tid[], long cpu[])
{
    DIR *d = opendir("/proc/self/task");
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; n < MAX_THREADS && (e = readdir(d));) {
        if (e->d_name[0] == '.') continue;
        char path[300], buf[1024];
        snprintf(path, sizeof path, "/proc/self/task/%s/stat", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f) continue;
        const size_t len = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[len] = 0;
        const char *q = strrchr(buf, ')');   /* the name may hold spaces */
        long ut = 0, st = 0;
        /* after ") ": state, then fields 4..13, then utime (14) and stime (15) */
        if (q && sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %ld %ld", &ut, &st) == 2) {
            tid[n] = atol(e->d_name);
            cpu[n++] = ut + st;
        }
    }
    closedir(d);
    return n;
}

/* CPU seconds of all threads while the main thread sleeps idle_s, worker 0 holds a task and
 * the other nworkers - 1 CPU workers idle; -1 when it cannot be measured */
static double idle_cpu_seconds(const char *sleep_setting, int nworkers, double idle_s)
{
    setenv("TQ_CPU_WORKERS_SLEEP", sleep_setting, 1);
    tq_init_params p;
    tq_init_params_default(&p);
    p.ncpus = nworkers;
    p.ncuda = 0;
    p.sched = "dmdas";
    p.verbosity = 0;
    p.use_mpi = 0;
    tq_status s = tq_init(&p);
    unsetenv("TQ_CPU_WORKERS_SLEEP");
    CHECK(s == TQ_SUCCESS, "tq_init (TQ_CPU_WORKERS_SLEEP=%s): %s", sleep_setting, tq_last_error());
    if (s) return -1;
    const struct timespec settle = {0, 100000000}, idle = {(time_t)idle_s, (long)((idle_s - (time_t)idle_s) * 1e9)};
    nanosleep(&settle, NULL);   /* the workers' start-up work */
    double hold_s = idle_s + 0.3;
    struct starpu_task *hold = starpu_task_create();
    hold->cl = &hold_cl;
    hold->cl_arg = &hold_s;
    hold->cl_arg_size = sizeof hold_s;
    hold->execute_on_a_specific_worker = 1;
    hold->workerid = 0;
    CHECK(starpu_task_submit(hold) == 0, "submitting the holding task");
    nanosleep(&settle, NULL);   /* the hold starts, the other workers find nothing */
    static long tid0[MAX_THREADS], cpu0[MAX_THREADS], tid1[MAX_THREADS], cpu1[MAX_THREADS];
    const int n0 = thread_cpu_ticks(tid0, cpu0);
    nanosleep(&idle, NULL);
    const int n1 = thread_cpu_ticks(tid1, cpu1);
    double rest = -1;
    if (n0 > 0 && n1 > 0) {
        long total = 0;
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n0; j++)
                if (tid1[i] == tid0[j]) total += cpu1[i] - cpu0[j];
        rest = (double)total / (double)sysconf(_SC_CLK_TCK);
    }
    CHECK_OK(tq_wait_all());
    /* the idle workers still take work: tasks submitted now all run */
    ticks = 0;
    for (int i = 0; i < 16; i++) {
        struct starpu_task *t = starpu_task_create();
        t->cl = &tick_cl;
        CHECK(starpu_task_submit(t) == 0, "submitting a task after the idle time");
    }
    CHECK_OK(tq_wait_all());
    CHECK(ticks == 16, "%d of 16 tasks ran after the workers idled (TQ_CPU_WORKERS_SLEEP=%s)", ticks, sleep_setting);
    CHECK_OK(tq_finalize());
    return rest;
}

static void check_idle_workers(void)
{
    const double idle_s = 0.5;
    const int nworkers = 3;
    const double asleep = idle_cpu_seconds("1", nworkers, idle_s);
    const double spinning = idle_cpu_seconds("0", nworkers, idle_s);
    if (asleep < 0 || spinning < 0) {
        printf("test_context: no /proc/self/task: idle workers' CPU time not measured\n");
        return;
    }
    printf("test_context: %d CPU workers idle for %.1f s beside a held one, CPU time of all threads: "
           "%.2f s asleep, %.2f s spinning\n", nworkers - 1, idle_s, asleep, spinning);
    CHECK(asleep <= 0.1 * idle_s, "sleeping idle workers used %.2f s of CPU in %.1f s", asleep, idle_s);
    /* the contrast (two spinning workers, even sharing two cores with other processes): the
     * measurement can tell sleeping from spinning */
    CHECK(spinning >= 0.2 * idle_s, "spinning idle workers used only %.2f s of CPU in %.1f s", spinning, idle_s);
}

int main(void)
{
    /* StarPU's variables would override the parameters under test */
    unsetenv("STARPU_NCPU");
    unsetenv("STARPU_NCPUS");
    unsetenv("STARPU_NCUDA");
    unsetenv("STARPU_SCHED");

    check_defaults();
    check_rank_gpus();
    check_from_args();
    check_status_names();
    check_precision();
    check_not_initialized();
    check_cycle(1, "eager");
    /* the runtime can be started again after tq_finalize, with another worker mix */
    long ncores = sysconf(_SC_NPROCESSORS_ONLN);
    check_cycle(ncores >= 2 ? 2 : 1, "lws");
    check_unknown_sched();
#ifndef TQ_SIMGRID
    check_idle_workers();
#endif

    {
        tq_init_params p;
        tq_init_params_default(&p);
        p.verbosity = 0;
        p.use_mpi = 1;
        tq_status s = tq_init(&p);
        /* builds without MPI refuse an explicit MPI request */
        if (s == TQ_SUCCESS) {
            tq_runtime_info info;
            tq_get_runtime_info(&info);
            CHECK(info.built_with_mpi, "use_mpi=1 accepted by a build without MPI");
            tq_finalize();
        } else {
            CHECK(s == TQ_ERR_UNSUPPORTED, "use_mpi=1 without MPI: %s", tq_status_name(s));
        }
    }
    return tq_test_finish("test_context");
}
