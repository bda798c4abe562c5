/* The one way tasks/ builds and submits a task: buffers with their modes (dynamic arrays
 * beyond STARPU_NMAXBUFS), a private copy of the codelet's arguments, the priority, and the
 * placement chosen with tq_set_placement. */
#include "tq_tasks.h"
#include "taskqcd.h"

#include <stdlib.h>
#include <string.h>

int tq_task_submit_descr(struct starpu_codelet *cl, const void *arg, size_t asize, const struct starpu_data_descr *d,
                         int n, int priority)
{
    struct starpu_task *task = starpu_task_create();
    task->cl = cl;
    task->nbuffers = n;
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
        STARPU_TASK_SET_HANDLE(task, d[i].handle, i);
        STARPU_TASK_SET_MODE(task, d[i].mode, i);
    }
    if (asize) {
        void *copy = malloc(asize);
        if (!copy) { starpu_task_destroy(task); return -ENOMEM; }
        memcpy(copy, arg, asize);
        task->cl_arg = copy;
        task->cl_arg_size = asize;
        task->cl_arg_free = 1;
    }
    task->priority = priority;
    tq_where w = tq_get_placement();
    if (w == TQ_WHERE_CPU) task->where = STARPU_CPU;
    else if (w == TQ_WHERE_CUDA) task->where = STARPU_CUDA;
    int ret = starpu_task_submit(task);
    if (ret) starpu_task_destroy(task);
    return ret;
}
