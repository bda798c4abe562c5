/* Insert function for the quenched generator's sub-step codelet. */
#include "tq_tasks.h"

#include <stdlib.h>

int tq_task_heatbath(const tq_heatbath_args *a, starpu_data_handle_t *const *fields, starpu_data_handle_t refused)
{
    const int written = 2 * a->mu + a->parity;
    const int n = 7 * a->nslab + 2;
    struct starpu_data_descr *d = malloc((size_t)n * sizeof *d);
    if (!d) return -ENOMEM;
    int k = 0;
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < a->nslab; s++) {
            if (f == written && s != a->slab) continue;
            d[k].handle = fields[f][s];
            d[k++].mode = f == written ? STARPU_RW : STARPU_R;
        }
    d[k].handle = refused;
    d[k].mode = STARPU_RW;
    int ret = tq_task_submit_descr(&tq_cl_heatbath, a, sizeof *a, d, n, STARPU_DEFAULT_PRIO);
    free(d);
    return ret;
}
