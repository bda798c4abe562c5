/* Internal declarations shared by the library's host-side sources. Not installed. */
#ifndef TQ_INTERNAL_H
#define TQ_INTERNAL_H

#include "config.h"
#include "taskqcd.h"
#include <stdarg.h>

/* Records the message for tq_last_error() and returns code, so failures read as
 *   return tq_error(TQ_ERR_IO, "cannot open '%s': %s", path, strerror(errno)); */
tq_status tq_error(tq_status code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
void tq_clear_error(void);

/* Log at a verbosity level (0 always, 1 summary, 2 debug) to stderr with a "taskqcd: "
 * prefix, respecting the context's verbosity. */
void tq_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* MPI rank and size of the running context (0 and 1 without MPI). */
int tq_internal_mpi_rank(void);
int tq_internal_mpi_size(void);
/* Monotonic wall clock in seconds (timings the library reports). */
double tq_internal_now(void);
/* Sums n doubles over all ranks in place (MPI builds). */
void tq_internal_allreduce_sum(double *v, int n);
/* Unregisters the reduction scratch handles (before StarPU shuts down). */
void tq_internal_blas_release(void);
/* out = D in on one parity with the interior kernel launched directly on the first CUDA
 * worker's GPU, niter times (no task, no StarPU in the loop): the reference the dslash
 * benchmark compares the task graph with. One block, one process; *seconds per launch. */
tq_status tq_internal_dslash_bare(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                  int niter, double *seconds);

/* CG iterations submitted so far (all solves) with the reductions fused into the operator
 * (solve type normop-pc on one block; TQ_SOLVER_FUSE=0 turns it off): lets tests check that
 * the fused path ran. */
long tq_internal_solver_fused_iterations(void);
/* Chain tasks submitted so far (tasks/submit.c: two or more tasks as one), for tests. */
long tq_internal_chains_submitted(void);
/* Whether solver scalars created from now on get snapshot mirrors (src/blas.c): 1 on, 0
 * off, -1 the default (on when StarPU has CUDA workers; TQ_SNAPSHOT_MIRROR=0/1 overrides
 * it). Snapshots read through their mirrors and through StarPU since the process began. */
void tq_internal_snapshot_mirrors(int on);
void tq_internal_snapshot_reads(long *mirrored, long *through_starpu);

/* The gauge field and parameters an operator was made with. */
const tq_field *tq_internal_dirac_gauge(const tq_dirac *d);
const tq_dirac_params *tq_internal_dirac_params(const tq_dirac *d);

/* A copy of d with its own work fields and faces, sharing gauge and clover fields (for
 * solves running at once); destroy it before d. */
tq_status tq_internal_dirac_work(const tq_dirac *d, tq_dirac **out);
/* d in another precision and gauge compression (its own gauge field, converted from d's;
 * clover built from d's links), for mixed-precision solves. */
tq_status tq_internal_dirac_sloppy(const tq_dirac *d, tq_precision prec, tq_recon recon, tq_dirac **out);
/* The same, kept by d for the next call (owned by d, destroyed with it; not thread-safe). */
tq_status tq_internal_dirac_sloppy_cached(const tq_dirac *d, tq_precision prec, tq_recon recon, const tq_dirac **out);

#define TQ_CHECK(expr) do { tq_status tq_check_s_ = (expr); if (tq_check_s_ != TQ_SUCCESS) return tq_check_s_; } while (0)

/* Volume of a 4-vector of extents. */
static inline int64_t tq_volume4(const int d[4])
{
    return (int64_t)d[0] * d[1] * d[2] * d[3];
}

#endif
