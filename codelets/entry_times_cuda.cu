/* GPU time of each chain entry into the performance models (entry_times.h). */
#include "config.h"
#include "entry_times.h"

#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

/* Long enough for the host to queue any entry's kernels (a few launches of 5-10 us each)
 * before the entry's start event fires. */
#define ENTRY_SPIN_NS 100000ull

__global__ void entry_spin_kernel(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(1000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

typedef struct {
    cudaEvent_t start, end;
    struct starpu_codelet *cl;
    void *arg;
    int nbuf;
    starpu_data_handle_t h[TQ_CHAIN_MAX_OP_BUFFERS];
} entry_record;

static thread_local entry_record *records;
static thread_local int nrecords, nmade, capacity;

extern "C" int tq_entry_times_on(void)
{
    static int on = -1;
    if (on < 0) {
        const char *env = getenv("TQ_ENTRY_TIMES");
        on = env && env[0] == '1';
    }
    return on;
}

/* The next record, its events made once and reused; NULL when out of memory. */
static entry_record *next_record(void)
{
    if (nrecords == capacity) {
        int cap = capacity ? 2 * capacity : 64;
        entry_record *r = (entry_record *)realloc(records, (size_t)cap * sizeof *r);
        if (!r) return NULL;
        records = r;
        capacity = cap;
    }
    entry_record *r = &records[nrecords];
    if (nrecords == nmade) {
        if (cudaEventCreate(&r->start) != cudaSuccess) return NULL;
        if (cudaEventCreate(&r->end) != cudaSuccess) {
            cudaEventDestroy(r->start);
            return NULL;
        }
        nmade++;
    }
    return r;
}

extern "C" void tq_entry_times_begin(void)
{
    entry_record *r = next_record();
    if (!r) return;
    cudaStream_t s = starpu_cuda_get_local_stream();
    entry_spin_kernel<<<1, 1, 0, s>>>(ENTRY_SPIN_NS);
    cudaEventRecord(r->start, s);
}

extern "C" void tq_entry_times_end(const tq_chain_op *op, const int16_t *map, void *arg)
{
    if (nrecords == capacity || nrecords == nmade) return;   /* begin found no room */
    entry_record *r = &records[nrecords];
    cudaEventRecord(r->end, starpu_cuda_get_local_stream());
    struct starpu_task *chain = starpu_task_get_current();
    if (!chain || !op->cl->model || op->nbuf > TQ_CHAIN_MAX_OP_BUFFERS) return;
    r->cl = op->cl;
    r->arg = arg;
    r->nbuf = op->nbuf;
    for (int j = 0; j < op->nbuf; j++) r->h[j] = STARPU_TASK_GET_HANDLE(chain, map[op->map_offset + j]);
    nrecords++;
}

/* One entry's time into its codelet's model, under the footprint of a task of that codelet
 * over the same handles with the same argument. */
static void record(const entry_record *r, struct starpu_perfmodel_arch *arch, int worker)
{
    float ms = 0;
    if (cudaEventElapsedTime(&ms, r->start, r->end) != cudaSuccess) return;
    struct starpu_task t;
    starpu_task_init(&t);
    t.cl = r->cl;
    t.cl_arg = r->arg;
    t.nbuffers = r->nbuf;
    if (r->nbuf > STARPU_NMAXBUFS) {
        t.dyn_handles = (starpu_data_handle_t *)malloc((size_t)r->nbuf * sizeof *t.dyn_handles);
        if (!t.dyn_handles) return;
    }
    for (int j = 0; j < r->nbuf; j++) STARPU_TASK_SET_HANDLE(&t, r->h[j], j);
    starpu_perfmodel_update_history(r->cl->model, &t, arch, (unsigned)worker, 0, 1000.0 * ms);   /* us */
    starpu_task_clean(&t);
}

extern "C" void tq_entry_times_flush(void)
{
    if (!nrecords) return;
    cudaStreamSynchronize(starpu_cuda_get_local_stream());
    const int worker = starpu_worker_get_id();
    struct starpu_perfmodel_arch *arch = starpu_worker_get_perf_archtype(worker, STARPU_NMAX_SCHED_CTXS);
    for (int i = 0; i < nrecords; i++) {
        const enum starpu_perfmodel_type type = records[i].cl->model->type;
        if (type == STARPU_HISTORY_BASED || type == STARPU_REGRESSION_BASED || type == STARPU_NL_REGRESSION_BASED)
            record(&records[i], arch, worker);
    }
    nrecords = 0;
}
