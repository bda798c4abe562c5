/* Peer faces: a face written by one GPU's pack kernel straight into the memory of the GPU
 * that reads it (peer access over NVLink), ordered by counters on the two GPUs' streams
 * instead of by StarPU dependencies (core/stencil.h says when and why). A pack or exterior
 * task's argument carries one tq_face_sync after its operator's own arguments: before its
 * kernel the task's stream waits until every counter in `wait` reaches wait_value (cyclic
 * greater-or-equal), after the kernel it writes signal_value into every counter in
 * `signal` (preceded by a memory fence, so the face's data is visible first). */
#ifndef TQ_FACE_SYNC_H
#define TQ_FACE_SYNC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tq_face_sync {
    void *ptr[4][2];          /* per direction and side, the face in the reader's GPU memory;
                                 NULL: the face is one of the task's StarPU buffers */
    uint32_t *wait[4][2];     /* counters in this GPU's memory (NULL: none) */
    uint32_t *signal[4][2];   /* counters in the other GPU's memory (NULL: none) */
    uint32_t wait_value, signal_value;   /* wait_value 0: no wait */
} tq_face_sync;

/* Peer partial sums (src/blas/blas.c): a reduction's per-block partial sums go from the
 * GPU that made them straight into the memory of every other GPU whose combine task reads
 * them, ordered by the same kind of counters, so a solver's reductions cross GPUs without
 * a StarPU dependency. TQ_PEER_MAX: the most GPUs one solve's blocks are spread over. */
#define TQ_PEER_MAX 8
#define TQ_PEER_MAX_BLOCKS 32   /* blocks of a lattice in peer mode (64 reduction tasks) */
/* A reduction task's side: after its partial sums are written, for each of npeer other
 * GPUs: wait until wait[k] reaches wait_value (that GPU's combine is done with the slot's
 * last use; wait_value 0: no wait), copy the nres sums to dst[k], write signal_value into
 * signal[k]. npeer 0: none. */
typedef struct tq_partial_sync {
    int npeer, nres;
    double *dst[TQ_PEER_MAX];
    uint32_t *wait[TQ_PEER_MAX], *signal[TQ_PEER_MAX];
    uint32_t wait_value, signal_value;
} tq_partial_sync;
/* A combine task's side: partial t with bit t of `remote` set is not a buffer but at
 * slots + t * TQ_PEER_SLOT doubles, there once ready[t] reaches wait_value; after the
 * combine, signal_value goes into each of the nsignal counters (the producers' GPUs). */
#define TQ_PEER_SLOT 8
typedef struct tq_combine_sync {
    const double *slots;
    uint64_t remote;
    uint32_t *ready;
    uint32_t wait_value, signal_value;
    int nsignal;
    uint32_t *signal[TQ_PEER_MAX];
} tq_combine_sync;

/* Whether any face of s is a peer face. */
static inline int tq_face_sync_any(const tq_face_sync *s)
{
    for (int mu = 0; mu < 4; mu++)
        if (s->ptr[mu][0] || s->ptr[mu][1]) return 1;
    return 0;
}

#ifdef TQ_HAVE_CUDA
/* The waits and the signals of s on the calling codelet's stream (tq_cuda_stream()), in one
 * driver call each (cuStreamBatchMemOp); the 2 forms those of a and then b (b may be NULL). */
void tq_face_sync_wait(const tq_face_sync *s);
void tq_face_sync_signal(const tq_face_sync *s);
void tq_face_sync_wait2(const tq_face_sync *a, const tq_face_sync *b);
void tq_face_sync_signal2(const tq_face_sync *a, const tq_face_sync *b);
/* The reduction task's sends (partial: its nres sums on this GPU) and the combine's waits
 * (n partials) and signals, on tq_cuda_stream(). */
void tq_partial_sync_send(const tq_partial_sync *s, const double *partial);
void tq_combine_sync_wait(const tq_combine_sync *s, int n);
void tq_combine_sync_signal(const tq_combine_sync *s);
/* Whether kernels on device `from` can write device `to`'s memory: peer access enabled
 * (idempotent) and the stream memory operations found in the driver. */
int tq_cuda_peer_enable(int from, int to);
/* Zeroed memory on a device (NULL on failure), and its release. */
void *tq_cuda_alloc_zeroed(int device, size_t bytes);
int tq_cuda_zero(int device, void *p, size_t bytes);   /* 0 or -1 */
void tq_cuda_free_on(int device, void *p);
/* bytes from src to dst, one of them on device and the other in host memory (pageable or
 * pinned), before returning; 0 or -1. A field's import and export (src/core/field.c) go so
 * straight to and from its owner's GPU, without a StarPU buffer in main memory. */
int tq_cuda_copy_host(int device, void *dst, const void *src, size_t bytes);
/* Page-locks host memory p of bytes for every device (copies at the bus's rate), and undoes
 * it; 0 or -1. */
int tq_cuda_host_register(void *p, size_t bytes);
void tq_cuda_host_unregister(void *p);
/* CUDA IPC (peer mode across ranks of one node, src/core/peer.c): the handle of memory p
 * that tq_cuda_alloc_zeroed made (into handle, TQ_CUDA_IPC_HANDLE_BYTES; 0 or -1), another
 * process's memory behind such a handle mapped for this process's kernels on device (NULL
 * on failure), and the end of that mapping. */
#define TQ_CUDA_IPC_HANDLE_BYTES 64
int tq_cuda_ipc_export(void *p, unsigned char *handle);
void *tq_cuda_ipc_import(int device, const unsigned char *handle);
void tq_cuda_ipc_close(int device, void *p);
/* The 16-byte UUID of a device (0 or -1): two ranks that name the same GPU differently
 * (each its own CUDA_VISIBLE_DEVICES) are told apart from two GPUs. */
int tq_cuda_device_uuid(int device, unsigned char *uuid);
#endif

#ifdef __cplusplus
}
#endif

#endif
