/* Solves on a multigrid level (issue 28): the coarse operator D_c as a linear operator of the
 * Krylov frame (src/solvers/krylov.c), so GCR, BiCGstab and MR run on coarse fields with the
 * same task graphs as on the fine level (the BLAS and reductions take coarse fields as they
 * are). The coarse solves of the cycle and the bottom level are these. May call: src/core,
 * src/blas, tasks/ and the solvers' frame. */
#include "solvers/mg_internal.h"
#include "solvers/solver_internal.h"
#include "core/placement.h"

#include <stdlib.h>
#include <string.h>

tq_status tq_mg_coarse_solve(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             tq_krylov_out *out)
{
    return tq_mg_level_solve(op, x, b, p, NULL, NULL, out);
}

void tq_mg_linop(const tq_mg_coarse_op *op, const tq_dirac *d, tq_linop *L)
{
    memset(L, 0, sizeof *L);
    if (d) {
        L->kind = TQ_LINOP_MAT;
        L->d = d;
        L->flops = tq_linop_flops(d, TQ_LINOP_MAT);
        return;
    }
    L->kind = TQ_LINOP_COARSE;
    L->coarse = op;
    /* 9 complex n x n matrix-vector products per site, 8 flops per complex multiply-add */
    L->flops = 9.0 * op->n * op->n * 8.0 * (double)op->lat->local_volume;
}

/* The checks every level's solve shares: the inverter, tolerance, limit, x != b. */
static tq_status solve_checks(const char *who, const tq_field *x, const tq_field *b, const tq_solver_params *p, int precond,
                              int *method)
{
    if (!x || !b || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (p->inverter != TQ_INV_GCR && p->inverter != TQ_INV_BICGSTAB && p->inverter != TQ_INV_MR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %s needs a Hermitian operator; a multigrid level's is not (GCR, BiCGstab "
                        "or MR)", who, tq_inverter_name(p->inverter));
    if (!(p->tol > 0 && p->tol < 1) || p->maxiter <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: tolerance %g (0 < tol < 1) or iteration limit %d (> 0)", who, p->tol,
                        p->maxiter);
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    if (precond && p->inverter != TQ_INV_GCR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: a preconditioner needs GCR (flexible)", who);
    *method = p->inverter == TQ_INV_BICGSTAB ? TQ_KRYLOV_BICGSTAB : p->inverter == TQ_INV_MR ? TQ_KRYLOV_MR : TQ_KRYLOV_GCR;
    return TQ_SUCCESS;
}

/* Checks a solve on op's level and makes its linear operator and Krylov method. */
static tq_status level_setup(const char *who, const tq_mg_coarse_op *op, tq_field *x, const tq_field *b,
                             const tq_solver_params *p, int precond, tq_linop *L, int *method)
{
    if (!op) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    TQ_CHECK(solve_checks(who, x, b, p, precond, method));
    if (p->prec_sloppy && p->prec_sloppy != op->vec_prec)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: mixed precision on a coarse level is not built yet", who);
    const tq_field *f[2] = {x, b};
    for (int i = 0; i < 2; i++)
        if (f[i]->lat != op->lat || f[i]->p.kind != TQ_FIELD_COARSE || f[i]->p.ndof != op->n || f[i]->p.subset != TQ_FULL ||
            f[i]->p.prec != op->vec_prec)
            return tq_error(TQ_ERR_MISMATCH, "%s: x and b must be full coarse fields of the operator's lattice, %d complex per "
                            "site, in %s", who, op->n, tq_precision_name(op->vec_prec));
    tq_mg_linop(op, NULL, L);
    return TQ_SUCCESS;
}

/* The same for the fine level as the Wilson-clover operator itself: M of d on full spinor
 * fields in the operator's precision. */
static tq_status fine_setup(const char *who, const tq_dirac *d, tq_field *x, const tq_field *b, const tq_solver_params *p,
                            int precond, tq_linop *L, int *method)
{
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    TQ_CHECK(solve_checks(who, x, b, p, precond, method));
    const tq_field *g = tq_internal_dirac_gauge(d);
    const tq_field *f[2] = {x, b};
    for (int i = 0; i < 2; i++)
        if (f[i]->lat != g->lat || f[i]->p.kind != TQ_FIELD_SPINOR || f[i]->p.subset != TQ_FULL || f[i]->p.prec != g->p.prec)
            return tq_error(TQ_ERR_MISMATCH, "%s: x and b must be full spinor fields of the operator's lattice in %s", who,
                            tq_precision_name(g->p.prec));
    tq_mg_linop(NULL, d, L);
    return TQ_SUCCESS;
}

tq_status tq_mg_level_solve(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                            tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r), void *ctx, tq_krylov_out *out)
{
    tq_linop L;
    int method = 0;
    TQ_CHECK(level_setup("tq_mg_coarse_solve", op, x, b, p, precond != NULL, &L, &method));
    return tq_krylov_solve(&L, method, x, b, p, precond, ctx, out);
}

tq_status tq_mg_level_solve_eo(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                               tq_krylov_out *out)
{
    const char *who = "tq_mg_level_solve_eo";
    tq_linop L;
    int method = 0;
    TQ_CHECK(level_setup(who, op, x, b, p, 0, &L, &method));
    if (!op->hat) return tq_error(TQ_ERR_INVALID_ARG, "%s: the operator's even-odd form is not made", who);
    tq_field *xe = NULL, *bh = NULL, *yo = NULL, *w = NULL, *tmp = NULL;
    const tq_field_params ep = {TQ_FIELD_COARSE, op->vec_prec, TQ_EVEN, (tq_recon)0, op->n};
    const tq_field_params odd = {TQ_FIELD_COARSE, op->vec_prec, TQ_ODD, (tq_recon)0, op->n};
    tq_status st = tq_field_parity_view(x, 0, &xe);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &ep, &bh);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &odd, &yo);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &ep, &w);
    if (st == TQ_SUCCESS) st = tq_field_create(op->lat, &odd, &tmp);
    if (st == TQ_SUCCESS) st = tq_mg_coarse_eo_prepare(op, bh, yo, w, b);
    /* S x_e = b^_e, S = 1 - Yhat_eo Yhat_oe (its odd work field: tmp), x_e written in place */
    tq_linop S;
    memset(&S, 0, sizeof S);
    S.kind = TQ_LINOP_COARSE_PC;
    S.coarse = op;
    S.tmp = tmp;
    S.flops = tq_mg_coarse_pc_flops(op);
    if (st == TQ_SUCCESS) st = tq_krylov_solve(&S, method, xe, bh, p, NULL, NULL, out);
    const tq_status solve_st = st;
    if (out) out->flops += tq_mg_coarse_eo_edge_flops(op);
    if (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED) {
        st = tq_mg_coarse_eo_reconstruct(op, x, NULL, yo);
        if (st == TQ_SUCCESS) st = solve_st;
    }
    tq_field_destroy(tmp);
    tq_field_destroy(w);
    tq_field_destroy(yo);
    tq_field_destroy(bh);
    tq_field_view_release(xe);
    return st;
}

tq_status tq_mg_fine_solve(const tq_dirac *d, const tq_dirac *ds, tq_field *x, const tq_field *b,
                           const tq_solver_params *p, tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r),
                           void *ctx, tq_krylov_out *out)
{
    tq_linop L;
    int method = 0;
    TQ_CHECK(fine_setup("tq_mg_fine_solve", d, x, b, p, precond != NULL, &L, &method));
    if (!ds || ds == d) return tq_krylov_solve(&L, method, x, b, p, precond, ctx, out);
    /* mixed precision: the iterations (and precond's fields) on ds, reliable updates on d */
    tq_solver_params q = *p;
    q.prec_sloppy = tq_internal_dirac_gauge(ds)->p.prec;
    tq_linop Ls;
    tq_mg_linop(NULL, ds, &Ls);
    return tq_krylov_solve_mixed(&L, &Ls, method, x, b, &q, precond, ctx, out);
}

/* n solves side by side on op's level (op) or the fine level (d), in groups that fit the
 * GPUs' memory (sized for GCR, 2 nkrylov + 5 fields beside x and b; BiCGstab holds fewer). */
static tq_status solve_many(const char *who, const tq_mg_coarse_op *op, const tq_dirac *d, int n, tq_field *const *x,
                            const tq_field *const *b, const tq_solver_params *p, tq_status *status, tq_krylov_out *out)
{
    if (n <= 0 || !x || !b || !status || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument or n <= 0", who);
    tq_linop *L = calloc((size_t)n, sizeof *L);
    tq_krylov **k = calloc((size_t)n, sizeof *k);
    tq_status first = L && k ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    tq_solver_params q = *p;
    q.prec_sloppy = 0;
    const int nkrylov = p->gcr_nkrylov > 0 ? p->gcr_nkrylov : 8;
    const int group = tq_internal_systems_fitting(b[0]->lat, (2.0 * nkrylov + 7) * (double)tq_field_bytes(b[0]), 0);
    for (int i = 0; i < n; i++) memset(&out[i], 0, sizeof out[i]);
    for (int i0 = 0; i0 < n; i0 += group) {
        const int i1 = n - i0 > group ? i0 + group : n;
        for (int i = i0; i < i1 && first == TQ_SUCCESS; i++) {
            int method = 0;
            first = op ? level_setup(who, op, x[i], b[i], p, 0, &L[i], &method) : fine_setup(who, d, x[i], b[i], p, 0, &L[i], &method);
            for (int j = 0; j < i && first == TQ_SUCCESS; j++)
                if (x[j] == x[i]) first = tq_error(TQ_ERR_INVALID_ARG, "%s: solves %d and %d share their solution field", who, j, i);
            if (first == TQ_SUCCESS) first = tq_krylov_start(&k[i], method, &L[i], &L[i], x[i], b[i], &q);
        }
        if (first == TQ_SUCCESS) first = tq_krylov_run_together(k + i0, i1 - i0, NULL, NULL);
        for (int i = i0; i < i1; i++) {
            status[i] = k && k[i] ? tq_krylov_status(k[i]) : first != TQ_SUCCESS ? first : TQ_ERR_RUNTIME;
            if (k && k[i]) {
                out[i] = *tq_krylov_result(k[i]);
                out[i].flops = L[i].flops * (double)L[i].applications + out[i].blas_flops;
                tq_krylov_free(k[i]);
                k[i] = NULL;
            }
        }
    }
    free(k);
    free(L);
    return first;
}

tq_status tq_mg_level_solve_many(const tq_mg_coarse_op *op, int n, tq_field *const *x, const tq_field *const *b,
                                 const tq_solver_params *p, tq_status *status, tq_krylov_out *out)
{
    if (!op) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_level_solve_many: NULL operator");
    return solve_many("tq_mg_level_solve_many", op, NULL, n, x, b, p, status, out);
}

/* The fine level's n solves with a sloppy precision: tq_solve_many's mixed-precision
 * iterations (reliable updates), in groups that fit the GPUs' memory (sized as solve_many's).
 * A solve that stops at p->maxiter is TQ_ERR_NOT_CONVERGED in its status, not an error. */
static tq_status mixed_solve_many(const char *who, const tq_dirac *d, int n, tq_field *const *x, const tq_field *const *b,
                                  const tq_solver_params *p, tq_status *status, tq_krylov_out *out)
{
    if (n <= 0 || !x || !b || !status || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument or n <= 0", who);
    tq_solver_result *res = calloc((size_t)n, sizeof *res);
    if (!res) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    const int group = tq_internal_systems_fitting(b[0]->lat, 23.0 * (double)tq_field_bytes(b[0]), 0);
    tq_status first = TQ_SUCCESS;
    for (int i0 = 0; i0 < n && first == TQ_SUCCESS; i0 += group) {
        const int m = n - i0 > group ? group : n - i0;
        const tq_status st = tq_solve_many(d, m, x + i0, b + i0, p, res + i0);
        if (st != TQ_SUCCESS && st != TQ_ERR_NOT_CONVERGED) first = st;
    }
    for (int i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].iterations = res[i].iterations;
        out[i].flops = res[i].flops;
        status[i] = first != TQ_SUCCESS ? first : res[i].residual <= p->tol ? TQ_SUCCESS : TQ_ERR_NOT_CONVERGED;
    }
    free(res);
    return first;
}

tq_status tq_mg_fine_solve_many(const tq_dirac *d, int n, tq_field *const *x, const tq_field *const *b,
                                const tq_solver_params *p, tq_status *status, tq_krylov_out *out)
{
    if (!d || !p) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_fine_solve_many: NULL operator or parameters");
    if (p->prec_sloppy && p->prec_sloppy != tq_internal_dirac_gauge(d)->p.prec)
        return mixed_solve_many("tq_mg_fine_solve_many", d, n, x, b, p, status, out);
    return solve_many("tq_mg_fine_solve_many", NULL, d, n, x, b, p, status, out);
}
