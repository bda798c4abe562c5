/* Minimal residual, one iteration of the Krylov frame (src/solvers/krylov.c): Ar; alpha =
 * <Ar, r> / |Ar|^2; x += alpha r; r -= alpha Ar; |r|^2. The step minimises |r| along A r,
 * so it needs no Hermitian operator; alpha is computed on the device. */
#include "solvers/krylov_internal.h"

#include <math.h>

/* Scalar slots (complex values take two). */
enum { MR_RR = 0, MR_ARR = 1, MR_AR2 = 3, MR_ALPHA = 4 };

static tq_status mr_submit_iteration(tq_krylov *k)
{
    static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIVR, MR_ALPHA, MR_ARR, MR_AR2}};
    static const tq_scalar_instr stop_prog[] = {{TQ_SC_STOP_LE, SLOT_GO, MR_RR, SLOT_STOP2}};
    const double one[4] = {1, 1, 1, 1}, minus[4] = {-1, -1, 0, 0};
    const signed char alpha_slots[4] = {MR_ALPHA + 1, MR_ALPHA + 2, 0, 0};
    TQ_CHECK(tq_linop_apply(k->ops, k->w1, k->rs));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CDOT_NORM2, k->w1, k->rs, NULL, NULL, MR_ARR, alpha_prog, 1));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CAXPY, k->rs, k->xs, one, alpha_slots, 0, NULL, 0));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CAXPY, k->w1, k->rs, minus, alpha_slots, 0, NULL, 0));
    tq_krylov_last_reduction(k);
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, MR_RR, stop_prog, 1));
    k->out.blas_flops += 18 * k->n_sloppy;   /* <Ar, r> and |Ar|^2 6, two caxpy 8, |r|^2 2 (+2) */
    return TQ_SUCCESS;
}

static tq_status mr_read_iteration(tq_krylov *k, int it)
{
    const double *s = k->s;
    if (!(s[MR_AR2] > 0.0) || !isfinite(s[MR_AR2]) || !isfinite(s[MR_ARR]) || !isfinite(s[MR_ARR + 1]))
        return tq_error(TQ_ERR_BREAKDOWN, "%s: |A r|^2 = %.3e at iteration %d (NaN, Inf or a vanishing A r: a singular "
                        "system?)", k->who, s[MR_AR2], it);
    if (!isfinite(s[MR_RR]))
        return tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", k->who, it);
    return TQ_SUCCESS;
}

/* z = steps MR steps on A z = r from z = 0, with no host wait: each alpha is computed on the
 * device by a scalar program from the reduction before it (sc's slots slot .. slot + 4: <A r, r>, |A r|^2, alpha).
 * res (r's copy, then the steps' residual) and az are work fields. GCR's MR preconditioner
 * and the multigrid smoothers (src/solvers/mg_cycle.c) are this; the caller counts the
 * BLAS flops: tq_mr_steps_flops per real. */
tq_status tq_mr_steps(const char *who, tq_linop *A, tq_scalars *sc, int slot, int steps, tq_field *z, const tq_field *r,
                      tq_field *res, tq_field *az)
{
    const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIVR, (signed char)(slot + 3), (signed char)slot, (signed char)(slot + 2)}};
    const double one[4] = {1, 1, 1, 1}, minus[4] = {-1, -1, 0, 0};
    const signed char alpha_slots[4] = {(signed char)(slot + 4), (signed char)(slot + 5), 0, 0};   /* 1 + slot index */
    tq_field *f[2] = {z, NULL};
    TQ_CHECK(tq_blas_submit(who, TQ_OP_ZERO, NULL, NULL, f, sc, 0, NULL, 0));
    f[0] = (tq_field *)r;
    f[1] = res;
    TQ_CHECK(tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, f, sc, 0, NULL, 0));
    for (int i = 0; i < steps; i++) {
        TQ_CHECK(tq_linop_apply(A, az, res));
        f[0] = az;
        f[1] = res;
        TQ_CHECK(tq_blas_submit(who, TQ_OP_CDOT_NORM2, NULL, NULL, f, sc, slot, alpha_prog, 1));
        f[0] = res;
        f[1] = z;
        TQ_CHECK(tq_blas_submit(who, TQ_OP_CAXPY, one, alpha_slots, f, sc, 0, NULL, 0));
        if (i + 1 == steps) break;   /* the last residual is not needed */
        f[0] = az;
        f[1] = res;
        TQ_CHECK(tq_blas_submit(who, TQ_OP_CAXPY, minus, alpha_slots, f, sc, 0, NULL, 0));
    }
    return TQ_SUCCESS;
}

double tq_mr_steps_flops(int steps) { return 14.0 * steps - 4.0; }   /* cdot+norm 6, caxpy 8 (the last one 4 less) */

const tq_krylov_method tq_krylov_mr_method = {
    .name = "MR",
    .who = "tq_solve (MR)",
    .pipelines = 1,
    .fused_form = -1,
    .submit_iteration = mr_submit_iteration,
    .read_iteration = mr_read_iteration,
};
