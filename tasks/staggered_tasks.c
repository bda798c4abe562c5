/* Insert functions for the improved staggered hopping term (codelets/staggered.c). */
#include "tq_tasks.h"

int tq_task_ks_pack(const tq_task_options *opt, const tq_ks_face_args *fa, starpu_data_handle_t in, starpu_data_handle_t *faces)
{
    struct starpu_data_descr d[9] = {{in, STARPU_R}};
    int n = 1;
    for (int i = 0; i < fa->a.nfaces && i < 8; i++)   /* NULL: a peer face */
        if (faces[i]) d[n++] = (struct starpu_data_descr){faces[i], STARPU_W};
    return tq_task_submit_descr(opt, &tq_cl_ks_pack, fa, sizeof *fa, d, n, STARPU_MAX_PRIO);
}

int tq_task_ks_interior(const tq_task_options *opt, const tq_ks_args *a, starpu_data_handle_t in,
                        starpu_data_handle_t links, starpu_data_handle_t out)
{
    struct starpu_data_descr d[3] = {{in, STARPU_R}, {links, STARPU_R}, {out, STARPU_W}};
    /* a split block's interior skips the sites within reach of its split faces: the
     * exterior writes those, side by side with it */
    tq_task_options o = *opt;
    o.part = a->split[0] || a->split[1] || a->split[2] || a->split[3] ? TQ_PART_INSIDE : TQ_PART_ALL;
    return tq_task_submit_descr(&o, &tq_cl_ks_interior, a, sizeof *a, d, 3, STARPU_DEFAULT_PRIO);
}

int tq_task_ks_exterior(const tq_task_options *opt, const tq_ks_face_args *fa, starpu_data_handle_t in,
                        starpu_data_handle_t links, starpu_data_handle_t out, starpu_data_handle_t *from)
{
    /* out RW: the interior task wrote the other sites */
    struct starpu_data_descr d[11] = {{in, STARPU_R}, {links, STARPU_R}, {out, STARPU_RW}};
    int n = 3;
    for (int i = 0; i < fa->a.nfaces && i < 8; i++)   /* NULL: a peer face */
        if (from[i]) d[n++] = (struct starpu_data_descr){from[i], STARPU_R};
    tq_task_options o = *opt;
    o.part = TQ_PART_FACES;   /* the sites the interior skips */
    return tq_task_submit_descr(&o, &tq_cl_ks_exterior, fa, sizeof *fa, d, n, STARPU_DEFAULT_PRIO);
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
