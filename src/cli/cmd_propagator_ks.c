/* taskqcd propagator --dslash-type asqtad|hisq (issue 36): the improved staggered operator on
 * the command's gauge field (links built by tasks; asqtad's tadpole factor from the
 * plaquette unless --u0, HISQ's Naik epsilon --naik-epsilon), a color
 * point source at the origin per source, M x = b (M = 2m + D, MILC's normalisation) solved
 * for one mass by even-odd CG or for several by multi-shift CG, and per mass the staggered
 * pion correlator C(t) = sum over space, source and sink colors of |G(x, t)|^2 (the
 * Goldstone pion, gamma_5 x gamma_5: no phase) with its effective mass. Under mpirun every
 * rank holds the whole gauge field (the link construction reads around its part), solves
 * on its part, and rank 0 prints. */
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
    tq_lattice_info li;    /* this rank's part */
    tq_staggered *op;
    tq_field *b, *x[TQ_CLI_MAX_MASSES];
    double *host, *corr;   /* one field on the host (this rank's sites); C(t) per mass, T values each */
    double *density, *global;   /* |x|^2 per site: this rank's, the whole lattice's */
} ks_run;

static void ks_run_free(ks_run *r)
{
    for (int i = 0; i < TQ_CLI_MAX_MASSES; i++) tq_field_destroy(r->x[i]);
    tq_field_destroy(r->b);
    tq_staggered_destroy(r->op);
    tq_lattice_destroy(r->lat);
    free(r->host);
    free(r->corr);
    free(r->density);
    free(r->global);
}

/* The lattice, the operator and the fields; 0, or 1 after saying why not. */
static int ks_make(const tq_cli_ks *k, const tq_host_gauge *hg, ks_run *r, double *u0, double *t_setup, const char *me)
{
    if (!hg->links) {
        fprintf(stderr, "%s: the staggered operators need the whole gauge field on every rank\n", me);
        return 1;
    }
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, k->dims, sizeof lp.dims);
    memcpy(lp.block, k->block, sizeof lp.block);
    memcpy(lp.procs, k->procs, sizeof lp.procs);
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    lp.group_ranks = k->nsplit > 1 ? ri.mpi_size / k->nsplit : 0;   /* a split grid: a copy per group */
    tq_status st = tq_lattice_create(&lp, &r->lat);
    if (st == TQ_SUCCESS) st = tq_lattice_get_info(r->lat, &r->li);
    /* blocks chosen from the worker mix (no --block) may split a short direction into
     * blocks thinner than the Naik term's three layers: that direction stays whole then */
    int thin = 0;
    for (int mu = 0; mu < 4 && st == TQ_SUCCESS && !k->block[0]; mu++)
        if (r->li.block[mu] < r->li.local[mu] && r->li.block[mu] < 3) thin = 1;
    if (thin) {
        for (int mu = 0; mu < 4; mu++)
            lp.block[mu] = r->li.block[mu] < r->li.local[mu] && r->li.block[mu] < 3 ? r->li.local[mu] : r->li.block[mu];
        tq_lattice_destroy(r->lat);
        r->lat = NULL;
        st = tq_lattice_create(&lp, &r->lat);
        if (st == TQ_SUCCESS) st = tq_lattice_get_info(r->lat, &r->li);
    }
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
    const size_t vol = st == TQ_SUCCESS ? (size_t)r->li.local_volume : 0, gvol = (size_t)r->li.global_volume;
    r->host = st == TQ_SUCCESS ? malloc(6 * vol * sizeof *r->host) : NULL;
    r->corr = st == TQ_SUCCESS ? calloc((size_t)k->nmass * k->dims[3], sizeof *r->corr) : NULL;
    r->density = st == TQ_SUCCESS ? malloc(vol * sizeof *r->density) : NULL;
    r->global = st == TQ_SUCCESS ? malloc(gvol * sizeof *r->global) : NULL;
    if (st != TQ_SUCCESS || !r->host || !r->corr || !r->density || !r->global) {
        fprintf(stderr, "%s: %s\n", me, st != TQ_SUCCESS ? tq_last_error() : "out of memory");
        return 1;
    }
    return 0;
}

/* The time slices' sums of |x|^2 over their sites and colors (part[t]): x (r->host, this
 * rank's sites) gathered as a density over the whole lattice (the API's site order: t
 * slowest), the same sums in the same order on any rank grid. 0 on success. */
static int slice_sums(const tq_cli_ks *k, ks_run *r, double *part)
{
    for (int64_t site = 0; site < r->li.local_volume; site++) {
        double a = 0;
        for (int i = 0; i < 6; i++) a += r->host[6 * site + i] * r->host[6 * site + i];
        r->density[site] = a;
    }
    if (tq_lattice_allgather_sites(r->lat, r->density, r->global, 1) != TQ_SUCCESS) return -1;
    const int64_t slice = (int64_t)k->dims[0] * k->dims[1] * k->dims[2];
    for (int t = 0; t < k->dims[3]; t++) {
        double c = 0;
        for (int64_t site = slice * t; site < slice * (t + 1); site++) c += r->global[site];
        part[t] = c;
    }
    return 0;
}

/* Per source and mass what the table prints, then its T slice sums: every rank's solves in
 * one array (zeros where another rank solved; a split grid's gather adds them exactly). */
enum { KS_REALS = 6 };   /* iterations, true residual, seconds, flops, converged, solved (1: tried) */

/* This rank's sources (a split grid's share), solved one by one into all[]. Returns the
 * number that failed. */
static int solve_mine(const tq_cli_ks *k, ks_run *r, int first, int count, double *all, const char *me)
{
    const int per = KS_REALS + k->dims[3];
    const size_t vol = (size_t)r->li.local_volume;
    const int at_origin = r->li.coords[0] + r->li.coords[1] + r->li.coords[2] + r->li.coords[3] == 0;
    int failed = 0;
    for (int c = first; c < first + count && !failed; c++) {
        memset(r->host, 0, 6 * vol * sizeof *r->host);
        if (at_origin) r->host[2 * c] = 1.0;   /* global site 0 (even), color c */
        tq_solver_result res[TQ_CLI_MAX_MASSES];
        memset(res, 0, sizeof res);
        tq_status st = tq_field_import(r->b, r->host);
        if (st == TQ_SUCCESS)
            st = k->nmass == 1 ? tq_staggered_solve(r->op, k->masses[0], r->x[0], r->b, &k->sp, &res[0])
                               : tq_staggered_solve_multishift(r->op, k->nmass, k->masses, r->x, r->b, &k->sp, res);
        if (st != TQ_SUCCESS) {
            fprintf(stderr, "%s: source %d: %s\n", me, c, tq_last_error());
            failed = 1;
        }
        for (int i = 0; i < k->nmass; i++) {
            double *v = all + ((size_t)c * k->nmass + i) * per;
            v[0] = res[i].iterations;
            v[1] = res[i].true_residual;
            v[2] = res[i].seconds;
            v[3] = res[i].flops;
            v[4] = st == TQ_SUCCESS;
            v[5] = 1;
            if (!failed && (tq_field_export(r->x[i], r->host) != TQ_SUCCESS || slice_sums(k, r, v + KS_REALS))) {
                fprintf(stderr, "%s: the correlator: %s\n", me, tq_last_error());
                failed = 1;
            }
        }
    }
    return failed;
}

int tq_cli_ks_propagator(const tq_cli_ks *k, const tq_host_gauge *hg, const char *gauge_desc, const char *me)
{
    ks_run r;
    memset(&r, 0, sizeof r);
    double u0 = 0, t_setup = 0;
    /* a split grid's ranks meet next after their solves: all learn of one that failed here */
    if (tq_cli_agree(me, ks_make(k, hg, &r, &u0, &t_setup, me))) {
        ks_run_free(&r);
        return 1;
    }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    const int talk = ri.mpi_rank == 0;   /* rank 0 prints */
#define SAY(...) do { if (talk) printf(__VA_ARGS__); } while (0)
    SAY("taskqcd propagator: %s, mass%s", k->hisq ? "hisq" : "asqtad", k->nmass > 1 ? "es" : "");
    for (int i = 0; i < k->nmass; i++) SAY("%s%g", i ? "," : " ", k->masses[i]);
    SAY(", %dx%dx%dx%d, %s, %s, tol %g", k->dims[0], k->dims[1], k->dims[2], k->dims[3], tq_precision_name(k->prec),
           k->nmass > 1 ? "multi-shift CG on the even sites" : "CG on the even sites", k->sp.tol);
    if (k->sp.prec_sloppy) SAY(", sloppy %s (%s)", tq_precision_name(k->sp.prec_sloppy),
                                  k->nmass > 1 ? "each mass refined" : "reliable updates");
    SAY(", %d color source%s at the origin, where %s, %d CPU + %d CUDA workers\n", k->nsrc,
           k->nsrc > 1 ? "s" : "", k->where, ri.ncpu_workers, ri.ncuda_workers);
    SAY("  gauge field: %s\n", gauge_desc);
    if (k->hisq) SAY("  set-up (HISQ links from the thin links, Naik epsilon %g): %.3f s\n", k->eps, t_setup);
    else SAY("  set-up (asqtad links from the thin links, u0 %.6f): %.3f s\n", u0, t_setup);
    if (k->nsplit > 1)
        SAY("  split grid: %d groups of %d rank(s), each with its own copy of the lattice and its share of the sources\n",
            k->nsplit, r.li.group_ranks);
    int first = 0, count = k->nsrc;
    if (k->nsplit > 1) tq_cli_split_range(k->nsrc, k->nsplit, r.li.group, &first, &count);
    const int per = KS_REALS + k->dims[3], nall = k->nsrc * k->nmass * per;
    /* then each rank's wall clock of its solves and its failures */
    double *all = calloc((size_t)nall + 2 * (size_t)ri.mpi_size, sizeof *all);
    if (!all) fprintf(stderr, "%s: out of memory\n", me);
    if (tq_cli_agree(me, !all)) {
        free(all);
        ks_run_free(&r);
        return 1;
    }
    const double t0 = tq_cli_now();
    int failed = solve_mine(k, &r, first, count, all, me);
    /* a group's ranks all hold its results: its first rank gives them */
    if (r.li.coords[0] + r.li.coords[1] + r.li.coords[2] + r.li.coords[3] != 0) memset(all, 0, (size_t)nall * sizeof *all);
    all[nall + ri.mpi_rank] = tq_cli_now() - t0;
    all[nall + ri.mpi_size + ri.mpi_rank] = failed;
    if (k->nsplit > 1 && tq_allreduce_sum(all, nall + 2 * ri.mpi_size) != TQ_SUCCESS) failed = 1;
    double wall = 0, flops = 0;
    int iters = 0;
    for (int q = 0; q < ri.mpi_size && k->nsplit > 1; q++) {
        wall = all[nall + q] > wall ? all[nall + q] : wall;
        failed |= all[nall + ri.mpi_size + q] != 0;
    }
    if (k->nsplit <= 1) wall = all[nall + ri.mpi_rank];
    for (int c = 0; c < k->nsrc; c++) {
        const double *v0 = all + (size_t)c * k->nmass * per;
        /* multi-shift: one Krylov space for all masses, timed and counted once */
        double src_flops = 0;
        int its = 0;   /* the Krylov space's: the slowest mass's */
        for (int i = 0; i < k->nmass; i++) {
            src_flops += v0[i * per + 3];
            its = v0[i * per] > its ? (int)v0[i * per] : its;
        }
        if (!v0[5]) continue;   /* not tried: an earlier source failed */
        if (k->nmass > 1)
            SAY("  solve %d (color %d), multi-shift CG: %.3f s, %.1f GFLOPS\n", c, c, v0[2],
                   v0[2] > 0 ? src_flops / v0[2] * 1e-9 : 0.0);
        for (int i = 0; i < k->nmass; i++) {
            const double *v = v0 + i * per;
            SAY("  solve %d (color %d), mass %g: %5d iterations, true residual %.3e", c, c, k->masses[i], (int)v[0], v[1]);
            if (k->nmass == 1) SAY(", %.3f s, %.1f GFLOPS", v[2], v[2] > 0 ? v[3] / v[2] * 1e-9 : 0.0);
            SAY("%s\n", v[4] ? "" : "  NOT CONVERGED");
        }
        iters += its;
        flops += src_flops;
    }
    SAY("  all solves: %d iterations, %.3f s, %.1f GFLOPS (wall clock of the solves)\n", iters, wall,
           wall > 0 ? flops / wall * 1e-9 : 0.0);
    if (failed) {
        SAY("  NO RESULT: a solve did not converge; no pion correlator\n");
    } else {
        for (int i = 0; i < k->nmass; i++) {
            double *C = r.corr + i * k->dims[3];
            for (int c = 0; c < k->nsrc; c++)   /* the sources' slice sums in source order: any split, the same bits */
                for (int t = 0; t < k->dims[3]; t++) C[t] += all[((size_t)c * k->nmass + i) * per + KS_REALS + t];
            SAY("  pion correlator, mass %g (sum over space and the %d sources):\n"
                   "      t  C(t)                    m_eff(t) = log C(t)/C(t+1)\n", k->masses[i], k->nsrc);
            for (int t = 0; t < k->dims[3]; t++) {
                SAY("  %5d  %.16e", t, C[t]);
                if (t + 1 < k->dims[3]) SAY("  %+.8f", log(C[t] / C[t + 1]));
                SAY("\n");
            }
        }
    }
#undef SAY
    free(all);
    ks_run_free(&r);
    return failed;
}
