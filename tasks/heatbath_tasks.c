/* Insert function for the quenched generator's sub-step codelet. */
#include "tq_tasks.h"
#include "taskqcd.h"

#include <stdlib.h>
#include <string.h>

int tq_task_heatbath(const tq_heatbath_args *a, starpu_data_handle_t *const *fields, starpu_data_handle_t refused)
{
    const int written = 2 * a->mu + a->parity;
    const int n = 7 * a->nslab + 2;
    struct starpu_task *task = starpu_task_create();
    task->cl = &tq_cl_heatbath;
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
    int k = 0;
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < a->nslab; s++) {
            if (f == written && s != a->slab) continue;
            STARPU_TASK_SET_HANDLE(task, fields[f][s], k);
            STARPU_TASK_SET_MODE(task, f == written ? STARPU_RW : STARPU_R, k);
            k++;
        }
    STARPU_TASK_SET_HANDLE(task, refused, k);
    STARPU_TASK_SET_MODE(task, STARPU_RW, k);
    tq_heatbath_args *arg = malloc(sizeof *arg);
    if (!arg) { starpu_task_destroy(task); return -ENOMEM; }
    memcpy(arg, a, sizeof *arg);
    task->cl_arg = arg;
    task->cl_arg_size = sizeof *arg;
    task->cl_arg_free = 1;
    tq_where w = tq_get_placement();
    if (w == TQ_WHERE_CPU) task->where = STARPU_CPU;
    else if (w == TQ_WHERE_CUDA) task->where = STARPU_CUDA;
    int ret = starpu_task_submit(task);
    if (ret) starpu_task_destroy(task);
    return ret;
}
