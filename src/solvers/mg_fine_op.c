/* The fine level of multigrid as a stencil-form operator (issue 28): the Wilson-clover
 * matrix M = A - kappa D of a tq_dirac written as the links of a tq_mg_coarse_op with 12
 * complex per site, by tasks per block (codelets/mg_fine_op.c), so that the Galerkin product
 * (tq_mg_coarsen) and the level solves take the fine level as they take a coarse one. 20 KiB
 * per site in double: the path for tests and small lattices until the coarsening reads the
 * gauge links and the clover term itself. The tasks go to the blocks' owners, GPUs included
 * (TQ_MG_CPU=1: CPU workers). May call: src/core, src/dirac's internals, tasks/. */
#include "solvers/mg_internal.h"
#include "dirac/dirac_internal.h"

#include <string.h>

typedef struct fine_ctx {
    const tq_mg_coarse_op *op;
    tq_mg_fine_args base;
} fine_ctx;

static int fine_pack(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync)
{
    (void)sync;   /* no peer faces here */
    const fine_ctx *c = (const fine_ctx *)ctx;
    starpu_data_handle_t L[2];
    tq_mg_field_pair(c->op->links, b, L);
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_mg_fine_pack(&o, &c->base, L, faces);
}

static int fine_back(const fine_ctx *c, int b, starpu_data_handle_t *from)
{
    starpu_data_handle_t L[2];
    tq_mg_field_pair(c->op->links, b, L);
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_mg_fine_back(&o, &c->base, L, from);
}

/* Without split directions the stencil layer calls no exterior: the interior does it. */
static int fine_interior(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr)
{
    (void)nbr; (void)nnbr;
    const fine_ctx *c = (const fine_ctx *)ctx;
    return c->base.nfaces ? 0 : fine_back(c, b, NULL);
}

static int fine_exterior(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync,
                         const tq_face_sync *ahead)
{
    (void)ahead;   /* no packing ahead (ops.ahead 0) */
    (void)sync;
    (void)nfrom;
    return fine_back((const fine_ctx *)ctx, b, from);
}

tq_status tq_mg_fine_op_create(const char *who, const tq_dirac *d, tq_precision link_prec, tq_precision vec_prec,
                               tq_mg_coarse_op **out)
{
    if (!d || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    const tq_field *gauge = tq_internal_dirac_gauge(d), *clover = tq_internal_dirac_clover(d);
    const tq_dirac_params *dp = tq_internal_dirac_params(d);
    tq_lattice *lat = gauge->lat;
    tq_mg_coarse_op *op = NULL;
    TQ_CHECK(tq_mg_coarse_op_create(who, lat, 12, link_prec, vec_prec, &op));
    fine_ctx c = {.op = op};
    memset(&c.base, 0, sizeof c.base);
    for (int mu = 0; mu < 4; mu++) c.base.B[mu] = lat->block[mu];
    c.base.cb = lat->block_cb;
    c.base.recon = (int)gauge->p.recon;
    c.base.clover = clover != NULL;
    c.base.kappa = dp->kappa;
    /* the gauge layout as the hopping term reads it (src/dirac/dslash_wilson.c) */
    c.base.Lg = gauge->layout;
    c.base.Lg.nreal = 4 * c.base.recon;
    c.base.Lg.has_norm = 0;
    c.base.Lg.vec = c.base.recon == 18 ? 2 : tq_layout_vec(gauge->layout.prec, 4 * c.base.recon);
    if (clover) c.base.Lclover = clover->layout;
    c.base.Llinks = op->links->layout;
    /* a face entry: one upper-layer site's Yf_mu (144 complex) in double; the stencil's face
     * of "one parity's sites" holds the whole layer at half the sites */
    tq_stencil st;
    tq_status s = tq_stencil_create(lat, 1, 8, 2 * 288, &st);
    if (s != TQ_SUCCESS) {
        tq_mg_coarse_op_destroy(op);
        return s;
    }
    for (int mu = 0; mu < 4; mu++) {
        c.base.split[mu] = st.split[mu];
        c.base.L_face[mu] = tq_layout_make(8, 288, 1, 2 * tq_stencil_face_sites(&st, mu));
    }
    c.base.nfaces = st.nfaces;
    int ret = 0;
    for (int b = 0; b < lat->nblocks && !ret; b++) {
        tq_mg_fine_args a = c.base;
        for (int mu = 0; mu < 4; mu++) a.phase_hi[mu] = tq_stencil_at_boundary(&st, b, mu, 1) ? dp->bc[mu] : 1.0;
        const tq_task_options o = tq_mg_cycle_options(lat, b);
        for (int p = 0; p < 2 && !ret; p++) {
            a.parity = p;
            ret = tq_task_mg_fine_local(&o, &a, tq_field_handle(gauge, b, p),
                                        clover ? tq_field_handle(clover, b, clover->nparity == 2 ? p : 0) : NULL,
                                        tq_field_handle(op->links, b, p));
        }
    }
    if (ret) s = tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    const tq_stencil_ops ops = {.pack = fine_pack, .interior = fine_interior, .exterior = fine_exterior};
    if (s == TQ_SUCCESS) s = tq_stencil_submit(&st, TQ_STENCIL_FACES, &ops, &c, who);
    tq_stencil_destroy(&st);
    if (s != TQ_SUCCESS) {
        tq_mg_coarse_op_destroy(op);
        return s;
    }
    *out = op;
    return TQ_SUCCESS;
}
