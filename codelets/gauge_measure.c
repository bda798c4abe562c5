/* The quenched generator's measurement and reunitarisation codelets: CPU implementations,
 * codelets and perf models (per-site arithmetic: kernels/gauge_measure_site.h).
 *
 * tq_cl_gauge_measure, one task per block: the block's 8 link fields in the order f = 2 mu +
 * parity, then the upper faces it reads (tq_generator_pointers, codelets/heatbath.c) (R),
 * then the block's result vector (tq_measure_result_len(2 block_cb) doubles, W: the
 * plaquette sums first, the CUDA blocks' partials after them) and its Polyakov line vector
 * (18 reals per site of the block's time slice, W: the product of the block's time links).
 * tq_cl_gauge_line_mul: the lines of the blocks below in t (R), this block's lines (RW) <-
 * their product. tq_cl_gauge_line_trace: a column's whole lines (R), a result vector (W: the
 * Polyakov sums in TQ_MEASURE_NSUMS slots 2, 3, slots 0, 1 zero).
 * tq_cl_gauge_reunitarize: one block of one field (RW), projected back to SU(3). */
#include "config.h"
#include "tq_codelets.h"

static void gauge_measure_cpu(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    const int k = tq_generator_pointers(buffers, a, 1, &P);
    double *result = (double *)STARPU_VECTOR_GET_PTR(buffers[k]), *line = (double *)STARPU_VECTOR_GET_PTR(buffers[k + 1]);
    double v[TQ_MEASURE_NSUMS] = {0};
    for (int64_t i = 0; i < 2 * a->block_cb; i++) tq_gauge_measure_site(&P, a, i, v, line);
    for (int k = 0; k < TQ_MEASURE_NSUMS; k++) result[k] = v[k];
}

static void gauge_line_mul_cpu(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    const double *below = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    double *line = (double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[1]) / 18;
    for (int64_t s = 0; s < n; s++) tq_gauge_line_mul_site(below, line, s);
}

static void gauge_line_trace_cpu(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    const double *line = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    double *result = (double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[0]) / 18;
    double v[TQ_MEASURE_NSUMS] = {0};
    for (int64_t s = 0; s < n; s++) tq_gauge_line_trace_site(line, s, v);
    for (int k = 0; k < TQ_MEASURE_NSUMS; k++) result[k] = v[k];
}

static void gauge_reunitarize_cpu(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    double *u = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[0]) / 18;
    for (int64_t l = 0; l < n; l++) tq_su3_reunitarize(u + 18 * l);
}

static struct starpu_perfmodel gauge_measure_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_measure_v2", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel gauge_line_mul_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_line_mul_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel gauge_line_trace_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_line_trace_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel gauge_reunitarize_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_reunitarize_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_gauge_measure = {
    .cpu_funcs = {gauge_measure_cpu},
    .cpu_funcs_name = {"gauge_measure_cpu"},
    TQ_CUDA_IMPL(tq_gauge_measure_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &gauge_measure_model,
    .name = "tq_gauge_measure",
};

struct starpu_codelet tq_cl_gauge_line_mul = {
    .cpu_funcs = {gauge_line_mul_cpu},
    .cpu_funcs_name = {"gauge_line_mul_cpu"},
    TQ_CUDA_IMPL(tq_gauge_line_mul_cuda)
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_RW},
    .model = &gauge_line_mul_model,
    .name = "tq_gauge_line_mul",
};

struct starpu_codelet tq_cl_gauge_line_trace = {
    .cpu_funcs = {gauge_line_trace_cpu},
    .cpu_funcs_name = {"gauge_line_trace_cpu"},
    TQ_CUDA_IMPL(tq_gauge_line_trace_cuda)
    .nbuffers = 2,
    .modes = {STARPU_R, STARPU_W},
    .model = &gauge_line_trace_model,
    .name = "tq_gauge_line_trace",
};

struct starpu_codelet tq_cl_gauge_reunitarize = {
    .cpu_funcs = {gauge_reunitarize_cpu},
    .cpu_funcs_name = {"gauge_reunitarize_cpu"},
    TQ_CUDA_IMPL(tq_gauge_reunitarize_cuda)
    .nbuffers = 1,
    .modes = {STARPU_RW},
    .model = &gauge_reunitarize_model,
    .name = "tq_gauge_reunitarize",
};
