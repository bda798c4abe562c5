/* Wilson-type Dirac operators: the task graph of one hopping-term application (pack faces,
 * interior, exterior per block), the clover term (one task per block and parity), and the
 * operators built from them. */
#include "dirac/dirac_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct tq_dirac {
    const tq_field *gauge;
    tq_lattice *lat;
    tq_dirac_params p;
    /* work fields, made once: a field created per call costs a GPU allocation and a free
     * (which synchronises the device) every time; reusing one only orders the calls that
     * share it. tmp[q]: the intermediate of M_pc on parity q; pc[p]: M_pc in inside
     * M_pc^dag M_pc. */
    tq_field *tmp[2], *pc[2];
    /* face handles, made once for the same reason: faces[b * nfaces + k], k = 2 per split
     * direction (the block's lower face, then its upper face) */
    int nfaces;
    starpu_data_handle_t *faces;
    /* clover operators: A and A^-1 on both parities (NULL for Wilson) */
    tq_field *clover, *clover_inv;
    /* a work copy (tq_internal_dirac_work) shares gauge and clover fields with its parent;
     * a sloppy copy (tq_internal_dirac_sloppy) owns a gauge field in another precision */
    int shares_clover;
    tq_field *owned_gauge;
    /* the sloppy copy of the last mixed-precision solve, kept for the next one (making it
     * converts the gauge field and builds the clover term: seconds at 32^4) */
    tq_dirac *sloppy;
};

static tq_status temp_spinor(const tq_dirac *d, int parity, tq_field **f)
{
    tq_field_params fp = {TQ_FIELD_SPINOR, d->gauge->p.prec, (tq_subset)parity, (tq_recon)0};
    return tq_field_create(d->lat, &fp, f);
}

/* Face handles and work fields of an operator (per copy: solves running at once each use
 * their own, so their task graphs do not serialise on shared work data). */
static tq_status dirac_alloc_work(tq_dirac *d)
{
    const tq_lattice *lat = d->lat;
    d->nfaces = 0;
    for (int mu = 0; mu < 4; mu++)
        if (lat->nb[mu] > 1 || lat->procs[mu] > 1) d->nfaces += 2;
    if (d->nfaces) {
        d->faces = calloc((size_t)lat->nblocks * d->nfaces, sizeof *d->faces);
        if (!d->faces) return TQ_ERR_NOMEM;
        for (int b = 0; b < lat->nblocks; b++) {
            int k = 0;
            for (int mu = 0; mu < 4; mu++) {
                if (!(lat->nb[mu] > 1 || lat->procs[mu] > 1)) continue;
                tq_layout L = tq_layout_make((int)d->gauge->p.prec, 12, 1, tq_face_sites(lat->block, mu));
                size_t site_bytes = (size_t)(tq_layout_bytes(&L) / L.stride);
                for (int side = 0; side < 2; side++)
                    starpu_vector_data_register(&d->faces[b * d->nfaces + k++], -1, 0, (uint32_t)L.stride, site_bytes);
            }
        }
    }
    for (int i = 0; i < 2; i++)
        if (temp_spinor(d, i, &d->tmp[i]) != TQ_SUCCESS || temp_spinor(d, i, &d->pc[i]) != TQ_SUCCESS) return TQ_ERR_NOMEM;
    return TQ_SUCCESS;
}

tq_status tq_dirac_create(const tq_field *gauge, const tq_dirac_params *p, tq_dirac **out)
{
    if (!gauge || !p || !out) return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: NULL argument");
    *out = NULL;
    if (gauge->p.kind != TQ_FIELD_GAUGE)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: the field is not a gauge field");
    if (p->type != TQ_DSLASH_WILSON && p->type != TQ_DSLASH_CLOVER)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: unknown operator type %d", (int)p->type);
    if (p->type == TQ_DSLASH_CLOVER && !isfinite(p->csw))
        return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: c_sw must be finite (got %g)", p->csw);
    if (p->matpc != TQ_MATPC_SYMMETRIC && p->matpc != TQ_MATPC_ASYMMETRIC)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: unknown even-odd form %d", (int)p->matpc);
    if (!(p->kappa > 0.0) || !isfinite(p->kappa))
        return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: kappa must be positive and finite (got %g)", p->kappa);
    const tq_lattice *lat = gauge->lat;
    if (lat->procs[0] * lat->procs[1] * lat->procs[2] * lat->procs[3] > 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_dirac_create: operators across MPI ranks need the face exchange, not built yet");
    tq_dirac *d = calloc(1, sizeof *d);
    if (!d) return tq_error(TQ_ERR_NOMEM, "tq_dirac_create: out of memory");
    d->gauge = gauge;
    d->lat = gauge->lat;
    d->p = *p;
    int all_zero = 1;
    for (int mu = 0; mu < 4; mu++) all_zero &= p->bc[mu] == 0.0;
    if (all_zero) { d->p.bc[0] = d->p.bc[1] = d->p.bc[2] = 1.0; d->p.bc[3] = -1.0; }
    for (int mu = 0; mu < 4; mu++)
        if (d->p.bc[mu] != 1.0 && d->p.bc[mu] != -1.0) {
            free(d);
            return tq_error(TQ_ERR_INVALID_ARG, "tq_dirac_create: boundary factor bc[%d] = %g is not +1 or -1", mu, p->bc[mu]);
        }
    if (dirac_alloc_work(d) != TQ_SUCCESS) {
        tq_dirac_destroy(d);
        return tq_error(TQ_ERR_NOMEM, "tq_dirac_create: cannot create work fields");
    }
    if (p->type == TQ_DSLASH_CLOVER) {
        tq_status st = tq_clover_build(gauge, d->p.kappa, d->p.csw, &d->clover, &d->clover_inv);
        if (st != TQ_SUCCESS) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", tq_last_error());
            tq_dirac_destroy(d);
            return tq_error(st, "tq_dirac_create: %s", msg);
        }
    }
    *out = d;
    return TQ_SUCCESS;
}

void tq_dirac_destroy(tq_dirac *d)
{
    if (!d) return;
    for (int i = 0; i < 2; i++) {
        tq_field_destroy(d->tmp[i]);
        tq_field_destroy(d->pc[i]);
    }
    if (!d->shares_clover) {
        tq_field_destroy(d->clover);
        tq_field_destroy(d->clover_inv);
    }
    if (d->faces) {
        for (int i = 0; i < d->lat->nblocks * d->nfaces; i++) starpu_data_unregister_submit(d->faces[i]);
        free(d->faces);
    }
    tq_field_destroy(d->owned_gauge);
    tq_dirac_destroy(d->sloppy);
    free(d);
}

tq_status tq_internal_dirac_sloppy_cached(const tq_dirac *d, tq_precision prec, tq_recon recon, const tq_dirac **out)
{
    tq_dirac *m = (tq_dirac *)d;   /* the cache is not part of the operator's value */
    if (m->sloppy && m->sloppy->gauge->p.prec == prec && m->sloppy->gauge->p.recon == recon) {
        *out = m->sloppy;
        return TQ_SUCCESS;
    }
    tq_dirac_destroy(m->sloppy);
    m->sloppy = NULL;
    TQ_CHECK(tq_internal_dirac_sloppy(d, prec, recon, &m->sloppy));
    *out = m->sloppy;
    return TQ_SUCCESS;
}

tq_status tq_internal_dirac_work(const tq_dirac *d, tq_dirac **out)
{
    *out = NULL;
    tq_dirac *w = calloc(1, sizeof *w);
    if (!w) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for an operator copy");
    w->gauge = d->gauge;
    w->lat = d->lat;
    w->p = d->p;
    w->clover = d->clover;
    w->clover_inv = d->clover_inv;
    w->shares_clover = 1;
    if (dirac_alloc_work(w) != TQ_SUCCESS) {
        tq_dirac_destroy(w);
        return tq_error(TQ_ERR_NOMEM, "solver: cannot create an operator copy's work fields");
    }
    *out = w;
    return TQ_SUCCESS;
}

tq_status tq_internal_dirac_sloppy(const tq_dirac *d, tq_precision prec, tq_recon recon, tq_dirac **out)
{
    const char *who = "solver: sloppy operator";
    *out = NULL;
    tq_field_params gp = d->gauge->p;
    gp.prec = prec;
    gp.recon = recon;
    tq_field *g = NULL;
    tq_host_gauge hg;
    memset(&hg, 0, sizeof hg);
    TQ_CHECK(tq_field_create(d->lat, &gp, &g));
    tq_status st = tq_host_gauge_alloc(&hg, d->lat->local);
    if (st == TQ_SUCCESS) st = tq_gauge_field_export(d->gauge, &hg);
    if (st == TQ_SUCCESS) st = tq_gauge_field_import(g, &hg);
    tq_host_gauge_free(&hg);
    tq_dirac *s = NULL;
    if (st == TQ_SUCCESS) {
        /* the Wilson part here; the clover term is built from the precise links below */
        tq_dirac_params wp = d->p;
        wp.type = TQ_DSLASH_WILSON;
        st = tq_dirac_create(g, &wp, &s);
    }
    if (st == TQ_SUCCESS) {
        s->owned_gauge = g;
        s->p = d->p;
        g = NULL;
        if (d->clover) st = tq_clover_build_prec(d->gauge, prec, d->p.kappa, d->p.csw, &s->clover, &s->clover_inv);
    }
    if (st != TQ_SUCCESS) {
        char msg[512];
        snprintf(msg, sizeof msg, "%s", tq_last_error());
        tq_dirac_destroy(s);
        tq_field_destroy(g);
        return tq_error(st, "%s: %s", who, msg);
    }
    *out = s;
    return TQ_SUCCESS;
}

/* The handle of block b, parity `parity` of f (which must hold that parity). */
static starpu_data_handle_t parity_handle(const tq_field *f, int b, int parity)
{
    return f->nparity == 2 ? tq_field_handle(f, b, parity) : tq_field_handle(f, b, 0);
}

static int holds_parity(const tq_field *f, int parity)
{
    return f->nparity == 2 || f->parity[0] == parity;
}

static tq_status check_spinor(const char *who, const tq_dirac *d, const tq_field *f, int parity,
                              const char *name)
{
    if (!f) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL %s field", who, name);
    if (f->p.kind != TQ_FIELD_SPINOR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %s is not a color-spinor field", who, name);
    if (f->lat != d->lat)
        return tq_error(TQ_ERR_MISMATCH, "%s: %s is on another lattice than the gauge field", who, name);
    if (f->p.prec != d->gauge->p.prec)
        return tq_error(TQ_ERR_MISMATCH, "%s: %s is %s precision, the gauge field %s (make an operator on a gauge field of the spinor's precision)",
                        who, name, tq_precision_name(f->p.prec), tq_precision_name(d->gauge->p.prec));
    if (!holds_parity(f, parity))
        return tq_error(TQ_ERR_MISMATCH, "%s: %s does not hold the %s sites", who, name, parity ? "odd" : "even");
    return TQ_SUCCESS;
}

/* The arguments every task of one hopping-term application shares (the fields' layouts,
 * block extents, split directions); returns the number of split directions. */
static int hopping_args(const tq_dirac *d, const tq_field *out, const tq_field *in, int dagger, double a,
                        const tq_field *x, const tq_field *K, tq_dslash_wilson_args *base)
{
    const tq_lattice *lat = d->lat;
    memset(base, 0, sizeof *base);
    int nsplit = 0;
    for (int mu = 0; mu < 4; mu++) {
        base->B[mu] = lat->block[mu];
        base->split[mu] = lat->nb[mu] > 1 || lat->procs[mu] > 1;
        nsplit += base->split[mu];
    }
    base->cb = lat->block_cb;
    base->dagger = dagger ? 1 : 0;
    base->recon = (int)d->gauge->p.recon;
    base->a = a;
    base->xpay = x != NULL;
    base->L_in = in->layout;
    base->L_out = out->layout;
    base->L_x = x ? x->layout : out->layout;
    base->L_gauge = d->gauge->layout;
    base->clover = K != NULL;
    base->L_clover = K ? K->layout : out->layout;
    for (int mu = 0; mu < 4; mu++)
        base->L_face[mu] = tq_layout_make((int)in->p.prec, 12, 1, tq_face_sites(base->B, mu));
    return nsplit;
}

/* Block b's coordinates in the block grid, and the boundary phases of its hops. */
static void block_phases(const tq_dirac *d, int b, tq_dslash_wilson_args *ia, int bcoord[4])
{
    const tq_lattice *lat = d->lat;
    int r = b;
    for (int mu = 0; mu < 4; mu++) { bcoord[mu] = r % lat->nb[mu]; r /= lat->nb[mu]; }
    for (int mu = 0; mu < 4; mu++) {
        int lo = bcoord[mu] == 0 && lat->coords[mu] == 0;
        int hi = bcoord[mu] == lat->nb[mu] - 1 && lat->coords[mu] == lat->procs[mu] - 1;
        ia->phase_lo[mu] = lo ? d->p.bc[mu] : 1.0;
        ia->phase_hi[mu] = hi ? d->p.bc[mu] : 1.0;
    }
}

/* Submits out = a D in (+ x), or out = a K D in (+ x) with the clover term K (a clover
 * field of the operator: the interior and exterior kernels apply it to each site's hopping
 * sum before it leaves registers), on parity `parity`: per block a pack task (when the
 * lattice is split into blocks), an interior task and an exterior task; the operator's
 * face handles are what StarPU moves between the memories of the blocks' workers. */
static tq_status hopping_ke(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                            int parity, int dagger, double a, const tq_field *x, const tq_field *K,
                            const tq_dirac_epilogue *e)
{
    const tq_task_options opt = tq_internal_task_options();
    const tq_lattice *lat = d->lat;
    const int q = 1 - parity;
    tq_dslash_wilson_args base;
    const int nsplit = hopping_args(d, out, in, dagger, a, x, K, &base);
    if (e) base.epi = e->args;

    const int nb = lat->nblocks, nf = 2 * nsplit;
    starpu_data_handle_t *faces = d->faces;
    tq_status st = TQ_SUCCESS;
    int ret = 0;
    /* faces first: they gate the neighbours' exterior work */
    for (int b = 0; b < nb && nf && !ret; b++) {
        tq_dslash_wilson_args pa = base;
        pa.parity = q;
        ret = tq_task_dslash_wilson_pack(&opt, &pa, parity_handle(in, b, q), tq_field_handle(d->gauge, b, q),
                                  faces + (size_t)b * nf, nf);
    }
    for (int b = 0; b < nb && !ret; b++) {
        tq_dslash_wilson_args ia = base;
        ia.parity = parity;
        int bcoord[4];
        block_phases(d, b, &ia, bcoord);
        starpu_data_handle_t ho = parity_handle(out, b, parity);
        starpu_data_handle_t hx = x ? (x == out ? ho : parity_handle(x, b, parity)) : NULL;
        ia.x_separate = hx && hx != ho;
        starpu_data_handle_t hk = K ? tq_field_handle(K, b, parity) : NULL;
        starpu_data_handle_t hw = e && e->w ? parity_handle(e->w, b, parity) : NULL;
        starpu_data_handle_t hu = e && e->u ? parity_handle(e->u, b, parity) : NULL;
        ia.epi.w_is_x = hw && hw == hx;
        ret = tq_task_dslash_wilson_interior(&opt, &ia, parity_handle(in, b, q), tq_field_handle(d->gauge, b, parity),
                                      tq_field_handle(d->gauge, b, q), ho, hx, hk, hw, hu, e ? e->scalars : NULL,
                                      e ? e->snapshot : NULL);
        if (ret || !nf) continue;
        /* the faces this block reads: from the block below (its upper face) and from the
         * block above (its lower face), per split direction */
        starpu_data_handle_t from[8];
        int k = 0, slot = 0;
        for (int mu = 0; mu < 4; mu++) {
            if (!base.split[mu]) continue;
            int stride = 1;
            for (int nu = 0; nu < mu; nu++) stride *= lat->nb[nu];
            int below = b + ((bcoord[mu] + lat->nb[mu] - 1) % lat->nb[mu] - bcoord[mu]) * stride;
            int above = b + ((bcoord[mu] + 1) % lat->nb[mu] - bcoord[mu]) * stride;
            from[k++] = faces[(size_t)below * nf + slot + 1];
            from[k++] = faces[(size_t)above * nf + slot];
            slot += 2;
        }
        ret = tq_task_dslash_wilson_exterior(&opt, &ia, parity_handle(in, b, q), tq_field_handle(d->gauge, b, parity),
                                      tq_field_handle(d->gauge, b, q), ho, hx, hk, from, nf);
    }
    if (ret) st = tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    return st;
}

static tq_status hopping_k(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                           int parity, int dagger, double a, const tq_field *x, const tq_field *K)
{
    return hopping_ke(who, d, out, in, parity, dagger, a, x, K, NULL);
}

/* out = a D in (+ x) on parity `parity` (hopping_k without a clover term). */
static tq_status hopping(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                         int parity, int dagger, double a, const tq_field *x)
{
    return hopping_k(who, d, out, in, parity, dagger, a, x, NULL);
}

/* Submits out = K in (or out = x + a K in when x) on parity `parity`, K = A or A^-1: one
 * task per block. in may be out (in place); x must differ from out. g (or NULL): the guard
 * of a solver's fused application (matpc_tasks); the tasks do nothing when it is shut. */
static tq_status clover_term_g(const char *who, const tq_dirac *d, int inverse, tq_field *out,
                               const tq_field *in, int parity, double a, const tq_field *x,
                               const tq_dirac_epilogue *g)
{
    const tq_task_options opt = tq_internal_task_options();
    const tq_field *K = inverse ? d->clover_inv : d->clover;
    tq_clover_args ca;
    memset(&ca, 0, sizeof ca);
    ca.cb = d->lat->block_cb;
    ca.xpay = x != NULL;
    ca.a = a;
    ca.L_clover = K->layout;
    ca.L_in = in->layout;
    ca.L_out = out->layout;
    ca.L_x = x ? x->layout : out->layout;
    ca.guard = g ? g->args.guard : 0;
    for (int b = 0; b < d->lat->nblocks; b++) {
        starpu_data_handle_t ho = parity_handle(out, b, parity), hi = parity_handle(in, b, parity);
        ca.in_place = hi == ho;
        int ret = tq_task_clover(&opt, &ca, tq_field_handle(K, b, parity), hi, ho, x ? parity_handle(x, b, parity) : NULL,
                                 g ? g->scalars : NULL);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    }
    return TQ_SUCCESS;
}

/* clover_term_g unguarded. */
static tq_status clover_term(const char *who, const tq_dirac *d, int inverse, tq_field *out,
                             const tq_field *in, int parity, double a, const tq_field *x)
{
    return clover_term_g(who, d, inverse, out, in, parity, a, x, NULL);
}

static tq_status check_parity(const char *who, tq_subset parity)
{
    if (parity != TQ_EVEN && parity != TQ_ODD)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: parity must be TQ_EVEN or TQ_ODD", who);
    return TQ_SUCCESS;
}

static tq_status dslash_common(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                               tq_subset parity, int dagger, double a, const tq_field *x)
{
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, in, 1 - (int)parity, "in"));
    if (x) TQ_CHECK(check_spinor(who, d, x, (int)parity, "x"));
    if (out == in && out->nparity == 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    return hopping(who, d, out, in, (int)parity, dagger, a, x);
}

tq_status tq_dslash(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity, int dagger)
{
    return dslash_common("tq_dslash", d, out, in, parity, dagger, 1.0, NULL);
}

/* The bare-kernel reference of the task-graph overhead measurement (tq_internal.h). */
tq_status tq_internal_dslash_bare(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                  int niter, double *seconds)
{
    const char *who = "tq_internal_dslash_bare";
    if (!d || !seconds || niter <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: bad argument", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, in, 1 - (int)parity, "in"));
    if (d->lat->nblocks != 1 || d->lat->procs[0] * d->lat->procs[1] * d->lat->procs[2] * d->lat->procs[3] != 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: needs one block on one process (the interior kernel alone)", who);
#ifdef TQ_HAVE_CUDA
    int worker = -1;
    if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, &worker, 1) < 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: no CUDA worker", who);
    const unsigned node = starpu_worker_get_memory_node(worker);
    const int p = (int)parity, q = 1 - p;
    tq_dslash_wilson_args a;
    hopping_args(d, out, in, 0, 1.0, NULL, NULL, &a);
    int bcoord[4];
    block_phases(d, 0, &a, bcoord);
    a.parity = p;
    /* in, gauge of both parities, out: brought to the GPU and held there while the kernels run */
    starpu_data_handle_t h[4] = {parity_handle(in, 0, q), tq_field_handle(d->gauge, 0, p),
                                 tq_field_handle(d->gauge, 0, q), parity_handle(out, 0, p)};
    const enum starpu_data_access_mode mode[4] = {STARPU_R, STARPU_R, STARPU_R, STARPU_W};
    void *ptr[4] = {NULL, NULL, NULL, NULL};
    int held = 0, err = -1;
    while (held < 4 && starpu_data_acquire_on_node(h[held], (int)node, mode[held]) == 0) {
        ptr[held] = starpu_data_handle_to_pointer(h[held], node);
        held++;
    }
    if (held == 4 && ptr[0] && ptr[1] && ptr[2] && ptr[3]) {
        starpu_cuda_set_device((unsigned)starpu_worker_get_devid(worker));
        err = tq_dslash_wilson_interior_bare_cuda(&a, ptr[0], ptr[1], ptr[2], NULL, ptr[3], niter, seconds);
    }
    while (held > 0) { held--; starpu_data_release_on_node(h[held], (int)node); }
    if (err) return tq_error(TQ_ERR_RUNTIME, "%s: kernel launch failed (%d)", who, err);
    return TQ_SUCCESS;
#else
    (void)niter;
    return tq_error(TQ_ERR_UNSUPPORTED, "%s: built without CUDA", who);
#endif
}

tq_status tq_dirac_dslash(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity, int dagger)
{
    const char *who = "tq_dirac_dslash";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, in, 1 - (int)parity, "in"));
    if (out == in && out->nparity == 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    return hopping_k(who, d, out, in, (int)parity, dagger, 1.0, NULL, d->clover ? d->clover_inv : NULL);
}

tq_status tq_dslash_xpay(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger, double a, const tq_field *x)
{
    if (!x) return tq_error(TQ_ERR_INVALID_ARG, "tq_dslash_xpay: NULL x field");
    return dslash_common("tq_dslash_xpay", d, out, in, parity, dagger, a, x);
}

void tq_internal_chain_begin(int on)
{
    if (on) {
        const tq_task_options opt = tq_internal_task_options();
        tq_task_chain_begin(&opt);
    }
}

tq_status tq_internal_chain_end(int on, tq_status st, const char *who)
{
    if (!on) return st;
    const int ret = tq_task_chain_end();
    return ret && st == TQ_SUCCESS ? tq_error(TQ_ERR_RUNTIME, "%s: submitting a chain of tasks failed (%d)", who, ret) : st;
}

tq_status tq_dirac_mat(const tq_dirac *d, tq_field *out, const tq_field *in, int dagger)
{
    const char *who = "tq_dirac_mat";
    if (!d || !out || !in) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (out->nparity != 2 || in->nparity != 2)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in must be full (both-parity) fields", who);
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    TQ_CHECK(check_spinor(who, d, out, 0, "out"));
    TQ_CHECK(check_spinor(who, d, in, 0, "in"));
    /* on one block the operator's kernels run one after another anyway: as one chain task
     * they pay StarPU's task-to-task gap once per application */
    tq_internal_chain_begin(tq_internal_dirac_can_fuse(d));
    tq_status st = TQ_SUCCESS;
    for (int p = 0; p < 2 && st == TQ_SUCCESS; p++) {
        if (!d->clover) {
            st = hopping(who, d, out, in, p, dagger, -d->p.kappa, in);
            continue;
        }
        /* A is Hermitian: M^dag = A - kappa D^dag */
        st = clover_term(who, d, 0, out, in, p, 0.0, NULL);
        if (st == TQ_SUCCESS) st = hopping(who, d, out, in, p, dagger, -d->p.kappa, out);
    }
    return tq_internal_chain_end(tq_internal_dirac_can_fuse(d), st, who);
}

/* M_pc (or M_pc^dag) in on parity p. The last kernel is always a hopping term with xpay; an
 * epilogue e goes there, and with TQ_EPI_AXPY_NORM2 that kernel updates e->r instead of
 * writing out (out may still serve as the clover term's intermediate). A guarded epilogue
 * (a solver's iteration queued behind its stopping test) guards the kernels before it too
 * (g): past convergence the application costs launches, not stencils. */
static tq_status matpc_tasks(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in, int p,
                             int dagger, const tq_dirac_epilogue *e)
{
    const int q = 1 - p;
    const double k2 = d->p.kappa * d->p.kappa;
    tq_field *last = e && e->args.kind == TQ_EPI_AXPY_NORM2 ? e->r : out;
    tq_dirac_epilogue guard;
    const tq_dirac_epilogue *g = NULL;
    if (e && e->args.guard > 0) {
        memset(&guard, 0, sizeof guard);
        guard.args.guard = e->args.guard;
        guard.scalars = e->scalars;
        g = &guard;
    }
    if (!d->clover) {
        /* M_pc = 1 - kappa^2 D_pq D_qp; the dagger applies D^dag in both hops */
        TQ_CHECK(hopping_ke(who, d, d->tmp[q], in, q, dagger, 1.0, NULL, NULL, g));
        return hopping_ke(who, d, last, d->tmp[q], p, dagger, -k2, in, NULL, e);
    }
    if (d->p.matpc == TQ_MATPC_ASYMMETRIC) {
        /* A_pp - kappa^2 D_pq A_qq^-1 D_qp (dagger: D^dag in both hops, A Hermitian) */
        TQ_CHECK(hopping_ke(who, d, d->tmp[q], in, q, dagger, 1.0, NULL, d->clover_inv, g));
        TQ_CHECK(clover_term_g(who, d, 0, out, in, p, 0.0, NULL, g));
        return hopping_ke(who, d, last, d->tmp[q], p, dagger, -k2, out, NULL, e);
    }
    if (!dagger) {
        /* 1 - kappa^2 A_pp^-1 D_pq A_qq^-1 D_qp: two fused hopping + clover applications */
        TQ_CHECK(hopping_ke(who, d, d->tmp[q], in, q, 0, 1.0, NULL, d->clover_inv, g));
        return hopping_ke(who, d, last, d->tmp[q], p, 0, -k2, in, d->clover_inv, e);
    }
    /* dagger: 1 - kappa^2 D^dag_pq A_qq^-1 D^dag_qp A_pp^-1 */
    TQ_CHECK(clover_term_g(who, d, 1, d->tmp[p], in, p, 0.0, NULL, g));
    TQ_CHECK(hopping_ke(who, d, d->tmp[q], d->tmp[p], q, 1, 1.0, NULL, d->clover_inv, g));
    return hopping_ke(who, d, last, d->tmp[q], p, 1, -k2, in, NULL, e);
}

static tq_status matpc(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in, int p,
                       int dagger, const tq_dirac_epilogue *e)
{
    tq_internal_chain_begin(tq_internal_dirac_can_fuse(d));   /* as in tq_dirac_mat */
    return tq_internal_chain_end(tq_internal_dirac_can_fuse(d), matpc_tasks(who, d, out, in, p, dagger, e), who);
}

tq_status tq_dirac_matpc(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger)
{
    const char *who = "tq_dirac_matpc";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, in, (int)parity, "in"));
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    return matpc(who, d, out, in, (int)parity, dagger, NULL);
}

tq_field *tq_internal_dirac_work_field(const tq_dirac *d, int parity)
{
    return d->tmp[parity];
}

int tq_internal_dirac_can_fuse(const tq_dirac *d)
{
    const tq_lattice *lat = d->lat;
    return lat->nblocks == 1 && d->nfaces == 0 && lat->procs[0] * lat->procs[1] * lat->procs[2] * lat->procs[3] == 1;
}

tq_status tq_internal_dirac_matpc_epilogue(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                           int dagger, const tq_dirac_epilogue *e)
{
    const char *who = "tq_dirac_matpc (fused reduction)";
    if (!d || !e) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, in, (int)parity, "in"));
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    if (!tq_internal_dirac_can_fuse(d))
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: needs one block on one process", who);
    /* the kernels built: after M_pc |y|^2 (CG), out = w + c y or the four products
     * (BiCGstab on M_pc); after M_pc^dag r += c y (CG on M_pc^dag M_pc) */
    const int kind = e->args.kind;
    if (!((kind == TQ_EPI_AXPY_NORM2) == (dagger != 0) && kind >= TQ_EPI_NORM2 && kind <= TQ_EPI_BICGSTAB_T))
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: epilogue %d with dagger %d", who, kind, dagger);
    if (kind == TQ_EPI_AXPY_NORM2) {
        TQ_CHECK(check_spinor(who, d, e->r, (int)parity, "r"));
        if (e->r == in || e->r == out) return tq_error(TQ_ERR_INVALID_ARG, "%s: r is in or out", who);
    }
    if (tq_epilogue_reads_w(kind)) {
        TQ_CHECK(check_spinor(who, d, e->w, (int)parity, "w"));
        if (e->w == out) return tq_error(TQ_ERR_INVALID_ARG, "%s: w is out", who);
    }
    if (tq_epilogue_reads_u(kind)) {
        TQ_CHECK(check_spinor(who, d, e->u, (int)parity, "u"));
        if (e->u == out) return tq_error(TQ_ERR_INVALID_ARG, "%s: u is out", who);
    }
    return matpc(who, d, out, in, (int)parity, dagger, e);
}

tq_status tq_dirac_matpc_dag_matpc(const tq_dirac *d, tq_field *out, const tq_field *in,
                                   tq_subset parity)
{
    const char *who = "tq_dirac_matpc_dag_matpc";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, in, (int)parity, "in"));
    if (in == d->pc[parity] || out == d->pc[parity])
        return tq_error(TQ_ERR_INVALID_ARG, "%s: a field is the operator's work field", who);
    tq_internal_chain_begin(tq_internal_dirac_can_fuse(d));   /* as in tq_dirac_mat */
    tq_status st = tq_dirac_matpc(d, d->pc[parity], in, parity, 0);
    if (st == TQ_SUCCESS) st = tq_dirac_matpc(d, out, d->pc[parity], parity, 1);
    return tq_internal_chain_end(tq_internal_dirac_can_fuse(d), st, who);
}

tq_status tq_dirac_clover(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                          int inverse)
{
    const char *who = "tq_dirac_clover";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    if (!d->clover) return tq_error(TQ_ERR_INVALID_ARG, "%s: the operator has no clover term (Wilson)", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, in, (int)parity, "in"));
    return clover_term(who, d, inverse ? 1 : 0, out, in, (int)parity, 0.0, NULL);
}

/* Even-odd source: with M = [[A_pp, -kappa D_pq], [-kappa D_qp, A_qq]], eliminating parity q
 * gives (A_pp - kappa^2 D_pq A_qq^-1 D_qp) x_p = b_p + kappa D_pq A_qq^-1 b_q; the symmetric
 * form multiplies both sides by A_pp^-1. Wilson: A = 1. */
tq_status tq_dirac_prepare(const tq_dirac *d, tq_field *out, const tq_field *b, tq_subset parity)
{
    const char *who = "tq_dirac_prepare";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(check_spinor(who, d, b, 0, "b"));
    if (b->nparity != 2) return tq_error(TQ_ERR_INVALID_ARG, "%s: b must be a full (both-parity) field", who);
    if (out == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and b are the same field", who);
    const int p = (int)parity, q = 1 - p;
    if (!d->clover) return hopping(who, d, out, b, p, 0, d->p.kappa, b);
    TQ_CHECK(clover_term(who, d, 1, d->tmp[q], b, q, 0.0, NULL));
    TQ_CHECK(hopping(who, d, out, d->tmp[q], p, 0, d->p.kappa, b));
    if (d->p.matpc == TQ_MATPC_SYMMETRIC) TQ_CHECK(clover_term(who, d, 1, out, out, p, 0.0, NULL));
    return TQ_SUCCESS;
}

/* Full solution from the even-odd one: x_q = A_qq^-1 (b_q + kappa D_qp x_p), x_p = x_pc. */
tq_status tq_dirac_reconstruct(const tq_dirac *d, tq_field *x, const tq_field *x_pc,
                               const tq_field *b, tq_subset parity)
{
    const tq_task_options opt = tq_internal_task_options();
    const char *who = "tq_dirac_reconstruct";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(check_parity(who, parity));
    TQ_CHECK(check_spinor(who, d, x, 0, "x"));
    TQ_CHECK(check_spinor(who, d, x_pc, (int)parity, "x_pc"));
    TQ_CHECK(check_spinor(who, d, b, 0, "b"));
    if (x->nparity != 2 || b->nparity != 2)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b must be full (both-parity) fields", who);
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    const int p = (int)parity, q = 1 - p;
    if (x_pc != x) {
        tq_blas_args ba;
        memset(&ba, 0, sizeof ba);
        ba.op = TQ_OP_COPY;
        ba.L[0] = x_pc->layout;
        ba.L[1] = x->layout;
        for (int blk = 0; blk < d->lat->nblocks; blk++) {
            starpu_data_handle_t h[2] = {parity_handle(x_pc, blk, p), parity_handle(x, blk, p)};
            int ret = tq_task_blas(&opt, &ba, h, NULL, NULL, NULL);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    }
    TQ_CHECK(hopping(who, d, x, x_pc, q, 0, d->p.kappa, b));
    if (d->clover) TQ_CHECK(clover_term(who, d, 1, x, x, q, 0.0, NULL));
    return TQ_SUCCESS;
}

const tq_field *tq_internal_dirac_gauge(const tq_dirac *d) { return d->gauge; }
const tq_dirac_params *tq_internal_dirac_params(const tq_dirac *d) { return &d->p; }
