/* The multigrid cycle (issue 28), two levels so far: MR smoothing on the fine level, the
 * coarse correction through the transfer and a coarse solve, MR smoothing again; used as
 * flexible GCR's preconditioner (tq_mg_level_solve). Each step is tasks (the operators'
 * stencils, the transfer, the BLAS); the coarse solve and the smoothers wait for their
 * scalars on the host, as every Krylov solve does. May call: src/core, src/blas, tasks/ and
 * the solvers' frame. */
#include "solvers/mg_internal.h"
#include "solvers/solver_internal.h"

#include <stdlib.h>
#include <string.h>

tq_status tq_mg_two_level_create(const tq_mg_coarse_op *fine, const tq_mg_transfer *t, const tq_mg_coarse_op *coarse,
                                 int pre, int post, const tq_solver_params *coarse_p, tq_mg_two_level **out)
{
    const char *who = "tq_mg_two_level_create";
    if (!fine || !t || !coarse || !coarse_p || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    if (fine->lat != t->fine || coarse->lat != t->coarse || fine->n != t->fine_ndof || coarse->n != 2 * t->nvec)
        return tq_error(TQ_ERR_MISMATCH, "%s: the operators are not those of the transfer's two lattices", who);
    if (pre < 0 || post < 0 || pre + post == 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d pre- and %d post-smoothing steps (>= 0, not both 0)", who, pre, post);
    tq_mg_two_level *m = calloc(1, sizeof *m);
    if (!m) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    m->fine = fine;
    m->coarse = coarse;
    m->t = t;
    m->pre = pre;
    m->post = post;
    m->coarse_p = *coarse_p;
    const tq_field_params fp = {TQ_FIELD_COARSE, fine->vec_prec, TQ_FULL, (tq_recon)0, fine->n};
    const tq_field_params cp = tq_mg_coarse_params(t, coarse->vec_prec);
    tq_status s = tq_field_create(fine->lat, &fp, &m->rr);
    if (s == TQ_SUCCESS) s = tq_field_create(fine->lat, &fp, &m->az);
    if (s == TQ_SUCCESS) s = tq_field_create(fine->lat, &fp, &m->e);
    if (s == TQ_SUCCESS) s = tq_field_create(coarse->lat, &cp, &m->rc);
    if (s == TQ_SUCCESS) s = tq_field_create(coarse->lat, &cp, &m->ec);
    if (s != TQ_SUCCESS) {
        tq_mg_two_level_destroy(m);
        return s;
    }
    *out = m;
    return TQ_SUCCESS;
}

void tq_mg_two_level_destroy(tq_mg_two_level *m)
{
    if (!m) return;
    tq_field_destroy(m->rr);
    tq_field_destroy(m->az);
    tq_field_destroy(m->e);
    tq_field_destroy(m->rc);
    tq_field_destroy(m->ec);
    free(m);
}

/* x = `steps` MR iterations on F x = b from x = 0 (a smoother: its iteration limit is the
 * point, so reaching it is no failure). */
static tq_status smooth(const tq_mg_coarse_op *f, int steps, tq_field *x, const tq_field *b)
{
    tq_solver_params p;
    tq_solver_params_default(&p);
    p.inverter = TQ_INV_MR;
    p.tol = 1e-14;
    p.maxiter = steps;
    const tq_status s = tq_mg_coarse_solve(f, x, b, &p, NULL);
    return s == TQ_ERR_NOT_CONVERGED ? TQ_SUCCESS : s;
}

/* rr = r - F z */
static tq_status residual(tq_mg_two_level *m, const tq_field *z, const tq_field *r)
{
    TQ_CHECK(tq_mg_coarse_apply(m->fine, m->az, z));
    TQ_CHECK(tq_blas_copy(m->rr, r));
    return tq_blas_axpy(-1.0, m->az, m->rr);
}

tq_status tq_mg_two_level_apply(void *ctx, tq_field *z, const tq_field *r)
{
    tq_mg_two_level *m = ctx;
    if (m->pre > 0) {
        TQ_CHECK(smooth(m->fine, m->pre, z, r));
        TQ_CHECK(residual(m, z, r));
    } else {
        TQ_CHECK(tq_blas_zero(z));
        TQ_CHECK(tq_blas_copy(m->rr, r));
    }
    TQ_CHECK(tq_mg_restrict(m->t, m->rr, m->rc));
    tq_krylov_out out;
    memset(&out, 0, sizeof out);
    const tq_status s = tq_mg_coarse_solve(m->coarse, m->ec, m->rc, &m->coarse_p, &out);
    if (s != TQ_SUCCESS && s != TQ_ERR_NOT_CONVERGED) return s;   /* a loose coarse solve is enough */
    m->coarse_iterations += out.iterations;
    TQ_CHECK(tq_mg_prolong(m->t, m->ec, m->e));
    TQ_CHECK(tq_blas_axpy(1.0, m->e, z));
    if (m->post > 0) {
        TQ_CHECK(residual(m, z, r));
        TQ_CHECK(smooth(m->fine, m->post, m->e, m->rr));
        TQ_CHECK(tq_blas_axpy(1.0, m->e, z));
    }
    return TQ_SUCCESS;
}
