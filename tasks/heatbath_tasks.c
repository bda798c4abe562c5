/* Insert functions for the quenched generator's codelets: the sweep sub-step, the
 * measurement and the reunitarisation. */
#include "tq_tasks.h"

#include <stdlib.h>

int tq_task_heatbath(const tq_task_options *opt, const tq_heatbath_args *a, starpu_data_handle_t *const *fields, starpu_data_handle_t *const *faces,
                     starpu_data_handle_t refused)
{
    const int written = 2 * a->mu + a->parity;
    const int n = a->halo ? 8 + 14 + 1 : 7 * a->nslab + 2;
    struct starpu_data_descr *d = malloc((size_t)n * sizeof *d);
    if (!d) return -ENOMEM;
    int k = 0;
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < a->nslab; s++) {
            if ((f == written || a->halo) && s != a->slab) continue;
            d[k].handle = fields[f][s];
            d[k++].mode = f == written ? STARPU_RW : STARPU_R;
        }
    const int below = (a->slab + a->nslab - 1) % a->nslab, above = (a->slab + 1) % a->nslab;
    for (int f = 0; a->halo && f < 8; f++) {
        if (f == written) continue;
        d[k].handle = faces[f][2 * below + 1]; d[k++].mode = STARPU_R;   /* the last slice below */
        d[k].handle = faces[f][2 * above]; d[k++].mode = STARPU_R;       /* the first slice above */
    }
    d[k].handle = refused;
    d[k].mode = STARPU_RW;
    int ret = tq_task_submit_descr(opt, &tq_cl_heatbath, a, sizeof *a, d, n, STARPU_DEFAULT_PRIO);
    free(d);
    return ret;
}

int tq_task_gauge_measure(const tq_task_options *opt, const tq_heatbath_args *a, starpu_data_handle_t *const *fields,
                          starpu_data_handle_t *const *faces, starpu_data_handle_t result, starpu_data_handle_t line)
{
    struct starpu_data_descr d[8 + 8 + 2];
    int k = 0;
    for (int f = 0; f < 8; f++) { d[k].handle = fields[f][a->slab]; d[k++].mode = STARPU_R; }
    const int above = (a->slab + 1) % a->nslab;
    for (int f = 0; a->halo && f < 8; f++) { d[k].handle = faces[f][2 * above]; d[k++].mode = STARPU_R; }
    d[k].handle = result; d[k++].mode = STARPU_W;
    d[k].handle = line; d[k++].mode = STARPU_W;
    return tq_task_submit_descr(opt, &tq_cl_gauge_measure, a, sizeof *a, d, k, STARPU_DEFAULT_PRIO);
}

int tq_task_gauge_line_mul(const tq_task_options *opt, starpu_data_handle_t below, starpu_data_handle_t line)
{
    struct starpu_data_descr d[2] = {{below, STARPU_R}, {line, STARPU_RW}};
    return tq_task_submit_descr(opt, &tq_cl_gauge_line_mul, NULL, 0, d, 2, STARPU_DEFAULT_PRIO);
}

int tq_task_gauge_line_trace(const tq_task_options *opt, starpu_data_handle_t line, starpu_data_handle_t result)
{
    struct starpu_data_descr d[2] = {{line, STARPU_R}, {result, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_gauge_line_trace, NULL, 0, d, 2, STARPU_DEFAULT_PRIO);
}

int tq_task_gauge_reunitarize(const tq_task_options *opt, starpu_data_handle_t links)
{
    struct starpu_data_descr d = {.handle = links, .mode = STARPU_RW};
    return tq_task_submit_descr(opt, &tq_cl_gauge_reunitarize, NULL, 0, &d, 1, STARPU_DEFAULT_PRIO);
}

int tq_task_gauge_face_pack(const tq_task_options *opt, const tq_heatbath_args *a, starpu_data_handle_t slab, starpu_data_handle_t first,
                            starpu_data_handle_t last)
{
    struct starpu_data_descr d[3] = {{slab, STARPU_R}, {first, STARPU_W}, {last, STARPU_W}};
    /* the neighbours' next sub-step waits for the faces */
    return tq_task_submit_descr(opt, &tq_cl_gauge_face_pack, a, sizeof *a, d, 3, STARPU_MAX_PRIO);
}
