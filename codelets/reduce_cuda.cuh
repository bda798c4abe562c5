/* The second stage of the CUDA reductions (BLAS codelets, the Wilson kernel's epilogue):
 * combining the per-block results in a fixed order, so that a reduction is reproducible bit
 * for bit on a given kind of GPU. Included by the .cu files that need it. */
#ifndef TQ_REDUCE_CUDA_CUH
#define TQ_REDUCE_CUDA_CUH

#include "tq_codelets.h"

/* One block sums the per-block results (stride doubles per block in the scratch: the BLAS
 * and the Wilson epilogue kernels store at most TQ_BLAS_MAX_RESULTS and TQ_EPI_MAX_RESULTS
 * results): thread t takes blocks t, t + T, ... in order, then a fixed tree; thread 0 ends
 * with the sums. The loads of four such blocks are issued together before they are added
 * (same order): a chain of dependent loads costs a memory latency each, ~18 us for 4096
 * blocks of 7 results. (One thread summing them serially cost ~200 us.) */
static __device__ void block_results(const double *scratch, int nblocks, int nres, int stride,
                                     double sh[][TQ_REDUCE_THREADS])
{
    constexpr int R = TQ_EPI_MAX_RESULTS > TQ_BLAS_MAX_RESULTS ? TQ_EPI_MAX_RESULTS : TQ_BLAS_MAX_RESULTS;
    constexpr int T = TQ_REDUCE_THREADS;
    double acc[R];
#pragma unroll
    for (int r = 0; r < R; r++) acc[r] = 0.0;
    int i = threadIdx.x;
    for (; i + 3 * T < nblocks; i += 4 * T) {
        double v[4][R];
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < R; r++) v[j][r] = r < nres ? scratch[(i + j * T) * stride + r] : 0.0;
#pragma unroll
        for (int j = 0; j < 4; j++)
#pragma unroll
            for (int r = 0; r < R; r++) acc[r] += v[j][r];
    }
    for (; i < nblocks; i += T)
#pragma unroll
        for (int r = 0; r < R; r++)
            if (r < nres) acc[r] += scratch[i * stride + r];
#pragma unroll
    for (int r = 0; r < R; r++)
        if (r < nres) sh[r][threadIdx.x] = acc[r];
    __syncthreads();
    for (int w = T / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            for (int r = 0; r < nres; r++) sh[r][threadIdx.x] += sh[r][threadIdx.x + w];
        __syncthreads();
    }
}

#endif
