/* Quenched-generator sweep codelet (one sub-step: parity p, direction mu, one slab of the
 * links being updated): CPU implementation, codelet and perf model. Per-link arithmetic:
 * kernels/heatbath_site.h.
 *
 * Buffers, in field order f = 2 nu + q (0..7): the slab a->slab of the written field
 * 2 mu + p (RW), all a->nslab slabs of every other field (R); with halos (a->halo) instead
 * the slab a->slab of every field (the written one RW), then for each other field its halo
 * below and its halo above (R); then the slab's refusal count (one uint64, RW: links whose
 * heat bath found no positive weight, added up).
 *
 * Face pack (tq_cl_gauge_face_pack): one slab of one field (R), its first time slice (W),
 * its last time slice (W): the halos of the slabs above and below. */
#include "config.h"
#include "tq_codelets.h"

#include <string.h>

void tq_heatbath_pointers(void *buffers[], const tq_heatbath_args *a, tq_heatbath_ptrs *P, uint64_t **refused)
{
    const int written = 2 * a->mu + a->parity;
    int k = 0;
    for (int f = 0; f < 8; f++) {
        P->lo[f] = P->hi[f] = NULL;
        for (int s = 0; s < a->nslab; s++) {
            P->p[f][s] = NULL;
            if ((f == written || a->halo) && s != a->slab) continue;
            P->p[f][s] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
        }
    }
    for (int f = 0; a->halo && f < 8; f++) {
        if (f == written) continue;
        P->lo[f] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
        P->hi[f] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    }
    *refused = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[k]);
}

/* The first and last time slices of one slab (a->slab_len links) into the two faces. */
static void face_pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    const double *slab = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const size_t n = (size_t)tq_hb_slice_len(a->dims) * 18;
    memcpy((void *)STARPU_VECTOR_GET_PTR(buffers[1]), slab, n * sizeof(double));
    memcpy((void *)STARPU_VECTOR_GET_PTR(buffers[2]), slab + (size_t)a->slab_len * 18 - n, n * sizeof(double));
}

static struct starpu_perfmodel face_pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_face_pack_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_gauge_face_pack = {
    .cpu_funcs = {face_pack_cpu},
    .cpu_funcs_name = {"face_pack_cpu"},
    TQ_CUDA_IMPL(tq_gauge_face_pack_cuda)
    .nbuffers = 3,
    .modes = {STARPU_R, STARPU_W, STARPU_W},
    .model = &face_pack_model,
    .name = "tq_gauge_face_pack",
};

static void heatbath_cpu(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    uint64_t *refused;
    tq_heatbath_pointers(buffers, a, &P, &refused);
    uint64_t n = 0;
    for (int64_t i = 0; i < a->slab_len; i++) n += (uint64_t)tq_heatbath_site(&P, a, i);
    *refused += n;
}

static struct starpu_perfmodel heatbath_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_heatbath_v2", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_heatbath = {
    .cpu_funcs = {heatbath_cpu},
    .cpu_funcs_name = {"heatbath_cpu"},
    TQ_CUDA_IMPL(tq_heatbath_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &heatbath_model,
    .name = "tq_heatbath",
};
