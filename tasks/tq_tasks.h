/* Insert functions: each submits one codelet on given handles with the right access
 * modes, arguments, priority and name. src/ algorithms call only these. */
#ifndef TQ_TASKS_H
#define TQ_TASKS_H

#include "tq_codelets.h"

/* One BLAS task over the operand handles of a block (a->op decides how many); for
 * reductions, partial receives TQ_BLAS_MAX_RESULTS doubles. Returns 0 or a StarPU error. */
int tq_task_blas(const tq_blas_args *a, const starpu_data_handle_t *operands,
                 starpu_data_handle_t partial);

/* Sums partials[0..n-1] in order into result (a vector of TQ_BLAS_MAX_RESULTS doubles). */
int tq_task_reduce_combine(const starpu_data_handle_t *partials, int n,
                           starpu_data_handle_t result);

#endif
