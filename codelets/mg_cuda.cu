/* Multigrid codelets on GPUs: restriction, prolongation and the coarse operator's pack,
 * interior and exterior (CPU versions and buffer orders: codelets/mg_transfer.c,
 * codelets/coarse_op.c), asynchronous on tq_cuda_stream(). Coarse lattices are small (a
 * 4^4 coarse block has 128 sites per parity), so the restriction and the coarse operator
 * give each output degree of freedom (row) its own thread: tq_mg_restrict_dof and
 * tq_coarse_site_row, the same products in the same order as the CPU's per-site functions
 * (kernels/mg_transfer_site.h, kernels/coarse_op_site.h); threads x: sites (coalesced), y:
 * rows. A half-precision output site needs all its values for its norm: those go one
 * thread per site. The Galerkin product gives each entry of the nine coarse matrices of a
 * coarse site its own thread (tq_mg_coarsen_entry; a thread block per coarse site and
 * matrix), its face pack one thread per fine site and basis vector. A basis copy goes one
 * thread per fine site (tq_mg_basis_put_site). The block orthonormalisation is a thread
 * block per coarse site: modified Gram-Schmidt as tq_mg_orthonormalise_site does it, but
 * each inner product summed by the block's threads in a tree (not the CPU's order: the
 * basis agrees with the CPU's to rounding, and is the same for every decomposition). The
 * fine level's stencil form (the Galerkin product's input) goes one thread per fine site,
 * as on the CPU (tq_mg_fine_local_site, _pack_site, _back_site: the same bits). */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define MG_THREADS 64
#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

static unsigned blocks_for(int64_t n) { return (unsigned)((n + MG_THREADS - 1) / MG_THREADS); }

/* Per-row kernels: 32 sites x 4 rows per thread block. */
#define ROW_SITES 32
#define ROW_ROWS 4
static dim3 row_grid(int64_t sites, int rows)
{
    return dim3((unsigned)((sites + ROW_SITES - 1) / ROW_SITES), (unsigned)((rows + ROW_ROWS - 1) / ROW_ROWS));
}

static void check_launch(void)
{
    cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

typedef struct { const void *p[2]; } ptr2c;
typedef struct { void *p[2]; } ptr2;
typedef struct { void *p[8]; } ptr8;
typedef struct { const void *p[8]; } ptr8c;

__global__ void mg_restrict_kernel(tq_mg_transfer_args a, ptr2c fine, ptr2c basis, ptr2 coarse)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.coarse_cb) return;
    const int pc = (int)(i / a.coarse_cb);
    tq_mg_restrict_site(&a, fine.p, basis.p, coarse.p, pc, i - pc * a.coarse_cb);
}

__global__ void mg_restrict_dof_kernel(tq_mg_transfer_args a, ptr2c fine, ptr2c basis, ptr2 coarse)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int d = blockIdx.y * blockDim.y + threadIdx.y;
    if (i >= 2 * a.coarse_cb || d >= 2 * a.nvec) return;
    const int pc = (int)(i / a.coarse_cb);
    const int64_t sc = i - pc * a.coarse_cb;
    double re, im;
    tq_mg_restrict_dof(&a, fine.p, basis.p, pc, sc, d, &re, &im);
    tq_store_complex(coarse.p[pc], &a.Lc, (d / 12) * a.coarse_cb + sc, d % 12, re, im);
}

__global__ void mg_prolong_kernel(tq_mg_transfer_args a, ptr2c coarse, ptr2c basis, ptr2 fine)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.fine_cb) return;
    const int pf = (int)(i / a.fine_cb);
    tq_mg_prolong_site(&a, coarse.p, basis.p, fine.p, pf, i - pf * a.fine_cb);
}

extern "C" void tq_mg_restrict_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const ptr2c fine = {{PTR(0), PTR(1)}}, basis = {{PTR(2), PTR(3)}};
    const ptr2 coarse = {{PTR(4), PTR(5)}};
    if (a->Lc.prec == 2)
        mg_restrict_kernel<<<blocks_for(2 * a->coarse_cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, fine, basis, coarse);
    else
        mg_restrict_dof_kernel<<<row_grid(2 * a->coarse_cb, 2 * a->nvec), dim3(ROW_SITES, ROW_ROWS), 0, tq_cuda_stream()>>>(
            *a, fine, basis, coarse);
    check_launch();
}

extern "C" void tq_mg_prolong_cuda(void *buffers[], void *cl_arg)
{
    const tq_mg_transfer_args *a = (const tq_mg_transfer_args *)cl_arg;
    const ptr2c coarse = {{PTR(0), PTR(1)}}, basis = {{PTR(2), PTR(3)}};
    const ptr2 fine = {{PTR(4), PTR(5)}};
    mg_prolong_kernel<<<blocks_for(2 * a->fine_cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, coarse, basis, fine);
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

__global__ void coarse_row_kernel(tq_coarse_args a, const void *in_same, const void *in, const void *links, ptr8c from,
                                  void *out, int exterior)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int i = blockIdx.y * blockDim.y + threadIdx.y;
    if (s >= a.cb || i >= a.n) return;
    int x[4];
    tq_block_coords(a.B, a.parity, s, x);
    if (tq_coarse_on_face(&a, x) != exterior) return;
    double re, im;
    tq_coarse_site_row(&a, in_same, in, links, exterior ? from.p : NULL, s, i, &re, &im);
    tq_store_complex(out, &a.L_out, (i / 12) * a.cb + s, i % 12, re, im);
}

static void coarse_launch(const tq_coarse_args *a, const void *in_same, const void *in, const void *links, ptr8c from,
                          void *out, int exterior)
{
    if (a->L_out.prec == 2)
        coarse_site_kernel<<<blocks_for(a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, in_same, in, links, from, out, exterior);
    else
        coarse_row_kernel<<<row_grid(a->cb, a->n), dim3(ROW_SITES, ROW_ROWS), 0, tq_cuda_stream()>>>(*a, in_same, in, links,
                                                                                                     from, out, exterior);
    check_launch();
}

extern "C" void tq_coarse_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    ptr8 faces = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) faces.p[i] = PTR(1 + i);
    coarse_pack_kernel<<<blocks_for(a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), faces);
    check_launch();
}

extern "C" void tq_coarse_interior_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    const ptr8c none = {{NULL}};
    coarse_launch(a, PTR(0), PTR(1), PTR(2), none, PTR(3), 0);
}

extern "C" void tq_coarse_exterior_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    ptr8c from = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) from.p[i] = PTR(4 + i);
    coarse_launch(a, PTR(0), PTR(1), PTR(2), from, PTR(3), 1);
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

/* blockIdx.x: coarse site (both parities), blockIdx.y: matrix; the threads stride over
 * the matrix's entries */
__global__ void mg_coarsen_kernel(tq_mg_coarsen_args a, ptr2c basis, ptr2c flinks, ptr8c from, ptr2 clinks)
{
    const int64_t i = blockIdx.x;
    const int m = blockIdx.y, nc = 2 * a.t.nvec, crows = nc * nc / 12;
    const int pc = (int)(i / a.t.coarse_cb);
    const int64_t sc = i - pc * a.t.coarse_cb;
    for (int ij = threadIdx.x; ij < nc * nc; ij += blockDim.x) {
        double re, im;
        tq_mg_coarsen_entry(&a, basis.p, flinks.p, from.p, pc, sc, m, ij / nc, ij % nc, &re, &im);
        tq_store_complex(clinks.p[pc], &a.L_clinks, ((int64_t)m * crows + ij / 12) * a.t.coarse_cb + sc, ij % 12, re, im);
    }
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
    mg_coarsen_kernel<<<dim3((unsigned)(2 * a->t.coarse_cb), 9), 128, 0, tq_cuda_stream()>>>(*a, basis, flinks, from, clinks);
    check_launch();
    /* the block's status: 0 (no workspace to run out of here) */
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
    const int64_t ic = blockIdx.x;
    const int pc = (int)(ic / a.coarse_cb);
    int xc[4];
    tq_block_coords(a.coarse_block, pc, ic - pc * a.coarse_cb, xc);
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
