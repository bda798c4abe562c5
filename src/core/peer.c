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
    const int nprocs = lat->procs[0] * lat->procs[1] * lat->procs[2] * lat->procs[3];
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
    if (nprocs != tq_internal_mpi_size() || nprocs > TQ_PEER_MAX || lat->nblocks > TQ_PEER_MAX_BLOCKS) return 0;
    u->n = u->ranks = nprocs;
    u->self = tq_internal_mpi_rank();
    for (int b = 0; b < lat->nblocks; b++) u->unit_of_block[b] = (signed char)tq_block_rank(lat, b);
    /* this rank's side: its blocks owned by one CUDA worker whose GPU has the stream
     * memory operations, and peer mode not turned off here */
    const char *env;
    int w = -1, ok = !((env = getenv("TQ_PEER")) && env[0] == '0') && !((env = getenv("TQ_FACE_SETS")) && env[0] == '1');
    int seen[TQ_PEER_MAX_BLOCKS];
    for (int b = 0; b < lat->nblocks; b++) {
        if (!tq_block_is_local(lat, b)) continue;
        const int wb = tq_internal_block_options(lat, b).worker;
        if (wb < 0 || starpu_worker_get_type(wb) != STARPU_CUDA_WORKER) {
            ok = 0;
            continue;
        }
        int k = 0;
        while (k < u->self_gpus && seen[k] != wb) k++;
        if (k == u->self_gpus) seen[u->self_gpus++] = wb;
        if (w >= 0 && wb != w) ok = 0;
        w = wb;
    }
    if (ok && w >= 0) {
        const int d = starpu_worker_get_devid(w);
        if (tq_cuda_peer_enable(d, d)) {
            u->dev[u->self] = d;
            u->worker[u->self] = w;
            u->self_ok = 1;
        }
    }
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
 * out of memory), its node, and the IPC handle of its unit's memory. */
typedef struct rank_record {
    int ok;
    char host[64];
    unsigned char gpu[16];   /* its GPU's UUID */
    int shared_ok;           /* TQ_PEER_SHARED_GPU=1: may share its GPU with another rank (MPS) */
    int gpus;                /* the GPUs its blocks are owned by */
    unsigned char handle[TQ_CUDA_IPC_HANDLE_BYTES];
} rank_record;

static int memory_across_ranks(const tq_peer_units *u, const size_t *bytes, tq_peer_memory *m)
{
    const int self = u->self;
    /* every rank registers it (its barrier is collective), whatever it defers */
    pthread_mutex_lock(&deferred.lock);
    if (!deferred.finalizer) deferred.finalizer = tq_internal_at_finalize(deferred_at_finalize) == 0;
    pthread_mutex_unlock(&deferred.lock);
    rank_record mine, *all = calloc((size_t)u->n, sizeof *all);
    memset(&mine, 0, sizeof mine);
    void *p = NULL;
    mine.ok = all && u->self_ok;
    if (mine.ok && !(p = tq_cuda_alloc_zeroed(u->dev[self], bytes[self] ? bytes[self] : 1))) mine.ok = 2;
    if (mine.ok == 1 && tq_cuda_ipc_export(p, mine.handle)) mine.ok = 0;
    if (gethostname(mine.host, sizeof mine.host - 1) || (mine.ok && tq_cuda_device_uuid(u->dev[self], mine.gpu))) mine.ok = 0;
    const char *shared = getenv("TQ_PEER_SHARED_GPU");
    mine.shared_ok = shared && shared[0] == '1';
    mine.gpus = u->self_gpus;
    int agreed = 1;   /* 1 yes, 0 not applicable, -1 memory */
    rank_record dummy[TQ_PEER_MAX];
    if (tq_internal_allgather_bytes(&mine, all ? (void *)all : (void *)dummy, (int)sizeof mine)) agreed = 0;
    /* every rank has come this far: memory they deferred is no longer mapped anywhere */
    deferred_free_all();
    /* ranks sharing a GPU keep to StarPU-MPI: two processes time-slice one GPU, and a
     * stream waiting on a counter holds its time slice (2 ranks on one H100, 32^4 Wilson
     * M_pc: 2.94 ms this way, 1.78 through StarPU-MPI, 0.28 on one rank), unless every
     * rank says TQ_PEER_SHARED_GPU=1 (under MPS their kernels share the GPU at once) */
    for (int k = 0; k < u->n && agreed > 0 && all; k++) {
        if (!all[k].ok || strcmp(all[k].host, mine.host)) agreed = 0;
        for (int j = 0; j < k && agreed > 0; j++)
            if (!memcmp(all[j].gpu, all[k].gpu, sizeof all[k].gpu) && !(all[j].shared_ok && all[k].shared_ok)) agreed = 0;
        if (agreed > 0 && all[k].ok == 2) agreed = -1;
    }
    if (!all) agreed = 0;
    /* a rank driving several GPUs is the one case a user can fix by how the ranks are laid
     * out: say so at the default verbosity (4.8x slower on 4 H200s, doc/performance.md) */
    int several = -1, one_node = all != NULL;
    for (int k = 0; k < u->n && all; k++) {
        if (all[k].gpus > 1 && several < 0) several = k;
        if (strcmp(all[k].host, mine.host)) one_node = 0;
    }
    if (!one_node) several = -1;   /* across nodes that is the layout to have */
    if (agreed <= 0 && several >= 0 && self == 0) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            tq_log(1, "rank %d drives %d GPUs: faces between GPUs go through StarPU and StarPU-MPI, not GPU to GPU "
                      "(peer mode needs one GPU per rank, or one process for all of a node's GPUs)", several, all[several].gpus);
    } else if (agreed <= 0 && self == 0) {
        tq_log(2, "peer mode across %d ranks: %s", u->n, agreed < 0 ? "out of GPU memory" : "some rank's side does not allow it, the ranks are on different nodes, or two share a GPU");
    }
    m->n = u->n;
    m->ranks = u->ranks;
    int opened = agreed > 0;
    for (int k = 0; k < u->n && opened; k++) {
        m->dev[k] = u->dev[self];
        if (k == self) {
            m->base[k] = p;
            m->local[k] = 1;
        } else if (!(m->base[k] = tq_cuda_ipc_import(u->dev[self], all[k].handle))) opened = 0;
    }
    /* every rank must have mapped every other's memory (else StarPU-MPI, as before) */
    if (agreed > 0 && tq_internal_allreduce_min_u64((uint64_t)opened) == 0) agreed = 0;
    free(all);
    if (agreed > 0) return 0;
    for (int k = 0; k < u->n; k++)
        if (k != self && m->base[k]) tq_cuda_ipc_close(u->dev[self], m->base[k]);
    /* the others may have mapped it: freed once they are past the next collective */
    if (p) defer_free(u->dev[self], p);
    memset(m, 0, sizeof *m);
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
    for (int k = 0; k < m->n; k++) {
        if (!m->base[k]) continue;
        if (!m->local[k]) tq_cuda_ipc_close(m->dev[k], m->base[k]);
        else if (m->ranks > 1) defer_free(m->dev[k], m->base[k]);
        else tq_cuda_free_on(m->dev[k], m->base[k]);
    }
#endif
    memset(m, 0, sizeof *m);
}
