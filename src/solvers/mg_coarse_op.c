/* The multigrid coarse operator (issue 28): its links and their application through the
 * generic stencil layer (src/core/stencil.h), per output parity a pack, interior and
 * exterior task per block (codelets/coarse_op.c), checked against reference/mg_reference.h
 * by tests/test_mg_coarse_op. Building the links from the fine operator (the Galerkin
 * product) comes next. May call: src/core, tasks/. */
#include "solvers/mg_internal.h"

#include <stdlib.h>
#include <string.h>

tq_status tq_mg_coarse_op_create(const char *who, tq_lattice *lat, int n, tq_precision link_prec, tq_precision vec_prec,
                                 tq_mg_coarse_op **out)
{
    if (!lat || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    if (n <= 0 || n % 12 || n > TQ_COARSE_MAX_N)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d complex per coarse site (a multiple of 12, at most %d)", who, n,
                        TQ_COARSE_MAX_N);
    if (starpu_cpu_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: the coarse operator runs on CPU workers so far, and none is running", who);
    tq_mg_coarse_op *op = calloc(1, sizeof *op);
    if (!op) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    op->lat = lat;
    op->n = n;
    op->vec_prec = vec_prec;
    tq_field_params lp = {TQ_FIELD_COARSE, link_prec, TQ_FULL, (tq_recon)0, 9 * n * n};
    tq_status s = tq_field_create(lat, &lp, &op->links);
    if (s == TQ_SUCCESS) s = tq_stencil_create(lat, 1, (int)vec_prec, 2 * n, &op->stencil);
    if (s != TQ_SUCCESS) {
        tq_mg_coarse_op_destroy(op);
        return s;
    }
    *out = op;
    return TQ_SUCCESS;
}

void tq_mg_coarse_op_destroy(tq_mg_coarse_op *op)
{
    if (!op) return;
    tq_stencil_destroy(&op->stencil);
    tq_field_destroy(op->links);
    free(op);
}

/* One parity's application, for the stencil layer's per-block calls. */
typedef struct coarse_ctx {
    const tq_mg_coarse_op *op;
    tq_field *out;
    const tq_field *in;
    tq_coarse_args base;
} coarse_ctx;

static int coarse_pack(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync)
{
    (void)sync;   /* no peer faces here */
    const coarse_ctx *c = (const coarse_ctx *)ctx;
    tq_coarse_args a = c->base;
    a.parity = 1 - c->base.parity;   /* the sites the readers hop to */
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_coarse_pack(&o, &a, tq_field_handle(c->in, b, a.parity), faces);
}

static int coarse_interior(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr)
{
    (void)nbr; (void)nnbr;
    const coarse_ctx *c = (const coarse_ctx *)ctx;
    const int p = c->base.parity;
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_coarse_interior(&o, &c->base, tq_field_handle(c->in, b, p), tq_field_handle(c->in, b, 1 - p),
                                   tq_field_handle(c->op->links, b, p), tq_field_handle(c->out, b, p));
}

static int coarse_exterior(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync)
{
    (void)sync;
    (void)nfrom;
    const coarse_ctx *c = (const coarse_ctx *)ctx;
    const int p = c->base.parity;
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_coarse_exterior(&o, &c->base, tq_field_handle(c->in, b, p), tq_field_handle(c->in, b, 1 - p),
                                   tq_field_handle(c->op->links, b, p), tq_field_handle(c->out, b, p), from);
}

tq_status tq_mg_coarse_apply(const tq_mg_coarse_op *op, tq_field *out, const tq_field *in)
{
    const char *who = "tq_mg_coarse_apply";
    if (!op || !out || !in) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    tq_status s = tq_field_check_compatible(who, out, in, 1);
    if (s != TQ_SUCCESS) return s;
    if (in->lat != op->lat || in->p.kind != TQ_FIELD_COARSE || in->p.ndof != op->n || in->p.subset != TQ_FULL ||
        in->p.prec != op->vec_prec)
        return tq_error(TQ_ERR_MISMATCH, "%s: the vectors must be full coarse fields of the operator's lattice, %d complex per "
                        "site, in %s", who, op->n, tq_precision_name(op->vec_prec));
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    coarse_ctx c = {.op = op, .out = out, .in = in};
    memset(&c.base, 0, sizeof c.base);
    for (int mu = 0; mu < 4; mu++) {
        c.base.B[mu] = op->lat->block[mu];
        c.base.split[mu] = op->stencil.split[mu];
        c.base.L_face[mu] = tq_layout_make((int)op->vec_prec, 2 * op->n, 1, tq_stencil_face_sites(&op->stencil, mu));
    }
    c.base.n = op->n;
    c.base.local = 1;
    c.base.nfaces = op->stencil.nfaces;
    c.base.cb = op->lat->block_cb;
    c.base.L_in = in->layout;
    c.base.L_out = out->layout;
    c.base.L_links = op->links->layout;
    const tq_stencil_ops ops = {.pack = coarse_pack, .interior = coarse_interior, .exterior = coarse_exterior};
    for (int p = 0; p < 2 && s == TQ_SUCCESS; p++) {
        c.base.parity = p;
        s = tq_stencil_submit(&op->stencil, 0, &ops, &c, who);
    }
    return s;
}
