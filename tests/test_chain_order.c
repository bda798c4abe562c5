/* Chains per owner (tasks/submit.c) keep every dependency of the recorded tasks. Random
 * task sequences over a few handles (each task reads or writes 1-4 of them, owned by one of
 * three CPU workers, some left to the scheduler, now and then a prefetch) are recorded as
 * chains and submitted; every task logs, from inside whichever chain task runs it, a global
 * clock tick when it starts and when it ends. For every two tasks that touch one handle,
 * one of them writing it, the earlier-recorded one must have ended before the later one
 * started; every owned task must have run on its owner; and the handles' final values
 * (each write mixes what the task read into what it writes) must equal those of the same
 * sequence submitted one task per kernel (TQ_CHAIN=0). A lost dependency shows as an
 * order violation or other values, a cycle between chain tasks as a hang (an alarm ends
 * the test then). */
#include "tq_test.h"
#include "tq_tasks.h"

#include <signal.h>
#include <stdint.h>
#include <unistd.h>

enum { NHANDLES = 8, NTASKS = 160, NSEQ = 24, MAXBUF = 4, NOWNERS = 3 };

typedef struct {
    int id, nbuf;
    int mode[MAXBUF];
} task_arg;

static long clock_tick;
static long started[NTASKS], ended[NTASKS];
static int ran_on[NTASKS];

/* Reads every buffer it reads into a mix, then writes the mix (and its id) into every
 * buffer it writes. Duplicate handles in one task are avoided by the generator. */
static void logged_cpu(void *buffers[], void *cl_arg)
{
    const task_arg *a = cl_arg;
    started[a->id] = __atomic_add_fetch(&clock_tick, 1, __ATOMIC_SEQ_CST);
    ran_on[a->id] = starpu_worker_get_id();
    uint64_t mix = 0x9e3779b97f4a7c15ULL * (uint64_t)(a->id + 1);
    for (int i = 0; i < a->nbuf; i++)
        if (a->mode[i] & STARPU_R) {
            const uint64_t *v = (const uint64_t *)STARPU_VECTOR_GET_PTR(buffers[i]);
            mix = (mix ^ v[0]) * 0x100000001b3ULL + (uint64_t)i;
        }
    for (int i = 0; i < a->nbuf; i++)
        if (a->mode[i] & STARPU_W) {
            uint64_t *v = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[i]);
            v[0] = mix + (uint64_t)i;
        }
    /* a little work, so that tasks of different workers overlap */
    volatile double x = 0;
    for (int k = 0; k < 2000; k++) x += k * 1e-9;
    ended[a->id] = __atomic_add_fetch(&clock_tick, 1, __ATOMIC_SEQ_CST);
}

static struct starpu_codelet logged_cl = {
    .cpu_funcs = {logged_cpu},
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .name = "test_logged",
};

typedef struct {
    int nbuf, handle[MAXBUF], mode[MAXBUF], owner, prefetch;
} planned;

static uint64_t rng_state;
static unsigned rnd(unsigned n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (unsigned)(rng_state >> 33) % n;
}

static void plan(planned *p, uint64_t seed)
{
    rng_state = seed;
    for (int t = 0; t < NTASKS; t++) {
        p[t].nbuf = 1 + (int)rnd(MAXBUF);
        for (int i = 0; i < p[t].nbuf; i++) {
            int h, dup;
            do {
                h = (int)rnd(NHANDLES);
                dup = 0;
                for (int j = 0; j < i; j++) dup |= p[t].handle[j] == h;
            } while (dup);
            p[t].handle[i] = h;
            const unsigned m = rnd(4);
            p[t].mode[i] = m < 2 ? STARPU_R : m == 2 ? STARPU_W : STARPU_RW;
        }
        /* mostly owned (runs of one owner, as an operator's blocks), sometimes unowned */
        p[t].owner = rnd(8) == 0 ? -1 : (t > 0 && rnd(3) ? p[t - 1].owner : (int)rnd(NOWNERS));
        if (p[t].owner < 0 && t > 0 && rnd(2)) p[t].owner = (int)rnd(NOWNERS);
        p[t].prefetch = rnd(10) == 0;
    }
}

/* Runs the sequence (recorded in chains of `span` tasks when chained) and returns the
 * handles' final values. */
static void run(const planned *p, const int *workers, starpu_data_handle_t *h, uint64_t *values, int chained,
                int span)
{
    setenv("TQ_CHAIN", chained ? "1" : "0", 1);
    for (int k = 0; k < NHANDLES; k++) {   /* the same start for both runs */
        starpu_data_acquire(h[k], STARPU_W);
        const uint64_t v = (uint64_t)k * 77;
        memcpy((void *)starpu_data_get_local_ptr(h[k]), &v, sizeof v);
        starpu_data_release(h[k]);
    }
    for (int t = 0; t < NTASKS; t++) started[t] = ended[t] = 0, ran_on[t] = -2;
    for (int t = 0; t < NTASKS;) {
        tq_task_chain_begin();
        for (int j = 0; j < span && t < NTASKS; j++, t++) {
            task_arg a = {t, p[t].nbuf, {0}};
            struct starpu_data_descr d[MAXBUF];
            for (int i = 0; i < p[t].nbuf; i++) {
                a.mode[i] = p[t].mode[i];
                d[i].handle = h[p[t].handle[i]];
                d[i].mode = (enum starpu_data_access_mode)p[t].mode[i];
            }
            const tq_task_options opt = {.where = TQ_WHERE_CPU, .priority = 0, .worker = p[t].owner >= 0 ? workers[p[t].owner] : -1, .rank = -1};
            CHECK(tq_task_submit_descr(&opt, &logged_cl, &a, sizeof a, d, p[t].nbuf, STARPU_DEFAULT_PRIO) == 0,
                  "task %d not submitted", t);
            if (p[t].prefetch && opt.worker >= 0)
                CHECK(tq_task_prefetch(&opt, d[0].handle) == 0, "prefetch after task %d failed", t);
        }
        CHECK(tq_task_chain_end() == 0, "chain ending at task %d not submitted", t);
    }
    starpu_task_wait_for_all();
    for (int k = 0; k < NHANDLES; k++) {
        starpu_data_acquire(h[k], STARPU_R);
        uint64_t v;
        memcpy(&v, (void *)starpu_data_get_local_ptr(h[k]), sizeof v);
        values[k] = v;
        starpu_data_release(h[k]);
    }
    unsetenv("TQ_CHAIN");
}

static int conflict(const planned *a, const planned *b)
{
    for (int i = 0; i < a->nbuf; i++)
        for (int j = 0; j < b->nbuf; j++)
            if (a->handle[i] == b->handle[j] && ((a->mode[i] & STARPU_W) || (b->mode[j] & STARPU_W))) return 1;
    return 0;
}

static void on_alarm(int sig)
{
    (void)sig;
    static const char msg[] = "test_chain_order: FAIL: no progress in 120 s (chain tasks waiting on each other?)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(1);
}

int main(void)
{
    signal(SIGALRM, on_alarm);
    alarm(120);
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = NOWNERS;
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }
    int workers[NOWNERS];
    CHECK(starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, workers, NOWNERS) == NOWNERS, "not %d CPU workers", NOWNERS);

    static uint64_t store[NHANDLES][8];
    starpu_data_handle_t h[NHANDLES];
    for (int k = 0; k < NHANDLES; k++) starpu_vector_data_register(&h[k], STARPU_MAIN_RAM, (uintptr_t)store[k], 8, sizeof(uint64_t));

    static planned p[NTASKS];
    const long chains0 = tq_internal_chains_submitted();
    int order_violations = 0, value_mismatches = 0, elsewhere = 0;
    for (int seq = 0; seq < NSEQ; seq++) {
        plan(p, 1000 + (uint64_t)seq);
        const int span = seq % 3 == 0 ? NTASKS : seq % 3 == 1 ? 40 : 7;
        uint64_t plain[NHANDLES], chained[NHANDLES];
        run(p, workers, h, plain, 0, span);
        run(p, workers, h, chained, 1, span);
        for (int u = 0; u < NTASKS; u++) {
            if (p[u].owner >= 0 && ran_on[u] != workers[p[u].owner]) elsewhere++;
            for (int v = u + 1; v < NTASKS; v++)
                if (conflict(&p[u], &p[v]) && !(ended[u] < started[v])) {
                    if (order_violations++ < 5)
                        fprintf(stderr, "sequence %d: task %d (ended at %ld) and task %d (started at %ld) overlap or "
                                "swapped\n", seq, u, ended[u], v, started[v]);
                }
        }
        if (memcmp(plain, chained, sizeof plain)) value_mismatches++;
    }
    const long chains = tq_internal_chains_submitted() - chains0;
    printf("%d random sequences of %d tasks over %d handles and %d owners: %ld chain tasks, %d order violations, "
           "%d sequences with other values, %d owned tasks elsewhere\n",
           NSEQ, NTASKS, NHANDLES, NOWNERS, chains, order_violations, value_mismatches, elsewhere);
    CHECK(order_violations == 0, "%d conflicting pairs ran out of their recorded order", order_violations);
    CHECK(value_mismatches == 0, "%d sequences ended with other values chained than one task per kernel", value_mismatches);
    CHECK(elsewhere == 0, "%d owned tasks ran on another worker", elsewhere);
    CHECK(chains > NSEQ, "only %ld chain tasks: the runs were not formed", chains);

    for (int k = 0; k < NHANDLES; k++) starpu_data_unregister(h[k]);
    tq_finalize();
    return tq_test_finish("test_chain_order");
}
