/* Multi-shift CG: (A + sigma_i) x_i = b for several shifts in one Krylov space (Jegerlehner,
 * hep-lat/9612014; paper 002 §II). The base system (the smallest shift) is a CG of
 * src/solvers/cg.c; after each of its iterations the host, which has just read alpha_k
 * and beta_k for the stopping test, computes every other shift's zeta_{k+1}, alpha and beta
 * and submits its two updates
 *   x_i += alpha_i p_i,    p_i = zeta_{k+1} r_{k+1} + beta_i p_i,
 * ahead of the base's next iteration, so they overlap it. A shift drops out when its
 * residual |zeta_i| |r| falls below tol |b| (its residual is zeta_i times the base one). */
#include "solvers/solver_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shift_state {
    double delta;                    /* shift relative to the base */
    double zeta, zeta_old;           /* zeta_k, zeta_{k-1} */
    int active;
    tq_field *p;
} shift_state;

/* Every shift but the base (i >= 1): p_i = b, x_i = 0, zeta = 1. */
static tq_status shifts_open(shift_state *sh, int n, const double *delta, tq_field *const *x, const tq_field *b,
                             const char *who)
{
    tq_status st = TQ_SUCCESS;
    for (int i = 1; i < n && st == TQ_SUCCESS; i++) {
        sh[i].delta = delta[i];
        sh[i].zeta = sh[i].zeta_old = 1.0;
        sh[i].active = 1;
        st = tq_field_like(b, &sh[i].p);
        tq_field *f[2] = {(tq_field *)b, sh[i].p}, *fx[1] = {x[i]};
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_COPY, NULL, NULL, f, NULL, 0, NULL, 0);   /* p_i = b */
        if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_ZERO, NULL, NULL, fx, NULL, 0, NULL, 0);
    }
    return st;
}

/* The residuals of the shifts still active when the base stopped (|zeta| |r| <= |r|), and
 * their fields freed. */
static void shifts_close(shift_state *sh, int n, const tq_krylov *k, tq_krylov_out *out)
{
    for (int i = 1; i < n; i++) {
        if (sh[i].active && k) out[i].residual = fabs(sh[i].zeta) * sqrt(tq_krylov_relative_r2(k));
        tq_field_destroy(sh[i].p);
    }
}

tq_status tq_krylov_multishift(tq_linop *op, int n, const double *delta, tq_field *const *x, const tq_field *b,
                               const tq_solver_params *p, tq_krylov_out *out)
{
    const char *who = "tq_solve_multishift";
    memset(out, 0, (size_t)n * sizeof *out);
    shift_state *sh = calloc((size_t)n, sizeof *sh);
    if (!sh) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    tq_status st = shifts_open(sh, n, delta, x, b, who);
    tq_krylov *k = NULL;
    if (st == TQ_SUCCESS) st = tq_krylov_start(&k, TQ_KRYLOV_CG, op, op, x[0], b, p);
    if (st == TQ_SUCCESS) tq_krylov_no_pipeline(k);   /* the shifted updates follow each iteration */
    const double n_reals = (double)b->lat->local_volume / 2.0 * b->nparity * b->layout.nreal;
    double alpha_old = 1.0, beta_old = 0.0;
    while (st == TQ_SUCCESS && !tq_krylov_done(k)) {
        const int it0 = tq_krylov_result(k)->iterations;
        st = tq_krylov_submit(k);
        if (st == TQ_SUCCESS) st = tq_krylov_check(k);
        if (st != TQ_SUCCESS && st != TQ_ERR_NOT_CONVERGED) break;
        if (tq_krylov_result(k)->iterations == it0) break;   /* solved at the start (b = 0): x = 0 */
        const tq_status base_st = st;
        double alpha, beta;
        tq_krylov_cg_coefficients(k, &alpha, &beta);
        const double rel = sqrt(tq_krylov_relative_r2(k));
        tq_field *r = tq_krylov_residual(k);
        for (int i = 1; i < n && st == TQ_SUCCESS; i++) {
            shift_state *S = &sh[i];
            if (!S->active) continue;
            /* zeta_{k+1} from zeta_k, zeta_{k-1}, alpha_k, alpha_{k-1}, beta_{k-1} */
            const double den = alpha * beta_old * (S->zeta_old - S->zeta) + S->zeta_old * alpha_old * (1.0 + S->delta * alpha);
            const double zeta_new = S->zeta * S->zeta_old * alpha_old / den;
            const double ratio = zeta_new / S->zeta;
            const double a_i = alpha * ratio, b_i = beta * ratio * ratio;
            if (!isfinite(zeta_new) || !isfinite(a_i) || !isfinite(b_i)) {
                st = tq_error(TQ_ERR_BREAKDOWN, "%s: shift %d: NaN or Inf in its coefficients at iteration %d", who, i,
                              out[0].iterations + 1);
                break;
            }
            const double c_axpy[4] = {a_i, 0, 0, 0}, c_axpby[4] = {zeta_new, b_i, 0, 0};
            tq_field *fxp[2] = {S->p, x[i]}, *frp[2] = {r, S->p};
            st = tq_blas_submit(who, TQ_OP_AXPY, c_axpy, NULL, fxp, NULL, 0, NULL, 0);
            if (st == TQ_SUCCESS) st = tq_blas_submit(who, TQ_OP_AXPBY, c_axpby, NULL, frp, NULL, 0, NULL, 0);
            S->zeta_old = S->zeta;
            S->zeta = zeta_new;
            out[i].iterations++;
            out[i].blas_flops += 6 * n_reals;
            out[i].residual = fabs(zeta_new) * rel;
            if (out[i].residual <= p->tol) S->active = 0;   /* converged: drops out */
        }
        alpha_old = alpha;
        beta_old = beta;
        if (st == TQ_SUCCESS) st = base_st;
    }
    if (k) {
        out[0] = *tq_krylov_result(k);
        if (st == TQ_SUCCESS) st = tq_krylov_status(k);
    }
    shifts_close(sh, n, k, out);
    tq_krylov_free(k);
    free(sh);
    return st;
}
