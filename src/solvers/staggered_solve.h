/* Improved staggered solves (src/solvers/staggered_solve.c; issue 36, not public yet). */
#ifndef TQ_STAGGERED_SOLVE_H
#define TQ_STAGGERED_SOLVE_H

#include "dirac/staggered.h"
#include "solvers/solver_internal.h"

/* M x = b, M = 2m + D (MILC's normalisation), m > 0, on full staggered fields of op's
 * lattice and precision: CG (p->inverter TQ_INV_CG) on the even-odd system to p->tol
 * relative residual of that system, x_o reconstructed; out (may be NULL) its iterations
 * and flops. */
tq_status tq_ks_solve(const tq_ks_op *op, double mass, tq_field *x, const tq_field *b, const tq_solver_params *p,
                      tq_krylov_out *out);

#endif
