/* Multigrid transfer codelets (CPU; per-site arithmetic in kernels/mg_transfer_site.h):
 * restriction, prolongation, the copy of a null vector into the basis, and the block
 * orthonormalisation of the basis. One task per block; buffers in parity order 0, 1:
 *   restrict:        fine (R) x2, basis (R) x2, coarse (W) x2
 *   prolong:         coarse (R) x2, basis (R) x2, fine (W) x2
 *   basis put:       vector (R) x2, basis (RW; W for vector 0) x2
 *   orthonormalise:  basis (RW) x2, status (W: one int64, the dependent vectors found)
 * All four also on GPUs (codelets/mg_cuda.cu; the orthonormalisation there only for a double
 * or single basis). */
#include "config.h"
#include "tq_codelets.h"
#include "kernels/mg_transfer_site.h"

#include <stdlib.h>

#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

static void restrict_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const void *const fine[2] = {PTR(0), PTR(1)}, *const basis[2] = {PTR(2), PTR(3)};
    void *const coarse[2] = {PTR(4), PTR(5)};
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->coarse_cb; s++) tq_mg_restrict_site(a, fine, basis, coarse, p, s);
}

static void prolong_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const void *const coarse[2] = {PTR(0), PTR(1)}, *const basis[2] = {PTR(2), PTR(3)};
    void *const fine[2] = {PTR(4), PTR(5)};
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->fine_cb; s++) tq_mg_prolong_site(a, coarse, basis, fine, p, s);
}

static void basis_put_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const void *const vec[2] = {PTR(0), PTR(1)};
    void *const basis[2] = {PTR(2), PTR(3)};
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->fine_cb; s++) tq_mg_basis_put_site(a, vec, basis, p, s);
}

static void orthonormalise_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    void *const basis[2] = {PTR(0), PTR(1)};
    int64_t *status = (int64_t *)PTR(2);
    const size_t n = (size_t)a->nvec * (size_t)tq_mg_agg_volume(a) * 12u * (size_t)a->rows * 2u;
    double *w = malloc(n * sizeof *w);
    if (!w) { *status = -1; return; }
    int64_t dependent = 0;
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->coarse_cb; s++) dependent += tq_mg_orthonormalise_site(a, basis, p, s, w);
    free(w);
    *status = dependent;
}

static struct starpu_perfmodel restrict_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_restrict_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel prolong_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_prolong_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel basis_put_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_basis_put_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel orthonormalise_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_orthonormalise_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_mg_restrict = {
    .cpu_funcs = {restrict_cpu}, .cpu_funcs_name = {"restrict_cpu"}, TQ_CUDA_IMPL(tq_mg_restrict_cuda) .nbuffers = 6,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_W},
    .model = &restrict_model, .name = "tq_mg_restrict",
};
struct starpu_codelet tq_cl_mg_prolong = {
    .cpu_funcs = {prolong_cpu}, .cpu_funcs_name = {"prolong_cpu"}, TQ_CUDA_IMPL(tq_mg_prolong_cuda) .nbuffers = 6,
    .modes = {STARPU_R, STARPU_R, STARPU_R, STARPU_R, STARPU_W, STARPU_W},
    .model = &prolong_model, .name = "tq_mg_prolong",
};
struct starpu_codelet tq_cl_mg_basis_put = {
    .cpu_funcs = {basis_put_cpu}, .cpu_funcs_name = {"basis_put_cpu"}, TQ_CUDA_IMPL(tq_mg_basis_put_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &basis_put_model, .name = "tq_mg_basis_put",
};
struct starpu_codelet tq_cl_mg_orthonormalise = {
    .cpu_funcs = {orthonormalise_cpu}, .cpu_funcs_name = {"orthonormalise_cpu"}, TQ_CUDA_IMPL(tq_mg_orthonormalise_cuda) .nbuffers = 3,
    .modes = {STARPU_RW, STARPU_RW, STARPU_W},
    .model = &orthonormalise_model, .name = "tq_mg_orthonormalise",
};
