/* Insert functions for the BLAS-1 and reduction codelets. */
#include "tq_tasks.h"
#include "taskqcd.h"

#include <stdlib.h>
#include <string.h>

int tq_task_blas(const tq_blas_args *a, const starpu_data_handle_t *operands,
                 starpu_data_handle_t partial, starpu_data_handle_t scalars, starpu_data_handle_t snapshot)
{
    const int nop = tq_blas_noperands(a->op), nres = tq_blas_nresults(a->op);
    const int n = tq_blas_nbuffers(a);
    starpu_data_handle_t h[TQ_BLAS_MAX_OPERANDS + 4];
    enum starpu_data_access_mode m[TQ_BLAS_MAX_OPERANDS + 4];
    const unsigned rd = tq_blas_reads(a->op), wr = tq_blas_writes(a->op);
    for (int i = 0; i < nop; i++) {
        h[i] = operands[i];
        m[i] = (enum starpu_data_access_mode)(((rd >> i & 1u) ? STARPU_R : 0) | ((wr >> i & 1u) ? STARPU_W : 0));
    }
    if (nres && !a->fused) { h[tq_blas_buf_partial(a)] = partial; m[tq_blas_buf_partial(a)] = STARPU_W; }
    if (nres) { h[tq_blas_buf_scratch(a)] = tq_codelets_scratch(); m[tq_blas_buf_scratch(a)] = STARPU_SCRATCH; }
    if (a->use_scalars) {
        const int k = tq_blas_buf_scalars(a);
        h[k] = scalars;
        m[k] = a->fused ? STARPU_RW : STARPU_R;
        if (a->snapshot) { h[k + 1] = snapshot; m[k + 1] = STARPU_W; }
    }
    struct starpu_task *task = starpu_task_create();
    /* solver tasks (use_scalars) take the variable-buffer codelet and carry their modes */
    task->cl = a->use_scalars ? &tq_cl_blas_scalars[a->op] : &tq_cl_blas[a->op];
    if (a->use_scalars) task->nbuffers = n;
    if (n > STARPU_NMAXBUFS) {
        task->dyn_handles = malloc((size_t)n * sizeof *task->dyn_handles);
        task->dyn_modes = malloc((size_t)n * sizeof *task->dyn_modes);
        if (!task->dyn_handles || !task->dyn_modes) {
            free(task->dyn_handles); free(task->dyn_modes);
            task->dyn_handles = NULL; task->dyn_modes = NULL;
            starpu_task_destroy(task);
            return -ENOMEM;
        }
    }
    for (int i = 0; i < n; i++) {
        STARPU_TASK_SET_HANDLE(task, h[i], i);
        if (a->use_scalars) STARPU_TASK_SET_MODE(task, m[i], i);
    }
    /* reductions gate the solver's next step */
    if (nres || a->use_scalars) task->priority = STARPU_MAX_PRIO;
    tq_where w = tq_get_placement();
    if (w == TQ_WHERE_CPU) task->where = STARPU_CPU;
    else if (w == TQ_WHERE_CUDA) task->where = STARPU_CUDA;
    tq_blas_args *arg = malloc(sizeof *arg);
    if (!arg) { starpu_task_destroy(task); return -ENOMEM; }
    memcpy(arg, a, sizeof *arg);
    task->cl_arg = arg;
    task->cl_arg_size = sizeof *arg;
    task->cl_arg_free = 1;
    int ret = starpu_task_submit(task);
    if (ret) starpu_task_destroy(task);
    return ret;
}

int tq_task_reduce_combine(const starpu_data_handle_t *partials, int n,
                           starpu_data_handle_t result)
{
    struct starpu_data_descr *descr = malloc((size_t)(n + 1) * sizeof *descr);
    if (!descr) return -ENOMEM;
    for (int i = 0; i < n; i++) { descr[i].handle = partials[i]; descr[i].mode = STARPU_R; }
    descr[n].handle = result;
    descr[n].mode = STARPU_W;
    int ret = starpu_task_insert(&tq_cl_reduce_combine, STARPU_DATA_MODE_ARRAY, descr, n + 1,
                                 STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
    free(descr);
    return ret;
}

int tq_task_scalar_combine(const tq_scalar_combine_args *a, const starpu_data_handle_t *partials,
                           starpu_data_handle_t scalars, starpu_data_handle_t snapshot)
{
    const int n = a->n + 1 + (a->snapshot ? 1 : 0);
    struct starpu_data_descr *descr = malloc((size_t)n * sizeof *descr);
    tq_scalar_combine_args *arg = malloc(sizeof *arg);   /* StarPU frees it with the task */
    if (!descr || !arg) { free(descr); free(arg); return -ENOMEM; }
    *arg = *a;
    for (int i = 0; i < a->n; i++) { descr[i].handle = partials[i]; descr[i].mode = STARPU_R; }
    descr[a->n].handle = scalars;
    descr[a->n].mode = STARPU_RW;
    if (a->snapshot) { descr[a->n + 1].handle = snapshot; descr[a->n + 1].mode = STARPU_W; }
    int ret = starpu_task_insert(&tq_cl_scalar_combine, STARPU_DATA_MODE_ARRAY, descr, n,
                                 STARPU_CL_ARGS, arg, sizeof *arg, STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
    free(descr);
    return ret;
}
