/* Clover-term build codelet: CUDA implementation (asynchronous on the worker's stream), one
 * thread per site in double; the per-site arithmetic is kernels/clover_build_site.h, as on
 * the CPU. A one-off set-up kernel: its 6x6 work arrays live in local memory. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define TQ_CLOVER_BUILD_THREADS 128

__global__ void clover_build_kernel(tq_clover_build_args a, const double *links, void *A, void *Ainv,
                                    unsigned long long *status)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s >= a.cb) return;
    int64_t lex;
    if (tq_clover_build_site(&a, links, s, A, Ainv, &lex)) atomicMin(status, (unsigned long long)lex);
}

extern "C" void tq_clover_build_cuda(void *buffers[], void *cl_arg)
{
    const tq_clover_build_args *a = (const tq_clover_build_args *)cl_arg;
    const double *links = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    void *A = (void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    void *Ainv = (void *)STARPU_VECTOR_GET_PTR(buffers[2]);
    unsigned long long *status = (unsigned long long *)STARPU_VECTOR_GET_PTR(buffers[3]);
    cudaStream_t stream = tq_cuda_stream();
    cudaError_t err = cudaMemsetAsync(status, 0xff, sizeof *status, stream);   /* TQ_CLOVER_BUILD_OK */
    if (err == cudaSuccess && a->cb > 0) {
        const unsigned grid = (unsigned)((a->cb + TQ_CLOVER_BUILD_THREADS - 1) / TQ_CLOVER_BUILD_THREADS);
        clover_build_kernel<<<grid, TQ_CLOVER_BUILD_THREADS, 0, stream>>>(*a, links, A, Ainv, status);
        err = cudaGetLastError();
    }
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
