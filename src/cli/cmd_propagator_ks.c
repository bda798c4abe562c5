/* taskqcd propagator --dslash-type asqtad|hisq (issue 36): the improved staggered operator on
 * the command's gauge field (links built by tasks; asqtad's tadpole factor from the
 * plaquette unless --u0, HISQ's Naik epsilon --naik-epsilon), a color
 * point source at the origin per source, M x = b (M = 2m + D, MILC's normalisation) solved
 * for one mass by even-odd CG or for several by multi-shift CG, and per mass the staggered
 * pion correlator C(t) = sum over space, source and sink colors of |G(x, t)|^2 (the
 * Goldstone pion, gamma_5 x gamma_5: no phase) with its effective mass. One rank. */
#include "cli/cli.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tq_cli_parse_masses(const char *s, double *masses, int *n)
{
    *n = 0;
    const char *p = s;
    while (*p) {
        char *e;
        const double m = strtod(p, &e);
        if (e == p || !(m > 0) || !isfinite(m) || *n == TQ_CLI_MAX_MASSES || (*e && *e != ',')) return -1;
        masses[(*n)++] = m;
        p = *e ? e + 1 : e;
        if (*e && !*p) return -1;   /* a trailing comma */
    }
    return *n > 0 ? 0 : -1;
}

/* What one run holds; freed by ks_run_free. */
typedef struct ks_run {
    tq_lattice *lat;
    tq_staggered *op;
    tq_field *b, *x[TQ_CLI_MAX_MASSES];
    double *host, *corr;   /* one field on the host; C(t) per mass, T values each */
} ks_run;

static void ks_run_free(ks_run *r)
{
    for (int i = 0; i < TQ_CLI_MAX_MASSES; i++) tq_field_destroy(r->x[i]);
    tq_field_destroy(r->b);
    tq_staggered_destroy(r->op);
    tq_lattice_destroy(r->lat);
    free(r->host);
    free(r->corr);
}

/* The lattice, the operator and the fields; 0, or 1 after saying why not. */
static int ks_make(const tq_cli_ks *k, const tq_host_gauge *hg, ks_run *r, double *u0, double *t_setup, const char *me)
{
    if (!hg->links) {
        fprintf(stderr, "%s: --dslash-type asqtad runs on one rank with the whole gauge field so far\n", me);
        return 1;
    }
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, k->dims, sizeof lp.dims);
    memcpy(lp.block, k->block, sizeof lp.block);
    tq_status st = tq_lattice_create(&lp, &r->lat);
    *u0 = k->u0;
    if (st == TQ_SUCCESS && !k->hisq && !(*u0 > 0)) {   /* MILC's choice: the fourth root of the plaquette */
        tq_plaquette pl;
        st = tq_host_gauge_plaquette(hg, &pl);
        *u0 = st == TQ_SUCCESS ? pow(pl.total, 0.25) : 0;
    }
    const double t0 = tq_cli_now();
    if (st == TQ_SUCCESS)
        st = k->hisq ? tq_staggered_create_hisq(r->lat, hg->links, k->eps, NULL, k->prec, &r->op)
                     : tq_staggered_create_asqtad(r->lat, hg->links, *u0, NULL, k->prec, &r->op);
    const tq_field_params fp = {TQ_FIELD_STAGGERED, k->prec, TQ_FULL, (tq_recon)0, 0};
    if (st == TQ_SUCCESS) st = tq_field_create(r->lat, &fp, &r->b);
    for (int i = 0; i < k->nmass && st == TQ_SUCCESS; i++) st = tq_field_create(r->lat, &fp, &r->x[i]);
    if (st == TQ_SUCCESS) st = tq_blas_zero(r->b);
    *t_setup = tq_cli_now() - t0;
    const size_t vol = (size_t)k->dims[0] * k->dims[1] * k->dims[2] * k->dims[3];
    r->host = st == TQ_SUCCESS ? malloc(6 * vol * sizeof *r->host) : NULL;
    r->corr = st == TQ_SUCCESS ? calloc((size_t)k->nmass * k->dims[3], sizeof *r->corr) : NULL;
    if (st != TQ_SUCCESS || !r->host || !r->corr) {
        fprintf(stderr, "%s: %s\n", me, st != TQ_SUCCESS ? tq_last_error() : "out of memory");
        return 1;
    }
    return 0;
}

/* C(t) += |x(t)|^2 summed over space and colors (the API's site order: t slowest). */
static void add_correlator(const tq_cli_ks *k, const double *x, double *corr)
{
    const size_t slice = (size_t)k->dims[0] * k->dims[1] * k->dims[2];
    for (int t = 0; t < k->dims[3]; t++) {
        double c = 0;
        for (size_t i = 6 * slice * (size_t)t; i < 6 * slice * (size_t)(t + 1); i++) c += x[i] * x[i];
        corr[t] += c;
    }
}

int tq_cli_ks_propagator(const tq_cli_ks *k, const tq_host_gauge *hg, const char *gauge_desc, const char *me)
{
    ks_run r;
    memset(&r, 0, sizeof r);
    double u0 = 0, t_setup = 0;
    if (ks_make(k, hg, &r, &u0, &t_setup, me)) {
        ks_run_free(&r);
        return 1;
    }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    printf("taskqcd propagator: %s, mass%s", k->hisq ? "hisq" : "asqtad", k->nmass > 1 ? "es" : "");
    for (int i = 0; i < k->nmass; i++) printf("%s%g", i ? "," : " ", k->masses[i]);
    printf(", %dx%dx%dx%d, %s, %s, tol %g", k->dims[0], k->dims[1], k->dims[2], k->dims[3], tq_precision_name(k->prec),
           k->nmass > 1 ? "multi-shift CG on the even sites" : "CG on the even sites", k->sp.tol);
    if (k->sp.prec_sloppy) printf(", sloppy %s (%s)", tq_precision_name(k->sp.prec_sloppy),
                                  k->nmass > 1 ? "each mass refined" : "reliable updates");
    printf(", %d color source%s at the origin, where %s, %d CPU + %d CUDA workers\n", k->nsrc,
           k->nsrc > 1 ? "s" : "", k->where, ri.ncpu_workers, ri.ncuda_workers);
    printf("  gauge field: %s\n", gauge_desc);
    if (k->hisq) printf("  set-up (HISQ links from the thin links, Naik epsilon %g): %.3f s\n", k->eps, t_setup);
    else printf("  set-up (asqtad links from the thin links, u0 %.6f): %.3f s\n", u0, t_setup);
    const size_t vol = (size_t)k->dims[0] * k->dims[1] * k->dims[2] * k->dims[3];
    int failed = 0, iters = 0;
    double flops = 0;
    const double t0 = tq_cli_now();
    for (int c = 0; c < k->nsrc && !failed; c++) {
        memset(r.host, 0, 6 * vol * sizeof *r.host);
        r.host[2 * c] = 1.0;   /* site 0 (even), color c */
        tq_solver_result res[TQ_CLI_MAX_MASSES];
        tq_status st = tq_field_import(r.b, r.host);
        if (st == TQ_SUCCESS)
            st = k->nmass == 1 ? tq_staggered_solve(r.op, k->masses[0], r.x[0], r.b, &k->sp, &res[0])
                               : tq_staggered_solve_multishift(r.op, k->nmass, k->masses, r.x, r.b, &k->sp, res);
        if (st != TQ_SUCCESS) {
            fprintf(stderr, "%s: source %d: %s\n", me, c, tq_last_error());
            failed = 1;
            if (st != TQ_ERR_NOT_CONVERGED) break;
        }
        /* multi-shift: one Krylov space for all masses, timed and counted once */
        double src_flops = 0;
        for (int i = 0; i < k->nmass; i++) src_flops += res[i].flops;
        if (k->nmass > 1)
            printf("  solve %d (color %d), multi-shift CG: %.3f s, %.1f GFLOPS\n", c, c, res[0].seconds,
                   res[0].seconds > 0 ? src_flops / res[0].seconds * 1e-9 : 0.0);
        for (int i = 0; i < k->nmass; i++) {
            printf("  solve %d (color %d), mass %g: %5d iterations, true residual %.3e", c, c, k->masses[i],
                   res[i].iterations, res[i].true_residual);
            if (k->nmass == 1)
                printf(", %.3f s, %.1f GFLOPS", res[i].seconds, res[i].seconds > 0 ? res[i].flops / res[i].seconds * 1e-9 : 0.0);
            printf("\n");
            if (!failed && tq_field_export(r.x[i], r.host) == TQ_SUCCESS) add_correlator(k, r.host, r.corr + i * k->dims[3]);
        }
        int its = 0;   /* the Krylov space's: the slowest mass's */
        for (int i = 0; i < k->nmass; i++) its = res[i].iterations > its ? res[i].iterations : its;
        iters += its;
        flops += src_flops;
    }
    const double wall = tq_cli_now() - t0;
    printf("  all solves: %d iterations, %.3f s, %.1f GFLOPS (wall clock of the solves)\n", iters, wall,
           wall > 0 ? flops / wall * 1e-9 : 0.0);
    if (failed) {
        printf("  NO RESULT: a solve did not converge; no pion correlator\n");
    } else {
        for (int i = 0; i < k->nmass; i++) {
            const double *C = r.corr + i * k->dims[3];
            printf("  pion correlator, mass %g (sum over space and the %d sources):\n"
                   "      t  C(t)                    m_eff(t) = log C(t)/C(t+1)\n", k->masses[i], k->nsrc);
            for (int t = 0; t < k->dims[3]; t++) {
                printf("  %5d  %.16e", t, C[t]);
                if (t + 1 < k->dims[3]) printf("  %+.8f", log(C[t] / C[t + 1]));
                printf("\n");
            }
        }
    }
    ks_run_free(&r);
    return failed;
}
