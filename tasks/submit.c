/* The one way tasks/ builds and submits a task: buffers with their modes (dynamic arrays
 * beyond STARPU_NMAXBUFS), a private copy of the codelet's arguments, the priority, and the
 * placement the caller passes in its options. Inside a chain (tq_task_chain_begin/end) the
 * tasks are recorded instead and submitted together as one tq_cl_chain task. */
#include "config.h"
#include "tq_tasks.h"
#include "chain.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
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

/* ---- chain tasks that still wait: later runs of the same owner join them -----------------
 * Each flush (an operator application, a BLAS call, a pair of solver iterations) makes one
 * chain task per owner, and between two chain tasks of one worker its GPU idles 15-35 us:
 * the worker's thread sees the first end, StarPU releases the dependencies, schedules the
 * next task, and the worker launches it. While an owner's last chain task still waits for
 * its dependencies (typically the chain before it, still running), a new run of the same
 * owner whose buffers are all among that task's, in modes the task already holds, is
 * appended to it as another segment (codelets/chain.h), so its kernels follow on the
 * stream with no task boundary. Appending moves the run's accesses back to the waiting
 * task's place in StarPU's submission order; that keeps every dependency as long as
 * nothing submitted since accesses one of the task's handles in a conflicting way, so every
 * submission (a task, a prefetch, an MPI transfer, an asynchronous acquire:
 * tq_task_note_access) first takes the waiting chains it conflicts with out of reach. The
 * task's prologue (StarPU calls it when the dependencies are met, before scheduling)
 * closes it, so the scheduler, the footprint and the worker see its final entries.
 * TQ_CHAIN_EXTEND=0 (or TQ_CHAIN=0) turns it off. */
typedef struct {
    starpu_data_handle_t handle;
    int mode;
    int16_t index;   /* the chain task's buffer */
    int16_t held;    /* held (tq_task_hold): no entry touched it so far */
} pending_buffer;

typedef struct pending_chain {
    struct starpu_task *task;
    tq_chain_head *tail;   /* its last segment */
    int closed, refs;      /* refs: the table's and the prologue's */
    tq_where where;
    int worker;
    int nh;
    pending_buffer *h;     /* sorted by handle */
} pending_chain;

enum { MAX_PENDING = 64 };
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static pending_chain *pending[MAX_PENDING];
static int npending;
static long chains_extended;
long tq_internal_chains_extended(void) { return __atomic_load_n(&chains_extended, __ATOMIC_RELAXED); }

static void pending_unref(pending_chain *p)   /* pending_lock held */
{
    if (--p->refs) return;
    free(p->h);
    free(p);
}

/* StarPU's prologue: the task's dependencies are met, nothing joins it any more. */
static void pending_close(void *arg)
{
    pending_chain *p = arg;
    pthread_mutex_lock(&pending_lock);
    p->closed = 1;
    pending_unref(p);
    pthread_mutex_unlock(&pending_lock);
}

static void pending_drop(int k)   /* pending_lock held */
{
    pending_chain *p = pending[k];
    pending[k] = pending[--npending];
    pending_unref(p);
}

static int by_pending_handle(const void *a, const void *b)
{
    const uintptr_t x = (uintptr_t)((const pending_buffer *)a)->handle, y = (uintptr_t)((const pending_buffer *)b)->handle;
    return x < y ? -1 : x > y;
}

static const pending_buffer *pending_find(const pending_chain *p, starpu_data_handle_t h)
{
    const pending_buffer key = {h, 0, 0, 0};
    return bsearch(&key, p->h, (size_t)p->nh, sizeof *p->h, by_pending_handle);
}

/* Takes out of reach every waiting chain that an access to d[0 .. n-1], submitted now,
 * conflicts with (a handle both touch, one of them other than reading; scratch buffers
 * order nothing). */
static void pending_seal(const struct starpu_data_descr *d, int n)
{
    pthread_mutex_lock(&pending_lock);
    for (int k = 0; k < npending; k++) {
        int hit = 0;
        for (int i = 0; i < n && !hit; i++) {
            if (d[i].mode == STARPU_SCRATCH) continue;
            const pending_buffer *b = pending_find(pending[k], d[i].handle);
            hit = b && b->mode != STARPU_SCRATCH && ((b->mode | (int)d[i].mode) & ~STARPU_R);
        }
        if (hit) pending_drop(k--);
    }
    pthread_mutex_unlock(&pending_lock);
}

void tq_task_note_access(starpu_data_handle_t h, enum starpu_data_access_mode mode)
{
    const struct starpu_data_descr d = {h, mode};
    pending_seal(&d, 1);
}

static int chain_extend_on(void)
{
#ifdef TQ_SIMGRID
    return 0;   /* a simulated chain's duration comes from its footprint's calibration */
#else
    const char *chain = getenv("TQ_CHAIN"), *ext = getenv("TQ_CHAIN_EXTEND");
    return !(chain && chain[0] == '0') && !(ext && ext[0] == '0');
#endif
}

/* The chain task about to be submitted with buffers d[0 .. n-1], d[held ..] held without
 * an entry touching them, as a candidate to join; NULL when out of memory (it then goes
 * without). */
static pending_chain *pending_new(const struct starpu_data_descr *d, int n, int held, tq_where where, int worker)
{
    pending_chain *p = calloc(1, sizeof *p);
    if (!p || !(p->h = malloc((size_t)(n ? n : 1) * sizeof *p->h))) {
        free(p);
        return NULL;
    }
    for (int i = 0; i < n; i++) p->h[i] = (pending_buffer){d[i].handle, (int)d[i].mode, (int16_t)i, (int16_t)(i >= held)};
    qsort(p->h, (size_t)n, sizeof *p->h, by_pending_handle);
    p->nh = n;
    p->refs = 2;
    p->where = where;
    p->worker = worker;
    return p;
}

/* After the submission of p's task (ret: starpu_task_submit's answer): p becomes its
 * owner's waiting chain, unless its prologue already ran. */
static void pending_publish(pending_chain *p, int ret)
{
    if (ret) {   /* not submitted: no prologue will run */
        free(p->h);
        free(p);
        return;
    }
    pthread_mutex_lock(&pending_lock);
    if (p->closed) {
        pending_unref(p);
    } else {
        int k = 0;
        while (k < npending && (pending[k]->where != p->where || pending[k]->worker != p->worker)) k++;
        if (k < npending) pending_drop(k);
        if (npending < MAX_PENDING) pending[npending++] = p;
        else pending_unref(p);
    }
    pthread_mutex_unlock(&pending_lock);
}

/* A chain task's segments after the first, freed once it has run (its callback). */
typedef struct {
    void (*also)(void *);
    void *also_arg;
    tq_chain_head *head;
} segments_owner;

static void free_segments(void *arg)
{
    segments_owner *o = arg;
    tq_chain_head *seg = o->head->next;
    o->head->next = NULL;
    while (seg) {
        tq_chain_head *next = seg->next;
        free(seg);
        seg = next;
    }
    if (o->also) o->also(o->also_arg);
    free(o);
}

static void release_pending_chains(void)
{
    pthread_mutex_lock(&pending_lock);
    while (npending) pending_drop(npending - 1);
    pthread_mutex_unlock(&pending_lock);
}

/* The order of submissions across host threads (multigrid's solves side by side each
 * submit from their own thread). Held over a whole flush of recorded runs, and from a
 * task's seal to its submission and, for a chain task that may wait, its publication as
 * its owner's waiting chain. Peer mode's deadlock argument (core/stencil.h, doc/design.md)
 * needs one order of all recorded entries that every GPU's stream follows, with each
 * stream wait after the signal it waits for: one thread's flush submits its runs' chains
 * one GPU after another, and another thread's chains between them made GPU 0's stream wait
 * for a GPU 1 entry queued behind a wait on GPU 0 (2 x H200, 16^4 multigrid, two solves side
 * by side: both CUDA workers in cudaStreamSynchronize, f99cbc8). Likewise a task of another
 * thread must not slip between a chain task's submission and its publication, where a later
 * run could join the chain past it. Re-entrant per thread (a flush submits tasks). */
static pthread_mutex_t submit_order = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local int submit_order_depth;
static void order_lock(void)
{
    if (submit_order_depth++ == 0) pthread_mutex_lock(&submit_order);
}
static void order_unlock(void)
{
    if (--submit_order_depth == 0) pthread_mutex_unlock(&submit_order);
}

/* Submits a task of codelet cl; arg is copied unless own_arg (then the task frees it).
 * worker >= 0: that worker runs it (its block's owner). joinable: the chain task's entry,
 * published as its owner's waiting chain once submitted (or freed). */
static int submit_task_ordered(struct starpu_codelet *cl, void *arg, size_t asize, int own_arg,
                               const struct starpu_data_descr *d, int n, int priority, tq_where w, int worker,
                               pending_chain *joinable);
static int submit_task(struct starpu_codelet *cl, void *arg, size_t asize, int own_arg, const struct starpu_data_descr *d,
                       int n, int priority, tq_where w, int worker, pending_chain *joinable)
{
    order_lock();
    const int ret = submit_task_ordered(cl, arg, asize, own_arg, d, n, priority, w, worker, joinable);
    if (joinable) pending_publish(joinable, ret);
    order_unlock();
    return ret;
}

static int submit_task_ordered(struct starpu_codelet *cl, void *arg, size_t asize, int own_arg,
                               const struct starpu_data_descr *d, int n, int priority, tq_where w, int worker,
                               pending_chain *joinable)
{
    pending_seal(d, n);
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
    if (tq_task_log_on()) tq_task_log_attach(task);
    if (joinable) {
        joinable->task = task;
        joinable->tail = task->cl_arg;
        task->prologue_callback_func = pending_close;
        task->prologue_callback_arg = joinable;
    }
    int ret = starpu_task_submit(task);
    if (ret) starpu_task_destroy(task);   /* frees an owned argument (and the log's) */
    return ret;
}

/* ---- ranks: owner computes across MPI ranks -------------------------------------------- */

static int my_rank, nranks = 1;
static long transfers_posted;
/* Every transfer gets the next number as its StarPU-MPI tag; all ranks count the same
 * transfers in the same order, so a send and its receive carry the same tag. Data of a
 * group of ranks (tq_task_options.ranks) is counted apart, per group size: the groups of
 * a split grid submit different work, and every rank of one group counts the same; each
 * count has tags of its own (BASE + size 2^34 + count), so a transfer of data over all
 * ranks afterwards still pairs up. */
enum { MAX_RANKS = 64 };
static int64_t transfer_seq[MAX_RANKS + 1];   /* [0]: data over every rank; [k]: groups of k */
#define TQ_TRANSFER_TAG_BASE ((int64_t)1 << 40)

void tq_task_set_ranks(int rank, int n)
{
    my_rank = rank;
    nranks = n;
    memset(transfer_seq, 0, sizeof transfer_seq);
}

void tq_task_get_ranks(int *rank, int *n)
{
    *rank = my_rank;
    *n = nranks;
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
/* The ranks that run a task with these options. */
static rank_set runners(const tq_task_options *opt)
{
    return opt->rank >= 0 ? (rank_set)1 << opt->rank : opt->ranks ? (rank_set)opt->ranks : every_rank();
}

void tq_task_data_written_on(starpu_data_handle_t h, int rank)
{
    if (nranks > 1) set_holders(h, (rank_set)1 << rank);
}

void tq_task_data_on_every_rank(starpu_data_handle_t h)
{
    if (nranks > 1) set_holders(h, every_rank());
}

#ifdef TQ_HAVE_MPI
static int note_received(starpu_data_handle_t h);
#endif

/* For a task run by the ranks in `run`: the transfers that bring each input to the ranks
 * running it that lack its latest value, from the lowest rank holding it. With post == 0
 * only says whether this rank takes part in one (1); with post == 1 posts them and records
 * the new holders (inputs: the receivers too; outputs: the ranks that run the task).
 * Returns 0, 1 or a StarPU error. */
#ifdef TQ_HAVE_MPI
/* A face transfer between ranks in the task log: what, the other rank, when posted. */
typedef struct logged_transfer {
    const char *what;
    int peer;
    double posted;
} logged_transfer;

static void transfer_done(void *p)
{
    logged_transfer *lt = p;
    tq_task_log_transfer(lt->what, lt->peer, lt->posted);
    free(lt);
}
#endif

static int exchange(rank_set run, rank_set group, const struct starpu_data_descr *d, int n, int post)
{
    const int k = group ? __builtin_popcountll(group) : 0;
    int64_t *seq = &transfer_seq[k > MAX_RANKS ? 0 : k];
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
            const int64_t tag = TQ_TRANSFER_TAG_BASE + ((int64_t)k << 34) + (*seq)++;
#ifdef TQ_HAVE_MPI
            int ret = 0;
            logged_transfer *lt = NULL;
            if ((my_rank == from || my_rank == r) && tq_task_log_on() && (lt = malloc(sizeof *lt)))
                *lt = (logged_transfer){my_rank == from ? "mpi_send" : "mpi_recv", my_rank == from ? r : from,
                                        tq_task_log_now()};
            void (*done)(void *) = lt ? transfer_done : NULL;
            /* a waiting chain that touches the handle stays as it is (tq_task_note_access) */
            if (my_rank == from || my_rank == r) tq_task_note_access(d[i].handle, my_rank == from ? STARPU_R : STARPU_W);
            if (my_rank == from) ret = starpu_mpi_isend_detached(d[i].handle, r, tag, MPI_COMM_WORLD, done, lt);
            else if (my_rank == r) {
                ret = starpu_mpi_irecv_detached(d[i].handle, from, tag, MPI_COMM_WORLD, done, lt);
                if (ret) free(lt);   /* posted, the callback frees it */
                else ret = note_received(d[i].handle);
            } else free(lt);
            if (my_rank == from && ret) free(lt);
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

/* ---- chains ----------------------------------------------------------------------------
 * Between tq_task_chain_begin and tq_task_chain_end the tasks are recorded, then split into
 * runs of one owner (where, worker) each, and every run goes as one tq_cl_chain task. A run
 * ends after a task whose output another owner reads or overwrites, and begins again at a
 * task that reads or overwrites another owner's output: a face or a reduction's partial
 * sums cross only between whole chain tasks, so a chain never waits in its middle for
 * another owner and no other owner waits for more than what it needs. A write after
 * another owner's read cuts only where the runs would otherwise wait on each other in a
 * cycle. The runs go to StarPU in a topological order of their conflicts (earliest first
 * task first), which keeps every two conflicting tasks in their recorded order, so
 * StarPU's sequential consistency gives the dependencies of one task per kernel. One
 * owner: one chain. tests/test_chain_order checks the order on random sequences. */

/* One chain task being built: its entries (codelet, argument, buffers as indices into the
 * chain's handles) and the union of their handles with merged modes. */
typedef struct {
    struct starpu_codelet *cl;
    void *arg;
    size_t asize;
    int nbuf, first;   /* its buffers: map[first .. first + nbuf - 1] */
    int priority;      /* the recorded task's: a GPU runs the higher ones of a group first */
    int part, read_part;   /* the recorded task's tq_task_options.part and read_part */
    int flags;         /* tq_chain_op.flags */
} chain_entry;

typedef struct {
    int ntasks, cap_tasks;
    chain_entry *task;
    int nmap, cap_map, cap_writes;
    int16_t *map;
    uint8_t *writes;   /* per map entry: 1 when that entry writes the buffer (W, RW), 2 a scratch */
    int nh, cap_h;
    struct starpu_data_descr *h;
    int priority;
    tq_where where;
    int worker;
} chain_builder;

/* A recorded task: its own argument copy, its buffers in rec.buf[first .. first + nbuf - 1]. */
typedef struct {
    struct starpu_codelet *cl;
    void *arg;
    size_t asize;
    int nbuf, first, priority, worker, part, read_part;
    tq_where where;
    int alone;   /* goes as a task of its own (too many buffers, or placed by the scheduler) */
    int flags;   /* tq_chain_op.flags (tq_task_overlap) */
} recorded_task;

/* A face to send on once the run holding its writer (a recorded task) is submitted. */
typedef struct {
    starpu_data_handle_t h;
    int node, writer;
} recorded_prefetch;

/* A handle the chain tasks of one owner hold without an entry touching it (tq_task_hold). */
typedef struct {
    starpu_data_handle_t h;
    tq_where where;
    int worker;
} recorded_hold;

static _Thread_local struct {
    int depth, off;   /* off: TQ_CHAIN=0 when the outermost chain began (tasks go alone) */
    int overlap;      /* tq_task_overlap */
    int ntasks, cap_tasks;
    recorded_task *task;
    int nbuf, cap_buf;
    struct starpu_data_descr *buf;
    int npf, cap_pf;
    recorded_prefetch *pf;
    int nhold, cap_hold;
    recorded_hold *hold;
    /* handles received from another rank since the last flush: a recorded task that reads
     * one starts a new run, so the transfer never holds up the recorded work before it */
    int nrecv, cap_recv;
    starpu_data_handle_t *recv;
    chain_builder b;
} rec;

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

static void builder_clear(chain_builder *c)
{
    for (int i = 0; i < c->ntasks; i++) free(c->task[i].arg);
    c->ntasks = c->nmap = c->nh = 0;
    c->priority = STARPU_MIN_PRIO;
}

void tq_task_thread_finish(void)
{
    builder_clear(&rec.b);
    for (int i = 0; i < rec.ntasks; i++) free(rec.task[i].arg);
    free(rec.task);
    free(rec.buf);
    free(rec.pf);
    free(rec.hold);
    free(rec.recv);
    free(rec.b.task);
    free(rec.b.map);
    free(rec.b.writes);
    free(rec.b.h);
    memset(&rec, 0, sizeof rec);
}

/* Per worker, the handle that orders its tasks when it is sequenced (tq_task_sequence_worker). */
static starpu_data_handle_t sequencer[STARPU_NMAXWORKERS];
static int sequencer_value[STARPU_NMAXWORKERS];

int tq_task_sequence_worker(int worker)
{
    if (worker < 0 || worker >= STARPU_NMAXWORKERS) return -EINVAL;
    if (!sequencer[worker])
        starpu_variable_data_register(&sequencer[worker], STARPU_MAIN_RAM, (uintptr_t)&sequencer_value[worker],
                                      sizeof sequencer_value[worker]);
    return 0;
}

void tq_task_sequencers_release(void)
{
    release_pending_chains();
    for (int w = 0; w < STARPU_NMAXWORKERS; w++)
        if (sequencer[w]) {
            starpu_data_unregister_no_coherency(sequencer[w]);
            sequencer[w] = NULL;
        }
}

static starpu_data_handle_t sequencer_of(int worker)
{
    return worker >= 0 && worker < STARPU_NMAXWORKERS ? sequencer[worker] : NULL;
}

static long chains_submitted;
long tq_internal_chains_submitted(void) { return __atomic_load_n(&chains_submitted, __ATOMIC_RELAXED); }

static long tasks_submitted;
long tq_internal_tasks_submitted(void) { return __atomic_load_n(&tasks_submitted, __ATOMIC_RELAXED); }

/* The built entries as one chain segment (codelets/chain.h), their buffers renumbered by
 * remap (NULL: as built); *size its bytes. NULL when out of memory. */
static tq_chain_head *builder_segment(const chain_builder *c, const int16_t *remap, size_t *size)
{
    const size_t align = 16;
    size_t sz = sizeof(tq_chain_head) + (size_t)c->ntasks * sizeof(tq_chain_op) + (size_t)c->nmap * sizeof(int16_t)
                + (size_t)c->nmap;
    sz = (sz + align - 1) / align * align;
    const size_t args_at = sz;
    for (int i = 0; i < c->ntasks; i++) sz += (c->task[i].asize + align - 1) / align * align;
    char *blob = calloc(1, sz);
    if (!blob) return NULL;
    tq_chain_head *h = (tq_chain_head *)blob;
    tq_chain_op *op = (tq_chain_op *)(h + 1);
    int16_t *map = (int16_t *)(op + c->ntasks);
    h->nops = c->ntasks;
    h->nmap = c->nmap;
    for (int i = 0; i < c->nmap; i++) map[i] = remap ? remap[c->map[i]] : c->map[i];
    memcpy(map + c->nmap, c->writes, (size_t)c->nmap);
    size_t at = args_at;
    for (int i = 0; i < c->ntasks; i++) {
        const chain_entry *t = &c->task[i];
        op[i].cl = t->cl;
        op[i].nbuf = (uint16_t)t->nbuf;
        op[i].map_offset = (uint16_t)t->first;
        op[i].priority = t->priority;
        op[i].part = (uint8_t)t->part;
        op[i].read_part = (uint8_t)t->read_part;
        op[i].flags = (uint8_t)t->flags;
        op[i].arg_offset = t->asize ? (uint32_t)at : 0;
        if (t->asize) memcpy(blob + at, t->arg, t->asize);
        at += (t->asize + align - 1) / align * align;
    }
    *size = sz;
    return h;
}

/* Appends the built entries to their owner's waiting chain task, where it still waits and
 * holds every buffer they use in a mode that covers theirs: 1 (appended), 0 (not), or
 * -ENOMEM. */
static int builder_join_pending(const chain_builder *c)
{
    int16_t *remap = malloc((size_t)(c->nh ? c->nh : 1) * sizeof *remap);
    if (!remap) return -ENOMEM;
    int ret = 0;
    pthread_mutex_lock(&pending_lock);
    pending_chain *p = NULL;
    for (int k = 0; k < npending && !p; k++)
        if (pending[k]->where == c->where && pending[k]->worker == c->worker) p = pending[k];
    int fits = p && !p->closed;
    for (int i = 0; i < c->nh && fits; i++) {
        const pending_buffer *b = pending_find(p, c->h[i].handle);
        /* a held buffer's value is not there: only a run that writes it first fits */
        fits = b && (b->held ? c->h[i].mode == STARPU_W : merged_mode(b->mode, (int)c->h[i].mode) == b->mode);
        if (fits) remap[i] = b->index;
    }
    size_t size = 0;
    tq_chain_head *seg = fits ? builder_segment(c, remap, &size) : NULL;
    segments_owner *o = NULL;
    if (seg && p->tail == p->task->cl_arg && !(o = malloc(sizeof *o))) {
        free(seg);
        seg = NULL;
    }
    if (fits && !seg) ret = -ENOMEM;
    if (seg) {
        if (o) {   /* the first segment appended: the task frees them once it has run */
            *o = (segments_owner){p->task->callback_func, p->task->callback_arg, p->task->cl_arg};
            p->task->callback_func = free_segments;
            p->task->callback_arg = o;
        }
        p->tail->next = seg;
        p->tail = seg;
        for (int i = 0; i < c->nh; i++) ((pending_buffer *)pending_find(p, c->h[i].handle))->held = 0;   /* written now */
        /* StarPU reads the priority when it schedules the task, after the prologue */
        if (c->priority > p->task->priority) p->task->priority = c->priority;
        __atomic_add_fetch(&chains_extended, 1, __ATOMIC_RELAXED);
        ret = 1;
    }
    pthread_mutex_unlock(&pending_lock);
    free(remap);
    return ret;
}

/* Submits the built entries: appended to their owner's waiting chain task where they can
 * be, else alone when there is one, else as one tq_cl_chain task. */
static int builder_submit(chain_builder *c)
{
    int ret = 0;
    const int joinable = c->ntasks && chain_extend_on();
    if (joinable && (ret = builder_join_pending(c))) {
        builder_clear(c);
        return ret < 0 ? ret : 0;
    }
    /* a sequenced worker's tasks always go as chain tasks holding its sequencer */
    const starpu_data_handle_t seq = c->ntasks ? sequencer_of(c->worker) : NULL;
    if (seq) {
        if (grow((void **)&c->h, &c->cap_h, c->nh + 1, sizeof *c->h)) {
            builder_clear(c);
            return -ENOMEM;
        }
        c->h[c->nh].handle = seq;
        c->h[c->nh].mode = STARPU_RW;   /* no entry's map points here */
    }
    int nheld = 0;   /* after the sequencer: the owner's held handles its entries do not use */
    for (int k = 0; k < rec.nhold && c->ntasks > 1; k++) {
        const recorded_hold *hd = &rec.hold[k];
        int present = hd->where != c->where || hd->worker != c->worker || hd->h == seq;
        for (int i = 0; i < c->nh + (seq != NULL) + nheld && !present; i++) present = c->h[i].handle == hd->h;
        if (present) continue;
        const int at = c->nh + (seq != NULL) + nheld;
        if (grow((void **)&c->h, &c->cap_h, at + 1, sizeof *c->h)) {
            builder_clear(c);
            return -ENOMEM;
        }
        c->h[at].handle = hd->h;
        c->h[at].mode = STARPU_W;   /* its value is not needed (nor made: StarPU fetches nothing) */
        nheld++;
    }
    if (c->ntasks == 1 && !seq) {
        chain_entry *t = &c->task[0];
        struct starpu_data_descr d[TQ_CHAIN_MAX_OP_BUFFERS];
        for (int j = 0; j < t->nbuf; j++) d[j] = c->h[c->map[t->first + j]];
        ret = submit_task(t->cl, t->arg, t->asize, 1, d, t->nbuf, c->priority, c->where, c->worker, NULL);
        t->arg = NULL;   /* the task owns it (or freed it) */
    } else if (c->ntasks >= 1) {
        size_t size = 0;
        tq_chain_head *blob = builder_segment(c, NULL, &size);
        if (!blob) {
            ret = -ENOMEM;
        } else {
            const int nh = c->nh + (seq != NULL) + nheld;
            pending_chain *p = joinable ? pending_new(c->h, nh, nh - nheld, c->where, c->worker) : NULL;
            ret = submit_task(&tq_cl_chain, blob, size, 1, c->h, nh, c->priority, c->where, c->worker, p);
            /* counted: chains of several tasks (a sequenced task alone is one only for its sequencer) */
            if (!ret && c->ntasks > 1) __atomic_fetch_add(&chains_submitted, 1, __ATOMIC_RELAXED);
        }
    }
    builder_clear(c);
    return ret;
}

/* Adds recorded task t to the chain being built, which takes its argument; 1 when it cannot
 * join this chain (submit the chain, then try again), or a negative error. */
static int builder_add(chain_builder *c, recorded_task *t)
{
    const struct starpu_data_descr *d = rec.buf + t->first;
    const int n = t->nbuf;
    if (c->ntasks && (t->where != c->where || t->worker != c->worker)) return 1;
    int idx[TQ_CHAIN_MAX_OP_BUFFERS], mode[TQ_CHAIN_MAX_OP_BUFFERS], nh = c->nh;
    /* where each buffer goes, checked before anything changes */
    for (int i = 0; i < n; i++) {
        /* the mode so far: an earlier buffer of this task on the same handle, or the chain's */
        int prev = -1;
        for (int j = 0; j < i; j++)
            if (d[j].handle == d[i].handle) prev = j;
        idx[i] = prev >= 0 ? idx[prev] : -1;
        for (int j = 0; idx[i] < 0 && j < c->nh; j++)
            if (c->h[j].handle == d[i].handle) idx[i] = j;
        if (idx[i] < 0) { idx[i] = nh++; mode[i] = d[i].mode; continue; }
        mode[i] = merged_mode(prev >= 0 ? mode[prev] : (int)c->h[idx[i]].mode, d[i].mode);
        if (mode[i] < 0) return 1;
    }
    if (nh > INT16_MAX || c->nmap + n > UINT16_MAX) return 1;
    if (grow((void **)&c->task, &c->cap_tasks, c->ntasks + 1, sizeof *c->task) ||
        grow((void **)&c->map, &c->cap_map, c->nmap + n, sizeof *c->map) ||
        grow((void **)&c->writes, &c->cap_writes, c->nmap + n, sizeof *c->writes) ||
        grow((void **)&c->h, &c->cap_h, nh, sizeof *c->h))
        return -ENOMEM;
    for (int i = 0; i < n; i++) {
        if (idx[i] >= c->nh) { c->h[idx[i]].handle = d[i].handle; c->nh = idx[i] + 1; }
        c->h[idx[i]].mode = (enum starpu_data_access_mode)mode[i];
        c->map[c->nmap + i] = (int16_t)idx[i];
        c->writes[c->nmap + i] = d[i].mode == STARPU_SCRATCH ? TQ_CHAIN_WRITES_SCRATCH : (d[i].mode & STARPU_W) ? 1 : 0;
    }
    c->task[c->ntasks++] = (chain_entry){t->cl, t->arg, t->asize, n, c->nmap, t->priority, t->part, t->read_part, t->flags};
    t->arg = NULL;
    c->nmap += n;
    if (c->ntasks == 1 || t->priority > c->priority) c->priority = t->priority;
    c->where = t->where;
    c->worker = t->worker;
    return 0;
}

/* An acquire in submission order that releases as soon as the value is on its node. */
typedef struct { starpu_data_handle_t h; int node; } prefetched;
static void release_prefetched(void *arg)
{
    prefetched *p = arg;
    starpu_data_release_on_node(p->h, p->node);
    free(p);
}

static int prefetch_now(starpu_data_handle_t h, int node)
{
    prefetched *p = malloc(sizeof *p);
    if (!p) return -ENOMEM;
    p->h = h;
    p->node = node;
    tq_task_note_access(h, STARPU_R);
    const int ret = starpu_data_acquire_on_node_cb(h, node, STARPU_R, release_prefetched, p);
    if (ret) free(p);
    return ret;
}

static void record_clear(void)
{
    for (int i = 0; i < rec.ntasks; i++) free(rec.task[i].arg);
    rec.ntasks = rec.nbuf = rec.npf = rec.nrecv = rec.nhold = 0;
}

#ifdef TQ_HAVE_MPI   /* a rank's receives (transfers between ranks) */
static int note_received(starpu_data_handle_t h)
{
    if (rec.depth <= 0 || rec.off) return 0;
    if (grow((void **)&rec.recv, &rec.cap_recv, rec.nrecv + 1, sizeof *rec.recv)) return -ENOMEM;
    rec.recv[rec.nrecv++] = h;
    return 0;
}
#endif

static int reads_received(const struct starpu_data_descr *d, int n)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < rec.nrecv && (d[i].mode & STARPU_R); j++)
            if (d[i].handle == rec.recv[j]) return 1;
    return 0;
}

typedef struct { starpu_data_handle_t h; int buf; } handle_at;
static int by_handle(const void *a, const void *b)
{
    const uintptr_t x = (uintptr_t)((const handle_at *)a)->h, y = (uintptr_t)((const handle_at *)b)->h;
    return x < y ? -1 : x > y;
}

enum { CUT_BEFORE = 1, CUT_AFTER = 2 };

/* A cross-owner conflict between recorded tasks u < v, and whether it is a write after a
 * read (v overwrites what u read). */
typedef struct { int u, v, war; } conflict;

/* The conflicts between tasks of different owners (for a handle: its last writer against a
 * later reader or writer; a writer against each other owner's last reader since the last
 * write), and the cuts they ask for: a task whose output another owner reads or overwrites
 * ends its run, and the task that needs it begins one, so that neither waits for more of
 * the other's work than it needs. A write after a read cuts nothing here (record_flush
 * cuts there only if the runs would otherwise wait on each other in a cycle). owner[],
 * hid[] (a handle number per recorded buffer) given; cut[] zeroed; *out (to free) and *nout
 * the conflicts. Returns 0 or -ENOMEM. */
static int mark_cuts(const int *owner, int nown, const int *hid, int nhandles, uint8_t *cut, conflict **out, int *nout)
{
    int *last_writer = malloc((size_t)nhandles * sizeof *last_writer);
    int *last_reader = malloc((size_t)nhandles * (size_t)nown * sizeof *last_reader);   /* since the last write */
    int ncf = 0, cap = 0;
    conflict *cf = NULL;
    int ret = last_writer && last_reader ? 0 : -ENOMEM;
    for (int i = 0; !ret && i < nhandles; i++) last_writer[i] = -1;
    for (int i = 0; !ret && i < nhandles * nown; i++) last_reader[i] = -1;
    for (int v = 0; !ret && v < rec.ntasks; v++) {
        const recorded_task *t = &rec.task[v];
        const int o = owner[v];
        if (t->alone) cut[v] |= CUT_BEFORE | CUT_AFTER;
        for (int j = 0; !ret && j < t->nbuf; j++) {
            const int m = rec.buf[t->first + j].mode, id = hid[t->first + j];
            if (m == STARPU_SCRATCH) continue;   /* a worker's private buffer: no dependency */
            for (int p = -1; !ret && p < nown; p++) {
                /* p = -1: the last writer (read or write after write); else owner p's last reader
                 * (write after read) */
                const int u = p < 0 ? last_writer[id] : (m & STARPU_W) && p != o ? last_reader[id * nown + p] : -1;
                if (u < 0 || u == v || owner[u] == o) continue;
                if (p < 0) cut[u] |= CUT_AFTER, cut[v] |= CUT_BEFORE;
                if (grow((void **)&cf, &cap, ncf + 1, sizeof *cf)) ret = -ENOMEM;
                else cf[ncf++] = (conflict){u, v, p >= 0};
            }
        }
        for (int j = 0; j < t->nbuf; j++) {
            const int m = rec.buf[t->first + j].mode, id = hid[t->first + j];
            if (m == STARPU_SCRATCH) continue;
            if (m & STARPU_W) {
                last_writer[id] = v;
                for (int p = 0; p < nown; p++) last_reader[id * nown + p] = -1;
            } else if (last_writer[id] != v) {
                last_reader[id * nown + o] = v;
            }
        }
    }
    free(last_writer);
    free(last_reader);
    if (ret) free(cf), cf = NULL, ncf = 0;
    *out = cf;
    *nout = ncf;
    return ret;
}

/* Runs from the cuts: seg[v] the run of task v, runs numbered in the order of their first
 * task; returns their number. open[]: nown ints of scratch. */
static int form_runs(const int *owner, int nown, const uint8_t *cut, int *seg, int *open)
{
    int nseg = 0;
    for (int o = 0; o < nown; o++) open[o] = -1;
    for (int v = 0; v < rec.ntasks; v++) {
        const int o = owner[v];
        if ((cut[v] & CUT_BEFORE) || open[o] < 0) open[o] = nseg++;
        seg[v] = open[o];
        if (cut[v] & CUT_AFTER) open[o] = -1;
    }
    return nseg;
}

/* An order of the runs in which every conflict's earlier task's run comes first (and an
 * owner's runs in their order), the earliest-starting run first where there is a choice;
 * 0, or 1 when there is none (the runs wait on each other in a cycle: done[] then marks the
 * runs ordered before it got stuck), or -ENOMEM. */
static int order_runs(const int *owner, int nown, const int *seg, int nseg, const conflict *cf, int ncf, int *run_order,
                      uint8_t *done)
{
    int *indeg = calloc((size_t)nseg, sizeof *indeg), *last = malloc((size_t)nown * sizeof *last);
    int *from = malloc(((size_t)ncf + (size_t)rec.ntasks + 1) * sizeof *from);
    int *to = malloc(((size_t)ncf + (size_t)rec.ntasks + 1) * sizeof *to);
    int ret = indeg && last && from && to ? 0 : -ENOMEM, ne = 0;
    memset(done, 0, (size_t)nseg);
    if (!ret) {
        for (int o = 0; o < nown; o++) last[o] = -1;
        for (int v = 0; v < rec.ntasks; v++) {   /* an owner's runs in order */
            const int o = owner[v];
            if (last[o] >= 0 && last[o] != seg[v]) from[ne] = last[o], to[ne++] = seg[v];
            last[o] = seg[v];
        }
        for (int i = 0; i < ncf; i++)
            if (seg[cf[i].u] != seg[cf[i].v]) from[ne] = seg[cf[i].u], to[ne++] = seg[cf[i].v];
        for (int e = 0; e < ne; e++) indeg[to[e]]++;
        for (int k = 0; k < nseg && !ret; k++) {
            int s = 0;
            while (s < nseg && (done[s] || indeg[s])) s++;
            if (s == nseg) { ret = 1; break; }
            done[s] = 1;
            run_order[k] = s;
            for (int e = 0; e < ne; e++)
                if (from[e] == s) indeg[to[e]]--;
        }
    }
    free(indeg); free(last); free(from); free(to);
    return ret;
}

/* Submits what was recorded: the runs (chain tasks) in an order that keeps every two
 * conflicting tasks in their recorded order, each face prefetch right after the run that
 * writes the face. */
static int record_flush_ordered(void);
static int record_flush(void)
{
    if (!rec.ntasks) return 0;
    order_lock();
    const int ret = record_flush_ordered();
    order_unlock();
    return ret;
}

static int record_flush_ordered(void)
{
    const int n = rec.ntasks;
    if (!n) return 0;
    int ret = -ENOMEM, nown = 0, nhandles = 0, nseg = 0, ncf = 0;
    conflict *cf = NULL;
    int *owner = malloc((size_t)n * sizeof *owner), *seg = malloc((size_t)n * sizeof *seg);
    int *key_worker = malloc((size_t)n * sizeof *key_worker), *open = malloc((size_t)n * sizeof *open);
    int *first_of = malloc(((size_t)n + 1) * sizeof *first_of), *order = malloc((size_t)n * sizeof *order);
    int *run_order = malloc((size_t)n * sizeof *run_order);
    uint8_t *run_done = malloc((size_t)n);
    tq_where *key_where = malloc((size_t)n * sizeof *key_where);
    uint8_t *cut = calloc((size_t)n, 1);
    int *hid = malloc(((size_t)rec.nbuf + 1) * sizeof *hid);
    handle_at *ha = malloc(((size_t)rec.nbuf + 1) * sizeof *ha);
    if (!owner || !seg || !key_worker || !open || !first_of || !order || !run_order || !run_done || !key_where || !cut || !hid ||
        !ha)
        goto out;
    /* owners numbered as met */
    for (int v = 0; v < n; v++) {
        const recorded_task *t = &rec.task[v];
        int o = 0;
        while (o < nown && (key_where[o] != t->where || key_worker[o] != t->worker)) o++;
        if (o == nown) key_where[nown] = t->where, key_worker[nown++] = t->worker;
        owner[v] = o;
    }
    /* handles numbered */
    for (int i = 0; i < rec.nbuf; i++) ha[i] = (handle_at){rec.buf[i].handle, i};
    qsort(ha, (size_t)rec.nbuf, sizeof *ha, by_handle);
    for (int i = 0; i < rec.nbuf; i++) {
        if (i && ha[i].h != ha[i - 1].h) nhandles++;
        hid[ha[i].buf] = nhandles;
    }
    nhandles++;
    if ((ret = mark_cuts(owner, nown, hid, nhandles, cut, &cf, &ncf))) goto out;
    nseg = form_runs(owner, nown, cut, seg, open);
    ret = order_runs(owner, nown, seg, nseg, cf, ncf, run_order, run_done);
    /* where the runs would wait on each other in a cycle, a write after another owner's read
     * that lies on it begins a run; at worst every one does, and then every conflict
     * leads into the first task of a run, which the order of the runs' first tasks keeps */
    while (ret == 1) {
        int added = 0;
        for (int i = 0; i < ncf; i++)
            if (cf[i].war && !(cut[cf[i].v] & CUT_BEFORE) && run_done[seg[cf[i].u]] == 0 && run_done[seg[cf[i].v]] == 0)
                cut[cf[i].v] |= CUT_BEFORE, added++;
        if (!added)
            for (int i = 0; i < ncf; i++)
                if (cf[i].war) cut[cf[i].v] |= CUT_BEFORE;
        nseg = form_runs(owner, nown, cut, seg, open);
        ret = order_runs(owner, nown, seg, nseg, cf, ncf, run_order, run_done);
        if (!added && ret == 1) {
            for (int s = 0; s < nseg; s++) run_order[s] = s;
            ret = 0;
        }
    }
    if (ret) goto out;
    /* each run's tasks in recorded order */
    for (int s = 0; s <= nseg; s++) first_of[s] = 0;
    for (int v = 0; v < n; v++) first_of[seg[v] + 1]++;
    for (int s = 0; s < nseg; s++) first_of[s + 1] += first_of[s];
    for (int v = 0; v < n; v++) order[first_of[seg[v]]++] = v;
    for (int s = nseg; s > 0; s--) first_of[s] = first_of[s - 1];
    first_of[0] = 0;
    static int trace = -1;   /* TQ_CHAIN_TRACE=1: each flush's runs on stderr, for debugging */
    if (trace < 0) trace = getenv("TQ_CHAIN_TRACE") && getenv("TQ_CHAIN_TRACE")[0] == '1';
    if (trace) {
        fprintf(stderr, "flush %d tasks, %d owners, %d runs:", n, nown, nseg);
        for (int k = 0; k < nseg; k++) {
            const int s = run_order[k];
            fprintf(stderr, " [w%d", rec.task[order[first_of[s]]].worker);
            for (int i = first_of[s]; i < first_of[s + 1]; i++) fprintf(stderr, " %s", rec.task[order[i]].cl->name);
            fprintf(stderr, "]");
        }
        fprintf(stderr, "\n");
    }
    for (int k = 0; k < nseg && !ret; k++) {
        const int s = run_order[k];
        for (int i = first_of[s]; i < first_of[s + 1] && !ret; i++) {
            recorded_task *t = &rec.task[order[i]];
            if (t->alone) {
                ret = submit_task(t->cl, t->arg, t->asize, 1, rec.buf + t->first, t->nbuf, t->priority, t->where, t->worker, NULL);
                t->arg = NULL;
                continue;
            }
            int add = builder_add(&rec.b, t);
            if (add == 1) {   /* it cannot share the chain's buffers: the chain so far goes first */
                ret = builder_submit(&rec.b);
                if (!ret) add = builder_add(&rec.b, t);
            }
            if (add < 0) ret = add;
            else if (add > 0 && !ret) ret = -EINVAL;
        }
        if (!ret) ret = builder_submit(&rec.b);
        for (int p = 0; p < rec.npf && !ret; p++)
            if (seg[rec.pf[p].writer] == s) ret = prefetch_now(rec.pf[p].h, rec.pf[p].node);
    }
out:
    builder_clear(&rec.b);
    record_clear();
    free(owner); free(seg); free(key_worker); free(open); free(first_of); free(order); free(run_order); free(run_done);
    free(key_where); free(cut); free(hid); free(ha); free(cf);
    return ret;
}

static int record_task(const tq_task_options *opt, struct starpu_codelet *cl, const void *arg, size_t asize,
                       const struct starpu_data_descr *d, int n, int priority, int alone)
{
    if (grow((void **)&rec.task, &rec.cap_tasks, rec.ntasks + 1, sizeof *rec.task) ||
        grow((void **)&rec.buf, &rec.cap_buf, rec.nbuf + n, sizeof *rec.buf))
        return -ENOMEM;
    void *copy = NULL;
    if (asize) {
        copy = malloc(asize);
        if (!copy) return -ENOMEM;
        memcpy(copy, arg, asize);
    }
    memcpy(rec.buf + rec.nbuf, d, (size_t)n * sizeof *d);
    rec.task[rec.ntasks++] = (recorded_task){cl, copy, asize, n, rec.nbuf, priority, opt->worker, opt->part, opt->read_part,
                                                 opt->where, alone, rec.overlap ? TQ_CHAIN_OP_OVERLAP : 0};
    rec.nbuf += n;
    return 0;
}

void tq_task_chain_begin(void)
{
    if (rec.depth++ == 0) {
        const char *env = getenv("TQ_CHAIN");
        rec.off = env && env[0] == '0';
    }
}

int tq_task_chain_end(void)
{
    if (rec.depth <= 0) return -EINVAL;
    return --rec.depth || rec.off ? 0 : record_flush();
}

int tq_task_overlap(int on)
{
    const int was = rec.overlap;
    rec.overlap = on;
    return was;
}

int tq_task_hold(const tq_task_options *opt, starpu_data_handle_t h)
{
    /* owned blocks of this rank only: a run without an owner may hold other blocks' data */
    if (rec.depth <= 0 || rec.off || !h || opt->worker < 0 || (opt->rank >= 0 && opt->rank != my_rank)) return 0;
    for (int k = 0; k < rec.nhold; k++)
        if (rec.hold[k].h == h && rec.hold[k].where == opt->where && rec.hold[k].worker == opt->worker) return 0;
    if (grow((void **)&rec.hold, &rec.cap_hold, rec.nhold + 1, sizeof *rec.hold)) return -ENOMEM;
    rec.hold[rec.nhold++] = (recorded_hold){h, opt->where, opt->worker};
    return 0;
}

int tq_task_transfer(const tq_task_options *opt, starpu_data_handle_t h)
{
    if (nranks <= 1) return 0;
    const rank_set run = runners(opt);
    const struct starpu_data_descr d = {h, STARPU_R};
    int ret = exchange(run, opt->ranks, &d, 1, 0);
    /* what this rank has recorded goes first: the send waits for the face's writer alone,
     * not for a chain that also holds later work */
    if (ret > 0 && rec.depth > 0 && !rec.off) ret = record_flush();
    if (ret >= 0) ret = exchange(run, opt->ranks, &d, 1, 1);
    return ret < 0 ? ret : 0;
}

int tq_task_prefetch(const tq_task_options *opt, starpu_data_handle_t h)
{
    if (nranks > 1 && opt->rank >= 0 && opt->rank != my_rank) return 0;
    /* the reader's memory: its owner's, or the one GPU's where only it may run the reader
     * (a rank driving one GPU: its blocks have no owner) */
    int worker = opt->worker;
    if (worker < 0 && opt->where == TQ_WHERE_CUDA && starpu_cuda_worker_get_count() == 1)
        starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, &worker, 1);
    if (worker < 0) return 0;
    const int node = (int)starpu_worker_get_memory_node((unsigned)worker);
    if (rec.depth > 0 && !rec.off) {
        /* the recorded task that writes h last: the prefetch follows its run */
        for (int v = rec.ntasks - 1; v >= 0; v--) {
            const recorded_task *t = &rec.task[v];
            for (int j = 0; j < t->nbuf; j++)
                if (rec.buf[t->first + j].handle == h && (rec.buf[t->first + j].mode & STARPU_W)) {
                    if (grow((void **)&rec.pf, &rec.cap_pf, rec.npf + 1, sizeof *rec.pf)) return -ENOMEM;
                    rec.pf[rec.npf++] = (recorded_prefetch){h, node, v};
                    return 0;
                }
        }
    }
    return prefetch_now(h, node);
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
    const int recording = rec.depth > 0 && !rec.off;
    if (nranks > 1) {
        const rank_set run = runners(opt);
        int involved = exchange(run, opt->ranks, d, n, 0);
        /* what this rank has recorded must be submitted before a transfer reads or
         * overwrites its data */
        if (involved > 0 && recording) {
            int ret = record_flush();
            if (ret) return ret;
        }
        int ret = exchange(run, opt->ranks, d, n, 1);
        if (ret < 0) return ret;
        if (!(run >> my_rank & 1)) return 0;   /* another rank runs it */
        if (recording && reads_received(d, n) && (ret = record_flush())) return ret;
    }
    priority += opt->priority;
    if (priority > STARPU_MAX_PRIO) priority = STARPU_MAX_PRIO;
    if (priority < STARPU_MIN_PRIO) priority = STARPU_MIN_PRIO;
    __atomic_add_fetch(&tasks_submitted, 1, __ATOMIC_RELAXED);
    if (tq_task_graph_on()) tq_task_graph_add(cl, arg, asize, opt->worker, w, priority, d, n);
    if (recording)
        return record_task(opt, cl, arg, asize, d, n, priority, n > TQ_CHAIN_MAX_OP_BUFFERS || floats_across_kinds(opt));
    if (sequencer_of(opt->worker) && n <= TQ_CHAIN_MAX_OP_BUFFERS) {
        /* a sequenced worker's task alone (no chain open, or TQ_CHAIN=0: nothing is
         * recorded then): as a chain of one holding the sequencer (builder_submit) */
        int ret = record_task(opt, cl, arg, asize, d, n, priority, 0);
        return ret ? ret : record_flush();
    }
    return submit_task(cl, (void *)arg, asize, 0, d, n, priority, w, opt->worker, NULL);
}
