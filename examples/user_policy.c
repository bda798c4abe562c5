/* An application-defined StarPU scheduling policy on TaskQCD's task graphs: the hook for
 * people who study scheduling (tq_init_params.sched_policy). The policy below is deliberately
 * small: one first-come-first-served queue per worker for the tasks only that worker may
 * run (TaskQCD gives a block's tasks a worker set of one: its owner), and one shared queue
 * for the rest, which any worker able to run a task may take. The program solves the same
 * clover system under the library's default policy and under this one, and checks that the
 * solutions are bitwise the same (results never depend on the scheduler) and that the
 * policy did place the tasks. Built and run by `make check` (examples/user_policy).
 *
 * What a policy must do on TaskQCD: take tasks whose worker set (task->workerids) allows
 * one worker only and give them to that worker, and wake the worker it gives a task to
 * (starpu_wake_worker_relax_light): StarPU here is built with blocking drivers, and on GPU
 * nodes idle CPU workers sleep. */
#include "taskqcd.h"

#include <pthread.h>
#include <starpu.h>
#include <starpu_scheduler.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "user_policy: FAIL: %s (%s)\n", what, tq_last_error());
    }
}

/* ---- the policy ------------------------------------------------------------------------- */

struct fifo_policy {
    pthread_mutex_t lock;
    struct starpu_task_list own[STARPU_NMAXWORKERS];   /* tasks only worker w may run */
    struct starpu_task_list shared;                    /* tasks several workers may run */
};
static long pushed_own, pushed_shared;   /* what the policy placed, for the check below */

static void fifo_init(unsigned ctx)
{
    struct fifo_policy *p = calloc(1, sizeof *p);
    if (!p) abort();   /* StarPU's init_sched cannot fail */
    pthread_mutex_init(&p->lock, NULL);
    for (int w = 0; w < STARPU_NMAXWORKERS; w++) starpu_task_list_init(&p->own[w]);
    starpu_task_list_init(&p->shared);
    starpu_sched_ctx_set_policy_data(ctx, p);
}

static void fifo_deinit(unsigned ctx)
{
    struct fifo_policy *p = starpu_sched_ctx_get_policy_data(ctx);
    pthread_mutex_destroy(&p->lock);
    free(p);
}

static int fifo_push(struct starpu_task *task)
{
    const unsigned ctx = task->sched_ctx;
    struct fifo_policy *p = starpu_sched_ctx_get_policy_data(ctx);
    struct starpu_worker_collection *workers = starpu_sched_ctx_get_worker_collection(ctx);
    struct starpu_sched_ctx_iterator it;
    int able[STARPU_NMAXWORKERS], n = 0;
    workers->init_iterator(workers, &it);
    while (workers->has_next(workers, &it)) {
        const unsigned w = workers->get_next(workers, &it);
        if (starpu_worker_can_execute_task_first_impl(w, task, NULL)) able[n++] = (int)w;
    }
    if (n == 0) return -1;   /* no worker of this context can run it */
    pthread_mutex_lock(&p->lock);
    if (n == 1) {
        starpu_task_list_push_back(&p->own[able[0]], task);
        pushed_own++;
    } else {
        starpu_task_list_push_back(&p->shared, task);
        pushed_shared++;
    }
    starpu_push_task_end(task);
    pthread_mutex_unlock(&p->lock);
    for (int i = 0; i < n; i++) starpu_wake_worker_relax_light(able[i]);
    return 0;
}

static struct starpu_task *fifo_pop(unsigned ctx)
{
    struct fifo_policy *p = starpu_sched_ctx_get_policy_data(ctx);
    const int w = starpu_worker_get_id_check();
    struct starpu_task *task = NULL;
    pthread_mutex_lock(&p->lock);
    if (!starpu_task_list_empty(&p->own[w])) {
        task = starpu_task_list_pop_front(&p->own[w]);
    } else {
        for (struct starpu_task *t = starpu_task_list_begin(&p->shared); t != starpu_task_list_end(&p->shared);
             t = starpu_task_list_next(t))
            if (starpu_worker_can_execute_task_first_impl(w, t, NULL)) {
                starpu_task_list_erase(&p->shared, t);
                task = t;
                break;
            }
    }
    pthread_mutex_unlock(&p->lock);
    return task;
}

static struct starpu_sched_policy fifo_policy = {
    .init_sched = fifo_init,
    .deinit_sched = fifo_deinit,
    .push_task = fifo_push,
    .pop_task = fifo_pop,
    .policy_name = "example-fifo",
    .policy_description = "per-worker FIFO for owned tasks, a shared FIFO for the rest",
    .worker_type = STARPU_WORKER_LIST,
};

/* ---- the workload ----------------------------------------------------------------------- */

enum { VOL = 4 * 4 * 4 * 8 };

/* Starts the library (with the policy, or the default one), solves the clover system of a
 * weak-field gauge field with a point source in 2 blocks, stops it. The solution and the
 * iteration count come back; the scheduler's name into sched. */
static void solve_once(struct starpu_sched_policy *policy, double *solution, int *iterations, char *sched,
                       size_t sched_size)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.verbosity = 0;
    ip.ncuda = 0;   /* the same bits on every machine this example runs on */
    ip.sched_policy = policy;
    if (tq_init(&ip) != TQ_SUCCESS) {
        expect(0, "tq_init");
        return;
    }
    tq_runtime_info ri;
    expect(tq_get_runtime_info(&ri) == TQ_SUCCESS, "runtime info");
    snprintf(sched, sched_size, "%s", ri.sched);

    const int dims[4] = {4, 4, 4, 8};
    tq_host_gauge hg;
    expect(tq_host_gauge_alloc(&hg, dims) == TQ_SUCCESS, "host gauge");
    expect(tq_host_gauge_weak(&hg, 5, 0.2) == TQ_SUCCESS, "weak field");
    double *source = calloc((size_t)VOL * 24, sizeof *source);
    source[0] = 1.0;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    lp.block[0] = 4, lp.block[1] = 4, lp.block[2] = 4, lp.block[3] = 4;   /* 2 blocks */
    tq_lattice *lat = NULL;
    tq_field *gauge = NULL, *x = NULL, *b = NULL;
    tq_dirac *d = NULL;
    tq_field_params gp = {TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, TQ_RECON_12, 0};
    tq_field_params sp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_CLOVER;
    dp.kappa = 0.12;
    dp.csw = 1.0;
    tq_solver_params sv;
    tq_solver_params_default(&sv);
    sv.inverter = TQ_INV_BICGSTAB;
    sv.prec_sloppy = TQ_SINGLE;
    sv.tol = 1e-10;
    tq_solver_result res;
    memset(&res, 0, sizeof res);
    expect(tq_lattice_create(&lp, &lat) == TQ_SUCCESS && tq_field_create(lat, &gp, &gauge) == TQ_SUCCESS &&
           tq_gauge_field_import(gauge, &hg) == TQ_SUCCESS && tq_dirac_create(gauge, &dp, &d) == TQ_SUCCESS &&
           tq_field_create(lat, &sp, &x) == TQ_SUCCESS && tq_field_create(lat, &sp, &b) == TQ_SUCCESS &&
           tq_field_import(b, source) == TQ_SUCCESS, "set-up");
    expect(tq_solve(d, x, b, &sv, &res) == TQ_SUCCESS && res.true_residual <= 1e-9, "solve to 1e-10");
    expect(tq_field_export(x, solution) == TQ_SUCCESS, "solution export");
    *iterations = res.iterations;
    tq_field_destroy(x);
    tq_field_destroy(b);
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    tq_host_gauge_free(&hg);
    free(source);
    expect(tq_finalize() == TQ_SUCCESS, "tq_finalize");
}

int main(void)
{
    /* a STARPU_SCHED of the environment would replace the default run's policy, not this
     * example's (StarPU prefers an application's policy): the comparison holds either way */
    double *by_default = calloc((size_t)VOL * 24, sizeof(double)), *by_fifo = calloc((size_t)VOL * 24, sizeof(double));
    int it_default = -1, it_fifo = -2;
    char sched_default[64] = "", sched_fifo[64] = "";
    solve_once(NULL, by_default, &it_default, sched_default, sizeof sched_default);
    solve_once(&fifo_policy, by_fifo, &it_fifo, sched_fifo, sizeof sched_fifo);
    printf("user_policy: %d iterations under %s, %d under %s (%ld tasks to one worker's queue, %ld to the shared "
           "one)\n", it_default, sched_default, it_fifo, sched_fifo, pushed_own, pushed_shared);
    expect(!strcmp(sched_fifo, "example-fifo"), "the runtime reports the application's policy");
    expect(pushed_own + pushed_shared > 100, "the application's policy placed the solve's tasks");
    expect(it_default == it_fifo && it_default > 0, "the same iteration count");
    expect(!memcmp(by_default, by_fifo, (size_t)VOL * 24 * sizeof(double)), "bitwise the same solution");
    free(by_default);
    free(by_fifo);
    printf("user_policy: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
