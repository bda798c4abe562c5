/* Solves on a multigrid level (issue 28): the coarse operator D_c as a linear operator of the
 * Krylov frame (src/solvers/krylov.c), so GCR, BiCGstab and MR run on coarse fields with the
 * same task graphs as on the fine level (the BLAS and reductions take coarse fields as they
 * are). The coarse solves of the cycle and the bottom level are these. May call: src/core,
 * src/blas, tasks/ and the solvers' frame. */
#include "solvers/mg_internal.h"
#include "solvers/solver_internal.h"

#include <string.h>

tq_status tq_mg_coarse_solve(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             tq_krylov_out *out)
{
    return tq_mg_level_solve(op, x, b, p, NULL, NULL, out);
}

tq_status tq_mg_level_solve(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                            tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r), void *ctx, tq_krylov_out *out)
{
    const char *who = "tq_mg_coarse_solve";
    if (!op || !x || !b || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (p->inverter != TQ_INV_GCR && p->inverter != TQ_INV_BICGSTAB && p->inverter != TQ_INV_MR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %s needs a Hermitian operator; D_c is not (GCR, BiCGstab or MR)", who,
                        tq_inverter_name(p->inverter));
    if (!(p->tol > 0 && p->tol < 1) || p->maxiter <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: tolerance %g (0 < tol < 1) or iteration limit %d (> 0)", who, p->tol,
                        p->maxiter);
    if (p->prec_sloppy && p->prec_sloppy != op->vec_prec)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: mixed precision on a coarse level is not built yet", who);
    const tq_field *f[2] = {x, b};
    for (int i = 0; i < 2; i++)
        if (f[i]->lat != op->lat || f[i]->p.kind != TQ_FIELD_COARSE || f[i]->p.ndof != op->n || f[i]->p.subset != TQ_FULL ||
            f[i]->p.prec != op->vec_prec)
            return tq_error(TQ_ERR_MISMATCH, "%s: x and b must be full coarse fields of the operator's lattice, %d complex per "
                            "site, in %s", who, op->n, tq_precision_name(op->vec_prec));
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    if (precond && p->inverter != TQ_INV_GCR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: a preconditioner needs GCR (flexible)", who);
    tq_linop L;
    memset(&L, 0, sizeof L);
    L.kind = TQ_LINOP_COARSE;
    L.coarse = op;
    /* 9 complex n x n matrix-vector products per site, 8 flops per complex multiply-add */
    L.flops = 9.0 * op->n * op->n * 8.0 * (double)op->lat->local_volume;
    tq_solver_params q = *p;
    q.prec_sloppy = 0;
    const int method = p->inverter == TQ_INV_BICGSTAB ? TQ_KRYLOV_BICGSTAB : p->inverter == TQ_INV_MR ? TQ_KRYLOV_MR
                                                                                                       : TQ_KRYLOV_GCR;
    tq_krylov *k = NULL;
    tq_status st = tq_krylov_start(&k, method, &L, &L, x, b, &q);
    if (st == TQ_SUCCESS && precond) tq_krylov_set_preconditioner(k, precond, ctx);
    while (st == TQ_SUCCESS && !tq_krylov_done(k)) {
        st = tq_krylov_submit(k);
        if (st == TQ_SUCCESS) tq_krylov_check(k);
    }
    if (k) {
        if (st == TQ_SUCCESS) st = tq_krylov_status(k);
        if (out) *out = *tq_krylov_result(k);
        tq_krylov_free(k);
    }
    return st;
}
