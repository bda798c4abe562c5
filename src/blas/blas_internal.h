/* Internals of the field-level BLAS drivers (src/blas/): solver scalars (a StarPU handle the
 * reductions write and the BLAS tasks read, kernels/solver_scalars.h) and the asynchronous
 * BLAS submission the solvers and the operators' fused epilogues build on. May call
 * src/core/ and tasks/. */
#ifndef TQ_BLAS_INTERNAL_H
#define TQ_BLAS_INTERNAL_H

#include "core/field_internal.h"
#include "core/peer.h"
#include "tq_tasks.h"

#define TQ_NSNAPSHOTS 5
#define TQ_SCALAR_REPLICAS 8

typedef struct tq_scalars {
    starpu_data_handle_t h;           /* TQ_NSCALARS doubles */
    double buf[TQ_NSCALARS];
    /* Replicas, one per owner of the blocks (tq_scalars_replicate): replica 0 is h, on
     * block 0's owner; each owner's BLAS tasks read its own, and each reduction ends in a
     * combine task per owner that sums every block's partials in block order and runs the
     * program into its replica (the same bits in each), so the scalars never travel
     * between GPUs: only the partial sums do. nrep 1: h alone. */
    int nrep;
    int rep_worker[TQ_SCALAR_REPLICAS];
    starpu_data_handle_t rep[TQ_SCALAR_REPLICAS];
    double rep_buf[TQ_SCALAR_REPLICAS][TQ_NSCALARS];
    starpu_data_handle_t *partials;   /* one per BLAS task of a reduction of several tasks */
    int npartials;
    starpu_data_handle_t *epartials;  /* split epilogues' (tq_scalars_epilogue_partials) */
    int nepartials;
    starpu_data_handle_t *scratch;    /* reductions' scratch, one per task (tq_scalars_scratch) */
    int nscratch;
    starpu_data_handle_t *escratch;   /* split epilogues' (tq_scalars_epilogue_scratch), */
    double **escratch_buf;            /* zeroed host memory at first */
    int nescratch;
    starpu_data_handle_t *entries;    /* split epilogues in place: per block (tq_scalars_epilogue_entries) */
    int nentries;
    size_t entries_len;               /* doubles in each */
    unsigned reductions;              /* which of the two sets of partials is next */
    unsigned epilogue_reductions;     /* the same for the split epilogues' */
    unsigned peer_reductions;         /* reductions through peer partials so far: their numbers
                                         (a split epilogue's reduction does not use them) */
    struct peer_partials *peer;       /* peer partials (blas.c; NULL: the partials are handles) */
    signed char peer_unit_rep[TQ_SCALAR_REPLICAS];   /* with peer: each replica's unit, */
    signed char peer_unit_block[TQ_PEER_MAX_BLOCKS];  /* and each block's (core/peer.h) */
    /* Snapshots of the scalars: 0 to 3 at the end of iterations, in turn, so that the host
     * can read iteration k's while the queued iterations after it already update the
     * scalars; 4 at the end of a (re)start, read while the iterations after it are queued. */
    starpu_data_handle_t snap[TQ_NSNAPSHOTS];
    double snap_buf[TQ_NSNAPSHOTS][TQ_NSCALARS];
    struct tq_snapshot_mark { starpu_data_handle_t h; double t; } mark[TQ_NSNAPSHOTS];
    int guard;       /* != 0: tasks submitted from now on carry this guard (tq_blas_args,
                        tq_guard_shut); an inverse one (< 0) for BLAS tasks only: operator
                        applications take guards > 0 */
    int snap_next;   /* >= 0: the next reduction also writes snapshot snap_next */
    /* The snapshots' mirrors (kernels/solver_scalars.h; NULL: none, the host reads the
     * snapshots through StarPU), the sequence number each one's last writer publishes, and
     * per snapshot a count of its writers seen to end (the host's wait stops there). */
    tq_snapshot_mirror *mirror;
    int mirror_set;
    long long mirror_seq[TQ_NSNAPSHOTS];
    /* requested: the waits that asked to hear of the writer's end (host thread only);
     * ended: their callbacks run so far */
    struct tq_snapshot_watch { starpu_data_handle_t h; long long requested, ended; } watch[TQ_NSNAPSHOTS];
} tq_scalars;

/* Peer partial sums (peer_partials.c): set up for sc's replicas when peer mode applies
 * (tq_internal_peer_units; from tq_scalars_replicate; across ranks collective; returns 1
 * when set up), given back once sc's tasks have ended; a reduction's task t (of block b)
 * and replica k's combine of reduction number n get their side of the order
 * (face_sync.h). At most TQ_PEER_TASKS tasks per reduction. */
#define TQ_PEER_TASKS (2 * TQ_PEER_MAX_BLOCKS)
int tq_scalars_peer_setup(tq_scalars *sc, const tq_lattice *lat);
void tq_scalars_peer_release(tq_scalars *sc);
void tq_scalars_partial_sync(const tq_scalars *sc, int t, int b, unsigned n, int nres, tq_partial_sync *s);
void tq_scalars_combine_sync(const tq_scalars *sc, const tq_lattice *lat, int nparity, int k, unsigned n,
                             tq_combine_sync *s);

tq_status tq_scalars_create(tq_scalars **out);
void tq_scalars_destroy(tq_scalars *sc);
/* A replica of the scalars for each further owner of lat's blocks on this rank (nothing
 * where a block has no owner or one worker owns them all). Call before the first write;
 * reductions over other lattices then keep to h. */
tq_status tq_scalars_replicate(tq_scalars *sc, const tq_lattice *lat);
/* Waits for the task that writes snapshot i, then copies it. */
tq_status tq_scalars_read_snapshot(tq_scalars *sc, int i, double *values);
/* Whether reading snapshot i would not wait: 1 its values are published (a mirror), 0 not
 * yet, -1 unknown (no mirror: only StarPU's copy, whose readiness is not tested). */
int tq_scalars_snapshot_ready(const tq_scalars *sc, int i);
/* Records the time (tq_internal_now) at which the task that writes snapshot i (submitted
 * before this call) completes, without waiting and without moving data; read it with
 * tq_scalars_mark_time (0 while that task has not completed). */
tq_status tq_scalars_mark(tq_scalars *sc, int i);
/* The snapshot the next reduction writes (snap_next, then -1 again; -1: none) and, in
 * *mirror, where that reduction's task publishes it. */
int tq_scalars_take_snapshot(tq_scalars *sc, tq_mirror_ref *mirror);

double tq_scalars_mark_time(const tq_scalars *sc, int i);
/* Host write of n values from slot on (set-up; waits for pending users). */
tq_status tq_scalars_write(tq_scalars *sc, int slot, int n, const double *values);

/* A BLAS reduction's n partial handles (its set of sc's two, in turn; each task writes
 * TQ_BLAS_MAX_RESULTS doubles) in *partials. */
tq_status tq_scalars_partials(tq_scalars *sc, int n, starpu_data_handle_t **partials);
/* A reduction whose n per-task sums other tasks write (a split operator epilogue,
 * dirac_internal.h): the partial handles of this reduction (its set of two kept apart
 * from the BLAS reductions', reduction_buffers.c says why; each task writes
 * TQ_BLAS_MAX_RESULTS doubles, those past its results zero) in *partials; then
 * tq_scalars_combine submits the combine tasks over them (block 0's owner's, and one per
 * further replica) with the slots, program and snapshot of tq_blas_submit. The replica of
 * the scalars a task on `worker` reads: tq_scalars_for_worker. */
tq_status tq_scalars_epilogue_partials(tq_scalars *sc, int n, starpu_data_handle_t **partials);
/* Reduction scratch buffers for n tasks (used as STARPU_SCRATCH, TQ_REDUCE_SCRATCH doubles
 * each; the pool grows to the largest n asked, the first n returned): tasks with their own
 * scratch may run side by side on a GPU (the worker's one scratch would order them,
 * codelets/chain.c). A solver's BLAS reductions use it. */
tq_status tq_scalars_scratch(tq_scalars *sc, int n, starpu_data_handle_t **scratch);
/* The same for a split epilogue's n tasks, but made from zeroed memory and used read-write
 * (STARPU_RW): each holds a counter (TQ_SPLIT_COUNTER) that its kernels leave at zero. */
tq_status tq_scalars_epilogue_scratch(tq_scalars *sc, int n, starpu_data_handle_t **scratch);
/* A split epilogue's entries on lat, one handle per block (no home memory: made where first
 * written): the interior task in place stores each face site's results at its exterior
 * entry, the exterior task sums them (codelets/dslash_wilson.c). */
tq_status tq_scalars_epilogue_entries(tq_scalars *sc, const tq_lattice *lat, starpu_data_handle_t **entries);
/* Unregisters and frees those pools (reduction_buffers.c; tq_scalars_destroy). */
void tq_scalars_buffers_release(tq_scalars *sc);
tq_status tq_scalars_combine(const char *who, tq_scalars *sc, const tq_lattice *lat, starpu_data_handle_t *partials, int n,
                             int nres, int dst, const tq_scalar_instr *prog, int nprog, int snap, tq_mirror_ref mirror,
                             long peer_n);
/* Whether a split epilogue's n partials (two per block) go through peer memory, as the BLAS
 * reductions' do in peer mode (sc->peer): then 1 and the reduction's number in *number (one
 * sequence with the BLAS reductions'), which its tasks' sends (tq_scalars_partial_sync, task
 * t = 2 b + part) and tq_scalars_combine (peer_n) take; 0: its partials are handles alone
 * (peer_n -1). Across ranks each partial handle is then held on every rank
 * (tq_task_data_on_every_rank): the combines read other ranks' partials through CUDA IPC. */
int tq_scalars_epilogue_peer(tq_scalars *sc, int n, unsigned *number);
starpu_data_handle_t tq_scalars_for_worker(const tq_scalars *sc, int worker);

/* Submits BLAS op over fields f without waiting. Coefficient k is c[k], or c[k] times
 * scalar slot[k] - 1 when slot (may be NULL) has slot[k] > 0. A reduction's sums go to
 * scalar slots dst, dst + 1, ...; then the scalar program runs (only with a reduction).
 * A reduction of one task does all of it in that task; one of several tasks adds a combine
 * task. sc->guard and sc->snap_next apply (the latter is used up by a reduction). */
tq_status tq_blas_submit(const char *who, int op, const double *c, const signed char *slot, tq_field *const *f,
                         tq_scalars *sc, int dst, const tq_scalar_instr *prog, int nprog);


/* Whether solver scalars created from now on get snapshot mirrors: 1 on, 0 off, -1 the
 * default (on when StarPU has CUDA workers; TQ_SNAPSHOT_MIRROR=0/1 overrides it).
 * Snapshots read through their mirrors and through StarPU since the process began. */
void tq_internal_snapshot_mirrors(int on);
void tq_internal_snapshot_reads(long *mirrored, long *through_starpu);

#endif
