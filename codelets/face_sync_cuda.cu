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
#include <string.h>

typedef CUresult (*stream_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
static stream_value_fn wait_value32, write_value32;
static pthread_once_t found_once = PTHREAD_ONCE_INIT;

static void find_memops(void)
{
    void *w = NULL, *s = NULL;
    cudaDriverEntryPointQueryResult q1, q2;
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

extern "C" void tq_face_sync_wait(const tq_face_sync *s)
{
    if (!s->wait_value) return;
    CUstream stream = (CUstream)tq_cuda_stream();
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2; side++)
            if (s->wait[mu][side])
                report(wait_value32(stream, (CUdeviceptr)(uintptr_t)s->wait[mu][side], s->wait_value, CU_STREAM_WAIT_VALUE_GEQ));
}

extern "C" void tq_face_sync_signal(const tq_face_sync *s)
{
    CUstream stream = (CUstream)tq_cuda_stream();
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2; side++)
            if (s->signal[mu][side])
                report(write_value32(stream, (CUdeviceptr)(uintptr_t)s->signal[mu][side], s->signal_value,
                                     CU_STREAM_WRITE_VALUE_DEFAULT));
}

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
    CUstream stream = (CUstream)tq_cuda_stream();
    for (int t = 0; t < n; t++)
        if (s->remote >> t & 1u)
            report(wait_value32(stream, (CUdeviceptr)(uintptr_t)(s->ready + t), s->wait_value, CU_STREAM_WAIT_VALUE_GEQ));
}

extern "C" void tq_combine_sync_signal(const tq_combine_sync *s)
{
    CUstream stream = (CUstream)tq_cuda_stream();
    for (int k = 0; k < s->nsignal; k++)
        report(write_value32(stream, (CUdeviceptr)(uintptr_t)s->signal[k], s->signal_value, CU_STREAM_WRITE_VALUE_DEFAULT));
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
