/* Peer mode's units and the device memory they share (src/core/peer.c). In peer mode a
 * GPU's kernels write faces (core/stencil.h) and partial sums (src/blas/peer_partials.c)
 * straight into the memory of the GPU that reads them, ordered by counters on the two
 * streams (codelets/face_sync.h), not by StarPU or MPI. A unit is one such GPU: either the
 * GPUs of this process (each its own CUDA worker, tq_internal_peer_gpus), or, across the
 * ranks of one node, every GPU that owns blocks of some rank (the units of rank 0 first,
 * then rank 1's, ...), whose memory the other ranks map through CUDA IPC. */
#ifndef TQ_PEER_H
#define TQ_PEER_H

#include "core/field_internal.h"
#include "face_sync.h"

typedef struct tq_peer_units {
    int n;        /* units, 2 .. TQ_PEER_MAX */
    int ranks;    /* 1: this process's GPUs; > 1: the units of every rank */
    int self;     /* ranks > 1: this rank; else -1 */
    int self_ok;  /* ranks > 1: whether this rank's side allows peer mode (each of its blocks
                     owned by its unit's CUDA worker, on a GPU with stream memory
                     operations, peer mode not turned off); the other ranks' side is learnt
                     collectively by tq_peer_memory_create */
    int rank_of[TQ_PEER_MAX];  /* each unit's rank (0 with one rank) */
    int dev[TQ_PEER_MAX];      /* each unit's GPU (ranks > 1: known for this rank's only) */
    int worker[TQ_PEER_MAX];   /* this process's CUDA worker of the unit, or -1 */
    signed char unit_of_block[TQ_PEER_MAX_BLOCKS];
} tq_peer_units;

/* The units of lat's blocks in peer mode, or 0 where it cannot apply. With one rank (lat
 * not distributed) as tq_internal_peer_gpus says. Across ranks it answers from facts every
 * rank shares (lat distributed over every rank of a CUDA build, every rank's GPU count from
 * tq_init, at most TQ_PEER_MAX units and TQ_PEER_MAX_BLOCKS blocks), so that every rank
 * gets the same n and the collective calls below are made by all or none; whether peer
 * mode then applies is decided there. A rank's blocks go to its units as to its owners:
 * local block k to its (k mod units)-th GPU. */
int tq_internal_peer_units(const tq_lattice *lat, tq_peer_units *u);

typedef struct tq_peer_memory {
    int n, ranks;
    char *base[TQ_PEER_MAX];   /* each unit's memory where it is this process's (local) */
    int dev[TQ_PEER_MAX];      /* a local unit's device */
    int local[TQ_PEER_MAX];    /* 1: allocated here; 0: another rank's, mapped here */
    /* ranks > 1: another rank's unit u as kernels on local unit f's GPU reach it,
     * view[f][u]: CUDA maps another process's memory for one device only (a pointer
     * opened on one GPU faults in a kernel on another), so each local GPU opens its own */
    char *view[TQ_PEER_MAX][TQ_PEER_MAX];
} tq_peer_memory;

/* Unit `unit`'s memory as kernels on local unit `from`'s GPU reach it (a local unit's
 * memory is reached through peer access from every local GPU). */
static inline char *tq_peer_at(const tq_peer_memory *m, int unit, int from)
{
    return m->local[unit] ? m->base[unit] : m->view[from][unit];
}

/* bytes[k] bytes of zeroed device memory on every unit k. With ranks (collective: every
 * rank calls it with the same units and sizes) each rank allocates its units' and maps the
 * others' through CUDA IPC, once per local GPU. Returns 0, 1 where peer mode does not
 * apply (some rank's side does not allow it, or the ranks are not on one node), or -1 when
 * memory ran out (with ranks, the same answer on every rank; nothing is left allocated
 * unless 0). */
int tq_peer_memory_create(const tq_peer_units *u, const size_t *bytes, tq_peer_memory *m);
/* Once this process's tasks that use m have ended. With ranks the other ranks may still
 * map this rank's memory: it is freed at the next tq_peer_memory_create (after every rank
 * has come that far) or at tq_finalize. */
void tq_peer_memory_destroy(tq_peer_memory *m);

#endif
