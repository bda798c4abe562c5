/* Peer faces (face_sync.h): the stream memory operations that order them, peer access,
 * and their device memory. The driver's cuStreamWaitValue32 / cuStreamWriteValue32 are
 * looked up through the runtime (no link against libcuda): a value wait holds the stream
 * on the GPU, not the worker's thread, and unlike an event it does not matter which
 * thread enqueued its writer first. */
#include "config.h"
#include "tq_codelets.h"
#include "face_sync.h"

#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

typedef CUresult (*stream_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
typedef CUresult (*stream_batch_fn)(CUstream, unsigned int, CUstreamBatchMemOpParams *, unsigned int);
static stream_value_fn wait_value32, write_value32;
static stream_batch_fn batch_memop;   /* NULL: one call per operation */
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

static void find_memops(void)
{
    void *w = NULL, *s = NULL, *b = NULL;
    cudaDriverEntryPointQueryResult q1, q2, q3;
    /* the waits and signals of a task in one driver call (TQ_MEMOP_BATCH=0: one call each,
     * for comparisons): each call costs the worker's thread microseconds, and at 32^4 on
     * two GPUs the host's launches, not the GPUs, set the pace (doc/performance.md) */
    const char *env = getenv("TQ_MEMOP_BATCH");
    if (!(env && env[0] == '0') &&
        cudaGetDriverEntryPointByVersion("cuStreamBatchMemOp", &b, 12000, cudaEnableDefault, &q3) == cudaSuccess &&
        q3 == cudaDriverEntryPointSuccess)
        batch_memop = (stream_batch_fn)b;
    if (cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &w, 12000, cudaEnableDefault, &q1) == cudaSuccess &&
        cudaGetDriverEntryPointByVersion("cuStreamWriteValue32", &s, 12000, cudaEnableDefault, &q2) == cudaSuccess &&
        q1 == cudaDriverEntryPointSuccess && q2 == cudaDriverEntryPointSuccess && w && s) {
        wait_value32 = (stream_value_fn)w;
        write_value32 = (stream_value_fn)s;
    }
    cudaGetLastError();
}

static void report(CUresult r)
{
    if (r != CUDA_SUCCESS) STARPU_CUDA_REPORT_ERROR((cudaError_t)r);
}

/* Where a codelet's signals go: a stream of their own beside the codelet's stream, after
 * an event at the point of the codelet's stream where they were asked for, so that the
 * other GPU hears as soon as the data is there and what follows on the codelet's stream (a
 * chain's next entries and joins) does not queue behind the write and its fence (32^4 M_pc
 * on two H200: 0.119-0.121 ms against 0.125-0.127; doc/performance.md). One signal stream
 * per codelet stream: signals from different streams must not queue behind each other (one
 * stream for all of a worker's hung the staggered multi-shift solve on two GPUs: a signal
 * waited behind one whose kernel waited for the other GPU, which waited for the first). The
 * event orders the write after the kernel, whose memory writes it then covers. A counter
 * written from two codelet streams (a face set's, two applications apart) is still
 * written in order: the later writer's task first waits for the reader's answer to the
 * earlier write (face_sync.h: a pack waits for `consumed`, which the reader raises only
 * after it saw `ready`), so the earlier write has landed before the later one is made.
 * TQ_SIGNAL_APART=0: on the codelet's stream (comparisons); so too past SIGNAL_STREAMS
 * codelet streams on one worker. */
enum { SIGNAL_STREAMS = 16 };
static CUstream signal_stream(CUstream stream)
{
    static thread_local int state;   /* 0 not yet known, 1 apart, -1 on the codelet's stream */
    static thread_local int n;
    static thread_local struct { CUstream of; cudaStream_t apart; cudaEvent_t at; } pair[SIGNAL_STREAMS];
    if (!state) {
        const char *env = getenv("TQ_SIGNAL_APART");
        state = env && env[0] == '0' ? -1 : 1;
    }
    if (state < 0) return stream;
    int k = 0;
    while (k < n && pair[k].of != stream) k++;
    if (k == n) {
        if (n == SIGNAL_STREAMS) return stream;
        if (cudaStreamCreateWithFlags(&pair[k].apart, cudaStreamNonBlocking) != cudaSuccess) return stream;
        if (cudaEventCreateWithFlags(&pair[k].at, cudaEventDisableTiming) != cudaSuccess) {
            cudaStreamDestroy(pair[k].apart);
            return stream;
        }
        pair[k].of = stream;
        n++;
    }
    cudaEventRecord(pair[k].at, (cudaStream_t)stream);
    cudaStreamWaitEvent(pair[k].apart, pair[k].at, 0);
    return (CUstream)pair[k].apart;
}

/* The memory operations ops[0..n) on the calling codelet's stream (signals alone: on
 * signal_stream's), in order: one batch. */
static void memops(CUstreamBatchMemOpParams *ops, unsigned n)
{
    if (!n) return;
    CUstream stream = (CUstream)tq_cuda_stream();
    int writes = 1;
    for (unsigned i = 0; i < n; i++) writes &= ops[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_32;
    if (writes) stream = signal_stream(stream);
    if (batch_memop && n > 1) {
        report(batch_memop(stream, n, ops, 0));
        return;
    }
    for (unsigned i = 0; i < n; i++)
        if (ops[i].operation == CU_STREAM_MEM_OP_WAIT_VALUE_32)
            report(wait_value32(stream, ops[i].waitValue.address, ops[i].waitValue.value, ops[i].waitValue.flags));
        else
            report(write_value32(stream, ops[i].writeValue.address, ops[i].writeValue.value, ops[i].writeValue.flags));
}

/* One wait (signal 0) or write (1) of value at counter c, as ops[*n]. */
static void add_memop(uint32_t *c, uint32_t value, int signal, CUstreamBatchMemOpParams *ops, unsigned *n)
{
    /* a write comes after a memory fence: the data it announces is there first */
    CUstreamBatchMemOpParams *op = &ops[(*n)++];
    memset(op, 0, sizeof *op);
    if (signal) {
        op->writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
        op->writeValue.address = (CUdeviceptr)(uintptr_t)c;
        op->writeValue.value = value;
        op->writeValue.flags = CU_STREAM_WRITE_VALUE_DEFAULT;
    } else {
        op->waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
        op->waitValue.address = (CUdeviceptr)(uintptr_t)c;
        op->waitValue.value = value;
        op->waitValue.flags = CU_STREAM_WAIT_VALUE_GEQ;
    }
}

/* s's waits (signal 0) or signals (1) appended to ops at *n; s NULL: none. */
static void add_memops(const tq_face_sync *s, int signal, CUstreamBatchMemOpParams *ops, unsigned *n)
{
    if (!s || (!signal && !s->wait_value)) return;
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2; side++) {
            uint32_t *c = signal ? s->signal[mu][side] : s->wait[mu][side];
            if (c) add_memop(c, signal ? s->signal_value : s->wait_value, signal, ops, n);
        }
}

/* The waits (signal 0) or signals (1) of a, then b, in one batch. */
static void face_memops(const tq_face_sync *a, const tq_face_sync *b, int signal)
{
    CUstreamBatchMemOpParams ops[16];
    unsigned n = 0;
    add_memops(a, signal, ops, &n);
    add_memops(b, signal, ops, &n);
    memops(ops, n);
}

extern "C" void tq_face_sync_wait2(const tq_face_sync *a, const tq_face_sync *b) { face_memops(a, b, 0); }
extern "C" void tq_face_sync_signal2(const tq_face_sync *a, const tq_face_sync *b) { face_memops(a, b, 1); }

extern "C" void tq_face_sync_wait(const tq_face_sync *s) { tq_face_sync_wait2(s, NULL); }
extern "C" void tq_face_sync_signal(const tq_face_sync *s) { tq_face_sync_signal2(s, NULL); }

extern "C" void tq_partial_sync_send(const tq_partial_sync *s, const double *partial)
{
    cudaStream_t stream = tq_cuda_stream();
    for (int k = 0; k < s->npeer; k++) {
        if (s->wait_value)
            report(wait_value32((CUstream)stream, (CUdeviceptr)(uintptr_t)s->wait[k], s->wait_value, CU_STREAM_WAIT_VALUE_GEQ));
        cudaError_t e = cudaMemcpyAsync(s->dst[k], partial, (size_t)s->nres * sizeof(double), cudaMemcpyDeviceToDevice, stream);
        if (e != cudaSuccess) STARPU_CUDA_REPORT_ERROR(e);
        report(write_value32((CUstream)stream, (CUdeviceptr)(uintptr_t)s->signal[k], s->signal_value, CU_STREAM_WRITE_VALUE_DEFAULT));
    }
}

extern "C" void tq_combine_sync_wait(const tq_combine_sync *s, int n)
{
    CUstreamBatchMemOpParams ops[64];
    unsigned k = 0;
    for (int t = 0; t < n && t < 64; t++)
        if (s->remote >> t & 1u) add_memop(s->ready + t, s->wait_value, 0, ops, &k);
    memops(ops, k);
}

extern "C" void tq_combine_sync_signal(const tq_combine_sync *s)
{
    CUstreamBatchMemOpParams ops[TQ_PEER_MAX];
    unsigned k = 0;
    for (int i = 0; i < s->nsignal; i++) add_memop(s->signal[i], s->signal_value, 1, ops, &k);
    memops(ops, k);
}

extern "C" int tq_cuda_peer_enable(int from, int to)
{
    pthread_once(&found_once, find_memops);
    if (!wait_value32 || !write_value32) return 0;
    if (from == to) return 1;
    int can = 0, prev = 0;
    if (cudaDeviceCanAccessPeer(&can, from, to) != cudaSuccess || !can) {
        cudaGetLastError();
        return 0;
    }
    cudaGetDevice(&prev);
    cudaSetDevice(from);
    cudaError_t e = cudaDeviceEnablePeerAccess(to, 0);
    cudaSetDevice(prev);
    if (e == cudaErrorPeerAccessAlreadyEnabled) e = cudaSuccess;
    cudaGetLastError();
    return e == cudaSuccess;
}

/* Zeroes bytes at p on device (current device: the caller's); 0 or -1. A stream of its
 * own: the workers' streams may hold value waits of running solves. */
static int zero_on(void *p, size_t bytes)
{
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) return -1;
    const int ok = cudaMemsetAsync(p, 0, bytes, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
    cudaStreamDestroy(s);
    return ok ? 0 : -1;
}

extern "C" int tq_cuda_copy_host(int device, void *dst, const void *src, size_t bytes)
{
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    /* a stream of its own, not blocking: the legacy default stream would wait for the
     * workers' streams (and their value waits) */
    cudaStream_t s;
    int ok = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess;
    if (ok) {
        ok = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s) == cudaSuccess && cudaStreamSynchronize(s) == cudaSuccess;
        cudaStreamDestroy(s);
    }
    cudaSetDevice(prev);
    cudaGetLastError();
    return ok ? 0 : -1;
}

extern "C" int tq_cuda_host_register(void *p, size_t bytes)
{
    const int ok = cudaHostRegister(p, bytes, cudaHostRegisterPortable) == cudaSuccess;
    cudaGetLastError();
    return ok ? 0 : -1;
}

extern "C" void tq_cuda_host_unregister(void *p)
{
    cudaHostUnregister(p);
    cudaGetLastError();
}

extern "C" void *tq_cuda_alloc_zeroed(int device, size_t bytes)
{
    int prev = 0;
    void *p = NULL;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    if (cudaMalloc(&p, bytes) != cudaSuccess) p = NULL;
    else if (zero_on(p, bytes)) {
        cudaFree(p);
        p = NULL;
    }
    cudaSetDevice(prev);
    cudaGetLastError();
    return p;
}

extern "C" int tq_cuda_zero(int device, void *p, size_t bytes)
{
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    const int r = zero_on(p, bytes);
    cudaSetDevice(prev);
    cudaGetLastError();
    return r;
}

extern "C" void tq_cuda_free_on(int device, void *p)
{
    if (!p) return;
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    cudaFree(p);
    cudaSetDevice(prev);
}

static_assert(sizeof(cudaIpcMemHandle_t) == TQ_CUDA_IPC_HANDLE_BYTES, "CUDA IPC handle size");

extern "C" int tq_cuda_ipc_export(void *p, unsigned char *handle)
{
    cudaIpcMemHandle_t h;
    if (cudaIpcGetMemHandle(&h, p) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    memcpy(handle, &h, sizeof h);
    return 0;
}

extern "C" void *tq_cuda_ipc_import(int device, const unsigned char *handle)
{
    int prev = 0;
    void *p = NULL;
    cudaIpcMemHandle_t h;
    memcpy(&h, handle, sizeof h);
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    if (cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess) != cudaSuccess) p = NULL;
    cudaSetDevice(prev);
    cudaGetLastError();
    return p;
}

extern "C" void tq_cuda_ipc_close(int device, void *p)
{
    if (!p) return;
    int prev = 0;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    cudaIpcCloseMemHandle(p);
    cudaSetDevice(prev);
    cudaGetLastError();
}

extern "C" int tq_cuda_device_uuid(int device, unsigned char *uuid)
{
    cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    memcpy(uuid, &prop.uuid, 16);
    return 0;
}
