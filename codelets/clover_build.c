/* Clover-term build codelet: CPU implementation, codelet and perf model. Per-site
 * arithmetic: kernels/clover_build_site.h.
 *
 * Buffers: the local lattice's links in the host API layout (R), the clover fields A and
 * A^-1 of one block and parity (W), and one status word (W: TQ_CLOVER_BUILD_OK, or the
 * smallest local lexicographic site whose clover term is singular). */
#include "config.h"
#include "tq_codelets.h"

static void clover_build_cpu(void *buffers[], void *cl_arg)
{
    const tq_clover_build_args *a = (const tq_clover_build_args *)cl_arg;
    const double *links = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    void *A = (void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    void *Ainv = (void *)STARPU_VECTOR_GET_PTR(buffers[2]);
    uint64_t *status = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[3]);
    *status = TQ_CLOVER_BUILD_OK;
    for (int64_t s = 0; s < a->cb; s++) {
        int64_t lex;
        if (tq_clover_build_site(a, links, s, A, Ainv, &lex) && (uint64_t)lex < *status) *status = (uint64_t)lex;
    }
}

static struct starpu_perfmodel clover_build_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_clover_build_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_clover_build = {
    .cpu_funcs = {clover_build_cpu},
    .cpu_funcs_name = {"clover_build_cpu"},
    TQ_CUDA_IMPL(tq_clover_build_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &clover_build_model,
    .name = "tq_clover_build",
};
