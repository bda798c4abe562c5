/* Krylov inverters written against tq_linop, as step machines so that several solves can
 * be interleaved: tq_krylov_submit queues one iteration's tasks without waiting (the
 * coefficients alpha, beta, omega are computed by scalar programs from the reductions inside
 * the task graph, kernels/solver_scalars.h); tq_krylov_check then reads the solve's scalars
 * (the one host wait per iteration: the stopping test) and takes the decisions: converged,
 * breakdown, reliable update.
 *
 * Mixed precision (the sloppy operator differs from the system's): the iteration runs on
 * sloppy fields; reliable updates (paper 004, Algorithm 2) add the sloppy solution to the
 * precise one and replace the iterated residual by the true one, b - A x in the system's
 * precision, whenever |r| falls below delta times its largest value since the last update.
 * The search direction is corrected by the change of the residual (p += r_true - r_iter), so
 * it is what the recurrence would have built from the true residual. Defect correction
 * (Algorithm 1) instead restarts the Krylov recurrence at each update. Convergence is
 * decided on the true residual after a final update. */
#include "solvers/solver_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Scalar slots. CG: */
enum { CG_RR, CG_RR_NEW, CG_PAP, CG_ALPHA, CG_BETA };
/* BiCGstab (complex values take two slots): */
enum {
    BI_RR = 0, BI_RHO_NEW = 1,   /* the update's reduction: |r|^2, <r0, r> */
    BI_QP = 1,                   /* fused: the step's reduction |r|^2, <q, p> (q = M^dag r0) */
    BI_RHO = 3, BI_R0V = 5, BI_ALPHA = 7,
    BI_TS = 9, BI_TT = 11,       /* <t, s>, |t|^2 */
    BI_R0S = 12, BI_R0T = 14,    /* fused: <r0, s>, <r0, t> (after BI_TS, BI_TT: one reduction) */
    BI_DELTA = 5,                /* fused: omega / alpha (<r0, v> is not needed there) */
    BI_OMEGA = 16, BI_BETA = 18, BI_T1 = 20, BI_T2 = 22,
    BI_UPD_QP = 3                /* fused: the reliable update's <q, p> (its reduction: |r|^2,
                                    <r0, r>, <q, p>), in BI_RHO's slots until rho is replaced */
};
/* MR: */
enum { MR_RR = 0, MR_ARR = 1, MR_AR2 = 3, MR_ALPHA = 4 };
/* GCR, and its MR preconditioner: */
enum {
    GCR_RR = 0, GCR_C = 1, GCR_NC = 3, GCR_N2 = 5, GCR_INV = 6, GCR_ALPHA = 7,
    PMR_ARR = 12, PMR_AR2 = 14, PMR_ALPHA = 15
};
#define TQ_GCR_MAX 10
/* All: |b|^2; the guard of queued iterations (1: go on, 0: converged, hold back the
 * queued iteration); the stopping value tol^2 |b|^2 the device compares with; tol^2. */
enum { SLOT_B2 = 24, SLOT_GO = 25, SLOT_STOP2 = 26, SLOT_TOL2 = 27 };
/* The residual's |r|^2 is slot 0 for every method (CG_RR, BI_RR, MR_RR, GCR_RR). */
enum { SLOT_RR = 0 };
/* Iterations queued at most (their snapshots rotate through 0 .. TQ_KRYLOV_QUEUE - 1), and
 * the snapshot a (re)start ends with. */
#define TQ_KRYLOV_QUEUE 4
enum { SNAP_RESTART = TQ_KRYLOV_QUEUE };

struct tq_krylov {
    int bicgstab, mr, gcr, mixed, defect;
    int fused;                 /* CG on M_pc^dag M_pc, BiCGstab on M_pc: reductions in the operator's kernels */
    int nkrylov, kcycle;       /* GCR: directions per cycle, index of the next one */
    tq_field *z[TQ_GCR_MAX], *az[TQ_GCR_MAX];   /* GCR: directions and their A-images */
    tq_field *pr;              /* GCR's MR preconditioner: its residual */
    const char *who;
    tq_solver_params p;
    double delta;
    tq_linop *op, *ops;        /* the system's operator, the sloppy one (may be op) */
    tq_field *x;               /* the system's solution (precise) */
    const tq_field *b;
    tq_field *rh;              /* mixed: A x, then (defect correction) the precise residual */
    tq_field *xs, *rs, *pv, *w1;   /* sloppy solution (x when not mixed), residual, direction, A p */
    tq_field *r0, *sv, *t;     /* BiCGstab: shadow residual, s, A s */
    tq_field *q;               /* fused BiCGstab: M_pc^dag r0 */
    tq_scalars *sc;
    double s[TQ_NSCALARS];
    double b2, stop2, rr, rmax;
    double n_sloppy, n_precise;   /* reals per field (flop counts) */
    tq_krylov_out out;
    int done;
    tq_status st;
    /* Pipelining (CG, BiCGstab, MR): iteration k + 1 is queued before iteration k's
     * snapshot is read, so the GPU does not idle while the host decides; once an iteration
     * reaches the tolerance its last scalar program clears SLOT_GO, and the tasks of the
     * queued iteration (guarded by it) change nothing. */
    int pipelined;
    int xpass_in_update;       /* the fused CG: the reliable update being queued does the x/p
                                  pass a queued iteration may hold back (cg_held_back_pass) */
    int xs_stale;              /* fused: the last reliable update accumulated x_sloppy into x
                                  and left it as it was: the next iteration's x pass is a _SET
                                  one (x_sloppy = ..., not +=) */
    int chained;             /* one block: each iteration's tasks go as one chain task (tasks/submit.c; TQ_CHAIN=0: off) */
    int chained_restarts;    /* so do the start's and each reliable update's (both operators on one block) */
    double t0;               /* start (progress lines) */
    /* A (re)start (the start, a reliable update, a defect-correction restart) is queued
     * like an iteration: the iterations after it are queued behind it, guarded, and its
     * snapshot is read at the next check; until the start's is read, b2 and stop2 are
     * unknown on the host. */
    int restart_pending, started;
    int sync_restarts;       /* read each restart at once (several systems: tq_krylov_sync_restarts) */
    double t_start_read;     /* when the host read the start's snapshot */
    long queued, consumed;   /* iterations submitted, snapshots read (snapshot = count % 2) */
    /* per queued iteration (index: its number % TQ_KRYLOV_QUEUE): BLAS flops and operator
     * applications, counted when it is read (not if it was held back); whether its tasks
     * carry the guard */
    double queued_flops[TQ_KRYLOV_QUEUE];
    long queued_apps[TQ_KRYLOV_QUEUE];
    int queued_guarded[TQ_KRYLOV_QUEUE];
    int queued_set[TQ_KRYLOV_QUEUE];   /* its x pass is a _SET one (xs_stale) */
};

static double field_reals(const tq_field *f)
{
    return (double)f->lat->local_volume / 2.0 * f->nparity * f->layout.nreal;
}

/* A field like f in precision prec. */
static tq_status field_in(const tq_field *f, tq_precision prec, tq_field **out)
{
    tq_field_params fp = f->p;
    fp.prec = prec;
    return tq_field_create(f->lat, &fp, out);
}

static tq_status submit1(tq_krylov *k, int op, tq_field *a, tq_field *b2, const double *c, const signed char *slot,
                         int dst, const tq_scalar_instr *prog, int nprog)
{
    tq_field *f[2] = {a, b2};
    return tq_blas_submit(k->who, op, c, slot, f, k->sc, dst, prog, nprog);
}

/* Fused BiCGstab: alpha = rho / <r0, M_pc p> = rho / <q, p> with q = M_pc^dag r0, known
 * before M_pc p (the iteration's last pass keeps it up to date). */
static tq_status bicgstab_alpha(tq_krylov *k)
{
    static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_QP}};
    return submit1(k, TQ_OP_CDOT, k->q, k->pv, NULL, NULL, BI_QP, alpha_prog, 1);
}

/* The guard after a (re)start: open (the iterations go on) unless |r|^2 <= tol^2 |b|^2
 * already; the iterations queued behind the restart are held back then. */
static const tq_scalar_instr go_prog[] = {{TQ_SC_SET, SLOT_GO, 1, 0}, {TQ_SC_STOP_LE, SLOT_GO, SLOT_RR, SLOT_STOP2}};

/* (Re)starts the recurrence from the current sloppy residual rs: p = r (and r0 = r, rho =
 * |r|^2 for BiCGstab); |r|^2 into the RR slot; the restart snapshot at the end. */
static tq_status restart(tq_krylov *k)
{
    TQ_CHECK(submit1(k, TQ_OP_COPY, k->rs, k->pv, NULL, NULL, 0, NULL, 0));
    if (!k->bicgstab) {
        k->sc->snap_next = SNAP_RESTART;
        return submit1(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, CG_RR, go_prog, 2);
    }
    static const tq_scalar_instr rho_prog[] = {
        {TQ_SC_COPY, BI_RHO, BI_RR, 0}, {TQ_SC_ZERO, BI_RHO + 1, 0, 0}, {TQ_SC_SET, SLOT_GO, 1, 0},
        {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
    TQ_CHECK(submit1(k, TQ_OP_COPY, k->rs, k->r0, NULL, NULL, 0, NULL, 0));
    if (!k->fused) k->sc->snap_next = SNAP_RESTART;
    TQ_CHECK(submit1(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, BI_RR, rho_prog, 4));   /* rho = <r0, r> = |r|^2 */
    if (!k->fused) return TQ_SUCCESS;
    /* fused: q = M_pc^dag r0 (once per recurrence) and the first alpha */
    TQ_CHECK(tq_dirac_matpc(k->ops->d, k->q, k->r0, k->ops->parity, 1));
    k->sc->snap_next = SNAP_RESTART;
    return bicgstab_alpha(k);
}

static void progress(const tq_krylov *k, const char *what);

tq_status tq_krylov_start(tq_krylov **out, int method, tq_linop *op, tq_linop *ops, tq_field *x, const tq_field *b,
                          const tq_solver_params *p)
{
    const int bicgstab = method == TQ_KRYLOV_BICGSTAB;
    *out = NULL;
    tq_krylov *k = calloc(1, sizeof *k);
    if (!k) return tq_error(TQ_ERR_NOMEM, "tq_solve: out of memory");
    k->bicgstab = bicgstab;
    k->mr = method == TQ_KRYLOV_MR;
    k->gcr = method == TQ_KRYLOV_GCR;
    k->nkrylov = p->gcr_nkrylov > 0 ? p->gcr_nkrylov : 8;
    k->who = bicgstab ? "tq_solve (BiCGstab)" : k->mr ? "tq_solve (MR)" : k->gcr ? "tq_solve (GCR)" : "tq_solve (CG)";
    k->p = *p;
    k->t0 = tq_internal_now();
    k->op = op;
    k->ops = ops;
    k->x = x;
    k->b = b;
    const tq_precision sp = tq_internal_dirac_gauge(ops->d)->p.prec;
    k->mixed = ops->d != op->d;
    k->defect = k->mixed && p->mixed == TQ_MIXED_DEFECT;
    k->delta = p->reliable_delta > 0 ? p->reliable_delta : 0.1;
    k->n_sloppy = field_reals(b);
    k->n_precise = field_reals(b);
    const char *pipe_env = getenv("TQ_SOLVER_PIPELINE");
    k->pipelined = (method == TQ_KRYLOV_CG || bicgstab || method == TQ_KRYLOV_MR) && !(pipe_env && pipe_env[0] == '0');
    const char *fuse_env = getenv("TQ_SOLVER_FUSE");
    k->fused = ((method == TQ_KRYLOV_CG && ops->kind == TQ_LINOP_MATPC_DAG_MATPC) ||
                (bicgstab && ops->kind == TQ_LINOP_MATPC)) && ops->shift == 0.0 &&
               tq_internal_dirac_can_fuse(ops->d) && !(fuse_env && fuse_env[0] == '0');
    /* On one block an iteration's tasks run one after another anyway; as one task they pay
     * StarPU's task-to-task gap once instead of once per kernel. */
    k->chained = tq_internal_dirac_can_fuse(ops->d);
    k->chained_restarts = k->chained && tq_internal_dirac_can_fuse(op->d);
    tq_status st = TQ_SUCCESS;
    if (method == TQ_KRYLOV_CG && !tq_linop_hermitian(op)) st = tq_error(TQ_ERR_INVALID_ARG, "%s: the operator is not Hermitian", k->who);
    if (st == TQ_SUCCESS && k->mixed) {
        st = tq_field_like(b, &k->rh);
        if (st == TQ_SUCCESS) st = field_in(b, sp, &k->xs);
    } else {
        k->xs = x;
    }
    if (st == TQ_SUCCESS) st = field_in(b, sp, &k->rs);
    if (st == TQ_SUCCESS) st = field_in(b, sp, &k->pv);
    if (st == TQ_SUCCESS) st = field_in(b, sp, &k->w1);
    if (st == TQ_SUCCESS && bicgstab) st = field_in(b, sp, &k->r0);
    if (st == TQ_SUCCESS && bicgstab) st = field_in(b, sp, &k->sv);
    if (st == TQ_SUCCESS && bicgstab) st = field_in(b, sp, &k->t);
    if (st == TQ_SUCCESS && bicgstab && k->fused) st = field_in(b, sp, &k->q);
    for (int j = 0; k->gcr && j < k->nkrylov && st == TQ_SUCCESS; j++) {
        st = field_in(b, sp, &k->z[j]);
        if (st == TQ_SUCCESS) st = field_in(b, sp, &k->az[j]);
    }
    if (st == TQ_SUCCESS && k->gcr && p->precond == TQ_PRECOND_MR) st = field_in(b, sp, &k->pr);
    if (st == TQ_SUCCESS) st = tq_scalars_create(&k->sc);
    if (st == TQ_SUCCESS) {
        double init[TQ_NSCALARS] = {0};
        init[SLOT_GO] = 1.0;
        init[SLOT_TOL2] = p->tol * p->tol;
        st = tq_scalars_write(k->sc, 0, TQ_NSCALARS, init);
    }
    /* x = 0 (and xs = 0), r = b; |b|^2 in the precise field, and the stopping value
     * tol^2 |b|^2 from it on the device: nothing here waits */
    static const tq_scalar_instr stop_prog[] = {{TQ_SC_MUL, SLOT_STOP2, SLOT_TOL2, SLOT_B2}};
    if (st == TQ_SUCCESS) {
        tq_internal_chain_begin(k->chained_restarts);
        st = submit1(k, TQ_OP_ZERO, x, NULL, NULL, NULL, 0, NULL, 0);
        if (st == TQ_SUCCESS && k->mixed) st = submit1(k, TQ_OP_ZERO, k->xs, NULL, NULL, NULL, 0, NULL, 0);
        if (st == TQ_SUCCESS && k->mixed) st = submit1(k, TQ_OP_COPY, (tq_field *)b, k->rh, NULL, NULL, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = submit1(k, TQ_OP_COPY, (tq_field *)b, k->rs, NULL, NULL, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = submit1(k, TQ_OP_NORM2, (tq_field *)b, NULL, NULL, NULL, SLOT_B2, stop_prog, 1);
        if (st == TQ_SUCCESS) st = restart(k);
        st = tq_internal_chain_end(k->chained_restarts, st, k->who);
    }
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
tq_status tq_krylov_status(const tq_krylov *k) { return k->st; }
const tq_krylov_out *tq_krylov_result(const tq_krylov *k) { return &k->out; }

/* The snapshot the iteration being submitted ends with: set just before its last reduction. */
static void last_reduction(tq_krylov *k) { k->sc->snap_next = (int)(k->queued % TQ_KRYLOV_QUEUE); }

static long fused_iterations;   /* tq_internal_solver_fused_iterations */
long tq_internal_solver_fused_iterations(void) { return __atomic_load_n(&fused_iterations, __ATOMIC_RELAXED); }

/* M_pc (dagger 0) or M_pc^dag (dagger 1) of the sloppy operator with an epilogue in its
 * last kernel (kernels/solver_scalars.h): sums into scalar slot dst, then prog; AXPY_NORM2:
 * r += -scalar[slot - 1] y; CAXPYZ: out = w - scalar[slot - 1, slot] y. Takes the pending
 * snapshot and guard like a BLAS reduction. */
static tq_status fused_matpc(tq_krylov *k, tq_field *out, const tq_field *in, int dagger, int kind, int dst,
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
    memcpy(e.args.prog, prog, (size_t)nprog * sizeof *prog);
    const int snap = tq_scalars_take_snapshot(k->sc, &e.args.mirror);
    e.args.snapshot = snap >= 0;
    e.snapshot = snap >= 0 ? k->sc->snap[snap] : NULL;
    e.scalars = k->sc->h;
    e.r = r;
    e.w = w;
    e.u = u;
    return tq_internal_dirac_matpc_epilogue(k->ops->d, out, in, k->ops->parity, dagger, &e);
}

/* Queues one iteration's tasks. */
static tq_status submit_iteration(tq_krylov *k)
{
    const double one[4] = {1, 1, 1, 1}, minus[4] = {-1, -1, 0, 0};
    if (k->gcr) {
        /* z = K r; Az; Az and z orthogonalised against the cycle's earlier (unit) Az_j;
         * normalised; alpha = <Az, r>; x += alpha z; r -= alpha Az; |r|^2 */
        const int j0 = k->kcycle;
        tq_field *z = k->z[j0], *az = k->az[j0];
        if (k->p.precond == TQ_PRECOND_MR) {
            /* a fixed number of MR steps on A z = r from z = 0, no host wait */
            static const tq_scalar_instr palpha[] = {{TQ_SC_CDIVR, PMR_ALPHA, PMR_ARR, PMR_AR2}};
            const signed char pslots[4] = {PMR_ALPHA + 1, PMR_ALPHA + 2, 0, 0};
            const int np = k->p.precond_iters > 0 ? k->p.precond_iters : 4;
            TQ_CHECK(submit1(k, TQ_OP_ZERO, z, NULL, NULL, NULL, 0, NULL, 0));
            TQ_CHECK(submit1(k, TQ_OP_COPY, k->rs, k->pr, NULL, NULL, 0, NULL, 0));
            for (int i = 0; i < np; i++) {
                TQ_CHECK(tq_linop_apply(k->ops, az, k->pr));
                TQ_CHECK(submit1(k, TQ_OP_CDOT_NORM2, az, k->pr, NULL, NULL, PMR_ARR, palpha, 1));
                TQ_CHECK(submit1(k, TQ_OP_CAXPY, k->pr, z, one, pslots, 0, NULL, 0));
                if (i + 1 < np) TQ_CHECK(submit1(k, TQ_OP_CAXPY, az, k->pr, minus, pslots, 0, NULL, 0));
            }
            k->out.blas_flops += (14.0 * np - 4) * k->n_sloppy;
        } else {
            TQ_CHECK(submit1(k, TQ_OP_COPY, k->rs, z, NULL, NULL, 0, NULL, 0));
        }
        TQ_CHECK(tq_linop_apply(k->ops, az, z));
        static const tq_scalar_instr nc_prog[] = {{TQ_SC_CNEG, GCR_NC, GCR_C, 0}};
        const signed char nc_slots[4] = {GCR_NC + 1, GCR_NC + 2, 0, 0};
        for (int j = 0; j < j0; j++) {
            TQ_CHECK(submit1(k, TQ_OP_CDOT, k->az[j], az, NULL, NULL, GCR_C, nc_prog, 1));
            TQ_CHECK(submit1(k, TQ_OP_CAXPY, k->az[j], az, one, nc_slots, 0, NULL, 0));
            TQ_CHECK(submit1(k, TQ_OP_CAXPY, k->z[j], z, one, nc_slots, 0, NULL, 0));
        }
        static const tq_scalar_instr inv_prog[] = {{TQ_SC_RSQRT, GCR_INV, GCR_N2, 0}};
        const signed char inv_slot[4] = {GCR_INV + 1, 0, 0, 0};
        TQ_CHECK(submit1(k, TQ_OP_NORM2, az, NULL, NULL, NULL, GCR_N2, inv_prog, 1));
        TQ_CHECK(submit1(k, TQ_OP_SCALE, az, NULL, one, inv_slot, 0, NULL, 0));
        TQ_CHECK(submit1(k, TQ_OP_SCALE, z, NULL, one, inv_slot, 0, NULL, 0));
        const signed char alpha_slots[4] = {GCR_ALPHA + 1, GCR_ALPHA + 2, 0, 0};
        TQ_CHECK(submit1(k, TQ_OP_CDOT, az, k->rs, NULL, NULL, GCR_ALPHA, NULL, 0));
        TQ_CHECK(submit1(k, TQ_OP_CAXPY, z, k->xs, one, alpha_slots, 0, NULL, 0));
        TQ_CHECK(submit1(k, TQ_OP_CAXPY, az, k->rs, minus, alpha_slots, 0, NULL, 0));
        last_reduction(k);
        TQ_CHECK(submit1(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, GCR_RR, NULL, 0));
        k->out.blas_flops += (12.0 * j0 + 20) * k->n_sloppy;
        return TQ_SUCCESS;
    }
    if (k->mr) {
        /* Ar; alpha = <Ar, r> / |Ar|^2; x += alpha r; r -= alpha Ar; |r|^2 */
        static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIVR, MR_ALPHA, MR_ARR, MR_AR2}};
        static const tq_scalar_instr stop_prog[] = {{TQ_SC_STOP_LE, SLOT_GO, MR_RR, SLOT_STOP2}};
        const signed char alpha_slots[4] = {MR_ALPHA + 1, MR_ALPHA + 2, 0, 0};
        TQ_CHECK(tq_linop_apply(k->ops, k->w1, k->rs));
        TQ_CHECK(submit1(k, TQ_OP_CDOT_NORM2, k->w1, k->rs, NULL, NULL, MR_ARR, alpha_prog, 1));
        TQ_CHECK(submit1(k, TQ_OP_CAXPY, k->rs, k->xs, one, alpha_slots, 0, NULL, 0));
        TQ_CHECK(submit1(k, TQ_OP_CAXPY, k->w1, k->rs, minus, alpha_slots, 0, NULL, 0));
        last_reduction(k);
        TQ_CHECK(submit1(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, MR_RR, stop_prog, 1));
        k->out.blas_flops += 18 * k->n_sloppy;   /* <Ar, r> and |Ar|^2 6, two caxpy 8, |r|^2 2 (+2) */
        return TQ_SUCCESS;
    }
    if (!k->bicgstab) {
        /* Ap; alpha = |r|^2 / <p, Ap>; x += alpha p, r -= alpha Ap, |r|^2;
         * beta = |r_new|^2 / |r|^2; p = r + beta p */
        static const tq_scalar_instr alpha_prog[] = {{TQ_SC_DIV, CG_ALPHA, CG_RR, CG_PAP}};
        static const tq_scalar_instr beta_prog[] = {
            {TQ_SC_DIV, CG_BETA, CG_RR_NEW, CG_RR}, {TQ_SC_COPY, CG_RR, CG_RR_NEW, 0},
            {TQ_SC_STOP_LE, SLOT_GO, CG_RR, SLOT_STOP2}};
        const signed char alpha_slot[4] = {CG_ALPHA + 1, 0, 0, 0}, beta_slot[4] = {CG_BETA + 1, 0, 0, 0};
        if (k->fused) {
            /* w = M_pc p and <p, Ap> = |w|^2 in its last kernel; r -= alpha M_pc^dag w and
             * |r|^2 in the next one's (Ap is never stored); then x += alpha p, p = r + beta p
             * in one pass: 6 vector streams besides the operator instead of 11 */
            k->ops->applications++;
            __atomic_fetch_add(&fused_iterations, 1, __ATOMIC_RELAXED);
            TQ_CHECK(fused_matpc(k, k->ops->tmp, k->pv, 0, TQ_EPI_NORM2, CG_PAP, 0, NULL, NULL, NULL, alpha_prog, 1));
            last_reduction(k);
            TQ_CHECK(fused_matpc(k, k->w1, k->ops->tmp, 1, TQ_EPI_AXPY_NORM2, CG_RR_NEW, CG_ALPHA + 1, k->rs, NULL,
                                 NULL, beta_prog, 3));
            const signed char xp_slots[4] = {CG_ALPHA + 1, CG_BETA + 1, 0, 0};
            tq_field *fxp[3] = {k->rs, k->pv, k->xs};
            TQ_CHECK(tq_blas_submit(k->who, k->xs_stale ? TQ_OP_CG_X_DIRECTION_SET : TQ_OP_CG_X_DIRECTION, one,
                                    xp_slots, fxp, k->sc, 0, NULL, 0));
            k->out.blas_flops += 10 * k->n_sloppy;   /* as below: the same arithmetic */
            return TQ_SUCCESS;
        }
        TQ_CHECK(tq_linop_apply(k->ops, k->w1, k->pv));
        TQ_CHECK(submit1(k, TQ_OP_RDOT, k->pv, k->w1, NULL, NULL, CG_PAP, alpha_prog, 1));
        tq_field *fupd[4] = {k->pv, k->w1, k->xs, k->rs};
        last_reduction(k);
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_CG_UPDATE, one, alpha_slot, fupd, k->sc, CG_RR_NEW, beta_prog, 3));
        TQ_CHECK(submit1(k, TQ_OP_CG_DIRECTION, k->rs, k->pv, one, beta_slot, 0, NULL, 0));
        k->out.blas_flops += 10 * k->n_sloppy;   /* 2 flops per real: <p,Ap>, x, r, |r|^2, p */
        return TQ_SUCCESS;
    }
    /* v = A p; alpha = rho / <r0, v>; s = r - alpha v; t = A s; omega = <t, s> / |t|^2;
     * x += alpha p + omega s; r = s - omega t; |r|^2, <r0, r>;
     * beta = (rho_new / rho) (alpha / omega); p = r + beta (p - omega v) */
    static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_R0V}};
    static const tq_scalar_instr omega_prog[] = {{TQ_SC_CDIVR, BI_OMEGA, BI_TS, BI_TT}};
    static const tq_scalar_instr beta_prog[] = {
        {TQ_SC_CDIV, BI_T1, BI_RHO_NEW, BI_RHO}, {TQ_SC_CDIV, BI_T2, BI_ALPHA, BI_OMEGA},
        {TQ_SC_CMUL, BI_BETA, BI_T1, BI_T2}, {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0},
        {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
    const signed char alpha_slots[4] = {BI_ALPHA + 1, BI_ALPHA + 2, 0, 0};
    const signed char upd_slots[4] = {BI_ALPHA + 1, BI_ALPHA + 2, BI_OMEGA + 1, BI_OMEGA + 2};
    const signed char dir_slots[4] = {BI_BETA + 1, BI_BETA + 2, BI_OMEGA + 1, BI_OMEGA + 2};
    tq_field *v = k->w1;
    if (k->fused) {
        /* The same recurrence with its reductions where the data already is (one block; 11
         * vector streams beside the operator instead of 18, 5 tasks instead of 9):
         *   s = r - alpha M_pc p in the last kernel of M_pc p (alpha is known: below; v =
         *     M_pc p itself is not stored: v = (r - s) / alpha where it is needed);
         *   t = M_pc s, and in its last kernel <t, s>, |t|^2, <r0, s>, <r0, t>: omega,
         *     rho_new = <r0, s> - omega <r0, t> (= <r0, r_new>), beta, delta = omega / alpha;
         *   one pass: x += alpha p + omega s; r_new = s - omega t;
         *     p = r_new + beta (p - delta (r - s)) (= r_new + beta (p - omega v));
         *     |r_new|^2 and <q, p> with q = M_pc^dag r0, so the next iteration's
         *     alpha = rho / <r0, M_pc p> is known before its M_pc p. */
        static const tq_scalar_instr t_prog[] = {
            {TQ_SC_CDIVR, BI_OMEGA, BI_TS, BI_TT}, {TQ_SC_CMUL, BI_T1, BI_OMEGA, BI_R0T},
            {TQ_SC_CSUB, BI_T1, BI_R0S, BI_T1},      /* rho_new */
            {TQ_SC_CDIV, BI_DELTA, BI_OMEGA, BI_ALPHA}, {TQ_SC_CDIV, BI_T2, BI_T1, BI_RHO},
            {TQ_SC_CDIV, BI_BETA, BI_T2, BI_DELTA},  /* beta = (rho_new / rho) (alpha / omega) */
            {TQ_SC_CCOPY, BI_RHO, BI_T1, 0}};
        static const tq_scalar_instr step_prog[] = {
            {TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_QP}, {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
        k->ops->applications += 2;
        __atomic_fetch_add(&fused_iterations, 1, __ATOMIC_RELAXED);
        TQ_CHECK(fused_matpc(k, k->sv, k->pv, 0, TQ_EPI_CAXPYZ, 0, BI_ALPHA + 1, NULL, k->rs, NULL, NULL, 0));
        TQ_CHECK(fused_matpc(k, k->t, k->sv, 0, TQ_EPI_BICGSTAB_T, BI_TS, 0, NULL, k->sv, k->r0, t_prog, 7));
        last_reduction(k);
        const double c[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        const signed char slots[8] = {BI_ALPHA + 1, BI_ALPHA + 2, BI_OMEGA + 1, BI_OMEGA + 2,
                                      BI_BETA + 1, BI_BETA + 2, BI_DELTA + 1, BI_DELTA + 2};
        tq_field *f[6] = {k->pv, k->sv, k->t, k->rs, k->q, k->xs};
        TQ_CHECK(tq_blas_submit(k->who, k->xs_stale ? TQ_OP_BICGSTAB_STEP_SET : TQ_OP_BICGSTAB_STEP, c, slots, f, k->sc,
                                BI_RR, step_prog, 2));
        /* flops per real: s 4, <t, s> |t|^2 <r0, s> <r0, t> 14, x r p 18, |r|^2 <q, p> 6 */
        k->out.blas_flops += 42 * k->n_sloppy;
        return TQ_SUCCESS;
    }
    TQ_CHECK(tq_linop_apply(k->ops, v, k->pv));
    TQ_CHECK(submit1(k, TQ_OP_CDOT, k->r0, v, NULL, NULL, BI_R0V, alpha_prog, 1));
    tq_field *fs[3] = {v, k->rs, k->sv};   /* s = r - alpha v */
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_CAXPYZ, minus, alpha_slots, fs, k->sc, 0, NULL, 0));
    TQ_CHECK(tq_linop_apply(k->ops, k->t, k->sv));
    TQ_CHECK(submit1(k, TQ_OP_CDOT_NORM2, k->t, k->sv, NULL, NULL, BI_TS, omega_prog, 1));
    tq_field *fupd[6] = {k->pv, k->sv, k->t, k->r0, k->xs, k->rs};
    last_reduction(k);
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_BICGSTAB_UPDATE, one, upd_slots, fupd, k->sc, BI_RR, beta_prog, 5));
    tq_field *fdir[3] = {k->rs, v, k->pv};
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_BICGSTAB_DIRECTION, one, dir_slots, fdir, k->sc, 0, NULL, 0));
    /* flops per real: <r0, v> 4, s 4, <t, s> and |t|^2 6, x, r, |r|^2, <r0, r> 14, p 8 */
    k->out.blas_flops += 36 * k->n_sloppy;
    return TQ_SUCCESS;
}

/* Queues the next iteration (the caller opened a chain if any) with its bookkeeping. */
static tq_status queue_iteration(tq_krylov *k)
{
    const double f0 = k->out.blas_flops;
    const long a0 = k->ops->applications;
    /* behind a restart not yet read, the iteration is guarded even without pipelining:
     * the restart may have found the system solved (b = 0) */
    const int guard = k->pipelined || k->restart_pending ? SLOT_GO + 1 : 0;
    k->sc->guard = guard;
    const int set = k->xs_stale;
    const tq_status st = submit_iteration(k);
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
    /* Pipelined on one block: iterations go in chains of two (StarPU's gap between
     * dependent tasks is paid once per two iterations), and up to two chains are queued
     * ahead of the host. The grouping does not depend on TQ_CHAIN: the same arithmetic. */
    const int group = k->pipelined && k->chained ? 2 : 1;
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

/* The fused CG: an iteration that reaches the tolerance on the device shuts the guard, which
 * then holds back its own last task, x += alpha p; p = r + beta p (x = alpha p when set: the
 * first iteration after a reliable update), and all of the queued iterations after it. That
 * task, with the scalars the held-back iterations left unchanged, runs when the host has
 * read the iteration (guard 0), or in the reliable update queued behind it under the inverse
 * guard (-(SLOT_GO + 1): it runs only if the guard is shut then; the first iteration after
 * the previous update has been read by then, so the pass is never a _SET one there). */
static tq_status cg_held_back_pass(tq_krylov *k, int guard, int set)
{
    const double one[4] = {1, 1, 1, 1};
    const signed char xp_slots[4] = {CG_ALPHA + 1, CG_BETA + 1, 0, 0};
    tq_field *fxp[3] = {k->rs, k->pv, k->xs};
    k->sc->guard = guard;
    const tq_status st = tq_blas_submit(k->who, set ? TQ_OP_CG_X_DIRECTION_SET : TQ_OP_CG_X_DIRECTION, one, xp_slots,
                                        fxp, k->sc, 0, NULL, 0);
    k->sc->guard = 0;
    return st;
}

/* Mixed precision: x += xs (xs then zeroed or, fused, overwritten by the next iteration),
 * r = b - A x (precise); the sloppy residual becomes the true one and the search direction
 * follows it (reliable update), or the recurrence restarts from it (defect correction).
 * Queued like an iteration: the next check reads the true |r|^2 from its snapshot. */
static tq_status reliable_update_tasks(tq_krylov *k)
{
    const double minus[4] = {-1, 0, 0, 0};
    if (k->xpass_in_update) TQ_CHECK(cg_held_back_pass(k, -(SLOT_GO + 1), 0));
    TQ_CHECK(submit1(k, TQ_OP_ACCUMULATE, k->xs, k->x, NULL, NULL, 0, NULL, 0));
    /* x_sloppy is now part of x: the fused iterations' next x pass overwrites it, the
     * others add to a zeroed one */
    if (k->fused) k->xs_stale = 1;
    else TQ_CHECK(submit1(k, TQ_OP_ZERO, k->xs, NULL, NULL, NULL, 0, NULL, 0));
    TQ_CHECK(tq_linop_apply(k->op, k->rh, k->x));
    if (k->defect) {
        TQ_CHECK(submit1(k, TQ_OP_XPAY, (tq_field *)k->b, k->rh, minus, NULL, 0, NULL, 0));   /* r = b - A x */
        TQ_CHECK(submit1(k, TQ_OP_COPY, k->rh, k->rs, NULL, NULL, 0, NULL, 0));
        k->out.blas_flops += 4 * k->n_precise;
        return restart(k);
    }
    /* r = b - A x; p += r - r_iterated; |r|^2 (BiCGstab: rho = <r0, r> too; fused, also
     * <q, p> and the next alpha: p and rho changed, q = M_pc^dag r0 did not); the guard
     * opens again unless r is below the tolerance */
    tq_field *f[6] = {(tq_field *)k->b, k->rh, k->rs, k->pv, k->r0, k->q};
    k->sc->snap_next = SNAP_RESTART;
    if (k->bicgstab && k->fused) {
        static const tq_scalar_instr qp_prog[] = {
            {TQ_SC_CDIV, BI_ALPHA, BI_RHO_NEW, BI_UPD_QP}, {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0},
            {TQ_SC_SET, SLOT_GO, 1, 0}, {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_RELIABLE_RESIDUAL_RHO_QP, NULL, NULL, f, k->sc, BI_RR, qp_prog, 4));
    } else if (k->bicgstab) {
        static const tq_scalar_instr rho_prog[] = {
            {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0}, {TQ_SC_SET, SLOT_GO, 1, 0}, {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_RELIABLE_RESIDUAL_RHO, NULL, NULL, f, k->sc, BI_RR, rho_prog, 3));
    } else {
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_RELIABLE_RESIDUAL, NULL, NULL, f, k->sc, SLOT_RR, go_prog, 2));
    }
    /* flops per real: x += xs 2; b - A x 2, p 4, |r|^2 2 (<r0, r> 4, <q, p> 4) */
    k->out.blas_flops += 2 * k->n_precise + (k->bicgstab ? k->fused ? 16 : 12 : 8) * k->n_sloppy;
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

static void progress(const tq_krylov *k, const char *what)
{
    if (k->p.verbosity >= 2)
        fprintf(stderr, "taskqcd: %s iteration %d: relative residual %.6e%s (%.6f s)\n",
                k->bicgstab ? "BiCGstab" : k->mr ? "MR" : k->gcr ? "GCR" : "CG",
                k->out.iterations, k->out.residual, what, tq_internal_now() - k->t0);
}

/* Reads the oldest queued iteration's snapshot and evaluates it: breakdown tests, the
 * iterated |r|^2 into k->rr, progress. */
static tq_status consume(tq_krylov *k)
{
    const int i = (int)(k->consumed % TQ_KRYLOV_QUEUE);
    tq_status st = tq_scalars_read_snapshot(k->sc, i, k->s);
    k->consumed++;
    k->out.blas_flops += k->queued_flops[i];
    const double *s = k->s;
    const int it = ++k->out.iterations;
    if (st == TQ_SUCCESS && k->gcr) {
        if (!(s[GCR_N2] > 0.0) || !isfinite(s[GCR_N2]) || !isfinite(s[GCR_ALPHA]) || !isfinite(s[GCR_ALPHA + 1]))
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: the new direction's |A z|^2 = %.3e at iteration %d (NaN, Inf, or "
                          "a direction in the span of the earlier ones)", k->who, s[GCR_N2], it);
        else if (!isfinite(s[GCR_RR]))
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", k->who, it);
        k->rr = s[GCR_RR];
        k->kcycle = (k->kcycle + 1) % k->nkrylov;   /* restart after nkrylov directions */
    } else if (st == TQ_SUCCESS && k->mr) {
        if (!(s[MR_AR2] > 0.0) || !isfinite(s[MR_AR2]) || !isfinite(s[MR_ARR]) || !isfinite(s[MR_ARR + 1]))
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: |A r|^2 = %.3e at iteration %d (NaN, Inf or a vanishing A r: a singular "
                          "system?)", k->who, s[MR_AR2], it);
        else if (!isfinite(s[MR_RR]))
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", k->who, it);
        k->rr = s[MR_RR];
    } else if (st == TQ_SUCCESS && !k->bicgstab) {
        if (!(s[CG_PAP] > 0.0) || !isfinite(s[CG_PAP]))
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: loss of positivity at iteration %d: <p, A p> = %.3e "
                          "(the operator is not positive definite, or the system is singular)", k->who, it, s[CG_PAP]);
        else if (!isfinite(s[CG_RR]))
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", k->who, it);
        k->rr = s[CG_RR];
    } else if (st == TQ_SUCCESS) {
        for (int j = 0; j < BI_T1 && st == TQ_SUCCESS; j++)
            if (!isfinite(s[j]))
                st = tq_error(TQ_ERR_BREAKDOWN, "%s: NaN or Inf in the iteration's scalars at iteration %d "
                              "(<r0, A p> or |A s| vanished: a singular system?)", k->who, it);
        k->rr = s[BI_RR];
    }
    if (st == TQ_SUCCESS && k->fused && !k->bicgstab && k->queued_guarded[i] && s[SLOT_GO] == 0.0 &&
        !k->xpass_in_update)
        st = cg_held_back_pass(k, 0, k->queued_set[i]);
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

/* Reads the snapshot of the last (re)start: on the first, |b|^2 and the stopping value;
 * the residual the iterations go on from (after a reliable update, the true one). */
static tq_status restart_result(tq_krylov *k)
{
    k->restart_pending = 0;
    TQ_CHECK(tq_scalars_read_snapshot(k->sc, SNAP_RESTART, k->s));
    k->rr = k->rmax = k->s[SLOT_RR];
    if (!k->started) {
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
            if (k->mixed && (below || k->rr < k->delta * k->delta * k->rmax || k->out.iterations >= k->p.maxiter)) {
                /* the update takes the state after everything queued: the queued iterations
                 * are evaluated too, up to one that reached the tolerance (those after it
                 * were held back); convergence is then decided on the true residual, at the
                 * next check. The update goes in behind them at once, so the GPU does not
                 * idle while the host reads them. In the fused CG it starts with the x/p
                 * pass that one of them may hold back (cg_held_back_pass), unless the
                 * iteration just read reached the tolerance: its pass is queued already. */
                k->xpass_in_update = k->fused && !k->bicgstab && !below;
                st = reliable_update(k);
                while (st == TQ_SUCCESS && k->queued > k->consumed) {
                    if (k->rr <= k->stop2) drop_held_back(k);
                    else st = consume(k);
                }
                k->xpass_in_update = 0;
                if (st == TQ_SUCCESS && k->sync_restarts) {
                    st = restart_result(k);
                    converged = st == TQ_SUCCESS && k->rr <= k->stop2;
                }
            } else {
                converged = below;
            }
        }
    }
    while (converged && k->queued > k->consumed) drop_held_back(k);
    const double *s = k->s;
    const int it = k->out.iterations;
    const int evaluate = st == TQ_SUCCESS && !converged && !k->restart_pending;
    if (evaluate && consumed && k->bicgstab) {
        const double tt = s[BI_TT], om = hypot(s[BI_OMEGA], s[BI_OMEGA + 1]), rho = hypot(s[BI_RHO], s[BI_RHO + 1]);
        if (!(tt > 0.0) || om == 0.0)
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: omega vanished at iteration %d (|t|^2 = %.3e, |omega| = %.3e)", k->who, it, tt, om);
        else if (rho <= 1e-30 * k->b2)
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: rho = <r0, r> vanished at iteration %d (|rho| = %.3e, |b|^2 = %.3e)",
                          k->who, it, rho, k->b2);
    }
    if (evaluate && st == TQ_SUCCESS && it >= k->p.maxiter)
        st = tq_error(TQ_ERR_NOT_CONVERGED, "%s: no convergence in %d iterations (relative residual %.3e, tolerance %.3e)",
                      k->who, k->p.maxiter, k->out.residual, k->p.tol);
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

void tq_krylov_cg_coefficients(const tq_krylov *k, double *alpha, double *beta)
{
    *alpha = k->s[CG_ALPHA];
    *beta = k->s[CG_BETA];
}

tq_field *tq_krylov_residual(const tq_krylov *k) { return k->rs; }
double tq_krylov_relative_r2(const tq_krylov *k) { return k->b2 > 0 ? k->rr / k->b2 : 0.0; }
