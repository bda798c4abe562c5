/* Conjugate gradients on a Hermitian positive operator, one iteration of the Krylov frame
 * (src/solvers/krylov.c): Ap; alpha = |r|^2 / <p, Ap>; x += alpha p, r -= alpha Ap, |r|^2;
 * beta = |r_new|^2 / |r|^2; p = r + beta p. The coefficients are computed on the device by
 * scalar programs (kernels/solver_scalars.h), so an iteration queues without a host wait.
 * On M_pc^dag M_pc (one block) the reductions go into the operator's kernels. */
#include "solvers/krylov_internal.h"

#include <math.h>

/* Scalar slots (CG_RR is the frame's SLOT_RR). */
enum { CG_RR, CG_RR_NEW, CG_PAP, CG_ALPHA, CG_BETA };

static const tq_scalar_instr alpha_prog[] = {{TQ_SC_DIV, CG_ALPHA, CG_RR, CG_PAP}};
static const tq_scalar_instr beta_prog[] = {
    {TQ_SC_DIV, CG_BETA, CG_RR_NEW, CG_RR}, {TQ_SC_COPY, CG_RR, CG_RR_NEW, 0},
    {TQ_SC_STOP_LE, SLOT_GO, CG_RR, SLOT_STOP2}};

/* The iteration as separate tasks: A p, <p, Ap>, the x/r update with |r|^2, p. */
static tq_status submit_plain(tq_krylov *k)
{
    const double one[4] = {1, 1, 1, 1};
    const signed char alpha_slot[4] = {CG_ALPHA + 1, 0, 0, 0}, beta_slot[4] = {CG_BETA + 1, 0, 0, 0};
    TQ_CHECK(tq_linop_apply(k->ops, k->w1, k->pv));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_RDOT, k->pv, k->w1, NULL, NULL, CG_PAP, alpha_prog, 1));
    tq_field *fupd[4] = {k->pv, k->w1, k->xs, k->rs};
    tq_krylov_last_reduction(k);
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_CG_UPDATE, one, alpha_slot, fupd, k->sc, CG_RR_NEW, beta_prog, 3));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CG_DIRECTION, k->rs, k->pv, one, beta_slot, 0, NULL, 0));
    k->out.blas_flops += 10 * k->n_sloppy;   /* 2 flops per real: <p,Ap>, x, r, |r|^2, p */
    return TQ_SUCCESS;
}

/* w = M_pc p and <p, Ap> = |w|^2 in its last kernel; r -= alpha M_pc^dag w and |r|^2 in
 * the next one's (Ap is never stored); then x += alpha p, p = r + beta p in one pass: 6
 * vector streams besides the operator instead of 11. */
static tq_status submit_fused(tq_krylov *k)
{
    const double one[4] = {1, 1, 1, 1};
    k->ops->applications++;
    tq_krylov_count_fused_iteration();
    TQ_CHECK(tq_krylov_fused_matpc(k, k->ops->tmp, k->pv, 0, TQ_EPI_NORM2, CG_PAP, 0, NULL, NULL, NULL, alpha_prog, 1));
    tq_krylov_last_reduction(k);
    TQ_CHECK(tq_krylov_fused_matpc(k, k->w1, k->ops->tmp, 1, TQ_EPI_AXPY_NORM2, CG_RR_NEW, CG_ALPHA + 1, k->rs, NULL,
                                   NULL, beta_prog, 3));
    const signed char xp_slots[4] = {CG_ALPHA + 1, CG_BETA + 1, 0, 0};
    tq_field *fxp[3] = {k->rs, k->pv, k->xs};
    TQ_CHECK(tq_blas_submit(k->who, k->xs_stale ? TQ_OP_CG_X_DIRECTION_SET : TQ_OP_CG_X_DIRECTION, one, xp_slots, fxp,
                            k->sc, 0, NULL, 0));
    k->out.blas_flops += 10 * k->n_sloppy;   /* as submit_plain: the same arithmetic */
    return TQ_SUCCESS;
}

static tq_status cg_submit_iteration(tq_krylov *k)
{
    return k->fused ? submit_fused(k) : submit_plain(k);
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

static tq_status cg_read_iteration(tq_krylov *k, int it)
{
    const double *s = k->s;
    if (!(s[CG_PAP] > 0.0) || !isfinite(s[CG_PAP]))
        return tq_error(TQ_ERR_BREAKDOWN, "%s: loss of positivity at iteration %d: <p, A p> = %.3e "
                        "(the operator is not positive definite, or the system is singular)", k->who, it, s[CG_PAP]);
    if (!isfinite(s[CG_RR]))
        return tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", k->who, it);
    return TQ_SUCCESS;
}

void tq_krylov_cg_coefficients(const tq_krylov *k, double *alpha, double *beta)
{
    *alpha = k->s[CG_ALPHA];
    *beta = k->s[CG_BETA];
}

const tq_krylov_method tq_krylov_cg_method = {
    .name = "CG",
    .who = "tq_solve (CG)",
    .hermitian = 1,
    .pipelines = 1,
    .fused_form = TQ_LINOP_MATPC_DAG_MATPC,
    .submit_iteration = cg_submit_iteration,
    .read_iteration = cg_read_iteration,
    .held_back_pass = cg_held_back_pass,
};
