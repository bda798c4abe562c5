/* Quenched-generator sweep codelet (one sub-step: parity p, direction mu, one slab of the
 * links being updated): CPU implementation, codelet and perf model. Per-link arithmetic:
 * kernels/heatbath_site.h.
 *
 * Buffers, in field order f = 2 nu + q (0..7): the slab a->slab of the written field
 * 2 mu + p (RW), all a->nslab slabs of every other field (R); then the slab's refusal count
 * (one uint64, RW: links whose heat bath found no positive weight, added up). */
#include "config.h"
#include "tq_codelets.h"

void tq_heatbath_pointers(void *buffers[], const tq_heatbath_args *a, tq_heatbath_ptrs *P, uint64_t **refused)
{
    const int written = 2 * a->mu + a->parity;
    int k = 0;
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < a->nslab; s++) {
            P->p[f][s] = NULL;
            if (f == written && s != a->slab) continue;
            P->p[f][s] = (double *)STARPU_VECTOR_GET_PTR(buffers[k++]);
        }
    *refused = (uint64_t *)STARPU_VECTOR_GET_PTR(buffers[k]);
}

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

static struct starpu_perfmodel heatbath_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_heatbath_v1"};

struct starpu_codelet tq_cl_heatbath = {
    .cpu_funcs = {heatbath_cpu},
    .cpu_funcs_name = {"heatbath_cpu"},
#ifdef TQ_HAVE_CUDA
    .cuda_funcs = {tq_heatbath_cuda},
    .cuda_flags = {STARPU_CUDA_ASYNC},
#endif
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &heatbath_model,
    .name = "tq_heatbath",
};
