/* Random vector field codelet (random_field.h): CPU implementation, codelet and model. */
#include "config.h"
#include "tq_codelets.h"
#include "random_field.h"

static void random_field_cpu(void *buffers[], void *cl_arg)
{
    const tq_random_field_args *a = (const tq_random_field_args *)cl_arg;
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    for (int64_t s = 0; s < a->block_cb; s++) tq_random_field_site(a, out, s);
}

static struct starpu_perfmodel random_field_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_random_field_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_random_field = {
    .cpu_funcs = {random_field_cpu},
    .cpu_funcs_name = {"random_field_cpu"},
    TQ_CUDA_IMPL(tq_random_field_cuda)
    .nbuffers = 1,
    .modes = {STARPU_W},
    .model = &random_field_model,
    .name = "tq_random_field",
};
