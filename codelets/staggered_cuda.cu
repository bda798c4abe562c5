/* Improved staggered codelets on GPUs (CPU versions and buffer orders: codelets/staggered.c),
 * asynchronous on tq_cuda_stream(): a thread per site running the same per-site functions
 * (kernels/staggered_site.h, kernels/staggered_links_site.h). A first version, correct before
 * fast: the operator keeps one direction's four links (72 reals) per thread and the link
 * builds (asqtad, HISQ's first level) their nested staples in local memory. Double agrees with the CPU to rounding (the GPU
 * contracts products into fused multiply-adds); a site is computed whole by one thread of
 * one kernel, interior or exterior alike, so results are bitwise the same for every block
 * decomposition. */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>

#define KS_THREADS 128
#define KS_BUILD_THREADS 64
#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

typedef struct { void *p[8]; } ks_ptr8;
typedef struct { const void *p[8]; } ks_ptr8c;

static unsigned grid_for(int64_t n, int threads) { return (unsigned)((n + threads - 1) / threads); }

static void check_launch(void)
{
    const cudaError_t err = cudaGetLastError();
    if (err != cudaSuccess) STARPU_CUDA_REPORT_ERROR(err);
}

__global__ void __launch_bounds__(KS_THREADS) ks_pack_kernel(tq_ks_args a, const void *in, ks_ptr8 faces)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.cb) tq_ks_pack_site(&a, in, faces.p, s);
}

/* exterior 0: the sites without a hop across a split direction; 1: those with one. */
__global__ void __launch_bounds__(KS_THREADS) ks_site_kernel(tq_ks_args a, const void *in, const void *links,
                                                             ks_ptr8c from, void *out, int exterior)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s >= a.cb) return;
    int x[4];
    tq_block_coords(a.B, a.parity, s, x);
    if (tq_ks_on_face(&a, x) != exterior) return;
    tq_ks_site(&a, in, links, exterior ? from.p : NULL, out, s);
}

__global__ void __launch_bounds__(KS_BUILD_THREADS) ks_build_kernel(tq_ks_build_args a, const double *thin, void *out)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.cb) tq_ks_build_site(&a, thin, out, s);
}

__global__ void __launch_bounds__(KS_BUILD_THREADS) ks_hisq_w_kernel(tq_ks_smear_args a, const double *thin, double *w)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < a.count) tq_ks_hisq_w_site(&a, thin, w, i);
}

extern "C" void tq_ks_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_ks_args *a = (const tq_ks_args *)cl_arg;
    ks_ptr8 faces = {{NULL}};
    for (int i = 0; i < a->nfaces && i < 8; i++) faces.p[i] = PTR(1 + i);
    if (a->cb > 0) ks_pack_kernel<<<grid_for(a->cb, KS_THREADS), KS_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), faces);
    check_launch();
}

static void site_launch(const tq_ks_args *a, void *buffers[], int exterior)
{
    ks_ptr8c from = {{NULL}};
    if (exterior)
        for (int i = 0; i < a->nfaces && i < 8; i++) from.p[i] = PTR(3 + i);
    if (a->cb > 0)
        ks_site_kernel<<<grid_for(a->cb, KS_THREADS), KS_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), PTR(1), from, PTR(2),
                                                                                      exterior);
    check_launch();
}

extern "C" void tq_ks_interior_cuda(void *buffers[], void *cl_arg)
{
    site_launch((const tq_ks_args *)cl_arg, buffers, 0);
}

extern "C" void tq_ks_exterior_cuda(void *buffers[], void *cl_arg)
{
    site_launch((const tq_ks_args *)cl_arg, buffers, 1);
}

extern "C" void tq_ks_build_cuda(void *buffers[], void *cl_arg)
{
    const tq_ks_build_args *a = (const tq_ks_build_args *)cl_arg;
    if (a->cb > 0)
        ks_build_kernel<<<grid_for(a->cb, KS_BUILD_THREADS), KS_BUILD_THREADS, 0, tq_cuda_stream()>>>(
            *a, (const double *)PTR(0), PTR(1));
    check_launch();
}

extern "C" void tq_ks_hisq_w_cuda(void *buffers[], void *cl_arg)
{
    const tq_ks_smear_args *a = (const tq_ks_smear_args *)cl_arg;
    if (a->count > 0)
        ks_hisq_w_kernel<<<grid_for(a->count, KS_BUILD_THREADS), KS_BUILD_THREADS, 0, tq_cuda_stream()>>>(
            *a, (const double *)PTR(0), (double *)PTR(1));
    check_launch();
}
