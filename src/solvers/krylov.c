/* The Krylov frame: inverters written against tq_linop as step machines, so that several
 * solves can be interleaved. tq_krylov_submit queues one iteration's tasks without waiting
 * (the method's: cg.c, bicgstab.c, mr.c, gcr.c; their coefficients are computed by scalar
 * programs from the reductions inside the task graph, kernels/solver_scalars.h);
 * tq_krylov_check then reads the solve's scalars (the one host wait per iteration: the
 * stopping test) and takes the decisions: converged, breakdown, reliable update.
 *
 * Mixed precision (the sloppy operator differs from the system's): the iteration runs on
 * sloppy fields; reliable updates (paper 004, Algorithm 2) add the sloppy solution to the
 * precise one and replace the iterated residual by the true one, b - A x in the system's
 * precision, whenever |r| falls below delta times its largest value since the last update.
 * The search direction is corrected by the change of the residual (p += r_true - r_iter), so
 * it is what the recurrence would have built from the true residual. Defect correction
 * (Algorithm 1) instead restarts the Krylov recurrence at each update. Convergence is
 * decided on the true residual after a final update. */
#include "solvers/krylov_internal.h"
#include "solvers/mg_internal.h"   /* a coarse operator's vector precision */
#include "dirac/staggered.h"       /* a staggered operator's precision */

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- helpers the methods share ----------------------------------------------------------- */

static double field_reals(const tq_field *f)
{
    return (double)f->lat->local_volume / 2.0 * f->nparity * f->layout.nreal;
}

tq_status tq_krylov_field_in(const tq_field *f, tq_precision prec, tq_field **out)
{
    tq_field_params fp = f->p;
    fp.prec = prec;
    return tq_field_create(f->lat, &fp, out);
}

tq_status tq_krylov_blas(tq_krylov *k, int op, tq_field *a, tq_field *b, const double *c, const signed char *slot,
                         int dst, const tq_scalar_instr *prog, int nprog)
{
    tq_field *f[2] = {a, b};
    return tq_blas_submit(k->who, op, c, slot, f, k->sc, dst, prog, nprog);
}

/* Iteration k's snapshot is k % TQ_KRYLOV_QUEUE. */
void tq_krylov_last_reduction(tq_krylov *k) { k->sc->snap_next = (int)(k->queued % TQ_KRYLOV_QUEUE); }

static long fused_iterations;   /* tq_internal_solver_fused_iterations */
long tq_internal_solver_fused_iterations(void) { return __atomic_load_n(&fused_iterations, __ATOMIC_RELAXED); }
void tq_krylov_count_fused_iteration(void) { __atomic_fetch_add(&fused_iterations, 1, __ATOMIC_RELAXED); }
static long queued_ahead;   /* tq_internal_solver_queued_ahead */
long tq_internal_solver_queued_ahead(void) { return __atomic_load_n(&queued_ahead, __ATOMIC_RELAXED); }
static long peer_split_reductions;   /* tq_internal_solver_peer_split_reductions */
long tq_internal_solver_peer_split_reductions(void) { return __atomic_load_n(&peer_split_reductions, __ATOMIC_RELAXED); }

tq_status tq_krylov_fused_matpc(tq_krylov *k, tq_field *out, const tq_field *in, int dagger, int kind, int dst,
                                int slot, tq_field *r, const tq_field *w, tq_field *u, const tq_scalar_instr *prog,
                                int nprog)
{
    tq_dirac_epilogue e;
    memset(&e, 0, sizeof e);
    e.args.kind = (signed char)kind;
    e.args.c = -1.0;
    e.args.slot = (signed char)slot;
    e.args.guard = (signed char)k->sc->guard;
    e.args.dst = (signed char)dst;
    e.args.nprog = (signed char)nprog;
    if (nprog) memcpy(e.args.prog, prog, (size_t)nprog * sizeof *prog);   /* prog is NULL when nprog is 0 */
    const int snap = tq_scalars_take_snapshot(k->sc, &e.args.mirror);
    e.args.snapshot = snap >= 0;
    e.snapshot = snap >= 0 ? k->sc->snap[snap] : NULL;
    e.scalars = k->sc->h;
    e.r = r;
    e.w = w;
    e.u = u;
    const tq_dirac *d = k->ops->d;
    if (!tq_internal_dirac_fuse_split(d)) return tq_internal_dirac_matpc_epilogue(d, out, in, k->ops->parity, dagger, &e);
    /* several blocks: each block's interior and exterior task writes a partial, and a
     * combine task finishes as the one kernel would (slots, program, snapshot) */
    const tq_lattice *lat = tq_internal_dirac_gauge(d)->lat;
    const tq_mirror_ref mirror = e.args.mirror;
    e.args.split = 1;
    e.args.snapshot = 0;
    e.args.nprog = 0;
    e.args.mirror = (tq_mirror_ref){NULL, 0};
    e.snapshot = NULL;
    e.sc = k->sc;
    TQ_CHECK(tq_scalars_epilogue_scratch(k->sc, 2 * lat->nblocks, &e.scratch));
    /* an epilogue that sums nothing (BiCGstab's s = r - alpha M_pc p) has no partials
     * (tq_epilogue_partial), and a combine only for a program or a snapshot */
    if (!tq_epilogue_nresults(kind)) {
        TQ_CHECK(tq_internal_dirac_matpc_epilogue(d, out, in, k->ops->parity, dagger, &e));
        if (!nprog && snap < 0) return TQ_SUCCESS;
        return tq_scalars_combine(k->who, k->sc, lat, NULL, 0, 0, dst, prog, nprog, snap, mirror, -1);
    }
    TQ_CHECK(tq_scalars_epilogue_partials(k->sc, 2 * lat->nblocks, &e.partials));
    TQ_CHECK(tq_scalars_epilogue_entries(k->sc, lat, &e.entries));
    /* in peer mode the partials cross GPUs through peer memory, as the BLAS reductions' do:
     * no StarPU handle moves between GPUs inside an iteration */
    e.peer = tq_scalars_epilogue_peer(k->sc, 2 * lat->nblocks, &e.peer_n);
    if (e.peer) __atomic_fetch_add(&peer_split_reductions, 1, __ATOMIC_RELAXED);
    TQ_CHECK(tq_internal_dirac_matpc_epilogue(d, out, in, k->ops->parity, dagger, &e));
    return tq_scalars_combine(k->who, k->sc, lat, e.partials, 2 * lat->nblocks, tq_epilogue_nresults(kind), dst, prog,
                              nprog, snap, mirror, e.peer ? (long)e.peer_n : -1);
}

/* ---- start and restarts ------------------------------------------------------------------ */

/* The guard after a (re)start: open (the iterations go on) unless |r|^2 <= tol^2 |b|^2
 * already; the iterations queued behind the restart are held back then. */
static const tq_scalar_instr go_prog[] = {{TQ_SC_SET, SLOT_GO, 1, 0}, {TQ_SC_STOP_LE, SLOT_GO, SLOT_RR, SLOT_STOP2}};

/* (Re)starts the recurrence from the current sloppy residual rs: p = r, then the method's
 * scalars (by default |r|^2 into the RR slot and the guard), ending with the restart
 * snapshot. */
static tq_status restart(tq_krylov *k)
{
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_COPY, k->rs, k->pv, NULL, NULL, 0, NULL, 0));
    if (k->m->restart) return k->m->restart(k);
    k->sc->snap_next = SNAP_RESTART;
    return tq_krylov_blas(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, SLOT_RR, go_prog, 2);
}

static const tq_krylov_method *method_table(int method)
{
    switch (method) {
    case TQ_KRYLOV_BICGSTAB: return &tq_krylov_bicgstab_method;
    case TQ_KRYLOV_MR: return &tq_krylov_mr_method;
    case TQ_KRYLOV_GCR: return &tq_krylov_gcr_method;
    default: return &tq_krylov_cg_method;
    }
}

/* Whether an operator's work may be recorded into chains (a multigrid level's too). */
static int linop_can_chain(const tq_linop *L)
{
    if (L->d) return tq_internal_dirac_can_chain(L->d);
    if (L->ks) return tq_internal_lattice_can_chain(L->ks->lat);
    return L->coarse && tq_internal_lattice_can_chain(L->coarse->lat);
}

/* The solve's settings: mixed precision, pipelining, fusion, chaining (environment
 * switches TQ_SOLVER_PIPELINE=0, TQ_SOLVER_FUSE=0 turn the two off; the latter also GCR's
 * one-pass update, src/solvers/gcr.c). */
static void configure(tq_krylov *k, const tq_solver_params *p)
{
    k->mixed = k->ops->d != k->op->d || k->ops->coarse != k->op->coarse || k->ops->ks != k->op->ks;
    k->defect = k->mixed && p->mixed == TQ_MIXED_DEFECT;
    k->delta = p->reliable_delta > 0 ? p->reliable_delta : 0.1;
    k->nkrylov = p->gcr_nkrylov > 0 ? p->gcr_nkrylov : 8;
    k->n_sloppy = field_reals(k->b);
    k->n_precise = field_reals(k->b);
    const char *pipe_env = getenv("TQ_SOLVER_PIPELINE");
    k->pipelined = k->m->pipelines && !(pipe_env && pipe_env[0] == '0');
    const char *fuse_env = getenv("TQ_SOLVER_FUSE");
    const tq_linop *ops = k->ops;
    k->fused = k->m->fused_form >= 0 && (int)ops->kind == k->m->fused_form && ops->shift == 0.0 && ops->d &&
               tq_internal_dirac_can_fuse(ops->d) && !(fuse_env && fuse_env[0] == '0');
    /* Where this rank's blocks share one worker an iteration's tasks run one after another
     * anyway; as one task they pay StarPU's task-to-task gap once instead of once per kernel. */
    k->chained = linop_can_chain(ops);
    k->chained_restarts = k->chained && linop_can_chain(k->op);
}

/* The work fields in sloppy precision sp (mixed: a sloppy solution and a precise residual
 * too) and the scalars, with the guard open and tol^2 in place. */
static tq_status create_state(tq_krylov *k, tq_precision sp)
{
    const tq_field *b = k->b;
    k->xs = k->x;
    if (k->mixed) {
        TQ_CHECK(tq_field_like(b, &k->rh));
        TQ_CHECK(tq_krylov_field_in(b, sp, &k->xs));
    }
    TQ_CHECK(tq_krylov_field_in(b, sp, &k->rs));
    TQ_CHECK(tq_krylov_field_in(b, sp, &k->pv));
    TQ_CHECK(tq_krylov_field_in(b, sp, &k->w1));
    if (k->m->create_fields) TQ_CHECK(k->m->create_fields(k, b, sp));
    TQ_CHECK(tq_scalars_create(&k->sc));
    TQ_CHECK(tq_scalars_replicate(k->sc, b->lat));
    double init[TQ_NSCALARS] = {0};
    init[SLOT_GO] = 1.0;
    init[SLOT_TOL2] = k->p.tol * k->p.tol;
    return tq_scalars_write(k->sc, 0, TQ_NSCALARS, init);
}

/* x = 0 (and xs = 0), r = b; |b|^2 in the precise field, and the stopping value tol^2 |b|^2
 * from it on the device: nothing here waits. */
static tq_status submit_start(tq_krylov *k)
{
    static const tq_scalar_instr stop_prog[] = {{TQ_SC_MUL, SLOT_STOP2, SLOT_TOL2, SLOT_B2}};
    tq_field *b = (tq_field *)k->b;
    tq_internal_chain_begin(k->chained_restarts);
    tq_status st = tq_krylov_blas(k, TQ_OP_ZERO, k->x, NULL, NULL, NULL, 0, NULL, 0);
    if (st == TQ_SUCCESS && k->mixed) st = tq_krylov_blas(k, TQ_OP_ZERO, k->xs, NULL, NULL, NULL, 0, NULL, 0);
    if (st == TQ_SUCCESS && k->mixed) st = tq_krylov_blas(k, TQ_OP_COPY, b, k->rh, NULL, NULL, 0, NULL, 0);
    if (st == TQ_SUCCESS) st = tq_krylov_blas(k, TQ_OP_COPY, b, k->rs, NULL, NULL, 0, NULL, 0);
    if (st == TQ_SUCCESS) st = tq_krylov_blas(k, TQ_OP_NORM2, b, NULL, NULL, NULL, SLOT_B2, stop_prog, 1);
    if (st == TQ_SUCCESS) st = restart(k);
    return tq_internal_chain_end(k->chained_restarts, st, k->who);
}

tq_status tq_krylov_start(tq_krylov **out, int method, tq_linop *op, tq_linop *ops, tq_field *x, const tq_field *b,
                          const tq_solver_params *p)
{
    *out = NULL;
    tq_krylov *k = calloc(1, sizeof *k);
    if (!k) return tq_error(TQ_ERR_NOMEM, "tq_solve: out of memory");
    k->m = method_table(method);
    k->who = k->m->who;
    k->p = *p;
    k->t0 = tq_internal_now();
    k->op = op;
    k->ops = ops;
    k->x = x;
    k->b = b;
    configure(k, p);
    tq_status st = TQ_SUCCESS;
    if (k->m->hermitian && !tq_linop_hermitian(op))
        st = tq_error(TQ_ERR_INVALID_ARG, "%s: the operator is not Hermitian", k->who);
    if (st == TQ_SUCCESS) st = create_state(k, ops->d ? tq_internal_dirac_gauge(ops->d)->p.prec
                                                 : ops->ks ? ops->ks->prec : ops->coarse->vec_prec);
    if (st == TQ_SUCCESS) st = submit_start(k);
    if (st == TQ_SUCCESS) st = tq_scalars_mark(k->sc, SNAP_RESTART);   /* the iterations' clock starts there */
    k->out.blas_flops += 2 * k->n_precise + 2 * k->n_sloppy;
    k->restart_pending = 1;
    k->st = st;
    if (st != TQ_SUCCESS) {
        tq_krylov_free(k);
        return st;
    }
    *out = k;
    return TQ_SUCCESS;
}

double tq_krylov_iter_start(const tq_krylov *k)
{
    const double t = tq_scalars_mark_time(k->sc, SNAP_RESTART);
    return t > 0.0 ? t : k->t_start_read > 0.0 ? k->t_start_read : k->t0;
}

int tq_krylov_done(const tq_krylov *k) { return k->done; }
void tq_krylov_no_pipeline(tq_krylov *k) { k->pipelined = 0; }

void tq_krylov_set_preconditioner(tq_krylov *k, tq_status (*fn)(void *ctx, tq_field *z, const tq_field *r), void *ctx)
{
    k->precond = fn;
    k->precond_ctx = ctx;
    /* a preconditioner runs solves of its own that wait for their scalars (a multigrid
     * cycle): it must not be recorded into this solver's chain, where nothing goes to
     * StarPU until the chain ends; nor queued ahead, where an iteration held back behind a
     * converged one would still run a whole cycle */
    if (fn) k->chained = k->chained_restarts = k->pipelined = 0;
}
tq_status tq_krylov_status(const tq_krylov *k) { return k->st; }
const tq_krylov_out *tq_krylov_result(const tq_krylov *k) { return &k->out; }

/* ---- iterations ---------------------------------------------------------------------------- */

/* Queues the next iteration (the caller opened a chain if any) with its bookkeeping. */
static tq_status queue_iteration(tq_krylov *k)
{
    const double f0 = k->out.blas_flops;
    const long a0 = k->ops->applications;
    /* behind a restart not yet read, the iteration is guarded even without pipelining:
     * the restart may have found the system solved (b = 0) */
    const int guard = k->pipelined || k->restart_pending ? SLOT_GO + 1 : 0;
    k->sc->guard = guard;
    if (k->queued > k->consumed) __atomic_fetch_add(&queued_ahead, 1, __ATOMIC_RELAXED);
    const int set = k->xs_stale;
    const tq_status st = k->m->submit_iteration(k);
    k->xs_stale = 0;
    k->sc->guard = 0;
    k->sc->snap_next = -1;
    const int i = (int)(k->queued % TQ_KRYLOV_QUEUE);
    k->queued_set[i] = set;
    k->queued_flops[i] = k->out.blas_flops - f0;
    k->queued_guarded[i] = guard > 0;
    k->queued_apps[i] = k->ops->applications - a0;
    k->out.blas_flops = f0;
    k->queued++;
    return st;
}

tq_status tq_krylov_submit(tq_krylov *k)
{
    if (k->done) return TQ_SUCCESS;
    /* Pipelined: iterations go in groups of two (chained where the blocks share a worker:
     * StarPU's gap between dependent tasks is paid once per two iterations), and up to two
     * groups are queued ahead of the host. The grouping decides which iteration the host
     * judges a reliable update after, so it depends on nothing else (not on the chaining,
     * the placement or TQ_CHAIN): the same arithmetic everywhere. */
    const int group = k->pipelined ? 2 : 1;
    const long depth = k->pipelined ? 2 * group : 1;
    while (k->queued - k->consumed <= depth - group) {
        const long room = k->p.maxiter - (k->out.iterations + (k->queued - k->consumed));
        if (room <= 0) break;
        const int n = room < group ? (int)room : group;
        tq_internal_chain_begin(k->chained);
        tq_status st = TQ_SUCCESS;
        for (int j = 0; j < n && st == TQ_SUCCESS; j++) st = queue_iteration(k);
        st = tq_internal_chain_end(k->chained, st, k->who);
        if (st != TQ_SUCCESS) {
            k->st = st;
            k->done = 1;
            return st;
        }
    }
    return TQ_SUCCESS;
}

/* ---- reliable updates and defect correction ------------------------------------------------- */

/* Mixed precision: x += xs (xs then zeroed or, fused, overwritten by the next iteration),
 * r = b - A x (precise); the sloppy residual becomes the true one and the search direction
 * follows it (reliable update), or the recurrence restarts from it (defect correction).
 * Queued like an iteration: the next check reads the true |r|^2 from its snapshot. */
static tq_status reliable_update_tasks(tq_krylov *k)
{
    const double minus[4] = {-1, 0, 0, 0};
    if (k->xpass_in_update) TQ_CHECK(k->m->held_back_pass(k, -(SLOT_GO + 1), 0));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_ACCUMULATE, k->xs, k->x, NULL, NULL, 0, NULL, 0));
    /* x_sloppy is now part of x: the fused iterations' next x pass overwrites it, the
     * others add to a zeroed one */
    if (k->fused) k->xs_stale = 1;
    else TQ_CHECK(tq_krylov_blas(k, TQ_OP_ZERO, k->xs, NULL, NULL, NULL, 0, NULL, 0));
    TQ_CHECK(tq_linop_apply(k->op, k->rh, k->x));
    if (k->defect) {
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_XPAY, (tq_field *)k->b, k->rh, minus, NULL, 0, NULL, 0));   /* r = b - A x */
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_COPY, k->rh, k->rs, NULL, NULL, 0, NULL, 0));
        k->out.blas_flops += 4 * k->n_precise;
        return restart(k);
    }
    /* r = b - A x; p += r - r_iterated; |r|^2 (and what the method adds); the guard opens
     * again unless r is below the tolerance */
    tq_field *f[6] = {(tq_field *)k->b, k->rh, k->rs, k->pv, k->r0, k->q};
    k->sc->snap_next = SNAP_RESTART;
    if (k->m->update_residual) return k->m->update_residual(k, f);
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_RELIABLE_RESIDUAL, NULL, NULL, f, k->sc, SLOT_RR, go_prog, 2));
    /* flops per real: x += xs 2; b - A x 2, p 4, |r|^2 2 */
    k->out.blas_flops += 2 * k->n_precise + 8 * k->n_sloppy;
    return TQ_SUCCESS;
}

/* On one block the update's tasks (the precise operator's too) go as one chain task:
 * StarPU's gap between dependent tasks is paid once, not per task. */
static tq_status reliable_update(tq_krylov *k)
{
    tq_internal_chain_begin(k->chained_restarts);
    TQ_CHECK(tq_internal_chain_end(k->chained_restarts, reliable_update_tasks(k), k->who));
    k->restart_pending = 1;
    k->out.reliable_updates++;
    k->kcycle = 0;   /* GCR: a new cycle from the true residual */
    return TQ_SUCCESS;
}

/* ---- reading the scalars -------------------------------------------------------------------- */

static void progress(const tq_krylov *k, const char *what)
{
    if (k->p.verbosity >= 2)
        fprintf(stderr, "taskqcd: %s iteration %d: relative residual %.6e%s (%.6f s)\n", k->m->name,
                k->out.iterations, k->out.residual, what, tq_internal_now() - k->t0);
}

/* Reads snapshot i into k->s. In StarPU's SimGrid mode tasks take simulated time but
 * compute nothing, so the host reads made-up scalars instead: nothing breaks down or
 * converges, so a simulated solve runs its maxiter iterations, and |r|^2 falls 100-fold
 * every 10 iterations, so mixed solves make a reliable update every 10 (the 48^4
 * weak-field solve measured: 7 in 71 iterations; bench/simgrid-predict.sh). */
static tq_status read_snapshot(tq_krylov *k, int i)
{
    tq_status st = tq_scalars_read_snapshot(k->sc, i, k->s);
#ifdef TQ_SIMGRID
    for (int j = 0; j < TQ_NSCALARS; j++) k->s[j] = 1.0;
    k->s[SLOT_STOP2] = 0.0;
    k->s[SLOT_RR] = pow(0.01, (double)k->consumed / 10.0);
#endif
    return st;
}

/* Reads the oldest queued iteration's snapshot and evaluates it: the method's breakdown
 * tests, the iterated |r|^2 into k->rr, progress. */
static tq_status consume(tq_krylov *k)
{
    const int i = (int)(k->consumed % TQ_KRYLOV_QUEUE);
    tq_status st = read_snapshot(k, i);
    k->consumed++;
    k->out.blas_flops += k->queued_flops[i];
    const int it = ++k->out.iterations;
    if (st == TQ_SUCCESS) {
        st = k->m->read_iteration(k, it);
        k->rr = k->s[SLOT_RR];
    }
    /* the fused CG: an iteration that shut the guard held back its x/p pass; it runs now,
     * unless the reliable update being queued does it */
    if (st == TQ_SUCCESS && k->fused && k->m->held_back_pass && k->queued_guarded[i] && k->s[SLOT_GO] == 0.0 &&
        !k->xpass_in_update)
        st = k->m->held_back_pass(k, 0, k->queued_set[i]);
    if (st == TQ_SUCCESS) {
        k->out.residual = sqrt(k->rr / k->b2);
        progress(k, "");
        if (k->rr > k->rmax) k->rmax = k->rr;
    }
    return st;
}

/* The queued iteration after one that reached the tolerance did nothing (its guard): it
 * is dropped without being read, and its work is not counted. */
static void drop_held_back(tq_krylov *k)
{
    const int i = (int)(k->consumed % TQ_KRYLOV_QUEUE);
    k->ops->applications -= k->queued_apps[i];
    k->consumed++;
}

/* Reads the start's snapshot: |b|^2, the stopping value and the first residual. */
static tq_status start_result(tq_krylov *k)
{
    k->started = 1;
    k->t_start_read = tq_internal_now();
    k->b2 = k->s[SLOT_B2];
    k->stop2 = k->s[SLOT_STOP2];
    if (!isfinite(k->b2) || !isfinite(k->rr))
        return tq_error(TQ_ERR_BREAKDOWN, "%s: the right-hand side holds NaN or Inf", k->who);
    if (k->b2 == 0.0) {   /* x = 0 solves it; the queued iterations were held back */
        k->out.residual = 0.0;
        return TQ_SUCCESS;
    }
    k->out.residual = sqrt(k->rr / k->b2);
    progress(k, " (start)");
    return TQ_SUCCESS;
}

/* Reads the snapshot of the last (re)start: the residual the iterations go on from (after
 * a reliable update, the true one). */
static tq_status restart_result(tq_krylov *k)
{
    k->restart_pending = 0;
    TQ_CHECK(read_snapshot(k, SNAP_RESTART));
    k->rr = k->rmax = k->s[SLOT_RR];
    if (!k->started) return start_result(k);
    if (!isfinite(k->rr))
        return tq_error(TQ_ERR_BREAKDOWN, "%s: the true residual is NaN or Inf at the reliable update after iteration %d",
                        k->who, k->out.iterations);
    k->out.residual = sqrt(k->rr / k->b2);
    progress(k, " (reliable update: true residual)");
    return TQ_SUCCESS;
}

void tq_krylov_sync_restarts(tq_krylov *k)
{
    k->sync_restarts = 1;
    if (k->done || !k->restart_pending) return;
    k->st = restart_result(k);
    if (k->st != TQ_SUCCESS || k->rr <= k->stop2) k->done = 1;
}

/* ---- stopping rules ------------------------------------------------------------------------- */

/* Mixed precision updates once the iterated residual reaches the tolerance (convergence is
 * decided on the true one), falls delta below its largest value since the last update, or
 * the iterations run out. */
static int wants_update(const tq_krylov *k, int below)
{
    return k->mixed && (below || k->rr < k->delta * k->delta * k->rmax || k->out.iterations >= k->p.maxiter);
}

/* The update takes the state after everything queued: the queued iterations are evaluated
 * too, up to one that reached the tolerance (those after it were held back); convergence is
 * then decided on the true residual, at the next check (or at once with sync_restarts). The
 * update goes in behind them at once, so the GPU does not idle while the host reads them.
 * In the fused CG it starts with the x/p pass that one of them may hold back, unless the
 * iteration just read reached the tolerance: its pass is queued already. */
static tq_status update_behind_queue(tq_krylov *k, int below, int *converged)
{
    k->xpass_in_update = k->fused && k->m->held_back_pass && !below;
    tq_status st = reliable_update(k);
    while (st == TQ_SUCCESS && k->queued > k->consumed) {
        if (k->rr <= k->stop2) drop_held_back(k);
        else st = consume(k);
    }
    k->xpass_in_update = 0;
    if (st == TQ_SUCCESS && k->sync_restarts) {
        st = restart_result(k);
        *converged = st == TQ_SUCCESS && k->rr <= k->stop2;
    }
    return st;
}

/* An iteration that neither converged nor restarted: the method's late breakdown tests
 * (consumed: one was read by this check), then maxiter. */
static tq_status go_on_or_stop(tq_krylov *k, int consumed)
{
    const int it = k->out.iterations;
    if (consumed && k->m->check_iteration) TQ_CHECK(k->m->check_iteration(k, it));
    if (it >= k->p.maxiter)
        return tq_error(TQ_ERR_NOT_CONVERGED, "%s: no convergence in %d iterations (relative residual %.3e, tolerance %.3e)",
                        k->who, k->p.maxiter, k->out.residual, k->p.tol);
    return TQ_SUCCESS;
}

int tq_krylov_ready(const tq_krylov *k)
{
    if (k->done) return 1;
    int r = k->restart_pending ? tq_scalars_snapshot_ready(k->sc, SNAP_RESTART) : 1;
    if (r == 1 && k->queued > k->consumed) r = tq_scalars_snapshot_ready(k->sc, (int)(k->consumed % TQ_KRYLOV_QUEUE));
    return r;
}

/* One step of solve i in tq_krylov_run_together: check, queue the next iteration. */
static void take_step(tq_krylov *k, int i, void (*step)(void *ctx, int i, int done), void *ctx, tq_status *first)
{
    if (step) step(ctx, i, 0);
    tq_krylov_check(k);
    if (!k->done) {
        const tq_status st = tq_krylov_submit(k);
        if (st != TQ_SUCCESS && *first == TQ_SUCCESS) *first = st;
    }
    if (k->done && step) step(ctx, i, 1);
}

tq_status tq_krylov_run_together(tq_krylov *const *k, int n, void (*step)(void *ctx, int i, int done), void *ctx)
{
    tq_status first = TQ_SUCCESS;
    int nactive = 0;
    for (int i = 0; i < n; i++) {
        if (!k[i] || k[i]->done) continue;
        if (step) step(ctx, i, 0);
        const tq_status st = tq_krylov_submit(k[i]);
        if (st != TQ_SUCCESS && first == TQ_SUCCESS) first = st;
        nactive += !k[i]->done;
    }
    /* systems over several ranks: every rank takes the steps in the same order (their
     * transfers between ranks pair up by submission order), so none is polled */
    int ranks = 0;
    for (int i = 0; i < n; i++) ranks |= k[i] && tq_lattice_nprocs(k[i]->x->lat) > 1;
    int turn = 0;          /* the next solve to wait for when none is known ready */
    double idle_since = 0; /* when polling found none ready (0: it did not) */
    while (nactive > 0) {
        int served = 0, unknown = -1, waiting = -1;
        for (int j = 0; j < n; j++) {
            const int i = (turn + j) % n;
            if (!k[i] || k[i]->done) continue;
            const int ready = ranks ? -1 : tq_krylov_ready(k[i]);
            if (ready == 1) {
                take_step(k[i], i, step, ctx, &first);
                served++;
            } else if (ready < 0 && unknown < 0) {
                unknown = i;
            } else if (waiting < 0) {
                waiting = i;
            }
        }
        /* none ready: wait for one that cannot be told, or, after polling 1 ms, for the next
         * in turn (its wait sleeps when long and reports a hang) */
        if (!served) {
            const double t = tq_internal_now();
            if (idle_since == 0) idle_since = t;
            const int i = unknown >= 0 ? unknown : t - idle_since > 1e-3 ? waiting : -1;
            if (i >= 0) {
                take_step(k[i], i, step, ctx, &first);
                turn = (i + 1) % n;
                idle_since = 0;
            } else {
                sched_yield();
            }
        } else {
            idle_since = 0;
        }
        nactive = 0;
        for (int i = 0; i < n; i++) nactive += k[i] && !k[i]->done;
    }
    return first;
}

tq_status tq_krylov_check(tq_krylov *k)
{
    if (k->done) return k->st;
    const int had_restart = k->restart_pending;
    if (!had_restart && k->queued == k->consumed) {
        k->done = 1;
        return k->st = tq_error(TQ_ERR_INVALID_ARG, "%s: no iteration queued to check (call submit first)", k->who);
    }
    tq_status st = had_restart ? restart_result(k) : TQ_SUCCESS;
    int converged = st == TQ_SUCCESS && had_restart && k->rr <= k->stop2;
    int consumed = 0;
    if (st == TQ_SUCCESS && !converged && k->queued > k->consumed) {
        st = consume(k);
        consumed = 1;
        if (st == TQ_SUCCESS) {
            const int below = k->rr <= k->stop2;
            if (wants_update(k, below)) st = update_behind_queue(k, below, &converged);
            else converged = below;
        }
    }
    while (converged && k->queued > k->consumed) drop_held_back(k);
    if (st == TQ_SUCCESS && !converged && !k->restart_pending) st = go_on_or_stop(k, consumed);
    if (st != TQ_SUCCESS || converged) k->done = 1;
    k->st = st;
    return st;
}

void tq_krylov_free(tq_krylov *k)
{
    if (!k) return;
    /* destroying fields and scalars waits for the tasks that use them, and only those:
     * other solves in flight go on */
    tq_scalars_destroy(k->sc);
    if (k->xs != k->x) tq_field_destroy(k->xs);
    tq_field_destroy(k->rh);
    tq_field_destroy(k->rs);
    tq_field_destroy(k->pv);
    tq_field_destroy(k->w1);
    tq_field_destroy(k->r0);
    tq_field_destroy(k->sv);
    tq_field_destroy(k->t);
    tq_field_destroy(k->q);
    for (int j = 0; j < TQ_GCR_MAX; j++) {
        tq_field_destroy(k->z[j]);
        tq_field_destroy(k->az[j]);
    }
    tq_field_destroy(k->pr);
    free(k);
}

tq_field *tq_krylov_residual(const tq_krylov *k) { return k->rs; }
double tq_krylov_relative_r2(const tq_krylov *k) { return k->b2 > 0 ? k->rr / k->b2 : 0.0; }

/* L x = b start to end: the iterations on Ls (L itself, or its sloppy copy with p's sloppy
 * precision) with reliable updates on L. */
static tq_status krylov_run(tq_linop *L, tq_linop *Ls, int method, tq_field *x, const tq_field *b, const tq_solver_params *q,
                            tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r), void *ctx, tq_krylov_out *out)
{
    tq_krylov *k = NULL;
    tq_status st = tq_krylov_start(&k, method, L, Ls, x, b, q);
    if (st == TQ_SUCCESS && precond) tq_krylov_set_preconditioner(k, precond, ctx);
    while (st == TQ_SUCCESS && !tq_krylov_done(k)) {
        st = tq_krylov_submit(k);
        if (st == TQ_SUCCESS) tq_krylov_check(k);
    }
    if (k) {
        if (st == TQ_SUCCESS) st = tq_krylov_status(k);
        if (out) {
            *out = *tq_krylov_result(k);
            out->flops = L->flops * (double)L->applications + out->blas_flops;
            if (Ls != L) out->flops += Ls->flops * (double)Ls->applications;
        }
        tq_krylov_free(k);
    }
    return st;
}

tq_status tq_krylov_solve(tq_linop *L, int method, tq_field *x, const tq_field *b, const tq_solver_params *p,
                          tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r), void *ctx, tq_krylov_out *out)
{
    tq_solver_params q = *p;
    q.prec_sloppy = 0;
    return krylov_run(L, L, method, x, b, &q, precond, ctx, out);
}

tq_status tq_krylov_solve_mixed(tq_linop *L, tq_linop *Ls, int method, tq_field *x, const tq_field *b,
                                const tq_solver_params *p, tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r),
                                void *ctx, tq_krylov_out *out)
{
    return krylov_run(L, Ls, method, x, b, p, precond, ctx, out);
}
