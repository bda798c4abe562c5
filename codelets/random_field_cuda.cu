/* Random vector field codelet: CUDA implementation (asynchronous on the worker's stream),
 * a thread per site; the per-site work is tq_random_field_site, as on the CPU, so both store
 * the same bits. */
#include "config.h"
#include "tq_codelets.h"
#include "random_field.h"

#include <cuda_runtime.h>

#define TQ_RANDOM_FIELD_THREADS 128

__global__ void random_field_kernel(tq_random_field_args a, void *out)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.block_cb) tq_random_field_site(&a, out, s);
}

extern "C" void tq_random_field_cuda(void *buffers[], void *cl_arg)
{
    const tq_random_field_args *a = (const tq_random_field_args *)cl_arg;
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    if (a->block_cb <= 0) return;
    const unsigned grid = (unsigned)((a->block_cb + TQ_RANDOM_FIELD_THREADS - 1) / TQ_RANDOM_FIELD_THREADS);
    random_field_kernel<<<grid, TQ_RANDOM_FIELD_THREADS, 0, tq_cuda_stream()>>>(*a, out);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
