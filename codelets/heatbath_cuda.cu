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
    if (i >= a.slab_len) return;
    if (tq_heatbath_site(&P, &a, i)) atomicAdd(refused, 1ull);
}

extern "C" void tq_heatbath_cuda(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    uint64_t *refused;
    tq_heatbath_pointers(buffers, a, &P, &refused);
    cudaStream_t stream = starpu_cuda_get_local_stream();
    if (a->slab_len > 0) {
        const unsigned grid = (unsigned)((a->slab_len + TQ_HEATBATH_THREADS - 1) / TQ_HEATBATH_THREADS);
        heatbath_kernel<<<grid, TQ_HEATBATH_THREADS, 0, stream>>>(*a, P, (unsigned long long *)refused);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

extern "C" void tq_gauge_face_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    const double *slab = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const size_t n = (size_t)tq_hb_slice_len(a->dims) * 18;
    cudaStream_t stream = starpu_cuda_get_local_stream();
    cudaMemcpyAsync((void *)STARPU_VECTOR_GET_PTR(buffers[1]), slab, n * sizeof(double), cudaMemcpyDeviceToDevice, stream);
    cudaMemcpyAsync((void *)STARPU_VECTOR_GET_PTR(buffers[2]), slab + (size_t)a->slab_len * 18 - n, n * sizeof(double),
                    cudaMemcpyDeviceToDevice, stream);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
