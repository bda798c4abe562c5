/* Quenched-generator sweep codelet (one sub-step: parity p, direction mu, one block of the
 * links being updated): CPU implementation, codelet and perf model. Per-link arithmetic:
 * kernels/heatbath_site.h.
 *
 * Buffers (tq_generator_pointers): the block's 8 fields in field order f = 2 nu + q (the
 * written field 2 mu + p RW, the others R); then the faces the sub-step reads
 * (tq_hb_reads_face: by field, direction, side), then its edges (tq_hb_reads_edge: by field
 * and direction) (R); then the block's refusal count (one uint64, RW: links whose heat bath
 * found no positive weight, added up). The measurement (codelets/gauge_measure.c) lists its
 * fields and faces the same way (tq_measure_reads_face), without edges.
 *
 * Face pack (tq_cl_gauge_face_pack): one block of one field (R, parity a->parity), then per
 * direction the block grid cuts its lower and its upper face (W; the stencil layer's order). */
#include "config.h"
#include "tq_codelets.h"

#include <string.h>

int tq_generator_pointers(void *buffers[], const tq_heatbath_args *a, int measure, tq_heatbath_ptrs *P)
{
    memset(P, 0, sizeof *P);
    int k = 0;
    for (int f = 0; f < 8; f++) P->own[f] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    for (int f = 0; f < 8; f++)
        for (int d = 0; d < 4; d++)
            for (int side = 0; side < 2; side++)
                if (measure ? tq_measure_reads_face(a, f, d, side) : tq_hb_reads_face(a, f, d, side))
                    P->face[f][d][side] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    for (int f = 0; !measure && f < 8; f++)
        for (int nu = 0; nu < 4; nu++)
            if (tq_hb_reads_edge(a, f, nu)) P->edge[f][nu] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    return k;
}

/* The block's lower and upper layers in every cut direction into its faces. */
static void face_pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    const double *src = (const double *)STARPU_VECTOR_GET_PTR(buffers[0]);
    int k = 1;
    for (int d = 0; d < 4; d++)
        for (int side = 0; a->split[d] && side < 2; side++) {
            double *dst = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
            for (int64_t s = 0; s < tq_hb_face_sites(a, d); s++) tq_hb_face_pack_site(a, d, side, s, src, dst);
        }
}

static struct starpu_perfmodel face_pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_gauge_face_pack_v2", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_gauge_face_pack = {
    .cpu_funcs = {face_pack_cpu},
    .cpu_funcs_name = {"face_pack_cpu"},
    TQ_CUDA_IMPL(tq_gauge_face_pack_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &face_pack_model,
    .name = "tq_gauge_face_pack",
};

static void heatbath_cpu(void *buffers[], void *cl_arg)
{
    const tq_heatbath_args *a = (const tq_heatbath_args *)cl_arg;
    tq_heatbath_ptrs P;
    uint64_t *refused = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[tq_generator_pointers(buffers, a, 0, &P)]);
    uint64_t n = 0;
    for (int64_t i = 0; i < a->block_cb; i++) n += (uint64_t)tq_heatbath_site(&P, a, i);
    *refused += n;
}

static struct starpu_perfmodel heatbath_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_heatbath_v3", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_heatbath = {
    .cpu_funcs = {heatbath_cpu},
    .cpu_funcs_name = {"heatbath_cpu"},
    TQ_CUDA_IMPL(tq_heatbath_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &heatbath_model,
    .name = "tq_heatbath",
};
