/* The second stage of the CUDA reductions (BLAS codelets, the Wilson kernel's epilogue):
 * combining the per-block results in a fixed order, so that a reduction is reproducible bit
 * for bit on a given kind of GPU. Included by the .cu files that need it. */
#ifndef TQ_REDUCE_CUDA_CUH
#define TQ_REDUCE_CUDA_CUH

#include "tq_codelets.h"

/* Threads of the one-block kernels that end a reduction: every block's partials are loaded
 * in one round (a grid has at most 4 x TQ_FINAL_THREADS blocks). */
#define TQ_FINAL_THREADS 1024
static_assert(TQ_REDUCE_MAX_BLOCKS <= 4 * TQ_FINAL_THREADS, "one round of loads");

/* One block of TQ_FINAL_THREADS threads sums the per-block results (stride doubles per block
 * in the scratch, nres <= R of them): thread t adds blocks t, t + T, t + 2T, t + 3T (loaded
 * together), each warp adds its threads' sums with shuffles in a fixed tree, and warp 0 the
 * warps' sums; thread 0 ends with them in sum[]. Every addition's order depends only on
 * nblocks. For 4096 blocks of 7 results under ncu on an H200: 9.6 us, against 13.4 us
 * with 256 threads (four rounds of loads) and a tree in shared memory. */
template <int R>
static __device__ void block_results(const double *scratch, int nblocks, int nres, int stride, double *sum)
{
    constexpr int T = TQ_FINAL_THREADS, W = T / 32;
    __shared__ double warp_sums[R][W];
    const int t = threadIdx.x, lane = t & 31, warp = t >> 5;
    double v[4][R];
#pragma unroll
    for (int j = 0; j < 4; j++)
#pragma unroll
        for (int r = 0; r < R; r++) {
            const int i = t + j * T;
            v[j][r] = r < nres && i < nblocks ? scratch[i * stride + r] : 0.0;
        }
#pragma unroll
    for (int r = 0; r < R; r++) {
        double a = ((v[0][r] + v[1][r]) + v[2][r]) + v[3][r];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(0xffffffffu, a, o);
        if (lane == 0) warp_sums[r][warp] = a;
    }
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int r = 0; r < R; r++) {
            double a = lane < W ? warp_sums[r][lane] : 0.0;
#pragma unroll
            for (int o = 16; o > 0; o >>= 1) a += __shfl_down_sync(0xffffffffu, a, o);
            sum[r] = a;
        }
    }
}

/* The snapshot's mirror (kernels/solver_scalars.h), by every thread of one block once s
 * holds the final values: value t from thread t, then, once all of them are visible to the
 * host, the sequence number from thread 0. */
static __device__ void mirror_block(tq_mirror_ref mirror, const double *s)
{
    if (!mirror.m) return;
    const int t = threadIdx.x;
    if (t < TQ_NSCALARS) mirror.m->v[t] = s[t];
    __threadfence_system();
    __syncthreads();
    if (t == 0) *(volatile long long *)&mirror.m->seq = mirror.seq;
}

/* The end of a solver reduction on the GPU, called by every thread of one block: the
 * solver scalars come into shared memory together, thread 0 stores the sums (sum, nres
 * of them, valid in thread 0) and runs the scalar program there (tq_scalars_finish), and
 * the block writes them back, to the snapshot (snap, or NULL) and to its mirror. On global
 * memory each of thread 0's dependent steps and each snapshot element waited for a memory
 * round trip: the final kernel took 8-17 us instead of a few. frozen: only the snapshot
 * (and its mirror) is written. */
static __device__ void scalars_finish_block(double *scal, double *snap, tq_mirror_ref mirror, int frozen, int guard,
                                            int dst, int nres, const double *sum, const tq_scalar_instr *prog,
                                            int nprog)
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
    mirror_block(mirror, s);
}

/* The end of a reduction into the solver scalars (a fused BLAS reduction, a Wilson
 * epilogue), one block of TQ_FINAL_THREADS threads: the nblocks partials (stride doubles
 * apart, at most R results) summed, then scalars_finish_block. frozen: only the snapshot is
 * written. */
template <int R>
static __device__ void reduce_into_scalars(const double *scratch, int nblocks, int nres, int stride, int frozen,
                                           int guard, int dst, const tq_scalar_instr *prog, int nprog,
                                           double *scal, double *snap, tq_mirror_ref mirror)
{
    double sum[R];
#pragma unroll
    for (int r = 0; r < R; r++) sum[r] = 0.0;
    if (!frozen) block_results<R>(scratch, nblocks, nres, stride, sum);
    scalars_finish_block(scal, snap, mirror, frozen, guard, dst, nres, sum, prog, nprog);
}

#endif
