/* Insert functions for the quenched generator's codelets: the sweep sub-step, the
 * measurement and the reunitarisation. */
#include "tq_tasks.h"


/* The block's fields, then the faces and edges the codelet reads, in its order
 * (tq_generator_pointers); returns the count. */
static int generator_descr(const tq_heatbath_args *a, const tq_generator_handles *h, int measure, int written,
                           struct starpu_data_descr *d)
{
    int k = 0;
    for (int f = 0; f < 8; f++) {
        d[k].handle = h->own[f];
        d[k++].mode = f == written ? STARPU_RW : STARPU_R;
    }
    for (int f = 0; f < 8; f++)
        for (int dir = 0; dir < 4; dir++)
            for (int side = 0; side < 2; side++)
                if (measure ? tq_measure_reads_face(a, f, dir, side) : tq_hb_reads_face(a, f, dir, side)) {
                    d[k].handle = h->face[f][dir][side];
                    d[k++].mode = STARPU_R;
                }
    for (int f = 0; !measure && f < 8; f++)
        for (int nu = 0; nu < 4; nu++)
            if (tq_hb_reads_edge(a, f, nu)) {
                d[k].handle = h->edge[f][nu];
                d[k++].mode = STARPU_R;
            }
    return k;
}

/* at most 8 fields, 64 faces and 32 edges, then two results */
#define TQ_GENERATOR_MAX_BUFFERS (8 + 64 + 32 + 2)

int tq_task_heatbath(const tq_task_options *opt, const tq_heatbath_args *a, const tq_generator_handles *h,
                     starpu_data_handle_t refused)
{
    struct starpu_data_descr d[TQ_GENERATOR_MAX_BUFFERS];
    int k = generator_descr(a, h, 0, 2 * a->mu + a->parity, d);
    d[k].handle = refused;
    d[k++].mode = STARPU_RW;
    return tq_task_submit_descr(opt, &tq_cl_heatbath, a, sizeof *a, d, k, STARPU_DEFAULT_PRIO);
}

int tq_task_gauge_measure(const tq_task_options *opt, const tq_heatbath_args *a, const tq_generator_handles *h,
                          starpu_data_handle_t result, starpu_data_handle_t line)
{
    struct starpu_data_descr d[TQ_GENERATOR_MAX_BUFFERS];
    int k = generator_descr(a, h, 1, -1, d);
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

int tq_task_gauge_face_pack(const tq_task_options *opt, const tq_heatbath_args *a, starpu_data_handle_t field,
                            const starpu_data_handle_t *faces, int nfaces)
{
    struct starpu_data_descr d[1 + 8];
    d[0].handle = field;
    d[0].mode = STARPU_R;
    for (int k = 0; k < nfaces; k++) {
        d[1 + k].handle = faces[k];
        d[1 + k].mode = STARPU_W;
    }
    /* the neighbours' next sub-step waits for the faces */
    return tq_task_submit_descr(opt, &tq_cl_gauge_face_pack, a, sizeof *a, d, 1 + nfaces, STARPU_MAX_PRIO);
}
