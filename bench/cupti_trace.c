/* A GPU timeline without Nsight Systems (the GPU machine has none): a library that CUDA
 * loads into any program through CUDA_INJECTION64_PATH and that records, with CUPTI's
 * activity API, every kernel, memory copy and memset (device, stream, start, end, name) and
 * every runtime API call (thread, start, end, name), kernels and calls with CUPTI's
 * correlation id (a kernel's and its launch call's are equal), then writes them as a table to the
 * file named by TQ_CUPTI_TRACE (default cupti-trace.tsv) when the process exits.
 * bench/gpu-timeline.py summarises it (per-GPU busy time and idle gaps, kernel durations).
 * Times are CUPTI's: nanoseconds on one clock for every GPU and the host.
 * Built by `make -C build bench` where CUPTI is found (Makefile.am); used by
 * bench/latency-probe.sh. */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { BUFFER_BYTES = 2 << 20, ALIGN = 8 };

static FILE *trace;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    *size = BUFFER_BYTES;
    *buffer = aligned_alloc(ALIGN, BUFFER_BYTES);
    *max_records = 0;
}

static const char *api_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
    const char *name = NULL;
    if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS || !name) return "?";
    return name;
}

static void write_record(const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)r;
        fprintf(trace, "kernel\t%u\t%u\t%llu\t%llu\t%s\t%d\t%u\n", k->deviceId, k->streamId, (unsigned long long)k->start,
                (unsigned long long)k->end, k->name ? k->name : "?", k->gridX * k->gridY * k->gridZ, k->correlationId);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)r;
        fprintf(trace, "memcpy\t%u\t%u\t%llu\t%llu\tcopy%u\t%llu\n", m->deviceId, m->streamId,
                (unsigned long long)m->start, (unsigned long long)m->end, (unsigned)m->copyKind,
                (unsigned long long)m->bytes);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)r;
        fprintf(trace, "memcpy\t%u\t%u\t%llu\t%llu\tpeer%u\t%llu\n", m->deviceId, m->streamId,
                (unsigned long long)m->start, (unsigned long long)m->end, m->dstDeviceId, (unsigned long long)m->bytes);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)r;
        fprintf(trace, "memset\t%u\t%u\t%llu\t%llu\tmemset\t%llu\n", m->deviceId, m->streamId,
                (unsigned long long)m->start, (unsigned long long)m->end, (unsigned long long)m->bytes);
        break;
    }
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER: {
        const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)r;
        const CUpti_CallbackDomain dom =
            r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API;
        fprintf(trace, "%s\t-\t%u\t%llu\t%llu\t%s\t0\t%u\n", r->kind == CUPTI_ACTIVITY_KIND_RUNTIME ? "runtime" : "driver",
                a->threadId, (unsigned long long)a->start, (unsigned long long)a->end, api_name(dom, a->cbid), a->correlationId);
        break;
    }
    default: break;
    }
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
    (void)ctx;
    (void)stream;
    (void)size;
    CUpti_Activity *r = NULL;
    while (trace && cuptiActivityGetNextRecord(buffer, valid, &r) == CUPTI_SUCCESS) write_record(r);
    free(buffer);
}

/* At exit the last buffers are flushed; a 1-GPU propagator run once waited there for ever
 * (after its solves, trace empty), so an alarm ends a flush that hangs, and buffers go to
 * the file every 200 ms anyway. */
static void finish(void)
{
    alarm(10);
    cuptiActivityFlushPeriod(0);
    cuptiActivityFlushAll(1);
    FILE *t = trace;
    trace = NULL;
    if (t) fclose(t);
}

/* Called by CUDA when it loads this library (CUDA_INJECTION64_PATH). */
int InitializeInjection(void)
{
    const char *path = getenv("TQ_CUPTI_TRACE");
    trace = fopen(path && *path ? path : "cupti-trace.tsv", "w");
    if (!trace) return 0;
    fprintf(trace, "kind\tdevice\tstream\tstart\tend\tname\textra\tcorrelation\n");
    if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return 0;
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityFlushPeriod(200);
    const char *api = getenv("TQ_CUPTI_API");   /* 0: no API records (they are many); 2: the driver's too */
    if (!api || api[0] != '0') cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
    if (api && api[0] == '2') cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
    atexit(finish);
    return 1;
}
