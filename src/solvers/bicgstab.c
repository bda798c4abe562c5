/* BiCGstab, one iteration of the Krylov frame (src/solvers/krylov.c): v = A p; alpha = rho /
 * <r0, v>; s = r - alpha v; t = A s; omega = <t, s> / |t|^2; x += alpha p + omega s; r = s -
 * omega t; |r|^2, <r0, r>; beta = (rho_new / rho) (alpha / omega); p = r + beta (p - omega
 * v). The coefficients are computed on the device by scalar programs; on M_pc (one block)
 * the reductions go into the operator's kernels. */
#include "solvers/krylov_internal.h"

#include <math.h>

/* Scalar slots (complex values take two). */
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

static tq_status bicgstab_create_fields(tq_krylov *k, const tq_field *b, tq_precision sp)
{
    TQ_CHECK(tq_krylov_field_in(b, sp, &k->r0));
    TQ_CHECK(tq_krylov_field_in(b, sp, &k->sv));
    TQ_CHECK(tq_krylov_field_in(b, sp, &k->t));
    if (k->fused) TQ_CHECK(tq_krylov_field_in(b, sp, &k->q));
    return TQ_SUCCESS;
}

/* Fused: alpha = rho / <r0, M_pc p> = rho / <q, p> with q = M_pc^dag r0, known before M_pc
 * p (the iteration's last pass keeps it up to date). */
static tq_status fused_alpha(tq_krylov *k)
{
    static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_QP}};
    return tq_krylov_blas(k, TQ_OP_CDOT, k->q, k->pv, NULL, NULL, BI_QP, alpha_prog, 1);
}

/* After p = r: r0 = r, rho = <r0, r> = |r|^2, the guard; fused, also q = M_pc^dag r0 (once
 * per recurrence) and the first alpha. */
static tq_status bicgstab_restart(tq_krylov *k)
{
    static const tq_scalar_instr rho_prog[] = {
        {TQ_SC_COPY, BI_RHO, BI_RR, 0}, {TQ_SC_ZERO, BI_RHO + 1, 0, 0}, {TQ_SC_SET, SLOT_GO, 1, 0},
        {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_COPY, k->rs, k->r0, NULL, NULL, 0, NULL, 0));
    if (!k->fused) k->sc->snap_next = SNAP_RESTART;
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_NORM2, k->rs, NULL, NULL, NULL, BI_RR, rho_prog, 4));
    if (!k->fused) return TQ_SUCCESS;
    TQ_CHECK(tq_dirac_matpc(k->ops->d, k->q, k->r0, k->ops->parity, 1));
    k->sc->snap_next = SNAP_RESTART;
    return fused_alpha(k);
}

/* A reliable update's residual pass also takes rho = <r0, r> (fused: <q, p> and the next
 * alpha too, as p and rho changed but q = M_pc^dag r0 did not). */
static tq_status bicgstab_update_residual(tq_krylov *k, tq_field *const *f)
{
    if (k->fused) {
        static const tq_scalar_instr qp_prog[] = {
            {TQ_SC_CDIV, BI_ALPHA, BI_RHO_NEW, BI_UPD_QP}, {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0},
            {TQ_SC_SET, SLOT_GO, 1, 0}, {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_RELIABLE_RESIDUAL_RHO_QP, NULL, NULL, f, k->sc, BI_RR, qp_prog, 4));
    } else {
        static const tq_scalar_instr rho_prog[] = {
            {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0}, {TQ_SC_SET, SLOT_GO, 1, 0}, {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
        TQ_CHECK(tq_blas_submit(k->who, TQ_OP_RELIABLE_RESIDUAL_RHO, NULL, NULL, f, k->sc, BI_RR, rho_prog, 3));
    }
    /* flops per real: x += xs 2; b - A x 2, p 4, |r|^2 2, <r0, r> 4 (<q, p> 4) */
    k->out.blas_flops += 2 * k->n_precise + (k->fused ? 16 : 12) * k->n_sloppy;
    return TQ_SUCCESS;
}

/* The iteration as separate tasks (9). */
static tq_status submit_plain(tq_krylov *k)
{
    static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_R0V}};
    static const tq_scalar_instr omega_prog[] = {{TQ_SC_CDIVR, BI_OMEGA, BI_TS, BI_TT}};
    static const tq_scalar_instr beta_prog[] = {
        {TQ_SC_CDIV, BI_T1, BI_RHO_NEW, BI_RHO}, {TQ_SC_CDIV, BI_T2, BI_ALPHA, BI_OMEGA},
        {TQ_SC_CMUL, BI_BETA, BI_T1, BI_T2}, {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0},
        {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
    const double one[4] = {1, 1, 1, 1}, minus[4] = {-1, -1, 0, 0};
    const signed char alpha_slots[4] = {BI_ALPHA + 1, BI_ALPHA + 2, 0, 0};
    const signed char upd_slots[4] = {BI_ALPHA + 1, BI_ALPHA + 2, BI_OMEGA + 1, BI_OMEGA + 2};
    const signed char dir_slots[4] = {BI_BETA + 1, BI_BETA + 2, BI_OMEGA + 1, BI_OMEGA + 2};
    tq_field *v = k->w1;
    TQ_CHECK(tq_linop_apply(k->ops, v, k->pv));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CDOT, k->r0, v, NULL, NULL, BI_R0V, alpha_prog, 1));
    tq_field *fs[3] = {v, k->rs, k->sv};   /* s = r - alpha v */
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_CAXPYZ, minus, alpha_slots, fs, k->sc, 0, NULL, 0));
    TQ_CHECK(tq_linop_apply(k->ops, k->t, k->sv));
    TQ_CHECK(tq_krylov_blas(k, TQ_OP_CDOT_NORM2, k->t, k->sv, NULL, NULL, BI_TS, omega_prog, 1));
    tq_field *fupd[6] = {k->pv, k->sv, k->t, k->r0, k->xs, k->rs};
    tq_krylov_last_reduction(k);
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_BICGSTAB_UPDATE, one, upd_slots, fupd, k->sc, BI_RR, beta_prog, 5));
    tq_field *fdir[3] = {k->rs, v, k->pv};
    TQ_CHECK(tq_blas_submit(k->who, TQ_OP_BICGSTAB_DIRECTION, one, dir_slots, fdir, k->sc, 0, NULL, 0));
    /* flops per real: <r0, v> 4, s 4, <t, s> and |t|^2 6, x, r, |r|^2, <r0, r> 14, p 8 */
    k->out.blas_flops += 36 * k->n_sloppy;
    return TQ_SUCCESS;
}

/* The same recurrence with its reductions where the data already is (one block; 11 vector
 * streams beside the operator instead of 18, 5 tasks instead of 9):
 *   s = r - alpha M_pc p in the last kernel of M_pc p (alpha is known: fused_alpha; v =
 *     M_pc p itself is not stored: v = (r - s) / alpha where it is needed);
 *   t = M_pc s, and in its last kernel <t, s>, |t|^2, <r0, s>, <r0, t>: omega,
 *     rho_new = <r0, s> - omega <r0, t> (= <r0, r_new>), beta, delta = omega / alpha;
 *   one pass: x += alpha p + omega s; r_new = s - omega t;
 *     p = r_new + beta (p - delta (r - s)) (= r_new + beta (p - omega v));
 *     |r_new|^2 and <q, p> with q = M_pc^dag r0, so the next iteration's
 *     alpha = rho / <r0, M_pc p> is known before its M_pc p. */
static tq_status submit_fused(tq_krylov *k)
{
    static const tq_scalar_instr t_prog[] = {
        {TQ_SC_CDIVR, BI_OMEGA, BI_TS, BI_TT}, {TQ_SC_CMUL, BI_T1, BI_OMEGA, BI_R0T},
        {TQ_SC_CSUB, BI_T1, BI_R0S, BI_T1},      /* rho_new */
        {TQ_SC_CDIV, BI_DELTA, BI_OMEGA, BI_ALPHA}, {TQ_SC_CDIV, BI_T2, BI_T1, BI_RHO},
        {TQ_SC_CDIV, BI_BETA, BI_T2, BI_DELTA},  /* beta = (rho_new / rho) (alpha / omega) */
        {TQ_SC_CCOPY, BI_RHO, BI_T1, 0}};
    static const tq_scalar_instr step_prog[] = {
        {TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_QP}, {TQ_SC_STOP_LE, SLOT_GO, BI_RR, SLOT_STOP2}};
    k->ops->applications += 2;
    tq_krylov_count_fused_iteration();
    TQ_CHECK(tq_krylov_fused_matpc(k, k->sv, k->pv, 0, TQ_EPI_CAXPYZ, 0, BI_ALPHA + 1, NULL, k->rs, NULL, NULL, 0));
    TQ_CHECK(tq_krylov_fused_matpc(k, k->t, k->sv, 0, TQ_EPI_BICGSTAB_T, BI_TS, 0, NULL, k->sv, k->r0, t_prog, 7));
    tq_krylov_last_reduction(k);
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

static tq_status bicgstab_submit_iteration(tq_krylov *k)
{
    return k->fused ? submit_fused(k) : submit_plain(k);
}

static tq_status bicgstab_read_iteration(tq_krylov *k, int it)
{
    for (int j = 0; j < BI_T1; j++)
        if (!isfinite(k->s[j]))
            return tq_error(TQ_ERR_BREAKDOWN, "%s: NaN or Inf in the iteration's scalars at iteration %d "
                            "(<r0, A p> or |A s| vanished: a singular system?)", k->who, it);
    return TQ_SUCCESS;
}

/* omega or rho vanishing stalls the recurrence without making its scalars NaN. */
static tq_status bicgstab_check_iteration(tq_krylov *k, int it)
{
    const double *s = k->s;
    const double tt = s[BI_TT], om = hypot(s[BI_OMEGA], s[BI_OMEGA + 1]), rho = hypot(s[BI_RHO], s[BI_RHO + 1]);
    if (!(tt > 0.0) || om == 0.0)
        return tq_error(TQ_ERR_BREAKDOWN, "%s: omega vanished at iteration %d (|t|^2 = %.3e, |omega| = %.3e)", k->who,
                        it, tt, om);
    if (rho <= 1e-30 * k->b2)
        return tq_error(TQ_ERR_BREAKDOWN, "%s: rho = <r0, r> vanished at iteration %d (|rho| = %.3e, |b|^2 = %.3e)",
                        k->who, it, rho, k->b2);
    return TQ_SUCCESS;
}

const tq_krylov_method tq_krylov_bicgstab_method = {
    .name = "BiCGstab",
    .who = "tq_solve (BiCGstab)",
    .pipelines = 1,
    .fused_form = TQ_LINOP_MATPC,
    .create_fields = bicgstab_create_fields,
    .restart = bicgstab_restart,
    .update_residual = bicgstab_update_residual,
    .submit_iteration = bicgstab_submit_iteration,
    .read_iteration = bicgstab_read_iteration,
    .check_iteration = bicgstab_check_iteration,
};
