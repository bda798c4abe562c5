/* Krylov inverters written against tq_linop: every iteration is submitted as tasks, the
 * coefficients (alpha, beta, omega) are computed by scalar programs from the reductions
 * inside the task graph (kernels/solver_scalars.h), and the host waits once per iteration,
 * to read the residual norm for the stopping test and check for breakdown. */
#include "solver_internal.h"

#include <math.h>
#include <stdio.h>

/* Reals of a spinor field (flop counts: a BLAS operation costs so many flops per real). */
static double field_reals(const tq_field *f)
{
    return (double)f->lat->local_volume / 2.0 * f->nparity * f->layout.nreal;
}

static void progress(const tq_solver_params *p, const char *name, int k, double rel)
{
    if (p->verbosity >= 2) fprintf(stderr, "taskqcd: %s iteration %d: relative residual %.6e\n", name, k, rel);
}

/* ---- CG ----------------------------------------------------------------------------------
 * Slots: the scalars of one CG solve. */
enum { CG_RR, CG_RR_NEW, CG_PAP, CG_ALPHA, CG_BETA };

tq_status tq_krylov_cg(tq_linop *op, tq_field *x, const tq_field *b, const tq_solver_params *p, tq_krylov_out *out)
{
    const char *who = "tq_solve (CG)";
    out->iterations = 0;
    out->residual = 1.0;
    out->blas_flops = 0.0;
    if (!tq_linop_hermitian(op)) return tq_error(TQ_ERR_INVALID_ARG, "%s: the operator is not Hermitian", who);
    tq_field *r = NULL, *pv = NULL, *Ap = NULL;
    tq_scalars *sc = NULL;
    tq_status st = tq_field_like(b, &r);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &pv);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &Ap);
    if (st == TQ_SUCCESS) st = tq_scalars_create(&sc);
    const double n = field_reals(b);
    double s[TQ_NSCALARS] = {0};
    double b2 = 0.0;
    if (st == TQ_SUCCESS) {
        /* x = 0, r = p = b, |r|^2 */
        tq_field *fx[1] = {x}, *fbr[2] = {(tq_field *)b, r}, *frp[2] = {r, pv}, *fr[1] = {r};
        st = tq_blas_submit(who, TQ_OP_ZERO, NULL, NULL, fx, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, fbr, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, frp, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_NORM2, NULL, NULL, fr, sc, CG_RR, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_scalars_read(sc, s);
        b2 = s[CG_RR];
        out->blas_flops += 2 * n;
        if (st == TQ_SUCCESS && !(isfinite(b2))) st = tq_error(TQ_ERR_BREAKDOWN, "%s: the right-hand side holds NaN or Inf", who);
        if (st == TQ_SUCCESS && b2 == 0.0) {
            out->residual = 0.0;   /* b = 0: x = 0 is exact */
            goto done;
        }
    }
    const double stop2 = p->tol * p->tol * b2;
    for (int k = 1; st == TQ_SUCCESS; k++) {
        if (k > p->maxiter) {
            st = tq_error(TQ_ERR_NOT_CONVERGED, "%s: no convergence in %d iterations (relative residual %.3e, tolerance %.3e)",
                          who, p->maxiter, out->residual, p->tol);
            break;
        }
        st = tq_linop_apply(op, Ap, pv);
        /* alpha = |r|^2 / <p, Ap> */
        static const tq_scalar_instr alpha_prog[] = {{TQ_SC_DIV, CG_ALPHA, CG_RR, CG_PAP}};
        tq_field *fpa[2] = {pv, Ap};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_RDOT, NULL, NULL, fpa, sc, CG_PAP, alpha_prog, 1);
        /* x += alpha p, r -= alpha Ap, |r|^2; beta = |r_new|^2 / |r|^2 */
        static const tq_scalar_instr beta_prog[] = {{TQ_SC_DIV, CG_BETA, CG_RR_NEW, CG_RR}, {TQ_SC_COPY, CG_RR, CG_RR_NEW, 0}};
        const double one[4] = {1, 0, 0, 0};
        const signed char alpha_slot[4] = {CG_ALPHA + 1, 0, 0, 0}, beta_slot[4] = {CG_BETA + 1, 0, 0, 0};
        tq_field *fupd[4] = {pv, Ap, x, r};
        if (st == TQ_SUCCESS)
            st = tq_blas_submit(who, TQ_OP_CG_UPDATE, one, alpha_slot, fupd, sc, CG_RR_NEW, beta_prog, 2);
        /* p = r + beta p (submitted before the host reads the norm: it overlaps the read) */
        tq_field *frp[2] = {r, pv};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_CG_DIRECTION, one, beta_slot, frp, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_scalars_read(sc, s);
        if (st != TQ_SUCCESS) break;
        out->blas_flops += 10 * n;   /* <p,Ap>, x and r updates, |r|^2, p update: 2 flops per real each */
        out->iterations = k;
        if (!(s[CG_PAP] > 0.0) || !isfinite(s[CG_PAP])) {
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: loss of positivity at iteration %d: <p, A p> = %.3e "
                          "(the operator is not positive definite, or the system is singular)", who, k, s[CG_PAP]);
            break;
        }
        if (!isfinite(s[CG_RR])) {
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: the residual became NaN or Inf at iteration %d", who, k);
            break;
        }
        out->residual = sqrt(s[CG_RR] / b2);
        progress(p, "CG", k, out->residual);
        if (s[CG_RR] <= stop2) break;
    }
done:
    /* (destroying the fields and scalars waits for the tasks that use them, and only those:
     * other solves in flight go on) */
    tq_scalars_destroy(sc);
    tq_field_destroy(r);
    tq_field_destroy(pv);
    tq_field_destroy(Ap);
    return st;
}

/* ---- BiCGstab ------------------------------------------------------------------------------
 * Slots (complex values take two): */
enum {
    BI_RR = 0, BI_RHO_NEW = 1,   /* the update's reduction: |r|^2, <r0, r> */
    BI_RHO = 3, BI_R0V = 5, BI_ALPHA = 7,
    BI_TS = 9, BI_TT = 11,       /* <t, s>, |t|^2 */
    BI_OMEGA = 12, BI_BETA = 14, BI_T1 = 16, BI_T2 = 18
};

tq_status tq_krylov_bicgstab(tq_linop *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             tq_krylov_out *out)
{
    const char *who = "tq_solve (BiCGstab)";
    out->iterations = 0;
    out->residual = 1.0;
    out->blas_flops = 0.0;
    tq_field *r = NULL, *r0 = NULL, *pv = NULL, *v = NULL, *sv = NULL, *t = NULL;
    tq_scalars *sc = NULL;
    tq_status st = tq_field_like(b, &r);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &r0);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &pv);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &v);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &sv);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &t);
    if (st == TQ_SUCCESS) st = tq_scalars_create(&sc);
    const double n = field_reals(b);
    double s[TQ_NSCALARS] = {0};
    double b2 = 0.0;
    if (st == TQ_SUCCESS) {
        /* x = 0; r = r0 = p = b; |r|^2; rho = <r0, r> = |r|^2 */
        tq_field *fx[1] = {x}, *fbr[2] = {(tq_field *)b, r}, *frr0[2] = {r, r0}, *frp[2] = {r, pv}, *fr[1] = {r};
        static const tq_scalar_instr rho_prog[] = {{TQ_SC_COPY, BI_RHO, BI_RR, 0}};
        const double zero = 0.0;
        st = tq_scalars_write(sc, BI_RHO + 1, 1, &zero);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_ZERO, NULL, NULL, fx, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, fbr, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, frr0, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, frp, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_NORM2, NULL, NULL, fr, sc, BI_RR, rho_prog, 1);
        if (st == TQ_SUCCESS) st = tq_scalars_read(sc, s);
        b2 = s[BI_RR];
        out->blas_flops += 2 * n;
        if (st == TQ_SUCCESS && !isfinite(b2)) st = tq_error(TQ_ERR_BREAKDOWN, "%s: the right-hand side holds NaN or Inf", who);
        if (st == TQ_SUCCESS && b2 == 0.0) {
            out->residual = 0.0;
            goto done;
        }
    }
    const double stop2 = p->tol * p->tol * b2;
    for (int k = 1; st == TQ_SUCCESS; k++) {
        if (k > p->maxiter) {
            st = tq_error(TQ_ERR_NOT_CONVERGED, "%s: no convergence in %d iterations (relative residual %.3e, tolerance %.3e)",
                          who, p->maxiter, out->residual, p->tol);
            break;
        }
        /* v = A p; alpha = rho / <r0, v> */
        st = tq_linop_apply(op, v, pv);
        static const tq_scalar_instr alpha_prog[] = {{TQ_SC_CDIV, BI_ALPHA, BI_RHO, BI_R0V}};
        tq_field *fr0v[2] = {r0, v};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_CDOT, NULL, NULL, fr0v, sc, BI_R0V, alpha_prog, 1);
        /* s = r - alpha v */
        tq_field *frs[2] = {r, sv}, *fvs[2] = {v, sv};
        const double minus[4] = {-1, -1, 0, 0};
        const signed char alpha_slots[4] = {BI_ALPHA + 1, BI_ALPHA + 2, 0, 0};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, frs, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_CAXPY, minus, alpha_slots, fvs, sc, 0, NULL, 0);
        /* t = A s; omega = <t, s> / |t|^2 */
        if (st == TQ_SUCCESS) st = tq_linop_apply(op, t, sv);
        static const tq_scalar_instr omega_prog[] = {{TQ_SC_CDIVR, BI_OMEGA, BI_TS, BI_TT}};
        tq_field *fts[2] = {t, sv};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_CDOT_NORM2, NULL, NULL, fts, sc, BI_TS, omega_prog, 1);
        /* x += alpha p + omega s; r = s - omega t; |r|^2, <r0, r>;
         * beta = (rho_new / rho) (alpha / omega); rho = rho_new */
        static const tq_scalar_instr beta_prog[] = {
            {TQ_SC_CDIV, BI_T1, BI_RHO_NEW, BI_RHO}, {TQ_SC_CDIV, BI_T2, BI_ALPHA, BI_OMEGA},
            {TQ_SC_CMUL, BI_BETA, BI_T1, BI_T2}, {TQ_SC_CCOPY, BI_RHO, BI_RHO_NEW, 0}};
        const double ones[4] = {1, 1, 1, 1};
        const signed char upd_slots[4] = {BI_ALPHA + 1, BI_ALPHA + 2, BI_OMEGA + 1, BI_OMEGA + 2};
        tq_field *fupd[6] = {pv, sv, t, r0, x, r};
        if (st == TQ_SUCCESS)
            st = tq_blas_submit(who, TQ_OP_BICGSTAB_UPDATE, ones, upd_slots, fupd, sc, BI_RR, beta_prog, 4);
        /* p = r + beta (p - omega v) */
        const signed char dir_slots[4] = {BI_BETA + 1, BI_BETA + 2, BI_OMEGA + 1, BI_OMEGA + 2};
        tq_field *fdir[3] = {r, v, pv};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_BICGSTAB_DIRECTION, ones, dir_slots, fdir, sc, 0, NULL, 0);
        if (st == TQ_SUCCESS) st = tq_scalars_read(sc, s);
        if (st != TQ_SUCCESS) break;
        /* flops per real: <r0, v> 4, s update 4, <t, s> and |t|^2 6, x and r updates with
         * |r|^2 and <r0, r> 14, p update 8 (complex multiply-adds count 4 per complex
         * component pair) */
        out->blas_flops += 36 * n;
        out->iterations = k;
        for (int i = 0; i < BI_T1; i++)
            if (!isfinite(s[i])) {
                st = tq_error(TQ_ERR_BREAKDOWN, "%s: NaN or Inf in the iteration's scalars at iteration %d", who, k);
                break;
            }
        if (st != TQ_SUCCESS) break;
        const double tt = s[BI_TT], rho_new = hypot(s[BI_RHO], s[BI_RHO + 1]), om = hypot(s[BI_OMEGA], s[BI_OMEGA + 1]);
        out->residual = sqrt(s[BI_RR] / b2);
        progress(p, "BiCGstab", k, out->residual);
        if (s[BI_RR] <= stop2) break;
        if (!(tt > 0.0) || om == 0.0) {
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: omega vanished at iteration %d (|t|^2 = %.3e, |omega| = %.3e)", who, k, tt, om);
            break;
        }
        if (rho_new <= 1e-30 * b2) {
            st = tq_error(TQ_ERR_BREAKDOWN, "%s: rho = <r0, r> vanished at iteration %d (|rho| = %.3e, |b|^2 = %.3e)",
                          who, k, rho_new, b2);
            break;
        }
    }
done:
    tq_scalars_destroy(sc);
    tq_field_destroy(r);
    tq_field_destroy(r0);
    tq_field_destroy(pv);
    tq_field_destroy(v);
    tq_field_destroy(sv);
    tq_field_destroy(t);
    return st;
}
