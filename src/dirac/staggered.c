/* The improved staggered hopping term (issue 36; src/dirac/staggered.h): its links, with
 * each site's backward links stored beside its forward ones (faces then carry vectors
 * only), and its application through the generic stencil layer, per output parity a pack,
 * interior and exterior task per block (codelets/staggered.c). May call: src/core, tasks/. */
#include "dirac/staggered.h"
#include "core/tq_internal.h"
#include "core/placement.h"
#include "kernels/su3.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const dir_name = "xyzt";

/* The links field's host array: per site and direction V_mu(x), V_mu(x-mu)^dag, W_mu(x),
 * W_mu(x-3mu)^dag (kernels/staggered_site.h's TQ_KS_MAT). */
static double *site_links(const tq_lattice *lat, const double *fat, const double *lng)
{
    const int *L = lat->local;
    const int64_t vol = lat->local_volume;
    double *h = malloc(sizeof(double) * 2 * TQ_KS_LINK_NDOF * (size_t)vol);
    if (!h) return NULL;
    for (int64_t s = 0; s < vol; s++) {
        int x[4];
        int64_t r = s;
        for (int mu = 0; mu < 4; mu++) x[mu] = (int)(r % L[mu]), r /= L[mu];
        double *u = h + 2 * TQ_KS_LINK_NDOF * s;
        for (int mu = 0; mu < 4; mu++) {
            memcpy(u + 18 * TQ_KS_MAT(mu, TQ_KS_FAT), fat + (s * 4 + mu) * 18, 18 * sizeof(double));
            memcpy(u + 18 * TQ_KS_MAT(mu, TQ_KS_LONG), lng + (s * 4 + mu) * 18, 18 * sizeof(double));
            for (int h3 = 1; h3 <= 3; h3 += 2) {
                int y[4] = {x[0], x[1], x[2], x[3]};
                y[mu] = ((y[mu] - h3) % L[mu] + L[mu]) % L[mu];
                const int64_t t = (((int64_t)y[3] * L[2] + y[2]) * L[1] + y[1]) * L[0] + y[0];
                tq_su3_adjoint(u + 18 * TQ_KS_MAT(mu, h3 == 1 ? TQ_KS_FAT_BACK : TQ_KS_LONG_BACK), (h3 == 1 ? fat : lng) + (t * 4 + mu) * 18);
            }
        }
    }
    return h;
}

/* The checks both ways of making an operator share, then its links field and stencil. */
static tq_status op_new(const char *who, tq_lattice *lat, tq_precision prec, tq_ks_op **out)
{
    if (prec != TQ_DOUBLE && prec != TQ_SINGLE && prec != TQ_HALF)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: precision %d: double, single or half", who, (int)prec);
    for (int mu = 0; mu < 4; mu++)
        if (lat->nb[mu] > 1 && lat->block[mu] < TQ_KS_DEPTH)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: block extent %d in %c is split but less than the %d layers the Naik "
                            "term reaches", who, lat->block[mu], dir_name[mu], TQ_KS_DEPTH);
    tq_ks_op *op = calloc(1, sizeof *op);
    if (!op) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    op->lat = lat;
    op->prec = prec;
    tq_field_params lp = {TQ_FIELD_COARSE, prec, TQ_FULL, (tq_recon)0, TQ_KS_LINK_NDOF};
    tq_status s = tq_field_create(lat, &lp, &op->links);
    if (s == TQ_SUCCESS) s = tq_stencil_create(lat, TQ_KS_DEPTH, (int)prec, 6, &op->stencil);
    /* faces between GPUs of this process (or of the ranks of one node) go straight into
     * the reader's memory: the pack and exterior codelets follow face_sync.h */
    if (s == TQ_SUCCESS && tq_stencil_use_peer_faces(&op->stencil) < 0)
        s = tq_error(TQ_ERR_NOMEM, "%s: out of memory for the peer faces", who);
    if (s != TQ_SUCCESS) {
        tq_ks_op_destroy(op);
        return s;
    }
    *out = op;
    return TQ_SUCCESS;
}

tq_status tq_ks_op_create(tq_lattice *lat, const double *fat, const double *lng, tq_precision prec, tq_ks_op **out)
{
    const char *who = "tq_ks_op_create";
    if (!lat || !fat || !lng || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    /* the backward links of a rank's lower boundary are its neighbour's (no link halo yet) */
    if (tq_lattice_nprocs(lat) > 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: precomputed fat and long links on one rank only so far (this lattice has "
                        "%d; build them from thin links instead)", who, tq_lattice_nprocs(lat));
    tq_ks_op *op = NULL;
    TQ_CHECK(op_new(who, lat, prec, &op));
    double *h = site_links(lat, fat, lng);
    tq_status s = h ? tq_field_import(op->links, h) : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    free(h);
    if (s != TQ_SUCCESS) {
        tq_ks_op_destroy(op);
        return s;
    }
    *out = op;
    return TQ_SUCCESS;
}

/* The operator's links from whole-lattice links (thin: the API's layout, this rank's sites
 * being the whole lattice) by the build tasks, a task per block and parity, with the path
 * coefficients c and boundary factors bc. */
static tq_status build_links(const char *who, tq_ks_op *op, starpu_data_handle_t thin, const double c[TQ_KS_NCOEFF],
                             const double bc[4])
{
    const tq_lattice *lat = op->lat;
    tq_ks_build_args a;
    memset(&a, 0, sizeof a);
    memcpy(a.dims, lat->dims, sizeof a.dims);
    memcpy(a.block, lat->block, sizeof a.block);
    memcpy(a.bc, bc, sizeof a.bc);
    memcpy(a.c, c, sizeof a.c);
    a.cb = lat->block_cb;
    a.L = op->links->layout;
    for (int b = 0; b < lat->nblocks; b++) {
        tq_block_grid_coords(lat, b, a.origin);
        for (int mu = 0; mu < 4; mu++) a.origin[mu] *= lat->block[mu];
        for (int p = 0; p < 2; p++) {
            a.parity = p;
            const tq_task_options o = tq_internal_block_options(lat, b);
            const int rc = tq_task_ks_build(&o, &a, thin, tq_field_handle(op->links, b, p));
            if (rc) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, rc);
        }
    }
    return TQ_SUCCESS;
}

/* Registers the whole lattice's links (4 x 18 doubles per site, every rank holding all of
 * them) as a StarPU vector of this rank's. */
static starpu_data_handle_t register_links(const tq_lattice *lat, const double *links)
{
    starpu_data_handle_t h;
    starpu_vector_data_register(&h, STARPU_MAIN_RAM, (uintptr_t)links, (uint32_t)(tq_volume4(lat->dims) * 4),
                                18 * sizeof(double));
    return h;
}

tq_status tq_ks_op_create_asqtad(tq_lattice *lat, const double *thin, double u0, const double bc[4], tq_precision prec,
                                 tq_ks_op **out)
{
    const char *who = "tq_ks_op_create_asqtad";
    if (!lat || !thin || !bc || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    if (!(u0 > 0) || !(u0 <= 1.5)) return tq_error(TQ_ERR_INVALID_ARG, "%s: tadpole factor u0 = %g (0 < u0, about 1)", who, u0);
    tq_ks_op *op = NULL;
    TQ_CHECK(op_new(who, lat, prec, &op));
    /* MILC's asqtad coefficients for thin links without phases (doc/conventions.md), a
     * path of L links weighted by u0^-(L-1) */
    const double u2 = u0 * u0, u4 = u2 * u2;
    double c[TQ_KS_NCOEFF];
    c[TQ_KS_C1] = 5.0 / 8.0;
    c[TQ_KS_NAIK] = -1.0 / 24.0 / u2;
    c[TQ_KS_C3] = 1.0 / 16.0 / u2;
    c[TQ_KS_C5] = 1.0 / 64.0 / u4;
    c[TQ_KS_C7] = 1.0 / 384.0 / (u4 * u2);
    c[TQ_KS_LEPAGE] = -1.0 / 16.0 / u4;
    starpu_data_handle_t hl = register_links(lat, thin);
    const tq_status s = build_links(who, op, hl, c, bc);
    starpu_data_unregister(hl);   /* waits for the build tasks */
    if (s != TQ_SUCCESS) {
        tq_ks_op_destroy(op);
        return s;
    }
    *out = op;
    return TQ_SUCCESS;
}

tq_status tq_ks_op_create_hisq(tq_lattice *lat, const double *thin, double eps, const double bc[4], tq_precision prec,
                               tq_ks_op **out)
{
    const char *who = "tq_ks_op_create_hisq";
    if (!lat || !thin || !bc || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    if (!(fabs(eps) < 1.0))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: Naik epsilon %g (|eps| < 1; 0 for light quarks)", who, eps);
    tq_ks_op *op = NULL;
    TQ_CHECK(op_new(who, lat, prec, &op));
    const int64_t vol = tq_volume4(lat->dims), slice = vol / lat->dims[3];
    double *w = malloc(sizeof(double) * 72 * (size_t)vol);
    if (!w) {
        tq_ks_op_destroy(op);
        return tq_error(TQ_ERR_NOMEM, "%s: out of memory (the first level's links)", who);
    }
    /* level 1: W = fat7 links projected onto U(3), a task per time slice into its part of w;
     * every rank makes all of w (its blocks' second level reads W around them), on the
     * owners of its blocks in turn */
    int mine[64], nmine = 0;
    for (int b = 0; b < lat->nblocks && nmine < 64; b++)
        if (tq_block_is_local(lat, b)) mine[nmine++] = b;
    tq_ks_smear_args a;
    memset(&a, 0, sizeof a);
    memcpy(a.b.dims, lat->dims, sizeof a.b.dims);
    a.b.c[TQ_KS_C1] = 1.0 / 8.0;
    a.b.c[TQ_KS_C3] = 1.0 / 16.0;
    a.b.c[TQ_KS_C5] = 1.0 / 64.0;
    a.b.c[TQ_KS_C7] = 1.0 / 384.0;
    a.count = slice;
    starpu_data_handle_t hu = register_links(lat, thin), hw = register_links(lat, w);
    struct starpu_data_filter f = {.filter_func = starpu_vector_filter_block, .nchildren = (unsigned)lat->dims[3]};
    starpu_data_partition(hw, &f);
    tq_status s = TQ_SUCCESS;
    for (int t = 0; t < lat->dims[3] && s == TQ_SUCCESS; t++) {
        a.first = t * slice;
        const tq_task_options o = tq_internal_block_options(lat, mine[t % nmine]);
        const int rc = tq_task_ks_hisq_w(&o, &a, hu, starpu_data_get_sub_data(hw, 1, t));
        if (rc) s = tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, rc);
    }
    starpu_data_unpartition(hw, STARPU_MAIN_RAM);   /* waits for them */
    starpu_data_unregister(hu);
    /* level 2: the asqtad-like links of W, the Lepage term doubled, no tadpole factor, the
     * Naik epsilon on the one-link and Naik terms (doc/conventions.md) */
    double c[TQ_KS_NCOEFF];
    c[TQ_KS_C1] = 1.0 + eps / 8.0;
    c[TQ_KS_NAIK] = -(1.0 + eps) / 24.0;
    c[TQ_KS_C3] = 1.0 / 16.0;
    c[TQ_KS_C5] = 1.0 / 64.0;
    c[TQ_KS_C7] = 1.0 / 384.0;
    c[TQ_KS_LEPAGE] = -1.0 / 8.0;
    if (s == TQ_SUCCESS) s = build_links(who, op, hw, c, bc);
    starpu_data_unregister(hw);   /* waits for the build tasks */
    free(w);
    if (s != TQ_SUCCESS) {
        tq_ks_op_destroy(op);
        return s;
    }
    *out = op;
    return TQ_SUCCESS;
}

tq_status tq_ks_op_copy(const tq_ks_op *op, tq_precision prec, tq_ks_op **out)
{
    const char *who = "tq_ks_op_copy";
    if (!op || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    tq_ks_op *c = NULL;
    TQ_CHECK(op_new(who, op->lat, prec, &c));
    const tq_status s = tq_blas_copy(c->links, op->links);   /* converts the precision */
    if (s != TQ_SUCCESS) {
        tq_ks_op_destroy(c);
        return s;
    }
    *out = c;
    return TQ_SUCCESS;
}

void tq_ks_op_destroy(tq_ks_op *op)
{
    if (!op) return;
    tq_stencil_destroy(&op->stencil);
    tq_field_destroy(op->links);
    free(op);
}

/* Handle of parity p of field f's block b (a full field, or a single-parity one of p). */
static starpu_data_handle_t parity_handle(const tq_field *f, int b, int p)
{
    return tq_field_handle(f, b, f->nparity == 2 ? p : 0);
}

/* One parity's application, for the stencil layer's per-block calls. */
typedef struct ks_ctx {
    const tq_ks_op *op;
    tq_field *out;
    const tq_field *in;
    tq_ks_args base;
} ks_ctx;

/* The pack and exterior tasks' argument: the application's, and the order of the
 * block's peer faces (none: zeroed) */
static tq_ks_face_args face_args(const tq_ks_args *base, const tq_face_sync *sync)
{
    tq_ks_face_args fa;
    memset(&fa, 0, sizeof fa);
    fa.a = *base;
    if (sync) fa.sync = *sync;
    return fa;
}

static int ks_pack(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync)
{
    const ks_ctx *c = (const ks_ctx *)ctx;
    tq_ks_face_args fa = face_args(&c->base, sync);
    fa.a.parity = 1 - c->base.parity;   /* the sites the readers hop to */
    const tq_task_options o = tq_internal_block_options(c->op->lat, b);
    return tq_task_ks_pack(&o, &fa, parity_handle(c->in, b, fa.a.parity), faces);
}

static int ks_interior(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr)
{
    (void)nbr, (void)nnbr;
    const ks_ctx *c = (const ks_ctx *)ctx;
    const int p = c->base.parity;
    const tq_task_options o = tq_internal_block_options(c->op->lat, b);
    return tq_task_ks_interior(&o, &c->base, parity_handle(c->in, b, 1 - p), tq_field_handle(c->op->links, b, p),
                               parity_handle(c->out, b, p));
}

static int ks_exterior(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync,
                       const tq_face_sync *ahead)
{
    (void)ahead;   /* no packing ahead (ops.ahead 0) */
    (void)nfrom;
    const ks_ctx *c = (const ks_ctx *)ctx;
    const int p = c->base.parity;
    const tq_ks_face_args fa = face_args(&c->base, sync);
    const tq_task_options o = tq_internal_block_options(c->op->lat, b);
    return tq_task_ks_exterior(&o, &fa, parity_handle(c->in, b, 1 - p), tq_field_handle(c->op->links, b, p),
                               parity_handle(c->out, b, p), from);
}

/* The arguments every block shares for an application from in into out. */
static ks_ctx ks_context(const tq_ks_op *op, tq_field *out, const tq_field *in)
{
    ks_ctx c = {.op = op, .out = out, .in = in};
    memset(&c.base, 0, sizeof c.base);
    for (int mu = 0; mu < 4; mu++) {
        c.base.B[mu] = op->lat->block[mu];
        c.base.split[mu] = op->stencil.split[mu];
        c.base.L_face[mu] = tq_layout_make((int)op->prec, 6, 1, TQ_KS_DEPTH * tq_stencil_face_sites(&op->stencil, mu));
    }
    c.base.nfaces = op->stencil.nfaces;
    c.base.cb = op->lat->block_cb;
    c.base.L_in = in->layout;
    c.base.L_out = out->layout;
    c.base.L_links = op->links->layout;
    return c;
}

/* Checks a vector of the operator: kind, lattice, precision, and full (or single-parity). */
static tq_status check_vector(const char *who, const tq_ks_op *op, const tq_field *f, const char *name, int full)
{
    if (f->lat != op->lat || f->p.kind != TQ_FIELD_STAGGERED || f->p.prec != op->prec || (full != (f->nparity == 2)))
        return tq_error(TQ_ERR_MISMATCH, "%s: %s must be a %s staggered field of the operator's lattice in %s", who, name,
                        full ? "full" : "single-parity", tq_precision_name(op->prec));
    return TQ_SUCCESS;
}

static const tq_stencil_ops ks_ops = {.pack = ks_pack, .interior = ks_interior, .exterior = ks_exterior};

tq_status tq_ks_dslash(const tq_ks_op *op, tq_field *out, const tq_field *in)
{
    const char *who = "tq_ks_dslash";
    if (!op || !out || !in) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    TQ_CHECK(tq_field_check_compatible(who, out, in, 1));
    TQ_CHECK(check_vector(who, op, in, "in", 1));
    TQ_CHECK(check_vector(who, op, out, "out", 1));
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    ks_ctx c = ks_context(op, out, in);
    tq_status s = TQ_SUCCESS;
    for (int p = 0; p < 2 && s == TQ_SUCCESS; p++) {
        c.base.parity = p;
        s = tq_stencil_submit(&op->stencil, TQ_STENCIL_FACES, &ks_ops, &c, who);
    }
    return s;
}

tq_status tq_ks_hop(const tq_ks_op *op, tq_field *out, const tq_field *in)
{
    const char *who = "tq_ks_hop";
    if (!op || !out || !in) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    TQ_CHECK(check_vector(who, op, in, "in", 0));
    TQ_CHECK(check_vector(who, op, out, "out", 0));
    if (out->parity[0] == in->parity[0])
        return tq_error(TQ_ERR_MISMATCH, "%s: out and in of the same parity (a hop goes between them)", who);
    ks_ctx c = ks_context(op, out, in);
    c.base.parity = out->parity[0];
    return tq_stencil_submit(&op->stencil, TQ_STENCIL_FACES, &ks_ops, &c, who);
}

/* ---- the public API (include/taskqcd.h) -------------------------------------------------- */

tq_status tq_staggered_create_asqtad(tq_lattice *lat, const double *thin, double u0, const double bc[4], tq_precision prec,
                                     tq_staggered **out)
{
    static const double milc_bc[4] = {1, 1, 1, -1};   /* antiperiodic in time */
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_staggered_create_asqtad: call tq_init first");
    return tq_ks_op_create_asqtad(lat, thin, u0, bc ? bc : milc_bc, prec, out);
}

tq_status tq_staggered_create_hisq(tq_lattice *lat, const double *thin, double eps, const double bc[4], tq_precision prec,
                                   tq_staggered **out)
{
    static const double milc_bc[4] = {1, 1, 1, -1};
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_staggered_create_hisq: call tq_init first");
    return tq_ks_op_create_hisq(lat, thin, eps, bc ? bc : milc_bc, prec, out);
}

tq_status tq_staggered_create(tq_lattice *lat, const double *fat, const double *lng, tq_precision prec, tq_staggered **out)
{
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_staggered_create: call tq_init first");
    return tq_ks_op_create(lat, fat, lng, prec, out);
}

void tq_staggered_destroy(tq_staggered *op) { tq_ks_op_destroy(op); }

tq_status tq_staggered_dslash(const tq_staggered *op, tq_field *out, const tq_field *in)
{
    return tq_ks_dslash(op, out, in);
}
