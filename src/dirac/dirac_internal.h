/* Internals of the Dirac operators (src/dirac/): the operator object's copies for solvers
 * (work and sloppy copies), the fused epilogues, chains around an application, and the
 * clover-term build. May call src/core/, src/blas/ and tasks/. */
#ifndef TQ_DIRAC_INTERNAL_H
#define TQ_DIRAC_INTERNAL_H

#include "blas/blas_internal.h"
#include "core/placement.h"   /* chains */

/* M_pc or M_pc^dag with an epilogue fused into its last kernel (src/dirac/dirac_forms.c; the kinds in
 * kernels/solver_scalars.h), for CG on M_pc^dag M_pc: NORM2 after M_pc (dagger 0), AXPY_NORM2
 * on r after M_pc^dag (dagger 1); for BiCGstab on M_pc: CAXPYZ and BICGSTAB_T (dagger 0).
 * Only where tq_internal_dirac_can_fuse. One block on one process: the whole parity is one
 * kernel, which finishes the reduction (scalars: the solve's scalars; snapshot: the
 * snapshot handle when args.snapshot). Several blocks (args.split, only where
 * tq_internal_dirac_fuse_split): per block the interior and the exterior task each write a
 * partial, partials[2 b] and partials[2 b + 1] (the caller's combine adds them in this
 * order, so the sums do not depend on where the blocks run), reading the replica of sc
 * their owner reads; the last hopping term then always goes through faces. */
typedef struct tq_dirac_epilogue {
    tq_epilogue_args args;
    tq_field *r;                  /* AXPY_NORM2: the field updated */
    const tq_field *w;            /* CAXPYZ, BICGSTAB_T: the field read */
    const tq_field *u;            /* BICGSTAB_T: one more field read */
    starpu_data_handle_t scalars, snapshot;
    const tq_scalars *sc;         /* args.split, or the guard of the kernels before a split
                                     epilogue: the solve's scalars (each task reads its owner's replica) */
    starpu_data_handle_t *partials;   /* args.split: 2 per block */
    starpu_data_handle_t *scratch;    /* args.split: the tasks' reduction scratch, 2 per block
                                         (tq_scalars_epilogue_scratch) */
    starpu_data_handle_t *entries;    /* args.split: one per block, used where the blocks are
                                         applied in place (tq_scalars_epilogue_entries) */
    int peer;                         /* args.split in peer mode: each partial also goes to the
                                         other GPUs' combines as reduction peer_n
                                         (tq_scalars_epilogue_peer) */
    unsigned peer_n;
} tq_dirac_epilogue;
int tq_internal_dirac_can_fuse(const tq_dirac *d);
/* Whether a fused epilogue on d is split (several blocks or ranks). */
int tq_internal_dirac_fuse_split(const tq_dirac *d);
/* 1 when an application's tasks (every block's pack, interior and exterior) may be
 * recorded as chains: this rank's blocks all run on one worker
 * (tq_internal_blocks_share_worker: one chain), or each block has an owner (a chain per
 * owner, cut where a face or a partial sum moves to another owner; tasks/submit.c). Across
 * ranks the chains are cut where a face moves. */
int tq_internal_dirac_can_chain(const tq_dirac *d);
/* The operator's intermediate field on parity p (M_pc's first kernels write it; tests). */
tq_field *tq_internal_dirac_work_field(const tq_dirac *d, int parity);
tq_status tq_internal_dirac_matpc_epilogue(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                           int dagger, const tq_dirac_epilogue *e);

/* Tests: blocks of one worker through faces (1) as with TQ_DIRECT_FACES=0, in place (0), or
 * as the environment says (-1), for the operators applied from now on; and the most thread
 * blocks of the dslash reduction kernels (0: the default; a few make small lattices take
 * their several-sites-per-thread path). */
void tq_internal_force_faces(int on);
void tq_internal_reduction_grid_limit(int nblocks);

/* The gauge field and parameters an operator was made with. */
const tq_field *tq_internal_dirac_gauge(const tq_dirac *d);
const tq_dirac_params *tq_internal_dirac_params(const tq_dirac *d);
/* The clover term A (both parities; NULL for Wilson). */
const tq_field *tq_internal_dirac_clover(const tq_dirac *d);

/* A copy of d with its own work fields and faces, sharing gauge and clover fields (for
 * solves running at once); destroy it before d. */
tq_status tq_internal_dirac_work(const tq_dirac *d, tq_dirac **out);
/* d in another precision and gauge compression (its own gauge field, converted from d's;
 * clover built from d's links), for mixed-precision solves. */
tq_status tq_internal_dirac_sloppy(const tq_dirac *d, tq_precision prec, tq_recon recon, tq_dirac **out);
/* The same, kept by d for the next call (owned by d, destroyed with it; not thread-safe). */
tq_status tq_internal_dirac_sloppy_cached(const tq_dirac *d, tq_precision prec, tq_recon recon, const tq_dirac **out);

/* out = D in on one parity with the interior kernel launched directly on the first CUDA
 * worker's GPU, niter times (no task, no StarPU in the loop): the reference the dslash
 * benchmark (bench/bench_dslash_bare) compares the task graph with. One block, one
 * process; *seconds per launch. */
tq_status tq_internal_dslash_bare(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                  int niter, double *seconds);

/* The clover term A of the operator with these kappa, c_sw and its inverse, as two new
 * clover fields of the gauge field's lattice and precision (src/dirac/clover_build.c). */
tq_status tq_clover_build(const tq_field *gauge, double kappa, double csw, tq_field **A,
                          tq_field **Ainv);
/* The same, stored in precision prec (built from the gauge field's links as they are). */
tq_status tq_clover_build_prec(const tq_field *gauge, tq_precision prec, double kappa, double csw, tq_field **A,
                               tq_field **Ainv);

#endif
