/* Peer mode's units and shared device memory (core/peer.h). */
#include "core/tq_internal.h"
#include "core/peer.h"
#include "core/placement.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tq_internal_peer_units(const tq_lattice *lat, tq_peer_units *u)
{
    memset(u, 0, sizeof *u);
    u->self = -1;
    for (int k = 0; k < TQ_PEER_MAX; k++) u->dev[k] = u->worker[k] = -1;
#ifndef TQ_HAVE_CUDA
    (void)lat;
    return 0;
#else
    const int nprocs = tq_lattice_nprocs(lat);
    if (nprocs == 1) {
        int dev[TQ_PEER_MAX], worker[TQ_PEER_MAX];
        const int n = tq_internal_peer_gpus(lat, dev, worker);
        if (!n) return 0;
        u->n = n;
        u->ranks = 1;
        for (int k = 0; k < n; k++) u->dev[k] = dev[k], u->worker[k] = worker[k];
        for (int b = 0; b < lat->nblocks; b++) {
            const int w = tq_internal_block_options(lat, b).worker;
            int k = 0;
            while (k < n && worker[k] != w) k++;
            u->unit_of_block[b] = (signed char)k;
        }
        return n;
    }
    /* across ranks: only what every rank knows decides whether the collective calls run */
    if (nprocs != tq_internal_mpi_size() || lat->nblocks > TQ_PEER_MAX_BLOCKS) return 0;
    int first[TQ_PEER_MAX + 1], units[TQ_PEER_MAX], total = 0;
    if (nprocs > TQ_PEER_MAX) return 0;
    for (int r = 0; r < nprocs; r++) {
        const int g = tq_internal_rank_cuda_workers(r);
        units[r] = g < lat->nlocal_blocks ? g : lat->nlocal_blocks;
        if (units[r] < 1 || total + units[r] > TQ_PEER_MAX) return 0;   /* a rank without GPUs, or too many */
        first[r] = total;
        total += units[r];
    }
    if (total < 2) return 0;
    u->n = total;
    u->ranks = nprocs;
    u->self = tq_internal_mpi_rank();
    for (int r = 0; r < nprocs; r++)
        for (int k = first[r]; k < first[r] + units[r]; k++) u->rank_of[k] = r;
    for (int b = 0; b < lat->nblocks; b++) {
        const int r = tq_block_rank(lat, b);
        u->unit_of_block[b] = (signed char)(first[r] + tq_block_local_index(lat, b) % units[r]);
    }
    /* this rank's side: each of its blocks owned by its unit's CUDA worker (one per unit),
     * on a GPU with the stream memory operations, peer access between its GPUs, and peer
     * mode not turned off here */
    const char *env;
    int ok = !((env = getenv("TQ_PEER")) && env[0] == '0') && !((env = getenv("TQ_FACE_SETS")) && env[0] == '1');
    for (int b = 0; b < lat->nblocks && ok; b++) {
        if (!tq_block_is_local(lat, b)) continue;
        const int w = tq_internal_block_options(lat, b).worker, k = u->unit_of_block[b];
        if (w < 0 || starpu_worker_get_type(w) != STARPU_CUDA_WORKER) ok = 0;
        else if (u->worker[k] < 0) {
            u->worker[k] = w;
            u->dev[k] = starpu_worker_get_devid(w);
        } else if (u->worker[k] != w) ok = 0;
    }
    for (int k = first[u->self]; k < first[u->self] + units[u->self] && ok; k++) {
        if (u->worker[k] < 0) ok = 0;
        for (int j = first[u->self]; j < first[u->self] + units[u->self] && ok; j++) {
            if (j != k && (u->worker[j] < 0 || u->dev[j] == u->dev[k])) ok = 0;
            if (ok && !tq_cuda_peer_enable(u->dev[k], u->dev[j])) ok = 0;   /* (k, k): the stream operations */
        }
    }
    u->self_ok = ok;
    return u->n;
#endif
}

#ifdef TQ_HAVE_CUDA
/* Memory of this rank that other ranks may still map: freed once every rank has come to
 * the next tq_peer_memory_create, or at tq_finalize. */
static struct {
    pthread_mutex_t lock;
    int n, cap, finalizer;
    struct { int dev; void *p; } *item;
} deferred = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, NULL};

static void deferred_free_all(void)
{
    pthread_mutex_lock(&deferred.lock);
    for (int i = 0; i < deferred.n; i++) tq_cuda_free_on(deferred.item[i].dev, deferred.item[i].p);
    deferred.n = 0;
    pthread_mutex_unlock(&deferred.lock);
}

static void deferred_at_finalize(void)
{
    tq_internal_barrier();   /* no rank maps this rank's memory any more */
    deferred_free_all();
    pthread_mutex_lock(&deferred.lock);
    free(deferred.item);
    deferred.item = NULL;
    deferred.cap = 0;
    deferred.finalizer = 0;
    pthread_mutex_unlock(&deferred.lock);
}

static void defer_free(int dev, void *p)
{
    pthread_mutex_lock(&deferred.lock);
    if (deferred.n == deferred.cap) {
        const int cap = deferred.cap ? 2 * deferred.cap : 16;
        void *q = realloc(deferred.item, (size_t)cap * sizeof *deferred.item);
        if (q) deferred.item = q, deferred.cap = cap;
    }
    if (deferred.n < deferred.cap) {
        deferred.item[deferred.n].dev = dev;
        deferred.item[deferred.n++].p = p;
    }
    /* no room: kept mapped elsewhere is the lesser harm than freeing it now; it leaks */
    pthread_mutex_unlock(&deferred.lock);
}

/* One rank's part of the collective: whether its side allows peer mode (0 no, 1 yes, 2
 * out of memory), its node, and per unit of its own (in unit order) the GPU's UUID and the
 * IPC handle of the unit's memory. */
typedef struct rank_record {
    int ok;
    char host[64];
    int shared_ok;           /* TQ_PEER_SHARED_GPU=1: may share its GPUs with another rank (MPS) */
    unsigned char gpu[TQ_PEER_MAX][16];
    unsigned char handle[TQ_PEER_MAX][TQ_CUDA_IPC_HANDLE_BYTES];
} rank_record;

/* Every mapping of m closed, and this rank's allocations left for deferred freeing. */
static void across_ranks_release(tq_peer_memory *m)
{
    for (int f = 0; f < m->n; f++)
        for (int k = 0; k < m->n; k++)
            if (m->view[f][k]) tq_cuda_ipc_close(m->dev[f], m->view[f][k]);
    /* the others may have mapped it: freed once they are past the next collective */
    for (int k = 0; k < m->n; k++)
        if (m->local[k] && m->base[k]) defer_free(m->dev[k], m->base[k]);
    memset(m, 0, sizeof *m);
}

static int memory_across_ranks(const tq_peer_units *u, const size_t *bytes, tq_peer_memory *m)
{
    const int self = u->self, nranks = u->ranks;
    /* every rank registers it (its barrier is collective), whatever it defers */
    pthread_mutex_lock(&deferred.lock);
    if (!deferred.finalizer) deferred.finalizer = tq_internal_at_finalize(deferred_at_finalize) == 0;
    pthread_mutex_unlock(&deferred.lock);
    int first[TQ_PEER_MAX + 1] = {0};   /* each rank's first unit */
    for (int k = u->n - 1; k >= 0; k--) first[u->rank_of[k]] = k;
    rank_record *mine = calloc(1, sizeof *mine), *all = calloc((size_t)nranks, sizeof *all);
    m->n = u->n;
    m->ranks = nranks;
    int ok = mine && all && u->self_ok;
    for (int k = 0; k < u->n; k++) {
        if (u->rank_of[k] != self) continue;
        m->local[k] = 1;
        m->dev[k] = u->dev[k];
        if (!ok) continue;
        const int j = k - first[self];
        if (!(m->base[k] = tq_cuda_alloc_zeroed(u->dev[k], bytes[k] ? bytes[k] : 1))) ok = 2;
        else if (tq_cuda_ipc_export(m->base[k], mine->handle[j]) || tq_cuda_device_uuid(u->dev[k], mine->gpu[j])) ok = 0;
    }
    if (mine) {
        mine->ok = ok;
        if (gethostname(mine->host, sizeof mine->host - 1)) mine->ok = 0;
        const char *shared = getenv("TQ_PEER_SHARED_GPU");
        mine->shared_ok = shared && shared[0] == '1';
    }
    int agreed = mine && all ? 1 : 0;   /* 1 yes, 0 not applicable, -1 memory */
    /* a rank that could not even allocate its record still takes part, with a zeroed one */
    static rank_record none[64];
    rank_record zero;
    memset(&zero, 0, sizeof zero);
    if (tq_internal_allgather_bytes(mine ? mine : &zero, all ? (void *)all : (void *)none, (int)sizeof zero)) agreed = 0;
    /* every rank has come this far: memory they deferred is no longer mapped anywhere */
    deferred_free_all();
    /* ranks sharing a GPU keep to StarPU-MPI: two processes time-slice one GPU, and a
     * stream waiting on a counter holds its time slice (2 ranks on one H100, 32^4 Wilson
     * M_pc: 2.94 ms this way, 1.78 through StarPU-MPI, 0.28 on one rank), unless every
     * rank says TQ_PEER_SHARED_GPU=1 (under MPS their kernels share the GPU at once) */
    for (int r = 0; r < nranks && agreed > 0; r++) {
        if (!all[r].ok || strcmp(all[r].host, mine->host)) agreed = 0;
        if (agreed > 0 && all[r].ok == 2) agreed = -1;
    }
    for (int k = 0; k < u->n && agreed > 0; k++)
        for (int j = 0; j < k && agreed > 0; j++) {
            const rank_record *rk = &all[u->rank_of[k]], *rj = &all[u->rank_of[j]];
            if (!memcmp(rj->gpu[j - first[u->rank_of[j]]], rk->gpu[k - first[u->rank_of[k]]], 16) &&
                !(rj->shared_ok && rk->shared_ok))
                agreed = 0;
        }
    if (agreed <= 0 && self == 0)
        tq_log(2, "peer mode across %d ranks: %s", nranks, agreed < 0 ? "out of GPU memory" : "some rank's side does not allow it, the ranks are on different nodes, or two share a GPU");
    /* each local GPU maps every other rank's unit for itself */
    int opened = agreed > 0;
    for (int f = 0; f < u->n && opened; f++) {
        if (!m->local[f]) continue;
        for (int k = 0; k < u->n && opened; k++) {
            if (m->local[k]) continue;
            const int r = u->rank_of[k];
            if (!(m->view[f][k] = tq_cuda_ipc_import(m->dev[f], all[r].handle[k - first[r]]))) opened = 0;
        }
    }
    /* every rank must have mapped every other's memory (else StarPU-MPI, as before) */
    if (agreed > 0 && tq_internal_allreduce_min_u64((uint64_t)opened) == 0) agreed = 0;
    free(mine);
    free(all);
    if (agreed > 0) return 0;
    across_ranks_release(m);
    return agreed == 0 ? 1 : -1;
}
#endif

int tq_peer_memory_create(const tq_peer_units *u, const size_t *bytes, tq_peer_memory *m)
{
    memset(m, 0, sizeof *m);
#ifndef TQ_HAVE_CUDA
    (void)u; (void)bytes;
    return 1;
#else
    if (u->ranks > 1) return memory_across_ranks(u, bytes, m);
    m->n = u->n;
    m->ranks = 1;
    for (int k = 0; k < u->n; k++) {
        m->dev[k] = u->dev[k];
        m->local[k] = 1;
        if (!(m->base[k] = tq_cuda_alloc_zeroed(u->dev[k], bytes[k] ? bytes[k] : 1))) {
            tq_peer_memory_destroy(m);
            return -1;
        }
    }
    return 0;
#endif
}

void tq_peer_memory_destroy(tq_peer_memory *m)
{
#ifdef TQ_HAVE_CUDA
    if (m->ranks > 1) {
        across_ranks_release(m);
        return;
    }
    for (int k = 0; k < m->n; k++)
        if (m->base[k]) tq_cuda_free_on(m->dev[k], m->base[k]);
#endif
    memset(m, 0, sizeof *m);
}
