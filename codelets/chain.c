/* The chain codelet (chain.h). Each entry is another codelet's CPU or CUDA implementation,
 * called with its own buffers picked out of the chain task's and its own argument. The
 * CUDA entries are asynchronous on the worker's stream, so they run back to back; the one
 * StarPU task-to-task gap (completion detection, dependency release, scheduling, launch:
 * about 15 µs on an H200) is paid once per chain instead of once per entry, and not even
 * once per chain where later runs joined a chain task that still waited (its segments,
 * chain.h; tasks/submit.c). Independent
 * entries in a row (the blocks of one operation on one GPU) run on several streams at
 * once: a block's kernel alone fills the GPU poorly (32^4 in 4 blocks: 1024 thread blocks
 * each, less than a wave of an H200, and each kernel's tail idles it). */
#include "config.h"
#include "chain.h"
#include "tq_codelets.h"
#ifdef TQ_HAVE_CUDA
#include "entry_times.h"
#endif

#include <stdlib.h>
#include <string.h>

static const tq_chain_op *chain_ops(const void *cl_arg)
{
    return (const tq_chain_op *)((const tq_chain_head *)cl_arg + 1);
}

static void run_entry(const tq_chain_op *op, const int16_t *map, void *buffers[], void *cl_arg, int on_cuda)
{
    void *sub[TQ_CHAIN_MAX_OP_BUFFERS];
    for (int j = 0; j < op->nbuf; j++) sub[j] = buffers[map[op->map_offset + j]];
    void *arg = op->arg_offset ? (char *)cl_arg + op->arg_offset : NULL;
#ifdef TQ_HAVE_CUDA
    if (on_cuda) {
        op->cl->cuda_funcs[0](sub, arg);
        return;
    }
#endif
    (void)on_cuda;
    op->cl->cpu_funcs[0](sub, arg);
}

#ifdef TQ_HAVE_CUDA
/* Side streams of this CUDA worker (its thread), made at its first chain that needs them:
 * entries of a group after the first run there, forked from the worker's stream and
 * joined back to it with events at the chain task's end, so the chain stays one ordered
 * piece of the worker's stream for StarPU; in between, an entry waits with an event for
 * each stream that holds an earlier entry it conflicts with, up to that entry's group's end
 * there (TQ_CHAIN_JOIN=1: for every entry of the groups before, as until 2026-11-30). The
 * segments of a chain task (runs that joined it while it waited: one operator application
 * each, say) follow each other without a join, so that an application starts as soon as
 * what it conflicts with of the one before is done, not when all of it is
 * (TQ_CHAIN_OPEN=0: a join at each segment's end, as until 2026-11-30). The urgent stream
 * has the GPU's highest priority: a group's packs go there, so that their few thread
 * blocks are not queued behind an interior kernel's waves while another GPU waits for the
 * face they write. */
enum { SIDE_STREAMS = 7 };
/* The streams an entry may go to, by number: the worker's, the side streams, the urgent one. */
enum { STREAM_MAIN = 0, STREAM_URGENT = SIDE_STREAMS + 1 };
/* Overlapping entries (TQ_CHAIN_OP_OVERLAP) go to streams of two priorities: those that
 * depend on work of their own segment (the second hop) to the middle ones, those that do
 * not (the next application's first hop) to the lowest, so that the latter take the SMs
 * the former leave idle rather than delay them (TQ_CHAIN_TIERS=0: one tier, the worker's
 * and the side streams). */
enum { MID_STREAMS = 3, LOW_STREAMS = 2, STREAM_MID = STREAM_URGENT + 1, STREAM_LOW = STREAM_MID + MID_STREAMS,
       NSTREAMS = STREAM_LOW + LOW_STREAMS };
/* Marks: events recorded at a group's end on each stream it used, a ring. Between two
 * joins at most MARKS - NSTREAMS are recorded (a join comes first), so a mark an entry
 * since the last join refers to is never recorded again before that entry's readers wait
 * for it. Segments stay open until OPEN_WINDOW entries since the last join (then the
 * segment's end joins): the scan for conflicting entries stays short. */
enum { MARKS = 256, OPEN_WINDOW = 96 };
static _Thread_local struct {
    int made;
    cudaStream_t s[SIDE_STREAMS], urgent, mid[MID_STREAMS], low[LOW_STREAMS];
    cudaEvent_t fork;          /* the worker's stream at the start of the last group that forked */
    cudaEvent_t mark[MARKS];
    int next_mark;
} side;
static _Thread_local int join_groups;           /* TQ_CHAIN_JOIN=1: every group waits for all before it (comparisons) */
static _Thread_local int open_segments;         /* TQ_CHAIN_OPEN=0: 0, a join at each segment's end (comparisons) */
static _Thread_local int overlap_entries;       /* TQ_CHAIN_OVERLAP=0: 0, TQ_CHAIN_OP_OVERLAP ignored (comparisons) */
static _Thread_local int tiers;                 /* TQ_CHAIN_TIERS=0: 0, overlapping entries in one tier (comparisons) */
static _Thread_local cudaStream_t stream_now;   /* tq_cuda_stream(): NULL, the worker's */
static _Thread_local int parts_apart;           /* TQ_CHAIN_PARTS=0: 0, every part conflicts (comparisons) */
static _Thread_local int lead_first;            /* TQ_CHAIN_LEAD=0: 0, every urgent entry launched first (comparisons) */

cudaStream_t tq_cuda_stream(void) { return stream_now ? stream_now : starpu_cuda_get_local_stream(); }

static int env_is(const char *name, char c)
{
    const char *v = getenv(name);
    return v && v[0] == c;
}

static int side_streams(void)
{
    if (side.made) return side.made > 0;
    side.made = -1;
    if (env_is("TQ_CHAIN_STREAMS", '0')) return 0;   /* one stream, for comparisons */
    parts_apart = !env_is("TQ_CHAIN_PARTS", '0');
    lead_first = !env_is("TQ_CHAIN_LEAD", '0');
    join_groups = env_is("TQ_CHAIN_JOIN", '1');
    open_segments = !env_is("TQ_CHAIN_OPEN", '0');
    overlap_entries = !env_is("TQ_CHAIN_OVERLAP", '0');
    int least = 0, greatest = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) return 0;
    if (env_is("TQ_URGENT_STREAM", '0')) greatest = least;   /* packs at normal priority, for comparisons */
    if (cudaStreamCreateWithPriority(&side.urgent, cudaStreamNonBlocking, greatest) != cudaSuccess)
        return 0;
    for (int k = 0; k < SIDE_STREAMS; k++)
        if (cudaStreamCreateWithFlags(&side.s[k], cudaStreamNonBlocking) != cudaSuccess) return 0;
    tiers = !env_is("TQ_CHAIN_TIERS", '0');
    const int mid_priority = greatest < least ? least - 1 : least;
    for (int k = 0; k < MID_STREAMS; k++)
        if (cudaStreamCreateWithPriority(&side.mid[k], cudaStreamNonBlocking, mid_priority) != cudaSuccess) return 0;
    for (int k = 0; k < LOW_STREAMS; k++)
        if (cudaStreamCreateWithPriority(&side.low[k], cudaStreamNonBlocking, least) != cudaSuccess) return 0;
    if (cudaEventCreateWithFlags(&side.fork, cudaEventDisableTiming) != cudaSuccess) return 0;
    for (int k = 0; k < MARKS; k++)
        if (cudaEventCreateWithFlags(&side.mark[k], cudaEventDisableTiming) != cudaSuccess) return 0;
    side.made = 1;
    return 1;
}

/* An entry with its segment's buffer map and write flags (entries of different segments
 * of one chain task share the task's buffer numbers). */
typedef struct {
    const tq_chain_op *op;
    const int16_t *map;
    const uint8_t *writes;
} entry_ref;

/* Whether two parts of a block's sites (tq_task_part bits, 0: all) share a site. */
static int parts_meet(int p, int q) { return !p || !q || (p & q) != 0; }

/* Whether entry b touches a buffer entry a writes, or writes one a touches, at a site both
 * touch: an entry writes a buffer only in its part (and reads there only that part), and
 * reads the others only in its read part. A scratch has no parts: two entries using it (a
 * block's interior and exterior reductions) always conflict. */
static int entries_conflict(const entry_ref *a, const entry_ref *b, int apart)
{
    for (int i = 0; i < a->op->nbuf; i++)
        for (int j = 0; j < b->op->nbuf; j++) {
            if (a->map[a->op->map_offset + i] != b->map[b->op->map_offset + j]) continue;
            const int wa = a->writes[a->op->map_offset + i], wb = b->writes[b->op->map_offset + j];
            if (wa == TQ_CHAIN_WRITES_SCRATCH || wb == TQ_CHAIN_WRITES_SCRATCH) return 1;
            if (!wa && !wb) continue;
            if (!apart || parts_meet(wa ? a->op->part : a->op->read_part, wb ? b->op->part : b->op->read_part)) return 1;
        }
    return 0;
}

/* Where a chain task's entries went since the last join (the worker's stream waiting for
 * every other): an entry waits only for the streams that hold an earlier group's entry it
 * conflicts with, up to that group's end there, so a group's entries start as soon as what
 * they need is done (the second hop's deep band right after the first hop's interior,
 * beside its exterior; the next application's first hop right after the second hop's
 * interior, beside its exterior), not when the whole group before ends. Entries are
 * numbered over the task's segments. */
typedef struct {
    entry_ref *ref;   /* per entry */
    int8_t *on;       /* its stream; valid from `since` on */
    int16_t *mark;    /* the mark recorded at its group's end on its stream */
    int n;            /* entries so far */
    int since;        /* the first entry after the last join */
    int marks;        /* marks recorded since the last join */
    unsigned used;    /* the other streams holding entries since then (bits) */
    int last[NSTREAMS];   /* each stream's latest mark */
    int main_new;     /* the worker's stream got work since side.fork was recorded */
    int tail[NSTREAMS];   /* the last entry on each stream */
    int seg_start;    /* the first entry of the segment being launched */
} launches;

static cudaStream_t stream_of(int k)
{
    return k == STREAM_MAIN ? starpu_cuda_get_local_stream() : k == STREAM_URGENT ? side.urgent
         : k >= STREAM_LOW ? side.low[k - STREAM_LOW] : k >= STREAM_MID ? side.mid[k - STREAM_MID] : side.s[k - 1];
}

/* The worker's stream waits for the others' work so far (the entries from `next` on start
 * from there). */
static void join_all(launches *L, int next)
{
    cudaStream_t main_stream = starpu_cuda_get_local_stream();
    for (int k = 1; k < NSTREAMS; k++)
        if (L->used >> k & 1) cudaStreamWaitEvent(main_stream, side.mark[L->last[k]], 0);
    L->used = 0;
    L->since = next;
    L->marks = 0;
    L->main_new = 1;
}

/* Entry i (of the group from `first`) on stream k, after waiting there for the worker's
 * stream (the stream's first use since the join: the fork) and for each other stream that
 * holds an entry of an earlier group it conflicts with (up to the latest such entry's
 * group's end there). */
static void launch_on(int i, int first, int k, launches *L, unsigned *group, void *buffers[], void *cl_arg)
{
    cudaStream_t st = stream_of(k);
    unsigned waited = 1u << k;
    if (k != STREAM_MAIN && !((L->used | *group) >> k & 1)) {
        cudaStreamWaitEvent(st, side.fork, 0);
        waited |= 1u << STREAM_MAIN;
    }
    for (int j = first - 1; j >= L->since && ((L->used | 1u << STREAM_MAIN) & ~waited); j--) {
        const int kj = L->on[j];
        if ((waited >> kj & 1) || !entries_conflict(&L->ref[j], &L->ref[i], parts_apart)) continue;
        cudaStreamWaitEvent(st, side.mark[L->mark[j]], 0);
        waited |= 1u << kj;
    }
    stream_now = k == STREAM_MAIN ? NULL : st;
    run_entry(L->ref[i].op, L->ref[i].map, buffers, cl_arg, 1);
    stream_now = NULL;
    L->on[i] = (int8_t)k;
    L->tail[k] = i;
    *group |= 1u << k;
    if (k == STREAM_MAIN) L->main_new = 1;
}

/* The stream of a long entry marked TQ_CHAIN_OP_OVERLAP (tiered: among the middle streams
 * if it conflicts with an entry of its own segment, else among the low ones; otherwise the
 * worker's and the side streams): that of the latest earlier entry it conflicts with
 * (outside the urgent stream), where the stream's order is the dependency, unless this
 * group (`taken`) already uses that stream, something was queued there after it or it is
 * not among them; else the free one used least recently, so that independent work (the
 * next M_pc application, with its intermediate by turns) runs beside the work before it
 * instead of queueing behind it. */
static int long_stream(const launches *L, int i, int first, unsigned taken, int tiered)
{
    int lo = STREAM_MAIN, hi = SIDE_STREAMS;   /* the streams to choose from */
    if (tiered) lo = STREAM_LOW, hi = STREAM_LOW + LOW_STREAMS - 1;
    for (int j = first - 1; j >= L->since; j--) {
        const int kj = L->on[j];
        if (kj == STREAM_URGENT || !entries_conflict(&L->ref[j], &L->ref[i], parts_apart)) continue;
        if (tiered && j >= L->seg_start) lo = STREAM_MID, hi = STREAM_MID + MID_STREAMS - 1;   /* depends on its own segment */
        if (!(taken >> kj & 1) && L->tail[kj] == j && kj >= lo && kj <= hi) return kj;   /* nothing queued after it there */
        break;
    }
    int best = -1;   /* the free stream used least recently */
    for (int k = lo; k <= hi; k++)
        if (!(taken >> k & 1) && (best < 0 || L->tail[k] < L->tail[best])) best = k;
    return best < 0 ? lo : best;
}

/* Entries first .. end-1 (of one segment, argument cl_arg), independent of each other,
 * side by side: those of a priority above the group's lowest one after the other on the
 * urgent stream; of the others the first on the worker's stream, the rest on side
 * streams. Each waits only for what it conflicts with (launch_on). Launched in this order:
 * the urgent entries of the first entry's codelet, if it is urgent (a hop's packs, which
 * other GPUs wait for), the others, then the rest of the urgent ones (the exteriors,
 * queued behind waits for other GPUs): launched before the interior kernel, their launches
 * and stream waits held its start back by 15-20 us per hop on two H200s
 * (doc/performance.md). The entries of a group are independent of each other, and the
 * urgent stream keeps them in recorded order within each kind; a kind launched earlier
 * only signals sooner (peer mode: doc/design.md). Making the long entries also wait for
 * the lead ones to end was slower (32^4 M_pc on two H200s 0.171-0.180 ms against 0.158): a
 * pack may wait for another GPU, and the interior then with it. */
static void run_group(int first, int end, void *buffers[], void *cl_arg, launches *L)
{
    if (L->marks + NSTREAMS > MARKS - NSTREAMS) join_all(L, first);   /* the ring's marks since the join stay distinct */
    const entry_ref *r = L->ref;
    int lowest = r[first].op->priority, nurgent = 0;
    for (int i = first + 1; i < end; i++)
        if (r[i].op->priority < lowest) lowest = r[i].op->priority;
    for (int i = first; i < end; i++) nurgent += r[i].op->priority > lowest;
    unsigned group = 0;
    /* entries on other streams wait for the worker's stream up to here, at most (the
     * fork, and the earlier groups' entries there they conflict with) */
    if ((end - first > 1 || nurgent) && L->main_new) {
        cudaEventRecord(side.fork, starpu_cuda_get_local_stream());
        L->main_new = 0;
    }
    /* the lead kind: that of the urgent entries recorded before the group's first long one
     * (a hop's packs); none where a long one comes first (after an exterior that packed
     * the next hop's faces ahead, that hop's group is its interior and exterior) */
    const struct starpu_codelet *lead = NULL;
    for (int i = first; i < end && !lead && r[i].op->priority > lowest; i++) lead = r[i].op->cl;
    for (int i = first; i < end && nurgent; i++)
        if (r[i].op->priority > lowest && (!lead_first || r[i].op->cl == lead))
            launch_on(i, first, STREAM_URGENT, L, &group, buffers, cl_arg);
    for (int i = first, k = 0; i < end; i++) {
        if (r[i].op->priority > lowest) continue;
        int to = k == 0 ? STREAM_MAIN : 1 + (k - 1) % SIDE_STREAMS;
        if (overlap_entries && (r[i].op->flags & TQ_CHAIN_OP_OVERLAP)) to = long_stream(L, i, first, group, tiers);
        else if (group >> to & 1) to = long_stream(L, i, first, group, 0);   /* taken by one that did */
        launch_on(i, first, to, L, &group, buffers, cl_arg);
        k++;
    }
    for (int i = first; i < end && nurgent && lead_first; i++)
        if (r[i].op->priority > lowest && r[i].op->cl != lead)
            launch_on(i, first, STREAM_URGENT, L, &group, buffers, cl_arg);
    for (int k = 0; k < NSTREAMS; k++) {
        if (!(group >> k & 1)) continue;
        const int m = side.next_mark;
        side.next_mark = (m + 1) % MARKS;
        cudaEventRecord(side.mark[m], stream_of(k));
        L->last[k] = m;
        L->marks++;
        for (int i = first; i < end; i++)
            if (L->on[i] == k) L->mark[i] = (int16_t)m;
    }
    L->used |= group & ~(1u << STREAM_MAIN);
    if (join_groups) join_all(L, end);
}

/* One segment's entries on a GPU, in order, independent neighbours side by side (L: the
 * chain task's launches so far; NULL: one by one on the worker's stream). */
static void run_segment_cuda(void *buffers[], void *seg, launches *L)
{
    const tq_chain_head *h = (const tq_chain_head *)seg;
    const tq_chain_op *op = chain_ops(seg);
    const int16_t *map = (const int16_t *)(op + h->nops);
    const uint8_t *writes = (const uint8_t *)(map + h->nmap);
    const int timed = tq_entry_times_on();   /* entries one by one, each timed */
    const int base = L ? L->n : 0;
    if (L) L->seg_start = base;
    if (L)
        for (int i = 0; i < h->nops; i++) L->ref[base + i] = (entry_ref){&op[i], map, writes};
    for (int i = 0; i < h->nops;) {
        /* the longest run of asynchronous entries from i that are independent of each
         * other (a block's kernels beside the other blocks' of the same operation) */
        int end = i + 1;
        const int async = (op[i].cl->cuda_flags[0] & STARPU_CUDA_ASYNC) != 0;
        while (L && async && end < h->nops && (op[end].cl->cuda_flags[0] & STARPU_CUDA_ASYNC)) {
            int free_of = 1;
            for (int j = i; j < end && free_of; j++)
                free_of = !entries_conflict(&L->ref[base + j], &L->ref[base + end], parts_apart);
            if (!free_of) break;
            end++;
        }
        if (L && async) {
            run_group(base + i, base + end, buffers, seg, L);
            L->n = base + end;
        } else if (timed) {
            tq_entry_times_begin();
            run_entry(&op[i], map, buffers, seg, 1);
            tq_entry_times_end(&op[i], map, op[i].arg_offset ? (char *)seg + op[i].arg_offset : NULL);
            if (!async) cudaStreamSynchronize(starpu_cuda_get_local_stream());
        } else {
            if (L) join_all(L, base + i);   /* it sees everything before it */
            run_entry(&op[i], map, buffers, seg, 1);
            if (L) {   /* and everything after it sees it: on the worker's stream, untracked */
                L->n = base + end;
                L->since = L->n;
                L->main_new = 1;
            }
            /* an entry StarPU would have synchronised after: the same here */
            if (!async) cudaStreamSynchronize(starpu_cuda_get_local_stream());
        }
        i = end;
    }
}

static void run_chain_cuda(void *buffers[], void *cl_arg)
{
    static _Thread_local entry_ref *ref;
    static _Thread_local int8_t *on;
    static _Thread_local int16_t *mark;
    static _Thread_local int cap;
    int total = 0;
    for (tq_chain_head *seg = cl_arg; seg; seg = seg->next) total += seg->nops;
    const int groups = !tq_entry_times_on() && side_streams();
    if (groups && total > cap) {
        entry_ref *r = realloc(ref, (size_t)total * sizeof *r);
        if (r) ref = r;
        int8_t *o = r ? realloc(on, (size_t)total) : NULL;
        if (o) on = o;
        int16_t *m = o ? realloc(mark, (size_t)total * sizeof *m) : NULL;
        if (m) { mark = m; cap = total; }
    }
    launches L = {ref, on, mark, 0, 0, 0, 0, {0}, 1, {0}, 0};
    for (int k = 0; k < NSTREAMS; k++) L.tail[k] = -1;
    launches *tracked = groups && total <= cap ? &L : NULL;   /* else one by one on the worker's stream */
    for (tq_chain_head *seg = cl_arg; seg; seg = seg->next) {
        run_segment_cuda(buffers, seg, tracked);
        if (tracked && (!open_segments || L.n - L.since > OPEN_WINDOW)) join_all(tracked, L.n);
    }
    if (tracked) join_all(tracked, L.n);
}
#endif

static void run_chain(void *buffers[], void *cl_arg, int on_cuda)
{
#ifdef TQ_HAVE_CUDA
    if (on_cuda) {
        run_chain_cuda(buffers, cl_arg);
        return;
    }
#endif
    (void)on_cuda;
    for (tq_chain_head *seg = cl_arg; seg; seg = seg->next) {
        const tq_chain_op *op = chain_ops(seg);
        for (int i = 0; i < seg->nops; i++) run_entry(&op[i], (const int16_t *)(op + seg->nops), buffers, seg, 0);
    }
}

static void chain_cpu(void *buffers[], void *cl_arg) { run_chain(buffers, cl_arg, 0); }
#ifdef TQ_HAVE_CUDA
static void chain_cuda(void *buffers[], void *cl_arg)
{
    run_chain(buffers, cl_arg, 1);
    if (tq_entry_times_on()) tq_entry_times_flush();
}
#endif

/* History models key on the entries' codelet names as well as the data sizes: two
 * different chains over same-sized data are different tasks. */
static uint32_t chain_footprint(struct starpu_task *task)
{
    uint32_t crc = tq_footprint_bytes(task);
    for (const tq_chain_head *h = task->cl_arg; h; h = h->next) {
        const tq_chain_op *op = chain_ops(h);
        for (int i = 0; i < h->nops; i++) crc = starpu_hash_crc32c_string(op[i].cl->name ? op[i].cl->name : "?", crc);
    }
    return crc;
}

static struct starpu_perfmodel chain_model = {
    .type = STARPU_HISTORY_BASED, .symbol = "tq_chain_v1", .footprint = chain_footprint,
};

struct starpu_codelet tq_cl_chain = {
    .cpu_funcs = {chain_cpu},
    .cpu_funcs_name = {"chain_cpu"},
    TQ_CUDA_IMPL(chain_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &chain_model,
    .name = "tq_chain",
};
