/* GCR, one iteration of the Krylov frame (src/solvers/krylov.c): z = K r (K: none, a
 * fixed number of MR steps, or the caller's, e.g. a multigrid cycle); Az; Az and z orthogonalised against the cycle's earlier (unit)
 * Az_j; alpha = <Az, r> / |Az|^2; x += alpha z; r -= alpha Az; |r|^2; z and Az kept normalised. The cycle restarts
 * after nkrylov directions (and at each reliable update). Pipelined unless the caller gives
 * the preconditioner (a multigrid cycle waits on the host for its own solves): the next
 * iteration is queued before this one's |r|^2 is read, so a coarse level's solve (latency
 * bound, 20 iterations per cycle) does not pay the host's turn between iterations; the
 * direction index therefore advances when an iteration is queued. */
#include "solvers/krylov_internal.h"

#include <math.h>
#include <stdlib.h>

/* Directions orthogonalised against in one pass (classical Gram-Schmidt inside a group,
 * modified between groups; kernels/blas_site.h: TQ_OP_MCDOT4, TQ_OP_MCAXPY4). */
#define GCR_GROUP 4

/* Scalar slots (complex values take two), GCR's and its MR preconditioner's. */
enum {
    GCR_RR = 0, GCR_ALPHA = 1, GCR_N2 = 3, GCR_INV = 4,   /* <Az, r> then |Az|^2: TQ_OP_CDOT_NORM2's order */
    GCR_C = 5,      /* .. 12: a group's <Az_j, Az> */
    PMR_ARR = 13    /* .. 17: tq_mr_steps's */
};

static tq_status gcr_create_fields(tq_krylov *k, const tq_field *b, tq_precision sp)
{
    for (int j = 0; j < k->nkrylov; j++) {
        TQ_CHECK(tq_krylov_field_in(b, sp, &k->z[j]));
        TQ_CHECK(tq_krylov_field_in(b, sp, &k->az[j]));
    }
    if (k->p.precond == TQ_PRECOND_MR) TQ_CHECK(tq_krylov_field_in(b, sp, &k->pr));
    return TQ_SUCCESS;
}

/* z = K r with K a fixed number of MR steps on A z = r from z = 0: no host wait. */
static tq_status precondition_mr(tq_krylov *k, tq_field *z, tq_field *az)
{
    const int np = k->p.precond_iters > 0 ? k->p.precond_iters : 4;
    TQ_CHECK(tq_mr_steps(k->who, k->ops, k->sc, PMR_ARR, np, z, k->rs, k->pr, az));
    k->out.blas_flops += tq_mr_steps_flops(np) * k->n_sloppy;
    return TQ_SUCCESS;
}

/* Az -= <Az_j, Az> Az_j and z alike for the cycle's earlier directions j < j0 (their Az_j
 * are unit vectors; Az and z are normalised by the update that follows). A group of up to GCR_GROUP directions
 * takes one reduction and one update pass of Az and of z: the fine level's vectors are read
 * a third as often as with a reduction and two updates per direction, and a coarse level
 * (latency bound) launches a third of the kernels. */
static tq_status orthonormalise(tq_krylov *k, int j0, tq_field *z, tq_field *az)
{
    static const int dot_op[GCR_GROUP + 1] = {0, TQ_OP_CDOT, TQ_OP_MCDOT2, TQ_OP_MCDOT3, TQ_OP_MCDOT4};
    static const int axpy_op[GCR_GROUP + 1] = {0, TQ_OP_CAXPY, TQ_OP_MCAXPY2, TQ_OP_MCAXPY3, TQ_OP_MCAXPY4};
    double minus[2 * GCR_GROUP];
    signed char beta_slots[2 * GCR_GROUP];   /* -<Az_j, Az>: 1 + slot index */
    for (int i = 0; i < 2 * GCR_GROUP; i++) {
        minus[i] = -1.0;
        beta_slots[i] = (signed char)(GCR_C + 1 + i);
    }
    for (int j = 0; j < j0; j += GCR_GROUP) {
        const int g = j0 - j < GCR_GROUP ? j0 - j : GCR_GROUP;
        tq_field *f[GCR_GROUP + 1];
        for (int i = 0; i < g; i++) f[i] = k->az[j + i];
        f[g] = az;
        TQ_CHECK(tq_blas_submit(k->who, dot_op[g], NULL, NULL, f, k->sc, GCR_C, NULL, 0));
        TQ_CHECK(tq_blas_submit(k->who, axpy_op[g], minus, beta_slots, f, k->sc, 0, NULL, 0));
        for (int i = 0; i < g; i++) f[i] = k->z[j + i];
        f[g] = z;
        TQ_CHECK(tq_blas_submit(k->who, axpy_op[g], minus, beta_slots, f, k->sc, 0, NULL, 0));
    }
    return TQ_SUCCESS;
}

/* The iteration's update in one pass (TQ_OP_GCR_UPDATE), unless TQ_SOLVER_FUSE=0. */
static int gcr_fuse_update(void)
{
    const char *e = getenv("TQ_SOLVER_FUSE");
    return !(e && e[0] == '0');
}

static tq_status gcr_submit_iteration(tq_krylov *k)
{
    const double one[4] = {1, 1, 1, 1};
    const signed char update_slots[4] = {GCR_ALPHA + 1, GCR_ALPHA + 2, GCR_INV + 1, 0};
    /* alpha = <Az, r> / |Az|^2 for the unnormalised Az (the same step as <Az', r> with Az'
     * = Az / |Az|), and 1 / |Az| */
    static const tq_scalar_instr alpha_prog[] = {{TQ_SC_RSQRT, GCR_INV, GCR_N2, 0},
                                                 {TQ_SC_CDIVR, GCR_ALPHA, GCR_ALPHA, GCR_N2}};
    static const tq_scalar_instr stop_prog[] = {{TQ_SC_STOP_LE, SLOT_GO, GCR_RR, SLOT_STOP2}};
    const int j0 = k->kcycle;
    tq_field *z = k->z[j0], *az = k->az[j0];
    /* z and Az are made whatever the guard: the operator's tasks carry none, and in an
     * iteration held back behind a converged one they would read a z never written */
    const int guard = k->sc->guard;
    k->sc->guard = 0;
    tq_status st = TQ_SUCCESS;
    if (k->precond) st = k->precond(k->precond_ctx, z, k->rs);
    else if (k->p.precond == TQ_PRECOND_MR) st = precondition_mr(k, z, az);
    else st = tq_krylov_blas(k, TQ_OP_COPY, k->rs, z, NULL, NULL, 0, NULL, 0);
    k->sc->guard = guard;
    TQ_CHECK(st);
    TQ_CHECK(tq_linop_apply(k->ops, az, z));
    k->kcycle = (j0 + 1) % k->nkrylov;
    TQ_CHECK(orthonormalise(k, j0, z, az));
    /* two passes where there were seven (|Az|^2, two scalings, <Az, r>, two updates, |r|^2):
     * a coarse level's iteration is a chain of latency-bound kernels. TQ_SOLVER_FUSE=0: the
     * update in five passes, for comparison. */
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CDOT_NORM2, az, k->rs, NULL, NULL, GCR_ALPHA, alpha_prog, 2));
    if (gcr_fuse_update()) {
        tq_field *upd[4] = {z, az, k->xs, k->rs};
        tq_krylov_last_reduction(k);
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_GCR_UPDATE, one, update_slots, upd, k->sc, GCR_RR, stop_prog, 1));
    } else {
        const double minus[4] = {-1, -1, 0, 0};
        const signed char inv_slot[4] = {GCR_INV + 1, 0, 0, 0};
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_CAXPY, z, k->xs, one, update_slots, 0, NULL, 0));
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_CAXPY, az, k->rs, minus, update_slots, 0, NULL, 0));
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_SCALE, az, NULL, one, inv_slot, 0, NULL, 0));
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_SCALE, z, NULL, one, inv_slot, 0, NULL, 0));
        tq_krylov_last_reduction(k);
        TQ_CHECK(tq_krylov_blas(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, GCR_RR, stop_prog, 1));
    }
    k->out.blas_flops += (12.0 * j0 + 20) * k->n_sloppy;
    return TQ_SUCCESS;
}

/* Breakdown tests (the direction index moved on when the iteration was queued). */
static tq_status gcr_read_iteration(tq_krylov *k, int it)
{
    const double *s = k->s;
    tq_status st = TQ_SUCCESS;
    if (!(s[GCR_N2] > 0.0) || !isfinite(s[GCR_N2]) || !isfinite(s[GCR_ALPHA]) || !isfinite(s[GCR_ALPHA + 1]))
        st = tq_error(TQ_ERR_BREAKDOWN, "%s: the new direction's |A z|^2 = %.3e at iteration %d (NaN, Inf, or "
                      "a direction in the span of the earlier ones)", k->who, s[GCR_N2], it);
    else if (!isfinite(s[GCR_RR]))
        st = tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", k->who, it);
    return st;
}

const tq_krylov_method tq_krylov_gcr_method = {
    .name = "GCR",
    .who = "tq_solve (GCR)",
    .pipelines = 1,
    .fused_form = -1,
    .create_fields = gcr_create_fields,
    .submit_iteration = gcr_submit_iteration,
    .read_iteration = gcr_read_iteration,
};
