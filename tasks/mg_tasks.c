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
