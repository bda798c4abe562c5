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
/* The CUDA workers of rank `rank` (learnt at tq_init; 0 for no such rank). */
int tq_internal_rank_cuda_workers(int rank);
/* The GPUs (device numbers, into gpus) that local rank local_rank of local_ranks ranks
 * sharing a node of ngpus GPUs drives: a contiguous share of them (ngpus / local_ranks,
 * the remainder spread), or GPU local_rank mod ngpus where ranks outnumber GPUs. Returns
 * how many (0 without GPUs). */
int tq_internal_rank_gpus(int local_rank, int local_ranks, int ngpus, int *gpus);
/* Monotonic wall clock in seconds (timings the library reports). */
double tq_internal_now(void);
/* Calls fn(begin, end, arg) on disjoint ranges covering [0, n), on up to 32 threads of the
 * cores this process may use (host set-up loops; fn must not call tq_error). */
void tq_host_parallel_for(int64_t n, void (*fn)(int64_t begin, int64_t end, void *arg), void *arg);
/* Sums n doubles over all ranks in place (MPI builds). */
void tq_internal_allreduce_sum(double *v, int n);
/* Groups of k consecutive ranks (tq_lattice_params.group_ranks): the number of this rank's
 * group's communicator for the _on collectives below, made the first time (collective over
 * all ranks then); 0 where k is 1 (no collective is needed) or at least the number of
 * ranks (every rank); -1 when it cannot be made. */
enum { TQ_MAX_GROUP_COMMS = 8 };
int tq_internal_group_comm(int k);
/* Collectives over communicator comm (0: every rank; else tq_internal_group_comm's). */
void tq_internal_allreduce_sum_on(int comm, double *v, int n);
uint64_t tq_internal_allreduce_min_u64_on(int comm, uint64_t v);
tq_status tq_internal_status_agree_on(int comm, tq_status local);
/* count doubles of every rank of comm into all, in their order there; 0 or -1. */
int tq_internal_allgather_on(int comm, const double *mine, double *all, int count);
/* v[0..n-1] handed along the ranks stride apart (rank j, j + stride, j + 2 stride, ...),
 * each calling step on the value the one before passed on (the first on its own v); the
 * last one's v then reaches the others. Collective over all ranks (the same n and stride
 * on each); the status is agreed by all. One chain of one rank: step. */
tq_status tq_internal_in_order(int stride, double *v, int64_t n, tq_status (*step)(double *v, void *arg), void *arg);
/* root's bytes into buf on every rank (collective; MPI builds). */
void tq_internal_bcast(void *buf, int bytes, int root);
/* Combines n 32-bit words over all ranks in place: xor (xor_op) or the sum mod 2^32. */
void tq_internal_allreduce_u32(uint32_t *v, int n, int xor_op);
/* Every rank's `bytes` bytes (mine) into all, in rank order (collective; 0 or -1). */
int tq_internal_allgather_bytes(const void *mine, void *all, int bytes);
/* Waits until every rank has called it (collective). */
void tq_internal_barrier(void);
/* The smallest v over all ranks. */
uint64_t tq_internal_allreduce_min_u64(uint64_t v);
/* Runs fn in tq_finalize before StarPU shuts down, last registered first (layers above
 * src/core/ release their StarPU data this way; registering the same fn twice is one
 * registration). Returns 0, or -1 when the table is full. */
int tq_internal_at_finalize(void (*fn)(void));
/* StarPU's own trace (src/core/fxt_trace.c; only where StarPU has FxT): prepare before
 * StarPU starts (dir: the trace folder, or NULL: StarPU records nothing), finish after it
 * has shut down (its FxT file into Paje, tasks.rec and the DAG). */
void tq_internal_fxt_prepare(const char *dir);
void tq_internal_fxt_finish(int rank, int nranks);

#define TQ_CHECK(expr) do { tq_status tq_check_s_ = (expr); if (tq_check_s_ != TQ_SUCCESS) return tq_check_s_; } while (0)

/* Volume of a 4-vector of extents. */
static inline int64_t tq_volume4(const int d[4])
{
    return (int64_t)d[0] * d[1] * d[2] * d[3];
}

/* The global lexicographic index (x fastest) of site s of a box of local sites that starts
 * at offset in the lattice global. */
static inline int64_t tq_box_global_site(int64_t s, const int local[4], const int offset[4], const int global[4])
{
    int64_t gs = 0, stride = 1;
    for (int d = 0; d < 4; d++) {
        gs += (s % local[d] + offset[d]) * stride;
        s /= local[d];
        stride *= global[d];
    }
    return gs;
}

#endif
