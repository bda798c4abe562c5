/* Multigrid coarse-operator codelets (CPU; per-site arithmetic in kernels/coarse_op_site.h):
 * per block and output parity, pack, interior and exterior, as the stencil layer
 * (src/core/stencil.h) submits them. Buffers:
 *   pack:      in (R, the parity the neighbours hop to), faces (W) x nfaces less the peer
 *              faces (tq_coarse_face_args: written where its sync says)
 *   interior:  in of the output's parity (R), in of the other parity (R), links (R), out (W)
 *   exterior:  the same with out (RW), then the faces read (R) x nfaces less the peer faces
 *   hat:       links of one parity (R), the even-odd form's links of that parity (W)
 * (the argument's nfaces: a codelet may run inside a chain task, whose buffers are more).
 * CUDA versions: codelets/mg_cuda.cu (hat where tq_coarse_hat_fits_gpus). */
#include "config.h"
#include "tq_codelets.h"
#include "kernels/coarse_op_site.h"

#include <stdio.h>
#include <stdlib.h>

#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

/* (Peer faces, face_sync.h, are only ever GPU memory: on CPU workers every face is a
 * buffer of the task; tq_face_sync_pointers maps them all the same.) */
static void pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_coarse_face_args *fa = (const tq_coarse_face_args *)cl_arg;
    void *faces[8] = {NULL};
    tq_face_sync_pointers(fa->a.split, &fa->sync, buffers, 1, faces);
    for (int64_t s = 0; s < fa->a.cb; s++) tq_coarse_pack_site(&fa->a, PTR(0), faces, s);
}

static void interior_cpu(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    for (int64_t s = 0; s < a->cb; s++) {
        int x[4];
        tq_block_coords(a->B, a->parity, s, x);
        if (!tq_coarse_on_face(a, x)) tq_coarse_site(a, PTR(0), PTR(1), PTR(2), NULL, PTR(3), s);
    }
}

static void exterior_cpu(void *buffers[], void *cl_arg)
{
    const tq_coarse_face_args *fa = (const tq_coarse_face_args *)cl_arg;
    const tq_coarse_args *a = &fa->a;
    void *faces[8] = {NULL};
    tq_face_sync_pointers(a->split, &fa->sync, buffers, 4, faces);
    const void *const *from = (const void *const *)faces;
    for (int64_t s = 0; s < a->cb; s++) {
        int x[4];
        tq_block_coords(a->B, a->parity, s, x);
        if (tq_coarse_on_face(a, x)) tq_coarse_site(a, PTR(0), PTR(1), PTR(2), from, PTR(3), s);
    }
}

static void hat_cpu(void *buffers[], void *cl_arg)
{
    const tq_coarse_args *a = (const tq_coarse_args *)cl_arg;
    double *work = malloc(sizeof(double) * 6 * (size_t)a->n * (size_t)a->n);
    if (!work) {   /* no way to report it from a codelet: NaN hat links make the solve fail with a breakdown */
        fprintf(stderr, "taskqcd: out of memory in the even-odd coarse links\n");
        return;
    }
    for (int64_t s = 0; s < a->cb; s++) tq_coarse_hat_site(a, PTR(0), PTR(1), s, work);
    free(work);
}

static struct starpu_perfmodel pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_coarse_pack_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel interior_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_coarse_interior_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel exterior_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_coarse_exterior_v1", .footprint = tq_footprint_bytes};

#ifndef TQ_HAVE_CUDA
int tq_coarse_hat_fits_gpus(int n)
{
    (void)n;
    return 0;
}
#endif

static struct starpu_perfmodel hat_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_coarse_hat_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_coarse_hat = {
    .cpu_funcs = {hat_cpu}, .cpu_funcs_name = {"hat_cpu"}, TQ_CUDA_IMPL(tq_coarse_hat_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &hat_model, .name = "tq_coarse_hat",
};
struct starpu_codelet tq_cl_coarse_pack = {
    .cpu_funcs = {pack_cpu}, .cpu_funcs_name = {"pack_cpu"}, TQ_CUDA_IMPL(tq_coarse_pack_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &pack_model, .name = "tq_coarse_pack",
};
struct starpu_codelet tq_cl_coarse_interior = {
    .cpu_funcs = {interior_cpu}, .cpu_funcs_name = {"interior_cpu"}, TQ_CUDA_IMPL(tq_coarse_interior_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &interior_model, .name = "tq_coarse_interior",
};
struct starpu_codelet tq_cl_coarse_exterior = {
    .cpu_funcs = {exterior_cpu}, .cpu_funcs_name = {"exterior_cpu"}, TQ_CUDA_IMPL(tq_coarse_exterior_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &exterior_model, .name = "tq_coarse_exterior",
};
