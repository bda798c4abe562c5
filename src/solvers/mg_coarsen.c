/* The multigrid Galerkin product (issue 28): the coarse operator's links R D P from a
 * stencil-form operator D (a level's tq_mg_coarse_op) and the transfer's basis, one task per
 * block (codelets/mg_coarsen.c) after the basis's boundary layers moved between blocks
 * through the stencil layer's faces, checked against reference/mg_reference.h by
 * tests/test_mg_coarsen. The tasks go to the blocks' owners, GPUs included (TQ_MG_CPU=1:
 * CPU workers). May call: src/core, tasks/. */
#include "solvers/mg_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct coarsen_ctx {
    const tq_mg_coarse_op *fine, *coarse;
    const tq_mg_transfer *t;
    tq_mg_coarsen_args base;
    starpu_data_handle_t status;   /* partitioned: child b is block b's */
} coarsen_ctx;

static int coarsen_pack(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync)
{
    (void)sync;   /* no peer faces here */
    const coarsen_ctx *c = (const coarsen_ctx *)ctx;
    starpu_data_handle_t B[2];
    tq_mg_field_pair(c->t->basis, b, B);
    const tq_task_options o = tq_mg_cycle_options(c->t->fine, b);
    return tq_task_mg_coarsen_pack(&o, &c->base, B, faces);
}

static int coarsen_block(const coarsen_ctx *c, int b, starpu_data_handle_t *from)
{
    starpu_data_handle_t B[2], F[2], C[2];
    tq_mg_field_pair(c->t->basis, b, B);
    tq_mg_field_pair(c->fine->links, b, F);
    tq_mg_field_pair(c->coarse->links, b, C);
    /* where the level runs; on CPU workers when the GPU kernel's staged matrices would not
     * fit a thread block's shared memory (codelets/mg_cuda.cu) */
    const int nf = c->t->fine_ndof, nvec = c->t->nvec;
    const double staged = 16.0 * (4.0 * nvec * nf + (double)nf * nf);
    const tq_task_options o = staged <= TQ_MG_COARSEN_GPU_MAX_BYTES ? tq_mg_cycle_options(c->t->fine, b)
                                                                    : tq_mg_block_options(c->t->fine, b);
    return tq_task_mg_coarsen(&o, &c->base, B, F, C, starpu_data_get_sub_data(c->status, 1, (unsigned)b), from);
}

/* Without split directions the stencil layer calls no exterior: the interior does it all. */
static int coarsen_interior(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr)
{
    (void)nbr; (void)nnbr;
    const coarsen_ctx *c = (const coarsen_ctx *)ctx;
    return c->base.nfaces ? 0 : coarsen_block(c, b, NULL);
}

static int coarsen_exterior(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync,
                            const tq_face_sync *ahead)
{
    (void)ahead;   /* no packing ahead (ops.ahead 0) */
    (void)sync;
    (void)nfrom;
    return coarsen_block((const coarsen_ctx *)ctx, b, from);
}

tq_status tq_mg_coarsen(const tq_mg_coarse_op *fine, const tq_mg_transfer *t, tq_mg_coarse_op *coarse)
{
    const char *who = "tq_mg_coarsen";
    if (!fine || !t || !coarse) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (fine->lat != t->fine || fine->n != t->fine_ndof)
        return tq_error(TQ_ERR_MISMATCH, "%s: the fine operator (%d complex per site) is not on the transfer's fine lattice "
                        "with %d complex per site", who, fine->n, t->fine_ndof);
    if (coarse->lat != t->coarse || coarse->n != 2 * t->nvec)
        return tq_error(TQ_ERR_MISMATCH, "%s: the coarse operator (%d complex per site) is not on the transfer's coarse "
                        "lattice with 2 x %d null vectors per site", who, coarse->n, t->nvec);
    coarsen_ctx c = {.fine = fine, .coarse = coarse, .t = t};
    memset(&c.base, 0, sizeof c.base);
    c.base.t = tq_mg_transfer_block_args(t);
    c.base.nf = t->fine_ndof;
    c.base.L_flinks = fine->links->layout;
    c.base.L_clinks = coarse->links->layout;
    /* a face entry: one boundary site's basis (nvec x rows rows of 24 reals) in double; the
     * stencil's face of "one parity's sites" holds a whole layer at half the sites */
    const int site_reals = 24 * (t->fine_ndof / 12) * t->nvec;
    tq_stencil st;
    tq_status s = tq_stencil_create(t->fine, 1, 8, 2 * site_reals, &st);
    if (s != TQ_SUCCESS) return s;
    for (int mu = 0; mu < 4; mu++) {
        c.base.split[mu] = st.split[mu];
        c.base.L_face[mu] = tq_layout_make(8, site_reals, 1, 2 * tq_stencil_face_sites(&st, mu));
    }
    c.base.nfaces = st.nfaces;
    const int nb = t->fine->nblocks;
    int64_t *status = calloc((size_t)nb, sizeof *status);
    if (!status) {
        tq_stencil_destroy(&st);
        return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    }
    starpu_vector_data_register(&c.status, STARPU_MAIN_RAM, (uintptr_t)status, (uint32_t)nb, sizeof *status);
    struct starpu_data_filter one_each = {.filter_func = starpu_vector_filter_block, .nchildren = (unsigned)nb};
    starpu_data_partition(c.status, &one_each);
    const tq_stencil_ops ops = {.pack = coarsen_pack, .interior = coarsen_interior, .exterior = coarsen_exterior};
    s = tq_stencil_submit(&st, TQ_STENCIL_FACES, &ops, &c, who);
    starpu_data_unpartition(c.status, STARPU_MAIN_RAM);   /* waits for the tasks */
    starpu_data_unregister(c.status);
    tq_stencil_destroy(&st);
    double failed = 0;   /* each rank saw its own blocks (the others' entries stay 0) */
    for (int b = 0; b < nb; b++) failed += status[b] < 0;
    free(status);
    tq_lattice_allreduce_sum(t->fine, &failed, 1);
    if (s != TQ_SUCCESS) return s;
    if (failed > 0)
        return tq_error(TQ_ERR_NOMEM, "%s: out of memory in %.0f block task(s) (a CPU task's workspace, or a GPU's shared "
                        "memory per thread block for %d null vectors of %d complex)", who, failed, t->nvec, t->fine_ndof);
    return TQ_SUCCESS;
}
