/* Insert functions for the multigrid transfer (codelets/mg_transfer.c). */
#include "tq_tasks.h"

static int submit6(const tq_task_options *opt, struct starpu_codelet *cl, const tq_mg_transfer_args *a,
                   starpu_data_handle_t const in[2], starpu_data_handle_t const basis[2], starpu_data_handle_t const out[2])
{
    struct starpu_data_descr d[6] = {
        {in[0], STARPU_R}, {in[1], STARPU_R}, {basis[0], STARPU_R}, {basis[1], STARPU_R}, {out[0], STARPU_W}, {out[1], STARPU_W},
    };
    return tq_task_submit_descr(opt, cl, a, sizeof *a, d, 6, STARPU_DEFAULT_PRIO);
}

int tq_task_mg_restrict(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const fine[2],
                        starpu_data_handle_t const basis[2], starpu_data_handle_t const coarse[2])
{
    return submit6(opt, &tq_cl_mg_restrict, a, fine, basis, coarse);
}

int tq_task_mg_prolong(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const coarse[2],
                       starpu_data_handle_t const basis[2], starpu_data_handle_t const fine[2])
{
    return submit6(opt, &tq_cl_mg_prolong, a, coarse, basis, fine);
}

int tq_task_mg_basis_put(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const vec[2],
                         starpu_data_handle_t const basis[2])
{
    /* the first vector's copy begins the basis: what it leaves of the buffer is written by
     * the others' copies */
    const enum starpu_data_access_mode m = a->k == 0 ? STARPU_W : STARPU_RW;
    struct starpu_data_descr d[4] = {{vec[0], STARPU_R}, {vec[1], STARPU_R}, {basis[0], m}, {basis[1], m}};
    return tq_task_submit_descr(opt, &tq_cl_mg_basis_put, a, sizeof *a, d, 4, STARPU_DEFAULT_PRIO);
}

int tq_task_mg_orthonormalise(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const basis[2],
                              starpu_data_handle_t status)
{
    struct starpu_data_descr d[3] = {{basis[0], STARPU_RW}, {basis[1], STARPU_RW}, {status, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_mg_orthonormalise, a, sizeof *a, d, 3, STARPU_DEFAULT_PRIO);
}

int tq_task_coarse_pack(const tq_task_options *opt, const tq_coarse_face_args *fa, starpu_data_handle_t in,
                        starpu_data_handle_t *faces)
{
    struct starpu_data_descr d[9] = {{in, STARPU_R}};
    int n = 1;
    for (int i = 0; i < fa->a.nfaces && i < 8; i++)   /* NULL: a peer face */
        if (faces[i]) d[n++] = (struct starpu_data_descr){faces[i], STARPU_W};
    return tq_task_submit_descr(opt, &tq_cl_coarse_pack, fa, sizeof *fa, d, n, STARPU_MAX_PRIO);
}

int tq_task_coarse_interior(const tq_task_options *opt, const tq_coarse_args *a, starpu_data_handle_t in_same,
                            starpu_data_handle_t in, starpu_data_handle_t links, starpu_data_handle_t out)
{
    struct starpu_data_descr d[4] = {{in_same, STARPU_R}, {in, STARPU_R}, {links, STARPU_R}, {out, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_coarse_interior, a, sizeof *a, d, 4, STARPU_DEFAULT_PRIO);
}

int tq_task_coarse_hat(const tq_task_options *opt, const tq_coarse_args *a, starpu_data_handle_t links,
                       starpu_data_handle_t hat)
{
    struct starpu_data_descr d[2] = {{links, STARPU_R}, {hat, STARPU_W}};
    return tq_task_submit_descr(opt, &tq_cl_coarse_hat, a, sizeof *a, d, 2, STARPU_DEFAULT_PRIO);
}

int tq_task_coarse_exterior(const tq_task_options *opt, const tq_coarse_face_args *fa, starpu_data_handle_t in_same,
                            starpu_data_handle_t in, starpu_data_handle_t links, starpu_data_handle_t out,
                            starpu_data_handle_t *from)
{
    struct starpu_data_descr d[12] = {{in_same, STARPU_R}, {in, STARPU_R}, {links, STARPU_R}, {out, STARPU_RW}};
    int n = 4;
    for (int i = 0; i < fa->a.nfaces && i < 8; i++)   /* NULL: a peer face */
        if (from[i]) d[n++] = (struct starpu_data_descr){from[i], STARPU_R};
    return tq_task_submit_descr(opt, &tq_cl_coarse_exterior, fa, sizeof *fa, d, n, STARPU_DEFAULT_PRIO);
}

int tq_task_mg_coarsen_pack(const tq_task_options *opt, const tq_mg_coarsen_args *a, starpu_data_handle_t const basis[2],
                            starpu_data_handle_t *faces)
{
    struct starpu_data_descr d[10] = {{basis[0], STARPU_R}, {basis[1], STARPU_R}};
    for (int i = 0; i < a->nfaces; i++) d[2 + i] = (struct starpu_data_descr){faces[i], STARPU_W};
    return tq_task_submit_descr(opt, &tq_cl_mg_coarsen_pack, a, sizeof *a, d, 2 + a->nfaces, STARPU_MAX_PRIO);
}

int tq_task_mg_coarsen(const tq_task_options *opt, const tq_mg_coarsen_args *a, starpu_data_handle_t const basis[2],
                       starpu_data_handle_t const flinks[2], starpu_data_handle_t const clinks[2], starpu_data_handle_t status,
                       starpu_data_handle_t *from)
{
    struct starpu_data_descr d[15] = {
        {basis[0], STARPU_R}, {basis[1], STARPU_R}, {flinks[0], STARPU_R}, {flinks[1], STARPU_R},
        {clinks[0], STARPU_W}, {clinks[1], STARPU_W}, {status, STARPU_W},
    };
    for (int i = 0; i < a->nfaces; i++) d[7 + i] = (struct starpu_data_descr){from[i], STARPU_R};
    return tq_task_submit_descr(opt, &tq_cl_mg_coarsen, a, sizeof *a, d, 7 + a->nfaces, STARPU_DEFAULT_PRIO);
}

int tq_task_mg_fine_local(const tq_task_options *opt, const tq_mg_fine_args *a, starpu_data_handle_t gauge,
                          starpu_data_handle_t clover, starpu_data_handle_t links)
{
    struct starpu_data_descr d[3] = {{gauge, STARPU_R}, {links, STARPU_W}, {clover, STARPU_R}};
    return tq_task_submit_descr(opt, &tq_cl_mg_fine_local, a, sizeof *a, d, a->clover ? 3 : 2, STARPU_DEFAULT_PRIO);
}

int tq_task_mg_fine_pack(const tq_task_options *opt, const tq_mg_fine_args *a, starpu_data_handle_t const links[2],
                         starpu_data_handle_t *faces)
{
    struct starpu_data_descr d[10] = {{links[0], STARPU_R}, {links[1], STARPU_R}};
    for (int i = 0; i < a->nfaces; i++) d[2 + i] = (struct starpu_data_descr){faces[i], STARPU_W};
    return tq_task_submit_descr(opt, &tq_cl_mg_fine_pack, a, sizeof *a, d, 2 + a->nfaces, STARPU_MAX_PRIO);
}

int tq_task_mg_fine_back(const tq_task_options *opt, const tq_mg_fine_args *a, starpu_data_handle_t const links[2],
                         starpu_data_handle_t *from)
{
    struct starpu_data_descr d[10] = {{links[0], STARPU_RW}, {links[1], STARPU_RW}};
    for (int i = 0; i < a->nfaces; i++) d[2 + i] = (struct starpu_data_descr){from[i], STARPU_R};
    return tq_task_submit_descr(opt, &tq_cl_mg_fine_back, a, sizeof *a, d, 2 + a->nfaces, STARPU_DEFAULT_PRIO);
}
