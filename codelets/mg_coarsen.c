/* Multigrid Galerkin coarse-operator codelets (CPU; per-site arithmetic in
 * kernels/mg_coarsen_site.h), one block each, as src/solvers/mg_coarsen.c submits them
 * through the stencil layer. Buffers:
 *   pack:     basis of parity 0 and 1 (R), faces (W) x nfaces
 *   coarsen:  basis 0, 1 (R), fine links 0, 1 (R), coarse links 0, 1 (W), the block's
 *             status (W: 0, or -1 when the workspace could not be allocated), then the
 *             faces read (R) x nfaces
 * (the argument's nfaces: a codelet may run inside a chain task, whose buffers are more).
 * CUDA versions: codelets/mg_cuda.cu (one thread per coarse matrix entry). */
#include "config.h"
#include "tq_codelets.h"
#include "kernels/mg_coarsen_site.h"

#include <stdlib.h>
#include <string.h>

#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

static void coarsen_pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_coarsen_args *a = (const tq_mg_coarsen_args *)cl_arg;
    const void *const basis[2] = {PTR(0), PTR(1)};
    void *faces[8];
    for (int i = 0; i < a->nfaces && i < 8; i++) faces[i] = PTR(2 + i);
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->t.fine_cb; s++)
            for (int k = 0; k < a->t.nvec; k++) tq_mg_coarsen_pack_vector(a, basis, faces, p, s, k);
}

static void coarsen_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_coarsen_args *a = (const tq_mg_coarsen_args *)cl_arg;
    const void *const basis[2] = {PTR(0), PTR(1)}, *const flinks[2] = {PTR(2), PTR(3)};
    void *const clinks[2] = {PTR(4), PTR(5)};
    int64_t *status = (int64_t *)PTR(6);
    const void *from[8];
    for (int i = 0; i < a->nfaces && i < 8; i++) from[i] = PTR(7 + i);
    double *w = malloc((size_t)tq_mg_coarsen_work(a) * sizeof *w);
    if (!w) { *status = -1; return; }
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->t.coarse_cb; s++) tq_mg_coarsen_site(a, basis, flinks, from, clinks, p, s, w);
    free(w);
    *status = 0;
}

static struct starpu_perfmodel coarsen_pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_coarsen_pack_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel coarsen_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_coarsen_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_mg_coarsen_pack = {
    .cpu_funcs = {coarsen_pack_cpu}, .cpu_funcs_name = {"coarsen_pack_cpu"}, TQ_CUDA_IMPL(tq_mg_coarsen_pack_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &coarsen_pack_model, .name = "tq_mg_coarsen_pack",
};
struct starpu_codelet tq_cl_mg_coarsen = {
    .cpu_funcs = {coarsen_cpu}, .cpu_funcs_name = {"coarsen_cpu"}, TQ_CUDA_IMPL(tq_mg_coarsen_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &coarsen_model, .name = "tq_mg_coarsen",
};
