/* Multigrid codelets on GPUs: restriction, prolongation and the coarse operator's pack,
 * interior and exterior (CPU versions and buffer orders: codelets/mg_transfer.c,
 * codelets/coarse_op.c), asynchronous on tq_cuda_stream().
 *
 * The per-cycle kernels (restriction, prolongation, coarse operator) fix their buffers'
 * precision at compile time (fixed_rows, fixed_prec): with a run-time short-vector length
 * the per-chunk arrays of kernels/field_layout.h went to local memory, and these kernels
 * ran at a few percent of the memory bandwidth. The restriction and prolongation give a
 * thread block to each aggregate (coarse site) and a thread to each of its fine sites; the
 * restriction sums the aggregate in a fixed tree (warp shuffles, then the warps in order:
 * not the CPU's order, the same to rounding and for every decomposition). The coarse
 * operator gives a thread to each (site, row, matrix) and adds the nine matrices' parts in
 * the CPU's order (tq_coarse_row_matrix; with half links its products in single precision,
 * tq_coarse_row_matrix_f). A half-precision coarse output site needs all its
 * values for its norm: those go one thread per site. The Galerkin product gives a thread block to each
 * coarse site and matrix, M V made once per fine term in shared memory and each thread
 * summing its entries in the CPU's order (mg_coarsen_kernel); its face pack one thread per
 * fine site and basis vector. A basis copy goes one thread per fine site (tq_mg_basis_put_site). The
 * block orthonormalisation is a thread block per coarse site: modified Gram-Schmidt as
 * tq_mg_orthonormalise_site does it, but each inner product summed by the block's threads
 * in a tree (not the CPU's order: the basis agrees with the CPU's to rounding, and is the
 * same for every decomposition). The fine level's stencil form (the Galerkin product's
 * input) goes one thread per fine site, as on the CPU (tq_mg_fine_local_site, _pack_site,
 * _back_site: the same bits). */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>
#include <math_constants.h>
#include <stdio.h>

#define MG_THREADS 64
#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

static unsigned blocks_for(int64_t n) { return (unsigned)((n + MG_THREADS - 1) / MG_THREADS); }

static void check_launch(void)
{
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

typedef struct { const void *p[2]; } ptr2c;
typedef struct { void *p[2]; } ptr2;
typedef struct { void *p[8]; } ptr8;
typedef struct { const void *p[8]; } ptr8c;

/* A layout of 24-real rows (every multigrid vector, basis and link row) whose precision is P
 * at compile time; fixed_prec keeps the number of reals (faces: 2 n). */
template <int P> __device__ __forceinline__ tq_layout fixed_prec(tq_layout L)
{
    L.prec = P;
    L.vec = P == 8 ? 2 : 4;   /* tq_layout_vec for a multiple of 4 reals */
    return L;
}
template <int P> __device__ __forceinline__ tq_layout fixed_rows(tq_layout L)
{
    L = fixed_prec<P>(L);
    L.nreal = 24;
    return L;
}

/* One row of a buffer of any precision (a few loads per thread block). */
__device__ __forceinline__ void load_row_any(const void *buf, const tq_layout &L, int64_t s, double *v)
{
    if (L.prec == 8) { const tq_layout F = fixed_rows<8>(L); tq_load_site(buf, &F, s, v); }
    else if (L.prec == 4) { const tq_layout F = fixed_rows<4>(L); tq_load_site(buf, &F, s, v); }
    else { const tq_layout F = fixed_rows<2>(L); tq_load_site(buf, &F, s, v); }
}

__device__ __forceinline__ void store_row_any(void *buf, const tq_layout &L, int64_t s, const double *v)
{
    if (L.prec == 8) { const tq_layout F = fixed_rows<8>(L); tq_store_site(buf, &F, s, v); }
    else if (L.prec == 4) { const tq_layout F = fixed_rows<4>(L); tq_store_site(buf, &F, s, v); }
    else { const tq_layout F = fixed_rows<2>(L); tq_store_site(buf, &F, s, v); }
}

#define AGG_THREADS 256   /* threads of an aggregate's block: its fine sites (4^4) */
#define AGG_KCHUNK 4      /* basis vectors per pass of the restriction */

static unsigned agg_threads(const tq_mg_transfer_args *a)
{
    const int vol = a->agg[0] * a->agg[1] * a->agg[2] * a->agg[3];
    const int t = (vol + 31) / 32 * 32;
    return (unsigned)(t < AGG_THREADS ? t : AGG_THREADS);
}

/* The coarse site of this thread block: its parity, index and block coordinates. Blocks go
 * through the coarse block in lexicographic order, x fastest, both parities together, so
 * that aggregates side by side along x run at the same time: in the checkerboard order an
 * aggregate's fine sites of one parity lie in runs of 2 (half a 32-byte sector of a half
 * precision basis row), and the neighbour's run fills the sector's other half, read from L2
 * instead of memory again. The arithmetic of a block does not depend on the order. */
__device__ __forceinline__ int64_t agg_block_site(const tq_mg_transfer_args &a, int *pc, int xc[4])
{
    unsigned i = blockIdx.x;   /* fewer than 2^31 coarse sites: 32-bit divisions */
    for (int mu = 0; mu < 4; mu++) {
        xc[mu] = (int)(i % (unsigned)a.coarse_block[mu]);
        i /= (unsigned)a.coarse_block[mu];
    }
    *pc = (xc[0] + xc[1] + xc[2] + xc[3]) & 1;
    return tq_block_cb(a.coarse_block, xc);
}

/* R = P^dag: a thread block per coarse site (both parities), a thread per fine site of its
 * aggregate. For AGG_KCHUNK basis vectors at a time, each thread sums conj(b_k) v over its
 * sites' rows per chirality, then the block adds the threads' sums: 32 lanes by shuffles
 * (a fixed tree), then the warps in order. */
template <int PF, int PB>
__global__ void __launch_bounds__(AGG_THREADS, 2) mg_restrict_agg_kernel(tq_mg_transfer_args a, ptr2c fine, ptr2c basis,
                                                                       ptr2 coarse)
{
    __shared__ double warp_sum[AGG_THREADS / 32][4 * AGG_KCHUNK];
    __shared__ double dof[2 * TQ_MG_SITE_MAX_NVEC][2];
    const tq_layout Lf = fixed_rows<PF>(a.Lf), Lb = fixed_rows<PB>(a.Lb);
    int pc, xc[4];
    const int64_t sc = agg_block_site(a, &pc, xc);
    const int nvec = a.nvec, half = 6 * a.rows, vol = tq_mg_agg_volume(&a);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5, nwarps = blockDim.x >> 5;
    for (int k0 = 0; k0 < nvec; k0 += AGG_KCHUNK) {
        double acc[AGG_KCHUNK][4];   /* chirality 0 re, im, chirality 1 re, im */
        TQ_UNROLL
        for (int kk = 0; kk < AGG_KCHUNK; kk++) acc[kk][0] = acc[kk][1] = acc[kk][2] = acc[kk][3] = 0;
        for (int o = threadIdx.x; o < vol; o += blockDim.x) {
            int pf;
            int64_t sf;
            tq_mg_fine_site(&a, xc, o, &pf, &sf);
            for (int r = 0; r < a.rows; r++) {
                double v[24];
                tq_load_site(fine.p[pf], &Lf, r * a.fine_cb + sf, v);
                TQ_UNROLL
                for (int kk = 0; kk < AGG_KCHUNK; kk++) {
                    if (k0 + kk >= nvec) continue;
                    double b[24];
                    tq_load_site(basis.p[pf], &Lb, ((k0 + kk) * a.rows + r) * a.fine_cb + sf, b);
                    TQ_UNROLL
                    for (int e = 0; e < 12; e++) {
                        if (12 * r + e >= half) tq_mg_conj_mac(b + 2 * e, v + 2 * e, acc[kk] + 2);
                        else tq_mg_conj_mac(b + 2 * e, v + 2 * e, acc[kk]);
                    }
                }
            }
        }
        TQ_UNROLL
        for (int q = 0; q < 4 * AGG_KCHUNK; q++) {
            double x = acc[q / 4][q % 4];
            for (int off = 16; off > 0; off >>= 1) x += __shfl_down_sync(0xffffffffu, x, off);
            if (lane == 0) warp_sum[warp][q] = x;
        }
        __syncthreads();
        if (threadIdx.x < 4 * AGG_KCHUNK) {
            const int q = threadIdx.x, k = k0 + q / 4, chi = (q % 4) / 2;
            double x = 0;
            for (int w = 0; w < nwarps; w++) x += warp_sum[w][q];
            if (k < nvec) dof[chi * nvec + k][q % 2] = x;
        }
        __syncthreads();
    }
    for (int j = threadIdx.x; j < nvec / 6; j += blockDim.x) {   /* 2 nvec complex: nvec / 6 rows */
        double out[24];
        TQ_UNROLL
        for (int e = 0; e < 12; e++) out[2 * e] = dof[12 * j + e][0], out[2 * e + 1] = dof[12 * j + e][1];
        store_row_any(coarse.p[pc], a.Lc, j * a.coarse_cb + sc, out);
    }
}

/* P: a thread block per coarse site, its 2 nvec values in shared memory, a thread per fine
 * site of the aggregate: out = sum_k basis_k c(chi nvec + k), k in order (the CPU's order). */
template <int PB, int PF>
__global__ void __launch_bounds__(AGG_THREADS) mg_prolong_agg_kernel(tq_mg_transfer_args a, ptr2c coarse, ptr2c basis,
                                                                      ptr2 fine)
{
    __shared__ double c[2 * TQ_MG_SITE_MAX_NVEC][2];
    const tq_layout Lf = fixed_rows<PF>(a.Lf), Lb = fixed_rows<PB>(a.Lb);
    int pc, xc[4];
    const int64_t sc = agg_block_site(a, &pc, xc);
    const int nvec = a.nvec, half = 6 * a.rows, vol = tq_mg_agg_volume(&a);
    for (int j = threadIdx.x; j < nvec / 6; j += blockDim.x) {
        double v[24];
        load_row_any(coarse.p[pc], a.Lc, j * a.coarse_cb + sc, v);
        TQ_UNROLL
        for (int e = 0; e < 12; e++) c[12 * j + e][0] = v[2 * e], c[12 * j + e][1] = v[2 * e + 1];
    }
    __syncthreads();
    for (int o = threadIdx.x; o < vol; o += blockDim.x) {
        int pf;
        int64_t sf;
        tq_mg_fine_site(&a, xc, o, &pf, &sf);
        for (int r = 0; r < a.rows; r++) {
            double out[24];
            TQ_UNROLL
            for (int e = 0; e < 24; e++) out[e] = 0;
            for (int k = 0; k < nvec; k++) {
                double b[24];
                tq_load_site(basis.p[pf], &Lb, (k * a.rows + r) * a.fine_cb + sf, b);
                const double x0r = c[k][0], x0i = c[k][1], x1r = c[nvec + k][0], x1i = c[nvec + k][1];
                TQ_UNROLL
                for (int e = 0; e < 12; e++) {
                    const int upper = 12 * r + e >= half;
                    const double xr = upper ? x1r : x0r, xi = upper ? x1i : x0i;
                    out[2 * e] += b[2 * e] * xr - b[2 * e + 1] * xi;
                    out[2 * e + 1] += b[2 * e] * xi + b[2 * e + 1] * xr;
                }
            }
            tq_store_site(fine.p[pf], &Lf, r * a.fine_cb + sf, out);
        }
    }
}

/* kernel<PA, PB> for the precisions (8, 4 or 2 bytes) of two buffers */
#define MG_DISPATCH2(kernel, pa, pb, grid, block, ...)                                                      \
    do {                                                                                                    \
        const int pa_ = (pa), pb_ = (pb);                                                                   \
        if (pa_ == 8 && pb_ == 8) kernel<8, 8><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);          \
        else if (pa_ == 8 && pb_ == 4) kernel<8, 4><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);     \
        else if (pa_ == 8) kernel<8, 2><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);                 \
        else if (pa_ == 4 && pb_ == 8) kernel<4, 8><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);     \
        else if (pa_ == 4 && pb_ == 4) kernel<4, 4><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);     \
        else if (pa_ == 4) kernel<4, 2><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);                 \
        else if (pb_ == 8) kernel<2, 8><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);                 \
        else if (pb_ == 4) kernel<2, 4><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);                 \
        else kernel<2, 2><<<grid, block, 0, tq_cuda_stream()>>>(__VA_ARGS__);                               \
    } while (0)

extern "C" void tq_mg_restrict_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const ptr2c fine = {{PTR(0), PTR(1)}}, basis = {{PTR(2), PTR(3)}};
    const ptr2 coarse = {{PTR(4), PTR(5)}};
    MG_DISPATCH2(mg_restrict_agg_kernel, a->Lf.prec, a->Lb.prec, (unsigned)(2 * a->coarse_cb), agg_threads(a), *a, fine,
                 basis, coarse);
    check_launch();
}

extern "C" void tq_mg_prolong_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const ptr2c coarse = {{PTR(0), PTR(1)}}, basis = {{PTR(2), PTR(3)}};
    const ptr2 fine = {{PTR(4), PTR(5)}};
    MG_DISPATCH2(mg_prolong_agg_kernel, a->Lb.prec, a->Lf.prec, (unsigned)(2 * a->coarse_cb), agg_threads(a), *a, coarse,
                 basis, fine);
    check_launch();
}

__global__ void coarse_pack_kernel(tq_coarse_args a, const void *in, ptr8 faces)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.cb) tq_coarse_pack_site(&a, in, faces.p, s);
}

/* exterior 0: the sites without a hop across a split direction; 1: those with one */
__global__ void coarse_site_kernel(tq_coarse_args a, const void *in_same, const void *in, const void *links, ptr8c from,
                                   void *out, int exterior)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s >= a.cb) return;
    int x[4];
    tq_block_coords(a.B, a.parity, s, x);
    if (tq_coarse_on_face(&a, x) != exterior) return;
    tq_coarse_site(&a, in_same, in, links, exterior ? from.p : NULL, out, s);
}

/* A thread per (site, row, matrix): thread (x, y) of block (bx, i) is site 32 bx + x, row i,
 * matrix y; the row's matrices are added in order by the y = 0 thread (tq_coarse_site's
 * order). Links PL and vectors (faces too) PV bytes per real. */
#define ROWM_SITES 32

/* Whether site s is this launch's (interior or exterior part), with its block coordinates. */
__device__ static inline int rowm_site_is_mine(const tq_coarse_args &a, int64_t s, int exterior, int x[4])
{
    x[0] = x[1] = x[2] = x[3] = 0;
    if (s >= a.cb) return 0;
    tq_block_coords(a.B, a.parity, s, x);
    return tq_coarse_on_face(&a, x) == exterior;
}

/* One row of matrix m at site s: single-precision products for half links (PL 2). */
template <int PL>
__device__ __forceinline__ void coarse_row_matrix_of(const tq_coarse_args *a, const tq_layout *Ll, const tq_layout *Lin,
                                                     const void *in_same, const void *in, const void *links,
                                                     const void *const *from, const int x[4], int64_t s, int i, int m,
                                                     double *re, double *im)
{
    if (PL == 2) tq_coarse_row_matrix_f(a, Ll, Lin, in_same, in, links, from, x, s, i, m, re, im);
    else tq_coarse_row_matrix(a, Ll, Lin, in_same, in, links, from, x, s, i, m, re, im);
}

template <int PL, int PV>
__global__ void __launch_bounds__(ROWM_SITES * 9) coarse_rowm_kernel(tq_coarse_args a, const void *in_same,
                                                                      const void *in, const void *links, ptr8c from,
                                                                      void *out, int exterior)
{
    __shared__ double part[9][ROWM_SITES][2];
    const int t = threadIdx.x, m = threadIdx.y, i = blockIdx.y;
    const int64_t s = blockIdx.x * (int64_t)ROWM_SITES + t;
    const int m0 = a.local ? 0 : 1, m1 = a.no_hops ? 1 : 9;
    int x[4];
    const int mine = rowm_site_is_mine(a, s, exterior, x);
    double re = 0, im = 0;
    if (mine && m >= m0 && m < m1) {
        const tq_layout Ll = fixed_rows<PL>(a.L_links), Lin = fixed_rows<PV>(a.L_in);
        coarse_row_matrix_of<PL>(&a, &Ll, &Lin, in_same, in, links, exterior ? from.p : NULL, x, s, i, m, &re, &im);
    }
    part[m][t][0] = re;
    part[m][t][1] = im;
    __syncthreads();
    if (m == 0 && mine) {
        double acc_re = 0, acc_im = 0;
        for (int mm = m0; mm < m1; mm++) acc_re += part[mm][t][0], acc_im += part[mm][t][1];
        tq_store_complex(out, &a.L_out, (i / 12) * a.cb + s, i % 12, acc_re, acc_im);
    }
}

/* Half output: each 12-complex chunk of a site carries one scale, so a block stores whole
 * chunks: block (bx, j) holds sites 32 bx .. 32 bx + 31 and rows 12 j .. 12 j + 11, a
 * thread per (site, row) that adds the row's matrices in coarse_rowm_kernel's order. */
template <int PL, int PV>
__global__ void __launch_bounds__(ROWM_SITES * 12) coarse_rowm_chunk_kernel(tq_coarse_args a, const void *in_same,
                                                                             const void *in, const void *links,
                                                                             ptr8c from, void *out, int exterior)
{
    __shared__ double chunk[ROWM_SITES][24];
    const int t = threadIdx.x, r = threadIdx.y, j = blockIdx.y;
    const int64_t s = blockIdx.x * (int64_t)ROWM_SITES + t;
    const int m0 = a.local ? 0 : 1, m1 = a.no_hops ? 1 : 9;
    int x[4];
    const int mine = rowm_site_is_mine(a, s, exterior, x);
    if (mine) {
        const tq_layout Ll = fixed_rows<PL>(a.L_links), Lin = fixed_rows<PV>(a.L_in);
        double acc_re = 0, acc_im = 0;
        for (int m = m0; m < m1; m++) {
            double re, im;
            coarse_row_matrix_of<PL>(&a, &Ll, &Lin, in_same, in, links, exterior ? from.p : NULL, x, s, 12 * j + r, m,
                                     &re, &im);
            acc_re += re, acc_im += im;
        }
        chunk[t][2 * r] = acc_re;
        chunk[t][2 * r + 1] = acc_im;
    }
    __syncthreads();
    if (r == 0 && mine) tq_store_site(out, &a.L_out, j * a.cb + s, chunk[t]);
}

static void coarse_launch(const tq_coarse_args *a, const void *in_same, const void *in, const void *links, ptr8c from,
                          void *out, int exterior)
{
    int faces_like_in = 1;   /* the per-row kernel reads faces in the input's precision */
    for (int mu = 0; mu < 4; mu++)
        if (a->split[mu] && a->L_face[mu].prec != a->L_in.prec) faces_like_in = 0;
    if (!faces_like_in) {
        coarse_site_kernel<<<blocks_for(a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, in_same, in, links, from, out, exterior);
    } else if (a->L_out.prec == 2) {
        const dim3 grid((unsigned)((a->cb + ROWM_SITES - 1) / ROWM_SITES), (unsigned)(a->n / 12)), block(ROWM_SITES, 12);
        MG_DISPATCH2(coarse_rowm_chunk_kernel, a->L_links.prec, a->L_in.prec, grid, block, *a, in_same, in, links, from,
                     out, exterior);
    } else {
        const dim3 grid((unsigned)((a->cb + ROWM_SITES - 1) / ROWM_SITES), (unsigned)a->n), block(ROWM_SITES, 9);
        MG_DISPATCH2(coarse_rowm_kernel, a->L_links.prec, a->L_in.prec, grid, block, *a, in_same, in, links, from, out,
                     exterior);
    }
    check_launch();
}

/* The even-odd form's links of one site per thread block (tq_coarse_hat_site's arithmetic,
 * the block's threads sharing each step): X of the site and the identity in shared memory,
 * Gauss-Jordan elimination with partial pivoting (the pivot the first largest |x_ik|, as on
 * the CPU; each row update's factors, a column of n, read before the rows change), then
 * hat_m = X^-1 Y_m (m = 0: the identity), each entry summed over k in order, Y_m staged
 * where X was (eliminated by then): 4 n^2 + 2 n doubles, so n = 84 (42 null vectors) fits
 * an H100's or H200's 227 KB. A singular X gives NaN links, as on the CPU. Links single or
 * double. */
#define HAT_THREADS 256
__global__ void __launch_bounds__(HAT_THREADS) coarse_hat_kernel(tq_coarse_args a, const void *links, void *hat)
{
    extern __shared__ double staged[];
    __shared__ int pivot_row, singular;
    __shared__ double pivot_norm;
    const int n = a.n, per_row = n / 12, t = threadIdx.x, lane = t & 31;
    double *x = staged, *inv = x + 2 * n * n, *factor = inv + 2 * n * n, *y = x;
    const int64_t s = blockIdx.x;
    for (int q = t; q < n * per_row; q += blockDim.x) {
        double v[24];
        load_row_any(links, a.L_links, ((int64_t)(q / per_row) * per_row + q % per_row) * a.cb + s, v);
        double *dst = x + 2 * ((q / per_row) * n + 12 * (q % per_row));
        TQ_UNROLL
        for (int e = 0; e < 24; e++) dst[e] = v[e];
    }
    for (int q = t; q < n * n; q += blockDim.x) inv[2 * q] = q / n == q % n, inv[2 * q + 1] = 0;
    if (t == 0) singular = 0;
    __syncthreads();
    for (int k = 0; k < n; k++) {
        if (t < 32) {   /* the first row of the largest |x_ik|, i >= k */
            double best = -1;
            int piv = k;
            for (int i = k + lane; i < n; i += 32) {
                const double m = x[2 * (i * n + k)] * x[2 * (i * n + k)] + x[2 * (i * n + k) + 1] * x[2 * (i * n + k) + 1];
                if (m > best) best = m, piv = i;
            }
            for (int off = 16; off > 0; off >>= 1) {
                const double ob = __shfl_down_sync(0xffffffffu, best, off);
                const int op = __shfl_down_sync(0xffffffffu, piv, off);
                if (ob > best || (ob == best && op < piv)) best = ob, piv = op;
            }
            if (t == 0) pivot_row = piv, pivot_norm = best, singular = !(best > 0);
        }
        __syncthreads();
        if (singular) break;
        const int piv = pivot_row;
        const double best = pivot_norm;
        if (piv != k)
            for (int j = t; j < 2 * n; j += blockDim.x) {
                double u = x[2 * k * n + j]; x[2 * k * n + j] = x[2 * piv * n + j]; x[2 * piv * n + j] = u;
                u = inv[2 * k * n + j]; inv[2 * k * n + j] = inv[2 * piv * n + j]; inv[2 * piv * n + j] = u;
            }
        __syncthreads();
        const double pr = x[2 * (k * n + k)] / best, pi = -x[2 * (k * n + k) + 1] / best;   /* 1 / pivot */
        __syncthreads();
        for (int j = t; j < n; j += blockDim.x) {   /* row k /= pivot */
            double *e = x + 2 * (k * n + j), *f = inv + 2 * (k * n + j);
            const double er = e[0] * pr - e[1] * pi, ei = e[0] * pi + e[1] * pr;
            const double fr = f[0] * pr - f[1] * pi, fi = f[0] * pi + f[1] * pr;
            e[0] = er, e[1] = ei, f[0] = fr, f[1] = fi;
        }
        for (int i = t; i < n; i += blockDim.x)   /* the factors (row k's own is not used: row k is being scaled) */
            if (i != k) factor[2 * i] = x[2 * (i * n + k)], factor[2 * i + 1] = x[2 * (i * n + k) + 1];
        __syncthreads();
        for (int q = t; q < n * n; q += blockDim.x) {   /* row i -= x_ik row k */
            const int i = q / n, j = q % n;
            const double cr = factor[2 * i], ci = factor[2 * i + 1];
            if (i == k || (cr == 0 && ci == 0)) continue;
            const double *e = x + 2 * (k * n + j), *f = inv + 2 * (k * n + j);
            x[2 * (i * n + j)] -= cr * e[0] - ci * e[1];
            x[2 * (i * n + j) + 1] -= cr * e[1] + ci * e[0];
            inv[2 * (i * n + j)] -= cr * f[0] - ci * f[1];
            inv[2 * (i * n + j) + 1] -= cr * f[1] + ci * f[0];
        }
        __syncthreads();
    }
    if (singular)
        for (int q = t; q < 2 * n * n; q += blockDim.x) inv[q] = CUDART_NAN;
    for (int m = 0; m < 9; m++) {
        __syncthreads();
        if (m == 0)
            for (int q = t; q < n * n; q += blockDim.x) y[2 * q] = q / n == q % n, y[2 * q + 1] = 0;
        else
            for (int q = t; q < n * per_row; q += blockDim.x) {
                double v[24];
                load_row_any(links, a.L_links, (((int64_t)m * n + q / per_row) * per_row + q % per_row) * a.cb + s, v);
                double *dst = y + 2 * ((q / per_row) * n + 12 * (q % per_row));
                TQ_UNROLL
                for (int e = 0; e < 24; e++) dst[e] = v[e];
            }
        __syncthreads();
        for (int q = t; q < n * n; q += blockDim.x) {
            const int i = q / n, j = q % n;
            double re = 0, im = 0;
            for (int k = 0; k < n; k++) {
                const double *u = inv + 2 * (i * n + k), *v = y + 2 * (k * n + j);
                re += u[0] * v[0] - u[1] * v[1];
                im += u[0] * v[1] + u[1] * v[0];
            }
            tq_store_complex(hat, &a.L_links, (((int64_t)m * n + i) * per_row + j / 12) * a.cb + s, j % 12, re, im);
        }
    }
}

/* Shared memory of coarse_hat_kernel: X (then one Y_m) and its inverse, n x n complex
 * each, and a column of factors; with its static shared variables, at most `most` bytes. */
static size_t hat_shared_bytes(int n) { return sizeof(double) * (4 * (size_t)n * (size_t)n + 2 * (size_t)n); }
static int hat_fits(int n, int most) { return hat_shared_bytes(n) + 2 * sizeof(int) + sizeof(double) <= (size_t)most; }

extern "C" int tq_coarse_hat_fits_gpus(int n)
{
    static int least = -1;   /* the smallest opt-in shared memory per thread block of the GPUs */
    if (least < 0) {
        int count = 0, found = 0;
        if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
        for (int d = 0; d < count; d++) {
            int most = 0;
            if (cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, d) != cudaSuccess) most = 0;
            found = d == 0 || most < found ? most : found;
        }
        cudaGetLastError();   /* no device is not an error here */
        least = found;
    }
    return hat_fits(n, least);
}

extern "C" void tq_coarse_hat_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    const size_t smem = hat_shared_bytes(a->n);
    int dev = 0, most = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (!hat_fits(a->n, most) || a->L_links.prec == 2) {   /* the host sends only what fits (tq_mg_coarse_op_prepare_eo) */
        fprintf(stderr, "taskqcd: the even-odd coarse links of %d complex per site do not fit a GPU's thread block\n", a->n);
        /* NaN links (all bits set): the solves that use them fail with a breakdown, as after a singular X */
        const cudaError_t err = cudaMemsetAsync(PTR(1), 0xff, (size_t)tq_layout_bytes(&a->L_links), tq_cuda_stream());
        if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
        return;
    }
    cudaError_t err = cudaFuncSetAttribute(coarse_hat_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
    coarse_hat_kernel<<<(unsigned)a->cb, HAT_THREADS, smem, tq_cuda_stream()>>>(*a, PTR(0), PTR(1));
    check_launch();
}

/* Peer faces (face_sync.h): the pack waits until their readers are done with the set's
 * last use, writes them into the readers' GPUs and signals; the exterior waits for them and
 * signals back once it has read them. */
extern "C" void tq_coarse_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_face_args *fa = (const tq_coarse_face_args *)cl_arg;
    ptr8 faces = {{NULL}};
    tq_face_sync_pointers(fa->a.split, &fa->sync, buffers, 1, faces.p);
    tq_face_sync_wait(&fa->sync);
    coarse_pack_kernel<<<blocks_for(fa->a.cb), MG_THREADS, 0, tq_cuda_stream()>>>(fa->a, PTR(0), faces);
    check_launch();
    tq_face_sync_signal(&fa->sync);
}

extern "C" void tq_coarse_interior_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    const ptr8c none = {{NULL}};
    coarse_launch(a, PTR(0), PTR(1), PTR(2), none, PTR(3), 0);
}

extern "C" void tq_coarse_exterior_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_face_args *fa = (const tq_coarse_face_args *)cl_arg;
    void *faces[8] = {NULL};
    tq_face_sync_pointers(fa->a.split, &fa->sync, buffers, 4, faces);
    ptr8c from = {{NULL}};
    for (int i = 0; i < 8; i++) from.p[i] = faces[i];
    tq_face_sync_wait(&fa->sync);
    coarse_launch(&fa->a, PTR(0), PTR(1), PTR(2), from, PTR(3), 1);
    tq_face_sync_signal(&fa->sync);
}

__global__ void mg_fine_local_kernel(tq_mg_fine_args a, const void *gauge, const void *clover, void *links)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.cb) tq_mg_fine_local_site(&a, gauge, clover, links, a.parity, s);
}

/* both parities: thread i is site i mod cb of parity i / cb */
__global__ void mg_fine_pack_kernel(tq_mg_fine_args a, ptr2c links, ptr8 faces)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.cb) return;
    const int p = (int)(i / a.cb);
    tq_mg_fine_pack_site(&a, links.p[p], faces.p, p, i - p * a.cb);
}

/* each thread writes its site's Yb matrices and reads only Yf ones: no two threads touch one value */
__global__ void mg_fine_back_kernel(tq_mg_fine_args a, ptr2 links, ptr8c from)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.cb) return;
    const int p = (int)(i / a.cb);
    tq_mg_fine_back_site(&a, links.p, from.p, p, i - p * a.cb);
}

extern "C" void tq_mg_fine_local_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_fine_args *a = (const tq_mg_fine_args *)cl_arg;
    const void *clover = a->clover ? PTR(2) : NULL;
    mg_fine_local_kernel<<<blocks_for(a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), clover, PTR(1));
    check_launch();
}

extern "C" void tq_mg_fine_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_fine_args *a = (const tq_mg_fine_args *)cl_arg;
    const ptr2c links = {{PTR(0), PTR(1)}};
    ptr8 faces = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) faces.p[i] = PTR(2 + i);
    mg_fine_pack_kernel<<<blocks_for(2 * a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, links, faces);
    check_launch();
}

extern "C" void tq_mg_fine_back_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_fine_args *a = (const tq_mg_fine_args *)cl_arg;
    const ptr2 links = {{PTR(0), PTR(1)}};
    ptr8c from = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) from.p[i] = PTR(2 + i);
    mg_fine_back_kernel<<<blocks_for(2 * a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, links, from);
    check_launch();
}

__global__ void mg_coarsen_pack_kernel(tq_mg_coarsen_args a, ptr2c basis, ptr8 faces)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.t.fine_cb * a.t.nvec) return;
    const int k = (int)(i % a.t.nvec);
    const int64_t site = i / a.t.nvec;
    const int p = (int)(site / a.t.fine_cb);
    tq_mg_coarsen_pack_vector(&a, basis.p, faces.p, p, site - p * a.t.fine_cb, k);
}

/* The basis at fine site x (block-local; one step outside the block in a split direction:
 * from that side's face) into V (nvec x nf complex, shared memory) by the block's threads,
 * as tq_mg_coarsen_load_basis finds it. */
__device__ static void coarsen_load_basis(const tq_mg_coarsen_args &a, const ptr2c &basis, const ptr8c &from,
                                          const int *xin, double *V)
{
    const tq_mg_transfer_args &t = a.t;
    int x[4] = {xin[0], xin[1], xin[2], xin[3]};
    int k_split = 0;
    for (int mu = 0; mu < 4; mu++) {
        const int side = x[mu] < 0 ? 0 : x[mu] >= t.fine_block[mu] ? 1 : -1;
        if (side >= 0 && a.split[mu]) {
            const tq_layout L = a.L_face[mu];
            const int64_t layer = tq_mg_layer_index(t.fine_block, mu, x);
            for (int j = threadIdx.x; j < L.nreal / L.vec; j += blockDim.x)
                tq_load_chunk(from.p[2 * k_split + side], &L, layer, j, 0.0, V + j * L.vec);
            return;
        }
        if (side >= 0) x[mu] = (x[mu] + t.fine_block[mu]) % t.fine_block[mu];   /* periodic, unsplit */
        k_split += a.split[mu];
    }
    const int p = (x[0] + x[1] + x[2] + x[3]) & 1;
    const int64_t s = tq_block_cb(t.fine_block, x);
    for (int q = threadIdx.x; q < t.nvec * t.rows; q += blockDim.x) {
        const int k = q / t.rows, r = q % t.rows;
        double v[24];
        load_row_any(basis.p[p], t.Lb, (k * t.rows + r) * t.fine_cb + s, v);
        double *dst = V + 2 * ((int64_t)k * a.nf + 12 * r);
        TQ_UNROLL
        for (int e = 0; e < 24; e++) dst[e] = v[e];
    }
}

#define COARSEN_THREADS 256

/* Doubles of shared memory mg_coarsen_kernel stages: Vs and Vn (nvec x nf complex), the
 * fine matrix (nf x nf), M Vn (nf x nc). */
static size_t coarsen_shared_bytes(const tq_mg_coarsen_args *a)
{
    const size_t nf = (size_t)a->nf, nvec = (size_t)a->t.nvec;
    return sizeof(double) * 2 * (2 * nvec * nf + nf * nf + nf * 2 * nvec);
}

/* blockIdx.x: coarse site (both parities), blockIdx.y: matrix m. For each fine site of the
 * aggregate in order and each of its nine terms that lands in m (tq_mg_coarsen_target), the
 * block stages the row site's basis Vs, the column site's Vn and the fine matrix in shared
 * memory, makes M Vn once per (d, j) (tq_mg_galerkin_mv), and each thread adds the term to
 * its EPT entries of the nc x nc matrix (tq_mg_galerkin_entry): every entry's sum in the
 * CPU's order (tq_mg_coarsen_site). Links single or double (coarse links are never half). */
template <int EPT>
__global__ void __launch_bounds__(COARSEN_THREADS) mg_coarsen_kernel(tq_mg_coarsen_args a, ptr2c basis, ptr2c flinks,
                                                                     ptr8c from, ptr2 clinks)
{
    extern __shared__ double staged[];
    const tq_mg_transfer_args &t = a.t;
    const int nc = 2 * t.nvec, nf = a.nf, frows = nf * nf / 12, vol = tq_mg_agg_volume(&t);
    double *Vs = staged, *Vn = Vs + 2 * t.nvec * nf, *M = Vn + 2 * t.nvec * nf, *MV = M + 2 * nf * nf;
    const int m = blockIdx.y;
    int pc, xc[4];
    const int64_t sc = agg_block_site(t, &pc, xc);
    double acc[EPT][2];
    TQ_UNROLL
    for (int u = 0; u < EPT; u++) acc[u][0] = acc[u][1] = 0;
    for (int o = 0; o < vol; o++) {
        int pf, xf[4];
        int64_t sf;
        tq_mg_fine_site_at(&t, xc, o, xf, &pf, &sf);
        int have_vs = 0;
        for (int mm = 0; mm < 9; mm++) {
            int y[4];
            if (tq_mg_coarsen_target(&t, xf, mm, y) != m) continue;   /* the same for every thread */
            if (!have_vs) coarsen_load_basis(a, basis, from, xf, Vs), have_vs = 1;
            coarsen_load_basis(a, basis, from, y, Vn);
            for (int r = threadIdx.x; r < frows; r += blockDim.x) {
                double v[24];
                load_row_any(flinks.p[pf], a.L_flinks, ((int64_t)mm * frows + r) * t.fine_cb + sf, v);
                TQ_UNROLL
                for (int e = 0; e < 24; e++) M[24 * r + e] = v[e];
            }
            __syncthreads();
            for (int q = threadIdx.x; q < nf * nc; q += blockDim.x)
                tq_mg_galerkin_mv(&a, M, Vn, q / nc, q % nc, MV + 2 * q, MV + 2 * q + 1);
            __syncthreads();
            TQ_UNROLL
            for (int u = 0; u < EPT; u++) {
                const int ij = threadIdx.x + u * COARSEN_THREADS;
                if (ij < nc * nc) {
                    double re, im;
                    tq_mg_galerkin_entry(&a, MV, Vs, ij / nc, ij % nc, &re, &im);
                    acc[u][0] += re;
                    acc[u][1] += im;
                }
            }
            __syncthreads();   /* before the next term overwrites the staged values */
        }
    }
    const int crows = nc * nc / 12;
    TQ_UNROLL
    for (int u = 0; u < EPT; u++) {
        const int ij = threadIdx.x + u * COARSEN_THREADS;
        if (ij < nc * nc)
            tq_store_complex(clinks.p[pc], &a.L_clinks, ((int64_t)m * crows + ij / 12) * t.coarse_cb + sc, ij % 12,
                             acc[u][0], acc[u][1]);
    }
}

template <int EPT>
static void coarsen_launch(const tq_mg_coarsen_args *a, ptr2c basis, ptr2c flinks, ptr8c from, ptr2 clinks, size_t smem)
{
    cudaError_t err = cudaFuncSetAttribute(mg_coarsen_kernel<EPT>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem);
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
    mg_coarsen_kernel<EPT><<<dim3((unsigned)(2 * a->t.coarse_cb), 9), COARSEN_THREADS, smem, tq_cuda_stream()>>>(
        *a, basis, flinks, from, clinks);
}

extern "C" void tq_mg_coarsen_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_coarsen_args *a = (const tq_mg_coarsen_args *)cl_arg;
    const ptr2c basis = {{PTR(0), PTR(1)}};
    ptr8 faces = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) faces.p[i] = PTR(2 + i);
    mg_coarsen_pack_kernel<<<blocks_for(2 * a->t.fine_cb * a->t.nvec), MG_THREADS, 0, tq_cuda_stream()>>>(*a, basis, faces);
    check_launch();
}

extern "C" void tq_mg_coarsen_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_coarsen_args *a = (const tq_mg_coarsen_args *)cl_arg;
    const ptr2c basis = {{PTR(0), PTR(1)}}, flinks = {{PTR(2), PTR(3)}};
    const ptr2 clinks = {{PTR(4), PTR(5)}};
    ptr8c from = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) from.p[i] = PTR(7 + i);
    const int nc = 2 * a->t.nvec, ept = (nc * nc + COARSEN_THREADS - 1) / COARSEN_THREADS;
    const size_t smem = coarsen_shared_bytes(a);
    int dev = 0, most = 0;
    cudaGetDevice(&dev);
    cudaDeviceGetAttribute(&most, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev);
    if (smem > (size_t)most || a->L_clinks.prec == 2 || ept > 64) {
        /* the block's status: -1, the host's "out of memory in a Galerkin task" */
        const cudaError_t err = cudaMemsetAsync(PTR(6), 0xff, sizeof(int64_t), tq_cuda_stream());
        if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
        return;
    }
    if (ept <= 1) coarsen_launch<1>(a, basis, flinks, from, clinks, smem);
    else if (ept <= 3) coarsen_launch<3>(a, basis, flinks, from, clinks, smem);
    else if (ept <= 9) coarsen_launch<9>(a, basis, flinks, from, clinks, smem);
    else if (ept <= 16) coarsen_launch<16>(a, basis, flinks, from, clinks, smem);
    else if (ept <= 36) coarsen_launch<36>(a, basis, flinks, from, clinks, smem);
    else coarsen_launch<64>(a, basis, flinks, from, clinks, smem);
    check_launch();
    /* the block's status: 0 (done) */
    const cudaError_t err = cudaMemsetAsync(PTR(6), 0, sizeof(int64_t), tq_cuda_stream());
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

__global__ void mg_basis_put_kernel(tq_mg_transfer_args a, ptr2c vec, ptr2 basis)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.fine_cb) return;
    const int p = (int)(i / a.fine_cb);
    tq_mg_basis_put_site(&a, vec.p, basis.p, p, i - p * a.fine_cb);
}

extern "C" void tq_mg_basis_put_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const ptr2c vec = {{PTR(0), PTR(1)}};
    const ptr2 basis = {{PTR(2), PTR(3)}};
    mg_basis_put_kernel<<<blocks_for(2 * a->fine_cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, vec, basis);
    check_launch();
}

#define ORTHO_THREADS 256

/* The sum over the thread block of v (and w), returned to every thread. */
__device__ static void block_sum2(double *v, double *w, double (*red)[ORTHO_THREADS])
{
    const int t = threadIdx.x;
    red[0][t] = *v;
    red[1][t] = *w;
    __syncthreads();
    for (int h = ORTHO_THREADS / 2; h > 0; h /= 2) {
        if (t < h) red[0][t] += red[0][t + h], red[1][t] += red[1][t + h];
        __syncthreads();
    }
    *v = red[0][0];
    *w = red[1][0];
    __syncthreads();
}

/* Element q (of the chirality's vol x 6 rows complex) of basis vector k on the aggregate of
 * coarse block coordinates xc: its buffer parity, site and complex index in the row. */
__device__ static void ortho_element(const tq_mg_transfer_args *a, const int xc[4], int chi, int k, int q, int *pf,
                                     int64_t *site, int *e)
{
    const int half = 6 * a->rows;
    int64_t sf;
    tq_mg_fine_site(a, xc, q / half, pf, &sf);
    const int el = chi * half + q % half;   /* complex index in the fine site's 12 rows */
    *site = ((int64_t)k * a->rows + el / 12) * a->fine_cb + sf;
    *e = el % 12;
}

__global__ void __launch_bounds__(ORTHO_THREADS) mg_orthonormalise_kernel(tq_mg_transfer_args a, ptr2 basis,
                                                                         unsigned long long *dependent)
{
    __shared__ double red[2][ORTHO_THREADS];
    int pc, xc[4];
    agg_block_site(a, &pc, xc);
    const int n = tq_mg_agg_volume(&a) * 6 * a.rows;   /* complex of one chirality part */
    for (int chi = 0; chi < 2; chi++)
        for (int k = 0; k < a.nvec; k++) {
            double before = 0, zero = 0;
            for (int q = threadIdx.x; q < n; q += ORTHO_THREADS) {
                int pf, e;
                int64_t s;
                double re, im;
                ortho_element(&a, xc, chi, k, q, &pf, &s, &e);
                tq_load_complex(basis.p[pf], &a.Lb, s, e, &re, &im);
                before += re * re + im * im;
            }
            block_sum2(&before, &zero, red);
            for (int j = 0; j < k; j++) {
                double cre = 0, cim = 0;   /* <v_j, v_k> on this chirality */
                for (int q = threadIdx.x; q < n; q += ORTHO_THREADS) {
                    int pf, e;
                    int64_t sj, sk;
                    double jr, ji, kr, ki;
                    ortho_element(&a, xc, chi, j, q, &pf, &sj, &e);
                    ortho_element(&a, xc, chi, k, q, &pf, &sk, &e);
                    tq_load_complex(basis.p[pf], &a.Lb, sj, e, &jr, &ji);
                    tq_load_complex(basis.p[pf], &a.Lb, sk, e, &kr, &ki);
                    cre += jr * kr + ji * ki;
                    cim += jr * ki - ji * kr;
                }
                block_sum2(&cre, &cim, red);
                for (int q = threadIdx.x; q < n; q += ORTHO_THREADS) {   /* each thread its own elements */
                    int pf, e;
                    int64_t sj, sk;
                    double jr, ji, kr, ki;
                    ortho_element(&a, xc, chi, j, q, &pf, &sj, &e);
                    ortho_element(&a, xc, chi, k, q, &pf, &sk, &e);
                    tq_load_complex(basis.p[pf], &a.Lb, sj, e, &jr, &ji);
                    tq_load_complex(basis.p[pf], &a.Lb, sk, e, &kr, &ki);
                    tq_store_complex(basis.p[pf], &a.Lb, sk, e, kr - (cre * jr - cim * ji), ki - (cre * ji + cim * jr));
                }
            }
            double n2 = 0;
            for (int q = threadIdx.x; q < n; q += ORTHO_THREADS) {
                int pf, e;
                int64_t s;
                double re, im;
                ortho_element(&a, xc, chi, k, q, &pf, &s, &e);
                tq_load_complex(basis.p[pf], &a.Lb, s, e, &re, &im);
                n2 += re * re + im * im;
            }
            block_sum2(&n2, &zero, red);
            const int bad = !(n2 > 1e-24 * before) || n2 == 0.0;
            const double f = bad ? 0.0 : 1.0 / sqrt(n2);
            for (int q = threadIdx.x; q < n; q += ORTHO_THREADS) {
                int pf, e;
                int64_t s;
                double re, im;
                ortho_element(&a, xc, chi, k, q, &pf, &s, &e);
                tq_load_complex(basis.p[pf], &a.Lb, s, e, &re, &im);
                tq_store_complex(basis.p[pf], &a.Lb, s, e, re * f, im * f);
            }
            if (bad && threadIdx.x == 0) atomicAdd(dependent, 1ull);
        }
}

extern "C" void tq_mg_orthonormalise_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const ptr2 basis = {{PTR(0), PTR(1)}};
    unsigned long long *dependent = (unsigned long long *)PTR(2);   /* the block's int64 status */
    cudaError_t err = cudaMemsetAsync(dependent, 0, sizeof *dependent, tq_cuda_stream());
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
    mg_orthonormalise_kernel<<<(unsigned)(2 * a->coarse_cb), ORTHO_THREADS, 0, tq_cuda_stream()>>>(*a, basis, dependent);
    check_launch();
}
