/* tq_solve: solve types (even-odd preparation and reconstruction, normal equations), the
 * linear operators the inverters see, parameter checks, and the true residual. */
#include "solver_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

tq_status tq_field_like(const tq_field *f, tq_field **out)
{
    tq_field_params fp = f->p;
    return tq_field_create(f->lat, &fp, out);
}

/* ---- linear operators ------------------------------------------------------------------- */

int tq_linop_hermitian(const tq_linop *op)
{
    switch (op->kind) {
    case TQ_LINOP_MAT_DAG_MAT: case TQ_LINOP_MAT_MAT_DAG:
    case TQ_LINOP_MATPC_DAG_MATPC: case TQ_LINOP_MATPC_MATPC_DAG: return 1;
    default: return 0;
    }
}

tq_status tq_linop_apply(tq_linop *op, tq_field *out, const tq_field *in)
{
    op->applications++;
    const tq_dirac *d = op->d;
    switch (op->kind) {
    case TQ_LINOP_MAT: return tq_dirac_mat(d, out, in, 0);
    case TQ_LINOP_MAT_DAG: return tq_dirac_mat(d, out, in, 1);
    case TQ_LINOP_MAT_DAG_MAT:
        TQ_CHECK(tq_dirac_mat(d, op->tmp, in, 0));
        return tq_dirac_mat(d, out, op->tmp, 1);
    case TQ_LINOP_MAT_MAT_DAG:
        TQ_CHECK(tq_dirac_mat(d, op->tmp, in, 1));
        return tq_dirac_mat(d, out, op->tmp, 0);
    case TQ_LINOP_MATPC: return tq_dirac_matpc(d, out, in, op->parity, 0);
    case TQ_LINOP_MATPC_DAG: return tq_dirac_matpc(d, out, in, op->parity, 1);
    case TQ_LINOP_MATPC_DAG_MATPC:
        TQ_CHECK(tq_dirac_matpc(d, op->tmp, in, op->parity, 0));
        return tq_dirac_matpc(d, out, op->tmp, op->parity, 1);
    case TQ_LINOP_MATPC_MATPC_DAG:
        TQ_CHECK(tq_dirac_matpc(d, op->tmp, in, op->parity, 1));
        return tq_dirac_matpc(d, out, op->tmp, op->parity, 0);
    }
    return tq_error(TQ_ERR_INVALID_ARG, "tq_linop_apply: unknown operator form %d", (int)op->kind);
}

/* Flops of one application as QUDA counts them, per output site of one parity: 1320 per
 * hopping term, 504 per clover (or inverse) application, 48 per x + a y. */
static double linop_flops(const tq_dirac *d, tq_linop_kind kind)
{
    const tq_field *g = tq_internal_dirac_gauge(d);
    const double half_sites = (double)g->lat->local_volume / 2.0;
    const int clover = tq_internal_dirac_params(d)->type == TQ_DSLASH_CLOVER;
    /* M_pc: two hops, one xpay; clover: two clover applications (symmetric: A^-1 in both
     * hops; asymmetric: A^-1 in one, A in the xpay) */
    const double matpc = 2 * 1320.0 + 48.0 + (clover ? 2 * 504.0 : 0.0);
    /* M: on each parity one hop and one xpay (clover: one A) */
    const double mat = 2 * (1320.0 + 48.0 + (clover ? 504.0 : 0.0));
    switch (kind) {
    case TQ_LINOP_MAT: case TQ_LINOP_MAT_DAG: return half_sites * mat;
    case TQ_LINOP_MAT_DAG_MAT: case TQ_LINOP_MAT_MAT_DAG: return 2 * half_sites * mat;
    case TQ_LINOP_MATPC: case TQ_LINOP_MATPC_DAG: return half_sites * matpc;
    default: return 2 * half_sites * matpc;
    }
}

/* ---- parameters and names ----------------------------------------------------------------- */

void tq_solver_params_default(tq_solver_params *p)
{
    memset(p, 0, sizeof *p);
    p->inverter = TQ_INV_CG;
    p->solve_type = TQ_SOLVE_DIRECT_PC;
    p->tol = 1e-10;
    p->maxiter = 10000;
}

static const char *const inverter_names[] = {"cg", "bicgstab", "cgnr", "cgne"};
static const char *const solve_type_names[] = {"direct-pc", "direct", "normop-pc", "normop"};

const char *tq_inverter_name(tq_inverter inv)
{
    return (unsigned)inv < 4 ? inverter_names[inv] : "unknown";
}

tq_status tq_inverter_parse(const char *s, tq_inverter *out)
{
    for (int i = 0; s && i < 4; i++)
        if (!strcmp(s, inverter_names[i])) { *out = (tq_inverter)i; return TQ_SUCCESS; }
    return tq_error(TQ_ERR_INVALID_ARG, "unknown inverter '%s' (cg, bicgstab, cgnr, cgne)", s ? s : "(null)");
}

const char *tq_solve_type_name(tq_solve_type t)
{
    return (unsigned)t < 4 ? solve_type_names[t] : "unknown";
}

tq_status tq_solve_type_parse(const char *s, tq_solve_type *out)
{
    for (int i = 0; s && i < 4; i++)
        if (!strcmp(s, solve_type_names[i])) { *out = (tq_solve_type)i; return TQ_SUCCESS; }
    return tq_error(TQ_ERR_INVALID_ARG, "unknown solve type '%s' (direct-pc, direct, normop-pc, normop)", s ? s : "(null)");
}

static tq_status check_params(const char *who, const tq_solver_params *p)
{
    if ((unsigned)p->inverter > TQ_INV_CGNE) return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown inverter %d", who, (int)p->inverter);
    if ((unsigned)p->solve_type > TQ_SOLVE_NORMOP)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown solve type %d", who, (int)p->solve_type);
    if (!(p->tol > 0.0 && p->tol < 1.0)) return tq_error(TQ_ERR_INVALID_ARG, "%s: tol must lie in (0, 1) (got %g)", who, p->tol);
    if (p->maxiter <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: maxiter must be positive (got %d)", who, p->maxiter);
    return TQ_SUCCESS;
}

/* ---- the solve ------------------------------------------------------------------------------ */

/* |b - M x| / |b| on the full lattice (work field w). */
static tq_status true_residual(const tq_dirac *d, const tq_field *x, const tq_field *b, tq_field *w, double *rel)
{
    double b2 = 0, r2 = 0;
    TQ_CHECK(tq_dirac_mat(d, w, x, 0));
    TQ_CHECK(tq_blas_xpay(b, -1.0, w));   /* w = b - M x */
    TQ_CHECK(tq_blas_norm2(w, &r2));
    TQ_CHECK(tq_blas_norm2(b, &b2));
    *rel = b2 > 0 ? sqrt(r2 / b2) : sqrt(r2);
    return TQ_SUCCESS;
}

tq_status tq_solve(const tq_dirac *d, tq_field *x, const tq_field *b, const tq_solver_params *p,
                   tq_solver_result *result)
{
    const char *who = "tq_solve";
    if (!d || !x || !b || !p || !result) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    memset(result, 0, sizeof *result);
    TQ_CHECK(check_params(who, p));
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    if (x->nparity != 2 || b->nparity != 2 || x->p.kind != TQ_FIELD_SPINOR || b->p.kind != TQ_FIELD_SPINOR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b must be full-lattice spinor fields", who);
    const tq_field *g = tq_internal_dirac_gauge(d);
    if (x->lat != g->lat || b->lat != g->lat) return tq_error(TQ_ERR_MISMATCH, "%s: fields and operator live on different lattices", who);
    if (x->p.prec != g->p.prec || b->p.prec != g->p.prec)
        return tq_error(TQ_ERR_MISMATCH, "%s: fields must have the operator's precision (%s)", who, tq_precision_name(g->p.prec));
    if (tq_internal_mpi_size() > 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: solves across MPI ranks need the face exchange, not built yet", who);

    const int pc = p->solve_type == TQ_SOLVE_DIRECT_PC || p->solve_type == TQ_SOLVE_NORMOP_PC;
    const int normop = p->solve_type == TQ_SOLVE_NORMOP || p->solve_type == TQ_SOLVE_NORMOP_PC;
    /* the normal-equation form the inverter runs: 0 none, 1 NR (M^dag M x = M^dag b), 2 NE */
    int normal = normop ? 1 : 0;
    if (p->inverter == TQ_INV_CGNR || (p->inverter == TQ_INV_CG && !normop)) normal = 1;
    if (p->inverter == TQ_INV_CGNE) {
        if (normop) return tq_error(TQ_ERR_INVALID_ARG, "%s: CGNE solves M M^dag y = b: use a direct solve type with it", who);
        normal = 2;
    }
    tq_linop op;
    memset(&op, 0, sizeof op);
    op.d = d;
    op.parity = TQ_EVEN;
    op.kind = pc ? (normal == 1 ? TQ_LINOP_MATPC_DAG_MATPC : normal == 2 ? TQ_LINOP_MATPC_MATPC_DAG : TQ_LINOP_MATPC)
                 : (normal == 1 ? TQ_LINOP_MAT_DAG_MAT : normal == 2 ? TQ_LINOP_MAT_MAT_DAG : TQ_LINOP_MAT);
    op.flops = linop_flops(d, op.kind);

    /* the system's fields: xs, bs on the parity (pc) or the full lattice; rhs = the
     * inverter's right-hand side (M^dag bs for NR) */
    tq_field *bs = NULL, *xs = NULL, *rhs = NULL, *y = NULL, *w = NULL;
    tq_field_params fp = b->p;
    fp.subset = pc ? TQ_EVEN : TQ_FULL;
    tq_status st = tq_field_create(b->lat, &fp, &bs);
    if (st == TQ_SUCCESS) st = tq_field_create(b->lat, &fp, &xs);
    if (st == TQ_SUCCESS && normal) st = tq_field_create(b->lat, &fp, &op.tmp);
    if (st == TQ_SUCCESS && normal) st = tq_field_create(b->lat, &fp, &rhs);
    if (st == TQ_SUCCESS && normal == 2) st = tq_field_create(b->lat, &fp, &y);
    if (st == TQ_SUCCESS) st = tq_field_like(b, &w);
    double t0 = now(), extra_flops = 0.0;
    if (st == TQ_SUCCESS) st = pc ? tq_dirac_prepare(d, bs, b, TQ_EVEN) : tq_blas_copy(bs, b);
    tq_linop single = op;   /* M or M_pc alone, for M^dag b and x = M^dag y */
    single.kind = pc ? TQ_LINOP_MATPC : TQ_LINOP_MAT;
    single.flops = linop_flops(d, single.kind);
    if (st == TQ_SUCCESS && normal == 1) {
        single.kind = pc ? TQ_LINOP_MATPC_DAG : TQ_LINOP_MAT_DAG;
        st = tq_linop_apply(&single, rhs, bs);
    } else if (st == TQ_SUCCESS && normal == 2) {
        st = tq_blas_copy(rhs, bs);
    }
    tq_krylov_out ko;
    memset(&ko, 0, sizeof ko);
    tq_field *target = normal == 2 ? y : xs;
    const tq_field *source = normal ? rhs : bs;
    if (st == TQ_SUCCESS) {
        if (p->inverter == TQ_INV_BICGSTAB) st = tq_krylov_bicgstab(&op, target, source, p, &ko);
        else st = tq_krylov_cg(&op, target, source, p, &ko);
    }
    tq_status solve_st = st;
    if ((st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED) && normal == 2) {
        single.kind = pc ? TQ_LINOP_MATPC_DAG : TQ_LINOP_MAT_DAG;
        st = tq_linop_apply(&single, xs, y);
    }
    if (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED)
        st = pc ? tq_dirac_reconstruct(d, x, xs, b, TQ_EVEN) : tq_blas_copy(x, xs);
    if (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED) tq_wait_all();
    const double t1 = now();
    extra_flops = single.flops * (double)single.applications;
    result->iterations = ko.iterations;
    result->residual = ko.residual;
    result->seconds = t1 - t0;
    result->flops = op.flops * (double)op.applications + extra_flops + ko.blas_flops;
    if (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED) {
        tq_status rs = true_residual(d, x, b, w, &result->true_residual);
        if (st == TQ_SUCCESS) st = rs;
    }
    if (st == TQ_SUCCESS) st = solve_st;
    /* the inverter's residual says converged but the full system's does not: a source with
     * a part in the null space of M^dag (singular system), or a far too ill-conditioned one */
    if (st == TQ_SUCCESS && !(result->true_residual <= sqrt(p->tol)))
        st = tq_error(TQ_ERR_NOT_CONVERGED, "%s: the inverter converged (residual %.3e) but the true residual |b - M x| / |b| "
                      "is %.3e: the system is singular or too ill-conditioned for tol %.1e", who, result->residual,
                      result->true_residual, p->tol);
    if (p->verbosity >= 1 && (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED))
        fprintf(stderr, "taskqcd: %s %s: %d iterations, residual %.3e, true residual %.3e, %.3f s, %.1f GFLOPS\n",
                tq_inverter_name(p->inverter), tq_solve_type_name(p->solve_type), result->iterations, result->residual,
                result->true_residual, result->seconds, result->flops / result->seconds * 1e-9);
    tq_field_destroy(bs);
    tq_field_destroy(xs);
    tq_field_destroy(op.tmp);
    tq_field_destroy(rhs);
    tq_field_destroy(y);
    tq_field_destroy(w);
    return st;
}
