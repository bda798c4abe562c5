/* Improved staggered solves (issue 36, first piece): M x = b with MILC's M = 2m + D, by CG
 * on the even-odd system
 *     (4m^2 - D_eo D_oe) x_e = 2m b_e - D_eo b_o,   then   x_o = (b_o - D_oe x_e) / 2m,
 * the operator -D_eo D_oe (= D^dag D on the even sites, D being anti-Hermitian) with the
 * mass as its shift 4m^2, which is what multi-shift CG will take for many masses. */
#include "solvers/staggered_solve.h"
#include "solvers/solver_internal.h"

#include <math.h>
#include <string.h>

tq_status tq_ks_solve(const tq_ks_op *op, double mass, tq_field *x, const tq_field *b, const tq_solver_params *p,
                      tq_krylov_out *out)
{
    const char *who = "tq_ks_solve";
    if (!op || !x || !b || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (!(mass > 0) || !isfinite(mass))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: mass %g: the even-odd system needs m > 0", who, mass);
    if (p->inverter != TQ_INV_CG)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %s: the staggered even-odd system is solved by CG so far", who,
                        tq_inverter_name(p->inverter));
    if (!(p->tol > 0 && p->tol < 1) || p->maxiter <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: tolerance %g (0 < tol < 1) or iteration limit %d (> 0)", who, p->tol,
                        p->maxiter);
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    TQ_CHECK(tq_field_check_compatible(who, x, b, 1));
    for (int i = 0; i < 2; i++) {
        const tq_field *f = i ? b : x;
        if (f->lat != op->lat || f->p.kind != TQ_FIELD_STAGGERED || f->nparity != 2 || f->p.prec != op->prec)
            return tq_error(TQ_ERR_MISMATCH, "%s: %s must be a full staggered field of the operator's lattice in %s", who,
                            i ? "b" : "x", tq_precision_name(op->prec));
    }
    const tq_field_params even = {TQ_FIELD_STAGGERED, op->prec, TQ_EVEN, (tq_recon)0, 0};
    const tq_field_params odd = {TQ_FIELD_STAGGERED, op->prec, TQ_ODD, (tq_recon)0, 0};
    tq_field *xe = NULL, *xo = NULL, *be = NULL, *bo = NULL, *rhs = NULL, *tmp = NULL;
    tq_status st = tq_field_parity_view(x, 0, &xe);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(x, 1, &xo);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(b, 0, &be);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(b, 1, &bo);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &even, &rhs);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &odd, &tmp);
    /* rhs = 2m b_e - D_eo b_o */
    if (st == TQ_SUCCESS) st = tq_ks_hop(op, rhs, bo);
    if (st == TQ_SUCCESS) st = tq_blas_axpby(2.0 * mass, be, -1.0, rhs);
    if (st == TQ_SUCCESS) {
        tq_linop L;
        memset(&L, 0, sizeof L);
        L.kind = TQ_LINOP_KS_PC;
        L.ks = op;
        L.parity = TQ_EVEN;
        L.tmp = tmp;
        L.shift = 4.0 * mass * mass;
        /* QUDA's count: 1146 flops per site and hopping term (issue 36), two of them on half
         * the sites, and the shift's x + a y */
        L.flops = (2.0 * 1146.0 + 12.0) * (double)op->lat->local_volume / 2.0;
        st = tq_krylov_solve(&L, TQ_KRYLOV_CG, xe, rhs, p, NULL, NULL, out);
    }
    /* x_o = (b_o - D_oe x_e) / 2m, also when CG stopped short (the caller reads the status) */
    if (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED) {
        tq_status s2 = tq_ks_hop(op, xo, xe);
        if (s2 == TQ_SUCCESS) s2 = tq_blas_axpby(0.5 / mass, bo, -0.5 / mass, xo);
        if (s2 != TQ_SUCCESS) st = s2;
    }
    tq_field_destroy(rhs);
    tq_field_destroy(tmp);
    tq_field_view_release(xe);
    tq_field_view_release(xo);
    tq_field_view_release(be);
    tq_field_view_release(bo);
    return st;
}
