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

extern "C" void *tq_cuda_alloc_zeroed(int device, size_t bytes)
{
    int prev = 0;
    void *p = NULL;
    cudaGetDevice(&prev);
    cudaSetDevice(device);
    /* a stream of its own: the workers' streams may hold value waits of running solves */
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess) {
        if (cudaMalloc(&p, bytes) != cudaSuccess) p = NULL;
        else if (cudaMemsetAsync(p, 0, bytes, s) != cudaSuccess || cudaStreamSynchronize(s) != cudaSuccess) {
            cudaFree(p);
            p = NULL;
        }
        cudaStreamDestroy(s);
    }
    cudaSetDevice(prev);
    cudaGetLastError();
    return p;
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
