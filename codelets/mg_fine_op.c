/* The Wilson-clover matrix as a stencil-form operator, the fine level of multigrid (CPU;
 * per-site arithmetic in kernels/mg_fine_op_site.h), per block as src/solvers/mg_fine_op.c
 * submits it. Buffers:
 *   local:  gauge of parity a->parity (R), links of that parity (W), clover term of that
 *           parity (R, with a->clover)
 *   pack:   links of parity 0 and 1 (R), faces (W) x nfaces (only the upper ones written)
 *   back:   links of parity 0 and 1 (RW), faces read (R) x nfaces
 * (the argument's nfaces: a codelet may run inside a chain task, whose buffers are more).
 * CUDA versions: codelets/mg_cuda.cu. */
#include "config.h"
#include "tq_codelets.h"
#include "kernels/mg_fine_op_site.h"

#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

static void fine_local_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_fine_args *a = (const tq_mg_fine_args *)cl_arg;
    const void *clover = a->clover ? PTR(2) : NULL;
    for (int64_t s = 0; s < a->cb; s++) tq_mg_fine_local_site(a, PTR(0), clover, PTR(1), a->parity, s);
}

static void fine_pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_fine_args *a = (const tq_mg_fine_args *)cl_arg;
    void *faces[8];
    for (int i = 0; i < a->nfaces && i < 8; i++) faces[i] = PTR(2 + i);
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->cb; s++) tq_mg_fine_pack_site(a, PTR(p), faces, p, s);
}

static void fine_back_cpu(void *buffers[], void *cl_arg)
{
    const tq_mg_fine_args *a = (const tq_mg_fine_args *)cl_arg;
    void *const links[2] = {PTR(0), PTR(1)};
    const void *from[8];
    for (int i = 0; i < a->nfaces && i < 8; i++) from[i] = PTR(2 + i);
    for (int p = 0; p < 2; p++)
        for (int64_t s = 0; s < a->cb; s++) tq_mg_fine_back_site(a, links, from, p, s);
}

static struct starpu_perfmodel fine_local_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_fine_local_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel fine_pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_fine_pack_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel fine_back_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_mg_fine_back_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_mg_fine_local = {
    .cpu_funcs = {fine_local_cpu}, .cpu_funcs_name = {"fine_local_cpu"}, TQ_CUDA_IMPL(tq_mg_fine_local_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &fine_local_model, .name = "tq_mg_fine_local",
};
struct starpu_codelet tq_cl_mg_fine_pack = {
    .cpu_funcs = {fine_pack_cpu}, .cpu_funcs_name = {"fine_pack_cpu"}, TQ_CUDA_IMPL(tq_mg_fine_pack_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &fine_pack_model, .name = "tq_mg_fine_pack",
};
struct starpu_codelet tq_cl_mg_fine_back = {
    .cpu_funcs = {fine_back_cpu}, .cpu_funcs_name = {"fine_back_cpu"}, TQ_CUDA_IMPL(tq_mg_fine_back_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &fine_back_model, .name = "tq_mg_fine_back",
};
