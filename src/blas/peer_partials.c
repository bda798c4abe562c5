/* Peer partial sums (blas_internal.h): where every replica's owner is a GPU of this
 * process and the GPUs reach each other's memory, a reduction task also sends its partial
 * sums straight to the other owners' slots, and each owner's combine reads them there
 * (codelets/face_sync.h): no partial crosses GPUs as a StarPU handle, so a solver
 * iteration's tasks on one GPU are one run of the chain recorder, not one per reduction,
 * and no reduction waits for StarPU to see a task on another GPU end (35-150 us each on four
 * H200s, doc/design.md). Per set of GPUs one entry of device memory, reused by later solves
 * (its counters zeroed). */
#include "blas/blas_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef struct peer_partials {
    int ndev, dev[TQ_SCALAR_REPLICAS], in_use;
    /* on dev[k]: 2 sets x TQ_PEER_TASKS slots of TQ_PEER_SLOT doubles, and counters: 2 x
     * TQ_PEER_TASKS ready (set, task), then 2 x TQ_PEER_MAX consumed (reader, set) */
    double *slots[TQ_SCALAR_REPLICAS];
    uint32_t *ctr[TQ_SCALAR_REPLICAS];
    struct peer_partials *next;
} peer_partials;
static struct {
    pthread_mutex_t lock;
    peer_partials *list;
} peer_pool = {PTHREAD_MUTEX_INITIALIZER, NULL};
#define PEER_CTR_BYTES ((2 * TQ_PEER_TASKS + 2 * TQ_PEER_MAX) * sizeof(uint32_t))

static void peer_pool_free(void)
{
    pthread_mutex_lock(&peer_pool.lock);
    while (peer_pool.list) {
        peer_partials *e = peer_pool.list;
        peer_pool.list = e->next;
#ifdef TQ_HAVE_CUDA
        for (int k = 0; k < e->ndev; k++) {
            tq_cuda_free_on(e->dev[k], e->slots[k]);
            tq_cuda_free_on(e->dev[k], e->ctr[k]);
        }
#endif
        free(e);
    }
    pthread_mutex_unlock(&peer_pool.lock);
}

/* An entry for the GPUs dev[0..n-1] (zeroed counters), or NULL. */
static peer_partials *peer_take(const int *dev, int n)
{
#ifndef TQ_HAVE_CUDA
    (void)dev; (void)n;
    return NULL;
#else
    pthread_mutex_lock(&peer_pool.lock);
    peer_partials *e = peer_pool.list;
    while (e && (e->in_use || e->ndev != n || memcmp(e->dev, dev, (size_t)n * sizeof *dev))) e = e->next;
    if (e) {
        e->in_use = 1;
        for (int k = 0; k < n; k++)
            if (tq_cuda_zero(dev[k], e->ctr[k], PEER_CTR_BYTES)) e->in_use = 0;
        if (!e->in_use) e = NULL;
    } else if ((e = calloc(1, sizeof *e))) {
        e->ndev = n;
        memcpy(e->dev, dev, (size_t)n * sizeof *dev);
        e->in_use = 1;
        for (int k = 0; k < n && e->in_use; k++) {
            e->slots[k] = tq_cuda_alloc_zeroed(dev[k], 2 * TQ_PEER_TASKS * TQ_PEER_SLOT * sizeof(double));
            e->ctr[k] = tq_cuda_alloc_zeroed(dev[k], PEER_CTR_BYTES);
            if (!e->slots[k] || !e->ctr[k]) e->in_use = 0;
        }
        if (!peer_pool.list) tq_internal_at_finalize(peer_pool_free);
        e->next = peer_pool.list;   /* kept (freed at finalize) even when incomplete */
        peer_pool.list = e;
        if (!e->in_use) e = NULL;
    }
    pthread_mutex_unlock(&peer_pool.lock);
    return e;
#endif
}

void tq_scalars_peer_release(tq_scalars *sc)
{
    if (!sc->peer) return;
    pthread_mutex_lock(&peer_pool.lock);
    sc->peer->in_use = 0;
    pthread_mutex_unlock(&peer_pool.lock);
    sc->peer = NULL;
}

void tq_scalars_peer_setup(tq_scalars *sc, const tq_lattice *lat)
{
#ifdef TQ_HAVE_CUDA
    int gdev[TQ_PEER_MAX], gworker[TQ_PEER_MAX], dev[TQ_SCALAR_REPLICAS];
    const int ng = tq_internal_peer_gpus(lat, gdev, gworker);
    if (ng != sc->nrep) return;
    for (int k = 0; k < sc->nrep; k++) {   /* the replicas' GPUs */
        int j = 0;
        while (j < ng && gworker[j] != sc->rep_worker[k]) j++;
        if (j == ng) return;
        dev[k] = gdev[j];
    }
    peer_partials *e = peer_take(dev, sc->nrep);
    if (!e) return;
    /* each GPU's tasks in recorded order (core/stencil.h: tq_stencil_use_peer_faces) */
    for (int k = 0; k < sc->nrep; k++)
        if (tq_task_sequence_worker(sc->rep_worker[k])) {
            pthread_mutex_lock(&peer_pool.lock);
            e->in_use = 0;
            pthread_mutex_unlock(&peer_pool.lock);
            return;
        }
    sc->peer = e;
#else
    (void)sc; (void)lat;
#endif
}

/* The replica whose owner is worker (0 when none is). */
static int replica_of(const tq_scalars *sc, int worker)
{
    for (int k = 1; k < sc->nrep; k++)
        if (sc->rep_worker[k] == worker) return k;
    return 0;
}

/* Reduction n's task t (run by worker) sends its nres sums to the other replicas' slots of
 * set n & 1, once their combines of reduction n - 2 (the same set) are done. */
void tq_scalars_partial_sync(const tq_scalars *sc, int t, int worker, unsigned n, int nres, tq_partial_sync *s)
{
    const peer_partials *e = sc->peer;
    const int kp = replica_of(sc, worker), set = (int)(n & 1);
    memset(s, 0, sizeof *s);
    s->nres = nres;
    s->wait_value = n >= 2 ? n - 1 : 0;
    s->signal_value = n + 1;
    for (int k = 0; k < sc->nrep; k++) {
        if (k == kp) continue;
        s->dst[s->npeer] = e->slots[k] + ((size_t)set * TQ_PEER_TASKS + (size_t)t) * TQ_PEER_SLOT;
        s->wait[s->npeer] = e->ctr[kp] + 2 * TQ_PEER_TASKS + 2 * k + set;
        s->signal[s->npeer++] = e->ctr[k] + (size_t)set * TQ_PEER_TASKS + (size_t)t;
    }
}

/* Replica k's combine of reduction n: the partials of blocks other owners hold come from
 * its slots; done, it tells each of those owners. */
void tq_scalars_combine_sync(const tq_scalars *sc, const tq_lattice *lat, int nparity, int k, unsigned n,
                            tq_combine_sync *s)
{
    const peer_partials *e = sc->peer;
    const int set = (int)(n & 1);
    memset(s, 0, sizeof *s);
    s->slots = e->slots[k] + (size_t)set * TQ_PEER_TASKS * TQ_PEER_SLOT;
    s->ready = e->ctr[k] + (size_t)set * TQ_PEER_TASKS;
    s->wait_value = s->signal_value = n + 1;
    for (int b = 0; b < lat->nblocks; b++)
        if (replica_of(sc, tq_internal_block_options(lat, b).worker) != k)
            for (int p = 0; p < nparity; p++) s->remote |= 1ull << (b * nparity + p);
    for (int j = 0; j < sc->nrep; j++)
        if (j != k) s->signal[s->nsignal++] = e->ctr[j] + 2 * TQ_PEER_TASKS + 2 * k + set;
}

