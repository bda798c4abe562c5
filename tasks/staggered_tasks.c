/* Insert functions for the improved staggered hopping term (codelets/staggered.c). */
#include "tq_tasks.h"

int tq_task_ks_pack(const tq_task_options *opt, const tq_ks_args *a, starpu_data_handle_t in, starpu_data_handle_t *faces)
{
    struct starpu_data_descr d[9] = {{in, STARPU_R}};
    for (int i = 0; i < a->nfaces; i++) d[1 + i] = (struct starpu_data_descr){faces[i], STARPU_W};
    return tq_task_submit_descr(opt, &tq_cl_ks_pack, a, sizeof *a, d, 1 + a->nfaces, STARPU_MAX_PRIO);
}

int tq_task_ks_interior(const tq_task_options *opt, const tq_ks_args *a, starpu_data_handle_t in,
                        starpu_data_handle_t links, starpu_data_handle_t out)
{
    struct starpu_data_descr d[3] = {{in, STARPU_R}, {links, STARPU_R}, {out, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_ks_interior, a, sizeof *a, d, 3, STARPU_DEFAULT_PRIO);
}

int tq_task_ks_exterior(const tq_task_options *opt, const tq_ks_args *a, starpu_data_handle_t in,
                        starpu_data_handle_t links, starpu_data_handle_t out, starpu_data_handle_t *from)
{
    struct starpu_data_descr d[11] = {{in, STARPU_R}, {links, STARPU_R}, {out, STARPU_RW}};
    for (int i = 0; i < a->nfaces; i++) d[3 + i] = (struct starpu_data_descr){from[i], STARPU_R};
    return tq_task_submit_descr(opt, &tq_cl_ks_exterior, a, sizeof *a, d, 3 + a->nfaces, STARPU_DEFAULT_PRIO);
}

int tq_task_ks_build(const tq_task_options *opt, const tq_ks_build_args *a, starpu_data_handle_t thin,
                     starpu_data_handle_t out)
{
    struct starpu_data_descr d[2] = {{thin, STARPU_R}, {out, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_ks_build, a, sizeof *a, d, 2, STARPU_DEFAULT_PRIO);
}

int tq_task_ks_hisq_w(const tq_task_options *opt, const tq_ks_smear_args *a, starpu_data_handle_t thin,
                      starpu_data_handle_t w)
{
    struct starpu_data_descr d[2] = {{thin, STARPU_R}, {w, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_ks_hisq_w, a, sizeof *a, d, 2, STARPU_DEFAULT_PRIO);
}
