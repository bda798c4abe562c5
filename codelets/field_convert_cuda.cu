/* Field precision conversion codelet: CUDA implementation (asynchronous on the worker's
 * stream), one thread per site; the per-site work is tq_layout_convert_site
 * (kernels/field_layout.h), as on the CPU, so both store the same bits. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define TQ_FIELD_CONVERT_THREADS 128

__global__ void field_convert_kernel(tq_field_convert_args a, const void *src, void *dst)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.src.stride) tq_layout_convert_site(src, &a.src, dst, &a.dst, s);
}

extern "C" void tq_field_convert_cuda(void *buffers[], void *cl_arg)
{
    const tq_field_convert_args *a = (const tq_field_convert_args *)cl_arg;
    const void *src = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    void *dst = (void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    if (a->src.stride <= 0) return;
    const unsigned grid = (unsigned)((a->src.stride + TQ_FIELD_CONVERT_THREADS - 1) / TQ_FIELD_CONVERT_THREADS);
    field_convert_kernel<<<grid, TQ_FIELD_CONVERT_THREADS, 0, tq_cuda_stream()>>>(*a, src, dst);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
