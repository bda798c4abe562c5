/* BLAS-1 and reduction codelets: CUDA implementations. Launched asynchronously on the
 * worker's stream (STARPU_CUDA_ASYNC); the per-site arithmetic is kernels/blas_site.h,
 * the same code the CPU codelets run. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "reduce_cuda.cuh"

struct blas_bufs { void *p[TQ_BLAS_MAX_OPERANDS]; };

/* A mixed-precision operation (tq_blas_other_precision) on a color-spinor or staggered
 * site: operand 0 and the others in precision P, those tq_blas_other_precision names in Q.
 * The read operands come a group of reals at a time (mixed_group), the written ones are
 * kept whole (a half-precision output's norm is the site's largest magnitude) and stored at
 * the end; the arithmetic is tq_blas_pair's in double, as on the CPU. Each operand's layout is a compile-time constant
 * (mixed_operand), so the site stays in registers: the run-time path, even with constant
 * layouts in an array, kept the site on the stack and ran at a sixth of the copy rate
 * (H200, 32^4 even sites: a half <-> double copy 184-193 us, the reliable update's
 * residual 283 us). */
template <int OP, int P, int Q, int I>
struct mixed_operand {
    static constexpr int prec = (tq_blas_other_precision(OP) >> I & 1u) ? Q : P;
    static constexpr bool read = I < tq_blas_noperands(OP) && (tq_blas_reads(OP) >> I & 1u);
    static constexpr bool written = I < tq_blas_noperands(OP) && (tq_blas_writes(OP) >> I & 1u);
};
#define TQ_MIXED_EACH(F) F(0) F(1) F(2) F(3) F(4) F(5)

/* The reals of a site go in groups of G (4 for color-spinors, 2 for 6-real staggered
 * vectors): every operand's layout holds a group in one chunk, or (double, G = 4) in two. */
template <int NREAL>
__host__ __device__ constexpr int mixed_group(void)
{
    return NREAL % 4 == 0 ? 4 : 2;
}

template <int OP, int P, int Q, int I, int NREAL>
__device__ __forceinline__ void mixed_load(const blas_bufs &b, int64_t s, int64_t stride, int j, double hs[],
                                           double in[][4])
{
    typedef mixed_operand<OP, P, Q, I> o;
    if constexpr (o::read) {
        const tq_layout L = tq_layout_make(o::prec, NREAL, 1, stride);
        if (j == 0 && o::prec == 2) hs[I] = tq_half_scale(b.p[I], &L, s);
        if constexpr (mixed_group<NREAL>() == 4 && o::prec == 8) {
            tq_load_chunk(b.p[I], &L, s, 2 * j, hs[I], in[I]);
            tq_load_chunk(b.p[I], &L, s, 2 * j + 1, hs[I], in[I] + 2);
        } else {
            tq_load_chunk(b.p[I], &L, s, j, hs[I], in[I]);
        }
    }
}

template <int OP, int P, int Q, int I, int NREAL>
__device__ __forceinline__ void mixed_keep(const double v[][2], int k, double w[][NREAL])
{
    if constexpr (mixed_operand<OP, P, Q, I>::written) {
        w[I][k] = v[I][0];
        w[I][k + 1] = v[I][1];
    }
}

template <int OP, int P, int Q, int I, int NREAL>
__device__ __forceinline__ void mixed_store(const blas_bufs &b, int64_t s, int64_t stride, const double w[][NREAL])
{
    typedef mixed_operand<OP, P, Q, I> o;
    if constexpr (o::written) {
        const tq_layout L = tq_layout_make(o::prec, NREAL, 1, stride);
        tq_store_site(b.p[I], &L, s, w[I]);
    }
}

template <int OP, int P, int Q, int NREAL>
__device__ __forceinline__ void mixed_site(const double *c, const blas_bufs &b, int64_t s, int64_t stride, double *acc)
{
    constexpr int G = mixed_group<NREAL>();
    double hs[TQ_BLAS_MAX_OPERANDS], w[TQ_BLAS_MAX_OPERANDS][NREAL];
    double site_acc[TQ_BLAS_MAX_RESULTS] = {0.0};
#pragma unroll
    for (int j = 0; j < NREAL / G; j++) {
        double in[TQ_BLAS_MAX_OPERANDS][4];
#define TQ_LOAD(I) mixed_load<OP, P, Q, I, NREAL>(b, s, stride, j, hs, in);
        TQ_MIXED_EACH(TQ_LOAD)
#undef TQ_LOAD
#pragma unroll
        for (int p = 0; p < G; p += 2) {
            double v[TQ_BLAS_MAX_OPERANDS][2];
            tq_blas_chunk_pair(OP, c, in, p, v, site_acc);
#define TQ_KEEP(I) mixed_keep<OP, P, Q, I, NREAL>(v, G * j + p, w);
            TQ_MIXED_EACH(TQ_KEEP)
#undef TQ_KEEP
        }
    }
#define TQ_STORE(I) mixed_store<OP, P, Q, I, NREAL>(b, s, stride, w);
    TQ_MIXED_EACH(TQ_STORE)
#undef TQ_STORE
#pragma unroll
    for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) acc[r] += site_acc[r];
}

/* PREC and NREAL > 0 fix every operand's precision and reals per site at compile time, so
 * the per-site loops unroll and the site stays in registers; 0 keeps them run-time (uncommon
 * shapes). PREC = 100 P + Q (mixed_prec below): operand 0 and the others in precision P, the
 * operands tq_blas_other_precision names in Q. */
template <int OP, int PREC, int NREAL>
__device__ __forceinline__ void site_op(const tq_blas_args &a, const double *c, const blas_bufs &b, int64_t s,
                                        double *acc)
{
    if constexpr (PREC == 0) {
        tq_blas_site(OP, c, b.p, a.L, s, acc);
    } else if constexpr (PREC >= 100) {
        mixed_site<OP, PREC / 100, PREC % 100, NREAL>(c, b, s, a.L[0].stride, acc);
    } else {
        tq_layout L[TQ_BLAS_MAX_OPERANDS];
#pragma unroll
        for (int i = 0; i < TQ_BLAS_MAX_OPERANDS; i++) {
            L[i].prec = PREC;
            L[i].nreal = NREAL;
            L[i].vec = tq_layout_vec(PREC, NREAL);
            L[i].has_norm = PREC == 2;
            L[i].stride = a.L[0].stride;
        }
        if constexpr (PREC == 2) {
            float cf[TQ_BLAS_MAX_COEFS];
#pragma unroll
            for (int k = 0; k < TQ_BLAS_MAX_COEFS; k++) cf[k] = (float)c[k];
            tq_blas_site_n_f(OP, cf, b.p, L, s, acc, NREAL, tq_layout_vec(PREC, NREAL), 0);
        } else {
            tq_blas_site_n(OP, c, b.p, L, s, acc, NREAL, tq_layout_vec(PREC, NREAL), 0);
        }
    }
}

/* Operations that write single- or half-precision fields and read at least three (the
 * solvers' fused updates): two threads per site (the
 * half-warps of a warp share 16 sites, one taking chunks 0-2 and the other 3-5). For half
 * precision they combine their largest magnitudes for the site's norm with one shuffle
 * before storing; a thread holding a whole site of every output needs too many registers,
 * and computing the outputs twice instead (once for the norms) re-read 15 % of the inputs
 * from memory.
 *
 * The loads are staged in shared memory with cp.async, two rounds of the grid-stride loop
 * deep: the next round's loads are in flight while this round computes. Loading into
 * registers left too few bytes in flight at the occupancy the registers allow: BiCGstab's
 * x/r/p pass (6 fields read, 3 written, 32^4, H200, stand-alone kernels) took 86 us in
 * half precision against 70 us staged and 60 us for 9 plain streams; in single precision,
 * one thread per site with 216 registers, 133 us against 107 us at the copy rate. Each
 * thread reads back only what it staged itself, so no barrier is needed.
 * With one or two fields read, one thread per site streams faster (bench_blas, 2^26 sites,
 * H200: half copy 82 % of the copy rate against 78 % staged, single axpy 100 % against 96 %). */
__host__ __device__ inline bool staged_op(int op)
{
    const unsigned rd = tq_blas_reads(op);
    int nread = 0;
    for (int i = 0; i < TQ_BLAS_MAX_OPERANDS; i++) nread += rd >> i & 1u;
    return tq_blas_writes(op) && nread >= 3;
}
template <int PREC>
struct staged_word { typedef float4 type; };   /* one chunk: 4 floats */
template <>
struct staged_word<2> { typedef uint2 type; };  /* 4 16-bit values */

template <int OP, int PREC, int NREAL>
__host__ __device__ constexpr bool staged_sites_apply(void)
{
    return (PREC == 2 || PREC == 4) && NREAL > 0 && NREAL % 8 == 0;
}

/* Dynamic shared memory of a staged kernel: two stages of every read operand's chunks (and
 * norms, half precision) for each thread. */
template <int PREC>
static size_t staged_bytes(int op, int nreal)
{
    const int nread = __builtin_popcount(tq_blas_reads(op));
    const size_t per_thread = (size_t)nreal / 8 * sizeof(typename staged_word<PREC>::type) + (PREC == 2 ? sizeof(float) : 0);
    return 2 * (size_t)nread * TQ_REDUCE_THREADS * per_thread;
}
extern __shared__ __align__(16) unsigned char tq_blas_stage[];

template <int OP, int PREC, int NREAL>
__device__ __forceinline__ void staged_sites(const double *c, const blas_bufs &b, int64_t n, int64_t stride,
                                             double *acc)
{
    typedef typename staged_word<PREC>::type word;
    constexpr int VEC = 4, NCH = NREAL / VEC / 2, T = TQ_REDUCE_THREADS, HALF = PREC == 2;
    const int nop = tq_blas_noperands(OP);
    const unsigned rd = tq_blas_reads(OP), wr = tq_blas_writes(OP);
    const int nread = __popc(rd);
    word *words = (word *)tq_blas_stage;                      /* [stage][read operand][chunk][thread] */
    float *norms = (float *)(words + 2 * nread * NCH * T);    /* [stage][read operand][thread], half */
    tq_layout L[TQ_BLAS_MAX_OPERANDS];
#pragma unroll
    for (int i = 0; i < TQ_BLAS_MAX_OPERANDS; i++) {
        L[i].prec = PREC;
        L[i].nreal = NREAL;
        L[i].vec = VEC;
        L[i].has_norm = HALF;
        L[i].stride = stride;
    }
    float cf[TQ_BLAS_MAX_COEFS];
#pragma unroll
    for (int k = 0; k < TQ_BLAS_MAX_COEFS; k++) cf[k] = (float)c[k];
    const int t = threadIdx.x, lane = t & 31, h = lane >> 4;
    const int64_t step = (int64_t)gridDim.x * blockDim.x / 2;   /* a multiple of 16 */
    /* the loads of the round at sites from base into stage st; one commit per round */
    auto stage = [&](int64_t base, int st) {
        const int64_t s = base + (lane & 15);
        if (s < n) {
            int k = 0;
#pragma unroll
            for (int i = 0; i < nop; i++)
                if (rd >> i & 1u) {
                    if (HALF)
                        __pipeline_memcpy_async(&norms[(st * nread + k) * T + t], tq_layout_norm_cptr(b.p[i], &L[i]) + s,
                                                sizeof(float));
#pragma unroll
                    for (int cc = 0; cc < NCH; cc++)
                        __pipeline_memcpy_async(&words[((st * nread + k) * NCH + cc) * T + t],
                                                (const word *)b.p[i] + (int64_t)(h * NCH + cc) * stride + s, sizeof(word));
                    k++;
                }
        }
        __pipeline_commit();
    };
    int64_t base = (blockIdx.x * (int64_t)blockDim.x + t - lane) / 2;
    stage(base, 0);
    /* warp-uniform loop: the shuffle needs every lane */
    for (int st = 0; base < n; base += step, st ^= 1) {
        stage(base + step, st ^ 1);
        __pipeline_wait_prior(1);
        const int64_t s = base + (lane & 15);
        const int active = s < n;
        if constexpr (HALF) {
            float out[TQ_BLAS_MAX_WRITTEN][TQ_BLAS_MAX_REALS], m[TQ_BLAS_MAX_WRITTEN] = {0};
            if (active) {
                float hs[TQ_BLAS_MAX_OPERANDS], in[TQ_BLAS_MAX_OPERANDS][4], site_acc[TQ_BLAS_MAX_RESULTS] = {0};
                int k = 0;
#pragma unroll
                for (int i = 0; i < nop; i++)
                    if (rd >> i & 1u) hs[i] = tq_half_scale_of_norm_f(norms[(st * nread + k++) * T + t]);
#pragma unroll
                for (int cc = 0; cc < NCH; cc++) {
                    k = 0;
#pragma unroll
                    for (int i = 0; i < nop; i++)
                        if (rd >> i & 1u) tq_half_chunk4_values_f(words[((st * nread + k++) * NCH + cc) * T + t], hs[i], in[i]);
                    tq_blas_half_chunk_f(OP, cf, in, cc, VEC, site_acc, out, m);
                }
#pragma unroll
                for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) acc[r] += (double)site_acc[r];
            }
#pragma unroll
            for (int o = 0; o < TQ_BLAS_MAX_WRITTEN; o++) m[o] = fmaxf(m[o], __shfl_xor_sync(0xffffffffu, m[o], 16));
            if (active) tq_blas_half_store_f(OP, b.p, L, s, h * NCH, NCH, VEC, out, m, h == 0);
        } else if (active) {
            /* single precision: arithmetic in double, as tq_blas_site_n; each chunk stored
             * when computed */
            double in[TQ_BLAS_MAX_OPERANDS][4], v[TQ_BLAS_MAX_OPERANDS][2], site_acc[TQ_BLAS_MAX_RESULTS] = {0};
#pragma unroll
            for (int cc = 0; cc < NCH; cc++) {
                int k = 0;
#pragma unroll
                for (int i = 0; i < nop; i++)
                    if (rd >> i & 1u) {
                        const float4 w = words[((st * nread + k++) * NCH + cc) * T + t];
                        in[i][0] = w.x; in[i][1] = w.y; in[i][2] = w.z; in[i][3] = w.w;
                    }
#pragma unroll
                for (int p = 0; p < VEC; p += 2) {
                    tq_blas_chunk_pair(OP, c, in, p, v, site_acc);
#pragma unroll
                    for (int i = 0; i < nop; i++)
                        if (wr >> i & 1u) { in[i][p] = v[i][0]; in[i][p + 1] = v[i][1]; }
                }
#pragma unroll
                for (int i = 0; i < nop; i++)
                    if (wr >> i & 1u) tq_store_chunk(b.p[i], &L[i], s, h * NCH + cc, 1, in[i]);
            }
#pragma unroll
            for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) acc[r] += site_acc[r];
        }
    }
    __pipeline_wait_prior(0);
}

/* The grid's threads over the n sites: staged_sites for the operations staged_op names in
 * single or half precision, otherwise one thread per site. */
template <int OP, int PREC, int NREAL>
__device__ __forceinline__ void all_sites(const tq_blas_args &a, const double *c, const blas_bufs &b, int64_t n,
                                          double *acc)
{
    if constexpr (staged_sites_apply<OP, PREC, NREAL>()) {
        if (staged_op(OP)) {
            staged_sites<OP, PREC, NREAL>(c, b, n, a.L[0].stride, acc);
            return;
        }
    }
    for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < n; s += (int64_t)gridDim.x * blockDim.x)
        site_op<OP, PREC, NREAL>(a, c, b, s, acc);
}

/* Single- and half-precision color-spinor kernels (staged_sites_apply): at most 128
 * registers, 2 blocks per SM; the staged kernels' shared memory allows 2 blocks of
 * BiCGstab's x/r/p pass in half precision, 1 in single, and the one-thread-per-site
 * kernels of these shapes fit without spilling. Double and run-time shapes: no cap. */
#define TQ_BLAS_MIN_BLOCKS(STAGED_SHAPE) ((STAGED_SHAPE) ? 2 : 1)

template <int OP, int PREC, int NREAL>
__global__ void __launch_bounds__(TQ_REDUCE_THREADS, TQ_BLAS_MIN_BLOCKS((staged_sites_apply<OP, PREC, NREAL>()))) blas_kernel(tq_blas_args a, blas_bufs b, int64_t n, const double *scal)
{
    if (tq_blas_frozen(&a, scal)) return;
    double acc[TQ_BLAS_MAX_RESULTS] = {0.0};
    double c[TQ_BLAS_MAX_COEFS];
    tq_blas_coefficients(&a, scal, c);   /* scal: solver scalars in device memory, or NULL */
    all_sites<OP, PREC, NREAL>(a, c, b, n, acc);
}

/* Reductions: each thread accumulates a fixed subset of sites (the grid depends only on n
 * and the device model), the block combines in a fixed tree, and reduce_final combines
 * the blocks in a fixed order too (block_results, reduce_cuda.cuh), so the partial sum is
 * reproducible bit for bit on a given kind of GPU. */
template <int OP, int PREC, int NREAL>
__global__ void __launch_bounds__(TQ_REDUCE_THREADS, TQ_BLAS_MIN_BLOCKS((staged_sites_apply<OP, PREC, NREAL>()))) reduce_kernel(tq_blas_args a, blas_bufs b, int64_t n, double *scratch, const double *scal)
{
    constexpr int nres = tq_blas_nresults(OP);
    __shared__ double sh[nres > 0 ? nres : 1][TQ_REDUCE_THREADS];   /* this op's results only */
    if (tq_blas_frozen(&a, scal)) return;   /* the final kernel ignores the scratch then */
    double acc[TQ_BLAS_MAX_RESULTS] = {0.0};
    double c[TQ_BLAS_MAX_COEFS];
    tq_blas_coefficients(&a, scal, c);
    all_sites<OP, PREC, NREAL>(a, c, b, n, acc);
    for (int r = 0; r < nres; r++) sh[r][threadIdx.x] = acc[r];
    __syncthreads();
    for (int w = TQ_REDUCE_THREADS / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            for (int r = 0; r < nres; r++) sh[r][threadIdx.x] += sh[r][threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int r = 0; r < nres; r++) scratch[blockIdx.x * TQ_BLAS_MAX_RESULTS + r] = sh[r][0];
}

__global__ void __launch_bounds__(TQ_FINAL_THREADS) reduce_final(const double *scratch, int nblocks, int nres, double *partial)
{
    double sum[TQ_BLAS_MAX_RESULTS];
    block_results<TQ_BLAS_MAX_RESULTS>(scratch, nblocks, nres, TQ_BLAS_MAX_RESULTS, sum);
    if (threadIdx.x == 0)
        for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) partial[r] = r < nres ? sum[r] : 0.0;
}

/* A fused reduction's end (tq_blas_args.fused): the sums go to the solver scalars and the
 * scalar program runs here, on the GPU, so no partial sum travels to a CPU and back; then
 * the snapshot copy, if any. A frozen task (its guard) only copies the snapshot. */
__global__ void __launch_bounds__(TQ_FINAL_THREADS) reduce_final_scalars(const double *scratch, int nblocks, tq_blas_args a, double *scal, double *snap)
{
    reduce_into_scalars<TQ_BLAS_MAX_RESULTS>(scratch, nblocks, tq_blas_nresults(a.op), TQ_BLAS_MAX_RESULTS,
                                             tq_blas_frozen(&a, scal), a.guard, a.dst, a.prog, a.nprog, scal, snap,
                                             a.mirror);
}

/* The snapshot of a task that is not a fused reduction. */
__global__ void copy_snapshot(const double *scal, double *snap, tq_mirror_ref mirror)
{
    if (threadIdx.x < TQ_NSCALARS) snap[threadIdx.x] = scal[threadIdx.x];
    mirror_block(mirror, scal);
}

/* Thread blocks of kernel k (with smem bytes of dynamic shared memory, which become its
 * limit) that the device runs at once: the grid of a large reduction is exactly one full
 * wave (a grid of a fixed 1024 blocks left a second, partly filled wave wherever the
 * register count allowed fewer than 8 blocks per SM), and so is a staged kernel's grid.
 * Cached per device in cache[]; each device is driven by one worker thread. */
template <class K>
static int64_t resident_blocks(K k, size_t smem, int *cache)
{
    int dev = 0;
    cudaGetDevice(&dev);
    if (dev < 0 || dev >= STARPU_MAXCUDADEVS) return TQ_REDUCE_MAX_BLOCKS / 4;
    if (!cache[dev]) {
        int per_sm = 0, sms = 0;
        if (smem) cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, k, TQ_REDUCE_THREADS, smem);
        cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
        int64_t n = (int64_t)(per_sm > 0 ? per_sm : 1) * (sms > 0 ? sms : 1);
        cache[dev] = (int)(n < TQ_REDUCE_MAX_BLOCKS ? n : TQ_REDUCE_MAX_BLOCKS);
    }
    return cache[dev];
}

template <int OP, int PREC, int NREAL>
static void launch(const tq_blas_args *a, const blas_bufs &b, int64_t n, void *buffers[],
                   cudaStream_t stream)
{
    constexpr bool staged = staged_sites_apply<OP, PREC, NREAL>();
    const size_t smem = staged && staged_op(OP) ? staged_bytes<PREC>(OP, NREAL) : 0;
    const int64_t threads = smem ? 2 * n : n;   /* all_sites */
    int64_t want = (threads + TQ_REDUCE_THREADS - 1) / TQ_REDUCE_THREADS;
    if (want < 1) want = 1;
    double *scal = a->use_scalars ? (double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_scalars(a)]) : NULL;
    double *snap = scal && a->snapshot ? (double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_scalars(a) + 1]) : NULL;
    if (tq_blas_nresults(OP) == 0) {
        static int cache[STARPU_MAXCUDADEVS];
        const int64_t cap = smem ? resident_blocks(blas_kernel<OP, PREC, NREAL>, smem, cache) : 65535;
        const int grid = (int)(want < cap ? want : cap);
        blas_kernel<OP, PREC, NREAL><<<grid, TQ_REDUCE_THREADS, smem, stream>>>(*a, b, n, scal);
        if (snap) copy_snapshot<<<1, TQ_NSCALARS, 0, stream>>>(scal, snap, a->mirror);
        return;
    }
    static int cache[STARPU_MAXCUDADEVS];
    double *scratch = (double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_scratch(a)]);
    const int64_t resident = resident_blocks(reduce_kernel<OP, PREC, NREAL>, smem, cache);
    const int grid = (int)(want < resident ? want : resident);
    reduce_kernel<OP, PREC, NREAL><<<grid, TQ_REDUCE_THREADS, smem, stream>>>(*a, b, n, scratch, scal);
    if (a->fused) {
        reduce_final_scalars<<<1, TQ_FINAL_THREADS, 0, stream>>>(scratch, grid, *a, scal, snap);
    } else {
        double *partial = (double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_partial(a)]);
        reduce_final<<<1, TQ_FINAL_THREADS, 0, stream>>>(scratch, grid, tq_blas_nresults(OP), partial);
        if (snap) copy_snapshot<<<1, TQ_NSCALARS, 0, stream>>>(scal, snap, a->mirror);
    }
}

/* 100 P + Q when the task's operands are color-spinors or staggered color vectors (24 or 6
 * reals, all alike; with norms in half precision) in precision P (operand 0 and the
 * others) and Q (those tq_blas_other_precision names), P != Q; else 0. */
static int mixed_prec(const tq_blas_args *a)
{
    const unsigned other = tq_blas_other_precision(a->op);
    const int nop = tq_blas_noperands(a->op), p = a->L[0].prec, nreal = a->L[0].nreal;
    int q = 0;
    if (nreal != 24 && nreal != 6) return 0;
    for (int i = 0; i < nop; i++) {
        const tq_layout *L = &a->L[i];
        if (L->nreal != nreal || L->has_norm != (L->prec == 2)) return 0;
        if (!(other >> i & 1u)) {
            if (L->prec != p) return 0;
        } else if (q && L->prec != q) {
            return 0;
        } else {
            q = L->prec;
        }
    }
    return q && q != p ? 100 * p + q : 0;
}

template <int OP, int NREAL>
static bool launch_mixed_shape(int code, const tq_blas_args *a, const blas_bufs &b, int64_t n, void *buffers[],
                               cudaStream_t stream)
{
    switch (code) {
    case 804: launch<OP, 804, NREAL>(a, b, n, buffers, stream); return true;
    case 802: launch<OP, 802, NREAL>(a, b, n, buffers, stream); return true;
    case 408: launch<OP, 408, NREAL>(a, b, n, buffers, stream); return true;
    case 402: launch<OP, 402, NREAL>(a, b, n, buffers, stream); return true;
    case 208: launch<OP, 208, NREAL>(a, b, n, buffers, stream); return true;
    case 204: launch<OP, 204, NREAL>(a, b, n, buffers, stream); return true;
    default: return false;
    }
}

template <int OP>
static void launch_mixed(int code, const tq_blas_args *a, const blas_bufs &b, int64_t n, void *buffers[],
                         cudaStream_t stream)
{
    if constexpr (tq_blas_other_precision(OP) != 0u) {   /* may mix precisions: mixed_site */
        if (code && (a->L[0].nreal == 24 ? launch_mixed_shape<OP, 24>(code, a, b, n, buffers, stream)
                                         : launch_mixed_shape<OP, 6>(code, a, b, n, buffers, stream)))
            return;
    }
    launch<OP, 0, 0>(a, b, n, buffers, stream);
}

extern "C" void tq_blas_cuda(void *buffers[], void *cl_arg)
{
    const tq_blas_args *a = (const tq_blas_args *)cl_arg;
    blas_bufs b;
    const int nop = tq_blas_noperands(a->op);
    for (int i = 0; i < TQ_BLAS_MAX_OPERANDS; i++)
        b.p[i] = i < nop ? (void *)STARPU_VECTOR_GET_PTR(buffers[i]) : NULL;
    const int64_t n = a->L[0].stride;
    cudaStream_t stream = tq_cuda_stream();
    /* Specialised kernels for the common shapes (color-spinors and staggered color vectors,
     * in one precision or in two for the mixed-precision operations); everything
     * else takes the run-time path, whose per-site arrays live in local memory (a staggered
     * CG's updates took 4-5 times their bandwidth time there). */
    int prec = a->L[0].prec;
    const int nreal = a->L[0].nreal;
    for (int i = 1; i < nop; i++)
        if (a->L[i].prec != prec || a->L[i].nreal != nreal) prec = 0;
    if (nreal != 24 && nreal != 6) prec = 0;
    switch (a->op) {
#define TQ_BLAS_CASE(OP) case OP: \
        if (prec == 8) nreal == 24 ? launch<OP, 8, 24>(a, b, n, buffers, stream) : launch<OP, 8, 6>(a, b, n, buffers, stream); \
        else if (prec == 4) nreal == 24 ? launch<OP, 4, 24>(a, b, n, buffers, stream) : launch<OP, 4, 6>(a, b, n, buffers, stream); \
        else if (prec == 2) nreal == 24 ? launch<OP, 2, 24>(a, b, n, buffers, stream) : launch<OP, 2, 6>(a, b, n, buffers, stream); \
        else launch_mixed<OP>(mixed_prec(a), a, b, n, buffers, stream); \
        break;
    TQ_BLAS_FOR_EACH_OP(TQ_BLAS_CASE)
#undef TQ_BLAS_CASE
    default: break;
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
    /* peer partials: the sums to the other GPUs' combines */
    if (a->sync.npeer && tq_blas_nresults(a->op) && !a->fused)
        tq_partial_sync_send(&a->sync, (const double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_partial(a)]));
}

/* ---- combine codelets (tq_cl_reduce_combine, tq_cl_scalar_combine) on a GPU -------------
 * The sums are taken in buffer order, starting from 0.0, exactly as the CPU versions do, so
 * the result has the same bits whichever worker combined. The partial buffers are passed
 * a chunk of pointers at a time. */
#define TQ_COMBINE_CHUNK 32
struct partial_chunk { const double *p[TQ_COMBINE_CHUNK]; int n; };

/* sum[r] (r < nres) = (first ? 0 : sum[r]) + the chunk's partials, unless the guard is
 * shut (s: the solver scalars, or NULL: no guard). */
__global__ void combine_chunk(partial_chunk c, double *sum, int nres, int first, const double *s, int guard)
{
    const int r = threadIdx.x;
    if (r >= nres || (s && tq_guard_shut(s, guard))) return;
    double acc = first ? 0.0 : sum[r];
    for (int i = 0; i < c.n; i++) acc += c.p[i][r];
    sum[r] = acc;
}

__global__ void scalar_program(tq_scalar_combine_args a, double *s, double *snap)
{
    const int frozen = tq_guard_shut(s, a.guard);
    scalars_finish_block(s, snap, a.mirror, frozen, 0, 0, 0, NULL, a.prog, a.nprog);
}

/* combine_chunk then scalar_program in one kernel, for at most one chunk of partials: the
 * sums taken in the same order (thread 0), the same bits; one launch and one gap fewer
 * per reduction of several blocks. */
__global__ void combine_program(partial_chunk c, tq_scalar_combine_args a, double *s, double *snap)
{
    const int frozen = tq_guard_shut(s, a.guard);
    double sum[TQ_BLAS_MAX_RESULTS];
#pragma unroll
    for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) sum[r] = 0.0;
    if (threadIdx.x == 0 && !frozen)
        for (int r = 0; r < a.nres; r++)
            for (int i = 0; i < c.n; i++) sum[r] += c.p[i][r];
    scalars_finish_block(s, snap, a.mirror, frozen, 0, a.dst, a.nres, sum, a.prog, a.nprog);
}

/* Partials i0 .. i0 + TQ_COMBINE_CHUNK - 1 (at most n): partial t a buffer, or with peer
 * partials (sync, NULL: none) one of the other GPUs' sums in this GPU's slots; *k the next
 * buffer (the buffers hold the others in order). */
static partial_chunk chunk_of(void *buffers[], int i0, int n, const tq_combine_sync *sync, int *k)
{
    partial_chunk c;
    c.n = n - i0 < TQ_COMBINE_CHUNK ? n - i0 : TQ_COMBINE_CHUNK;
    for (int i = 0; i < c.n; i++) {
        const int t = i0 + i;
        c.p[i] = sync && t < 64 && (sync->remote >> t & 1u) ? sync->slots + (size_t)t * TQ_PEER_SLOT
                                                   : (const double *)STARPU_VECTOR_GET_PTR(buffers[(*k)++]);
    }
    return c;
}

static void combine_partials(void *buffers[], int n, double *sum, int nres, const double *s, int guard,
                             const tq_combine_sync *sync, cudaStream_t stream)
{
    int k = 0;
    for (int i0 = 0; i0 < n; i0 += TQ_COMBINE_CHUNK)
        combine_chunk<<<1, TQ_BLAS_MAX_RESULTS, 0, stream>>>(chunk_of(buffers, i0, n, sync, &k), sum, nres, i0 == 0, s,
                                                            guard);
}

extern "C" void tq_reduce_combine_cuda(void *buffers[], void *cl_arg)
{
    const int n = *(const int *)cl_arg + 1;   /* partials, then the result */
    double *out = (double *)STARPU_VECTOR_GET_PTR(buffers[n - 1]);
    cudaStream_t stream = tq_cuda_stream();
    /* every result slot is written, as on the CPU (unused ones get the partials' zeros) */
    if (n > 1) combine_partials(buffers, n - 1, out, TQ_BLAS_MAX_RESULTS, NULL, 0, NULL, stream);
    else cudaMemsetAsync(out, 0, TQ_BLAS_MAX_RESULTS * sizeof(double), stream);
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

extern "C" int tq_cuda_host_memory_mapped(const void *p)
{
    cudaPointerAttributes at;
    if (cudaPointerGetAttributes(&at, p) != cudaSuccess) {
        cudaGetLastError();   /* not a sticky error: clear it */
        return 0;
    }
    return at.type == cudaMemoryTypeHost && at.devicePointer == p;
}

extern "C" void tq_scalar_combine_cuda(void *buffers[], void *cl_arg)
{
    const tq_scalar_combine_args *a = (const tq_scalar_combine_args *)cl_arg;
    const int nbuf = a->n - __builtin_popcountll(a->sync.remote);   /* partials that are buffers */
    double *s = (double *)STARPU_VECTOR_GET_PTR(buffers[nbuf]);
    double *snap = a->snapshot ? (double *)STARPU_VECTOR_GET_PTR(buffers[nbuf + 1]) : NULL;
    cudaStream_t stream = tq_cuda_stream();
    const tq_combine_sync *sync = a->sync.remote ? &a->sync : NULL;
    if (sync) tq_combine_sync_wait(sync, a->n);   /* the other GPUs' partial sums are here */
    if (a->n > 0 && a->n <= TQ_COMBINE_CHUNK) {
        int k = 0;
        combine_program<<<1, TQ_NSCALARS, 0, stream>>>(chunk_of(buffers, 0, a->n, sync, &k), *a, s, snap);
        if (sync) tq_combine_sync_signal(sync);   /* the partials may be overwritten */
    } else {
        if (a->n > 0) combine_partials(buffers, a->n, s + a->dst, a->nres, s, a->guard, sync, stream);
        if (sync) tq_combine_sync_signal(sync);
        scalar_program<<<1, TQ_NSCALARS, 0, stream>>>(*a, s, snap);
    }
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}
