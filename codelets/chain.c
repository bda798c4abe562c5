/* The chain codelet (chain.h). Each entry is another codelet's CPU or CUDA implementation,
 * called with its own buffers picked out of the chain task's and its own argument. The
 * CUDA entries are asynchronous on the worker's stream, so they run back to back; the one
 * StarPU task-to-task gap (completion detection, dependency release, scheduling, launch:
 * about 15 µs on an H200) is paid once per chain instead of once per entry. */
#include "config.h"
#include "chain.h"
#include "tq_codelets.h"

#include <string.h>

static const tq_chain_op *chain_ops(const void *cl_arg)
{
    return (const tq_chain_op *)((const tq_chain_head *)cl_arg + 1);
}

static void run_chain(void *buffers[], void *cl_arg, int on_cuda)
{
    const tq_chain_head *h = (const tq_chain_head *)cl_arg;
    const tq_chain_op *op = chain_ops(cl_arg);
    const int16_t *map = (const int16_t *)(op + h->nops);
    void *sub[TQ_CHAIN_MAX_OP_BUFFERS];
    for (int i = 0; i < h->nops; i++) {
        for (int j = 0; j < op[i].nbuf; j++) sub[j] = buffers[map[op[i].map_offset + j]];
        void *arg = op[i].arg_offset ? (char *)cl_arg + op[i].arg_offset : NULL;
#ifdef TQ_HAVE_CUDA
        if (on_cuda) {
            op[i].cl->cuda_funcs[0](sub, arg);
            /* an entry StarPU would have synchronised after: the same here */
            if (!(op[i].cl->cuda_flags[0] & STARPU_CUDA_ASYNC)) cudaStreamSynchronize(starpu_cuda_get_local_stream());
            continue;
        }
#endif
        (void)on_cuda;
        op[i].cl->cpu_funcs[0](sub, arg);
    }
}

static void chain_cpu(void *buffers[], void *cl_arg) { run_chain(buffers, cl_arg, 0); }
#ifdef TQ_HAVE_CUDA
static void chain_cuda(void *buffers[], void *cl_arg) { run_chain(buffers, cl_arg, 1); }
#endif

/* History models key on the entries' codelet names as well as the data sizes: two
 * different chains over same-sized data are different tasks. */
static uint32_t chain_footprint(struct starpu_task *task)
{
    const tq_chain_head *h = (const tq_chain_head *)task->cl_arg;
    const tq_chain_op *op = chain_ops(task->cl_arg);
    uint32_t crc = tq_footprint_bytes(task);
    for (int i = 0; i < h->nops; i++) crc = starpu_hash_crc32c_string(op[i].cl->name ? op[i].cl->name : "?", crc);
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
