/* Insert functions for the BLAS-1 and reduction codelets. */
#include "tq_tasks.h"
#include "taskqcd.h"

#include <stdlib.h>
#include <string.h>

int tq_task_blas(const tq_blas_args *a, const starpu_data_handle_t *operands,
                 starpu_data_handle_t partial, starpu_data_handle_t scalars)
{
    struct starpu_codelet *cl = a->use_scalars ? &tq_cl_blas_scalars[a->op] : &tq_cl_blas[a->op];
    struct starpu_task *task = starpu_task_create();
    int nop = tq_blas_noperands(a->op);
    if (cl->nbuffers > STARPU_NMAXBUFS) {
        task->dyn_handles = malloc((size_t)cl->nbuffers * sizeof *task->dyn_handles);
        if (!task->dyn_handles) { starpu_task_destroy(task); return -ENOMEM; }
    }
    for (int i = 0; i < nop; i++) STARPU_TASK_SET_HANDLE(task, operands[i], i);
    if (tq_blas_nresults(a->op)) {
        STARPU_TASK_SET_HANDLE(task, partial, nop);
        STARPU_TASK_SET_HANDLE(task, tq_codelets_scratch(), nop + 1);
        /* reductions gate the solver's next step */
        task->priority = STARPU_MAX_PRIO;
    }
    if (a->use_scalars) STARPU_TASK_SET_HANDLE(task, scalars, cl->nbuffers - 1);
    task->cl = cl;
    tq_where w = tq_get_placement();
    if (w == TQ_WHERE_CPU) task->where = STARPU_CPU;
    else if (w == TQ_WHERE_CUDA) task->where = STARPU_CUDA;
    tq_blas_args *arg = malloc(sizeof *arg);
    if (!arg) { task->destroy = 1; starpu_task_destroy(task); return -ENOMEM; }
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
                           starpu_data_handle_t scalars)
{
    struct starpu_data_descr *descr = malloc((size_t)(a->n + 1) * sizeof *descr);
    tq_scalar_combine_args *arg = malloc(sizeof *arg);   /* StarPU frees it with the task */
    if (!descr || !arg) { free(descr); free(arg); return -ENOMEM; }
    *arg = *a;
    for (int i = 0; i < a->n; i++) { descr[i].handle = partials[i]; descr[i].mode = STARPU_R; }
    descr[a->n].handle = scalars;
    descr[a->n].mode = STARPU_RW;
    int ret = starpu_task_insert(&tq_cl_scalar_combine, STARPU_DATA_MODE_ARRAY, descr, a->n + 1,
                                 STARPU_CL_ARGS, arg, sizeof *arg, STARPU_PRIORITY, STARPU_MAX_PRIO, 0);
    free(descr);
    return ret;
}
