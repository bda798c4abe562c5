/* The Dirac operator object: creation from a gauge field (clover term built there), its
 * work fields and face handles, the copies solvers use (work and sloppy copies), the
 * argument checks every application shares, and the accessors. The operators themselves:
 * dslash_wilson.c (hopping term), clover.c (clover term), dirac_forms.c (M, M_pc, ...). */
#include "dirac/dirac_impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


static tq_status temp_spinor(const tq_dirac *d, int parity, tq_field **f)
{
    tq_field_params fp = {TQ_FIELD_SPINOR, d->gauge->p.prec, (tq_subset)parity, (tq_recon)0, 0};
    return tq_field_create(d->lat, &fp, f);
}

/* Face handles and work fields of an operator (per copy: solves running at once each use
 * their own, so their task graphs do not serialise on shared work data). */
static tq_status dirac_alloc_work(tq_dirac *d)
{
    /* half spinors (12 reals) in the operator's faces' precision, one site deep */
    if (tq_stencil_create(d->lat, 1, tq_dslash_wilson_face_prec((int)d->gauge->p.prec), 12, &d->stencil) != TQ_SUCCESS)
        return TQ_ERR_NOMEM;
    /* faces between this process's GPUs go straight into the reader's memory (the Wilson
     * pack and exterior codelets follow face_sync.h) */
    if (tq_stencil_use_peer_faces(&d->stencil) < 0) return TQ_ERR_NOMEM;
    for (int i = 0; i < 2; i++)
        if (temp_spinor(d, i, &d->tmp[i]) != TQ_SUCCESS || temp_spinor(d, i, &d->pc[i]) != TQ_SUCCESS) return TQ_ERR_NOMEM;
    if (d->lat->nblocks > 1) {
        if (!(d->turn = calloc(1, sizeof *d->turn))) return TQ_ERR_NOMEM;
        for (int i = 0; i < 2; i++)
            if (temp_spinor(d, i, &d->tmp_alt[i]) != TQ_SUCCESS) return TQ_ERR_NOMEM;
    }
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
        tq_field_destroy(d->tmp_alt[i]);
        tq_field_destroy(d->pc[i]);
    }
    free(d->turn);
    if (!d->shares_clover) {
        tq_field_destroy(d->clover);
        tq_field_destroy(d->clover_inv);
    }
    tq_stencil_destroy(&d->stencil);
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
    tq_status st = TQ_SUCCESS;
    if (gp.recon == d->gauge->p.recon) {
        /* the same compression: converted on the blocks' owners (through the host it took
         * 0.1-0.14 s of the first solve at 32^4 on an H200) */
        st = tq_internal_field_convert(g, d->gauge);
    } else {   /* another compression: links rebuilt and compressed again on the host */
        st = tq_host_gauge_alloc(&hg, d->lat->local);
        if (st == TQ_SUCCESS) st = tq_gauge_field_export(d->gauge, &hg);
        if (st == TQ_SUCCESS) st = tq_gauge_field_import(g, &hg);
        tq_host_gauge_free(&hg);
    }
    tq_dirac *s = NULL;
    if (st == TQ_SUCCESS) {
        /* the Wilson part here; the clover terms are converted from the precise ones below */
        tq_dirac_params wp = d->p;
        wp.type = TQ_DSLASH_WILSON;
        st = tq_dirac_create(g, &wp, &s);
    }
    if (st == TQ_SUCCESS) {
        s->owned_gauge = g;
        s->p = d->p;
        g = NULL;
        if (d->clover) {   /* the precise terms converted on the owners (built again, through the host: 0.2 s at 32^4) */
            tq_field_params cp = d->clover->p;
            cp.prec = prec;
            st = tq_field_create(d->lat, &cp, &s->clover);
            if (st == TQ_SUCCESS) st = tq_field_create(d->lat, &cp, &s->clover_inv);
            if (st == TQ_SUCCESS) st = tq_internal_field_convert(s->clover, d->clover);
            if (st == TQ_SUCCESS) st = tq_internal_field_convert(s->clover_inv, d->clover_inv);
        }
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

tq_status tq_dirac_check_spinor(const char *who, const tq_dirac *d, const tq_field *f, int parity,
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
    if (!tq_dirac_holds_parity(f, parity))
        return tq_error(TQ_ERR_MISMATCH, "%s: %s does not hold the %s sites", who, name, parity ? "odd" : "even");
    return TQ_SUCCESS;
}

tq_status tq_dirac_check_parity(const char *who, tq_subset parity)
{
    if (parity != TQ_EVEN && parity != TQ_ODD)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: parity must be TQ_EVEN or TQ_ODD", who);
    return TQ_SUCCESS;
}

tq_field *tq_internal_dirac_work_field(const tq_dirac *d, int parity)
{
    return d->tmp[parity];
}

int tq_internal_dirac_fuse_split(const tq_dirac *d)
{
    return d->lat->nblocks > 1 || d->stencil.nfaces > 0;
}

int tq_internal_dirac_can_fuse(const tq_dirac *d)
{
    if (!tq_internal_dirac_fuse_split(d)) return 1;
    /* TQ_SPLIT_FUSE=0: several blocks take the separate reductions (for comparisons; the
     * same choice on every placement and rank count, so the same bits) */
    const char *env = getenv("TQ_SPLIT_FUSE");
    return !(env && env[0] == '0');
}

int tq_internal_dirac_can_chain(const tq_dirac *d)
{
    return tq_internal_lattice_can_chain(d->lat);
}

const tq_field *tq_internal_dirac_gauge(const tq_dirac *d) { return d->gauge; }
const tq_dirac_params *tq_internal_dirac_params(const tq_dirac *d) { return &d->p; }
const tq_field *tq_internal_dirac_clover(const tq_dirac *d) { return d->clover; }
