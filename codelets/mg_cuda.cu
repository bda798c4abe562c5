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
 * matrix), its face pack one thread per fine site and basis vector. The other set-up
 * codelets (basis copies, orthonormalisation) stay on CPU workers. */
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
