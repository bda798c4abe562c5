/* tq_solve: solve types (even-odd preparation and reconstruction, normal equations), the
 * linear operators the inverters see, parameter checks, and the true residual. */
#include "solvers/solver_internal.h"
#include "solvers/mg_internal.h"   /* TQ_LINOP_COARSE */
#include "dirac/staggered.h"       /* TQ_LINOP_KS_PC */
#include "core/placement.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) { return tq_internal_now(); }

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
    case TQ_LINOP_MATPC_DAG_MATPC: case TQ_LINOP_MATPC_MATPC_DAG: case TQ_LINOP_KS_PC: return 1;
    default: return 0;
    }
}

static tq_status linop_apply_unshifted(tq_linop *op, tq_field *out, const tq_field *in);

tq_status tq_linop_apply(tq_linop *op, tq_field *out, const tq_field *in)
{
    op->applications++;
    if (op->kind == TQ_LINOP_KS_PC && op->shift != 0.0) {
        /* shift in - D_pq D_qp in: the sign and the shift in one pass (the same values as
         * a scale by -1 and an axpy: the sign flip is exact) */
        TQ_CHECK(tq_ks_hop(op->ks, op->tmp, in));
        TQ_CHECK(tq_ks_hop(op->ks, out, op->tmp));
        return tq_blas_axpby(op->shift, in, -1.0, out);
    }
    TQ_CHECK(linop_apply_unshifted(op, out, in));
    return op->shift != 0.0 ? tq_blas_axpy(op->shift, in, out) : TQ_SUCCESS;
}

static tq_status linop_apply_unshifted(tq_linop *op, tq_field *out, const tq_field *in)
{
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
    case TQ_LINOP_COARSE: return tq_mg_coarse_apply(op->coarse, out, in);
    case TQ_LINOP_COARSE_PC:   /* out = in - Yhat (Yhat in), through the other parity */
        TQ_CHECK(tq_mg_coarse_hop_hat(op->coarse, op->tmp, in));
        TQ_CHECK(tq_mg_coarse_hop_hat(op->coarse, out, op->tmp));
        return tq_blas_xpay(in, -1.0, out);
    case TQ_LINOP_KS_PC:   /* -D_pq D_qp: D is anti-Hermitian, so this is D^dag D on parity p */
        TQ_CHECK(tq_ks_hop(op->ks, op->tmp, in));
        TQ_CHECK(tq_ks_hop(op->ks, out, op->tmp));
        return tq_blas_scale(-1.0, out);
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
double tq_linop_flops(const tq_dirac *d, tq_linop_kind kind)
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

static const char *const inverter_names[] = {"cg", "bicgstab", "cgnr", "cgne", "mr", "gcr"};
static const char *const solve_type_names[] = {"direct-pc", "direct", "normop-pc", "normop"};

const char *tq_inverter_name(tq_inverter inv)
{
    return (unsigned)inv < 6 ? inverter_names[inv] : "unknown";
}

tq_status tq_inverter_parse(const char *s, tq_inverter *out)
{
    for (int i = 0; s && i < 6; i++)
        if (!strcmp(s, inverter_names[i])) { *out = (tq_inverter)i; return TQ_SUCCESS; }
    return tq_error(TQ_ERR_INVALID_ARG, "unknown inverter '%s' (cg, bicgstab, cgnr, cgne, mr, gcr)", s ? s : "(null)");
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
    if (p->gcr_nkrylov < 0 || p->gcr_nkrylov > 10)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: gcr_nkrylov must lie in 1..10 (0: the default 8; got %d)", who, p->gcr_nkrylov);
    if (p->precond != TQ_PRECOND_NONE && p->precond != TQ_PRECOND_MR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown preconditioner %d", who, (int)p->precond);
    if (p->precond_iters < 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: precond_iters must be >= 0 (got %d)", who, p->precond_iters);
    if ((unsigned)p->inverter > TQ_INV_GCR) return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown inverter %d", who, (int)p->inverter);
    if ((unsigned)p->solve_type > TQ_SOLVE_NORMOP)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown solve type %d", who, (int)p->solve_type);
    if (!(p->tol > 0.0 && p->tol < 1.0)) return tq_error(TQ_ERR_INVALID_ARG, "%s: tol must lie in (0, 1) (got %g)", who, p->tol);
    if (p->maxiter <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: maxiter must be positive (got %d)", who, p->maxiter);
    if (p->prec_sloppy != 0 && p->prec_sloppy != TQ_DOUBLE && p->prec_sloppy != TQ_SINGLE && p->prec_sloppy != TQ_HALF)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown sloppy precision %d", who, (int)p->prec_sloppy);
    if (p->recon_sloppy != 0 && p->recon_sloppy != TQ_RECON_18 && p->recon_sloppy != TQ_RECON_12 && p->recon_sloppy != TQ_RECON_8)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown sloppy gauge compression %d", who, (int)p->recon_sloppy);
    if (!(p->reliable_delta >= 0.0 && p->reliable_delta < 1.0))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: reliable_delta must lie in [0, 1) (got %g)", who, p->reliable_delta);
    if (p->mixed != TQ_MIXED_RELIABLE && p->mixed != TQ_MIXED_DEFECT)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown mixed-precision scheme %d", who, (int)p->mixed);
    return TQ_SUCCESS;
}

static tq_status check_fields(const char *who, const tq_dirac *d, const tq_field *x, const tq_field *b)
{
    if (!x || !b) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL field", who);
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    if (x->nparity != 2 || b->nparity != 2 || x->p.kind != TQ_FIELD_SPINOR || b->p.kind != TQ_FIELD_SPINOR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b must be full-lattice spinor fields", who);
    const tq_field *g = tq_internal_dirac_gauge(d);
    if (x->lat != g->lat || b->lat != g->lat) return tq_error(TQ_ERR_MISMATCH, "%s: fields and operator live on different lattices", who);
    if (x->p.prec != g->p.prec || b->p.prec != g->p.prec)
        return tq_error(TQ_ERR_MISMATCH, "%s: fields must have the operator's precision (%s)", who, tq_precision_name(g->p.prec));
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

/* One system of a (multi-)solve: its operator copies, fields and inverter. */
typedef struct solve_system {
    tq_field *x;
    const tq_field *b;
    tq_dirac *dw, *dsw;           /* own work copies (several systems), else NULL */
    const tq_dirac *d, *ds;       /* the precise and sloppy operators it uses */
    tq_linop op, ops, single;
    tq_field *bs, *xs, *rhs, *y, *w;
    tq_krylov *k;
    tq_status st;
    int slot;                     /* its owner among several (tq_internal_system_slots), or -1 */
    double t0, t_iter, t_done;    /* prepare, start's tasks done (iterations begin), inverter finished */
    char why[512];                /* why its inverter stopped, when it did not converge (taken when it
                                     stopped: the systems beside it set tq_last_error later) */
} solve_system;

/* From here on the submitting thread's tasks are system S's (its owner, if it has one). */
static void system_place(const solve_system *S) { tq_internal_placement_system(S->slot); }

static void system_free(solve_system *S)
{
    tq_krylov_free(S->k);
    tq_field_destroy(S->bs);
    tq_field_destroy(S->xs);
    tq_field_destroy(S->rhs);
    tq_field_destroy(S->y);
    tq_field_destroy(S->w);
    if (S->ops.tmp != S->op.tmp) tq_field_destroy(S->ops.tmp);
    tq_field_destroy(S->op.tmp);
    tq_dirac_destroy(S->dsw);
    tq_dirac_destroy(S->dw);
}

/* Forms: pc (even-odd), normal 0 none, 1 NR (M^dag M x = M^dag b), 2 NE (M M^dag y = b). */
static tq_linop_kind form(int pc, int normal)
{
    if (pc) return normal == 1 ? TQ_LINOP_MATPC_DAG_MATPC : normal == 2 ? TQ_LINOP_MATPC_MATPC_DAG : TQ_LINOP_MATPC;
    return normal == 1 ? TQ_LINOP_MAT_DAG_MAT : normal == 2 ? TQ_LINOP_MAT_MAT_DAG : TQ_LINOP_MAT;
}

/* Set-up of one system up to the inverter's start (right-hand side prepared). */
static tq_status system_start(solve_system *S, const tq_solver_params *p, int pc, int normal)
{
    const tq_field *b = S->b;
    tq_field_params fp = b->p;
    fp.subset = pc ? TQ_EVEN : TQ_FULL;
    S->op.d = S->d;
    S->op.parity = TQ_EVEN;
    S->op.kind = form(pc, normal);
    S->op.flops = tq_linop_flops(S->d, S->op.kind);
    S->ops = S->op;
    S->ops.d = S->ds;
    S->single = S->op;
    S->single.kind = pc ? TQ_LINOP_MATPC_DAG : TQ_LINOP_MAT_DAG;
    S->single.flops = tq_linop_flops(S->d, S->single.kind);
    TQ_CHECK(tq_field_create(b->lat, &fp, &S->bs));
    TQ_CHECK(tq_field_create(b->lat, &fp, &S->xs));
    TQ_CHECK(tq_field_like(b, &S->w));
    if (normal) {
        TQ_CHECK(tq_field_create(b->lat, &fp, &S->op.tmp));
        TQ_CHECK(tq_field_create(b->lat, &fp, &S->rhs));
        if (S->ds != S->d) {
            tq_field_params sp = fp;
            sp.prec = tq_internal_dirac_gauge(S->ds)->p.prec;
            TQ_CHECK(tq_field_create(b->lat, &sp, &S->ops.tmp));
        } else {
            S->ops.tmp = NULL;   /* shares op.tmp: the same operator copy */
        }
    }
    if (normal == 2) TQ_CHECK(tq_field_create(b->lat, &fp, &S->y));
    S->t0 = now();
    TQ_CHECK(pc ? tq_dirac_prepare(S->d, S->bs, b, TQ_EVEN) : tq_blas_copy(S->bs, b));
    if (normal == 1) TQ_CHECK(tq_linop_apply(&S->single, S->rhs, S->bs));
    else if (normal == 2) TQ_CHECK(tq_blas_copy(S->rhs, S->bs));
    if (S->ds == S->d) S->ops.tmp = S->op.tmp;
    const int method = p->inverter == TQ_INV_BICGSTAB ? TQ_KRYLOV_BICGSTAB : p->inverter == TQ_INV_MR ? TQ_KRYLOV_MR
                     : p->inverter == TQ_INV_GCR ? TQ_KRYLOV_GCR : TQ_KRYLOV_CG;
    TQ_CHECK(tq_krylov_start(&S->k, method, &S->op, &S->ops, normal == 2 ? S->y : S->xs,
                             normal ? S->rhs : S->bs, p));
    return TQ_SUCCESS;
}

/* After the inverter: x = M^dag y (NE), reconstruction, time, flops and true residual. */
static tq_status system_finish(solve_system *S, const tq_solver_params *p, int pc, int normal, tq_solver_result *res)
{
    const tq_krylov_out *ko = tq_krylov_result(S->k);
    tq_status st = tq_krylov_status(S->k);
    if (S->t_done == 0.0) S->t_done = now();
    S->t_iter = tq_krylov_iter_start(S->k);   /* the start's tasks done */
    res->iterations = ko->iterations;
    res->reliable_updates = ko->reliable_updates;
    res->residual = ko->residual;
    if (st != TQ_SUCCESS && S->why[0]) tq_error(st, "%s", S->why);
    if (st != TQ_SUCCESS && st != TQ_ERR_NOT_CONVERGED) {
        /* a breakdown leaves no solution to check: its time, and NaN for the true residual */
        res->seconds = S->t_done - S->t0;
        res->true_residual = NAN;
        return st;
    }
    tq_status solve_st = st;
    if (normal == 2) TQ_CHECK(tq_linop_apply(&S->single, S->xs, S->y));
    TQ_CHECK(pc ? tq_dirac_reconstruct(S->d, S->x, S->xs, S->b, TQ_EVEN) : tq_blas_copy(S->x, S->xs));
    double dummy;
    TQ_CHECK(tq_blas_norm2(S->x, &dummy));   /* waits for this system's solution */
    res->seconds = now() - S->t0;
    res->iter_flops = S->op.flops * (double)S->op.applications + tq_linop_flops(S->ds, S->ops.kind) * (double)S->ops.applications
                      + ko->blas_flops;
    res->flops = res->iter_flops + S->single.flops * (double)S->single.applications;
    res->iter_seconds = S->t_done - S->t_iter;
    TQ_CHECK(true_residual(S->d, S->x, S->b, S->w, &res->true_residual));
    /* the inverter's residual says converged but the full system's does not: a source with
     * a part in the null space of M^dag (singular system), or a far too ill-conditioned one */
    if (solve_st == TQ_SUCCESS && !(res->true_residual <= sqrt(p->tol)))
        return tq_error(TQ_ERR_NOT_CONVERGED, "tq_solve: the inverter converged (residual %.3e) but the true residual "
                        "|b - M x| / |b| is %.3e: the system is singular or too ill-conditioned for tol %.1e",
                        res->residual, res->true_residual, p->tol);
    if (solve_st != TQ_SUCCESS && S->why[0]) return tq_error(solve_st, "%s", S->why);
    return solve_st;
}

/* What the systems of one solve share: the form (even-odd; normal equations, as form())
 * and the sloppy operator. */
typedef struct solve_plan {
    int pc, normal;
    const tq_dirac *sloppy;   /* NULL: the iterations run on the operator itself */
    tq_precision sp;          /* the sloppy precision */
} solve_plan;

static tq_status check_systems(const char *who, const tq_dirac *d, int n, tq_field *const *x, const tq_field *const *b,
                               const tq_solver_params *p, tq_solver_result *results)
{
    if (!d || !x || !b || !p || !results || n <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument or n <= 0", who);
    TQ_CHECK(check_params(who, p));
    for (int i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof results[i]);
        TQ_CHECK(check_fields(who, d, x[i], b[i]));
        for (int j = 0; j < i; j++)
            if (x[j] == x[i]) return tq_error(TQ_ERR_INVALID_ARG, "%s: systems %d and %d share their solution field", who, j, i);
    }
    return TQ_SUCCESS;
}

/* The form from the solve type and the inverter (CG needs a Hermitian operator: on a direct
 * solve type it solves the normal equations; CGNE the M M^dag form), and the sloppy
 * operator, made once for all systems. */
static tq_status plan_solve(const char *who, const tq_dirac *d, const tq_solver_params *p, solve_plan *plan)
{
    plan->pc = p->solve_type == TQ_SOLVE_DIRECT_PC || p->solve_type == TQ_SOLVE_NORMOP_PC;
    const int normop = p->solve_type == TQ_SOLVE_NORMOP || p->solve_type == TQ_SOLVE_NORMOP_PC;
    plan->normal = normop ? 1 : 0;
    if (p->inverter == TQ_INV_CGNR || (p->inverter == TQ_INV_CG && !normop)) plan->normal = 1;
    if (p->inverter == TQ_INV_CGNE) {
        if (normop) return tq_error(TQ_ERR_INVALID_ARG, "%s: CGNE solves M M^dag y = b: use a direct solve type with it", who);
        plan->normal = 2;
    }
    const tq_field *g = tq_internal_dirac_gauge(d);
    const tq_precision sp = p->prec_sloppy ? p->prec_sloppy : g->p.prec;
    const tq_recon sr = p->recon_sloppy ? p->recon_sloppy : (g->p.recon ? g->p.recon : TQ_RECON_18);
    plan->sp = sp;
    plan->sloppy = NULL;
    if (sp != g->p.prec || sr != (g->p.recon ? g->p.recon : TQ_RECON_18))
        TQ_CHECK(tq_internal_dirac_sloppy_cached(d, sp, sr, &plan->sloppy));
    return TQ_SUCCESS;
}

/* Opens one of n systems up to its inverter's start. Several systems get their own work
 * copies of the operators (shared work fields would chain their tasks). Their restarts
 * (reliable updates) are read at the next check, as one system's are: reading each at
 * once (tq_krylov_sync_restarts, TQ_SYNC_RESTARTS=1 for comparisons) made the host wait
 * about 1.6 ms per update for the work queued before it, while the other GPU's systems
 * had none (2 H200, 12 systems of 32^4: 0.408 s against 0.371 s). */
static tq_status system_open(solve_system *S, const tq_dirac *d, const solve_plan *plan, const tq_solver_params *p, int n)
{
    S->d = d;
    S->ds = plan->sloppy ? plan->sloppy : d;
    tq_status st = TQ_SUCCESS;
    if (n > 1) {
        st = tq_internal_dirac_work(d, &S->dw);
        if (st == TQ_SUCCESS) S->d = S->dw;
        if (st == TQ_SUCCESS && plan->sloppy) st = tq_internal_dirac_work(plan->sloppy, &S->dsw);
        S->ds = plan->sloppy ? S->dsw : S->d;
    }
    if (st == TQ_SUCCESS) st = system_start(S, p, plan->pc, plan->normal);
    if (st == TQ_SUCCESS && n > 1) {
        const char *sync = getenv("TQ_SYNC_RESTARTS");
        if (sync && sync[0] == '1') tq_krylov_sync_restarts(S->k);
        st = tq_krylov_status(S->k);
        if (st == TQ_SUCCESS && tq_krylov_done(S->k)) S->t_done = now();
    }
    return st;
}

static int system_active(const solve_system *S) { return S->st == TQ_SUCCESS && !tq_krylov_done(S->k); }

/* tq_krylov_run_together's hook: before a step, system i's tasks go to its owner; when it
 * is done, its time and (several systems) a line. */
typedef struct systems_ctx {
    solve_system *sys;
    int n;
    const tq_solver_params *p;
} systems_ctx;
static void system_step(void *ctx, int i, int done)
{
    systems_ctx *c = ctx;
    solve_system *S = &c->sys[i];
    if (!done) {
        system_place(S);   /* a check may queue work too (a restart, a reliable update) */
        return;
    }
    S->t_done = now();
    const tq_status st = tq_krylov_status(S->k);
    if (st != TQ_SUCCESS) snprintf(S->why, sizeof S->why, "%s", tq_last_error());
    if (c->p->verbosity >= 1 && c->n > 1 && tq_internal_mpi_rank() == 0)   /* every rank sees the same */
        fprintf(stderr, "taskqcd: system %d of %d: %s after %d iterations%s%s\n", i + 1, c->n,
                st == TQ_SUCCESS ? "converged" : "stopped", tq_krylov_result(S->k)->iterations,
                st == TQ_SUCCESS ? "" : ": ", st == TQ_SUCCESS ? "" : S->why);
}

/* The solves side by side (tq_krylov_run_together). Checking in a fixed order instead
 * waited on a system that was behind while another GPU's systems, done, had nothing queued
 * (2 H100, 12 systems of 32^4 six per GPU: each GPU idle 20 % of the time, in gaps of 1-8
 * ms). */
static void systems_iterate(solve_system *sys, int n, const tq_solver_params *p)
{
    tq_krylov **k = calloc((size_t)n, sizeof *k);
    if (!k) {
        for (int i = 0; i < n; i++)
            if (system_active(&sys[i])) sys[i].st = tq_error(TQ_ERR_NOMEM, "tq_solve: out of memory");
        return;
    }
    for (int i = 0; i < n; i++) k[i] = system_active(&sys[i]) ? sys[i].k : NULL;
    systems_ctx c = {sys, n, p};
    tq_krylov_run_together(k, n, system_step, &c);
    free(k);
}

static void report_system(const solve_system *S, const tq_solver_params *p, const solve_plan *plan,
                          const tq_solver_result *r)
{
    const int sloppy = plan->sloppy != NULL;
    fprintf(stderr, "taskqcd: %s %s%s%s: %d iterations (%d reliable updates), residual %.3e, true residual %.3e, "
            "%.3f s (start %.3f, iterations %.3f, end %.3f), %.1f GFLOPS (%.1f over the iterations)\n",
            tq_inverter_name(p->inverter), tq_solve_type_name(p->solve_type), sloppy ? ", sloppy " : "",
            sloppy ? tq_precision_name(plan->sp) : "", r->iterations, r->reliable_updates, r->residual,
            r->true_residual, r->seconds, S->t_iter - S->t0, r->iter_seconds, S->t0 + r->seconds - S->t_done,
            r->flops / r->seconds * 1e-9, r->iter_seconds > 0 ? r->iter_flops / r->iter_seconds * 1e-9 : 0.0);
}

/* Finishes and frees each system in turn. The first error is the solve's, with its message
 * (later systems' errors replace tq_last_error). */
static tq_status systems_finish(solve_system *sys, int n, const tq_solver_params *p, const solve_plan *plan,
                                tq_solver_result *results)
{
    tq_status first = TQ_SUCCESS;
    char first_msg[600] = "";
    for (int i = 0; i < n; i++) {
        solve_system *S = &sys[i];
        tq_status st = S->st;
        system_place(S);
        if (st == TQ_SUCCESS) st = system_finish(S, p, plan->pc, plan->normal, &results[i]);
        if (st != TQ_SUCCESS && first == TQ_SUCCESS) {
            first = st;
            snprintf(first_msg, sizeof first_msg, "%s", tq_last_error());
            if (n > 1) snprintf(first_msg, sizeof first_msg, "system %d of %d: %s", i + 1, n, tq_last_error());
        }
        if (p->verbosity >= 1 && (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED)) report_system(S, p, plan, &results[i]);
        system_free(S);
    }
    tq_internal_placement_system(-1);
    if (first != TQ_SUCCESS) return tq_error(first, "%s", first_msg);
    return TQ_SUCCESS;
}

/* How many owners the n systems spread over, one system on one owner (0: each system's
 * blocks on their owners). The estimate of a system's memory: 16 fields of b's size (its
 * own and its inverter's, at most); of what the systems share: four of the operator's
 * gauge field (the links, a sloppy copy, the clover terms). */
static int system_slots(const tq_dirac *d, int n, const tq_field *const *b)
{
    const tq_field *g = tq_internal_dirac_gauge(d);
    return tq_internal_system_slots(g->lat, n, 16.0 * (double)tq_field_bytes(b[0]), 4.0 * (double)tq_field_bytes(g));
}

tq_status tq_solve_many(const tq_dirac *d, int n, tq_field *const *x, const tq_field *const *b,
                        const tq_solver_params *p, tq_solver_result *results)
{
    const char *who = "tq_solve";
    TQ_CHECK(check_systems(who, d, n, x, b, p, results));
    solve_plan plan;
    TQ_CHECK(plan_solve(who, d, p, &plan));
    solve_system *sys = calloc((size_t)n, sizeof *sys);
    if (!sys) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    int nactive = 0;
    /* a system that fits on one owner (a GPU) stays there: several systems then fill
     * several GPUs without faces between them */
    const int slots = system_slots(d, n, b);
    for (int i = 0; i < n; i++) {
        sys[i].x = x[i];
        sys[i].b = b[i];
        sys[i].slot = slots ? i % slots : -1;
        system_place(&sys[i]);
        sys[i].st = system_open(&sys[i], d, &plan, p, n);
        if (system_active(&sys[i])) nactive++;
    }
    if (nactive > 0) systems_iterate(sys, n, p);
    const tq_status st = systems_finish(sys, n, p, &plan, results);
    free(sys);
    return st;
}

/* Checks tq_solve_multishift's arguments; *base: the index of the smallest shift. */
static tq_status check_multishift(const char *who, const tq_dirac *d, int nshift, const double *shifts,
                                  tq_field *const *x, const tq_field *b, const tq_solver_params *p,
                                  tq_solver_result *results, int *base)
{
    if (!d || !shifts || !x || !b || !p || !results || nshift <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument or nshift <= 0", who);
    TQ_CHECK(check_params(who, p));
    if (p->solve_type != TQ_SOLVE_NORMOP_PC && p->solve_type != TQ_SOLVE_NORMOP)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: multi-shift CG needs the Hermitian solve types normop-pc or normop", who);
    if (p->prec_sloppy || p->recon_sloppy)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: mixed precision is not available for multi-shift CG yet", who);
    const int pc = p->solve_type == TQ_SOLVE_NORMOP_PC;
    const tq_field *g = tq_internal_dirac_gauge(d);
    *base = 0;
    for (int i = 0; i < nshift; i++) {
        memset(&results[i], 0, sizeof results[i]);
        if (!(shifts[i] >= 0.0) || !isfinite(shifts[i]))
            return tq_error(TQ_ERR_INVALID_ARG, "%s: shift %d is %g (shifts must be finite and >= 0)", who, i, shifts[i]);
        if (!x[i] || x[i] == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: solution field %d is NULL or b", who, i);
        for (int j = 0; j < i; j++)
            if (x[j] == x[i]) return tq_error(TQ_ERR_INVALID_ARG, "%s: shifts %d and %d share their solution field", who, j, i);
        if (x[i]->lat != g->lat || x[i]->p.prec != g->p.prec || x[i]->p.kind != TQ_FIELD_SPINOR ||
            x[i]->p.subset != (pc ? TQ_EVEN : TQ_FULL))
            return tq_error(TQ_ERR_MISMATCH, "%s: solution field %d must be a %s spinor field of the operator's lattice and "
                            "precision", who, i, pc ? "even-parity" : "full");
        if (shifts[i] < shifts[*base]) *base = i;
    }
    if (b->lat != g->lat || b->p.prec != g->p.prec || b->p.kind != TQ_FIELD_SPINOR || b->p.subset != (pc ? TQ_EVEN : TQ_FULL))
        return tq_error(TQ_ERR_MISMATCH, "%s: b must be a %s spinor field of the operator's lattice and precision", who,
                        pc ? "even-parity" : "full");
    return TQ_SUCCESS;
}

/* Each shift's result (solved in the order order[], the base first): its true residual
 * |b - (A + sigma) x| / |b| (work field w) and its counts. */
static tq_status multishift_results(const tq_linop *op, int nshift, const int *order, const double *shifts,
                                    tq_field *const *xo, const tq_field *b, tq_field *w, const tq_krylov_out *ko,
                                    double seconds, const tq_solver_params *p, tq_solver_result *results)
{
    double b2 = 0;
    tq_status st = tq_blas_norm2(b, &b2);
    tq_linop plain = *op;
    plain.shift = 0.0;
    for (int k = 0; k < nshift && st == TQ_SUCCESS; k++) {
        tq_solver_result *r = &results[order[k]];
        double r2 = 0;
        st = tq_linop_apply(&plain, w, xo[k]);
        if (st == TQ_SUCCESS) st = tq_blas_axpy(shifts[order[k]], xo[k], w);
        if (st == TQ_SUCCESS) st = tq_blas_xpay(b, -1.0, w);
        if (st == TQ_SUCCESS) st = tq_blas_norm2(w, &r2);
        r->iterations = ko[k].iterations;
        r->residual = ko[k].residual;
        r->true_residual = b2 > 0 ? sqrt(r2 / b2) : sqrt(r2);
        r->seconds = seconds;
        r->flops = k == 0 ? op->flops * (double)op->applications + ko[0].blas_flops : ko[k].blas_flops;
        r->iter_seconds = seconds;   /* one solve for all shifts: no separate phases */
        r->iter_flops = r->flops;
        if (p->verbosity >= 1)
            fprintf(stderr, "taskqcd: multi-shift CG, shift %g: %d iterations, residual %.3e, true residual %.3e\n",
                    shifts[order[k]], r->iterations, r->residual, r->true_residual);
    }
    return st;
}

tq_status tq_solve_multishift(const tq_dirac *d, int nshift, const double *shifts, tq_field *const *x,
                              const tq_field *b, const tq_solver_params *p, tq_solver_result *results)
{
    const char *who = "tq_solve_multishift";
    int base = 0;
    TQ_CHECK(check_multishift(who, d, nshift, shifts, x, b, p, results, &base));
    const int pc = p->solve_type == TQ_SOLVE_NORMOP_PC;
    /* the smallest shift is the base system (the slowest to converge) */
    double *delta = malloc((size_t)nshift * sizeof *delta);
    tq_field **xo = malloc((size_t)nshift * sizeof *xo);
    int *order = malloc((size_t)nshift * sizeof *order);
    tq_krylov_out *ko = calloc((size_t)nshift, sizeof *ko);
    tq_field *w = NULL;
    tq_status st = delta && xo && order && ko ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    tq_linop op;
    memset(&op, 0, sizeof op);
    op.d = d;
    op.parity = TQ_EVEN;
    op.kind = pc ? TQ_LINOP_MATPC_DAG_MATPC : TQ_LINOP_MAT_DAG_MAT;
    op.flops = tq_linop_flops(d, op.kind);
    if (st == TQ_SUCCESS) {
        order[0] = base;
        for (int i = 0, k = 1; i < nshift; i++)
            if (i != base) order[k++] = i;
        for (int k = 0; k < nshift; k++) {
            xo[k] = x[order[k]];
            delta[k] = shifts[order[k]] - shifts[base];
        }
        op.shift = shifts[base];
        st = tq_field_like(b, &op.tmp);
        if (st == TQ_SUCCESS) st = tq_field_like(b, &w);
    }
    const double t0 = now();
    if (st == TQ_SUCCESS) st = tq_krylov_multishift(&op, nshift, delta, xo, b, p, ko);
    const double seconds = now() - t0;
    if (st == TQ_SUCCESS || st == TQ_ERR_NOT_CONVERGED) {
        const tq_status solve_st = st;
        st = multishift_results(&op, nshift, order, shifts, xo, b, w, ko, seconds, p, results);
        if (st == TQ_SUCCESS) st = solve_st;
    }
    tq_field_destroy(op.tmp);
    tq_field_destroy(w);
    free(delta); free(xo); free(order); free(ko);
    return st;
}

tq_status tq_solve(const tq_dirac *d, tq_field *x, const tq_field *b, const tq_solver_params *p,
                   tq_solver_result *result)
{
    if (!x || !b || !result) return tq_error(TQ_ERR_INVALID_ARG, "tq_solve: NULL argument");
    return tq_solve_many(d, 1, &x, &b, p, result);
}
