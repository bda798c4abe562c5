/* The codelets (CPU + CUDA implementations, performance models) that tasks/ submits. */
#ifndef TQ_CODELETS_H
#define TQ_CODELETS_H

#include <starpu.h>
#include <string.h>
#include "kernels/blas_site.h"
#include "kernels/dslash_wilson_site.h"
#include "kernels/clover_site.h"
#include "kernels/clover_build_site.h"
#include "kernels/solver_scalars.h"
#include "kernels/heatbath_site.h"
#include "kernels/gauge_measure_site.h"
#include "kernels/mg_transfer_site.h"
#include "kernels/coarse_op_site.h"
#include "kernels/mg_coarsen_site.h"
#include "kernels/mg_fine_op_site.h"
#include "kernels/staggered_site.h"
#include "kernels/staggered_links_site.h"
#include "face_sync.h"

#ifdef __cplusplus
extern "C" {
#endif

/* BLAS-1 / reduction codelets, one per operation (own name and perf model). Buffers: the
 * op's operands, then for reductions the partial-sum vector (TQ_BLAS_MAX_RESULTS doubles,
 * W) and a per-worker scratch vector (SCRATCH) used by the CUDA reduction. */
/* Every history model's footprint: the task's buffers' sizes in bytes. StarPU's own keys a
 * vector by its element count, so single- and half-precision tasks on the same sites shared
 * one entry (a mean of two different times: dmda's predictions and SimGrid's simulated
 * times were off for both). */
uint32_t tq_footprint_bytes(struct starpu_task *task);

/* A codelet's CUDA implementation, in its initializer: the kernels' host function where CUDA
 * is built; under StarPU's SimGrid mode (configure --with-simgrid) a stand-in that is never
 * called (simulated workers only consult the performance models), so that the simulated
 * GPUs take the task; nothing in a CPU-only build. */
#if defined(TQ_HAVE_CUDA)
#define TQ_CUDA_IMPL(f) .cuda_funcs = {f}, .cuda_flags = {STARPU_CUDA_ASYNC},
#elif defined(TQ_SIMGRID)
void tq_simgrid_cuda_stub(void *buffers[], void *cl_arg);
#define TQ_CUDA_IMPL(f) .cuda_funcs = {tq_simgrid_cuda_stub},
#else
#define TQ_CUDA_IMPL(f)
#endif

extern struct starpu_codelet tq_cl_blas[TQ_NUM_BLAS_OPS];
/* The same codelets with the solver scalars as a last read-only buffer (a->use_scalars). */
extern struct starpu_codelet tq_cl_blas_scalars[TQ_NUM_BLAS_OPS];
const char *tq_blas_op_name(int op);
/* Sums the partial-sum buffers 0..n-1 in order into buffer n (n: the argument, an int;
 * fixed order, so the result is bitwise reproducible whatever the scheduler did). */
extern struct starpu_codelet tq_cl_reduce_combine;
/* Sums partial-sum buffers into solver-scalar slots, then runs a scalar program
 * (kernels/solver_scalars.h). Both combine codelets have CPU and CUDA versions (the
 * values are a few doubles: the CUDA ones exist so that a run without CPU workers works,
 * and so that partials already on a GPU need not travel). */
extern struct starpu_codelet tq_cl_scalar_combine;

/* CUDA reductions: threads per block, the most blocks (one full wave of the largest GPU),
 * and the scratch they need (doubles). */
#define TQ_REDUCE_THREADS 256
#define TQ_REDUCE_MAX_BLOCKS 4096
/* room for either kind of reduction's per-block sums */
#define TQ_REDUCE_SCRATCH (TQ_REDUCE_MAX_BLOCKS * (TQ_EPI_MAX_RESULTS > TQ_BLAS_MAX_RESULTS ? TQ_EPI_MAX_RESULTS : TQ_BLAS_MAX_RESULTS))
/* The most thread blocks a dslash reduction kernel takes (codelets/dslash_wilson_cuda.cu):
 * TQ_REDUCE_MAX_BLOCKS, unless a test lowers it (0: the default) so that small lattices
 * take the kernels' several-sites-per-thread path; the sums' order, hence the bits,
 * follow it. */
extern int tq_dslash_reduce_blocks_limit;
/* A split epilogue's scratch (its own, zeroed when made): after the per-block results, at
 * this double, the count of thread blocks done (unsigned), back at zero after each use. */
#define TQ_SPLIT_COUNTER (TQ_REDUCE_MAX_BLOCKS * TQ_EPI_MAX_RESULTS)

/* Wilson hopping term of one block (codelets/dslash_wilson.c documents the buffers). */
extern struct starpu_codelet tq_cl_dslash_wilson_pack;
extern struct starpu_codelet tq_cl_dslash_wilson_interior;
extern struct starpu_codelet tq_cl_dslash_wilson_exterior;
/* The pack and exterior tasks' argument: the operator's, then the order of their peer
 * faces (face_sync.h; zeroed: every face is a StarPU buffer). An exterior with pack_ahead
 * also packs the next hop's faces, all of them peer faces (ahead: their pointers, the
 * waits and signals of that hop's pack; core/stencil.h, TQ_STENCIL_PACK_NEXT). */
typedef struct tq_dslash_wilson_face_args {
    tq_dslash_wilson_args a;
    tq_face_sync sync;
    int pack_ahead;
    tq_face_sync ahead;
} tq_dslash_wilson_face_args;

/* Clover term of one block and parity (codelets/clover.c documents the buffers). */
extern struct starpu_codelet tq_cl_clover;
void tq_clover_buffers(void *buffers[], const tq_clover_args *a, const void **K, const void **in,
                       const void **x, void **out, const double **go);   /* go: the guard's scalar or NULL */

/* One block and parity of a field copied into another precision, the same reals per site
 * (a sloppy operator's links and clover terms; codelets/field_convert.c documents the
 * buffers). */
typedef struct tq_field_convert_args {
    tq_layout src, dst;   /* strides: the sites of the buffers */
} tq_field_convert_args;
extern struct starpu_codelet tq_cl_field_convert;

/* Clover term and inverse of a range of sites, from the whole local gauge field
 * (codelets/clover_build.c documents the buffers). */
extern struct starpu_codelet tq_cl_clover_build;

/* Multigrid transfer of one block: restriction, prolongation, a null vector into the
 * basis, block orthonormalisation (codelets/mg_transfer.c documents the buffers; CPU only
 * so far). */
extern struct starpu_codelet tq_cl_mg_restrict;
extern struct starpu_codelet tq_cl_mg_prolong;
extern struct starpu_codelet tq_cl_mg_basis_put;
extern struct starpu_codelet tq_cl_mg_orthonormalise;

/* Multigrid coarse operator of one block and parity: pack, interior, exterior, and the
 * even-odd form's links (hat) (codelets/coarse_op.c documents the buffers). */
extern struct starpu_codelet tq_cl_coarse_hat;
/* Whether every GPU of this process can make the even-odd links of n complex per coarse
 * site (one site's matrices in a thread block's shared memory: n = 84 on H100 and H200);
 * 0 without GPUs. Where not, the hat task goes to CPU workers. */
int tq_coarse_hat_fits_gpus(int n);
extern struct starpu_codelet tq_cl_coarse_pack;
extern struct starpu_codelet tq_cl_coarse_interior;
extern struct starpu_codelet tq_cl_coarse_exterior;
/* The pack and exterior tasks' argument: the operator's, then the order of their peer
 * faces (face_sync.h; zeroed: every face is a StarPU buffer), as tq_ks_face_args. */
typedef struct tq_coarse_face_args {
    tq_coarse_args a;
    tq_face_sync sync;
} tq_coarse_face_args;
/* Improved staggered hopping term of one block and parity: pack, interior, exterior
 * (codelets/staggered.c documents the buffers; CUDA versions in codelets/staggered_cuda.cu). */
extern struct starpu_codelet tq_cl_ks_pack;
extern struct starpu_codelet tq_cl_ks_interior;
extern struct starpu_codelet tq_cl_ks_exterior;
/* The pack and exterior tasks' argument: the operator's, then the order of their peer
 * faces (face_sync.h; zeroed: every face is a StarPU buffer). */
typedef struct tq_ks_face_args {
    tq_ks_args a;
    tq_face_sync sync;
} tq_ks_face_args;
/* Their faces in the kernels' order (2 k + side for the k-th split direction): a peer
 * face's pointer from sync, the others the task's buffers from `first` on (any operator
 * whose pack and exterior follow face_sync.h). */
static inline void tq_face_sync_pointers(const int split[4], const tq_face_sync *sync, void *buffers[], int first,
                                         void *faces[8])
{
    for (int mu = 0, i = 0; mu < 4; mu++) {
        if (!split[mu]) continue;
        for (int side = 0; side < 2 && i < 8; side++, i++)
            faces[i] = sync->ptr[mu][side] ? sync->ptr[mu][side] : (void *)STARPU_VECTOR_GET_PTR(buffers[first++]);
    }
}
static inline void tq_ks_face_pointers(const tq_ks_face_args *fa, void *buffers[], int first, void *faces[8])
{
    tq_face_sync_pointers(fa->a.split, &fa->sync, buffers, first, faces);
}
/* Its links field's block and parity from the thin links (codelets/staggered.c). */
extern struct starpu_codelet tq_cl_ks_build;
/* HISQ's first level (fat7, U(3) projection) of a range of sites (codelets/staggered.c). */
extern struct starpu_codelet tq_cl_ks_hisq_w;
/* Multigrid Galerkin coarse operator of one block: the basis's boundary layers into faces,
 * and the coarse links from the fine links, the basis and the faces (codelets/mg_coarsen.c;
 * CPU only so far). */
extern struct starpu_codelet tq_cl_mg_coarsen_pack;
extern struct starpu_codelet tq_cl_mg_coarsen;
/* The Wilson-clover matrix as the fine level's stencil-form operator: X and Yf of a block's
 * parity, the upper layers' Yf into faces, every Yb from the Yf below (codelets/mg_fine_op.c;
 * CPU only so far). */
extern struct starpu_codelet tq_cl_mg_fine_local;
extern struct starpu_codelet tq_cl_mg_fine_pack;
extern struct starpu_codelet tq_cl_mg_fine_back;

/* Quenched-generator sub-step on one block (codelets/heatbath.c documents the buffers). */
extern struct starpu_codelet tq_cl_heatbath;
/* The generator tasks' links from their buffers (measure: the measurement's list); returns
 * the index of the first buffer after them. */
int tq_generator_pointers(void *buffers[], const tq_heatbath_args *a, int measure, tq_heatbath_ptrs *P);
/* A block's lower and upper layers of one field into its faces (codelets/heatbath.c). */
extern struct starpu_codelet tq_cl_gauge_face_pack;
/* The generator's measurement (one block's plaquettes and Polyakov lines), the lines'
 * product and trace, and reunitarisation (one block of one field) (codelets/gauge_measure.c
 * documents the buffers). */
extern struct starpu_codelet tq_cl_gauge_measure;
extern struct starpu_codelet tq_cl_gauge_line_mul;
extern struct starpu_codelet tq_cl_gauge_line_trace;
extern struct starpu_codelet tq_cl_gauge_reunitarize;

/* A CPU task's snapshot: the scalars s into the snapshot buffer, then into its mirror
 * (values, then the sequence number: kernels/solver_scalars.h). */
static inline void tq_snapshot_write_cpu(void *snap, tq_mirror_ref mirror, const double *s)
{
    memcpy(snap, s, TQ_NSCALARS * sizeof(double));
    if (!mirror.m) return;
    memcpy(mirror.m->v, s, TQ_NSCALARS * sizeof(double));
    __atomic_store_n(&mirror.m->seq, mirror.seq, __ATOMIC_RELEASE);
}

void tq_codelets_init(void);
void tq_codelets_shutdown(void);
starpu_data_handle_t tq_codelets_scratch(void);

void tq_blas_cpu(void *buffers[], void *cl_arg);
#ifdef TQ_HAVE_CUDA
/* The stream a CUDA implementation launches on: the worker's (StarPU's local stream), or
 * inside a chain the side stream its entry was given (codelets/chain.c). */
cudaStream_t tq_cuda_stream(void);
void tq_blas_cuda(void *buffers[], void *cl_arg);
void tq_reduce_combine_cuda(void *buffers[], void *cl_arg);
void tq_scalar_combine_cuda(void *buffers[], void *cl_arg);
/* Whether host memory p (pinned) is visible to GPU kernels at the same address. */
int tq_cuda_host_memory_mapped(const void *p);
void tq_dslash_wilson_pack_cuda(void *buffers[], void *cl_arg);
void tq_dslash_wilson_interior_cuda(void *buffers[], void *cl_arg);
void tq_dslash_wilson_exterior_cuda(void *buffers[], void *cl_arg);
void tq_clover_cuda(void *buffers[], void *cl_arg);
void tq_heatbath_cuda(void *buffers[], void *cl_arg);
void tq_gauge_face_pack_cuda(void *buffers[], void *cl_arg);
void tq_gauge_measure_cuda(void *buffers[], void *cl_arg);
void tq_gauge_line_mul_cuda(void *buffers[], void *cl_arg);
void tq_gauge_line_trace_cuda(void *buffers[], void *cl_arg);
void tq_gauge_reunitarize_cuda(void *buffers[], void *cl_arg);
void tq_clover_build_cuda(void *buffers[], void *cl_arg);
void tq_field_convert_cuda(void *buffers[], void *cl_arg);
void tq_mg_restrict_cuda(void *buffers[], void *cl_arg);
void tq_mg_prolong_cuda(void *buffers[], void *cl_arg);
void tq_coarse_pack_cuda(void *buffers[], void *cl_arg);
void tq_coarse_hat_cuda(void *buffers[], void *cl_arg);
void tq_coarse_interior_cuda(void *buffers[], void *cl_arg);
void tq_coarse_exterior_cuda(void *buffers[], void *cl_arg);
void tq_mg_coarsen_pack_cuda(void *buffers[], void *cl_arg);
void tq_mg_fine_local_cuda(void *buffers[], void *cl_arg);
void tq_mg_fine_pack_cuda(void *buffers[], void *cl_arg);
void tq_mg_fine_back_cuda(void *buffers[], void *cl_arg);
void tq_mg_coarsen_cuda(void *buffers[], void *cl_arg);
void tq_mg_basis_put_cuda(void *buffers[], void *cl_arg);
void tq_mg_orthonormalise_cuda(void *buffers[], void *cl_arg);
void tq_ks_pack_cuda(void *buffers[], void *cl_arg);
void tq_ks_interior_cuda(void *buffers[], void *cl_arg);
void tq_ks_exterior_cuda(void *buffers[], void *cl_arg);
void tq_ks_build_cuda(void *buffers[], void *cl_arg);
void tq_ks_hisq_w_cuda(void *buffers[], void *cl_arg);
/* The interior kernel launched directly (no StarPU task) niter times back to back on the
 * current device, for measuring the task graph's overhead; returns 0 or the CUDA error,
 * *seconds the time per launch (CUDA events). */
int tq_dslash_wilson_interior_bare_cuda(const tq_dslash_wilson_args *a, const void *in, const void *gp, const void *gq,
                                 const void *x, void *out, int niter, double *seconds);
#endif

#ifdef __cplusplus
}
#endif
#endif
