/* The multigrid coarse operator (issue 28): its links and their application through the
 * generic stencil layer (src/core/stencil.h), per output parity a pack, interior and
 * exterior task per block (codelets/coarse_op.c), checked against reference/mg_reference.h
 * by tests/test_mg_coarse_op; and its even-odd form (the links premultiplied by X^-1, the
 * hopping terms between parities and the X^-1 term alone) for solves on the Schur
 * complement. May call: src/core, tasks/. */
#include "solvers/mg_internal.h"

#include <stdlib.h>
#include <string.h>

/* A coarse operator's stencil, its faces between GPUs peer faces where the cycle runs on
 * the blocks' owners: a GPU whose stream waits for another's (the fine operator's peer
 * faces, a solve's peer partial sums) then never also waits for StarPU to move a coarse face
 * between them, and the coarse solves take peer partial sums too (doc/design.md). */
static tq_status coarse_stencil(const char *who, tq_lattice *lat, tq_precision vec_prec, int n, tq_stencil *st)
{
    tq_status s = tq_stencil_create(lat, 1, (int)vec_prec, 2 * n, st);
    if (s == TQ_SUCCESS && tq_mg_cycle_on_owners() && tq_stencil_use_peer_faces(st) < 0)
        s = tq_error(TQ_ERR_NOMEM, "%s: out of memory for the peer faces", who);
    return s;
}

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
    if (s == TQ_SUCCESS) s = coarse_stencil(who, lat, vec_prec, n, &op->stencil);
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
    if (!op->shares_links) {
        tq_field_destroy(op->hat);
        tq_field_destroy(op->links);
    }
    free(op);
}

tq_status tq_mg_coarse_op_work(const tq_mg_coarse_op *op, tq_mg_coarse_op **out)
{
    const char *who = "tq_mg_coarse_op_work";
    if (!op || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    tq_mg_coarse_op *w = calloc(1, sizeof *w);
    if (!w) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    *w = (tq_mg_coarse_op){.lat = op->lat, .n = op->n, .vec_prec = op->vec_prec, .links = op->links, .hat = op->hat,
                           .shares_links = 1};
    const tq_status s = coarse_stencil(who, op->lat, op->vec_prec, op->n, &w->stencil);
    if (s != TQ_SUCCESS) {
        tq_stencil_destroy(&w->stencil);
        free(w);
        return s;
    }
    *out = w;
    return TQ_SUCCESS;
}

/* Handle of parity p of field f's block b (a full field, or a single-parity one of p). */
static starpu_data_handle_t parity_handle(const tq_field *f, int b, int p)
{
    return tq_field_handle(f, b, f->nparity == 2 ? p : 0);
}

/* One parity's application, for the stencil layer's per-block calls: out's parity
 * base.parity from in_same (that parity, NULL without the X term) and in_other. */
typedef struct coarse_ctx {
    const tq_mg_coarse_op *op;
    const tq_field *links;
    tq_field *out;
    const tq_field *in_same, *in_other;
    tq_coarse_args base;
} coarse_ctx;

/* The arguments every block shares for an application of op's stencil with links. */
static tq_coarse_args coarse_base(const tq_mg_coarse_op *op, const tq_field *links, const tq_field *out, const tq_field *in)
{
    tq_coarse_args a;
    memset(&a, 0, sizeof a);
    for (int mu = 0; mu < 4; mu++) {
        a.B[mu] = op->lat->block[mu];
        a.split[mu] = op->stencil.split[mu];
        a.L_face[mu] = tq_layout_make((int)op->vec_prec, 2 * op->n, 1, tq_stencil_face_sites(&op->stencil, mu));
    }
    a.n = op->n;
    a.local = 1;
    a.nfaces = op->stencil.nfaces;
    a.cb = op->lat->block_cb;
    a.L_in = in->layout;
    a.L_out = out->layout;
    a.L_links = links->layout;
    return a;
}

/* The in_same buffer of a hopping term alone (no X term: never read): a read-only handle
 * the owner holds anyway, the links of the other parity (the task needs one in that slot). */
static starpu_data_handle_t same_handle(const coarse_ctx *c, int b)
{
    const int p = c->base.parity;
    return c->in_same ? parity_handle(c->in_same, b, p) : tq_field_handle(c->links, b, 1 - p);
}

/* The pack and exterior tasks' argument: the application's, and the order of the block's
 * peer faces (none: zeroed) */
static tq_coarse_face_args face_args(const tq_coarse_args *base, const tq_face_sync *sync)
{
    tq_coarse_face_args fa;
    memset(&fa, 0, sizeof fa);
    fa.a = *base;
    if (sync) fa.sync = *sync;
    return fa;
}

static int coarse_pack(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync)
{
    const coarse_ctx *c = (const coarse_ctx *)ctx;
    tq_coarse_face_args fa = face_args(&c->base, sync);
    fa.a.parity = 1 - c->base.parity;   /* the sites the readers hop to */
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_coarse_pack(&o, &fa, parity_handle(c->in_other, b, fa.a.parity), faces);
}

static int coarse_interior(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr)
{
    (void)nbr; (void)nnbr;
    const coarse_ctx *c = (const coarse_ctx *)ctx;
    const int p = c->base.parity;
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_coarse_interior(&o, &c->base, same_handle(c, b), parity_handle(c->in_other, b, 1 - p),
                                   tq_field_handle(c->links, b, p), parity_handle(c->out, b, p));
}

static int coarse_exterior(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync,
                           const tq_face_sync *ahead)
{
    (void)ahead;   /* no packing ahead (ops.ahead 0) */
    (void)nfrom;
    const coarse_ctx *c = (const coarse_ctx *)ctx;
    const int p = c->base.parity;
    const tq_coarse_face_args fa = face_args(&c->base, sync);
    const tq_task_options o = tq_mg_cycle_options(c->op->lat, b);
    return tq_task_coarse_exterior(&o, &fa, same_handle(c, b), parity_handle(c->in_other, b, 1 - p),
                                   tq_field_handle(c->links, b, p), parity_handle(c->out, b, p), from);
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
    coarse_ctx c = {.op = op, .links = op->links, .out = out, .in_same = in, .in_other = in};
    c.base = coarse_base(op, op->links, out, in);
    const tq_stencil_ops ops = {.pack = coarse_pack, .interior = coarse_interior, .exterior = coarse_exterior};
    for (int p = 0; p < 2 && s == TQ_SUCCESS; p++) {
        c.base.parity = p;
        s = tq_stencil_submit(&op->stencil, TQ_STENCIL_FACES, &ops, &c, who);
    }
    return s;
}

/* ---- the even-odd form ------------------------------------------------------------------- */

tq_status tq_mg_coarse_op_prepare_eo(tq_mg_coarse_op *op)
{
    const char *who = "tq_mg_coarse_op_prepare_eo";
    if (!op) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    if (op->hat) return TQ_SUCCESS;
    TQ_CHECK(tq_field_create(op->lat, &op->links->p, &op->hat));
    tq_coarse_args a = coarse_base(op, op->links, op->links, op->links);
    for (int b = 0; b < op->lat->nblocks; b++) {
        /* where the level runs; on CPU workers when a site's matrices would not fit a GPU
         * thread block's shared memory (codelets/mg_cuda.cu) */
        const tq_task_options o = tq_coarse_hat_fits_gpus(op->n) ? tq_mg_cycle_options(op->lat, b) : tq_mg_block_options(op->lat, b);
        for (int p = 0; p < 2; p++) {
            a.parity = p;
            const int rc = tq_task_coarse_hat(&o, &a, tq_field_handle(op->links, b, p), tq_field_handle(op->hat, b, p));
            if (rc) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, rc);
        }
    }
    return TQ_SUCCESS;
}

/* *f converted into a new half-precision field (the old one destroyed). */
static tq_status field_to_half(tq_field **f)
{
    tq_field_params hp = (*f)->p;
    hp.prec = TQ_HALF;
    tq_field *h = NULL;
    TQ_CHECK(tq_field_create((*f)->lat, &hp, &h));
    const tq_status s = tq_blas_copy(h, *f);
    if (s != TQ_SUCCESS) {
        tq_field_destroy(h);
        return s;
    }
    tq_field_destroy(*f);
    *f = h;
    return TQ_SUCCESS;
}

tq_status tq_mg_coarse_op_store_half(tq_mg_coarse_op *op)
{
    if (!op || op->shares_links) return tq_error(TQ_ERR_INVALID_ARG, "tq_mg_coarse_op_store_half: NULL or work copy");
    if (op->links->p.prec == TQ_HALF) return TQ_SUCCESS;
    TQ_CHECK(field_to_half(&op->links));
    return op->hat ? field_to_half(&op->hat) : TQ_SUCCESS;
}

/* Checks a single-parity field of op's vectors; its parity, or -1 with the error set. */
static int vector_parity(const char *who, const tq_mg_coarse_op *op, const tq_field *f, const char *name)
{
    if (!f || f->lat != op->lat || f->p.kind != TQ_FIELD_COARSE || f->p.ndof != op->n || f->nparity != 1 ||
        f->p.prec != op->vec_prec) {
        tq_error(TQ_ERR_MISMATCH, "%s: %s must be a single-parity coarse field of the operator's lattice, %d complex per "
                 "site, in %s", who, name, op->n, tq_precision_name(op->vec_prec));
        return -1;
    }
    return f->parity[0];
}

tq_status tq_mg_coarse_hop_hat(const tq_mg_coarse_op *op, tq_field *out, const tq_field *in)
{
    const char *who = "tq_mg_coarse_hop_hat";
    if (!op || !op->hat) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator or no even-odd form", who);
    const int po = vector_parity(who, op, out, "out"), pi = vector_parity(who, op, in, "in");
    if (po < 0 || pi < 0) return TQ_ERR_MISMATCH;
    if (po == pi) return tq_error(TQ_ERR_MISMATCH, "%s: out and in of the same parity (a hop goes between them)", who);
    coarse_ctx c = {.op = op, .links = op->hat, .out = out, .in_same = NULL, .in_other = in};
    c.base = coarse_base(op, op->hat, out, in);
    c.base.local = 0;
    c.base.parity = po;
    const tq_stencil_ops ops = {.pack = coarse_pack, .interior = coarse_interior, .exterior = coarse_exterior};
    return tq_stencil_submit(&op->stencil, TQ_STENCIL_FACES, &ops, &c, who);
}

double tq_mg_coarse_pc_flops(const tq_mg_coarse_op *op)
{
    const double half = (double)op->lat->local_volume / 2.0;
    return 2.0 * 8.0 * op->n * op->n * 8.0 * half + 4.0 * op->n * half;
}

double tq_mg_coarse_eo_edge_flops(const tq_mg_coarse_op *op)
{
    /* X^-1 on both parities, two hopping terms on half the sites */
    const double n2v = (double)op->n * op->n * 8.0 * (double)op->lat->local_volume;
    return n2v + 2.0 * 8.0 * n2v / 2.0;
}

tq_status tq_mg_coarse_eo_prepare(const tq_mg_coarse_op *op, tq_field *bh, tq_field *yo, tq_field *w, const tq_field *b)
{
    tq_field *be = NULL, *bo = NULL;
    tq_status st = tq_field_parity_view(b, 0, &be);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(b, 1, &bo);
    if (st == TQ_SUCCESS) st = tq_mg_coarse_xinv(op, yo, bo);
    if (st == TQ_SUCCESS) st = tq_mg_coarse_xinv(op, bh, be);
    if (st == TQ_SUCCESS) st = tq_mg_coarse_hop_hat(op, w, yo);
    if (st == TQ_SUCCESS) st = tq_blas_axpy(-1.0, w, bh);
    tq_field_view_release(bo);
    tq_field_view_release(be);
    return st;
}

tq_status tq_mg_coarse_eo_reconstruct(const tq_mg_coarse_op *op, tq_field *x, const tq_field *xe, const tq_field *yo)
{
    tq_field *x0 = NULL, *x1 = NULL;
    tq_status st = tq_field_parity_view(x, 0, &x0);
    if (st == TQ_SUCCESS) st = tq_field_parity_view(x, 1, &x1);
    if (st == TQ_SUCCESS && xe) st = tq_blas_copy(x0, xe);
    if (st == TQ_SUCCESS) st = tq_mg_coarse_hop_hat(op, x1, x0);
    if (st == TQ_SUCCESS) st = tq_blas_xpay(yo, -1.0, x1);
    tq_field_view_release(x1);
    tq_field_view_release(x0);
    return st;
}

tq_status tq_mg_coarse_xinv(const tq_mg_coarse_op *op, tq_field *out, const tq_field *in)
{
    const char *who = "tq_mg_coarse_xinv";
    if (!op || !op->hat) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator or no even-odd form", who);
    const int po = vector_parity(who, op, out, "out"), pi = vector_parity(who, op, in, "in");
    if (po < 0 || pi < 0) return TQ_ERR_MISMATCH;
    if (po != pi || out == in) return tq_error(TQ_ERR_MISMATCH, "%s: out and in must be distinct fields of one parity", who);
    tq_coarse_args a = coarse_base(op, op->hat, out, in);
    a.parity = po;
    a.no_hops = 1;
    for (int mu = 0; mu < 4; mu++) a.split[mu] = 0;   /* every site is the interior's */
    a.nfaces = 0;
    for (int b = 0; b < op->lat->nblocks; b++) {
        const tq_task_options o = tq_mg_cycle_options(op->lat, b);
        /* the other-parity slot is never read: the other parity's X^-1, which the owner holds */
        const int rc = tq_task_coarse_interior(&o, &a, parity_handle(in, b, po), tq_field_handle(op->hat, b, 1 - po),
                                               tq_field_handle(op->hat, b, po), parity_handle(out, b, po));
        if (rc) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, rc);
    }
    return TQ_SUCCESS;
}
