/* Peer partial sums (blas_internal.h): where the blocks' owners are peer units (core/peer.h:
 * GPUs of this process that reach each other's memory, or one GPU per rank of one node,
 * through CUDA IPC), a reduction task also sends its partial sums straight to the other
 * units' slots, and each unit's combine reads them there (codelets/face_sync.h): no
 * partial crosses GPUs as a StarPU handle or an MPI message, so a solver iteration's tasks
 * on one GPU are one run of the chain recorder, not one per reduction, and no reduction
 * waits for StarPU to see a task on another GPU end (35-150 us each on four H200s,
 * doc/design.md). In one process, per set of GPUs one entry of device memory, reused by
 * later solves (its counters zeroed); across ranks, an entry per solve (a rank's counters
 * cannot be zeroed while another rank may still write them). */
#include "blas/blas_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct peer_partials {
    int ndev, dev[TQ_PEER_MAX], in_use;
    int ranks;   /* > 1: across ranks, made for one solve's scalars (not pooled) */
    /* per unit (core/peer.h): 2 sets x TQ_PEER_TASKS slots of TQ_PEER_SLOT doubles, then
     * counters: 2 x TQ_PEER_TASKS ready (set, task), then 2 x TQ_PEER_MAX consumed
     * (reader, set) */
    tq_peer_memory mem;
    struct peer_partials *next;
} peer_partials;
static struct {
    pthread_mutex_t lock;
    peer_partials *list;
} peer_pool = {PTHREAD_MUTEX_INITIALIZER, NULL};
#define PEER_SLOT_BYTES (2 * TQ_PEER_TASKS * TQ_PEER_SLOT * sizeof(double))
#define PEER_CTR_BYTES ((2 * TQ_PEER_TASKS + 2 * TQ_PEER_MAX) * sizeof(uint32_t))

/* Unit k's slots and counters as kernels on local unit `from`'s GPU reach them. */
static double *slots_at(const peer_partials *e, int k, int from) { return (double *)tq_peer_at(&e->mem, k, from); }
static uint32_t *ctr_at(const peer_partials *e, int k, int from)
{
    return (uint32_t *)(tq_peer_at(&e->mem, k, from) + PEER_SLOT_BYTES);
}

#ifdef TQ_HAVE_CUDA   /* peer partials need GPUs */
static void peer_pool_free(void)
{
    pthread_mutex_lock(&peer_pool.lock);
    while (peer_pool.list) {
        peer_partials *e = peer_pool.list;
        peer_pool.list = e->next;
        tq_peer_memory_destroy(&e->mem);
        free(e);
    }
    pthread_mutex_unlock(&peer_pool.lock);
}

/* The units' memory of e: slots, then counters. 0, or the error of tq_peer_memory_create. */
static int peer_memory(peer_partials *e, const tq_peer_units *u)
{
    size_t bytes[TQ_PEER_MAX];
    for (int k = 0; k < u->n; k++) bytes[k] = PEER_SLOT_BYTES + PEER_CTR_BYTES;
    return tq_peer_memory_create(u, bytes, &e->mem);
}

/* An entry for the GPUs of this process's units (zeroed counters), or NULL. */
static peer_partials *peer_take(const tq_peer_units *u)
{
    const int n = u->n;
    pthread_mutex_lock(&peer_pool.lock);
    peer_partials *e = peer_pool.list;
    while (e && (e->in_use || e->ndev != n || memcmp(e->dev, u->dev, (size_t)n * sizeof *u->dev))) e = e->next;
    if (e) {
        e->in_use = 1;
        for (int k = 0; k < n; k++)
            if (tq_cuda_zero(u->dev[k], ctr_at(e, k, k), PEER_CTR_BYTES)) e->in_use = 0;
        if (!e->in_use) e = NULL;
    } else if ((e = calloc(1, sizeof *e))) {
        e->ndev = n;
        memcpy(e->dev, u->dev, (size_t)n * sizeof *u->dev);
        e->in_use = peer_memory(e, u) == 0;
        if (!peer_pool.list) tq_internal_at_finalize(peer_pool_free);
        e->next = peer_pool.list;   /* kept (freed at finalize) even when incomplete */
        peer_pool.list = e;
        if (!e->in_use) e = NULL;
    }
    pthread_mutex_unlock(&peer_pool.lock);
    return e;
}
#endif

void tq_scalars_peer_release(tq_scalars *sc)
{
    if (!sc->peer) return;
    if (sc->peer->ranks > 1) {   /* made for sc alone */
        tq_peer_memory_destroy(&sc->peer->mem);
        free(sc->peer);
    } else {
        pthread_mutex_lock(&peer_pool.lock);
        sc->peer->in_use = 0;
        pthread_mutex_unlock(&peer_pool.lock);
    }
    sc->peer = NULL;
}

int tq_scalars_peer_setup(tq_scalars *sc, const tq_lattice *lat)
{
#ifdef TQ_HAVE_CUDA
    /* only where the operators' faces go the same way: a GPU whose stream waits for another
     * must not also wait for StarPU to move a face between them (a multigrid coarse
     * operator's faces are StarPU handles), doc/design.md */
    if (!lat->peer_stencils) return 0;
    tq_peer_units u;
    const int n = tq_internal_peer_units(lat, &u);
    if (!n) return 0;
    peer_partials *e = NULL;
    if (u.ranks > 1) {
        /* this rank's replicas (tq_scalars_replicate: one per owner, or replica 0 alone
         * for one GPU) each on its unit; memory for this solve, made by every rank
         * together */
        int mine[TQ_PEER_MAX], nmine = 0;
        for (int k = 0; k < n; k++)
            if (u.rank_of[k] == u.self) mine[nmine++] = k;
        if (sc->nrep != nmine) u.self_ok = 0;
        if (nmine == 1 && sc->nrep == 1 && sc->rep_worker[0] < 0) sc->rep_worker[0] = u.worker[mine[0]];
        for (int k = 0; k < sc->nrep && u.self_ok; k++) {
            int j = 0;
            while (j < nmine && u.worker[mine[j]] != sc->rep_worker[k]) j++;
            if (j == nmine) u.self_ok = 0;
            else sc->peer_unit_rep[k] = (signed char)mine[j];
        }
        if (!(e = calloc(1, sizeof *e))) u.self_ok = 0;
        peer_partials none;
        if (peer_memory(e ? e : &none, &u)) {
            free(e);
            if (nmine == 1 && sc->nrep == 1) sc->rep_worker[0] = -1;   /* as it was */
            return 0;
        }
        e->ranks = u.ranks;
    } else {
        if (n != sc->nrep) return 0;
        for (int k = 0; k < sc->nrep; k++) {   /* the replicas' units */
            int j = 0;
            while (j < n && u.worker[j] != sc->rep_worker[k]) j++;
            if (j == n) return 0;
            sc->peer_unit_rep[k] = (signed char)j;
        }
        if (!(e = peer_take(&u))) return 0;
    }
    for (int b = 0; b < lat->nblocks; b++) sc->peer_unit_block[b] = u.unit_of_block[b];
    /* each GPU's tasks in recorded order (core/stencil.h: tq_stencil_use_peer_faces) */
    for (int k = 0; k < sc->nrep; k++)
        if (tq_task_sequence_worker(sc->rep_worker[k])) {
            sc->peer = e;
            tq_scalars_peer_release(sc);
            return 0;
        }
    sc->peer = e;
    return 1;
#else
    (void)sc; (void)lat;
    return 0;
#endif
}

/* Reduction n's task t (of block b) sends its nres sums to the other units' slots of set
 * n & 1, once their combines of reduction n - 2 (the same set) are done. */
void tq_scalars_partial_sync(const tq_scalars *sc, int t, int b, unsigned n, int nres, tq_partial_sync *s)
{
    const peer_partials *e = sc->peer;
    const int up = sc->peer_unit_block[b], set = (int)(n & 1), nunits = e->mem.n;
    memset(s, 0, sizeof *s);
    s->nres = nres;
    s->wait_value = n >= 2 ? n - 1 : 0;
    s->signal_value = n + 1;
    for (int k = 0; k < nunits; k++) {
        if (k == up) continue;
        s->dst[s->npeer] = slots_at(e, k, up) + ((size_t)set * TQ_PEER_TASKS + (size_t)t) * TQ_PEER_SLOT;
        s->wait[s->npeer] = ctr_at(e, up, up) + 2 * TQ_PEER_TASKS + 2 * k + set;
        s->signal[s->npeer++] = ctr_at(e, k, up) + (size_t)set * TQ_PEER_TASKS + (size_t)t;
    }
}

/* Replica k's combine of reduction n: the partials of blocks other units hold come from
 * its unit's slots; done, it tells each of those units. */
void tq_scalars_combine_sync(const tq_scalars *sc, const tq_lattice *lat, int nparity, int k, unsigned n,
                            tq_combine_sync *s)
{
    const peer_partials *e = sc->peer;
    const int set = (int)(n & 1), uk = sc->peer_unit_rep[k], nunits = e->mem.n;
    memset(s, 0, sizeof *s);
    s->slots = slots_at(e, uk, uk) + (size_t)set * TQ_PEER_TASKS * TQ_PEER_SLOT;
    s->ready = ctr_at(e, uk, uk) + (size_t)set * TQ_PEER_TASKS;
    s->wait_value = s->signal_value = n + 1;
    for (int b = 0; b < lat->nblocks; b++)
        if (sc->peer_unit_block[b] != uk)
            for (int p = 0; p < nparity; p++) s->remote |= 1ull << (b * nparity + p);
    for (int j = 0; j < nunits; j++)
        if (j != uk) s->signal[s->nsignal++] = ctr_at(e, j, uk) + 2 * TQ_PEER_TASKS + 2 * uk + set;
}
