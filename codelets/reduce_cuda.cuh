/* The second stage of the CUDA reductions (BLAS codelets, the Wilson kernel's epilogue):
 * combining the per-block results in a fixed order, so that a reduction is reproducible bit
 * for bit on a given kind of GPU. Included by the .cu files that need it. */
#ifndef TQ_REDUCE_CUDA_CUH
#define TQ_REDUCE_CUDA_CUH

#include "tq_codelets.h"

/* One block sums the per-block results (stride doubles per block in the scratch: the BLAS
 * and the Wilson epilogue kernels store at most TQ_BLAS_MAX_RESULTS and TQ_EPI_MAX_RESULTS
 * results): thread t takes blocks t, t + T, ... in order,
 * then a fixed tree; thread 0 ends with the sums. (One thread summing them
 * serially cost ~200 us: a chain of ~1000 dependent global loads.) */
static __device__ void block_results(const double *scratch, int nblocks, int nres, int stride,
                                     double sh[][TQ_REDUCE_THREADS])
{
    for (int r = 0; r < nres; r++) {
        double s = 0.0;
        for (int i = threadIdx.x; i < nblocks; i += TQ_REDUCE_THREADS) s += scratch[i * stride + r];
        sh[r][threadIdx.x] = s;
    }
    __syncthreads();
    for (int w = TQ_REDUCE_THREADS / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            for (int r = 0; r < nres; r++) sh[r][threadIdx.x] += sh[r][threadIdx.x + w];
        __syncthreads();
    }
}

#endif
