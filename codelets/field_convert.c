/* Field precision conversion codelet: CPU implementation, codelet and perf model. Per-site
 * work: tq_layout_convert_site (kernels/field_layout.h), shared with the CUDA version.
 *
 * Buffers: the source block and parity (R), the destination (W), both of
 * tq_field_convert_args' layouts. */
#include "config.h"
#include "tq_codelets.h"

static void field_convert_cpu(void *buffers[], void *cl_arg)
{
    const tq_field_convert_args *a = (const tq_field_convert_args *)cl_arg;
    const void *src = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    void *dst = (void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    for (int64_t s = 0; s < a->src.stride; s++) tq_layout_convert_site(src, &a->src, dst, &a->dst, s);
}

static struct starpu_perfmodel field_convert_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_field_convert_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_field_convert = {
    .cpu_funcs = {field_convert_cpu},
    .cpu_funcs_name = {"field_convert_cpu"},
    TQ_CUDA_IMPL(tq_field_convert_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &field_convert_model,
    .name = "tq_field_convert",
};
