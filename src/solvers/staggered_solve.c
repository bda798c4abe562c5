/* Improved staggered solves (issue 36, first piece): M x = b with MILC's M = 2m + D, by CG
 * on the even-odd system
 *     (4m^2 - D_eo D_oe) x_e = 2m b_e - D_eo b_o,   then   x_o = (b_o - D_oe x_e) / 2m,
 * the operator -D_eo D_oe (= D^dag D on the even sites, D being anti-Hermitian) with the
 * mass as its shift 4m^2; several masses at once by multi-shift CG on that operator. Mixed
 * precision: CG with reliable updates on a sloppy copy of the links; multi-shift CG in the
 * sloppy precision, then each mass refined (paper 002). The public API (tq_staggered_*)
 * at the end. */
#include "solvers/staggered_solve.h"
#include "solvers/solver_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The even-odd operator -D_eo D_oe + 4 m^2 on the even sites (tmp: an odd field). */
static tq_linop even_odd_operator(const tq_ks_op *op, double mass, tq_field *tmp)
{
    tq_linop L;
    memset(&L, 0, sizeof L);
    L.kind = TQ_LINOP_KS_PC;
    L.ks = op;
    L.parity = TQ_EVEN;
    L.tmp = tmp;
    L.shift = 4.0 * mass * mass;
    /* QUDA's count: 1146 flops per site and hopping term (issue 36), two of them on half the
     * sites, and the shift's x + a y */
    L.flops = (2.0 * 1146.0 + 12.0) * (double)op->lat->local_volume / 2.0;
    return L;
}

/* The checks both solves share: the inverter, tolerance and limit. */
static tq_status check_params(const char *who, const tq_solver_params *p)
{
    if (p->inverter != TQ_INV_CG)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %s: the staggered even-odd system is solved by CG so far", who,
                        tq_inverter_name(p->inverter));
    if (!(p->tol > 0 && p->tol < 1) || p->maxiter <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: tolerance %g (0 < tol < 1) or iteration limit %d (> 0)", who, p->tol,
                        p->maxiter);
    return TQ_SUCCESS;
}

/* Whether p asks for sloppy iterations (a sloppy precision other than the operator's). */
static int mixed(const tq_ks_op *op, const tq_solver_params *p)
{
    return p->prec_sloppy != 0 && p->prec_sloppy != op->prec;
}

/* L x = b (L: an even-odd operator) by CG on sop (the same links in p's sloppy precision)
 * with reliable updates on L. */
static tq_status solve_on_sloppy(const tq_ks_op *sop, tq_linop *L, tq_field *x, const tq_field *b,
                                 const tq_solver_params *p, tq_krylov_out *out)
{
    tq_field *tmp = NULL;
    const tq_field_params odd = {TQ_FIELD_STAGGERED, sop->prec, TQ_ODD, (tq_recon)0, 0};
    tq_status st = tq_field_create(sop->lat, &odd, &tmp);
    if (st == TQ_SUCCESS) {
        tq_linop Ls = *L;
        Ls.ks = sop;
        Ls.tmp = tmp;
        Ls.applications = 0;
        st = tq_krylov_solve_mixed(L, &Ls, TQ_KRYLOV_CG, x, b, p, NULL, NULL, out);
    }
    tq_field_destroy(tmp);
    return st;
}

/* The same with a sloppy copy of op's links made for it. */
static tq_status solve_mixed(const tq_ks_op *op, tq_linop *L, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             tq_krylov_out *out)
{
    tq_ks_op *sop = NULL;
    tq_status st = tq_ks_op_copy(op, p->prec_sloppy, &sop);
    if (st == TQ_SUCCESS) st = solve_on_sloppy(sop, L, x, b, p, out);
    tq_ks_op_destroy(sop);
    return st;
}

tq_status tq_ks_solve(const tq_ks_op *op, double mass, tq_field *x, const tq_field *b, const tq_solver_params *p,
                      tq_krylov_out *out)
{
    const char *who = "tq_ks_solve";
    if (!op || !x || !b || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (!(mass > 0) || !isfinite(mass))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: mass %g: the even-odd system needs m > 0", who, mass);
    TQ_CHECK(check_params(who, p));
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
        tq_linop L = even_odd_operator(op, mass, tmp);
        st = mixed(op, p) ? solve_mixed(op, &L, xe, rhs, p, out) : tq_krylov_solve(&L, TQ_KRYLOV_CG, xe, rhs, p, NULL, NULL, out);
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

/* The multi-shift solve's reach in a sloppy precision: paper 002's multi-shift runs in low
 * precision to about what that precision resolves, each mass then refined on its own. */
static double sloppy_reach(tq_precision prec) { return prec == TQ_HALF ? 5e-3 : prec == TQ_SINGLE ? 1e-5 : 0.0; }

/* The mixed-precision multi-shift solve (paper 002): multi-shift CG on a sloppy copy of the
 * operator to max(tol, sloppy_reach), then for each mass r = b - A_i x_i in op's precision
 * and A_i e = r by mixed CG with reliable updates to what is left of tol, x_i += e. out[i]:
 * the iterations of both stages. */
static tq_status multishift_mixed(const tq_ks_op *op, int n, const double *masses, tq_field *const *x, const tq_field *b,
                                  const tq_solver_params *p, tq_krylov_out *out)
{
    const tq_precision sp = p->prec_sloppy;
    const tq_field_params even_s = {TQ_FIELD_STAGGERED, sp, TQ_EVEN, (tq_recon)0, 0};
    const tq_field_params even = {TQ_FIELD_STAGGERED, op->prec, TQ_EVEN, (tq_recon)0, 0};
    const tq_field_params odd = {TQ_FIELD_STAGGERED, op->prec, TQ_ODD, (tq_recon)0, 0};
    tq_ks_op *sop = NULL;
    tq_field *bs = NULL, *r = NULL, *e = NULL, *tmp = NULL;
    tq_field **xs = calloc((size_t)n, sizeof *xs);
    tq_status st = xs ? tq_ks_op_copy(op, sp, &sop) : tq_error(TQ_ERR_NOMEM, "tq_ks_solve_multishift: out of memory");
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &even_s, &bs);
    if (st == TQ_SUCCESS) st = tq_blas_copy(bs, b);
    for (int i = 0; i < n && st == TQ_SUCCESS; i++) st = tq_field_create(op->lat, &even_s, &xs[i]);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &even, &r);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &even, &e);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &odd, &tmp);
    tq_solver_params q = *p;
    q.prec_sloppy = (tq_precision)0;
    q.tol = fmax(p->tol, sloppy_reach(sp));
    if (st == TQ_SUCCESS) {
        st = tq_ks_solve_multishift(sop, n, masses, xs, bs, &q, out);
        if (st == TQ_ERR_NOT_CONVERGED) st = TQ_SUCCESS;   /* the refinement goes on from there */
    }
    double b2 = 0;
    if (st == TQ_SUCCESS) st = tq_blas_norm2(b, &b2);
    tq_status worst = TQ_SUCCESS;
    for (int i = 0; i < n && st == TQ_SUCCESS; i++) {
        tq_linop L = even_odd_operator(op, masses[i], tmp);
        double r2 = 0;
        st = tq_blas_copy(x[i], xs[i]);
        if (st == TQ_SUCCESS) st = tq_linop_apply(&L, r, x[i]);
        if (st == TQ_SUCCESS) st = tq_blas_xpay(b, -1.0, r);
        if (st == TQ_SUCCESS) st = tq_blas_norm2(r, &r2);
        const double left = b2 > 0 ? sqrt(r2 / b2) : 0.0;
        out[i].residual = left;
        if (st != TQ_SUCCESS || !(left > p->tol)) continue;
        tq_solver_params q2 = *p;
        q2.tol = fmin(0.5, p->tol / left);
        tq_krylov_out o2;
        memset(&o2, 0, sizeof o2);
        const tq_status s2 = solve_on_sloppy(sop, &L, e, r, &q2, &o2);
        if (s2 != TQ_SUCCESS && s2 != TQ_ERR_NOT_CONVERGED) {
            st = s2;
            break;
        }
        if (s2 == TQ_ERR_NOT_CONVERGED) worst = s2;
        st = tq_blas_axpy(1.0, e, x[i]);
        out[i].iterations += o2.iterations;
        out[i].reliable_updates += o2.reliable_updates;
        out[i].blas_flops += o2.blas_flops;
        out[i].flops += o2.flops;
        out[i].residual = o2.residual * left;
    }
    for (int i = 0; xs && i < n; i++) tq_field_destroy(xs[i]);
    free(xs);
    tq_field_destroy(bs);
    tq_field_destroy(r);
    tq_field_destroy(e);
    tq_field_destroy(tmp);
    tq_ks_op_destroy(sop);
    if (st == TQ_SUCCESS && worst != TQ_SUCCESS)
        return tq_error(worst, "tq_ks_solve_multishift: a mass's refinement did not reach tolerance %g", p->tol);
    return st;
}

tq_status tq_ks_solve_multishift(const tq_ks_op *op, int n, const double *masses, tq_field *const *x, const tq_field *b,
                                 const tq_solver_params *p, tq_krylov_out *out)
{
    const char *who = "tq_ks_solve_multishift";
    if (!op || !masses || !x || !b || !p || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (n <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: %d masses: give at least one", who, n);
    TQ_CHECK(check_params(who, p));
    int base = 0;
    for (int i = 0; i < n; i++) {
        if (!(masses[i] > 0) || !isfinite(masses[i]))
            return tq_error(TQ_ERR_INVALID_ARG, "%s: mass %d is %g: the even-odd system needs m > 0", who, i, masses[i]);
        if (masses[i] < masses[base]) base = i;
    }
    for (int i = 0; i <= n; i++) {
        const tq_field *f = i < n ? x[i] : b;
        if (!f || f->lat != op->lat || f->p.kind != TQ_FIELD_STAGGERED || f->p.subset != TQ_EVEN || f->p.prec != op->prec)
            return tq_error(TQ_ERR_MISMATCH, "%s: %s must be an even-site staggered field of the operator's lattice in %s",
                            who, i < n ? "every x" : "b", tq_precision_name(op->prec));
        if (i < n && f == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x[%d] and b are the same field", who, i);
    }
    if (mixed(op, p)) return multishift_mixed(op, n, masses, x, b, p, out);
    /* the base system (the smallest mass) first, the others shifted from it */
    tq_field **xs = malloc(sizeof *xs * (size_t)n);
    double *delta = malloc(sizeof *delta * (size_t)n);
    tq_krylov_out *o = malloc(sizeof *o * (size_t)n);
    tq_field *tmp = NULL;
    const tq_field_params odd = {TQ_FIELD_STAGGERED, op->prec, TQ_ODD, (tq_recon)0, 0};
    tq_status st = xs && delta && o ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &odd, &tmp);
    if (st == TQ_SUCCESS) {
        for (int i = 0, j = 1; i < n; i++) {
            const int k = i == base ? 0 : j++;
            xs[k] = x[i];
            delta[k] = 4.0 * (masses[i] * masses[i] - masses[base] * masses[base]);
        }
        tq_linop L = even_odd_operator(op, masses[base], tmp);
        st = tq_krylov_multishift(&L, n, delta, xs, b, p, o);
        for (int i = 0, j = 1; i < n; i++) {
            out[i] = o[i == base ? 0 : j++];
            /* one Krylov space: its operator's flops are the base system's */
            out[i].flops = out[i].blas_flops + (i == base ? L.flops * (double)out[i].iterations : 0.0);
        }
    }
    tq_field_destroy(tmp);
    free(xs);
    free(delta);
    free(o);
    return st;
}

/* ---- the public API (include/taskqcd.h) -------------------------------------------------- */

/* |b - M x| / |b| with M = 2m + D on full fields. */
static tq_status true_residual(const tq_ks_op *op, double mass, const tq_field *x, const tq_field *b, double *res)
{
    const tq_field_params full = {TQ_FIELD_STAGGERED, op->prec, TQ_FULL, (tq_recon)0, 0};
    tq_field *w = NULL;
    TQ_CHECK(tq_field_create(op->lat, &full, &w));
    double r2 = 0, b2 = 0;
    tq_status st = tq_ks_dslash(op, w, x);
    if (st == TQ_SUCCESS) st = tq_blas_axpy(2.0 * mass, x, w);
    if (st == TQ_SUCCESS) st = tq_blas_xpay(b, -1.0, w);
    if (st == TQ_SUCCESS) st = tq_blas_norm2(w, &r2);
    if (st == TQ_SUCCESS) st = tq_blas_norm2(b, &b2);
    tq_field_destroy(w);
    *res = b2 > 0 ? sqrt(r2 / b2) : sqrt(r2);
    return st;
}

/* A solve's result from its iterations: flops as QUDA counts them, the CG iterations' even-odd
 * operator each (even_odd_operator's count) and the two hopping terms of the source's
 * preparation and the solution's reconstruction (extra: 1 with them, 0 without). */
static void fill_result(const tq_ks_op *op, const tq_krylov_out *o, double seconds, int extra, tq_solver_result *r)
{
    const double vol = (double)op->lat->local_volume;
    r->iterations = o->iterations;
    r->residual = o->residual;
    r->seconds = r->iter_seconds = seconds;
    r->iter_flops = (double)o->iterations * (2.0 * 1146.0 + 12.0) * vol / 2.0 + o->blas_flops;
    r->flops = r->iter_flops + (double)extra * 1146.0 * vol;
}

tq_status tq_staggered_solve(const tq_staggered *op, double mass, tq_field *x, const tq_field *b,
                             const tq_solver_params *p, tq_solver_result *result)
{
    if (!result) return tq_error(TQ_ERR_INVALID_ARG, "tq_staggered_solve: NULL result");
    memset(result, 0, sizeof *result);
    tq_krylov_out o;
    memset(&o, 0, sizeof o);
    const double t0 = tq_internal_now();
    const tq_status st = tq_ks_solve(op, mass, x, b, p, &o);
    if (st != TQ_SUCCESS && st != TQ_ERR_NOT_CONVERGED) return st;
    fill_result(op, &o, tq_internal_now() - t0, 1, result);
    const tq_status s2 = true_residual(op, mass, x, b, &result->true_residual);
    return s2 != TQ_SUCCESS ? s2 : st;
}

tq_status tq_staggered_solve_multishift(const tq_staggered *op, int n, const double *masses, tq_field *const *x,
                                        const tq_field *b, const tq_solver_params *p, tq_solver_result *results)
{
    const char *who = "tq_staggered_solve_multishift";
    if (!op || !masses || !x || !b || !p || !results) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (n <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: %d masses: give at least one", who, n);
    for (int i = 0; i <= n; i++) {
        const tq_field *f = i < n ? x[i] : b;
        if (!f || f->lat != op->lat || f->p.kind != TQ_FIELD_STAGGERED || f->nparity != 2 || f->p.prec != op->prec)
            return tq_error(TQ_ERR_MISMATCH, "%s: %s must be a full staggered field of the operator's lattice in %s", who,
                            i < n ? "every x" : "b", tq_precision_name(op->prec));
        for (int j = 0; j < i; j++)
            if (f == x[j]) return tq_error(TQ_ERR_INVALID_ARG, "%s: x[%d] is also %s", who, j, i < n ? "another x" : "b");
    }
    for (int i = 0; i < n; i++) memset(&results[i], 0, sizeof results[i]);
    tq_field *be = NULL, *bo = NULL;
    tq_field **xe = calloc((size_t)n, sizeof *xe), **xo = calloc((size_t)n, sizeof *xo);
    tq_krylov_out *o = calloc((size_t)n, sizeof *o);
    tq_status st = xe && xo && o ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(b, 0, &be);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(b, 1, &bo);
    double bo2 = 0;
    if (st == TQ_SUCCESS) st = tq_blas_norm2(bo, &bo2);
    if (st == TQ_SUCCESS && bo2 > 0)
        st = tq_error(TQ_ERR_INVALID_ARG, "%s: b is nonzero on odd sites: the multi-mass solve takes a source on even sites "
                      "(solve each mass with tq_staggered_solve)", who);
    for (int i = 0; i < n && st == TQ_SUCCESS; i++) {
        st = tq_field_parity_view(x[i], 0, &xe[i]);
        if (st == TQ_SUCCESS) st = tq_field_parity_view(x[i], 1, &xo[i]);
    }
    const double t0 = tq_internal_now();
    tq_status solved = st == TQ_SUCCESS ? tq_ks_solve_multishift(op, n, masses, xe, be, p, o) : st;
    /* (4 m_i^2 - D_eo D_oe) y_i = b_e in x_e: then x_e = 2 m_i y_i, x_o = -D_oe y_i */
    st = solved == TQ_SUCCESS || solved == TQ_ERR_NOT_CONVERGED ? TQ_SUCCESS : solved;
    for (int i = 0; i < n && st == TQ_SUCCESS; i++) {
        st = tq_ks_hop(op, xo[i], xe[i]);
        if (st == TQ_SUCCESS) st = tq_blas_scale(-1.0, xo[i]);
        if (st == TQ_SUCCESS) st = tq_blas_scale(2.0 * masses[i], xe[i]);
    }
    const double seconds = tq_internal_now() - t0;
    for (int i = 0; i < n && st == TQ_SUCCESS; i++) {
        fill_result(op, &o[i], seconds, 0, &results[i]);
        results[i].flops = results[i].iter_flops = o[i].flops;   /* tq_ks_solve_multishift's count */
        st = true_residual(op, masses[i], x[i], b, &results[i].true_residual);
    }
    for (int i = 0; i < n; i++) {
        if (xe) tq_field_view_release(xe[i]);
        if (xo) tq_field_view_release(xo[i]);
    }
    tq_field_view_release(be);
    tq_field_view_release(bo);
    free(xe);
    free(xo);
    free(o);
    return st != TQ_SUCCESS ? st : solved;
}
