/* The quenched generator's measurement and reunitarisation codelets: CPU implementations,
 * codelets and perf models (per-site arithmetic: kernels/gauge_measure_site.h).
 *
 * tq_cl_gauge_measure, one task per slab: buffers are every slab of the 8 link fields in
 * the order field f = 2 mu + parity, then slab (R), then the slab's result vector
 * (tq_measure_result_len doubles, W): the TQ_MEASURE_NSUMS sums over the slab's sites of
 * both parities first (the CUDA implementation keeps its block partials after them).
 * tq_cl_gauge_reunitarize: one slab of one field (RW), projected back to SU(3). */
#include "config.h"
#include "tq_codelets.h"

void tq_gauge_measure_pointers(void *buffers[], const tq_heatbath_args *a, tq_heatbath_ptrs *P, double **result)
{
    int k = 0;
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < a->nslab; s++) P->p[f][s] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    *result = (double *)STARPU_VECTOR_GET_PTR(buffers[k]);
}

static void gauge_measure_cpu(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    double *result;
    tq_gauge_measure_pointers(buffers, a, &P, &result);
    double v[TQ_MEASURE_NSUMS] = {0};
    for (int64_t i = 0; i < 2 * a->slab_len; i++) tq_gauge_measure_site(&P, a, i, v);
    for (int k = 0; k < TQ_MEASURE_NSUMS; k++) result[k] = v[k];
}

static void gauge_reunitarize_cpu(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    double *u = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[0]) / 18;
    for (int64_t l = 0; l < n; l++) tq_su3_reunitarize(u + 18 * l);
}

static struct starpu_perfmodel gauge_measure_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_measure_v1"};
static struct starpu_perfmodel gauge_reunitarize_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_reunitarize_v1"};

struct starpu_codelet tq_cl_gauge_measure = {
    .cpu_funcs = {gauge_measure_cpu},
    .cpu_funcs_name = {"gauge_measure_cpu"},
#ifdef TQ_HAVE_CUDA
    .cuda_funcs = {tq_gauge_measure_cuda},
    .cuda_flags = {STARPU_CUDA_ASYNC},
#endif
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &gauge_measure_model,
    .name = "tq_gauge_measure",
};

struct starpu_codelet tq_cl_gauge_reunitarize = {
    .cpu_funcs = {gauge_reunitarize_cpu},
    .cpu_funcs_name = {"gauge_reunitarize_cpu"},
#ifdef TQ_HAVE_CUDA
    .cuda_funcs = {tq_gauge_reunitarize_cuda},
    .cuda_flags = {STARPU_CUDA_ASYNC},
#endif
    .nbuffers = 1,
    .modes = {STARPU_RW},
    .model = &gauge_reunitarize_model,
    .name = "tq_gauge_reunitarize",
};
