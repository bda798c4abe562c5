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
 * entries of a group after the first run there, forked from and joined back to the
 * worker's stream with events, so the chain stays one ordered piece of the worker's stream
 * for StarPU. The urgent stream has the GPU's highest priority: a group's packs go there,
 * so that their few thread blocks are not queued behind an interior kernel's waves while
 * another GPU waits for the face they write. */
enum { SIDE_STREAMS = 7 };
static _Thread_local struct {
    int made;
    cudaStream_t s[SIDE_STREAMS], urgent;
    cudaEvent_t fork, join[SIDE_STREAMS], urgent_join;
} side;
static _Thread_local cudaStream_t stream_now;   /* tq_cuda_stream(): NULL, the worker's */
static _Thread_local int parts_apart;           /* TQ_CHAIN_PARTS=0: 0, every part conflicts (comparisons) */
static _Thread_local int lead_first;            /* TQ_CHAIN_LEAD=0: 0, every urgent entry launched first (comparisons) */

cudaStream_t tq_cuda_stream(void) { return stream_now ? stream_now : starpu_cuda_get_local_stream(); }

static int side_streams(void)
{
    if (side.made) return side.made > 0;
    side.made = -1;
    const char *env = getenv("TQ_CHAIN_STREAMS");   /* 0: one stream, for comparisons */
    if (env && env[0] == '0') return 0;
    const char *parts_env = getenv("TQ_CHAIN_PARTS");
    parts_apart = !(parts_env && parts_env[0] == '0');
    const char *lead_env = getenv("TQ_CHAIN_LEAD");
    lead_first = !(lead_env && lead_env[0] == '0');
    int least = 0, greatest = 0;
    if (cudaDeviceGetStreamPriorityRange(&least, &greatest) != cudaSuccess) return 0;
    const char *urgent_env = getenv("TQ_URGENT_STREAM");   /* 0: packs at normal priority, for comparisons */
    if (urgent_env && urgent_env[0] == '0') greatest = least;
    if (cudaEventCreateWithFlags(&side.fork, cudaEventDisableTiming) != cudaSuccess ||
        cudaEventCreateWithFlags(&side.urgent_join, cudaEventDisableTiming) != cudaSuccess ||
        cudaStreamCreateWithPriority(&side.urgent, cudaStreamNonBlocking, greatest) != cudaSuccess)
        return 0;
    for (int k = 0; k < SIDE_STREAMS; k++)
        if (cudaStreamCreateWithFlags(&side.s[k], cudaStreamNonBlocking) != cudaSuccess ||
            cudaEventCreateWithFlags(&side.join[k], cudaEventDisableTiming) != cudaSuccess)
            return 0;
    side.made = 1;
    return 1;
}

/* Whether entry b touches a buffer entry a writes, or writes one a touches, unless both
 * write it in different parts of its sites (and read there only what they write). A
 * scratch has no parts: two entries using it (a block's interior and exterior reductions)
 * always conflict. */
static int entries_conflict(const tq_chain_op *a, const tq_chain_op *b, const int16_t *map, const uint8_t *writes)
{
    const int apart = parts_apart && a->part && b->part && a->part != b->part;
    for (int i = 0; i < a->nbuf; i++)
        for (int j = 0; j < b->nbuf; j++) {
            if (map[a->map_offset + i] != map[b->map_offset + j]) continue;
            const int wa = writes[a->map_offset + i], wb = writes[b->map_offset + j];
            if (wa == TQ_CHAIN_WRITES_SCRATCH || wb == TQ_CHAIN_WRITES_SCRATCH) return 1;
            if ((wa || wb) && !(wa && wb && apart)) return 1;
        }
    return 0;
}

/* Entries first .. end-1 side by side, after what the worker's stream holds so far: those
 * of a priority above the group's lowest one after the other on the urgent stream; of the
 * others the first on the worker's stream, the rest on side streams. The worker's stream
 * then waits for them all. Launched in this order: the urgent entries of the first
 * entry's codelet, if it is urgent (a hop's packs, which other GPUs wait for), the others, then the rest of
 * the urgent ones (the exteriors, queued behind waits for other GPUs): launched before the
 * interior kernel, their launches and stream waits held its start back by 15-20 us per hop
 * on two H200s (doc/performance.md). The entries of a group are independent of each other,
 * and the urgent stream keeps them in recorded order within each kind; a kind launched
 * earlier only signals sooner (peer mode: doc/design.md). Making the long entries also
 * wait for the lead ones to end was slower (32^4 M_pc on two H200s 0.171-0.180 ms against
 * 0.158): a pack may wait for another GPU, and the interior then with it. */
static void run_group(const tq_chain_op *op, int first, int end, const int16_t *map, void *buffers[], void *cl_arg)
{
    cudaStream_t main_stream = starpu_cuda_get_local_stream();
    int lowest = op[first].priority, nurgent = 0;
    for (int i = first + 1; i < end; i++)
        if (op[i].priority < lowest) lowest = op[i].priority;
    for (int i = first; i < end; i++) nurgent += op[i].priority > lowest;
    const int nrest = end - first - nurgent;   /* at least one: the lowest */
    const int nside = nrest - 1 < SIDE_STREAMS ? nrest - 1 : SIDE_STREAMS;
    cudaEventRecord(side.fork, main_stream);
    if (nurgent) cudaStreamWaitEvent(side.urgent, side.fork, 0);
    for (int k = 0; k < nside; k++) cudaStreamWaitEvent(side.s[k], side.fork, 0);
    /* the lead kind: that of the urgent entries recorded before the group's first long one
     * (a hop's packs); none where a long one comes first (after an exterior that packed
     * the next hop's faces ahead, that hop's group is an interior and its exterior) */
    const struct starpu_codelet *lead = NULL;
    for (int i = first; i < end && !lead && op[i].priority > lowest; i++) lead = op[i].cl;
    stream_now = side.urgent;
    for (int i = first; i < end && nurgent; i++)
        if (op[i].priority > lowest && (!lead_first || op[i].cl == lead)) run_entry(&op[i], map, buffers, cl_arg, 1);
    for (int i = first, k = 0; i < end; i++) {
        if (op[i].priority > lowest) continue;
        stream_now = k == 0 ? NULL : side.s[(k - 1) % SIDE_STREAMS];
        run_entry(&op[i], map, buffers, cl_arg, 1);
        k++;
    }
    stream_now = side.urgent;
    for (int i = first; i < end && nurgent && lead_first; i++)
        if (op[i].priority > lowest && op[i].cl != lead) run_entry(&op[i], map, buffers, cl_arg, 1);
    stream_now = NULL;
    if (nurgent) {
        cudaEventRecord(side.urgent_join, side.urgent);
        cudaStreamWaitEvent(main_stream, side.urgent_join, 0);
    }
    for (int k = 0; k < nside; k++) {
        cudaEventRecord(side.join[k], side.s[k]);
        cudaStreamWaitEvent(main_stream, side.join[k], 0);
    }
}
#endif

/* One segment's entries, in order (on a GPU: independent neighbours side by side). */
static void run_segment(void *buffers[], void *seg, int on_cuda)
{
    const tq_chain_head *h = (const tq_chain_head *)seg;
    const tq_chain_op *op = chain_ops(seg);
    const int16_t *map = (const int16_t *)(op + h->nops);
#ifdef TQ_HAVE_CUDA
    if (on_cuda) {
        const uint8_t *writes = (const uint8_t *)(map + h->nmap);
        const int timed = tq_entry_times_on();   /* entries one by one, each timed */
        const int groups = !timed && side_streams();
        for (int i = 0; i < h->nops;) {
            /* the longest run of asynchronous entries from i that are independent of each
             * other (a block's kernels beside the other blocks' of the same operation) */
            int end = i + 1;
            const int async = (op[i].cl->cuda_flags[0] & STARPU_CUDA_ASYNC) != 0;
            while (groups && async && end < h->nops && (op[end].cl->cuda_flags[0] & STARPU_CUDA_ASYNC)) {
                int free_of = 1;
                for (int j = i; j < end && free_of; j++) free_of = !entries_conflict(&op[j], &op[end], map, writes);
                if (!free_of) break;
                end++;
            }
            if (end - i > 1) {
                run_group(op, i, end, map, buffers, seg);
            } else if (timed) {
                tq_entry_times_begin();
                run_entry(&op[i], map, buffers, seg, 1);
                tq_entry_times_end(&op[i], map, op[i].arg_offset ? (char *)seg + op[i].arg_offset : NULL);
                if (!async) cudaStreamSynchronize(starpu_cuda_get_local_stream());
            } else {
                run_entry(&op[i], map, buffers, seg, 1);
                /* an entry StarPU would have synchronised after: the same here */
                if (!async) cudaStreamSynchronize(starpu_cuda_get_local_stream());
            }
            i = end;
        }
        return;
    }
#endif
    (void)on_cuda;
    for (int i = 0; i < h->nops; i++) run_entry(&op[i], map, buffers, seg, 0);
}

static void run_chain(void *buffers[], void *cl_arg, int on_cuda)
{
    for (tq_chain_head *seg = cl_arg; seg; seg = seg->next) run_segment(buffers, seg, on_cuda);
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
