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

/* The end of a solver reduction on the GPU, called by every thread of one block: the
 * solver scalars come into shared memory together, thread 0 stores the sums (sum, nres
 * of them, valid in thread 0) and runs the scalar program there (tq_scalars_finish), and
 * the block writes them back and to the snapshot (snap, or NULL). On global memory each of
 * thread 0's dependent steps and each snapshot element waited for a memory round trip: the
 * final kernel took 8-17 us instead of a few. frozen: only the snapshot is written. */
static __device__ void scalars_finish_block(double *scal, double *snap, int frozen, int guard, int dst, int nres,
                                            const double *sum, const tq_scalar_instr *prog, int nprog)
{
    __shared__ double s[TQ_NSCALARS];
    const int t = threadIdx.x;
    if (t < TQ_NSCALARS) s[t] = scal[t];
    __syncthreads();
    if (t == 0 && !frozen) tq_scalars_finish(s, guard, dst, nres, sum, prog, nprog);
    __syncthreads();
    if (t < TQ_NSCALARS) {
        if (!frozen) scal[t] = s[t];
        if (snap) snap[t] = s[t];
    }
}

/* The end of a reduction into the solver scalars (a fused BLAS reduction, a Wilson
 * epilogue), one block: the nblocks partials (stride doubles apart, at most R results)
 * summed, then scalars_finish_block. frozen: only the snapshot is written. */
template <int R>
static __device__ void reduce_into_scalars(const double *scratch, int nblocks, int nres, int stride, int frozen,
                                           int guard, int dst, const tq_scalar_instr *prog, int nprog,
                                           double *scal, double *snap)
{
    __shared__ double sh[R][TQ_REDUCE_THREADS];
    if (!frozen) block_results(scratch, nblocks, nres, stride, sh);
    double sum[R];
    for (int r = 0; r < R; r++) sum[r] = !frozen && r < nres ? sh[r][0] : 0.0;
    scalars_finish_block(scal, snap, frozen, guard, dst, nres, sum, prog, nprog);
}

#endif
