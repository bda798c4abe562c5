/* Wilson hopping-term codelets: CUDA implementations (asynchronous on the worker's
 * stream). One thread per site (interior) or per face entry (pack, exterior); the per-site
 * arithmetic is kernels/dslash_wilson_site.h, the same code the CPU codelets run, instantiated
 * for each precision and compression. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_pipeline.h>
#include <cuda_runtime.h>

#include "reduce_cuda.cuh"

#define TQ_DSLASH_WILSON_THREADS 128
/* Half precision: cap the interior kernel at 5 resident blocks' worth of registers (96 per
 * thread, no spills; it took 128 and ran fewer warps per SM than single precision). */
#ifndef TQ_HALF_MIN_BLOCKS
#define TQ_HALF_MIN_BLOCKS 5
#endif

/* Half precision in place: the in-place hop path needs more registers than the 96 of
 * TQ_HALF_MIN_BLOCKS (there it spilled 8-32 bytes a thread). */
#ifndef TQ_HALF_DIRECT_MIN_BLOCKS
#define TQ_HALF_DIRECT_MIN_BLOCKS 4
#endif

/* Single precision in place: at most 128 registers, 4 resident blocks (uncapped it took
 * 183 and ran 2 blocks per SM). */
#ifndef TQ_SINGLE_DIRECT_MIN_BLOCKS
#define TQ_SINGLE_DIRECT_MIN_BLOCKS 4
#endif

struct face_ptrs { void *p[4][2]; };

/* DIRECT: a->direct (every site, neighbour blocks read in place); a template argument so
 * that the other kernels carry none of its code (the half-precision kernel lost 40 % to it
 * as a run-time branch). */
template <int PREC, int RECON, int DAG, int CLOVER, int DIRECT = 0>
__global__ void __launch_bounds__(TQ_DSLASH_WILSON_THREADS, PREC == 2 ? (DIRECT ? TQ_HALF_DIRECT_MIN_BLOCKS : TQ_HALF_MIN_BLOCKS)
                                                          : PREC == 4 && DIRECT ? TQ_SINGLE_DIRECT_MIN_BLOCKS : 1)
dslash_wilson_interior_kernel(tq_dslash_wilson_args a, const void *in, const void *gp, const void *gq,
                       const void *x, const void *k, void *out, const double *go, tq_site_ranges r)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= r.n[0] + r.n[1] || (go && *go == 0.0)) return;   /* go: a solver's guard, shut */
    const int64_t s = i < r.n[0] ? r.lo[0] + i : r.lo[1] + (i - r.n[0]);   /* tq_interior_ranges */
    if constexpr (PREC == 8) tq_dslash_wilson_interior_site(&a, in, gp, gq, x, k, out, s, PREC, RECON, DAG, CLOVER, DIRECT, TQ_EPI_NONE, NULL, NULL, NULL);
    else tq_dslash_wilson_interior_site_f(&a, in, gp, gq, x, k, out, s, PREC, RECON, DAG, CLOVER, DIRECT, TQ_EPI_NONE, NULL, NULL, NULL);
}

/* Fields an epilogue kernel stages in shared memory (tq_epi_fields): the epilogue's reads
 * (w and u, or r) start with cp.async when the thread starts its site and arrive during
 * the stencil, instead of after it. Half precision: BiCGstab's four-product kernel 128 ->
 * 122 us, its CAXPYZ kernel 113 -> 109 us (32^4, H200). Single precision only BiCGstab's
 * kernels: staging r in CG's kernel took two more registers there, one block fewer per SM
 * (113 -> 126 us). Not double: a double site would leave the block's shared memory too few
 * blocks. */
template <int PREC, int EPI>
__host__ __device__ constexpr int staged_epi_fields(void)
{
    return PREC == 8 ? 0
         : EPI == TQ_EPI_BICGSTAB_T ? 2
         : EPI == TQ_EPI_CAXPYZ || (EPI == TQ_EPI_AXPY_NORM2 && PREC == 2) ? 1
         : 0;
}
template <int PREC>
__host__ __device__ constexpr int staged_site_bytes(void) { return 24 * PREC + (PREC == 2 ? 4 : 0); }

/* Site s of the color-spinor field src (stride sites, out's layout: vectors of 4 reals)
 * into the mini-field dst of TQ_DSLASH_WILSON_THREADS sites, at this thread's index. */
template <int PREC>
__device__ __forceinline__ void stage_site(unsigned char *dst, const void *src, int64_t stride, int64_t s)
{
    constexpr int CB = 4 * PREC, T = TQ_DSLASH_WILSON_THREADS;
    const int t = threadIdx.x;
    const char *g = (const char *)src;
#pragma unroll
    for (int j = 0; j < 6; j++) __pipeline_memcpy_async(dst + (j * T + t) * CB, g + (j * stride + s) * CB, CB);
    if (PREC == 2) __pipeline_memcpy_async(dst + 6 * T * CB + t * 4, g + stride * 48 + s * 4, 4);
}

/* Results an epilogue kernel sums per site (kernels/solver_scalars.h), at least one slot. */
template <int EPI>
__host__ __device__ constexpr int epilogue_nres(void) { return EPI == TQ_EPI_BICGSTAB_T ? 7 : EPI == TQ_EPI_CAXPYZ ? 0 : 1; }

/* The end of an epilogue kernel's block: its threads' totals (column t of sh) summed in a
 * fixed tree (into sh[r][0]) and into the block's slot of the scratch (unless NULL). */
template <int NRES, int NSH>
__device__ __forceinline__ void block_totals(double (*sh)[TQ_DSLASH_WILSON_THREADS], double *scratch)
{
    if constexpr (NRES > 0) {
        __syncthreads();
        for (int w = TQ_DSLASH_WILSON_THREADS / 2; w > 0; w >>= 1) {
            if (threadIdx.x < w)
#pragma unroll
                for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] += sh[r][threadIdx.x + w];
            __syncthreads();
        }
        if (threadIdx.x == 0 && scratch)
#pragma unroll
            for (int r = 0; r < NRES; r++) scratch[blockIdx.x * TQ_EPI_MAX_RESULTS + r] = sh[r][0];
    }
}

/* A split epilogue's end, in the kernel (after block_totals): the last thread block to
 * finish (a counter after the results in the task's own scratch, zero between uses: the
 * block that finds it resets it) sums every block's results in block order (thread t
 * blocks t, t + T, ..., then the fixed tree) into the task's partial, TQ_BLAS_MAX_RESULTS
 * doubles (the rest zero). The same bits whichever block finishes last; one kernel
 * instead of a second one per task (4 of them per application on 2 blocks, 4-6 us each
 * on an H200). */
template <int NRES>
__device__ __forceinline__ void split_partial(double (*sh)[TQ_DSLASH_WILSON_THREADS], double *scratch, double *partial)
{
    constexpr int T = TQ_DSLASH_WILSON_THREADS;
    if constexpr (NRES == 0) {   /* nothing summed: zeros */
        if (blockIdx.x == 0 && threadIdx.x < TQ_BLAS_MAX_RESULTS) partial[threadIdx.x] = 0.0;
    } else {
        __shared__ int last;
        unsigned *count = (unsigned *)(scratch + TQ_SPLIT_COUNTER);
        if (threadIdx.x == 0) {
            __threadfence();   /* this block's results before its count */
            last = atomicAdd(count, 1u) == gridDim.x - 1;
        }
        __syncthreads();
        if (!last) return;
        __threadfence();
#pragma unroll
        for (int r = 0; r < NRES; r++) {
            double v = 0.0;
            for (int i = threadIdx.x; i < (int)gridDim.x; i += T) v += __ldcg(&scratch[i * TQ_EPI_MAX_RESULTS + r]);
            sh[r][threadIdx.x] = v;
        }
        block_totals<NRES, NRES>(sh, nullptr);
        if (threadIdx.x == 0) {
#pragma unroll
            for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) partial[r] = r < NRES ? sh[r][0] : 0.0;
            *count = 0u;
        }
    }
}

/* The interior kernel with a reduction epilogue (kernels/solver_scalars.h): a grid of at
 * most TQ_REDUCE_MAX_BLOCKS blocks strides over the sites (the scratch holds one result per
 * block); each block sums its threads' totals in a fixed tree, and epilogue_final the
 * blocks in order (a split epilogue: split_partial, in the kernel). A frozen task (its guard) does
 * nothing. Single precision: at most 128
 * registers, 4 blocks per SM like the plain kernel (they took 157-168 and ran 3 blocks:
 * BiCGstab's kernels 155 -> 145 and 167 -> 155 us, 32^4 on an H200; no spills).
 * DIRECT (a split epilogue in place, a.epi.entries): every site, the neighbour blocks read
 * in place; a site on a split face adds nothing to the totals but stores its results at
 * its exterior entry in ent (result r of entry e at r nent + e, in the site's type), for
 * dslash_wilson_entries_kernel. The totals are those of the interior kernel through faces
 * (which skips those sites), so the partials do not depend on where the blocks run. */
template <int PREC, int RECON, int DAG, int CLOVER, int EPI, int DIRECT = 0>
__global__ void __launch_bounds__(TQ_DSLASH_WILSON_THREADS, PREC == 2 ? (DIRECT ? TQ_HALF_DIRECT_MIN_BLOCKS : TQ_HALF_MIN_BLOCKS)
                                                          : PREC == 4 ? 4 : 1)
dslash_wilson_interior_epilogue_kernel(tq_dslash_wilson_args a, const void *in, const void *gp, const void *gq,
                                const void *x, const void *k, void *out, const void *wb, const void *ub,
                                double *scratch, const double *scal, double *partial, void *ent, int64_t nent)
{
    constexpr int NRES = epilogue_nres<EPI>();
    constexpr int NSH = NRES > 0 ? NRES : 1;
    constexpr int NST = staged_epi_fields<PREC, EPI>(), FIELD = TQ_DSLASH_WILSON_THREADS * staged_site_bytes<PREC>();
    __shared__ double sh[NSH][TQ_DSLASH_WILSON_THREADS];
    __shared__ __align__(16) unsigned char stage[NST > 0 ? NST * FIELD : 16];
    if (tq_epilogue_frozen(&a.epi, scal)) return;
    const double c[2] = {tq_epilogue_coefficient(&a.epi, scal), tq_epilogue_coefficient_im(&a.epi, scal)};
    const float cf[2] = {(float)c[0], (float)c[1]};
    /* each thread's totals live in its column of sh, not in registers: 7 doubles held
     * across the stencil made the half-precision BiCGstab kernel spill */
#pragma unroll
    for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] = 0.0;
    for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < a.cb; s += (int64_t)gridDim.x * blockDim.x) {
        tq_epi_fields ef = {wb, ub, out, s, 0};
        if constexpr (NST > 0) {
            /* a site on a split face returns without waiting for its staged copies (the
             * exterior task does that site): wait for them before this site's copies reuse
             * the slot, or a late one lands over them (NaN scalars in the 48^4 solve on two
             * H200s, where the grid is capped and a thread strides over several sites) */
            if (s >= (int64_t)gridDim.x * blockDim.x) asm volatile("cp.async.wait_all;" ::: "memory");
            stage_site<PREC>(stage, EPI == TQ_EPI_AXPY_NORM2 ? (const void *)out : wb, a.L_out.stride, s);
            if (NST > 1) stage_site<PREC>(stage + FIELD, ub, a.L_out.stride, s);
            ef = tq_epi_fields{stage, stage + FIELD, stage, threadIdx.x, TQ_DSLASH_WILSON_THREADS};
        }
        if constexpr (PREC == 8) {
            double res[NSH];
#pragma unroll
            for (int r = 0; r < NSH; r++) res[r] = 0.0;
            tq_dslash_wilson_interior_site(&a, in, gp, gq, x, k, out, s, PREC, RECON, DAG, CLOVER, DIRECT, EPI, c, &ef, res);
            if (DIRECT && NRES > 0 && ent && tq_on_split_face(&a, s)) {
                tq_face_entries_store(&a, s, NRES, res, (double *)ent, nent);
            } else {
#pragma unroll
                for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] += res[r];
            }
        } else {
            float res[NSH];
#pragma unroll
            for (int r = 0; r < NSH; r++) res[r] = 0.0f;
            tq_dslash_wilson_interior_site_f(&a, in, gp, gq, x, k, out, s, PREC, RECON, DAG, CLOVER, DIRECT, EPI, cf, &ef, res);
            if (DIRECT && NRES > 0 && ent && tq_on_split_face(&a, s)) {
                tq_face_entries_store_f(&a, s, NRES, res, (float *)ent, nent);
            } else {
#pragma unroll
                for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] += (double)res[r];
            }
        }
    }
    block_totals<NRES, NSH>(sh, scratch);
    if (partial) split_partial<NRES>(sh, scratch, partial);   /* a split epilogue */
}

/* A split epilogue's exterior part after an interior in place: the results the interior
 * kernel stored per exterior entry, summed as dslash_wilson_exterior_epilogue_kernel sums
 * its entries' (the same grid rule, thread order and tree; a corner's repeat, which the
 * face path skips, holds zeros and adds nothing): the face path's partial, bitwise. TR:
 * the sites' type. */
template <typename TR, int NRES>
__global__ void __launch_bounds__(TQ_DSLASH_WILSON_THREADS)
dslash_wilson_entries_kernel(tq_dslash_wilson_args a, const TR *ent, int64_t n, double *scratch, const double *scal,
                             double *partial)
{
    constexpr int NSH = NRES > 0 ? NRES : 1;
    __shared__ double sh[NSH][TQ_DSLASH_WILSON_THREADS];
    if (tq_epilogue_frozen(&a.epi, scal)) return;
#pragma unroll
    for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] = 0.0;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
#pragma unroll
        for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] += (double)ent[r * n + e];   /* a repeat: zeros */
    }
    block_totals<NRES, NSH>(sh, scratch);
    split_partial<NRES>(sh, scratch, partial);
}

/* A split epilogue's exterior part (several blocks): the face entries as the plain
 * exterior kernel takes them, a grid of at most TQ_REDUCE_MAX_BLOCKS blocks striding over
 * them, each block's totals summed in the same fixed tree; split_partial ends it. The
 * fields the epilogue reads are read at each site's own index (no staging: few sites). */
template <int PREC, int RECON, int DAG, int CLOVER, int EPI>
__global__ void __launch_bounds__(TQ_DSLASH_WILSON_THREADS)
dslash_wilson_exterior_epilogue_kernel(tq_dslash_wilson_args a, const void *in, const void *gp, const void *gq,
                                       const void *x, const void *k, face_ptrs f, void *out, int64_t n,
                                       const void *wb, const void *ub, double *scratch, const double *scal,
                                       double *partial)
{
    constexpr int NRES = epilogue_nres<EPI>();
    constexpr int NSH = NRES > 0 ? NRES : 1;
    __shared__ double sh[NSH][TQ_DSLASH_WILSON_THREADS];
    if (tq_epilogue_frozen(&a.epi, scal)) return;
    const double c[2] = {tq_epilogue_coefficient(&a.epi, scal), tq_epilogue_coefficient_im(&a.epi, scal)};
    const float cf[2] = {(float)c[0], (float)c[1]};
    const void *const (*from)[2] = (const void *const (*)[2])f.p;
    const tq_epi_fields ef = {wb, ub, out, 0, 0};
#pragma unroll
    for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] = 0.0;
    for (int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; e < n; e += (int64_t)gridDim.x * blockDim.x) {
        if constexpr (PREC == 8) {
            double res[NSH];
#pragma unroll
            for (int r = 0; r < NSH; r++) res[r] = 0.0;
            tq_dslash_wilson_exterior_entry(&a, in, gp, gq, x, k, from, out, e, PREC, RECON, DAG, CLOVER, EPI, c, &ef, res, NULL);
#pragma unroll
            for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] += res[r];
        } else {
            float res[NSH];
#pragma unroll
            for (int r = 0; r < NSH; r++) res[r] = 0.0f;
            tq_dslash_wilson_exterior_entry_f(&a, in, gp, gq, x, k, from, out, e, PREC, RECON, DAG, CLOVER, EPI, cf, &ef, res, NULL);
#pragma unroll
            for (int r = 0; r < NRES; r++) sh[r][threadIdx.x] += (double)res[r];
        }
    }
    block_totals<NRES, NSH>(sh, scratch);
    if (partial) split_partial<NRES>(sh, scratch, partial);
}

__global__ void __launch_bounds__(TQ_FINAL_THREADS) epilogue_final(const double *scratch, int nblocks, tq_epilogue_args e, double *scal, double *snap)
{
    reduce_into_scalars<TQ_EPI_MAX_RESULTS>(scratch, nblocks, tq_epilogue_nresults(e.kind), TQ_EPI_MAX_RESULTS,
                                            tq_epilogue_frozen(&e, scal), e.guard, e.dst, e.prog, e.nprog, scal, snap,
                                            e.mirror);
}

template <int PREC, int RECON, int DAG>
__global__ void dslash_wilson_pack_kernel(tq_dslash_wilson_args a, const void *in, const void *g, face_ptrs f,
                                   int64_t n)
{
    const int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (e >= n) return;
    if constexpr (PREC == 8) tq_dslash_wilson_pack_entry(&a, in, g, f.p, e, PREC, RECON, DAG);
    else tq_dslash_wilson_pack_entry_f(&a, in, g, f.p, e, PREC, RECON, DAG);
}

/* AHEAD: the next hop's faces packed too (tq_dslash_wilson_pack_ahead), into next. */
template <int PREC, int RECON, int DAG, int CLOVER, int AHEAD>
__global__ void dslash_wilson_exterior_kernel(tq_dslash_wilson_args a, const void *in, const void *gp,
                                       const void *gq, const void *x, const void *k, face_ptrs f,
                                       void *out, int64_t n, face_ptrs next)
{
    const int64_t e = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (e >= n) return;
    const void *const (*from)[2] = (const void *const (*)[2])f.p;
    void *const (*ahead)[2] = AHEAD ? (void *const (*)[2])next.p : NULL;
    if constexpr (PREC == 8) tq_dslash_wilson_exterior_entry(&a, in, gp, gq, x, k, from, out, e, PREC, RECON, DAG, CLOVER, TQ_EPI_NONE, NULL, NULL, NULL, ahead);
    else tq_dslash_wilson_exterior_entry_f(&a, in, gp, gq, x, k, from, out, e, PREC, RECON, DAG, CLOVER, TQ_EPI_NONE, NULL, NULL, NULL, ahead);
}

static unsigned grid_for(int64_t n)
{
    return (unsigned)((n + TQ_DSLASH_WILSON_THREADS - 1) / TQ_DSLASH_WILSON_THREADS);
}

/* As face_pointers in dslash_wilson.c: peer faces are pointers, not buffers; *next (when
 * given) the buffer after the faces. */
static face_ptrs faces_of(void *buffers[], int first, const tq_dslash_wilson_face_args *fa, int *next = NULL)
{
    face_ptrs f;
    int k = first;
    for (int mu = 0; mu < 4; mu++) {
        f.p[mu][0] = f.p[mu][1] = NULL;
        if (!fa->a.split[mu]) continue;
        for (int side = 0; side < 2; side++)
            f.p[mu][side] = fa->sync.ptr[mu][side] ? fa->sync.ptr[mu][side] : (void *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    }
    if (next) *next = k;
    return f;
}

static void check_launch(void)
{
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

/* The grid of a reduction over n sites or entries: at most TQ_REDUCE_MAX_BLOCKS blocks
 * (the scratch's slots; fewer where a test says, tq_dslash_reduce_blocks_limit), depending
 * only on n. */
static int reduction_grid(int64_t n)
{
    const int limit = tq_dslash_reduce_blocks_limit;
    const int64_t cap = limit > 0 && limit < TQ_REDUCE_MAX_BLOCKS ? limit : TQ_REDUCE_MAX_BLOCKS;
    const int64_t want = (int64_t)grid_for(n);
    return (int)(want < 1 ? 1 : want < cap ? want : cap);
}

/* LAUNCH_E(P, R, D, C, E) with the clover flag and the epilogue kind as compile-time
 * constants, for the pairings below only; called as TQ_DSLASH_WILSON_DISPATCH's CALL with
 * epi_ and clover_ (the task's kind and a->clover) in scope. */
#define EPI_CLOVER(P, R, D, E, LAUNCH_E) do { if (clover_) LAUNCH_E(P, R, D, 1, E); else LAUNCH_E(P, R, D, 0, E); } while (0)
#define EPI_PAIRS(P, R, D, LAUNCH_E)                                                               \
    do {                                                                                           \
        if (D == 0 && epi_ == TQ_EPI_NORM2) EPI_CLOVER(P, R, 0, TQ_EPI_NORM2, LAUNCH_E);           \
        else if (D == 0 && epi_ == TQ_EPI_CAXPYZ) EPI_CLOVER(P, R, 0, TQ_EPI_CAXPYZ, LAUNCH_E);    \
        else if (D == 0 && epi_ == TQ_EPI_BICGSTAB_T) EPI_CLOVER(P, R, 0, TQ_EPI_BICGSTAB_T, LAUNCH_E); \
        else if (D == 1 && epi_ == TQ_EPI_AXPY_NORM2) EPI_CLOVER(P, R, 1, TQ_EPI_AXPY_NORM2, LAUNCH_E); \
    } while (0)

/* Peer mode: a split epilogue's partial, once its kernel has written it, to the other GPUs'
 * combines (also when the guard is shut: their combines wait for it all the same). */
static void send_partial(const tq_dslash_wilson_args *a, const double *partial)
{
    if (partial && a->psync.npeer) tq_partial_sync_send(&a->psync, partial);
}

/* The epilogue kernels exist for what the solvers ask (src/dirac/dirac_forms.c asks for no other
 * pairing): CG on M_pc^dag M_pc, |y|^2 after M_pc (dagger 0) and r += c y after M_pc^dag
 * (dagger 1); BiCGstab on M_pc (dagger 0): s = r - alpha y, and <t, s>, |t|^2, <r0, s>,
 * <r0, t>. */
static void interior_epilogue_cuda(void *buffers[], const tq_dslash_wilson_args *a, const void *in, const void *gp,
                                   const void *gq, const void *x, const void *k, void *out, cudaStream_t stream)
{
    const int e = tq_dslash_wilson_buf_scratch(a);
    const void *w = !tq_epilogue_reads_w(a->epi.kind) ? NULL : a->epi.w_is_x ? x
                  : (const void *)STARPU_VECTOR_GET_PTR(buffers[tq_dslash_wilson_buf_epilogue(a)]);
    const void *u = tq_epilogue_reads_u(a->epi.kind) ? (const void *)STARPU_VECTOR_GET_PTR(buffers[tq_dslash_wilson_buf_u(a)]) : NULL;
    double *scratch = (double *)STARPU_VECTOR_GET_PTR(buffers[e]);
    double *scal = (double *)STARPU_VECTOR_GET_PTR(buffers[e + 1]);
    /* after the scalars: a split epilogue's partial, or the snapshot */
    double *after = tq_epilogue_partial(&a->epi) || a->epi.snapshot ? (double *)STARPU_VECTOR_GET_PTR(buffers[e + 2]) : NULL;
    const int grid = reduction_grid(a->cb);
    const int epi_ = a->epi.kind, clover_ = a->clover;
    double *partial = tq_epilogue_partial(&a->epi) ? after : NULL;
    /* in place with entries: every site, the face sites' results by exterior entry
     * (tq_face_entries_store) */
    void *ent = a->epi.entries ? (void *)STARPU_VECTOR_GET_PTR(buffers[e + 3]) : NULL;
    const int64_t nent = a->epi.entries ? tq_face_total(a) : 0;
#define LAUNCH_K(P, R, D, C, E, DI) dslash_wilson_interior_epilogue_kernel<P, R, D, C, E, DI><<<grid, TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, in, gp, gq, x, k, out, w, u, scratch, scal, partial, ent, nent)
#define LAUNCH_E(P, R, D, C, E) do { if (a->direct) LAUNCH_K(P, R, D, C, E, 1); else LAUNCH_K(P, R, D, C, E, 0); } while (0)
#define LAUNCH(P, R, D) EPI_PAIRS(P, R, D, LAUNCH_E)
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);
#undef LAUNCH
#undef LAUNCH_E
#undef LAUNCH_K
    /* a split epilogue's kernel writes its partial; nothing to sum or copy: no second kernel */
    if (!a->epi.split && (tq_epilogue_nresults(a->epi.kind) || a->epi.nprog || after))
        epilogue_final<<<1, TQ_FINAL_THREADS, 0, stream>>>(scratch, grid, a->epi, scal, after);
    check_launch();
    send_partial(a, partial);
}

#define BUFFER_PTR(i) STARPU_VECTOR_GET_PTR(buffers[i])

extern "C" void tq_dslash_wilson_interior_cuda(void *buffers[], void *cl_arg)
{
    const tq_dslash_wilson_args *a = (const tq_dslash_wilson_args *)cl_arg;
    tq_dslash_wilson_args direct;
    TQ_DSLASH_WILSON_DIRECT_ARGS(a, direct, BUFFER_PTR);
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *gp = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const void *gq = (const void *)STARPU_VECTOR_GET_PTR(buffers[2]);
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[3]);
    /* in-place xpay (x is out) passes out once, read-write */
    const void *x = !a->xpay ? NULL : a->x_separate ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4]) : out;
    const void *k = a->clover ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4 + a->x_separate]) : NULL;
    cudaStream_t stream = tq_cuda_stream();
    if (a->epi.kind != TQ_EPI_NONE) {
        interior_epilogue_cuda(buffers, a, in, gp, gq, x, k, out, stream);
        return;
    }
    const tq_site_ranges r = tq_interior_ranges(a);
    const int64_t n = r.n[0] + r.n[1];
    if (n == 0) return;
    /* a solver's guarded application: the kernel reads the guard and does nothing when shut */
    const double *go = a->epi.guard > 0 ? (const double *)STARPU_VECTOR_GET_PTR(buffers[tq_dslash_wilson_buf_guard(a)]) + a->epi.guard - 1
                                        : NULL;
#define LAUNCH_D(P, R, D, C, DI) dslash_wilson_interior_kernel<P, R, D, C, DI><<<grid_for(n), TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, in, gp, gq, x, k, out, go, r)
#define LAUNCH_K(P, R, D, C) do { if (a->direct) LAUNCH_D(P, R, D, C, 1); else LAUNCH_D(P, R, D, C, 0); } while (0)
#define LAUNCH(P, R, D) do { if (a->clover) LAUNCH_K(P, R, D, 1); else LAUNCH_K(P, R, D, 0); } while (0)
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);
#undef LAUNCH_D
#undef LAUNCH
#undef LAUNCH_K
    check_launch();
}

extern "C" void tq_dslash_wilson_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_dslash_wilson_face_args *fa = (const tq_dslash_wilson_face_args *)cl_arg;
    const tq_dslash_wilson_args *a = &fa->a;
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *g = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    face_ptrs f = faces_of(buffers, 2, fa);
    const int64_t n = tq_face_total(a);
    if (n == 0) return;
    cudaStream_t stream = tq_cuda_stream();
    tq_face_sync_wait(&fa->sync);   /* the peer faces' readers are done with their last use */
#define LAUNCH(P, R, D) dslash_wilson_pack_kernel<P, R, D><<<grid_for(n), TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, in, g, f, n)
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);
#undef LAUNCH
    check_launch();
    tq_face_sync_signal(&fa->sync);   /* the faces are there */
}

/* A split epilogue's exterior task: after the faces, [w] [u] (as in the interior task),
 * the task's reduction scratch (its counter zero, TQ_SPLIT_COUNTER), the solver scalars and
 * the task's partial. The partial is written even without face entries (zeros), as the
 * combine adds it. */
static void exterior_epilogue_cuda(void *buffers[], const tq_dslash_wilson_face_args *fa, const tq_dslash_wilson_args *a,
                                   int after_faces, const void *in, const void *gp, const void *gq, const void *x,
                                   const void *k, face_ptrs f, void *out, int64_t n, cudaStream_t stream)
{
    int b = after_faces;
    const void *w = !tq_epilogue_reads_w(a->epi.kind) ? NULL : a->epi.w_is_x ? x : (const void *)STARPU_VECTOR_GET_PTR(buffers[b++]);
    const void *u = tq_epilogue_reads_u(a->epi.kind) ? (const void *)STARPU_VECTOR_GET_PTR(buffers[b++]) : NULL;
    double *scratch = (double *)STARPU_VECTOR_GET_PTR(buffers[b]);
    const double *scal = (const double *)STARPU_VECTOR_GET_PTR(buffers[b + 1]);
    double *partial = tq_epilogue_partial(&a->epi) ? (double *)STARPU_VECTOR_GET_PTR(buffers[b + 2]) : NULL;
    const int grid = reduction_grid(n);
    tq_face_sync_wait(&fa->sync);   /* the peer faces have arrived */
    const int epi_ = a->epi.kind, clover_ = a->clover;
#define LAUNCH_E(P, R, D, C, E) dslash_wilson_exterior_epilogue_kernel<P, R, D, C, E><<<grid, TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, in, gp, gq, x, k, f, out, n, w, u, scratch, scal, partial)
#define LAUNCH(P, R, D) EPI_PAIRS(P, R, D, LAUNCH_E)
    /* the kernel writes the partial, zeros without entries (one block, nothing to do) */
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);
#undef LAUNCH
#undef LAUNCH_E
    check_launch();
    tq_face_sync_signal(&fa->sync);   /* their writers may overwrite them */
    send_partial(a, partial);
}

/* A split epilogue's exterior part after an interior in place (a->epi.entries): buffers
 * scratch, scalars (R), partial (W), the interior's entries (R). */
static void exterior_entries_cuda(void *buffers[], const tq_dslash_wilson_args *a, cudaStream_t stream)
{
    double *scratch = (double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const double *scal = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    double *partial = (double *)STARPU_VECTOR_GET_PTR(buffers[2]);
    const void *ent = (const void *)STARPU_VECTOR_GET_PTR(buffers[3]);
    const int64_t n = tq_face_total(a);
    const int grid = reduction_grid(n);
#define LAUNCH_T(TR, NRES) dslash_wilson_entries_kernel<TR, NRES><<<grid, TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, (const TR *)ent, n, scratch, scal, partial)
#define LAUNCH_N(TR)                                                                                \
    do {                                                                                            \
        switch (tq_epilogue_nresults(a->epi.kind)) {                                                \
        case 0: LAUNCH_T(TR, 0); break;                                                             \
        case 1: LAUNCH_T(TR, 1); break;                                                             \
        default: LAUNCH_T(TR, TQ_EPI_MAX_RESULTS); break;                                           \
        }                                                                                           \
    } while (0)
    if (a->L_in.prec == 8) LAUNCH_N(double);
    else LAUNCH_N(float);
#undef LAUNCH_N
#undef LAUNCH_T
    check_launch();
    send_partial(a, partial);
}

extern "C" void tq_dslash_wilson_exterior_cuda(void *buffers[], void *cl_arg)
{
    const tq_dslash_wilson_face_args *fa = (const tq_dslash_wilson_face_args *)cl_arg;
    const tq_dslash_wilson_args *a = &fa->a;
    cudaStream_t stream = tq_cuda_stream();
    if (a->epi.kind != TQ_EPI_NONE && a->epi.entries) {
        exterior_entries_cuda(buffers, a, stream);
        return;
    }
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *gp = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const void *gq = (const void *)STARPU_VECTOR_GET_PTR(buffers[2]);
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[3]);
    const int with_x = a->xpay && a->x_separate;
    const void *x = !a->xpay ? NULL : with_x ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4]) : out;
    const void *k = a->clover ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4 + with_x]) : NULL;
    int after_faces;
    face_ptrs f = faces_of(buffers, 4 + with_x + (a->clover ? 1 : 0), fa, &after_faces);
    const int64_t n = tq_face_total(a);
    if (a->epi.kind != TQ_EPI_NONE) {
        exterior_epilogue_cuda(buffers, fa, a, after_faces, in, gp, gq, x, k, f, out, n, stream);
        return;
    }
    if (n == 0) return;
    /* the peer faces have arrived; packing ahead: and the next hop's faces' readers are done
     * with that set's last use */
    const tq_face_sync *ahead = fa->pack_ahead ? &fa->ahead : NULL;
    tq_face_sync_wait2(&fa->sync, ahead);
    face_ptrs next;
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2; side++) next.p[mu][side] = fa->ahead.ptr[mu][side];
#define LAUNCH_A(P, R, D, C, A) dslash_wilson_exterior_kernel<P, R, D, C, A><<<grid_for(n), TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, in, gp, gq, x, k, f, out, n, next)
#define LAUNCH_K(P, R, D, C) do { if (fa->pack_ahead) LAUNCH_A(P, R, D, C, 1); else LAUNCH_A(P, R, D, C, 0); } while (0)
#define LAUNCH(P, R, D) do { if (a->clover) LAUNCH_K(P, R, D, 1); else LAUNCH_K(P, R, D, 0); } while (0)
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);
#undef LAUNCH
#undef LAUNCH_K
#undef LAUNCH_A
    check_launch();
    tq_face_sync_signal2(&fa->sync, ahead);   /* their writers may overwrite them; the next hop's faces are there */
}

extern "C" int tq_dslash_wilson_interior_bare_cuda(const tq_dslash_wilson_args *a, const void *in, const void *gp,
                                            const void *gq, const void *x, void *out, int niter,
                                            double *seconds)
{
    cudaStream_t stream;
    cudaEvent_t t0, t1;
    cudaError_t err = cudaStreamCreate(&stream);
    if (err != cudaSuccess) return (int)err;
    cudaEventCreate(&t0);
    cudaEventCreate(&t1);
    const tq_site_ranges r = {{0, 0}, {a->cb, 0}};
#define LAUNCH(P, R, D) dslash_wilson_interior_kernel<P, R, D, 0><<<grid_for(a->cb), TQ_DSLASH_WILSON_THREADS, 0, stream>>>(*a, in, gp, gq, x, NULL, out, NULL, r)
    for (int it = 0; it < 3; it++) TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);   /* warm-up */
    cudaEventRecord(t0, stream);
    for (int it = 0; it < niter; it++) TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, LAUNCH);
#undef LAUNCH
    cudaEventRecord(t1, stream);
    err = cudaEventSynchronize(t1);
    if (err == cudaSuccess) err = cudaGetLastError();
    float ms = 0;
    cudaEventElapsedTime(&ms, t0, t1);
    *seconds = ms * 1e-3 / niter;
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    cudaStreamDestroy(stream);
    return (int)err;
}
