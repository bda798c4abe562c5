/* Clover-term codelet: CUDA implementation (asynchronous on the worker's stream), one
 * thread per site; the per-site arithmetic is kernels/clover_site.h, as on the CPU. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define TQ_CLOVER_THREADS 128

template <int PREC>
__global__ void clover_kernel(tq_clover_args a, const void *K, const void *in, const void *x, void *out,
                              const double *go)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s >= a.cb || (go && *go == 0.0)) return;   /* go: a solver's guard, shut */
    if constexpr (PREC == 8) tq_clover_site(&a, K, in, x, out, s, PREC);
    else tq_clover_site_f(&a, K, in, x, out, s, PREC);
}

extern "C" void tq_clover_cuda(void *buffers[], void *cl_arg)
{
    const tq_clover_args *a = (const tq_clover_args *)cl_arg;
    const void *K, *in, *x;
    void *out;
    const double *go;
    tq_clover_buffers(buffers, a, &K, &in, &x, &out, &go);
    if (a->cb == 0) return;
    cudaStream_t stream = tq_cuda_stream();
    const unsigned grid = (unsigned)((a->cb + TQ_CLOVER_THREADS - 1) / TQ_CLOVER_THREADS);
    switch (a->L_in.prec) {
    case 8: clover_kernel<8><<<grid, TQ_CLOVER_THREADS, 0, stream>>>(*a, K, in, x, out, go); break;
    case 4: clover_kernel<4><<<grid, TQ_CLOVER_THREADS, 0, stream>>>(*a, K, in, x, out, go); break;
    default: clover_kernel<2><<<grid, TQ_CLOVER_THREADS, 0, stream>>>(*a, K, in, x, out, go); break;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
