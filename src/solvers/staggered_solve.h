/* Improved staggered solves (src/solvers/staggered_solve.c; issue 36, not public yet). */
#ifndef TQ_STAGGERED_SOLVE_H
#define TQ_STAGGERED_SOLVE_H

#include "dirac/staggered.h"
#include "solvers/solver_internal.h"

/* M x = b, M = 2m + D (MILC's normalisation), m > 0, on full staggered fields of op's
 * lattice and precision: CG (p->inverter TQ_INV_CG) on the even-odd system to p->tol
 * relative residual of that system, x_o reconstructed; out (may be NULL) its iterations
 * and flops. p->prec_sloppy (other than op's precision): the iterations in that precision
 * on a copy of op's links, with reliable updates on op. */
tq_status tq_ks_solve(const tq_ks_op *op, double mass, tq_field *x, const tq_field *b, const tq_solver_params *p,
                      tq_krylov_out *out);
/* (4 m_i^2 - D_eo D_oe) x_i = b for n masses at once (MILC's multi-mass form, RHMC's case):
 * multi-shift CG on the smallest mass's system, a mass dropping out once its residual
 * |zeta_i| |r| is below p->tol |b| (multi-shift CG has no reliable updates: in mixed
 * precision, paper 002's refinement per mass follows). x[i] and b even-site fields; out[i]
 * per mass. For a source on
 * even sites only, M x = b's solution for mass m_i is x_e = 2 m_i x_i, x_o = -D_oe x_i.
 * out[i].flops: the operator's flops of the shared Krylov space on the smallest mass's,
 * and each mass's BLAS and refinement (p->prec_sloppy: multi-shift in that precision, then
 * each mass refined by mixed CG). */
tq_status tq_ks_solve_multishift(const tq_ks_op *op, int n, const double *masses, tq_field *const *x, const tq_field *b,
                                 const tq_solver_params *p, tq_krylov_out *out);

#endif
