/* Quenched-generator sweep codelet: CUDA implementation (asynchronous on the worker's
 * stream), one thread per link in double; the per-link arithmetic is
 * kernels/heatbath_site.h, as on the CPU. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define TQ_HEATBATH_THREADS 128

__global__ void heatbath_kernel(tq_heatbath_args a, tq_heatbath_ptrs P, unsigned long long *refused)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= a.block_cb) return;
    if (tq_heatbath_site(&P, &a, i)) atomicAdd(refused, 1ull);
}

extern "C" void tq_heatbath_cuda(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    uint64_t *refused = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[tq_generator_pointers(buffers, a, 0, &P)]);
    cudaStream_t stream = tq_cuda_stream();
    if (a->block_cb > 0) {
        const unsigned grid = (unsigned)((a->block_cb + TQ_HEATBATH_THREADS - 1) / TQ_HEATBATH_THREADS);
        heatbath_kernel<<<grid, TQ_HEATBATH_THREADS, 0, stream>>>(*a, P, (unsigned long long *)refused);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

__global__ void face_pack_kernel(tq_heatbath_args a, int d, int side, const double *src, double *dst)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < tq_hb_face_sites(&a, d)) tq_hb_face_pack_site(&a, d, side, s, src, dst);
}

extern "C" void tq_gauge_face_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    const double *src = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    cudaStream_t stream = tq_cuda_stream();
    int k = 1;
    for (int d = 0; d < 4; d++)
        for (int side = 0; a->split[d] && side < 2; side++) {
            const int64_t n = tq_hb_face_sites(a, d);
            const unsigned grid = (unsigned)((n + TQ_HEATBATH_THREADS - 1) / TQ_HEATBATH_THREADS);
            face_pack_kernel<<<grid, TQ_HEATBATH_THREADS, 0, stream>>>(*a, d, side, src,
                                                                       (double *)STARPU_VECTOR_GET_PTR(buffers[k++]));
        }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
