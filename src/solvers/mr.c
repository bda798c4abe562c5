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

const tq_krylov_method tq_krylov_mr_method = {
    .name = "MR",
    .who = "tq_solve (MR)",
    .pipelines = 1,
    .fused_form = -1,
    .submit_iteration = mr_submit_iteration,
    .read_iteration = mr_read_iteration,
};
