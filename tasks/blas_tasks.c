/* Insert functions for the BLAS-1 and reduction codelets, the precision conversion of
 * whole fields (codelets/field_convert.c) and random fields (codelets/random_field.c). */
#include "tq_tasks.h"
#include "random_field.h"
#include "taskqcd.h"

#include <stdlib.h>
#include <string.h>

int tq_task_blas(const tq_task_options *opt, const tq_blas_args *a, const starpu_data_handle_t *operands,
                 starpu_data_handle_t partial, starpu_data_handle_t scratch, starpu_data_handle_t scalars,
                 starpu_data_handle_t snapshot)
{
    const int nop = tq_blas_noperands(a->op), nres = tq_blas_nresults(a->op);
    struct starpu_data_descr d[TQ_BLAS_MAX_OPERANDS + 4];
    const unsigned rd = tq_blas_reads(a->op), wr = tq_blas_writes(a->op);
    for (int i = 0; i < nop; i++) {
        d[i].handle = operands[i];
        d[i].mode = (enum starpu_data_access_mode)(((rd >> i & 1u) ? STARPU_R : 0) | ((wr >> i & 1u) ? STARPU_W : 0));
    }
    if (nres && !a->fused) { d[tq_blas_buf_partial(a)].handle = partial; d[tq_blas_buf_partial(a)].mode = STARPU_W; }
    if (nres) { d[tq_blas_buf_scratch(a)].handle = scratch ? scratch : tq_codelets_scratch(); d[tq_blas_buf_scratch(a)].mode = STARPU_SCRATCH; }
    if (a->use_scalars) {
        const int k = tq_blas_buf_scalars(a);
        d[k].handle = scalars;
        d[k].mode = a->fused ? STARPU_RW : STARPU_R;
        if (a->snapshot) { d[k + 1].handle = snapshot; d[k + 1].mode = STARPU_W; }
    }
    /* solver tasks (use_scalars) take the variable-buffer codelet: their buffers vary;
     * reductions and solver tasks gate the solver's next step */
    return tq_task_submit_descr(opt, a->use_scalars ? &tq_cl_blas_scalars[a->op] : &tq_cl_blas[a->op], a, sizeof *a, d,
                                tq_blas_nbuffers(a), nres || a->use_scalars ? STARPU_MAX_PRIO : STARPU_DEFAULT_PRIO);
}

int tq_task_reduce_combine(const tq_task_options *opt, const starpu_data_handle_t *partials, int n,
                           starpu_data_handle_t result)
{
    struct starpu_data_descr *descr = malloc((size_t)(n + 1) * sizeof *descr);
    if (!descr) return -ENOMEM;
    for (int i = 0; i < n; i++) { descr[i].handle = partials[i]; descr[i].mode = STARPU_R; }
    descr[n].handle = result;
    descr[n].mode = STARPU_W;
    /* the codelet takes its partial count from the argument (it may run inside a chain) */
    int ret = tq_task_submit_descr(opt, &tq_cl_reduce_combine, &n, sizeof n, descr, n + 1, STARPU_MAX_PRIO);
    free(descr);
    return ret;
}

int tq_task_scalar_combine(const tq_task_options *opt, const tq_scalar_combine_args *a, const starpu_data_handle_t *partials,
                           starpu_data_handle_t scalars, starpu_data_handle_t snapshot)
{
    const int n = a->n + 1 + (a->snapshot ? 1 : 0);
    struct starpu_data_descr *descr = malloc((size_t)n * sizeof *descr);
    if (!descr) return -ENOMEM;
    int k = 0;   /* a peer partial (bit t of a->sync.remote) is not a buffer */
    for (int i = 0; i < a->n; i++)
        if (i >= 64 || !(a->sync.remote >> i & 1u)) { descr[k].handle = partials[i]; descr[k++].mode = STARPU_R; }
    descr[k].handle = scalars;
    descr[k++].mode = STARPU_RW;
    if (a->snapshot) { descr[k].handle = snapshot; descr[k++].mode = STARPU_W; }
    int ret = tq_task_submit_descr(opt, &tq_cl_scalar_combine, a, sizeof *a, descr, k, STARPU_MAX_PRIO);
    free(descr);
    return ret;
}

int tq_task_field_convert(const tq_task_options *opt, const tq_field_convert_args *a, starpu_data_handle_t src,
                          starpu_data_handle_t dst)
{
    struct starpu_data_descr d[2] = {{src, STARPU_R}, {dst, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_field_convert, a, sizeof *a, d, 2, STARPU_DEFAULT_PRIO);
}

int tq_task_random_field(const tq_task_options *opt, const tq_random_field_args *a, starpu_data_handle_t dst)
{
    struct starpu_data_descr d = {dst, STARPU_W};
    return tq_task_submit_descr(opt, &tq_cl_random_field, a, sizeof *a, &d, 1, STARPU_DEFAULT_PRIO);
}
