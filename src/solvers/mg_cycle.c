/* The multigrid cycle (issue 28): MR smoothing on the fine level, the coarse correction
 * through the transfer and a coarse solve (with more levels, flexible GCR preconditioned by
 * the next level's cycle: a K-cycle), MR smoothing again; used as flexible GCR's
 * preconditioner (tq_mg_level_solve). Each step is tasks (the operators'
 * stencils, the transfer, the BLAS). The smoothers' coefficients are computed on the device
 * (tq_mr_steps), so only the coarse solve waits for its scalars on the host, as every Krylov
 * solve does. May call: src/core, src/blas, tasks/ and
 * the solvers' frame. */
#include "solvers/mg_internal.h"
#include "solvers/solver_internal.h"

#include <stdlib.h>
#include <string.h>

/* The cycle on fine level fine (stencil form) or d (its M on spinor fields). */
static tq_status two_level_create(const char *who, const tq_mg_coarse_op *fine, const tq_dirac *d, const tq_mg_transfer *t,
                                  const tq_mg_coarse_op *coarse, int pre, int post, const tq_solver_params *coarse_p,
                                  tq_mg_two_level **out)
{
    if ((!fine && !d) || !t || !coarse || !coarse_p || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    const tq_field *g = d ? tq_internal_dirac_gauge(d) : NULL;
    tq_lattice *fine_lat = fine ? fine->lat : g->lat;
    if (fine_lat != t->fine || coarse->lat != t->coarse || (fine ? fine->n : 12) != t->fine_ndof || coarse->n != 2 * t->nvec)
        return tq_error(TQ_ERR_MISMATCH, "%s: the operators are not those of the transfer's two lattices", who);
    if (pre < 0 || post < 0 || pre + post == 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d pre- and %d post-smoothing steps (>= 0, not both 0)", who, pre, post);
    tq_mg_two_level *m = calloc(1, sizeof *m);
    if (!m) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    m->fine = fine;
    m->fine_d = d;
    m->coarse = coarse;
    m->t = t;
    m->pre = pre;
    m->post = post;
    m->coarse_p = *coarse_p;
    tq_mg_linop(fine, d, &m->fine_op);
    const tq_field_params fp = fine ? (tq_field_params){TQ_FIELD_COARSE, fine->vec_prec, TQ_FULL, (tq_recon)0, fine->n}
                                    : (tq_field_params){TQ_FIELD_SPINOR, g->p.prec, TQ_FULL, (tq_recon)0, 0};
    const tq_field_params cp = tq_mg_coarse_params(t, coarse->vec_prec);
    tq_status s = tq_field_create(fine_lat, &fp, &m->rr);
    if (s == TQ_SUCCESS) s = tq_field_create(fine_lat, &fp, &m->az);
    if (s == TQ_SUCCESS) s = tq_field_create(fine_lat, &fp, &m->e);
    if (s == TQ_SUCCESS) s = tq_field_create(fine_lat, &fp, &m->sres);
    if (s == TQ_SUCCESS) s = tq_scalars_create(&m->sc);
    if (s == TQ_SUCCESS) s = tq_scalars_replicate(m->sc, fine_lat);   /* collective across ranks, as a solve's start */
    if (s == TQ_SUCCESS) s = tq_field_create(coarse->lat, &cp, &m->rc);
    if (s == TQ_SUCCESS) s = tq_field_create(coarse->lat, &cp, &m->ec);
    if (s != TQ_SUCCESS) {
        tq_mg_two_level_destroy(m);
        return s;
    }
    *out = m;
    return TQ_SUCCESS;
}

tq_status tq_mg_two_level_create(const tq_mg_coarse_op *fine, const tq_mg_transfer *t, const tq_mg_coarse_op *coarse,
                                 int pre, int post, const tq_solver_params *coarse_p, tq_mg_two_level **out)
{
    if (!fine && out) *out = NULL;
    if (!fine) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_two_level_create: NULL argument");
    return two_level_create("tq_mg_two_level_create", fine, NULL, t, coarse, pre, post, coarse_p, out);
}

tq_status tq_mg_two_level_create_dirac(const tq_dirac *d, const tq_mg_transfer *t, const tq_mg_coarse_op *coarse,
                                       int pre, int post, const tq_solver_params *coarse_p, tq_mg_two_level **out)
{
    if (!d && out) *out = NULL;
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_two_level_create_dirac: NULL argument");
    return two_level_create("tq_mg_two_level_create_dirac", NULL, d, t, coarse, pre, post, coarse_p, out);
}

tq_status tq_mg_two_level_set_coarse_preconditioner(tq_mg_two_level *m,
                                                    tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r),
                                                    void *ctx)
{
    if (!m) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_two_level_set_coarse_preconditioner: NULL cycle");
    if (precond && m->coarse_p.inverter != TQ_INV_GCR)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_two_level_set_coarse_preconditioner: the coarse solver is %s; a "
                        "preconditioned coarse solve needs GCR (flexible)", tq_inverter_name(m->coarse_p.inverter));
    m->coarse_precond = precond;
    m->coarse_ctx = precond ? ctx : NULL;
    return TQ_SUCCESS;
}

tq_status tq_mg_two_level_set_coarse_eo(tq_mg_two_level *m)
{
    if (!m) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_two_level_set_coarse_eo: NULL cycle");
    TQ_CHECK(tq_mg_coarse_op_prepare_eo((tq_mg_coarse_op *)m->coarse));   /* makes its hat links once */
    m->coarse_eo = 1;
    return TQ_SUCCESS;
}

tq_status tq_mg_two_level_set_smoother_eo(tq_mg_two_level *m)
{
    if (!m) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_two_level_set_smoother_eo: NULL cycle");
    if (m->smoother_eo) return TQ_SUCCESS;
    tq_field_params ep;
    memset(&m->pc_op, 0, sizeof m->pc_op);
    if (m->fine_d) {
        const tq_field *g = tq_internal_dirac_gauge(m->fine_d);
        ep = (tq_field_params){TQ_FIELD_SPINOR, g->p.prec, TQ_EVEN, (tq_recon)0, 0};
        m->pc_op.kind = TQ_LINOP_MATPC;
        m->pc_op.d = m->fine_d;
        m->pc_op.parity = TQ_EVEN;
        m->pc_op.flops = tq_linop_flops(m->fine_d, TQ_LINOP_MATPC);
    } else {
        TQ_CHECK(tq_mg_coarse_op_prepare_eo((tq_mg_coarse_op *)m->fine));
        ep = (tq_field_params){TQ_FIELD_COARSE, m->fine->vec_prec, TQ_EVEN, (tq_recon)0, m->fine->n};
        tq_field_params op = ep;
        op.subset = TQ_ODD;
        TQ_CHECK(tq_field_create(m->fine->lat, &op, &m->yo));
        TQ_CHECK(tq_field_create(m->fine->lat, &ep, &m->ew));
        TQ_CHECK(tq_field_create(m->fine->lat, &op, &m->etmp));
        m->pc_op.kind = TQ_LINOP_COARSE_PC;
        m->pc_op.coarse = m->fine;
        m->pc_op.tmp = m->etmp;
        m->pc_op.flops = tq_mg_coarse_pc_flops(m->fine);
    }
    tq_lattice *lat = m->rr->lat;
    TQ_CHECK(tq_field_create(lat, &ep, &m->eb));
    TQ_CHECK(tq_field_create(lat, &ep, &m->ex));
    TQ_CHECK(tq_field_create(lat, &ep, &m->eres));
    TQ_CHECK(tq_field_create(lat, &ep, &m->eaz));
    m->smoother_eo = 1;
    return TQ_SUCCESS;
}

void tq_mg_two_level_destroy(tq_mg_two_level *m)
{
    if (!m) return;
    tq_field_destroy(m->eb);
    tq_field_destroy(m->ex);
    tq_field_destroy(m->eres);
    tq_field_destroy(m->eaz);
    tq_field_destroy(m->yo);
    tq_field_destroy(m->ew);
    tq_field_destroy(m->etmp);
    tq_field_destroy(m->rr);
    tq_field_destroy(m->az);
    tq_field_destroy(m->e);
    tq_field_destroy(m->sres);
    tq_scalars_destroy(m->sc);   /* waits for the smoothers' tasks */
    tq_field_destroy(m->rc);
    tq_field_destroy(m->ec);
    free(m);
}

/* x from `steps` MR steps on the even-odd Schur complement: b prepared, the steps on the
 * even sites, x's odd sites reconstructed. */
static tq_status smooth_eo(tq_mg_two_level *m, int steps, tq_field *x, const tq_field *b)
{
    if (m->fine_d) TQ_CHECK(tq_dirac_prepare(m->fine_d, m->eb, b, TQ_EVEN));
    else TQ_CHECK(tq_mg_coarse_eo_prepare(m->fine, m->eb, m->yo, m->ew, b));
    TQ_CHECK(tq_mr_steps("multigrid smoother", &m->pc_op, m->sc, 0, steps, m->ex, m->eb, m->eres, m->eaz));
    if (m->fine_d) TQ_CHECK(tq_dirac_reconstruct(m->fine_d, x, m->ex, b, TQ_EVEN));
    else TQ_CHECK(tq_mg_coarse_eo_reconstruct(m->fine, x, m->ex, m->yo));
    const double reals = (double)x->lat->local_volume / 2.0 * x->layout.nreal * x->rows;
    /* the preparation and reconstruction: about one application of F together */
    m->flops += steps * m->pc_op.flops + tq_mr_steps_flops(steps) * reals +
                (m->fine_d ? tq_linop_flops(m->fine_d, TQ_LINOP_MAT) : tq_mg_coarse_eo_edge_flops(m->fine));
    return TQ_SUCCESS;
}

/* x = `steps` MR steps on F x = b from x = 0, queued without waiting (a smoother: a fixed
 * number of steps is the point). */
static tq_status smooth(tq_mg_two_level *m, int steps, tq_field *x, const tq_field *b)
{
    if (m->smoother_eo) return smooth_eo(m, steps, x, b);
    TQ_CHECK(tq_mr_steps("multigrid smoother", &m->fine_op, m->sc, 0, steps, x, b, m->sres, m->az));
    const double reals = (double)x->lat->local_volume / 2.0 * x->nparity * x->layout.nreal * x->rows;
    m->flops += steps * m->fine_op.flops + tq_mr_steps_flops(steps) * reals;
    return TQ_SUCCESS;
}

/* Flops of one fine-level operator application, and of one restriction or prolongation
 * (per fine site fine_ndof x nvec complex multiply-adds of the basis, 8 flops each). */
static double fine_apply_flops(const tq_mg_two_level *m)
{
    if (m->fine_d) return tq_linop_flops(m->fine_d, TQ_LINOP_MAT);
    return 9.0 * m->fine->n * m->fine->n * 8.0 * (double)m->fine->lat->local_volume;
}
static double transfer_flops(const tq_mg_two_level *m)
{
    return (double)m->t->fine_ndof * m->t->nvec * 8.0 * (double)m->t->fine->local_volume;
}

/* rr = r - F z */
static tq_status residual(tq_mg_two_level *m, const tq_field *z, const tq_field *r)
{
    m->flops += fine_apply_flops(m) + 2.0 * 2.0 * m->t->fine_ndof * (double)m->rr->lat->local_volume;   /* apply, axpy */
    TQ_CHECK(m->fine_d ? tq_dirac_mat(m->fine_d, m->az, z, 0) : tq_mg_coarse_apply(m->fine, m->az, z));
    TQ_CHECK(tq_blas_copy(m->rr, r));
    return tq_blas_axpy(-1.0, m->az, m->rr);
}

/* Before the coarse solve: z = pre-smoothed r (or 0), rr = r - F z, rc = R rr. */
static tq_status cycle_down(tq_mg_two_level *m, tq_field *z, const tq_field *r)
{
    if (m->pre > 0) {
        TQ_CHECK(smooth(m, m->pre, z, r));
        TQ_CHECK(residual(m, z, r));
    } else {
        TQ_CHECK(tq_blas_zero(z));
        TQ_CHECK(tq_blas_copy(m->rr, r));
    }
    return tq_mg_restrict(m->t, m->rr, m->rc);
}

/* After it: z += P ec, then the post-smoother's correction on the new residual. */
static tq_status cycle_up(tq_mg_two_level *m, tq_field *z, const tq_field *r)
{
    TQ_CHECK(tq_mg_prolong(m->t, m->ec, m->e));
    TQ_CHECK(tq_blas_axpy(1.0, m->e, z));
    if (m->post > 0) {
        TQ_CHECK(residual(m, z, r));
        TQ_CHECK(smooth(m, m->post, m->e, m->rr));
        TQ_CHECK(tq_blas_axpy(1.0, m->e, z));
    }
    return TQ_SUCCESS;
}

tq_status tq_mg_two_level_apply(void *ctx, tq_field *z, const tq_field *r)
{
    const char *who = "multigrid cycle";
    tq_mg_two_level *m = ctx;
    /* the fine-level work before and after the coarse solve goes as chains (one task per
     * owner, not one per kernel): none of it waits on the host. Only where one worker runs
     * every block of both levels: with the blocks on two GPUs in peer mode, chained cycle parts
     * hung (2 x H100, 16^4; chained coarse solves alone did not; doc/design.md). */
    const int chained = tq_internal_blocks_share_worker(z->lat) && tq_internal_blocks_share_worker(m->coarse->lat);
    tq_internal_chain_begin(chained);
    TQ_CHECK(tq_internal_chain_end(chained, cycle_down(m, z, r), who));
    tq_krylov_out out;
    memset(&out, 0, sizeof out);
    const tq_status s = m->coarse_eo && !m->coarse_precond
                            ? tq_mg_level_solve_eo(m->coarse, m->ec, m->rc, &m->coarse_p, &out)
                            : tq_mg_level_solve(m->coarse, m->ec, m->rc, &m->coarse_p, m->coarse_precond, m->coarse_ctx, &out);
    if (s != TQ_SUCCESS && s != TQ_ERR_NOT_CONVERGED) return s;   /* a loose coarse solve is enough */
    m->coarse_iterations += out.iterations;
    /* the coarse solve (its preconditioner counts its own), R and P */
    m->flops += out.flops + 2.0 * transfer_flops(m);
    tq_internal_chain_begin(chained);
    return tq_internal_chain_end(chained, cycle_up(m, z, r), who);
}
