/* Runtime context: starts StarPU (and StarPU-MPI when built with MPI and launched under
 * mpirun), records what it got, and shuts it down. StarPU's own environment variables
 * (STARPU_NCPU, STARPU_NCUDA, STARPU_SCHED, ...) keep working: they take precedence over
 * the parameters, as StarPU documents. An unknown scheduler name, in either, is refused. */
#define _GNU_SOURCE   /* sched_getaffinity */
#include "core/tq_internal.h"
#include "core/placement.h"
#include "tq_codelets.h"

#include <pthread.h>
#include <sched.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef TQ_HAVE_MPI
#include <starpu_mpi.h>
#endif
#ifdef TQ_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static struct {
    int initialized;
    int verbosity;
    int mpi_active;
    int mpi_rank, mpi_size;
#ifdef TQ_HAVE_MPI
    MPI_Comm own_comm;   /* the library's own messages (tq_internal_in_order), apart from StarPU-MPI's */
    /* groups of k consecutive ranks (tq_lattice_params.group_ranks), made once per k */
    int ngroups, group_k[TQ_MAX_GROUP_COMMS];
    MPI_Comm group_comm[TQ_MAX_GROUP_COMMS];
#endif
    int idle_hook;   /* the progression hook's id, -1: none */
    int rank_ncuda[64];   /* every rank's CUDA workers (peer units, core/peer.c) */
} ctx;

/* Idle CPU workers on a GPU node sleep instead of spinning (StarPU is built with blocking
 * drivers; a progression hook that answers 0 keeps a worker from blocking). With GPUs the
 * CPU workers mostly have nothing to do, and spinning they took every core of the node: on
 * a 64-core virtual machine with 4 H100s, 64^4 Wilson M_pc on the GPUs took 1.5-3.1 ms with
 * 59 spinning CPU workers against 1.23 with 16 (doc/performance.md, "GPUs and all CPU
 * cores"). GPU workers keep spinning: a sleeping one would pay a wake-up between two
 * dependent tasks. On machines without GPUs every worker spins, as before. */
#ifndef TQ_SIMGRID   /* simulated workers must block */
static int cpu_workers_sleep;
static _Thread_local signed char thread_may_sleep = -1;   /* -1: not yet asked */
static unsigned idle_worker_may_sleep(void *arg)
{
    (void)arg;
    if (thread_may_sleep < 0) {
        const int id = starpu_worker_get_id();
        if (id < 0) return 0;   /* not (yet) a worker: ask again next time */
        thread_may_sleep = starpu_worker_get_type(id) == STARPU_CPU_WORKER;
    }
    return cpu_workers_sleep && thread_may_sleep;
}
#endif

/* What layers above src/core/ release at tq_finalize (tq_internal_at_finalize). */
enum { MAX_AT_FINALIZE = 16 };
static void (*at_finalize[MAX_AT_FINALIZE])(void);
static int nat_finalize;
static pthread_mutex_t at_finalize_lock = PTHREAD_MUTEX_INITIALIZER;

int tq_internal_at_finalize(void (*fn)(void))
{
    int ret = 0, known = 0;
    pthread_mutex_lock(&at_finalize_lock);
    for (int i = 0; i < nat_finalize; i++) known |= at_finalize[i] == fn;
    if (!known) {
        if (nat_finalize < MAX_AT_FINALIZE) at_finalize[nat_finalize++] = fn;
        else ret = -1;
    }
    pthread_mutex_unlock(&at_finalize_lock);
    return ret;
}

static void run_at_finalize(void)
{
    pthread_mutex_lock(&at_finalize_lock);
    int n = nat_finalize;
    nat_finalize = 0;
    pthread_mutex_unlock(&at_finalize_lock);
    while (n > 0) at_finalize[--n]();
}

void tq_init_params_default(tq_init_params *p)
{
    if (!p) return;
    p->ncpus = -1;
    p->ncuda = -1;
    p->sched = NULL;
    p->verbosity = 1;
    p->use_mpi = -1;
    p->sched_policy = NULL;
    p->task_graph = NULL;
    p->trace_dir = NULL;
}

static int parse_int(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < -1 || v > 1 << 20) return -1;
    *out = (int)v;
    return 0;
}

/* An unknown policy name makes StarPU print a warning and run lws, so a typo would go
 * unnoticed: refuse it, naming the policies this StarPU has. what says where the name came
 * from (the option, the parameter or STARPU_SCHED). */
static tq_status check_sched_name(const char *name, const char *what)
{
    struct starpu_sched_policy **all = starpu_sched_get_predefined_policies();
    for (int i = 0; all[i]; i++)
        if (all[i]->policy_name && !strcmp(name, all[i]->policy_name)) return TQ_SUCCESS;
    char list[800];
    size_t len = 0;
    list[0] = '\0';
    for (int i = 0; all[i] && len < sizeof list; i++) {
        if (!all[i]->policy_name) continue;
        int n = snprintf(list + len, sizeof list - len, "%s%s", len ? ", " : "", all[i]->policy_name);
        if (n < 0) break;
        len += (size_t)n;
    }
    return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown scheduling policy '%s' (StarPU's policies: %s)",
                    what, name, list);
}

tq_status tq_init_params_from_args(tq_init_params *p, int *argc, char **argv)
{
    if (!p || !argc || !argv) return tq_error(TQ_ERR_INVALID_ARG, "tq_init_params_from_args: NULL argument");
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        int *target = NULL;
        if (!strcmp(a, "--ncpus")) target = &p->ncpus;
        else if (!strcmp(a, "--ncuda") || !strcmp(a, "--ngpus")) target = &p->ncuda;
        else if (!strcmp(a, "--verbosity")) target = &p->verbosity;
        if (target) {
            if (i + 1 >= *argc || parse_int(argv[i + 1], target))
                return tq_error(TQ_ERR_INVALID_ARG, "option %s needs an integer >= -1", a);
            i++;
            continue;
        }
        if (!strcmp(a, "--sched")) {
            if (i + 1 >= *argc) return tq_error(TQ_ERR_INVALID_ARG, "option --sched needs a policy name");
            p->sched = argv[++i];
            TQ_CHECK(check_sched_name(p->sched, "option --sched"));
            continue;
        }
        if (!strcmp(a, "--export-graph")) {
            if (i + 1 >= *argc || !argv[i + 1][0]) return tq_error(TQ_ERR_INVALID_ARG, "option --export-graph needs a file name");
            p->task_graph = argv[++i];
            continue;
        }
        if (!strcmp(a, "--trace")) {
            if (i + 1 >= *argc || !argv[i + 1][0]) return tq_error(TQ_ERR_INVALID_ARG, "option --trace needs a folder");
            p->trace_dir = argv[++i];
            continue;
        }
        if (!strcmp(a, "--no-mpi")) { p->use_mpi = 0; continue; }
        if (!strcmp(a, "--quiet")) { p->verbosity = 0; continue; }
        argv[out++] = argv[i];
    }
    *argc = out;
    argv[out] = NULL;
    return TQ_SUCCESS;
}

int tq_internal_rank_gpus(int local_rank, int local_ranks, int ngpus, int *gpus)
{
    if (local_ranks < 1 || ngpus < 1) return 0;
    const int r = ((local_rank % local_ranks) + local_ranks) % local_ranks;
    if (ngpus < local_ranks) {
        gpus[0] = r % ngpus;
        return 1;
    }
    /* a contiguous run: neighbouring GPUs are the closer ones on PCIe machines */
    const int first = (int)((long)r * ngpus / local_ranks), end = (int)((long)(r + 1) * ngpus / local_ranks);
    for (int g = first; g < end; g++) gpus[g - first] = g;
    return end - first;
}

static int launched_by_mpirun(void)
{
    return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMI_SIZE") || getenv("PMIX_RANK");
}

tq_status tq_init(const tq_init_params *params)
{
    if (ctx.initialized) return tq_error(TQ_ERR_ALREADY_INITIALIZED, "tq_init: already initialized");
    tq_init_params p;
    if (params) p = *params; else tq_init_params_default(&p);
    if (p.ncpus < -1 || p.ncuda < -1)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_init: ncpus (%d) and ncuda (%d) must be >= -1", p.ncpus, p.ncuda);
    if (p.ncpus == 0 && p.ncuda == 0)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_init: no workers requested (ncpus = ncuda = 0)");
    /* STARPU_SCHED rules over the parameter, so both must name a policy */
    if (p.sched) TQ_CHECK(check_sched_name(p.sched, "tq_init"));
    if (p.sched && p.sched_policy)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_init: both a policy name (sched '%s') and a policy of the application "
                        "(sched_policy): give one", p.sched);
    if (p.sched_policy) {
        const struct starpu_sched_policy *up = p.sched_policy;
        if (!up->push_task || !up->pop_task || !up->policy_name)
            return tq_error(TQ_ERR_INVALID_ARG, "tq_init: the application's scheduling policy needs push_task, pop_task "
                            "and policy_name");
    }
    const char *env_sched = getenv("STARPU_SCHED");
    if (env_sched) TQ_CHECK(check_sched_name(env_sched, "tq_init: STARPU_SCHED"));
    /* a trace folder: made now (before anything else), so a bad one costs nothing */
    const char *trace = p.trace_dir ? p.trace_dir : getenv("TQ_TRACE");
    if (trace && !*trace) trace = NULL;
    if (trace && mkdir(trace, 0777) && errno != EEXIST)
        return tq_error(TQ_ERR_IO, "tq_init: cannot make the trace folder '%s': %s", trace, strerror(errno));
    if (trace && access(trace, W_OK | X_OK))
        return tq_error(TQ_ERR_IO, "tq_init: cannot write into the trace folder '%s': %s", trace, strerror(errno));
    static char trace_graph[4200];   /* tq_task_graph_set_path keeps the pointer */
    if (trace && (size_t)snprintf(trace_graph, sizeof trace_graph, "%s/graph.json", trace) >= sizeof trace_graph - 16)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_init: the trace folder's name is too long");

    tq_internal_fxt_prepare(trace);

    struct starpu_conf conf;
    starpu_conf_init(&conf);
    if (p.ncpus >= 0) conf.ncpus = p.ncpus;
    /* StarPU's default gives every core to a worker; the application thread, which submits
     * the solvers' tasks and reads their residuals, then competes with spinning workers for
     * a core (on a 16-core GPU node solves took 2-5 times longer, erratically). Leave it
     * one where there are cores to spare. (STARPU_NCPU and STARPU_RESERVE_NCPU still rule.) */
    if (p.ncpus < 0 && sysconf(_SC_NPROCESSORS_ONLN) >= 4) conf.reserve_ncpus = 1;
    if (p.ncuda >= 0) conf.ncuda = p.ncuda;
    conf.nopencl = 0;
    if (p.sched) conf.sched_policy_name = p.sched;
    conf.sched_policy = p.sched_policy;   /* StarPU prefers it to any name */
#ifdef TQ_HAVE_CUDA
    /* With GPUs, a scheduler with one central view: StarPU's default (lws) lets every idle
     * CPU worker look for work to steal, and with 14 of them on an H200 node GPU-only tasks
     * waited long (12 batched 32^4 solves 1.95 s against 0.88 s with dmda or prio; a
     * 16-slab generator sweep 5x slower). dmdas: per-worker queues in priority order (the
     * packs' priority counts: dmda, first come first served, made 64^4 Wilson M_pc on 4
     * H100s 9 % slower), and a push wakes only the worker it chose. prio and eager share
     * one queue; with idle CPU workers asleep (below) prio's pop wakes every worker when it
     * skips a task it cannot run, and they wake each other while a GPU's task waits (4
     * H100, 32^4 M_pc with 59 CPU workers: 0.482 ms under prio, 0.202 under dmdas, 0.191
     * with the GPUs alone). (STARPU_SCHED still rules.) */
    int ngpus = 0;
    if (p.ncuda == 0 || cudaGetDeviceCount(&ngpus) != cudaSuccess) ngpus = 0;
    if (!p.sched && ngpus > 0) conf.sched_policy_name = "dmdas";
    /* An idle worker polls the scheduler again after a back-off of up to STARPU_BACKOFF_MAX
     * pause loops (StarPU's default 32: a couple of microseconds). With GPUs most CPU
     * workers idle, and many of them polling slowed every GPU worker's turn from one task
     * to the next (2 H100, 32^4 Wilson M_pc on both: 0.287 / 0.254 ms single / half with 29
     * CPU workers, 0.202 / 0.161 with a back-off of 16384, 0.196 / 0.146 with 2 CPU
     * workers; one GPU unchanged). A worker that finds a task starts again from the
     * minimum, so only a long-idle one waits that long (about a millisecond at most).
     * (STARPU_BACKOFF_MAX still rules.) */
    if (ngpus > 0 && !getenv("STARPU_BACKOFF_MAX")) conf.driver_spinning_backoff_max = 16384;
#endif
    if (p.verbosity < 2) setenv("STARPU_SILENT", "1", 0);
    /* StarPU keeps 5-10 % of a GPU's buffers "clean" by writing dirty ones back to host
     * memory whenever a GPU idles. TaskQCD's fields live on their owner's GPU and have no
     * home, so every write-back is wasted bus traffic and host memory, and StarPU 1.3.10
     * aborts at shutdown on a write-back still queued (the assertion in
     * _starpu_data_request_prio_list_deinit). Simulated 48^4 solve on 2 GPUs: 0.75 s with
     * them, 0.26 s without (doc/design.md). A full GPU still evicts on demand. */
    /* every stream its own hardware queue: a stream held by a peer face's value wait
     * (core/stencil.h) must not hold up another stream's work behind it */
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    /* every kernel loaded when the GPU's context is made, not at its first launch: loading
     * a kernel lazily (CUDA's default since 12.2) may wait for the context to drain, and a
     * context whose stream waits on a peer counter (a face or partial sum another GPU or
     * rank sends) drains only when that other side runs on, which may itself wait for this
     * one: a deadlock CUDA's lazy-loading guide names. Peer-mode hangs were all in a
     * solve's first iteration, where new kernels start (test_peer's CG on 2 x H200: 4 of 20
     * runs; doc/design.md, "Peer mode"). It costs StarPU's start 0.1-0.25 s and spares the
     * first solve as much (doc/performance.md, "Propagator job"). An application's own
     * setting wins; one that made a CUDA context before tq_init keeps its mode. */
    setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    setenv("STARPU_MINIMUM_CLEAN_BUFFERS", "0", 0);
    setenv("STARPU_TARGET_CLEAN_BUFFERS", "0", 0);

    int use_mpi = p.use_mpi;
#ifdef TQ_HAVE_MPI
    if (use_mpi < 0) use_mpi = launched_by_mpirun();
#else
    if (use_mpi > 0) return tq_error(TQ_ERR_UNSUPPORTED, "tq_init: MPI requested but TaskQCD was built without MPI");
    use_mpi = 0;
#endif

    /* Ranks sharing a node: each StarPU binds its workers to the node's first cores, so two
     * ranks' workers (and driver threads) land on the same cores (on a 16-core H200 node two
     * ranks' M_pc took 145 ms instead of 1.7). Unless the user binds them (STARPU_WORKERS_*),
     * leave binding to the OS and give each rank its share of the cores. */
    const char *lsize = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    if (!lsize) lsize = getenv("MPI_LOCALNRANKS");
    const int local_ranks = use_mpi && lsize ? atoi(lsize) : 1;
    if (local_ranks > 1 && !getenv("STARPU_WORKERS_CPUID") && !getenv("STARPU_WORKERS_COREID") &&
        !getenv("STARPU_WORKERS_NOBIND")) {
        setenv("STARPU_WORKERS_NOBIND", "1", 0);
        long share = sysconf(_SC_NPROCESSORS_ONLN) / local_ranks;
        /* the launcher may have bound the rank to fewer cores (mpirun binds to one core by
         * default for two ranks): its workers then share those */
        cpu_set_t allowed;
        if (sched_getaffinity(0, sizeof allowed, &allowed) == 0 && CPU_COUNT(&allowed) < share) {
            share = CPU_COUNT(&allowed);
            fprintf(stderr, "taskqcd: this rank may run on %ld core(s) only; with mpirun, --bind-to none (or "
                    "--map-by slot:PE=N) gives it its share of the node\n", share);
        }
        /* the share less the submitting thread (StarPU-MPI's own thread mostly sleeps) */
        if (p.ncpus < 0 && !getenv("STARPU_NCPU") && !getenv("STARPU_NCPUS")) {
            conf.ncpus = share > 2 ? (int)share - 1 : 1;
            conf.reserve_ncpus = 0;
        }
    }
#ifdef TQ_HAVE_CUDA
    /* Ranks sharing a node's GPUs: StarPU gives every rank every GPU, so two ranks on a
     * two-GPU node would both drive both. Each local rank takes its share
     * (tq_internal_rank_gpus); STARPU_WORKERS_CUDAID and STARPU_NCUDA still rule. */
    const char *lrank = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (!lrank) lrank = getenv("MPI_LOCALRANKID");
    if (local_ranks > 1 && lrank && p.ncuda != 0 && ngpus > 0 && !getenv("STARPU_WORKERS_CUDAID") &&
        !getenv("STARPU_NCUDA")) {
        int gpus[STARPU_MAXCUDADEVS];
        int n = tq_internal_rank_gpus(atoi(lrank), local_ranks, ngpus < STARPU_MAXCUDADEVS ? ngpus : STARPU_MAXCUDADEVS, gpus);
        for (int i = 0; i < n; i++) conf.workers_cuda_gpuid[i] = (unsigned)gpus[i];
        if (p.ncuda > 0 && p.ncuda < n) n = p.ncuda;
        conf.use_explicit_workers_cuda_gpuid = 1;
        conf.ncuda = n;
    }
#endif

    int ret;
#ifdef TQ_HAVE_MPI
    if (use_mpi) {
        ret = starpu_mpi_init_conf(NULL, NULL, 1, MPI_COMM_WORLD, &conf);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "tq_init: starpu_mpi_init_conf failed (%d)", ret);
        ctx.mpi_rank = starpu_mpi_world_rank();
        ctx.mpi_size = starpu_mpi_world_size();
        if (ctx.mpi_size > 64) {
            starpu_mpi_shutdown();
            return tq_error(TQ_ERR_UNSUPPORTED, "tq_init: %d MPI ranks; at most 64 for now", ctx.mpi_size);
        }
        if (MPI_Comm_dup(MPI_COMM_WORLD, &ctx.own_comm) != MPI_SUCCESS) {
            starpu_mpi_shutdown();
            return tq_error(TQ_ERR_RUNTIME, "tq_init: MPI_Comm_dup failed");
        }
    } else
#endif
    {
        ret = starpu_init(&conf);
        if (ret == -ENODEV)
            return tq_error(TQ_ERR_RUNTIME, "tq_init: StarPU found no worker for the requested mix (ncpus=%d, ncuda=%d)", p.ncpus, p.ncuda);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "tq_init: starpu_init failed (%d)", ret);
        ctx.mpi_rank = 0;
        ctx.mpi_size = 1;
    }
    (void)launched_by_mpirun;
    /* NULL: TQ_TASK_GRAPH, if set; a trace writes one into its folder where none is named */
    tq_task_graph_set_path(p.task_graph ? p.task_graph : trace && !getenv("TQ_TASK_GRAPH") ? trace_graph : NULL);
    tq_task_log_set_trace(trace);
#ifndef TQ_SIMGRID   /* simulated workers must block: the simulation advances only then */
    const char *sleep_env = getenv("TQ_CPU_WORKERS_SLEEP");
    cpu_workers_sleep = sleep_env ? atoi(sleep_env) != 0 : starpu_cuda_worker_get_count() > 0;
    ctx.idle_hook = starpu_progression_hook_register(idle_worker_may_sleep, NULL);
    /* workers idle since starpu_init went to sleep before the hook could keep them awake;
     * woken, each asks the hook again (StarPU 1.3's register wakes them only on failure) */
    starpu_wake_all_blocked_workers();
#else
    ctx.idle_hook = -1;
#endif
    tq_codelets_init();
    tq_internal_placement_reset();
    tq_task_set_ranks(ctx.mpi_rank, ctx.mpi_size);
    ctx.mpi_active = use_mpi;
    ctx.verbosity = p.verbosity;
    /* every rank's GPU count, once: whether and how peer mode spreads over the ranks' GPUs
     * is then decided from facts every rank has, without a collective (core/peer.c) */
    const int my_ncuda = (int)starpu_cuda_worker_get_count();
    memset(ctx.rank_ncuda, 0, sizeof ctx.rank_ncuda);
    if (tq_internal_allgather_bytes(&my_ncuda, ctx.rank_ncuda, (int)sizeof my_ncuda))
        memset(ctx.rank_ncuda, 0, sizeof ctx.rank_ncuda);   /* no peer mode across ranks */
    ctx.initialized = 1;
    if (p.ncuda > 0 && (int)starpu_cuda_worker_get_count() < p.ncuda)
        tq_log(1, "asked for %d GPU(s), StarPU has %u CUDA worker(s)", p.ncuda, starpu_cuda_worker_get_count());
    if (ctx.mpi_rank == 0)
        tq_log(1, "StarPU started: %u CPU worker(s), %u CUDA worker(s), scheduler %s%s",
               starpu_cpu_worker_get_count(), starpu_cuda_worker_get_count(),
               starpu_sched_ctx_get_sched_policy(0)->policy_name, use_mpi ? ", StarPU-MPI" : "");
    return TQ_SUCCESS;
}

tq_status tq_finalize(void)
{
    if (!ctx.initialized) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_finalize: not initialized");
#ifdef TQ_HAVE_MPI
    /* detached sends and receives too (a receive still waiting for its handle at shutdown
     * leaves StarPU's requester behind: LeakSanitizer saw it on 2 ranks) */
    if (ctx.mpi_active) starpu_mpi_wait_for_all(MPI_COMM_WORLD);
#endif
    starpu_task_wait_for_all();
    run_at_finalize();
    tq_task_log_finish();   /* TQ_TASK_LOG: the file, while the workers still have names */
    tq_task_graph_finish();   /* TQ_TASK_GRAPH, --export-graph */
    tq_codelets_shutdown();
    tq_task_sequencers_release();
    if (ctx.idle_hook >= 0) starpu_progression_hook_deregister(ctx.idle_hook);
    ctx.idle_hook = -1;
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active) {
        for (int i = 0; i < ctx.ngroups; i++) MPI_Comm_free(&ctx.group_comm[i]);
        ctx.ngroups = 0;
        MPI_Comm_free(&ctx.own_comm);
        starpu_mpi_shutdown();
    } else
#endif
        starpu_shutdown();
    tq_internal_fxt_finish(ctx.mpi_rank, ctx.mpi_size);   /* StarPU has written its trace */
    tq_task_set_ranks(0, 1);
    ctx.initialized = 0;
    return TQ_SUCCESS;
}

int tq_is_initialized(void) { return ctx.initialized; }

tq_status tq_wait_all(void)
{
    if (!ctx.initialized) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_wait_all: call tq_init first");
    starpu_task_wait_for_all();
    return TQ_SUCCESS;
}

tq_status tq_get_runtime_info(tq_runtime_info *info)
{
    if (!info) return tq_error(TQ_ERR_INVALID_ARG, "tq_get_runtime_info: NULL argument");
    if (!ctx.initialized) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_get_runtime_info: call tq_init first");
    memset(info, 0, sizeof *info);
    info->ncpu_workers = (int)starpu_cpu_worker_get_count();
    info->ncuda_workers = (int)starpu_cuda_worker_get_count();
    info->mpi_rank = ctx.mpi_rank;
    info->mpi_size = ctx.mpi_size;
#ifdef TQ_HAVE_CUDA
    info->built_with_cuda = 1;
#endif
#ifdef TQ_HAVE_MPI
    info->built_with_mpi = 1;
#endif
    snprintf(info->sched, sizeof info->sched, "%s", starpu_sched_ctx_get_sched_policy(0)->policy_name);
    int maj, min, rev;
    starpu_get_version(&maj, &min, &rev);
    snprintf(info->starpu_version, sizeof info->starpu_version, "%d.%d.%d", maj, min, rev);
#ifdef STARPU_USE_FXT
    info->starpu_fxt = 1;
#endif
    return TQ_SUCCESS;
}

void tq_log(int level, const char *fmt, ...)
{
    if (level > ctx.verbosity && ctx.initialized) return;
    if (level > 1 && !ctx.initialized) return;
    va_list ap;
    va_start(ap, fmt);
    fputs("taskqcd: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int tq_internal_mpi_size(void) { return ctx.mpi_size; }

double tq_internal_now(void)
{
#ifdef TQ_SIMGRID
    /* StarPU's simulated clock: the times the library and the tools report are the
     * simulated machine's */
    if (ctx.initialized) return starpu_timing_now() * 1e-6;
#endif
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
int tq_internal_mpi_rank(void) { return ctx.mpi_rank; }
int tq_internal_rank_cuda_workers(int rank) { return rank >= 0 && rank < ctx.mpi_size ? ctx.rank_ncuda[rank] : 0; }

#ifdef TQ_HAVE_MPI
/* Communicator `comm` (tq_internal_group_comm's number; 0: every rank) and its size. */
static MPI_Comm comm_of(int comm) { return comm > 0 ? ctx.group_comm[comm - 1] : MPI_COMM_WORLD; }
static int comm_size(int comm) { return comm > 0 ? ctx.group_k[comm - 1] : ctx.mpi_size; }
#endif

int tq_internal_group_comm(int k)
{
#ifdef TQ_HAVE_MPI
    if (!ctx.mpi_active || k <= 1 || k >= ctx.mpi_size) return 0;
    for (int i = 0; i < ctx.ngroups; i++)
        if (ctx.group_k[i] == k) return i + 1;
    /* every rank reaches this with the same k (tq_lattice_create checks k on every rank) */
    if (ctx.ngroups == TQ_MAX_GROUP_COMMS) return -1;
    if (MPI_Comm_split(MPI_COMM_WORLD, ctx.mpi_rank / k, ctx.mpi_rank, &ctx.group_comm[ctx.ngroups]) != MPI_SUCCESS)
        return -1;
    ctx.group_k[ctx.ngroups++] = k;
    return ctx.ngroups;
#else
    (void)k;
    return 0;
#endif
}

uint64_t tq_internal_allreduce_min_u64_on(int comm, uint64_t v)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && comm_size(comm) > 1) MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_UINT64_T, MPI_MIN, comm_of(comm));
#else
    (void)comm;
#endif
    return v;
}

uint64_t tq_internal_allreduce_min_u64(uint64_t v) { return tq_internal_allreduce_min_u64_on(0, v); }

void tq_internal_allreduce_sum_on(int comm, double *v, int n)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && comm_size(comm) > 1) MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_DOUBLE, MPI_SUM, comm_of(comm));
#else
    (void)comm; (void)v; (void)n;
#endif
}

void tq_internal_allreduce_sum(double *v, int n) { tq_internal_allreduce_sum_on(0, v, n); }

int tq_internal_allgather_on(int comm, const double *mine, double *all, int count)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && comm_size(comm) > 1)
        return MPI_Allgather(mine, count, MPI_DOUBLE, all, count, MPI_DOUBLE, comm_of(comm)) == MPI_SUCCESS ? 0 : -1;
#else
    (void)comm;
#endif
    memcpy(all, mine, (size_t)count * sizeof *all);
    return 0;
}

void tq_internal_bcast(void *buf, int bytes, int root)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && ctx.mpi_size > 1) MPI_Bcast(buf, bytes, MPI_BYTE, root, MPI_COMM_WORLD);
#else
    (void)buf; (void)bytes; (void)root;
#endif
}

void tq_internal_allreduce_u32(uint32_t *v, int n, int xor_op)
{
#ifdef TQ_HAVE_MPI
    /* unsigned addition wraps: the sum is mod 2^32, as a checksum wants */
    if (ctx.mpi_active && ctx.mpi_size > 1)
        MPI_Allreduce(MPI_IN_PLACE, v, n, MPI_UINT32_T, xor_op ? MPI_BXOR : MPI_SUM, MPI_COMM_WORLD);
#else
    (void)v; (void)n; (void)xor_op;
#endif
}

int tq_internal_allgather_bytes(const void *mine, void *all, int bytes)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && ctx.mpi_size > 1)
        return MPI_Allgather(mine, bytes, MPI_BYTE, all, bytes, MPI_BYTE, MPI_COMM_WORLD) == MPI_SUCCESS ? 0 : -1;
#endif
    memcpy(all, mine, (size_t)bytes);
    return 0;
}

void tq_internal_barrier(void)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && ctx.mpi_size > 1) MPI_Barrier(MPI_COMM_WORLD);
#endif
}

double tq_wall_time(void) { return tq_internal_now(); }

tq_status tq_allreduce_sum(double *v, int n)
{
    if (!v || n < 0) return tq_error(TQ_ERR_INVALID_ARG, "tq_allreduce_sum: NULL array or negative count");
    if (!ctx.initialized) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_allreduce_sum: call tq_init first");
    tq_internal_allreduce_sum(v, n);
    return TQ_SUCCESS;
}

tq_status tq_internal_in_order(int stride, double *v, int64_t n, tq_status (*step)(double *v, void *arg), void *arg)
{
#ifdef TQ_HAVE_MPI
    if (ctx.mpi_active && ctx.mpi_size > stride) {
        if (n > 0x7fffffff)   /* every rank passes the same n: all return here */
            return tq_error(TQ_ERR_UNSUPPORTED, "in order over ranks: %lld reals are too many for one message", (long long)n);
        const int me = ctx.mpi_rank, last = me + stride >= ctx.mpi_size;
        tq_status st = TQ_SUCCESS;
        if (me >= stride && MPI_Recv(v, (int)n, MPI_DOUBLE, me - stride, 0, ctx.own_comm, MPI_STATUS_IGNORE))
            st = tq_error(TQ_ERR_RUNTIME, "in order over ranks: MPI_Recv from rank %d failed", me - stride);
        if (st == TQ_SUCCESS) st = step(v, arg);
        /* passed on even after a failure, so no rank waits for ever; the verdict follows */
        if (!last && MPI_Send(v, (int)n, MPI_DOUBLE, me + stride, 0, ctx.own_comm) && st == TQ_SUCCESS)
            st = tq_error(TQ_ERR_RUNTIME, "in order over ranks: MPI_Send to rank %d failed", me + stride);
        /* the last of the chain's value to the chain's other ranks */
        if (last) {
            for (int r = me - stride; r >= 0; r -= stride)
                if (MPI_Send(v, (int)n, MPI_DOUBLE, r, 1, ctx.own_comm) && st == TQ_SUCCESS)
                    st = tq_error(TQ_ERR_RUNTIME, "in order over ranks: MPI_Send to rank %d failed", r);
        } else {
            int end = me;
            while (end + stride < ctx.mpi_size) end += stride;
            if (MPI_Recv(v, (int)n, MPI_DOUBLE, end, 1, ctx.own_comm, MPI_STATUS_IGNORE) && st == TQ_SUCCESS)
                st = tq_error(TQ_ERR_RUNTIME, "in order over ranks: MPI_Recv from rank %d failed", end);
        }
        return tq_status_agree(st);
    }
#else
    (void)stride;
    (void)n;
#endif
    return step(v, arg);
}

tq_status tq_internal_status_agree_on(int comm, tq_status local)
{
#ifdef TQ_HAVE_MPI
    const int size = comm_size(comm);
    if (ctx.initialized && ctx.mpi_active && size > 1) {
        /* the lowest failing rank (size: none), then its status and message from it */
        int rank = 0;
        MPI_Comm_rank(comm_of(comm), &rank);
        int mine = local != TQ_SUCCESS ? rank : size, first = size;
        MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm_of(comm));
        if (first == size) return TQ_SUCCESS;
        struct { int status; char msg[960]; } verdict = {(int)local, ""};
        if (rank == first) snprintf(verdict.msg, sizeof verdict.msg, "%s", tq_last_error());
        MPI_Bcast(&verdict, (int)sizeof verdict, MPI_BYTE, first, comm_of(comm));
        /* named by its number among all ranks */
        const int world = comm > 0 ? ctx.mpi_rank - rank + first : first;
        return tq_error((tq_status)verdict.status, "rank %d: %s", world, verdict.msg);
    }
#else
    (void)comm;
#endif
    return local;
}

tq_status tq_status_agree(tq_status local) { return tq_internal_status_agree_on(0, local); }

