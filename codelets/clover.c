/* Clover-term codelet (out = K in, or out = x + a K in, K = A or A^-1 of one block and
 * parity): CPU implementation, codelet and perf model. Per-site arithmetic:
 * kernels/clover_site.h.
 *
 * Buffers: K (R), then in (R) and out (W), or out (RW) alone when in_place, then x (R)
 * when xpay, then the solver scalars (R) when guarded (a->guard > 0). */
#include "config.h"
#include "tq_codelets.h"

void tq_clover_buffers(void *buffers[], const tq_clover_args *a, const void **K, const void **in,
                       const void **x, void **out, const double **go)
{
    *K = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    int k = 1;
    if (a->in_place) {
        *out = (void *)STARPU_VECTOR_GET_PTR(buffers[k++]);
        *in = *out;
    } else {
        *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[k++]);
        *out = (void *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    }
    *x = a->xpay ? (const void *)STARPU_VECTOR_GET_PTR(buffers[k++]) : NULL;
    *go = a->guard > 0 ? (const double *)STARPU_VECTOR_GET_PTR(buffers[k]) + a->guard - 1 : NULL;
}

static void clover_cpu(void *buffers[], void *cl_arg)
{
    const tq_clover_args *a = (const tq_clover_args *)cl_arg;
    const void *K, *in, *x;
    void *out;
    const double *go;
    tq_clover_buffers(buffers, a, &K, &in, &x, &out, &go);
    if (go && *go == 0.0) return;   /* a solver's guard is shut */
    switch (a->L_in.prec) {
    case 8: for (int64_t s = 0; s < a->cb; s++) tq_clover_site(a, K, in, x, out, s, 8); break;
    case 4: for (int64_t s = 0; s < a->cb; s++) tq_clover_site_f(a, K, in, x, out, s, 4); break;
    default: for (int64_t s = 0; s < a->cb; s++) tq_clover_site_f(a, K, in, x, out, s, 2); break;
    }
}

static struct starpu_perfmodel clover_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_clover_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_clover = {
    .cpu_funcs = {clover_cpu},
    .cpu_funcs_name = {"clover_cpu"},
    TQ_CUDA_IMPL(tq_clover_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &clover_model,
    .name = "tq_clover",
};
