/* Insert functions for the clover term: its application and its build
 * (codelets/clover.c, codelets/clover_build.c). */
#include "tq_tasks.h"

int tq_task_clover(const tq_task_options *opt, const tq_clover_args *a, starpu_data_handle_t K, starpu_data_handle_t in,
                   starpu_data_handle_t out, starpu_data_handle_t x, starpu_data_handle_t scalars)
{
    struct starpu_data_descr d[5];
    int n = 0;
    d[n].handle = K; d[n++].mode = STARPU_R;
    if (a->in_place) {
        d[n].handle = out; d[n++].mode = STARPU_RW;
    } else {
        d[n].handle = in; d[n++].mode = STARPU_R;
        d[n].handle = out; d[n++].mode = STARPU_W;
    }
    if (a->xpay) { d[n].handle = x; d[n++].mode = STARPU_R; }
    if (a->guard > 0) { d[n].handle = scalars; d[n++].mode = STARPU_R; }
    return tq_task_submit_descr(opt, &tq_cl_clover, a, sizeof *a, d, n, STARPU_DEFAULT_PRIO);
}

int tq_task_clover_build(const tq_task_options *opt, const tq_clover_build_args *a, starpu_data_handle_t links, starpu_data_handle_t A,
                         starpu_data_handle_t Ainv, starpu_data_handle_t status)
{
    struct starpu_data_descr d[4] = {
        {links, STARPU_R}, {A, STARPU_W}, {Ainv, STARPU_W}, {status, STARPU_W},
    };
    return tq_task_submit_descr(opt, &tq_cl_clover_build, a, sizeof *a, d, 4, STARPU_DEFAULT_PRIO);
}
