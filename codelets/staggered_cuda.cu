/* Improved staggered codelets on GPUs (CPU versions and buffer orders: codelets/staggered.c),
 * asynchronous on tq_cuda_stream(), running the per-site functions of
 * kernels/staggered_site.h and kernels/staggered_links_site.h.
 *
 * The hopping term: four consecutive threads per site, thread mu computing direction mu's
 * four products (its 72 reals of links, four neighbours) in registers, in float for single
 * and half fields and double for double ones; a warp holds 8 sites, and the running sum
 * passes from thread 0 to 3 by shuffles, each adding its products in the reference's order
 * (kernels/staggered_site_real.h), so the sum is rounded exactly as the CPU's loop rounds it
 * (the products differ from the CPU's in double only by fused multiply-adds). The interior
 * and exterior kernels run the same code for a site, whichever computes it, so results are
 * bitwise the same for every block decomposition. Pack and the link builds: a thread per
 * site or entry (the link builds keep their nested staples in local memory). */
#include "config.h"
#include "tq_codelets.h"

#include <cuda_runtime.h>
#include <type_traits>

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

__global__ void __launch_bounds__(KS_THREADS) ks_pack_kernel(tq_ks_args a, const void *in, const __grid_constant__ ks_ptr8 faces)
{
    const int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (s < a.cb) tq_ks_pack_site(&a, in, faces.p, s);
}

/* Typed entry points, picked by the real type (double fields: double; others: float). */
__device__ __forceinline__ void ks_terms(const tq_ks_dir *d, const void *in, const tq_layout *Lin, const void *links,
                                         const tq_layout *Ll, int64_t cb, int64_t s, int faces, double t[4][6])
{
    tq_ks_dir_terms(d, in, Lin, links, Ll, cb, s, faces, t);
}
__device__ __forceinline__ void ks_terms(const tq_ks_dir *d, const void *in, const tq_layout *Lin, const void *links,
                                         const tq_layout *Ll, int64_t cb, int64_t s, int faces, float t[4][6])
{
    tq_ks_dir_terms_f(d, in, Lin, links, Ll, cb, s, faces, t);
}
__device__ __forceinline__ void ks_accumulate(double acc[6], double t[4][6]) { tq_ks_accumulate(acc, t); }
__device__ __forceinline__ void ks_accumulate(float acc[6], float t[4][6]) { tq_ks_accumulate_f(acc, t); }
__device__ __forceinline__ void ks_store(void *out, const tq_layout *L, int64_t s, const double *v) { tq_store_site(out, L, s, v); }
__device__ __forceinline__ void ks_store(void *out, const tq_layout *L, int64_t s, const float *v) { tq_store_site_f(out, L, s, v); }

/* The hopping term on the sites of one kind (EXT 0: no hop across a split direction; 1:
 * some; the others are skipped), KS_THREADS / 4 sites per block, thread 4 i + mu of a warp
 * on its site i's direction mu. Lanes of skipped or absent sites still take part in the
 * shuffles (adding zeros nobody stores); a warp with no site of its kind leaves at once. */
template <int PREC, int EXT>
__global__ void __launch_bounds__(KS_THREADS)
ks_dslash_kernel(tq_ks_args a, const void *in, const void *links, const __grid_constant__ ks_ptr8c from, void *out)
{
    typedef typename std::conditional<PREC == 8, double, float>::type R;
    const int mu = threadIdx.x & 3;
    const int64_t s = blockIdx.x * (int64_t)(KS_THREADS / 4) + (threadIdx.x >> 2);
    int x[4] = {0, 0, 0, 0}, mine = 0;
    if (s < a.cb) {
        tq_block_coords(a.B, a.parity, s, x);
        mine = tq_ks_on_face(&a, x) == EXT;
    }
    if (!__any_sync(0xffffffffu, mine)) return;   /* warp-uniform: the shuffles below see every lane */
    R t[4][6];
#pragma unroll
    for (int k = 0; k < 4; k++)
#pragma unroll
        for (int i = 0; i < 6; i++) t[k][i] = 0;
    tq_layout Lin, Lout, Ll;
    tq_ks_layouts(&a, PREC, &Lin, &Lout, &Ll);
    if (mine) {
        tq_ks_dir d;
        tq_ks_dir_init(&a, from.p, x, mu, PREC, EXT, &d);
        ks_terms(&d, in, &Lin, links, &Ll, a.cb, s, EXT, t);
    }
    /* direction 0 adds its products to zero, then 1, 2, 3 each to the sum the previous
     * lane passes up: the CPU's order, sum for sum */
    R acc[6] = {0, 0, 0, 0, 0, 0};
    if (mu == 0) ks_accumulate(acc, t);
#pragma unroll
    for (int k = 1; k < 4; k++) {
        R up[6];
#pragma unroll
        for (int i = 0; i < 6; i++) up[i] = __shfl_up_sync(0xffffffffu, acc[i], 1, 4);
        if (mu == k) {
#pragma unroll
            for (int i = 0; i < 6; i++) acc[i] = up[i];
            ks_accumulate(acc, t);
        }
    }
    if (mine && mu == 3) ks_store(out, &Lout, s, acc);
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

/* Peer faces (face_sync.h): the pack waits until their readers are done with the set's
 * last use, writes them into the readers' GPUs and signals; the exterior waits for them and
 * signals back once it has read them. */
extern "C" void tq_ks_pack_cuda(void *buffers[], void *cl_arg)
{
    const tq_ks_face_args *fa = (const tq_ks_face_args *)cl_arg;
    const tq_ks_args *a = &fa->a;
    ks_ptr8 faces = {{NULL}};
    tq_ks_face_pointers(fa, buffers, 1, faces.p);
    tq_face_sync_wait(&fa->sync);
    if (a->cb > 0) ks_pack_kernel<<<grid_for(a->cb, KS_THREADS), KS_THREADS, 0, tq_cuda_stream()>>>(*a, PTR(0), faces);
    check_launch();
    tq_face_sync_signal(&fa->sync);
}

template <int EXT>
static void site_launch(const tq_ks_args *a, void *buffers[], void *const faces[8])
{
    ks_ptr8c from = {{NULL}};
    if (EXT)
        for (int i = 0; i < a->nfaces && i < 8; i++) from.p[i] = faces[i];
    const unsigned grid = grid_for(a->cb, KS_THREADS / 4);
    cudaStream_t st = tq_cuda_stream();
    /* with no split direction no site has a hop across one: nothing to launch */
    if (a->cb > 0 && (!EXT || a->nfaces > 0)) {
        if (a->L_in.prec == 8) ks_dslash_kernel<8, EXT><<<grid, KS_THREADS, 0, st>>>(*a, PTR(0), PTR(1), from, PTR(2));
        else if (a->L_in.prec == 4) ks_dslash_kernel<4, EXT><<<grid, KS_THREADS, 0, st>>>(*a, PTR(0), PTR(1), from, PTR(2));
        else ks_dslash_kernel<2, EXT><<<grid, KS_THREADS, 0, st>>>(*a, PTR(0), PTR(1), from, PTR(2));
    }
    check_launch();
}

extern "C" void tq_ks_interior_cuda(void *buffers[], void *cl_arg)
{
    void *none[8] = {NULL};
    site_launch<0>((const tq_ks_args *)cl_arg, buffers, none);
}

extern "C" void tq_ks_exterior_cuda(void *buffers[], void *cl_arg)
{
    const tq_ks_face_args *fa = (const tq_ks_face_args *)cl_arg;
    void *faces[8] = {NULL};
    tq_ks_face_pointers(fa, buffers, 3, faces);
    tq_face_sync_wait(&fa->sync);
    site_launch<1>(&fa->a, buffers, faces);
    tq_face_sync_signal(&fa->sync);
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
