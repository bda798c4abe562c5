/* Multigrid codelets on GPUs: restriction, prolongation and the coarse operator's pack,
 * interior and exterior (CPU versions and buffer orders: codelets/mg_transfer.c,
 * codelets/coarse_op.c), asynchronous on tq_cuda_stream(). One thread per output site runs
 * the same per-site function as the CPU (kernels/mg_transfer_site.h,
 * kernels/coarse_op_site.h), so both give the same arithmetic; a first slice: coarse
 * lattices are small and one thread holds a site's whole vector (fine for correctness,
 * not yet tuned). The set-up codelets (basis copies, orthonormalisation, the Galerkin
 * product) stay on CPU workers. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

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

__global__ void mg_restrict_kernel(tq_mg_transfer_args a, ptr2c fine, ptr2c basis, ptr2 coarse)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= 2 * a.coarse_cb) return;
    const int pc = (int)(i / a.coarse_cb);
    tq_mg_restrict_site(&a, fine.p, basis.p, coarse.p, pc, i - pc * a.coarse_cb);
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
    mg_restrict_kernel<<<blocks_for(2 * a->coarse_cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, fine, basis, coarse);
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
    coarse_site_kernel<<<blocks_for(a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), PTR(1), PTR(2), none, PTR(3), 0);
    check_launch();
}

extern "C" void tq_coarse_exterior_cuda(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    ptr8c from = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) from.p[i] = PTR(4 + i);
    coarse_site_kernel<<<blocks_for(a->cb), MG_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), PTR(1), PTR(2), from, PTR(3), 1);
    check_launch();
}
