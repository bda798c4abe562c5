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
 * the test then). Runs appended to a chain task that still waits (tasks/submit.c) happen
 * in the random sequences by chance, and in joins() on purpose. Two host threads flushing
 * chains onto two sequenced workers (threads_order()) must reach both workers in one
 * order of their flushes, as peer mode's stream waits need. */
#include "tq_test.h"
#include "tq_tasks.h"

#include <pthread.h>
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

/* Records tasks ids[0 .. n-1] (each: one owner, its buffers) as one chain. */
typedef struct { int id, owner, nbuf, handle[MAXBUF], mode[MAXBUF]; } one_task;
static void submit_chain(const one_task *t, int n, const int *workers, starpu_data_handle_t *h)
{
    tq_task_chain_begin();
    for (int k = 0; k < n; k++) {
        task_arg a = {t[k].id, t[k].nbuf, {0}};
        struct starpu_data_descr d[MAXBUF];
        for (int i = 0; i < t[k].nbuf; i++) {
            a.mode[i] = t[k].mode[i];
            d[i].handle = h[t[k].handle[i]];
            d[i].mode = (enum starpu_data_access_mode)t[k].mode[i];
        }
        const tq_task_options opt = {.where = TQ_WHERE_CPU, .worker = workers[t[k].owner], .rank = -1};
        CHECK(tq_task_submit_descr(&opt, &logged_cl, &a, sizeof a, d, t[k].nbuf, STARPU_DEFAULT_PRIO) == 0,
              "task %d not submitted", t[k].id);
    }
    CHECK(tq_task_chain_end() == 0, "chain of task %d not submitted", t[0].id);
}

static uint64_t seen_by_acquire;
static void read_on_acquire(void *arg)
{
    starpu_data_handle_t hd = arg;
    memcpy(&seen_by_acquire, (void *)starpu_data_get_local_ptr(hd), sizeof seen_by_acquire);
    starpu_data_release(hd);
}

/* A chain task that still waits for its dependencies (here: the host holds its gate) takes
 * the next run of its owner when that run's buffers are among its own; a buffer it lacks,
 * or an asynchronous acquire of one of its buffers in between (tq_task_note_access), sends
 * the run as a task of its own. Checked: the counts of runs appended, the order of the
 * tasks, and what the asynchronous acquire saw (the value before the later run). */
static void joins(const int *workers, starpu_data_handle_t *h)
{
    enum { GATE = 0, A = 1, B = 2 };
    for (int k = 0; k < NHANDLES; k++) {
        starpu_data_acquire(h[k], STARPU_W);
        const uint64_t v = (uint64_t)k * 31;
        memcpy((void *)starpu_data_get_local_ptr(h[k]), &v, sizeof v);
        starpu_data_release(h[k]);
    }
    for (int t = 0; t < NTASKS; t++) started[t] = ended[t] = 0;
    starpu_data_acquire(h[GATE], STARPU_RW);   /* the first chain waits for it */
    const long e0 = tq_internal_chains_extended();
    const one_task first[2] = {{0, 0, 2, {GATE, A}, {STARPU_R, STARPU_RW}}, {1, 0, 1, {A}, {STARPU_RW}}};
    submit_chain(first, 2, workers, h);
    const one_task second = {2, 0, 1, {A}, {STARPU_RW}};
    submit_chain(&second, 1, workers, h);   /* joins the first */
    const long e1 = tq_internal_chains_extended();
    const one_task other_buffer = {3, 0, 1, {B}, {STARPU_RW}};
    submit_chain(&other_buffer, 1, workers, h);   /* B is not the waiting chain's */
    const long e2 = tq_internal_chains_extended();
    CHECK(e1 - e0 == 1, "a run of the waiting chain's owner on its buffers was not appended (%ld)", e1 - e0);
    CHECK(e2 == e1, "a run with a buffer the waiting chain lacks was appended");
    /* B's task went alone and does not touch the waiting chain's buffers: the next run on
     * A joins the waiting chain still; then an asynchronous read of A, and another run on A */
    const one_task third[2] = {{4, 0, 2, {GATE, A}, {STARPU_R, STARPU_RW}}, {5, 0, 1, {A}, {STARPU_RW}}};
    submit_chain(third, 2, workers, h);
    const long e2b = tq_internal_chains_extended();
    CHECK(e2b == e2 + 1, "a run on the waiting chain's buffers after an unrelated task was not appended");
    tq_task_note_access(h[A], STARPU_R);
    seen_by_acquire = 0;
    CHECK(starpu_data_acquire_cb(h[A], STARPU_R, read_on_acquire, h[A]) == 0,
          "asynchronous acquire failed");
    const one_task fourth = {6, 0, 1, {A}, {STARPU_RW}};
    submit_chain(&fourth, 1, workers, h);
    const long e3 = tq_internal_chains_extended();
    CHECK(e3 == e2b, "a run was appended past an asynchronous acquire of its buffer");
    starpu_data_release(h[GATE]);
    starpu_task_wait_for_all();
    for (int t = 0; t < 6; t++)
        CHECK(t == 3 || ended[t] > 0, "task %d did not run", t);
    CHECK(ended[0] < started[1] && ended[1] < started[2] && ended[2] < started[4] && ended[5] < started[6],
          "the tasks on A ran out of order");
    /* what A held after task 5: task 6 must not have run before the acquire read it */
    uint64_t after6;
    starpu_data_acquire(h[A], STARPU_R);
    memcpy(&after6, (void *)starpu_data_get_local_ptr(h[A]), sizeof after6);
    starpu_data_release(h[A]);
    CHECK(seen_by_acquire != 0 && seen_by_acquire != after6, "the asynchronous acquire saw %s",
          seen_by_acquire ? "the value of a later run" : "nothing");
    printf("waiting chains: %ld runs appended, none with a buffer it lacks or past an asynchronous acquire\n", e2b - e0);
}

/* ---- two threads flushing onto sequenced workers ------------------------------------------
 * Each flush records a task for worker 1 and then one for worker 0 (its own handles: no
 * dependency between the threads); each worker's sequencer runs its tasks in the order they
 * reached it, and each task logs its flush there. Every worker must see the two threads'
 * flushes in the same relative order: another thread's chain between one flush's two chains
 * is what had two GPUs' stream waits wait on each other (tasks/submit.c, submit_order). */
enum { NFLUSH = 1000, NTHREADS = 2 };
static int order_log[2][NTHREADS * NFLUSH];
static int order_len[2];
typedef struct { int slot, flush; } order_arg;
static void order_cpu(void *buffers[], void *cl_arg)
{
    (void)buffers;
    const order_arg *a = cl_arg;
    order_log[a->slot][order_len[a->slot]++] = a->flush;   /* one worker: no race */
}
static struct starpu_codelet order_cl = {
    .cpu_funcs = {order_cpu}, .nbuffers = STARPU_VARIABLE_NBUFFERS, .name = "test_order",
};
typedef struct { int thread; const int *workers; starpu_data_handle_t h[2]; } order_thread;
static void *order_flushes(void *arg)
{
    const order_thread *t = arg;
    for (int i = 0; i < NFLUSH; i++) {
        tq_task_chain_begin();
        for (int k = 1; k >= 0; k--) {
            const order_arg a = {k, t->thread * NFLUSH + i};
            const struct starpu_data_descr d = {t->h[k], STARPU_RW};
            const tq_task_options opt = {.where = TQ_WHERE_CPU, .worker = t->workers[k], .rank = -1};
            if (tq_task_submit_descr(&opt, &order_cl, &a, sizeof a, &d, 1, STARPU_DEFAULT_PRIO)) return arg;
        }
        if (tq_task_chain_end()) return arg;
    }
    tq_task_thread_finish();
    return NULL;
}
static void threads_order(const int *workers)
{
    static uint64_t store[NTHREADS][2][8];
    order_thread t[NTHREADS];
    pthread_t th[NTHREADS];
    for (int k = 0; k < 2; k++) CHECK(tq_task_sequence_worker(workers[k]) == 0, "worker %d not sequenced", workers[k]);
    for (int i = 0; i < NTHREADS; i++) {
        t[i].thread = i;
        t[i].workers = workers;
        for (int k = 0; k < 2; k++)
            starpu_vector_data_register(&t[i].h[k], STARPU_MAIN_RAM, (uintptr_t)store[i][k], 8, sizeof(uint64_t));
    }
    int started = 0;
    for (int i = 0; i < NTHREADS; i++) started += pthread_create(&th[i], NULL, order_flushes, &t[i]) == 0;
    CHECK(started == NTHREADS, "%d of %d threads started", started, NTHREADS);
    void *failed = NULL;
    for (int i = 0; i < started; i++) {
        void *r = NULL;
        pthread_join(th[i], &r);
        if (r) failed = r;
    }
    CHECK(!failed, "a task or chain of the threads was not submitted");
    starpu_task_wait_for_all();
    for (int i = 0; i < NTHREADS; i++)
        for (int k = 0; k < 2; k++) starpu_data_unregister(t[i].h[k]);
    CHECK(order_len[0] == started * NFLUSH && order_len[1] == started * NFLUSH, "the workers ran %d and %d tasks, not %d",
          order_len[0], order_len[1], started * NFLUSH);
    static int pos[2][NTHREADS * NFLUSH];
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < order_len[k]; j++) pos[k][order_log[k][j]] = j;
    long crossed = 0;
    for (int a = 0; a < NFLUSH; a++)   /* thread 0's flush a against thread 1's flush b */
        for (int b = NFLUSH; b < 2 * NFLUSH; b++)
            crossed += (pos[0][a] < pos[0][b]) != (pos[1][a] < pos[1][b]);
    CHECK(crossed == 0, "%ld pairs of the two threads' flushes reached the two workers in opposite orders", crossed);
    printf("two threads, %d flushes each onto two sequenced workers: %ld pairs in opposite orders\n", NFLUSH, crossed);
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
    joins(workers, h);
    const long chains0 = tq_internal_chains_submitted(), appended0 = tq_internal_chains_extended();
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
    const long chains = tq_internal_chains_submitted() - chains0, appended = tq_internal_chains_extended() - appended0;
    printf("%d random sequences of %d tasks over %d handles and %d owners: %ld chain tasks, %ld runs appended to "
           "waiting ones, %d order violations, %d sequences with other values, %d owned tasks elsewhere\n",
           NSEQ, NTASKS, NHANDLES, NOWNERS, chains, appended, order_violations, value_mismatches, elsewhere);
    CHECK(order_violations == 0, "%d conflicting pairs ran out of their recorded order", order_violations);
    CHECK(value_mismatches == 0, "%d sequences ended with other values chained than one task per kernel", value_mismatches);
    CHECK(elsewhere == 0, "%d owned tasks ran on another worker", elsewhere);
    CHECK(chains > NSEQ, "only %ld chain tasks: the runs were not formed", chains);

    for (int k = 0; k < NHANDLES; k++) starpu_data_unregister(h[k]);
    threads_order(workers);   /* last: the workers stay sequenced */
    tq_finalize();
    return tq_test_finish("test_chain_order");
}
