/* BLAS-1 and reductions on whole fields: one task per block and parity, and for
 * reductions a combine task that sums the per-block partials in block order. */
#include "blas/blas_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Reduction scratch kept for the life of the runtime: one partial-sum handle per task and
 * the handle the combine task writes the result into. Registering them per call cost a
 * device allocation, a pinned host allocation and handle set-up on every reduction. The
 * lock makes a reduction from one thread complete (result read) before another starts,
 * since all of them share these handles. */
static struct {
    pthread_mutex_t lock;
    starpu_data_handle_t *partials;
    int npartials;
    starpu_data_handle_t result;
    double result_buf[TQ_BLAS_MAX_RESULTS];
} reduce_pool = {.lock = PTHREAD_MUTEX_INITIALIZER};

static void blas_release(void);

/* Called with the lock held. */
static int reduce_pool_reserve(int n)
{
    if (!reduce_pool.result) {
        tq_internal_at_finalize(blas_release);
        starpu_vector_data_register(&reduce_pool.result, STARPU_MAIN_RAM, (uintptr_t)reduce_pool.result_buf,
                                    TQ_BLAS_MAX_RESULTS, sizeof(double));
    }
    if (n <= reduce_pool.npartials) return 0;
    starpu_data_handle_t *p = realloc(reduce_pool.partials, (size_t)n * sizeof *p);
    if (!p) return -1;
    reduce_pool.partials = p;
    for (int t = reduce_pool.npartials; t < n; t++)
        starpu_vector_data_register(&p[t], -1, 0, TQ_BLAS_MAX_RESULTS, sizeof(double));
    reduce_pool.npartials = n;
    return 0;
}

static void mirror_pool_free(void);

/* Unregisters the reduction scratch handles and frees the snapshot mirrors: registered
 * with tq_internal_at_finalize when they are first made, so it runs before StarPU shuts
 * down. */
static void blas_release(void)
{
    pthread_mutex_lock(&reduce_pool.lock);
    for (int t = 0; t < reduce_pool.npartials; t++) starpu_data_unregister(reduce_pool.partials[t]);
    free(reduce_pool.partials);
    reduce_pool.partials = NULL;
    reduce_pool.npartials = 0;
    if (reduce_pool.result) starpu_data_unregister(reduce_pool.result);
    reduce_pool.result = NULL;
    pthread_mutex_unlock(&reduce_pool.lock);
    mirror_pool_free();
}

/* Operand checks shared by the synchronous and the solver (asynchronous) paths. */
static tq_status blas_check(const char *who, int op, tq_field *const *f)
{
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "%s: call tq_init first", who);
    const int nop = tq_blas_noperands(op);
    const unsigned other = tq_blas_other_precision(op);
    int first_other = -1;   /* the operands in the other precision share that of the first */
    for (int i = 0; i < nop; i++) {
        if (!f[i]) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL field (operand %d)", who, i + 1);
        if (!tq_field_kind_is_vector(f[i]->p.kind))
            return tq_error(TQ_ERR_INVALID_ARG, "%s: BLAS works on spinor and staggered fields only", who);
        if (!i) continue;
        const int is_other = other >> i & 1u;
        TQ_CHECK(tq_field_check_compatible(who, f[0], f[i], !is_other));
        if (is_other && first_other >= 0) TQ_CHECK(tq_field_check_compatible(who, f[first_other], f[i], 1));
        if (is_other && first_other < 0) first_other = i;
    }
    const unsigned wr = tq_blas_writes(op);
    for (int i = 0; i < nop; i++)
        for (int j = 0; j < nop; j++)
            if (i != j && f[i] == f[j] && ((wr >> i & 1u) || (wr >> j & 1u)))
                return tq_error(TQ_ERR_INVALID_ARG, "%s: operands %d and %d are the same field but one is written", who, i + 1, j + 1);
    return TQ_SUCCESS;
}

/* One task per block and parity; partials[t] receives task t's sums (reductions). */
static starpu_data_handle_t scalars_for(const tq_scalars *sc, int worker);

/* The tasks of op over every block; scalars: NULL, or the solver's (each block's owner
 * reads its replica). */
/* peer_n: with sc's peer partials, the reduction's number (-1: no peer partials);
 * scratch: each task's reduction scratch (NULL: the worker's) */
static tq_status blas_tasks(const char *who, const tq_blas_args *a, tq_field *const *f,
                            const starpu_data_handle_t *partials, const starpu_data_handle_t *scratch,
                            const tq_scalars *sc, starpu_data_handle_t snapshot, long peer_n)
{
    const tq_lattice *lat = f[0]->lat;
    const int nop = tq_blas_noperands(a->op), nres = tq_blas_nresults(a->op);
    tq_blas_args at = *a;
    for (int b = 0; b < lat->nblocks; b++)
        for (int p = 0; p < f[0]->nparity; p++) {
            starpu_data_handle_t h[TQ_BLAS_MAX_OPERANDS];
            for (int i = 0; i < nop; i++) h[i] = tq_field_handle(f[i], b, p);
            int t = b * f[0]->nparity + p;
            const tq_task_options opt = tq_internal_block_options(lat, b);
            const starpu_data_handle_t scalars = sc ? scalars_for(sc, opt.worker) : NULL;
            if (peer_n >= 0) tq_scalars_partial_sync(sc, t, b, (unsigned)peer_n, nres, &at.sync);
            int ret = tq_task_blas(&opt, &at, h, nres && !a->fused ? partials[t] : NULL, scratch ? scratch[t] : NULL,
                                   scalars, scalars && a->snapshot ? snapshot : NULL);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
            /* peer partials across ranks: each rank's combine reads only its own blocks'
             * partials as handles, the others' through CUDA IPC, so none moves by MPI */
            if (peer_n >= 0 && nres && !a->fused) tq_task_data_on_every_rank(partials[t]);
        }
    return TQ_SUCCESS;
}

static void blas_args_init(tq_blas_args *a, int op, const double *c, tq_field *const *f)
{
    memset(a, 0, sizeof *a);
    a->op = op;
    for (int k = 0; k < tq_blas_ncoefs(op); k++) a->c[k] = c ? c[k] : 0.0;
    for (int i = 0; i < tq_blas_noperands(op); i++) a->L[i] = f[i]->layout;
}

static tq_status blas_run(const char *who, int op, const double *c, tq_field *const *f,
                          double *result)
{
    TQ_CHECK(blas_check(who, op, f));
    const tq_lattice *lat = f[0]->lat;
    const int ntasks = lat->nblocks * f[0]->nparity;
    const int nres = tq_blas_nresults(op);
    starpu_data_handle_t *partials = NULL;
    if (nres) {
        pthread_mutex_lock(&reduce_pool.lock);
        if (reduce_pool_reserve(ntasks)) {
            pthread_mutex_unlock(&reduce_pool.lock);
            return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
        }
        partials = reduce_pool.partials;
    }
    tq_blas_args a;
    blas_args_init(&a, op, c, f);
    tq_status st = blas_tasks(who, &a, f, partials, NULL, NULL, NULL, -1);
    if (nres) {
        double sum[TQ_BLAS_MAX_RESULTS] = {0.0};
        if (st == TQ_SUCCESS) {
            const tq_task_options opt = tq_internal_reduction_options(lat);
            int ret = tq_task_reduce_combine(&opt, partials, ntasks, reduce_pool.result);
            if (ret) st = tq_error(TQ_ERR_RUNTIME, "%s: combine submission failed (%d)", who, ret);
            else if (starpu_data_acquire(reduce_pool.result, STARPU_R))
                st = tq_error(TQ_ERR_RUNTIME, "%s: reading the reduction result failed", who);
            else {
                memcpy(sum, reduce_pool.result_buf, sizeof sum);
                starpu_data_release(reduce_pool.result);
            }
        }
        pthread_mutex_unlock(&reduce_pool.lock);
        /* every rank combined every block's partial sums (tasks/ brought them over), in
         * block order: the same bits on every rank and for any number of ranks */
        if (st == TQ_SUCCESS)
            for (int r = 0; r < nres; r++) result[r] = sum[r];
    }
    return st;
}

/* ---- solver scalars and the asynchronous BLAS the solvers use ----------------------- */

/* Snapshot mirrors: one block of pinned host memory, visible to every GPU (allocated at the
 * first solve that uses it, freed by tq_internal_blas_release), handed out TQ_NSNAPSHOTS at
 * a time; solver scalars created while all sets are taken read through StarPU. Sequence
 * numbers are unique in the process, so a set's earlier owner can never match a wait. */
#define TQ_MIRROR_SETS 64
static struct {
    pthread_mutex_t lock;
    int tried, force;          /* force: tq_internal_snapshot_mirrors */
    tq_snapshot_mirror *pool;
    unsigned long long used;   /* bit j: set j taken */
    long long seq;
    long mirrored, through_starpu;
} mirrors = {.lock = PTHREAD_MUTEX_INITIALIZER, .force = -1};

void tq_internal_snapshot_mirrors(int on)
{
    pthread_mutex_lock(&mirrors.lock);
    mirrors.force = on;
    pthread_mutex_unlock(&mirrors.lock);
}

void tq_internal_snapshot_reads(long *mirrored, long *through_starpu)
{
    *mirrored = __atomic_load_n(&mirrors.mirrored, __ATOMIC_RELAXED);
    *through_starpu = __atomic_load_n(&mirrors.through_starpu, __ATOMIC_RELAXED);
}

static const size_t mirror_pool_bytes = TQ_MIRROR_SETS * TQ_NSNAPSHOTS * sizeof(tq_snapshot_mirror);

/* Called with the lock held. Without CUDA workers a read through StarPU costs no copy from
 * a device: mirrors only where a test asks for them. */
static int mirrors_wanted(void)
{
#ifdef TQ_SIMGRID
    return 0;   /* simulated tasks write no mirror, and a polling host never lets simulated time on */
#endif
    if (mirrors.force >= 0) return mirrors.force;
    const char *env = getenv("TQ_SNAPSHOT_MIRROR");
    if (env && env[0]) return env[0] != '0';
    return starpu_cuda_worker_get_count() > 0;
}

/* Called with the lock held, once per runtime. */
static void mirror_pool_create(void)
{
    mirrors.tried = 1;
    tq_internal_at_finalize(blas_release);
    void *p = NULL;
    if (starpu_malloc_flags(&p, mirror_pool_bytes, STARPU_MALLOC_PINNED) || !p) return;
#ifdef TQ_HAVE_CUDA
    if (starpu_cuda_worker_get_count() > 0 && !tq_cuda_host_memory_mapped(p)) {
        tq_log(1, "solver: pinned host memory is not visible to the GPUs: snapshots are read through StarPU");
        starpu_free_flags(p, mirror_pool_bytes, STARPU_MALLOC_PINNED);
        return;
    }
#endif
    memset(p, 0, mirror_pool_bytes);
    mirrors.pool = p;
}

static void mirror_take(tq_scalars *sc)
{
    pthread_mutex_lock(&mirrors.lock);
    if (mirrors_wanted()) {
        if (!mirrors.tried) mirror_pool_create();
        if (mirrors.pool && mirrors.used != ~0ULL) {
            const int j = __builtin_ctzll(~mirrors.used);
            mirrors.used |= 1ULL << j;
            sc->mirror_set = j;
            sc->mirror = mirrors.pool + (size_t)j * TQ_NSNAPSHOTS;
        }
    }
    pthread_mutex_unlock(&mirrors.lock);
}

/* After the scalars' tasks are done (their handles unregistered). */
static void mirror_give_back(tq_scalars *sc)
{
    if (!sc->mirror) return;
    pthread_mutex_lock(&mirrors.lock);
    mirrors.used &= ~(1ULL << sc->mirror_set);
    pthread_mutex_unlock(&mirrors.lock);
}

static void mirror_pool_free(void)
{
    pthread_mutex_lock(&mirrors.lock);
    if (mirrors.pool) starpu_free_flags(mirrors.pool, mirror_pool_bytes, STARPU_MALLOC_PINNED);
    mirrors.pool = NULL;
    mirrors.used = 0;
    mirrors.tried = 0;
    pthread_mutex_unlock(&mirrors.lock);
}

tq_status tq_scalars_create(tq_scalars **out)
{
    *out = NULL;
    tq_scalars *sc = calloc(1, sizeof *sc);
    if (!sc) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for its scalars");
    starpu_vector_data_register(&sc->h, STARPU_MAIN_RAM, (uintptr_t)sc->buf, TQ_NSCALARS, sizeof(double));
    for (int i = 0; i < TQ_NSNAPSHOTS; i++) {
        starpu_vector_data_register(&sc->snap[i], STARPU_MAIN_RAM, (uintptr_t)sc->snap_buf[i], TQ_NSCALARS, sizeof(double));
        sc->mark[i].h = sc->snap[i];
        sc->watch[i].h = sc->snap[i];
    }
    sc->snap_next = -1;
    sc->nrep = 1;
    sc->rep[0] = sc->h;
    sc->rep_worker[0] = -1;
    mirror_take(sc);
    *out = sc;
    return TQ_SUCCESS;
}

/* A replica of the scalars per owner of lat's blocks on this rank (none where the
 * scheduler places blocks, or one owner). */
static void make_replicas(tq_scalars *sc, const tq_lattice *lat)
{
    const char *env = getenv("TQ_SCALAR_REPLICAS");   /* 0: one copy, for comparisons */
    if (lat->nlocal_blocks < 2 || (env && env[0] == '0')) return;
    int workers[TQ_SCALAR_REPLICAS], n = 0;
    for (int b = 0; b < lat->nblocks; b++) {
        if (!tq_block_is_local(lat, b)) continue;
        const int w = tq_internal_block_options(lat, b).worker;
        if (w < 0) return;   /* the scheduler places it: one copy */
        int k = 0;
        while (k < n && workers[k] != w) k++;
        if (k < n) continue;
        if (n == TQ_SCALAR_REPLICAS) return;
        workers[n++] = w;
    }
    /* replica 0 on the reductions' worker (block 0's owner) */
    const int w0 = tq_internal_reduction_options(lat).worker;
    if (n < 2 || w0 != workers[0]) return;
    sc->rep_worker[0] = w0;
    for (int k = 1; k < n; k++) {
        starpu_vector_data_register(&sc->rep[k], STARPU_MAIN_RAM, (uintptr_t)sc->rep_buf[k], TQ_NSCALARS, sizeof(double));
        sc->rep_worker[k] = workers[k];
    }
    sc->nrep = n;
}

tq_status tq_scalars_replicate(tq_scalars *sc, const tq_lattice *lat)
{
    if (sc->nrep > 1 || sc->peer) return TQ_SUCCESS;
    make_replicas(sc, lat);
    /* then the partial sums GPU to GPU where the owners are peer units: across the ranks of
     * one node every rank calls this for the same solve (collective), and reaches it */
    tq_scalars_peer_setup(sc, lat);
    return TQ_SUCCESS;
}

/* The scalars the tasks of a block owned by worker read. */
static starpu_data_handle_t scalars_for(const tq_scalars *sc, int worker)
{
    for (int k = 1; k < sc->nrep; k++)
        if (sc->rep_worker[k] == worker) return sc->rep[k];
    return sc->h;
}

void tq_scalars_destroy(tq_scalars *sc)
{
    if (!sc) return;
    tq_scalars_buffers_release(sc);
    /* nothing is read after this: no copy back to the host (a snapshot of a held-back
     * iteration, never read, would be fetched from the GPU one by one) */
    starpu_data_unregister_no_coherency(sc->h);
    for (int k = 1; k < sc->nrep; k++) starpu_data_unregister_no_coherency(sc->rep[k]);
    for (int i = 0; i < TQ_NSNAPSHOTS; i++) starpu_data_unregister_no_coherency(sc->snap[i]);   /* waits for marks too */
    mirror_give_back(sc);
    tq_scalars_peer_release(sc);   /* every task that used it has ended: its handles are gone */
    free(sc);
}

static tq_status read_handle(starpu_data_handle_t h, const double *buf, double *values)
{
    if (starpu_data_acquire(h, STARPU_R)) return tq_error(TQ_ERR_RUNTIME, "solver: reading its scalars failed");
    memcpy(values, buf, TQ_NSCALARS * sizeof *values);
    starpu_data_release(h);
    return TQ_SUCCESS;
}

/* Runs on the thread that completed the snapshot's writer (no data moves). */
static void writer_ended(void *arg)
{
    struct tq_snapshot_watch *w = arg;
    __atomic_add_fetch(&w->ended, 1, __ATOMIC_RELEASE);
    starpu_data_release_on_node(w->h, STARPU_ACQUIRE_NO_NODE);
}

static int mirror_seq_is(const tq_snapshot_mirror *m, long long want)
{
    return __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE) == want;
}

/* Waits for snapshot i's mirror: 1 with the values copied, 0 if its writer ended without
 * publishing it (then StarPU's copy is read), -1 on a runtime error. The wait polls: a
 * blocking wait would bring back the wake-up it avoids. It yields the core while it polls,
 * and after a second (a CPU worker's long task) sleeps between polls. */
static int mirror_wait(tq_scalars *sc, int i, double *values)
{
    const tq_snapshot_mirror *m = &sc->mirror[i];
    const long long want = sc->mirror_seq[i];
    struct tq_snapshot_watch *w = &sc->watch[i];
    if (!mirror_seq_is(m, want)) {
        /* this wait's own callback: an earlier wait on this snapshot, which found its mirror
         * before its writer ended, may hear of that end only now (seen under load: one
         * read in 45 fell back to StarPU), and must not end this wait */
        const long long mine = ++w->requested;
        tq_task_note_access(sc->snap[i], STARPU_R);
        if (starpu_data_acquire_on_node_cb(sc->snap[i], STARPU_ACQUIRE_NO_NODE, STARPU_R, writer_ended, w)) {
            w->requested--;
            return -1;
        }
        const double t0 = tq_internal_now();
        int warned = 0;
        for (long n = 1; !mirror_seq_is(m, want); n++) {
            /* the writer's end comes after its mirror write: one more look, then give up */
            if (__atomic_load_n(&w->ended, __ATOMIC_ACQUIRE) >= mine) {
                if (mirror_seq_is(m, want)) break;
                return 0;
            }
            if (n % 1024 == 0 && tq_internal_now() - t0 > 1.0) {
                const struct timespec nap = {0, 20000};
                nanosleep(&nap, NULL);
                /* a solver step takes milliseconds: say so if one never ends (a hang seen
                 * once on a GPU machine, not reproduced: where it waits is the first clue) */
                if (!warned && tq_internal_now() - t0 > 60.0) {
                    warned = 1;
                    fprintf(stderr, "taskqcd: a solver has waited 60 s for the task that writes its scalars "
                            "(snapshot %d, number %lld; the mirror holds %lld)\n", i, want,
                            __atomic_load_n(&m->seq, __ATOMIC_ACQUIRE));
                }
            } else {
                sched_yield();
            }
        }
    }
    memcpy(values, m->v, TQ_NSCALARS * sizeof *values);
    return 1;
}

int tq_scalars_snapshot_ready(const tq_scalars *sc, int i)
{
    if (!sc->mirror || sc->mirror_seq[i] <= 0) return -1;
    return mirror_seq_is(&sc->mirror[i], sc->mirror_seq[i]);
}

tq_status tq_scalars_read_snapshot(tq_scalars *sc, int i, double *values)
{
    if (sc->mirror && sc->mirror_seq[i] > 0) {
        const int got = mirror_wait(sc, i, values);
        if (got < 0) return tq_error(TQ_ERR_RUNTIME, "solver: waiting for its scalars failed");
        if (got) {
            __atomic_add_fetch(&mirrors.mirrored, 1, __ATOMIC_RELAXED);
            return TQ_SUCCESS;
        }
    }
    __atomic_add_fetch(&mirrors.through_starpu, 1, __ATOMIC_RELAXED);
    return read_handle(sc->snap[i], sc->snap_buf[i], values);
}

int tq_scalars_take_snapshot(tq_scalars *sc, tq_mirror_ref *mirror)
{
    const int snap = sc->snap_next;
    sc->snap_next = -1;
    mirror->m = NULL;
    mirror->seq = 0;
    if (snap >= 0 && sc->mirror) {
        mirror->m = &sc->mirror[snap];
        mirror->seq = sc->mirror_seq[snap] = __atomic_add_fetch(&mirrors.seq, 1, __ATOMIC_RELAXED);
    } else if (snap >= 0) {
        sc->mirror_seq[snap] = 0;
    }
    return snap;
}

/* Runs on the thread that completed the snapshot's writer: no data moves (no node). */
static void mark_now(void *arg)
{
    struct tq_snapshot_mark *m = arg;
    const double t = tq_internal_now();
    __atomic_store(&m->t, &t, __ATOMIC_RELEASE);
    starpu_data_release_on_node(m->h, STARPU_ACQUIRE_NO_NODE);
}

tq_status tq_scalars_mark(tq_scalars *sc, int i)
{
    sc->mark[i].t = 0.0;
    tq_task_note_access(sc->snap[i], STARPU_R);
    if (starpu_data_acquire_on_node_cb(sc->snap[i], STARPU_ACQUIRE_NO_NODE, STARPU_R, mark_now, &sc->mark[i]))
        return tq_error(TQ_ERR_RUNTIME, "solver: waiting for its scalars failed");
    return TQ_SUCCESS;
}

double tq_scalars_mark_time(const tq_scalars *sc, int i)
{
    double t;
    __atomic_load(&sc->mark[i].t, &t, __ATOMIC_ACQUIRE);
    return t;
}

tq_status tq_scalars_write(tq_scalars *sc, int slot, int n, const double *values)
{
    if (slot < 0 || slot + n > TQ_NSCALARS) return tq_error(TQ_ERR_INVALID_ARG, "solver: scalar slot %d out of range", slot);
    for (int k = 0; k < sc->nrep; k++) {
        if (starpu_data_acquire(sc->rep[k], STARPU_RW)) return tq_error(TQ_ERR_RUNTIME, "solver: writing its scalars failed");
        memcpy((k ? sc->rep_buf[k] : sc->buf) + slot, values, (size_t)n * sizeof *values);
        starpu_data_release(sc->rep[k]);
    }
    return TQ_SUCCESS;
}

/* The combine tasks of a reduction over n partials: replica 0's on block 0's owner (it alone
 * writes snapshot snap, if >= 0, that the host reads), then one per further replica on its
 * owner. peer_n >= 0: the reduction's number, its partials peer partials (nparity per block). */
static tq_status combine(const char *who, tq_scalars *sc, const tq_lattice *lat, int nparity,
                         starpu_data_handle_t *partials, int n, int nres, int dst, const tq_scalar_instr *prog,
                         int nprog, int snap, tq_mirror_ref mirror, long peer_n)
{
    tq_scalar_combine_args ca;
    memset(&ca, 0, sizeof ca);
    ca.n = n;
    ca.nres = nres;
    ca.dst = dst;
    ca.nprog = nprog;
    ca.guard = sc->guard;
    ca.snapshot = snap >= 0;
    ca.mirror = mirror;
    if (nprog) memcpy(ca.prog, prog, (size_t)nprog * sizeof *prog);
    tq_task_options opt = tq_internal_reduction_options(lat);
    if (peer_n >= 0) tq_scalars_combine_sync(sc, lat, nparity, 0, (unsigned)peer_n, &ca.sync);
    int ret = tq_task_scalar_combine(&opt, &ca, partials, sc->h, snap >= 0 ? sc->snap[snap] : NULL);
    ca.snapshot = 0;
    ca.mirror = (tq_mirror_ref){NULL, 0};
    for (int k = 1; k < sc->nrep && !ret; k++) {
        opt.worker = sc->rep_worker[k];
        if (peer_n >= 0) tq_scalars_combine_sync(sc, lat, nparity, k, (unsigned)peer_n, &ca.sync);
        ret = tq_task_scalar_combine(&opt, &ca, partials, sc->rep[k], NULL);
    }
    return ret ? tq_error(TQ_ERR_RUNTIME, "%s: combine submission failed (%d)", who, ret) : TQ_SUCCESS;
}

tq_status tq_blas_submit(const char *who, int op, const double *c, const signed char *slot, tq_field *const *f,
                         tq_scalars *sc, int dst, const tq_scalar_instr *prog, int nprog)
{
    TQ_CHECK(blas_check(who, op, f));
    const int ntasks = f[0]->lat->nblocks * f[0]->nparity, nres = tq_blas_nresults(op);
    if (nprog > TQ_SCALAR_PROGRAM_MAX) return tq_error(TQ_ERR_INVALID_ARG, "%s: scalar program too long", who);
    if (nprog && !nres) return tq_error(TQ_ERR_INVALID_ARG, "%s: a scalar program needs a reduction", who);
    if (nres && (dst < 0 || dst + nres > TQ_NSCALARS))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: scalar slot %d out of range", who, dst);
    tq_blas_args a;
    blas_args_init(&a, op, c, f);
    for (int k = 0; k < tq_blas_ncoefs(op) && slot; k++) {
        a.slot[k] = slot[k];
        a.use_scalars |= slot[k] > 0;
    }
    if (!sc) {
        if (nres || a.use_scalars) return tq_error(TQ_ERR_INVALID_ARG, "%s: this operation needs the solver's scalars", who);
        return blas_tasks(who, &a, f, NULL, NULL, NULL, NULL, -1);
    }
    a.guard = (signed char)sc->guard;
    a.use_scalars |= sc->guard != 0;
    tq_mirror_ref mirror = {NULL, 0};
    const int snap = nres ? tq_scalars_take_snapshot(sc, &mirror) : -1;
    if (nres && ntasks == 1) {
        /* the task itself writes the scalars and runs the program */
        a.use_scalars = 1;
        a.fused = 1;
        a.dst = (signed char)dst;
        a.nprog = (signed char)nprog;
        if (nprog) memcpy(a.prog, prog, (size_t)nprog * sizeof *prog);
        a.snapshot = snap >= 0;
        a.mirror = mirror;
        return blas_tasks(who, &a, f, NULL, NULL, sc, snap >= 0 ? sc->snap[snap] : NULL, -1);
    }
    /* reductions use two sets of partial sums in turn: with a combine per owner, the next
     * reduction's partial tasks then need not wait for every owner's combine to have read
     * this one's (the chain task holding an owner's combine would otherwise wait on the
     * other's). Always two, whatever the owners: every rank must pick the same set (its
     * transfers between ranks follow the handles), and ranks may differ in owners. */
    starpu_data_handle_t *partials = NULL;
    /* each block's reduction its own scratch: they may run side by side on a GPU */
    starpu_data_handle_t *scratch = NULL;
    if (nres) TQ_CHECK(tq_scalars_partials(sc, ntasks, &partials));
    if (nres) TQ_CHECK(tq_scalars_scratch(sc, ntasks, &scratch));
    const int peer = nres && sc->peer && ntasks <= TQ_PEER_TASKS;
    /* peer partials number only their own reductions: reduction n waits for the combines
     * of n - 2 (peer_partials.c), which a split epilogue's reduction in between never signals */
    const unsigned n = peer ? sc->peer_reductions++ : 0;
    TQ_CHECK(blas_tasks(who, &a, f, partials, scratch, sc, NULL, peer ? (long)n : -1));
    if (!nres) return TQ_SUCCESS;
    return combine(who, sc, f[0]->lat, f[0]->nparity, partials, ntasks, nres, dst, prog, nprog, snap, mirror,
                   peer ? (long)n : -1);
}

tq_status tq_scalars_combine(const char *who, tq_scalars *sc, const tq_lattice *lat, starpu_data_handle_t *partials, int n,
                             int nres, int dst, const tq_scalar_instr *prog, int nprog, int snap, tq_mirror_ref mirror,
                             long peer_n)
{
    if (nprog > TQ_SCALAR_PROGRAM_MAX) return tq_error(TQ_ERR_INVALID_ARG, "%s: scalar program too long", who);
    if (nres < 0 || nres > TQ_BLAS_MAX_RESULTS || (nres > 0 && (dst < 0 || dst + nres > TQ_NSCALARS)))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d results into scalar slot %d out of range", who, nres, dst);
    if (peer_n >= 0 && (!sc->peer || !nres || n != 2 * lat->nblocks || n > TQ_PEER_TASKS))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: peer partials need two per block and the scalars' peer mode", who);
    /* a split epilogue's partials: task 2 b + part of block b, as BLAS tasks of two parities */
    return combine(who, sc, lat, peer_n >= 0 ? 2 : 1, partials, n, nres, dst, prog, nprog, snap, mirror, peer_n);
}

int tq_scalars_epilogue_peer(tq_scalars *sc, int n, unsigned *number)
{
    if (!sc->peer || n > TQ_PEER_TASKS) return 0;
    *number = sc->peer_reductions++;
    return 1;
}

starpu_data_handle_t tq_scalars_for_worker(const tq_scalars *sc, int worker) { return scalars_for(sc, worker); }

tq_status tq_blas_zero(tq_field *x)
{
    tq_field *f[1] = {x};
    return blas_run("tq_blas_zero", TQ_OP_ZERO, NULL, f, NULL);
}

tq_status tq_blas_copy(tq_field *dst, const tq_field *src)
{
    tq_field *f[2] = {(tq_field *)src, dst};
    return blas_run("tq_blas_copy", TQ_OP_COPY, NULL, f, NULL);
}

tq_status tq_blas_scale(double a, tq_field *x)
{
    tq_field *f[1] = {x};
    double c[4] = {a, 0, 0, 0};
    return blas_run("tq_blas_scale", TQ_OP_SCALE, c, f, NULL);
}

tq_status tq_blas_axpy(double a, const tq_field *x, tq_field *y)
{
    tq_field *f[2] = {(tq_field *)x, y};
    double c[4] = {a, 0, 0, 0};
    return blas_run("tq_blas_axpy", TQ_OP_AXPY, c, f, NULL);
}

tq_status tq_blas_xpay(const tq_field *x, double a, tq_field *y)
{
    tq_field *f[2] = {(tq_field *)x, y};
    double c[4] = {a, 0, 0, 0};
    return blas_run("tq_blas_xpay", TQ_OP_XPAY, c, f, NULL);
}

tq_status tq_blas_axpby(double a, const tq_field *x, double b, tq_field *y)
{
    tq_field *f[2] = {(tq_field *)x, y};
    double c[4] = {a, b, 0, 0};
    return blas_run("tq_blas_axpby", TQ_OP_AXPBY, c, f, NULL);
}

tq_status tq_blas_caxpy(tq_complex a, const tq_field *x, tq_field *y)
{
    tq_field *f[2] = {(tq_field *)x, y};
    double c[4] = {a.re, a.im, 0, 0};
    return blas_run("tq_blas_caxpy", TQ_OP_CAXPY, c, f, NULL);
}

tq_status tq_blas_caxpby(tq_complex a, const tq_field *x, tq_complex b, tq_field *y)
{
    tq_field *f[2] = {(tq_field *)x, y};
    double c[4] = {a.re, a.im, b.re, b.im};
    return blas_run("tq_blas_caxpby", TQ_OP_CAXPBY, c, f, NULL);
}

#define TQ_NEED_RESULT(who, p) \
    if (!(p)) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL result pointer", who)

tq_status tq_blas_norm2(const tq_field *x, double *result)
{
    TQ_NEED_RESULT("tq_blas_norm2", result);
    tq_field *f[1] = {(tq_field *)x};
    return blas_run("tq_blas_norm2", TQ_OP_NORM2, NULL, f, result);
}

tq_status tq_blas_rdot(const tq_field *x, const tq_field *y, double *result)
{
    TQ_NEED_RESULT("tq_blas_rdot", result);
    tq_field *f[2] = {(tq_field *)x, (tq_field *)y};
    return blas_run("tq_blas_rdot", TQ_OP_RDOT, NULL, f, result);
}

tq_status tq_blas_cdot(const tq_field *x, const tq_field *y, tq_complex *result)
{
    TQ_NEED_RESULT("tq_blas_cdot", result);
    tq_field *f[2] = {(tq_field *)x, (tq_field *)y};
    double r[2];
    TQ_CHECK(blas_run("tq_blas_cdot", TQ_OP_CDOT, NULL, f, r));
    result->re = r[0];
    result->im = r[1];
    return TQ_SUCCESS;
}

tq_status tq_blas_axpy_norm2(double a, const tq_field *x, tq_field *y, double *norm2_y)
{
    TQ_NEED_RESULT("tq_blas_axpy_norm2", norm2_y);
    tq_field *f[2] = {(tq_field *)x, y};
    double c[4] = {a, 0, 0, 0};
    return blas_run("tq_blas_axpy_norm2", TQ_OP_AXPY_NORM2, c, f, norm2_y);
}

tq_status tq_blas_cg_update(double alpha, const tq_field *p, const tq_field *Ap, tq_field *x,
                            tq_field *r, double *norm2_r)
{
    TQ_NEED_RESULT("tq_blas_cg_update", norm2_r);
    tq_field *f[4] = {(tq_field *)p, (tq_field *)Ap, x, r};
    double c[4] = {alpha, 0, 0, 0};
    return blas_run("tq_blas_cg_update", TQ_OP_CG_UPDATE, c, f, norm2_r);
}

tq_status tq_blas_cg_direction(double beta, const tq_field *r, tq_field *p)
{
    tq_field *f[2] = {(tq_field *)r, p};
    double c[4] = {beta, 0, 0, 0};
    return blas_run("tq_blas_cg_direction", TQ_OP_CG_DIRECTION, c, f, NULL);
}

tq_status tq_blas_bicgstab_update(tq_complex alpha, tq_complex omega, const tq_field *p,
                                  const tq_field *s, const tq_field *t, const tq_field *r0,
                                  tq_field *x, tq_field *r, double *norm2_r,
                                  tq_complex *r0_dot_r)
{
    TQ_NEED_RESULT("tq_blas_bicgstab_update", norm2_r);
    TQ_NEED_RESULT("tq_blas_bicgstab_update", r0_dot_r);
    tq_field *f[6] = {(tq_field *)p, (tq_field *)s, (tq_field *)t, (tq_field *)r0, x, r};
    double c[4] = {alpha.re, alpha.im, omega.re, omega.im};
    double res[3];
    TQ_CHECK(blas_run("tq_blas_bicgstab_update", TQ_OP_BICGSTAB_UPDATE, c, f, res));
    *norm2_r = res[0];
    r0_dot_r->re = res[1];
    r0_dot_r->im = res[2];
    return TQ_SUCCESS;
}

tq_status tq_blas_bicgstab_direction(tq_complex beta, tq_complex omega, const tq_field *r,
                                     const tq_field *v, tq_field *p)
{
    tq_field *f[3] = {(tq_field *)r, (tq_field *)v, p};
    double c[4] = {beta.re, beta.im, omega.re, omega.im};
    return blas_run("tq_blas_bicgstab_direction", TQ_OP_BICGSTAB_DIRECTION, c, f, NULL);
}

tq_status tq_blas_cdot_norm2(const tq_field *x, const tq_field *y, tq_complex *dot,
                             double *norm2_x)
{
    TQ_NEED_RESULT("tq_blas_cdot_norm2", dot);
    TQ_NEED_RESULT("tq_blas_cdot_norm2", norm2_x);
    tq_field *f[2] = {(tq_field *)x, (tq_field *)y};
    double res[3];
    TQ_CHECK(blas_run("tq_blas_cdot_norm2", TQ_OP_CDOT_NORM2, NULL, f, res));
    dot->re = res[0];
    dot->im = res[1];
    *norm2_x = res[2];
    return TQ_SUCCESS;
}
