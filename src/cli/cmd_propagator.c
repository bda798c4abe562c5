/* taskqcd propagator: the main job (in the spirit of QUDA's invert_test). Loads a gauge
 * configuration (or generates a quenched one, cached for later runs), sets up the Wilson or clover operator,
 * solves M x = b for the 12 spin-color point sources at the origin (or the first --nsrc of
 * them), reports per solve the iterations, true residual, time and GFLOPS, and prints the
 * pion (gamma5-gamma5) two-point function C(t) = sum_{x in t} sum_src |x_src(x)|^2 with its
 * effective mass log(C(t) / C(t+1)). Solves go to the library in batches (--batch N,
 * default all of them at once: their iterations interleave and fill every worker). When a
 * solve fails, no correlator is printed: unconverged solutions are not a result. */
#include "cli/propagator.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int parse_recon(const char *s, tq_recon *r)
{
    int v = atoi(s);
    if (v != 18 && v != 12 && v != 8) return -1;
    *r = (tq_recon)v;
    return 0;
}

static void prop_defaults(prop_opts *o)
{
    memset(o, 0, sizeof *o);
    const int dims[4] = {8, 8, 8, 16};
    memcpy(o->dims, dims, sizeof o->dims);
    o->dp.type = TQ_DSLASH_CLOVER;
    o->dp.kappa = 0.13;
    o->dp.csw = 1.0;
    tq_solver_params_default(&o->sp);
    o->sp.inverter = TQ_INV_BICGSTAB;
    o->sp.prec_sloppy = TQ_SINGLE;
    o->prec = TQ_DOUBLE;
    o->recon = TQ_RECON_12;
    o->nsrc = 12;
    o->nsplit = 1;
    o->where = "any";
    tq_cli_quenched q = {{0, 0, 0, 0}, 6.0, 1, 50, 4, tq_cli_default_cache_dir(o->cache_buf, sizeof o->cache_buf)};
    o->q = q;
    tq_cli_mg_defaults(&o->mg);
}

/* Options of the gauge field, the operator and the run, with value v. Returns -1 when a is
 * none of them, else 1 for a bad value and 0. */
static int parse_problem_option(prop_opts *o, const char *a, const char *v)
{
    char *e;
    tq_cli_quenched *q = &o->q;
    int bad = 0;
    if (!strcmp(a, "--gauge")) o->gauge_file = v;
    else if (!strcmp(a, "--beta")) { q->beta = strtod(v, &e); bad = *e || !(q->beta > 0); o->generator_option = 1; }
    else if (!strcmp(a, "--therm")) { q->sweeps = (int)strtol(v, &e, 10); bad = *e || q->sweeps < 0; o->generator_option = 1; }
    else if (!strcmp(a, "--gauge-seed")) { q->seed = strtoull(v, &e, 0); bad = *e || v[0] == '-'; o->generator_option = 1; }
    else if (!strcmp(a, "--cache")) { q->cache_dir = strcmp(v, "off") ? v : NULL; o->generator_option = 1; }
    else if (!strcmp(a, "--weak-field")) { o->weak = strtod(v, &e); bad = *e || !(o->weak > 0); }
    else if (!strcmp(a, "--dslash-type")) {
        o->staggered = !strcmp(v, "asqtad") ? 1 : !strcmp(v, "hisq") ? 2 : 0;
        o->ks.hisq = o->staggered == 2;
        o->wilson_given |= !o->staggered;
        if (!strcmp(v, "wilson")) o->dp.type = TQ_DSLASH_WILSON;
        else if (!strcmp(v, "clover")) o->dp.type = TQ_DSLASH_CLOVER;
        else bad = !o->staggered;
    } else if (!strcmp(a, "--kappa")) { o->dp.kappa = atof(v); bad = !(o->dp.kappa > 0); o->wilson_given = 1; }
    else if (!strcmp(a, "--csw")) { o->dp.csw = strtod(v, &e); bad = *e || !isfinite(o->dp.csw); o->wilson_given = 1; }
    else if (!strcmp(a, "--matpc")) {
        o->wilson_given = 1;
        if (!strcmp(v, "sym")) o->dp.matpc = TQ_MATPC_SYMMETRIC;
        else if (!strcmp(v, "asym")) o->dp.matpc = TQ_MATPC_ASYMMETRIC;
        else bad = 1;
    } else if (!strcmp(a, "--mass")) {
        o->ks.masses[0] = strtod(v, &e);
        o->ks.nmass = 1;
        bad = *e || !(o->ks.masses[0] > 0) || !isfinite(o->ks.masses[0]);
        o->ks_given = 1;
    } else if (!strcmp(a, "--masses")) { bad = tq_cli_parse_masses(v, o->ks.masses, &o->ks.nmass); o->ks_given = 1; }
    else if (!strcmp(a, "--u0")) { o->ks.u0 = strtod(v, &e); bad = *e || !(o->ks.u0 > 0) || !isfinite(o->ks.u0); o->ks_given = o->u0_given = 1; }
    else if (!strcmp(a, "--naik-epsilon")) {
        o->ks.eps = strtod(v, &e);
        bad = *e || !(fabs(o->ks.eps) < 1.0);
        o->ks_given = o->eps_given = 1;
    }
    else if (!strcmp(a, "--prec")) bad = tq_precision_parse(v, &o->prec) != TQ_SUCCESS;
    else if (!strcmp(a, "--recon")) { bad = parse_recon(v, &o->recon); o->wilson_given = 1; }
    else if (!strcmp(a, "--nsrc")) { bad = tq_cli_parse_positive(v, &o->nsrc) || o->nsrc > 12; o->nsrc_given = 1; }
    else if (!strcmp(a, "--batch")) bad = tq_cli_parse_positive(v, &o->batch);
    else if (!strcmp(a, "--where")) {
        o->where = v;
        bad = strcmp(v, "any") && strcmp(v, "cpu") && strcmp(v, "cuda");
    } else return -1;
    return bad != 0;   /* the parsers return -1 for a bad value */
}

/* The solver's options with value v. Returns -1 when a is none of them, else 1 for a bad
 * value and 0. */
static int parse_solver_option(tq_solver_params *sp, const char *a, const char *v)
{
    int bad = 0;
    if (!strcmp(a, "--prec-sloppy")) bad = tq_precision_parse(v, &sp->prec_sloppy) != TQ_SUCCESS;
    else if (!strcmp(a, "--recon-sloppy")) bad = parse_recon(v, &sp->recon_sloppy);
    else if (!strcmp(a, "--inv-type")) bad = tq_inverter_parse(v, &sp->inverter) != TQ_SUCCESS;
    else if (!strcmp(a, "--solve-type")) bad = tq_solve_type_parse(v, &sp->solve_type) != TQ_SUCCESS;
    else if (!strcmp(a, "--tol")) { sp->tol = atof(v); bad = !(sp->tol > 0 && sp->tol < 1); }
    else if (!strcmp(a, "--maxiter")) bad = tq_cli_parse_positive(v, &sp->maxiter);
    else if (!strcmp(a, "--reliable-delta")) { sp->reliable_delta = atof(v); bad = !(sp->reliable_delta > 0 && sp->reliable_delta < 1); }
    else if (!strcmp(a, "--mixed")) {
        if (!strcmp(v, "reliable")) sp->mixed = TQ_MIXED_RELIABLE;
        else if (!strcmp(v, "defect")) sp->mixed = TQ_MIXED_DEFECT;
        else bad = 1;
    } else if (!strcmp(a, "--gcr-nkrylov")) bad = tq_cli_parse_positive(v, &sp->gcr_nkrylov) || sp->gcr_nkrylov > 10;
    else if (!strcmp(a, "--precond")) {
        if (!strcmp(v, "none")) sp->precond = TQ_PRECOND_NONE;
        else if (!strcmp(v, "mr")) sp->precond = TQ_PRECOND_MR;
        else bad = 1;
    } else if (!strcmp(a, "--precond-iters")) bad = tq_cli_parse_positive(v, &sp->precond_iters);
    else return -1;
    return bad != 0;   /* the parsers return -1 for a bad value */
}

/* Defaults that depend on other options, and the combinations refused. Returns -1 to go
 * on, 2 after saying what is wrong. */
static int settle_options(prop_opts *o, const char *me)
{
    tq_solver_params *sp = &o->sp;
    if (o->ks_given && !o->staggered) {
        fprintf(stderr, "%s: --mass, --masses, --u0 and --naik-epsilon are for --dslash-type asqtad or hisq\n", me);
        return 2;
    }
    if ((o->u0_given && o->ks.hisq) || (o->eps_given && o->staggered == 1)) {
        fprintf(stderr, "%s: %s\n", me, o->ks.hisq ? "--u0 is asqtad's tadpole factor (HISQ has none)"
                                                   : "--naik-epsilon is HISQ's (--dslash-type hisq)");
        return 2;
    }
    if (o->staggered) {
        const char *refused = o->wilson_given ? "--kappa, --csw, --matpc, --recon or another --dslash-type"
                              : o->multigrid || o->mg.given ? "--inv-multigrid"
                              : o->json ? "--json"
                              : sp->recon_sloppy || o->solve_type_given ? "--recon-sloppy or --solve-type"
                              : o->inv_given && sp->inverter != TQ_INV_CG ? "an --inv-type other than cg"
                              : o->nsrc_given && o->nsrc > 3 ? "--nsrc above 3 (a source per color)"
                              : NULL;
        if (refused) {
            fprintf(stderr, "%s: --dslash-type %s (CG with color point sources) does not take %s\n", me,
                    o->ks.hisq ? "hisq" : "asqtad", refused);
            return 2;
        }
        sp->inverter = TQ_INV_CG;
        if (o->ks.nmass == 0) o->ks.masses[o->ks.nmass++] = 0.1;
        memcpy(o->ks.dims, o->dims, sizeof o->ks.dims);
        memcpy(o->ks.block, o->block, sizeof o->ks.block);
        memcpy(o->ks.procs, o->procs, sizeof o->ks.procs);
        o->ks.prec = o->prec;
        o->ks.nsrc = o->nsrc_given ? o->nsrc : 3;
        o->ks.where = o->where;
    }
    if (o->batch <= 0 || o->batch > o->nsrc) o->batch = o->nsrc;
    if (o->multigrid) {
        /* flexible GCR on the full system in double, preconditioned by the cycle, iterating
         * in --prec-sloppy (single by default) with reliable updates */
        if ((o->inv_given && sp->inverter != TQ_INV_GCR) || (o->solve_type_given && sp->solve_type != TQ_SOLVE_DIRECT) ||
            o->prec != TQ_DOUBLE) {
            fprintf(stderr, "%s: --inv-multigrid is flexible GCR on the full system in double precision: not with "
                    "%s\n", me, o->prec != TQ_DOUBLE ? "--prec single or half" : "another --inv-type or --solve-type");
            return 2;
        }
        sp->inverter = TQ_INV_GCR;
        sp->solve_type = TQ_SOLVE_DIRECT;
    } else if (o->mg.given) {
        fprintf(stderr, "%s: the --mg-* options set up multigrid: add --inv-multigrid\n", me);
        return 2;
    }
    /* the sloppy precision defaults to single: no mixed precision when the operator is
     * single already, and half operators stay uniform */
    if (sp->prec_sloppy == o->prec || o->prec != TQ_DOUBLE) sp->prec_sloppy = (tq_precision)0;
    if (sp->prec_sloppy == 0 && sp->recon_sloppy == 0) sp->mixed = TQ_MIXED_RELIABLE;

    if ((o->gauge_file || o->weak > 0) && o->generator_option) {
        fprintf(stderr, "%s: --beta, --therm, --gauge-seed and --cache describe the generated configuration: not with %s\n",
                me, o->gauge_file ? "--gauge" : "--weak-field");
        return 2;
    }
    if (o->gauge_file && o->weak > 0) { fprintf(stderr, "%s: --gauge and --weak-field exclude each other\n", me); return 2; }
    if (!o->gauge_file && o->weak == 0)
        for (int mu = 0; mu < 4; mu++)
            if (o->dims[mu] % 2) {
                fprintf(stderr, "%s: dimension %d is %d: the generated configuration needs even extents (or use --gauge "
                        "or --weak-field)\n", me, mu, o->dims[mu]);
                return 2;
            }
    return -1;
}

/* Fills o from the command line (runtime options already removed). Returns -1 to go on,
 * otherwise the exit code (0 after --help, 2 for a usage error). */
static int parse_propagator_args(int argc, char **argv, prop_opts *o, const char *me)
{
    prop_defaults(o);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = -1;
        if (!strcmp(a, "--dim") || !strcmp(a, "--block") || !strcmp(a, "--gridsize"))
            bad = tq_cli_parse_dims(argc, argv, &i, !strcmp(a, "--dim") ? o->dims : !strcmp(a, "--block") ? o->block : o->procs) != 0;
        else if (!strcmp(a, "--split-grid")) bad = tq_cli_parse_dims(argc, argv, &i, o->split) != 0;
        else if (!strcmp(a, "--json")) { o->json = 1; bad = 0; }
        else if (!strcmp(a, "--warmup")) { o->warmup = 1; bad = 0; }
        else if (!strcmp(a, "--inv-multigrid")) { o->multigrid = 1; bad = 0; }
        else if ((bad = tq_cli_mg_option(&o->mg, argc, argv, &i)) >= 0) {}
        else if (!strcmp(a, "--help")) { tq_cli_propagator_usage(stdout); return 0; }
        else if (v && ((bad = parse_problem_option(o, a, v)) >= 0 || (bad = parse_solver_option(&o->sp, a, v)) >= 0)) {
            i++;
            o->inv_given |= !strcmp(a, "--inv-type");
            o->solve_type_given |= !strcmp(a, "--solve-type");
            o->sloppy_given |= !strcmp(a, "--prec-sloppy") || !strcmp(a, "--recon-sloppy");
        }
        if (bad < 0) {
            fprintf(stderr, "%s: unknown option '%s'\n", me, a);
            tq_cli_propagator_usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "%s: bad value for %s%s%s\n", me, a, v ? ": " : "", v ? v : "");
            return 2;
        }
    }
    return settle_options(o, me);
}

/* --gauge's file or --weak-field's configuration (before tq_init; the generated one comes
 * after it), described in desc. Returns 0, or the exit code after saying why not. */
static int read_or_weak_gauge(prop_opts *o, tq_host_gauge *hg, char *desc, size_t desc_len, const char *me)
{
    memset(hg, 0, sizeof *hg);
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    /* under mpirun each rank reads or makes only its part, except for the staggered
     * operators, whose link construction reads the whole lattice on every rank */
    if (o->gauge_file && ri.mpi_size > 1 && !o->staggered && o->nsplit == 1) {
        /* the lattice from the header now, each rank's sites once the lattice exists */
        tq_gauge_file_info fi;
        if (tq_gauge_read_info(o->gauge_file, TQ_FORMAT_AUTO, &fi)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
        memcpy(o->dims, fi.dims, sizeof o->dims);
        o->by_parts = 1;
        snprintf(desc, desc_len, "%s (each rank reads its part)", o->gauge_file);
    } else if (o->gauge_file) {
        if (tq_gauge_read(o->gauge_file, TQ_FORMAT_AUTO, hg, NULL)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
        memcpy(o->dims, hg->dims, sizeof o->dims);
        tq_host_gauge_reunitarize(hg);
        snprintf(desc, desc_len, "%s", o->gauge_file);
    } else if (o->weak > 0 && ri.mpi_size > o->nsplit && !o->staggered) {   /* a group of several ranks */
        o->weak_parts = 1;
        snprintf(desc, desc_len, "weak field, epsilon %g, seed 1 (each rank makes its part)", o->weak);
    } else if (o->weak > 0) {
        if (tq_host_gauge_alloc(hg, o->dims)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
        tq_host_gauge_weak(hg, 1, o->weak);
        snprintf(desc, desc_len, "weak field, epsilon %g, seed 1", o->weak);
    }
    return 0;
}

/* The lattice, gauge field and operator (timed: r->t_setup) and the point sources.
 * Returns 0, or 1 after saying why not (what was made stays in r for prop_run_free). */
static int make_problem(const prop_opts *o, const tq_host_gauge *hg, prop_run *r, const char *me)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, o->dims, sizeof lp.dims);
    memcpy(lp.block, o->block, sizeof lp.block);
    memcpy(lp.procs, o->procs, sizeof lp.procs);
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    lp.group_ranks = o->nsplit > 1 ? ri.mpi_size / o->nsplit : 0;   /* a split grid: a copy per group */
    tq_field_params gp = {TQ_FIELD_GAUGE, o->prec, TQ_FULL, o->recon, 0};
    tq_field_params fp = {TQ_FIELD_SPINOR, o->prec, TQ_FULL, (tq_recon)0, 0};
    if (tq_lattice_create(&lp, &r->lat)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
    tq_lattice_get_info(r->lat, &r->li);
    /* a batch of at least one system per GPU: each system on one GPU (tq_solve_many) reads
     * one block fastest, so without --block each rank's volume is one block */
    const int batch = o->batch < o->nsrc ? o->batch : o->nsrc;
    if (!o->block[0] && !o->multigrid && r->li.nblocks > 1 && ri.ncuda_workers > 1 && batch >= ri.ncuda_workers) {
        memcpy(lp.block, r->li.local, sizeof lp.block);
        memcpy(lp.procs, r->li.procs, sizeof lp.procs);
        tq_lattice_destroy(r->lat);
        r->lat = NULL;
        if (tq_lattice_create(&lp, &r->lat)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
        tq_lattice_get_info(r->lat, &r->li);
    }
    const int64_t vol = r->li.local_volume;
    r->host = malloc((size_t)vol * 24 * sizeof *r->host);
    r->corr = calloc((size_t)o->dims[3], sizeof *r->corr);
    /* several ranks: each imports its sites of the global field, or reads them from the
     * file (collective: every rank gets the same status) */
    tq_host_gauge lg = *hg;
    const int split = vol != r->li.global_volume;
    if (o->by_parts) {
        if (tq_gauge_read_local(o->gauge_file, TQ_FORMAT_AUTO, r->lat, &lg, NULL)) {
            fprintf(stderr, "%s: %s\n", me, tq_last_error());
            return 1;
        }
        tq_host_gauge_reunitarize(&lg);   /* single-precision files: SU(3) in double */
    } else if (o->weak_parts) {
        int offset[4];
        for (int mu = 0; mu < 4; mu++) offset[mu] = r->li.coords[mu] * r->li.local[mu];
        if (tq_host_gauge_alloc(&lg, r->li.local) || tq_host_gauge_weak_part(&lg, o->dims, offset, 1, o->weak)) {
            fprintf(stderr, "%s: %s\n", me, tq_last_error());
            tq_host_gauge_free(&lg);
            return 1;
        }
    } else if (split && (tq_host_gauge_alloc(&lg, r->li.local) || tq_lattice_scatter_sites(r->lat, hg->links, lg.links, 72))) {
        fprintf(stderr, "%s: %s\n", me, tq_last_error());
        return 1;
    }
    r->t_setup = tq_cli_now();
    const int bad = !r->host || !r->corr || tq_field_create(r->lat, &gp, &r->gauge) || tq_gauge_field_import(r->gauge, &lg) ||
                    tq_dirac_create(r->gauge, &o->dp, &r->d);
    if (split || o->by_parts || o->weak_parts) tq_host_gauge_free(&lg);
    if (bad) {
        fprintf(stderr, "%s: %s\n", me, r->host && r->corr ? tq_last_error() : "out of memory");
        return 1;
    }
    r->t_setup = tq_cli_now() - r->t_setup;
    if (o->multigrid) {
        tq_runtime_info ri;
        tq_get_runtime_info(&ri);
        tq_cli_mg_precisions(&o->mg, ri.ncuda_workers > 0 && strcmp(o->where, "cpu"), &r->mgp);
        r->t_mg_setup = tq_cli_now();
        const tq_status made = o->mg.load ? tq_multigrid_load(r->d, &r->mgp, o->mg.load, &r->mg)
                                          : tq_multigrid_create(r->d, &r->mgp, (uint64_t)o->mg.seed, &r->mg);
        if (made != TQ_SUCCESS) {
            fprintf(stderr, "%s: multigrid set-up: %s\n", me, tq_last_error());
            return 1;
        }
        if (o->mg.save && tq_multigrid_save(r->mg, o->mg.save)) {
            fprintf(stderr, "%s: saving the multigrid set-up: %s\n", me, tq_last_error());
            return 1;
        }
        /* the outer GCR's sloppy operator with the set-up, not in the first solve */
        if (tq_multigrid_prepare(r->mg, &o->sp)) {
            fprintf(stderr, "%s: multigrid: %s\n", me, tq_last_error());
            return 1;
        }
        r->t_mg_setup = tq_cli_now() - r->t_mg_setup;
    }
    const int at_origin = r->li.coords[0] + r->li.coords[1] + r->li.coords[2] + r->li.coords[3] == 0;
    memset(r->host, 0, (size_t)vol * 24 * sizeof *r->host);   /* once: each source sets and clears its site */
    tq_cli_split_share(o, r);
    for (int s = r->src0; s < r->src0 + r->nmine; s++) {
        if (at_origin) r->host[2 * s] = 1.0;   /* global site 0, spin s / 3, color s % 3, real part */
        const int bad_source = tq_field_create(r->lat, &fp, &r->b[s]) || tq_field_create(r->lat, &fp, &r->x[s]) ||
                               tq_field_import(r->b[s], r->host);
        r->host[2 * s] = 0.0;
        if (bad_source) {
            fprintf(stderr, "%s: %s\n", me, tq_last_error());
            return 1;
        }
    }
    return 0;
}

static void prop_run_free(prop_run *r)
{
    tq_multigrid_destroy(r->mg);
    for (int s = 0; s < 12; s++) { tq_field_destroy(r->x[s]); tq_field_destroy(r->b[s]); }
    tq_dirac_destroy(r->d);
    tq_field_destroy(r->gauge);
    tq_lattice_destroy(r->lat);
    free(r->host);
    free(r->corr);
}

/* Solves n systems from s0: together (tq_solve_many), or one after another with the
 * multigrid set-up. */
static tq_status solve_some(const prop_opts *o, prop_run *r, int s0, int n)
{
    if (!r->mg) return tq_solve_many(r->d, n, r->x + s0, (const tq_field *const *)(r->b + s0), &o->sp, r->res + s0);
    return tq_multigrid_solve_many(r->mg, n, r->x + s0, (const tq_field *const *)(r->b + s0), &o->sp, r->res + s0);
}

/* --warmup: the first batch solved once, untimed. Returns its status. */
static tq_status warm_up(const prop_opts *o, prop_run *r, const char *me)
{
    const double tw = tq_cli_now();
    const int n = o->batch < r->nmine ? o->batch : r->nmine;
    tq_status st = n > 0 ? solve_some(o, r, r->src0, n) : TQ_SUCCESS;
    if (st != TQ_SUCCESS) fprintf(stderr, "%s: warm-up solves: %s\n", me, tq_last_error());
    else if (!o->json) printf("  warm-up (first batch, untimed): %.3f s\n", tq_cli_now() - tw);
    return st;
}

/* Which solves of the batch s0 .. s0 + n - 1 converged, after tq_solve_many returned st.
 * The library reports one status per batch; a failed batch's solves are judged by the
 * library's own stopping rule (iterated residual below tol, true residual below sqrt(tol);
 * a system that broke down keeps the NaN it was given), and when that blames none of them,
 * all are counted as failed. */
static void judge_batch(const prop_opts *o, prop_run *r, int s0, int n, tq_status st)
{
    int failed = 0;
    for (int s = s0; s < s0 + n; s++) {
        const tq_solver_result *x = &r->res[s];
        r->converged[s] = st == TQ_SUCCESS || (x->residual <= o->sp.tol && x->true_residual <= sqrt(o->sp.tol));
        failed += !r->converged[s];
    }
    if (st != TQ_SUCCESS && failed == 0)
        for (int s = s0; s < s0 + n; s++) r->converged[s] = 0;
}

/* This rank's sources' solves, batch by batch, timed as a whole (r->wall), with a table
 * line per solve (a split grid's lines come after the gather). Returns the first failure's
 * status, or TQ_SUCCESS. */
static tq_status solve_batches(const prop_opts *o, prop_run *r, const char *me)
{
    tq_status st_all = TQ_SUCCESS;
    const double t0 = tq_cli_now();
    const int end = r->src0 + r->nmine;
    for (int s0 = r->src0; s0 < end; s0 += o->batch) {
        int n = s0 + o->batch <= end ? o->batch : end - s0;
        for (int s = s0; s < s0 + n; s++) r->res[s].residual = r->res[s].true_residual = NAN;   /* unset: not converged */
        tq_status st = solve_some(o, r, s0, n);
        judge_batch(o, r, s0, n, st);
        if (st != TQ_SUCCESS) {
            fprintf(stderr, "%s: sources %d-%d: %s\n", me, s0, s0 + n - 1, tq_last_error());
            if (st_all == TQ_SUCCESS) st_all = st;
        }
        if (!o->json && o->nsplit == 1) tq_cli_prop_solve_lines(r, s0, n);
    }
    r->wall = tq_cli_now() - t0;
    return st_all;
}

/* density[site] += |x(site)|^2 over sites [begin, end) of a host spinor. */
typedef struct density_part {
    const double *x;
    double *density;
    int64_t begin, end;
} density_part;

static void *add_density_part(void *arg)
{
    const density_part *p = arg;
    for (int64_t site = p->begin; site < p->end; site++) {
        double a = 0;
        for (int k = 0; k < 24; k++) a += p->x[24 * site + k] * p->x[24 * site + k];
        p->density[site] += a;
    }
    return NULL;
}

/* The same over all vol sites, split across the host's cores (each site's sum is the same
 * whatever the split: the same bits); one thread took 20-25 ms per 32^4 source. */
static void add_density(const double *x, double *density, int64_t vol)
{
    enum { MAX_PARTS = 16, MIN_SITES = 32768 };
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int n = ncpu < 1 ? 1 : ncpu > MAX_PARTS ? MAX_PARTS : (int)ncpu;
    if (n > vol / MIN_SITES) n = vol / MIN_SITES > 0 ? (int)(vol / MIN_SITES) : 1;
    density_part part[MAX_PARTS];
    pthread_t th[MAX_PARTS];
    int started[MAX_PARTS] = {0};
    for (int i = 0; i < n; i++) {
        part[i] = (density_part){x, density, vol * i / n, vol * (i + 1) / n};
        if (i > 0) started[i] = !pthread_create(&th[i], NULL, add_density_part, &part[i]);
    }
    add_density_part(&part[0]);
    for (int i = 1; i < n; i++) {
        if (started[i]) pthread_join(th[i], NULL);
        else add_density_part(&part[i]);   /* a thread that could not start: its part here */
    }
}

/* This rank's sources' |x|^2 added, source by source, to the density (its sites). */
static tq_status add_my_sources(double *density, void *arg)
{
    prop_run *r = arg;
    for (int s = r->src0; s < r->src0 + r->nmine; s++) {
        const tq_status st = tq_field_export(r->x[s], r->host);
        if (st != TQ_SUCCESS) return st;
        add_density(r->host, density, r->li.local_volume);
    }
    return TQ_SUCCESS;
}

/* The pion correlator: C(t) = the sum over the sites of time slice t of the sum over
 * sources of |x|^2. Each site's sum over sources first (on a split grid the groups add
 * their sources in turn, in source order), then the slices' sums in global site order
 * over the density gathered from every rank: the same bits on any rank grid and split.
 * Collective; returns 0, or 1 after saying why not (on every rank). */
static int pion_correlator(const prop_opts *o, prop_run *r, const char *me)
{
    const int64_t vol = r->li.local_volume, gvol = r->li.global_volume;
    const int64_t slice = (int64_t)o->dims[0] * o->dims[1] * o->dims[2];
    double *density = calloc((size_t)vol, sizeof *density), *global = malloc((size_t)gvol * sizeof *global);
    int rc = 1;
    if (!density || !global) fprintf(stderr, "%s: out of memory for the correlator\n", me);
    if (tq_cli_agree(me, !density || !global)) goto out;
    const tq_status st = tq_lattice_groups_in_order(r->lat, density, vol, add_my_sources, r);
    if (st != TQ_SUCCESS) fprintf(stderr, "%s: %s\n", me, tq_last_error());
    if (tq_cli_agree(me, st != TQ_SUCCESS)) goto out;
    if (tq_lattice_allgather_sites(r->lat, density, global, 1)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); goto out; }
    for (int64_t site = 0; site < gvol; site++) r->corr[site / slice] += global[site];
    rc = 0;
out:
    free(density);
    free(global);
    return rc;
}

/* Everything after tq_init and the gauge field: operator, solves, correlator, output.
 * Returns the exit code. */
static int run_propagator(const prop_opts *o, const tq_host_gauge *hg, const char *gauge_desc, const char *me,
                          prop_clock *clk)
{
    prop_run r;
    memset(&r, 0, sizeof r);
    int rc = 1;
    double t = tq_cli_now();
    /* every rank learns of one that could not make its problem (a split grid's ranks meet
     * next only after their solves) */
    if (!tq_cli_agree(me, make_problem(o, hg, &r, me))) {
        clk->problem = tq_cli_now() - t;
        clk->setup = r.t_setup + r.t_mg_setup;
        if (!o->json) tq_cli_prop_header(o, &r, gauge_desc);
        r.st = o->warmup ? warm_up(o, &r, me) : TQ_SUCCESS;
        tq_status st = solve_batches(o, &r, me);
        if (r.st == TQ_SUCCESS) r.st = st;
        if (o->nsplit > 1 && tq_cli_split_gather(o, &r, me)) {
            prop_run_free(&r);
            return 1;
        }
        if (o->nsplit > 1 && !o->json) tq_cli_prop_solve_lines(&r, 0, o->nsrc);
        for (int s = 0; s < o->nsrc; s++) r.nfailed += !r.converged[s];
        clk->solves = r.wall;
        char why[96];
        if (r.st != TQ_SUCCESS)
            fprintf(stderr, "%s: %s: no pion correlator (unconverged solutions are not a result)\n", me,
                    tq_cli_prop_failure(o, &r, why, sizeof why));
        t = tq_cli_now();
        const int corr_failed = r.st == TQ_SUCCESS && pion_correlator(o, &r, me);
        clk->correlator = tq_cli_now() - t;
        if (r.st != TQ_SUCCESS || !corr_failed) {
            if (o->json) tq_cli_prop_json(o, &r, gauge_desc);
            else tq_cli_prop_summary(o, &r);
            rc = r.st == TQ_SUCCESS ? 0 : 1;
        }
    }
    prop_run_free(&r);
    return rc;
}

int tq_cmd_propagator(int argc, char **argv)
{
    const char *me = "taskqcd propagator";
    const double t_start = tq_cli_now();
    prop_clock clk = {0};
    tq_init_params ip;
    tq_init_params_default(&ip);
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
    prop_opts o;
    int rc = parse_propagator_args(argc, argv, &o, me);
    if (rc >= 0) return rc;
    tq_cli_workers_for_placement(&ip, o.where);
    double t = tq_cli_now();
    const int init = tq_cli_init(me, &ip);
    if (init) return init;
    clk.init = tq_cli_now() - t;
    if ((rc = tq_cli_split_check(&o, me))) {   /* against the rank count, known now */
        tq_finalize();
        return rc;
    }
    t = tq_cli_now();
    /* read after tq_init: under mpirun every rank must learn that one could not read it */
    tq_host_gauge hg;
    char gauge_desc[512];
    if ((rc = tq_cli_agree(me, read_or_weak_gauge(&o, &hg, gauge_desc, sizeof gauge_desc, me)))) {
        tq_host_gauge_free(&hg);
        tq_finalize();
        return rc;
    }
    tq_set_placement(!strcmp(o.where, "cpu") ? TQ_WHERE_CPU : !strcmp(o.where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);
    if (!hg.links && !o.by_parts && !o.weak_parts) {
        memcpy(o.q.dims, o.dims, sizeof o.q.dims);
        int made = tq_cli_quenched_gauge(&o.q, o.json ? 0 : ip.verbosity, &hg, gauge_desc, sizeof gauge_desc);
        if (made) fprintf(stderr, "%s: generating the gauge field: %s\n", me, tq_last_error());
        if (tq_cli_agree(me, made)) {
            tq_host_gauge_free(&hg);
            tq_finalize();
            return 1;
        }
    }
    clk.gauge = tq_cli_now() - t;
    o.sp.verbosity = o.json && ip.verbosity < 2 ? 0 : ip.verbosity;   /* 2: a line per iteration (stderr) */
    o.ks.sp = o.sp;
    o.ks.nsplit = o.nsplit;
    rc = o.staggered ? tq_cli_ks_propagator(&o.ks, &hg, gauge_desc, me) : run_propagator(&o, &hg, gauge_desc, me, &clk);
    tq_host_gauge_free(&hg);
    tq_set_placement(TQ_WHERE_ANY);
    t = tq_cli_now();
    tq_finalize();
    clk.finalize = tq_cli_now() - t;
    if (!o.staggered && !o.json && rc == 0) tq_cli_prop_clock(&clk, tq_cli_now() - t_start);
    return rc;
}
