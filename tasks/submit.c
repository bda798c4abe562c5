/* The one way tasks/ builds and submits a task: buffers with their modes (dynamic arrays
 * beyond STARPU_NMAXBUFS), a private copy of the codelet's arguments, the priority, and the
 * placement the caller passes in its options. Inside a chain (tq_task_chain_begin/end) the
 * tasks are recorded instead and submitted together as one tq_cl_chain task. */
#include "config.h"
#include "tq_tasks.h"
#include "chain.h"

#include <stdlib.h>
#include <string.h>
#ifdef TQ_HAVE_MPI
#include <starpu_mpi.h>
#endif

static int owner_checks;
static long ran_on_owner, ran_elsewhere;
static long ran_on_worker[STARPU_NMAXWORKERS];   /* owned tasks each worker ran on its own */

void tq_internal_owner_checks(int on) { __atomic_store_n(&owner_checks, on, __ATOMIC_RELAXED); }

void tq_internal_owner_stats(long *on_owner, long *elsewhere)
{
    *on_owner = __atomic_load_n(&ran_on_owner, __ATOMIC_RELAXED);
    *elsewhere = __atomic_load_n(&ran_elsewhere, __ATOMIC_RELAXED);
}

long tq_internal_owner_ran_on(int worker)
{
    return worker >= 0 && worker < STARPU_NMAXWORKERS ? __atomic_load_n(&ran_on_worker[worker], __ATOMIC_RELAXED) : 0;
}

/* One bit set per worker: the worker sets tasks point to (they must outlive the task). */
#define OWNER_MASK_WORDS ((STARPU_NMAXWORKERS + 31) / 32)
static uint32_t owner_masks[STARPU_NMAXWORKERS][OWNER_MASK_WORDS];

static uint32_t *owner_mask(int worker)
{
    uint32_t *m = owner_masks[worker];
    m[worker / 32] = 1u << (worker % 32);   /* idempotent: safe from any thread */
    return m;
}

/* Runs on the worker that ran the task, right after it (StarPU's callback). */
static void check_owner(void *owner)
{
    const int w = starpu_worker_get_id();
    if (w == (int)(intptr_t)owner) {
        __atomic_add_fetch(&ran_on_owner, 1, __ATOMIC_RELAXED);
        __atomic_add_fetch(&ran_on_worker[w], 1, __ATOMIC_RELAXED);
    } else __atomic_add_fetch(&ran_elsewhere, 1, __ATOMIC_RELAXED);
}

/* Submits a task of codelet cl; arg is copied unless own_arg (then the task frees it).
 * worker >= 0: that worker runs it (its block's owner). */
static int submit_task(struct starpu_codelet *cl, void *arg, size_t asize, int own_arg, const struct starpu_data_descr *d,
                       int n, int priority, tq_where w, int worker)
{
    struct starpu_task *task = starpu_task_create();
    task->cl = cl;
    task->nbuffers = n;
    if (n > STARPU_NMAXBUFS) {
        task->dyn_handles = malloc((size_t)n * sizeof *task->dyn_handles);
        task->dyn_modes = malloc((size_t)n * sizeof *task->dyn_modes);
        if (!task->dyn_handles || !task->dyn_modes) {
            free(task->dyn_handles); free(task->dyn_modes);
            if (own_arg) free(arg);
            task->dyn_handles = NULL; task->dyn_modes = NULL;
            starpu_task_destroy(task);
            return -ENOMEM;
        }
    }
    for (int i = 0; i < n; i++) {
        STARPU_TASK_SET_HANDLE(task, d[i].handle, i);
        STARPU_TASK_SET_MODE(task, d[i].mode, i);
    }
    if (asize) {
        void *copy = arg;
        if (!own_arg) {
            copy = malloc(asize);
            if (!copy) { starpu_task_destroy(task); return -ENOMEM; }
            memcpy(copy, arg, asize);
        }
        task->cl_arg = copy;
        task->cl_arg_size = asize;
        task->cl_arg_free = 1;
    }
    task->priority = priority;
    if (w == TQ_WHERE_CPU) task->where = STARPU_CPU;
    else if (w == TQ_WHERE_CUDA) task->where = STARPU_CUDA;
    if (worker >= 0 && worker < STARPU_NMAXWORKERS) {
        /* owner computes: the block's data stays in its owner's memory. A set of one
         * worker, not execute_on_a_specific_worker: StarPU 1.3 sends such tasks to the
         * worker's local list, past the scheduler's priorities and the CUDA worker's
         * pipeline (a 32^4 solve iteration took 18 ms instead of 1 on an H200). */
        task->workerids = owner_mask(worker);
        task->workerids_len = OWNER_MASK_WORDS;
        if (__atomic_load_n(&owner_checks, __ATOMIC_RELAXED)) {
            task->callback_func = check_owner;
            task->callback_arg = (void *)(intptr_t)worker;
        }
    }
    int ret = starpu_task_submit(task);
    if (ret) starpu_task_destroy(task);   /* frees an owned argument */
    return ret;
}

/* ---- ranks: owner computes across MPI ranks -------------------------------------------- */

static int my_rank, nranks = 1;
static long transfers_posted;
/* Every transfer gets the next number as its StarPU-MPI tag; all ranks count the same
 * transfers in the same order, so a send and its receive carry the same tag. */
static int64_t transfer_seq;
#define TQ_TRANSFER_TAG_BASE ((int64_t)1 << 40)

void tq_task_set_ranks(int rank, int n)
{
    my_rank = rank;
    nranks = n;
    transfer_seq = 0;
}

long tq_internal_transfers_posted(void) { return __atomic_load_n(&transfers_posted, __ATOMIC_RELAXED); }

/* The ranks holding a handle's latest value, a bit per rank, kept in the handle's user data
 * (0, a handle nothing has written yet: every rank, as for data registered from host
 * memory on every rank). */
typedef uint64_t rank_set;
static rank_set every_rank(void) { return nranks >= 64 ? ~(rank_set)0 : ((rank_set)1 << nranks) - 1; }
static rank_set holders(starpu_data_handle_t h)
{
    rank_set s = (rank_set)(uintptr_t)starpu_data_get_user_data(h);
    return s ? s : every_rank();
}
static void set_holders(starpu_data_handle_t h, rank_set s) { starpu_data_set_user_data(h, (void *)(uintptr_t)s); }

void tq_task_data_written_on(starpu_data_handle_t h, int rank)
{
    if (nranks > 1) set_holders(h, (rank_set)1 << rank);
}

/* For a task run by the ranks in `run`: the transfers that bring each input to the ranks
 * running it that lack its latest value, from the lowest rank holding it. With post == 0
 * only says whether this rank takes part in one (1); with post == 1 posts them and records
 * the new holders (inputs: the receivers too; outputs: the ranks that run the task).
 * Returns 0, 1 or a StarPU error. */
static int exchange(rank_set run, const struct starpu_data_descr *d, int n, int post)
{
    int involved = 0;
    for (int i = 0; i < n; i++) {
        if (!(d[i].mode & STARPU_R)) continue;
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= d[j].handle == d[i].handle;
        if (seen) continue;
        const rank_set have = holders(d[i].handle), need = run & ~have;
        if (!need) continue;
        const int from = __builtin_ctzll(have);
        for (int r = 0; r < nranks; r++) {
            if (!(need >> r & 1)) continue;
            if (my_rank == from || my_rank == r) involved = 1;
            if (!post) continue;
            const int64_t tag = TQ_TRANSFER_TAG_BASE + transfer_seq++;
#ifdef TQ_HAVE_MPI
            int ret = 0;
            if (my_rank == from) ret = starpu_mpi_isend_detached(d[i].handle, r, tag, MPI_COMM_WORLD, NULL, NULL);
            else if (my_rank == r) ret = starpu_mpi_irecv_detached(d[i].handle, from, tag, MPI_COMM_WORLD, NULL, NULL);
            if (ret) return ret;
            if (my_rank == from || my_rank == r) __atomic_add_fetch(&transfers_posted, 1, __ATOMIC_RELAXED);
#else
            (void)tag;
            return -ENOSYS;
#endif
        }
        if (post) set_holders(d[i].handle, have | need);
    }
    if (post)
        for (int i = 0; i < n; i++)
            if (d[i].mode & STARPU_W) set_holders(d[i].handle, run);
    return involved;
}

/* The chain being recorded by this thread: its tasks (codelet, argument copy, buffers as
 * indices into the chain's handles) and the union of their handles with merged modes. */
typedef struct {
    struct starpu_codelet *cl;
    void *arg;
    size_t asize;
    int nbuf, first;   /* its buffers: map[first .. first + nbuf - 1] */
} recorded_task;

static _Thread_local struct {
    int depth, off;   /* off: TQ_CHAIN=0 when the outermost chain began (tasks go alone) */
    int ntasks, cap_tasks;
    recorded_task *task;
    int nmap, cap_map, cap_writes;
    int16_t *map;
    uint8_t *writes;   /* per map entry: 1 when that task writes the buffer (W, RW, SCRATCH) */
    int nh, cap_h;
    struct starpu_data_descr *h;
    int priority;
    tq_where where;
    int worker;
} chain;

static int grow(void **p, int *cap, int need, size_t size)
{
    if (need <= *cap) return 0;
    int c = *cap ? 2 * *cap : 16;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return -ENOMEM;
    *p = q;
    *cap = c;
    return 0;
}

/* The chain's mode for a handle accessed first with mode a, then with b; -1 when the two
 * cannot share one buffer (scratch with data, or another mode than R/W/RW/SCRATCH). A
 * handle the chain first writes whole (W) stays W: the chain never needs its old value. */
static int merged_mode(int a, int b)
{
    if (a == STARPU_SCRATCH || b == STARPU_SCRATCH) return a == b ? a : -1;
    if ((a & ~STARPU_RW) || (b & ~STARPU_RW)) return -1;
    if (a == STARPU_W) return STARPU_W;
    return a | (b & STARPU_W);
}

static void chain_clear(void)
{
    for (int i = 0; i < chain.ntasks; i++) free(chain.task[i].arg);
    chain.ntasks = chain.nmap = chain.nh = 0;
    chain.priority = STARPU_MIN_PRIO;
}

static long chains_submitted;
long tq_internal_chains_submitted(void) { return __atomic_load_n(&chains_submitted, __ATOMIC_RELAXED); }

/* Submits the recorded tasks: alone when there is one, else as one tq_cl_chain task. */
static int chain_flush(void)
{
    int ret = 0;
    if (chain.ntasks == 1) {
        recorded_task *t = &chain.task[0];
        struct starpu_data_descr d[TQ_CHAIN_MAX_OP_BUFFERS];
        for (int j = 0; j < t->nbuf; j++) d[j] = chain.h[chain.map[t->first + j]];
        ret = submit_task(t->cl, t->arg, t->asize, 1, d, t->nbuf, chain.priority, chain.where, chain.worker);
        t->arg = NULL;   /* the task owns it (or freed it) */
    } else if (chain.ntasks > 1) {
        const size_t align = 16;
        size_t size = sizeof(tq_chain_head) + (size_t)chain.ntasks * sizeof(tq_chain_op) + (size_t)chain.nmap * sizeof(int16_t)
                      + (size_t)chain.nmap;
        size = (size + align - 1) / align * align;
        const size_t args_at = size;
        for (int i = 0; i < chain.ntasks; i++) size += (chain.task[i].asize + align - 1) / align * align;
        char *blob = calloc(1, size);
        if (!blob) {
            ret = -ENOMEM;
        } else {
            tq_chain_head *h = (tq_chain_head *)blob;
            tq_chain_op *op = (tq_chain_op *)(h + 1);
            h->nops = chain.ntasks;
            h->nmap = chain.nmap;
            memcpy(op + chain.ntasks, chain.map, (size_t)chain.nmap * sizeof(int16_t));
            memcpy((int16_t *)(op + chain.ntasks) + chain.nmap, chain.writes, (size_t)chain.nmap);
            size_t at = args_at;
            for (int i = 0; i < chain.ntasks; i++) {
                const recorded_task *t = &chain.task[i];
                op[i].cl = t->cl;
                op[i].nbuf = (uint16_t)t->nbuf;
                op[i].map_offset = (uint16_t)t->first;
                op[i].arg_offset = t->asize ? (uint32_t)at : 0;
                if (t->asize) memcpy(blob + at, t->arg, t->asize);
                at += (t->asize + align - 1) / align * align;
            }
            ret = submit_task(&tq_cl_chain, blob, size, 1, chain.h, chain.nh, chain.priority, chain.where, chain.worker);
            if (!ret) __atomic_fetch_add(&chains_submitted, 1, __ATOMIC_RELAXED);
        }
    }
    chain_clear();
    return ret;
}

/* Adds a task to the chain; 1 when it cannot join this chain (flush, then try again). */
static int chain_record(struct starpu_codelet *cl, const void *arg, size_t asize, const struct starpu_data_descr *d,
                        int n, int priority, tq_where w, int worker, int *err)
{
    *err = 0;
    if (chain.ntasks && (w != chain.where || worker != chain.worker)) return 1;
    int idx[TQ_CHAIN_MAX_OP_BUFFERS], mode[TQ_CHAIN_MAX_OP_BUFFERS], nh = chain.nh;
    /* where each buffer goes, checked before anything changes */
    for (int i = 0; i < n; i++) {
        /* the mode so far: an earlier buffer of this task on the same handle, or the chain's */
        int prev = -1;
        for (int j = 0; j < i; j++)
            if (d[j].handle == d[i].handle) prev = j;
        idx[i] = prev >= 0 ? idx[prev] : -1;
        for (int j = 0; idx[i] < 0 && j < chain.nh; j++)
            if (chain.h[j].handle == d[i].handle) idx[i] = j;
        if (idx[i] < 0) { idx[i] = nh++; mode[i] = d[i].mode; continue; }
        mode[i] = merged_mode(prev >= 0 ? mode[prev] : (int)chain.h[idx[i]].mode, d[i].mode);
        if (mode[i] < 0) return 1;
    }
    if (nh > INT16_MAX || chain.nmap + n > UINT16_MAX) return 1;
    if (grow((void **)&chain.task, &chain.cap_tasks, chain.ntasks + 1, sizeof *chain.task) ||
        grow((void **)&chain.map, &chain.cap_map, chain.nmap + n, sizeof *chain.map) ||
        grow((void **)&chain.writes, &chain.cap_writes, chain.nmap + n, sizeof *chain.writes) ||
        grow((void **)&chain.h, &chain.cap_h, nh, sizeof *chain.h)) {
        *err = -ENOMEM;
        return 0;
    }
    void *copy = NULL;
    if (asize) {
        copy = malloc(asize);
        if (!copy) { *err = -ENOMEM; return 0; }
        memcpy(copy, arg, asize);
    }
    for (int i = 0; i < n; i++) {
        if (idx[i] >= chain.nh) { chain.h[idx[i]].handle = d[i].handle; chain.nh = idx[i] + 1; }
        chain.h[idx[i]].mode = (enum starpu_data_access_mode)mode[i];
        chain.map[chain.nmap + i] = (int16_t)idx[i];
        chain.writes[chain.nmap + i] = (d[i].mode & STARPU_W) || d[i].mode == STARPU_SCRATCH;
    }
    chain.task[chain.ntasks++] = (recorded_task){cl, copy, asize, n, chain.nmap};
    chain.nmap += n;
    if (chain.ntasks == 1 || priority > chain.priority) chain.priority = priority;
    chain.where = w;
    chain.worker = worker;
    return 0;
}

void tq_task_chain_begin(void)
{
    if (chain.depth++ == 0) {
        const char *env = getenv("TQ_CHAIN");
        chain.off = env && env[0] == '0';
    }
}

int tq_task_chain_end(void)
{
    if (chain.depth <= 0) return -EINVAL;
    return --chain.depth || chain.off ? 0 : chain_flush();
}

/* An acquire in submission order that releases as soon as the value is on its node. */
typedef struct { starpu_data_handle_t h; int node; } prefetched;
static void release_prefetched(void *arg)
{
    prefetched *p = arg;
    starpu_data_release_on_node(p->h, p->node);
    free(p);
}

int tq_task_prefetch(const tq_task_options *opt, starpu_data_handle_t h)
{
    if (chain.depth > 0 && !chain.off) return 0;
    if (nranks > 1 && opt->rank >= 0 && opt->rank != my_rank) return 0;
    /* the reader's memory: its owner's, or the one GPU's where only it may run the reader
     * (a rank driving one GPU: its blocks have no owner) */
    int worker = opt->worker;
    if (worker < 0 && opt->where == TQ_WHERE_CUDA && starpu_cuda_worker_get_count() == 1)
        starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, &worker, 1);
    if (worker < 0) return 0;
    prefetched *p = malloc(sizeof *p);
    if (!p) return -ENOMEM;
    p->h = h;
    p->node = (int)starpu_worker_get_memory_node((unsigned)worker);
    const int ret = starpu_data_acquire_on_node_cb(h, p->node, STARPU_R, release_prefetched, p);
    if (ret) free(p);
    return ret;
}

/* Where a task may go to CPU and GPU workers alike, the scheduler places each kernel by
 * its model; a chain would hide it behind a model of its own, which dmda calibrates by
 * running whole chains on CPU cores. */
static int floats_across_kinds(const tq_task_options *opt)
{
    return opt->worker < 0 && opt->where == TQ_WHERE_ANY && starpu_cpu_worker_get_count() > 0 &&
           starpu_cuda_worker_get_count() > 0;
}

int tq_task_submit_descr(const tq_task_options *opt, struct starpu_codelet *cl, const void *arg, size_t asize,
                         const struct starpu_data_descr *d, int n, int priority)
{
    const tq_where w = opt->where;
    if (nranks > 1) {
        const rank_set run = opt->rank < 0 ? every_rank() : (rank_set)1 << opt->rank;
        int involved = exchange(run, d, n, 0);
        /* what this rank has recorded must be submitted before a transfer reads or
         * overwrites its data */
        if (involved > 0 && chain.depth > 0 && !chain.off) {
            int ret = chain_flush();
            if (ret) return ret;
        }
        int ret = exchange(run, d, n, 1);
        if (ret < 0) return ret;
        if (!(run >> my_rank & 1)) return 0;   /* another rank runs it */
    }
    priority += opt->priority;
    if (priority > STARPU_MAX_PRIO) priority = STARPU_MAX_PRIO;
    if (priority < STARPU_MIN_PRIO) priority = STARPU_MIN_PRIO;
    if (chain.depth > 0 && !chain.off && n <= TQ_CHAIN_MAX_OP_BUFFERS && !floats_across_kinds(opt)) {
        int err;
        if (!chain_record(cl, arg, asize, d, n, priority, w, opt->worker, &err)) return err;
        /* it cannot share the chain's buffers or its owner: the chain so far goes first */
        int ret = chain_flush();
        if (ret) return ret;
        if (!chain_record(cl, arg, asize, d, n, priority, w, opt->worker, &err)) return err;
    } else if (chain.depth > 0 && !chain.off) {
        int ret = chain_flush();
        if (ret) return ret;
    }
    return submit_task(cl, (void *)arg, asize, 0, d, n, priority, w, opt->worker);
}
