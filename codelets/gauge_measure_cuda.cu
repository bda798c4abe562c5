/* The quenched generator's measurement and reunitarisation codelets: CUDA implementations
 * (asynchronous on the worker's stream), in double; per-site arithmetic as on the CPU
 * (kernels/gauge_measure_site.h). The measurement sums in a fixed order (a tree per block,
 * then the blocks in order), so repeated runs give identical bits. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define TQ_REUNIT_THREADS 128

/* This thread's sums v added over the block in a fixed tree; thread 0 stores the block's
 * partials after the result's sums. */
__device__ void block_partials_store(const double v[TQ_MEASURE_NSUMS], double *result)
{
    __shared__ double sh[TQ_MEASURE_NSUMS][TQ_MEASURE_THREADS];
    for (int k = 0; k < TQ_MEASURE_NSUMS; k++) sh[k][threadIdx.x] = v[k];
    __syncthreads();
    for (int w = TQ_MEASURE_THREADS / 2; w > 0; w /= 2) {
        if ((int)threadIdx.x < w)
            for (int k = 0; k < TQ_MEASURE_NSUMS; k++) sh[k][threadIdx.x] += sh[k][threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int k = 0; k < TQ_MEASURE_NSUMS; k++) result[TQ_MEASURE_NSUMS * (1 + blockIdx.x) + k] = sh[k][0];
}

__global__ void gauge_measure_kernel(tq_heatbath_args a, tq_heatbath_ptrs P, double *result, double *line)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    double v[TQ_MEASURE_NSUMS] = {0, 0, 0, 0};
    if (i < 2 * a.block_cb) tq_gauge_measure_site(&P, &a, i, v, line);
    block_partials_store(v, result);
}

__global__ void gauge_line_trace_kernel(const double *line, int64_t n, double *result)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    double v[TQ_MEASURE_NSUMS] = {0, 0, 0, 0};
    if (s < n) tq_gauge_line_trace_site(line, s, v);
    block_partials_store(v, result);
}

__global__ void gauge_line_mul_kernel(const double *below, double *line, int64_t n)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < n) tq_gauge_line_mul_site(below, line, s);
}

/* The blocks' partials, in block order, into result[0..NSUMS-1]; one thread per sum. */
__global__ void gauge_measure_final(double *result, unsigned nblocks)
{
    const int k = threadIdx.x;
    if (k >= TQ_MEASURE_NSUMS) return;
    double s = 0;
    for (unsigned b = 0; b < nblocks; b++) s += result[TQ_MEASURE_NSUMS * (1 + b) + k];
    result[k] = s;
}

__global__ void gauge_reunitarize_kernel(double *u, int64_t n)
{
    const int64_t l = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (l < n) tq_su3_reunitarize(u + 18 * l);
}

extern "C" void tq_gauge_measure_cuda(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    const int k = tq_generator_pointers(buffers, a, 1, &P);
    double *result = (double *)STARPU_VECTOR_GET_PTR(buffers[k]), *line = (double *)STARPU_VECTOR_GET_PTR(buffers[k + 1]);
    cudaStream_t stream = tq_cuda_stream();
    const unsigned grid = (unsigned)((2 * a->block_cb + TQ_MEASURE_THREADS - 1) / TQ_MEASURE_THREADS);
    gauge_measure_kernel<<<grid, TQ_MEASURE_THREADS, 0, stream>>>(*a, P, result, line);
    gauge_measure_final<<<1, 32, 0, stream>>>(result, grid);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

extern "C" void tq_gauge_line_mul_cuda(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    const double *below = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    double *line = (double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[1]) / 18;
    if (n > 0) {
        const unsigned grid = (unsigned)((n + TQ_REUNIT_THREADS - 1) / TQ_REUNIT_THREADS);
        gauge_line_mul_kernel<<<grid, TQ_REUNIT_THREADS, 0, tq_cuda_stream()>>>(below, line, n);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

extern "C" void tq_gauge_line_trace_cuda(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    const double *line = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    double *result = (double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[0]) / 18;
    cudaStream_t stream = tq_cuda_stream();
    const unsigned grid = (unsigned)((n + TQ_MEASURE_THREADS - 1) / TQ_MEASURE_THREADS);
    gauge_line_trace_kernel<<<grid, TQ_MEASURE_THREADS, 0, stream>>>(line, n, result);
    gauge_measure_final<<<1, 32, 0, stream>>>(result, grid);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

extern "C" void tq_gauge_reunitarize_cuda(void *buffers[], void *cl_arg)
{
    (void)cl_arg;
    double *u = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const int64_t n = STARPU_VECTOR_GET_NX(buffers[0]) / 18;
    if (n > 0) {
        const unsigned grid = (unsigned)((n + TQ_REUNIT_THREADS - 1) / TQ_REUNIT_THREADS);
        gauge_reunitarize_kernel<<<grid, TQ_REUNIT_THREADS, 0, tq_cuda_stream()>>>(u, n);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
