/* taskqcd propagator: the main job (in the spirit of QUDA's invert_test). Loads a gauge
 * configuration (or generates a quenched one, cached for later runs), sets up the Wilson or clover operator,
 * solves M x = b for the 12 spin-color point sources at the origin (or the first --nsrc of
 * them), reports per solve the iterations, true residual, time and GFLOPS, and prints the
 * pion (gamma5-gamma5) two-point function C(t) = sum_{x in t} sum_src |x_src(x)|^2 with its
 * effective mass log(C(t) / C(t+1)). Solves go to the library in batches (--batch N,
 * default all of them at once: their iterations interleave and fill every worker). */
#include "cli.h"
#include "taskqcd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void propagator_usage(FILE *o)
{
    fprintf(o,
        "usage: taskqcd propagator [--gauge FILE | --dim X Y Z T [--beta B] [--therm N]\n"
        "         [--gauge-seed S] [--cache DIR|off] | --dim X Y Z T --weak-field EPS] [--block X Y Z T]\n"
        "         [--dslash-type wilson|clover] [--kappa K] [--csw C] [--matpc sym|asym]\n"
        "         [--prec P] [--recon R] [--prec-sloppy P] [--recon-sloppy R]\n"
        "         [--inv-type cg|bicgstab|cgnr|cgne|mr|gcr] [--solve-type direct-pc|direct|normop-pc|normop]\n"
        "         [--tol T] [--maxiter N] [--reliable-delta D] [--mixed reliable|defect]\n"
        "         [--gcr-nkrylov N] [--precond none|mr] [--precond-iters N]\n"
        "         [--nsrc N] [--batch N] [--where any|cpu|cuda] [--warmup] [--json] [runtime options]\n"
        "Solves M x = b for the spin-color point sources at the origin (12, or the first N),\n"
        "prints per solve iterations, true residual |b - M x| / |b|, time and GFLOPS, then the\n"
        "pion correlator C(t) summed over space and its effective mass. Without --gauge the\n"
        "gauge field is a quenched configuration of --dim (default 8 8 8 16) at --beta (6.0):\n"
        "--therm sweeps (50) of 1 heat bath + 4 overrelaxation from a cold start with\n"
        "--gauge-seed (1), made by `taskqcd generate`'s generator the first time and kept in\n"
        "the cache directory (--cache, default $TASKQCD_CACHE, $XDG_CACHE_HOME/taskqcd or\n"
        "~/.cache/taskqcd; off: not kept); --weak-field EPS uses a weak-field random one instead.\n"
        "Defaults: clover (c_sw 1), kappa 0.13, double, recon 12, BiCGstab on the even-odd\n"
        "system, tol 1e-10, single-precision sloppy solves with reliable updates (delta 0.1),\n"
        "all solves in one batch. --json prints one JSON object instead of the tables.\n"
        "--warmup solves the first batch once, untimed, before the timed solves: the first\n"
        "solves in a process also allocate the device memory of their work fields and make\n"
        "the sloppy operator (benchmarks time the steady state with it).\n");
}


/* s as the inside of a JSON string (file names may hold quotes or backslashes) */
static void print_json_chars(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
}

static int parse_recon(const char *s, tq_recon *r)
{
    int v = atoi(s);
    if (v != 18 && v != 12 && v != 8) return -1;
    *r = (tq_recon)v;
    return 0;
}

int tq_cmd_propagator(int argc, char **argv)
{
    const char *me = "taskqcd propagator";
    tq_init_params ip;
    tq_init_params_default(&ip);
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
    int dims[4] = {8, 8, 8, 16}, block[4] = {0, 0, 0, 0};
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_CLOVER;
    dp.kappa = 0.13;
    dp.csw = 1.0;
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.inverter = TQ_INV_BICGSTAB;
    sp.prec_sloppy = TQ_SINGLE;
    tq_precision prec = TQ_DOUBLE;
    tq_recon recon = TQ_RECON_12;
    int nsrc = 12, batch = 0, json = 0, warmup = 0;
    const char *gauge_file = NULL, *where = "any";
    char cache_buf[4096];
    tq_cli_quenched q = {{0, 0, 0, 0}, 6.0, 1, 50, 4, tq_cli_default_cache_dir(cache_buf, sizeof cache_buf)};
    double weak = 0;
    int generator_option = 0;   /* an option of the generated configuration was given */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--dim") || !strcmp(a, "--block")) {
            bad = tq_cli_parse_dims(argc, argv, &i, !strcmp(a, "--dim") ? dims : block);
        } else if (!strcmp(a, "--gauge") && v) { gauge_file = v; i++; }
        else if (!strcmp(a, "--beta") && v) { i++; char *e; q.beta = strtod(v, &e); bad = *e || !(q.beta > 0); generator_option = 1; }
        else if (!strcmp(a, "--therm") && v) { i++; char *e; q.sweeps = (int)strtol(v, &e, 10); bad = *e || q.sweeps < 0; generator_option = 1; }
        else if (!strcmp(a, "--gauge-seed") && v) { i++; char *e; q.seed = strtoull(v, &e, 0); bad = *e || v[0] == '-'; generator_option = 1; }
        else if (!strcmp(a, "--cache") && v) { i++; q.cache_dir = strcmp(v, "off") ? v : NULL; generator_option = 1; }
        else if (!strcmp(a, "--weak-field") && v) { i++; char *e; weak = strtod(v, &e); bad = *e || !(weak > 0); }
        else if (!strcmp(a, "--dslash-type") && v) {
            i++;
            if (!strcmp(v, "wilson")) dp.type = TQ_DSLASH_WILSON;
            else if (!strcmp(v, "clover")) dp.type = TQ_DSLASH_CLOVER;
            else bad = 1;
        } else if (!strcmp(a, "--kappa") && v) { i++; dp.kappa = atof(v); bad = !(dp.kappa > 0); }
        else if (!strcmp(a, "--csw") && v) { i++; char *e; dp.csw = strtod(v, &e); bad = *e || !isfinite(dp.csw); }
        else if (!strcmp(a, "--matpc") && v) {
            i++;
            if (!strcmp(v, "sym")) dp.matpc = TQ_MATPC_SYMMETRIC;
            else if (!strcmp(v, "asym")) dp.matpc = TQ_MATPC_ASYMMETRIC;
            else bad = 1;
        } else if (!strcmp(a, "--prec") && v) { i++; bad = tq_precision_parse(v, &prec) != TQ_SUCCESS; }
        else if (!strcmp(a, "--prec-sloppy") && v) { i++; bad = tq_precision_parse(v, &sp.prec_sloppy) != TQ_SUCCESS; }
        else if (!strcmp(a, "--recon") && v) { i++; bad = parse_recon(v, &recon); }
        else if (!strcmp(a, "--recon-sloppy") && v) { i++; bad = parse_recon(v, &sp.recon_sloppy); }
        else if (!strcmp(a, "--inv-type") && v) { i++; bad = tq_inverter_parse(v, &sp.inverter) != TQ_SUCCESS; }
        else if (!strcmp(a, "--solve-type") && v) { i++; bad = tq_solve_type_parse(v, &sp.solve_type) != TQ_SUCCESS; }
        else if (!strcmp(a, "--tol") && v) { i++; sp.tol = atof(v); bad = !(sp.tol > 0 && sp.tol < 1); }
        else if (!strcmp(a, "--maxiter") && v) { i++; bad = tq_cli_parse_positive(v, &sp.maxiter); }
        else if (!strcmp(a, "--reliable-delta") && v) { i++; sp.reliable_delta = atof(v); bad = !(sp.reliable_delta > 0 && sp.reliable_delta < 1); }
        else if (!strcmp(a, "--mixed") && v) {
            i++;
            if (!strcmp(v, "reliable")) sp.mixed = TQ_MIXED_RELIABLE;
            else if (!strcmp(v, "defect")) sp.mixed = TQ_MIXED_DEFECT;
            else bad = 1;
        } else if (!strcmp(a, "--gcr-nkrylov") && v) { i++; bad = tq_cli_parse_positive(v, &sp.gcr_nkrylov) || sp.gcr_nkrylov > 10; }
        else if (!strcmp(a, "--precond") && v) {
            i++;
            if (!strcmp(v, "none")) sp.precond = TQ_PRECOND_NONE;
            else if (!strcmp(v, "mr")) sp.precond = TQ_PRECOND_MR;
            else bad = 1;
        } else if (!strcmp(a, "--precond-iters") && v) { i++; bad = tq_cli_parse_positive(v, &sp.precond_iters); }
        else if (!strcmp(a, "--nsrc") && v) { i++; bad = tq_cli_parse_positive(v, &nsrc) || nsrc > 12; }
        else if (!strcmp(a, "--batch") && v) { i++; bad = tq_cli_parse_positive(v, &batch); }
        else if (!strcmp(a, "--where") && v) {
            i++;
            where = v;
            bad = strcmp(v, "any") && strcmp(v, "cpu") && strcmp(v, "cuda");
        } else if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--warmup")) warmup = 1;
        else if (!strcmp(a, "--help")) { propagator_usage(stdout); return 0; }
        else {
            fprintf(stderr, "%s: unknown option '%s'\n", me, a);
            propagator_usage(stderr);
            return 2;
        }
        if (bad) {
            fprintf(stderr, "%s: bad value for %s%s%s\n", me, a, v ? ": " : "", v ? v : "");
            return 2;
        }
    }
    if (batch <= 0 || batch > nsrc) batch = nsrc;
    /* the sloppy precision defaults to single: no mixed precision when the operator is
     * single already, and half operators stay uniform */
    if (sp.prec_sloppy == prec || prec != TQ_DOUBLE) sp.prec_sloppy = (tq_precision)0;
    if (sp.prec_sloppy == 0 && sp.recon_sloppy == 0) sp.mixed = TQ_MIXED_RELIABLE;

    if ((gauge_file || weak > 0) && generator_option) {
        fprintf(stderr, "%s: --beta, --therm, --gauge-seed and --cache describe the generated configuration: not with %s\n",
                me, gauge_file ? "--gauge" : "--weak-field");
        return 2;
    }
    if (gauge_file && weak > 0) { fprintf(stderr, "%s: --gauge and --weak-field exclude each other\n", me); return 2; }
    if (!gauge_file && weak == 0)
        for (int mu = 0; mu < 4; mu++)
            if (dims[mu] % 2) {
                fprintf(stderr, "%s: dimension %d is %d: the generated configuration needs even extents (or use --gauge "
                        "or --weak-field)\n", me, mu, dims[mu]);
                return 2;
            }
    tq_host_gauge hg;
    memset(&hg, 0, sizeof hg);
    char gauge_desc[512];
    if (gauge_file) {
        if (tq_gauge_read(gauge_file, TQ_FORMAT_AUTO, &hg, NULL)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
        memcpy(dims, hg.dims, sizeof dims);
        tq_host_gauge_reunitarize(&hg);
        snprintf(gauge_desc, sizeof gauge_desc, "%s", gauge_file);
    } else if (weak > 0) {
        if (tq_host_gauge_alloc(&hg, dims)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
        tq_host_gauge_weak(&hg, 1, weak);
        snprintf(gauge_desc, sizeof gauge_desc, "weak field, epsilon %g, seed 1", weak);
    }
    tq_cli_sched_for_placement(&ip, where);
    if (tq_init(&ip)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); tq_host_gauge_free(&hg); return 1; }
    tq_set_placement(!strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);
    if (!hg.links) {
        memcpy(q.dims, dims, sizeof q.dims);
        if (tq_cli_quenched_gauge(&q, json ? 0 : ip.verbosity, &hg, gauge_desc, sizeof gauge_desc)) {
            fprintf(stderr, "%s: generating the gauge field: %s\n", me, tq_last_error());
            tq_finalize();
            return 1;
        }
    }
    sp.verbosity = json && ip.verbosity < 2 ? 0 : ip.verbosity;   /* 2: a line per iteration (stderr) */

    int rc = 1;
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    tq_lattice *lat = NULL;
    tq_field *gauge = NULL, *x[12] = {0}, *b[12] = {0};
    tq_dirac *d = NULL;
    double *host = malloc((size_t)vol * 24 * sizeof *host);
    double *corr = calloc((size_t)dims[3], sizeof *corr);
    tq_solver_result res[12];
    memset(res, 0, sizeof res);
    tq_status st_all = TQ_SUCCESS;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    memcpy(lp.block, block, sizeof lp.block);
    tq_field_params gp = {TQ_FIELD_GAUGE, prec, TQ_FULL, recon};
    tq_field_params fp = {TQ_FIELD_SPINOR, prec, TQ_FULL, (tq_recon)0};
    double t_setup = tq_cli_now();
    if (!host || !corr || tq_lattice_create(&lp, &lat) || tq_field_create(lat, &gp, &gauge) ||
        tq_gauge_field_import(gauge, &hg) || tq_dirac_create(gauge, &dp, &d)) {
        fprintf(stderr, "%s: %s\n", me, host && corr ? tq_last_error() : "out of memory");
        goto done;
    }
    t_setup = tq_cli_now() - t_setup;
    for (int s = 0; s < nsrc; s++) {
        memset(host, 0, (size_t)vol * 24 * sizeof *host);
        host[2 * s] = 1.0;   /* site 0, spin s / 3, color s % 3, real part */
        if (tq_field_create(lat, &fp, &b[s]) || tq_field_create(lat, &fp, &x[s]) || tq_field_import(b[s], host)) {
            fprintf(stderr, "%s: %s\n", me, tq_last_error());
            goto done;
        }
    }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    if (!json) {
        printf("taskqcd propagator: %s, kappa %g%s, %dx%dx%dx%d, %s recon %d, %s %s, tol %.0e", dp.type == TQ_DSLASH_CLOVER ? "clover" : "wilson",
               dp.kappa, dp.type == TQ_DSLASH_CLOVER ? "" : "", dims[0], dims[1], dims[2], dims[3], tq_precision_name(prec),
               (int)recon, tq_inverter_name(sp.inverter), tq_solve_type_name(sp.solve_type), sp.tol);
        if (sp.prec_sloppy) printf(", sloppy %s (%s)", tq_precision_name(sp.prec_sloppy), sp.mixed == TQ_MIXED_DEFECT ? "defect correction" : "reliable updates");
        printf(", %d sources in batches of %d, where %s, %d CPU + %d CUDA workers\n", nsrc, batch, where, ri.ncpu_workers,
               ri.ncuda_workers);
        printf("  gauge field: %s\n  set-up (gauge import, operator): %.3f s\n", gauge_desc, t_setup);
    }
    if (warmup) {
        const double tw = tq_cli_now();
        const int n = batch < nsrc ? batch : nsrc;
        tq_status stw = tq_solve_many(d, n, x, (const tq_field *const *)b, &sp, res);
        if (stw != TQ_SUCCESS) {
            fprintf(stderr, "%s: warm-up solves: %s\n", me, tq_last_error());
            st_all = stw;
        } else if (!json) {
            printf("  warm-up (first batch, untimed): %.3f s\n", tq_cli_now() - tw);
        }
    }
    double t0 = tq_cli_now();
    for (int s0 = 0; s0 < nsrc; s0 += batch) {
        int n = s0 + batch <= nsrc ? batch : nsrc - s0;
        tq_status st = tq_solve_many(d, n, x + s0, (const tq_field *const *)(b + s0), &sp, res + s0);
        if (st != TQ_SUCCESS) {
            fprintf(stderr, "%s: sources %d-%d: %s\n", me, s0, s0 + n - 1, tq_last_error());
            if (st_all == TQ_SUCCESS) st_all = st;
        }
        if (!json)
            for (int s = s0; s < s0 + n; s++)
                printf("  solve %2d (spin %d, color %d): %5d iterations (%d reliable updates), true residual %.3e, %.3f s, "
                       "%.1f GFLOPS; iterations %.3f s, %.1f GFLOPS\n",
                       s, s / 3, s % 3, res[s].iterations, res[s].reliable_updates, res[s].true_residual, res[s].seconds,
                       res[s].seconds > 0 ? res[s].flops / res[s].seconds * 1e-9 : 0.0, res[s].iter_seconds,
                       res[s].iter_seconds > 0 ? res[s].iter_flops / res[s].iter_seconds * 1e-9 : 0.0);
    }
    const double wall = tq_cli_now() - t0;
    double flops = 0;
    int iters = 0;
    for (int s = 0; s < nsrc; s++) { flops += res[s].flops; iters += res[s].iterations; }
    /* the pion correlator: sum over sources and sites of time slice t of |x|^2 */
    for (int s = 0; s < nsrc; s++) {
        if (tq_field_export(x[s], host)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); goto done; }
        for (int64_t site = 0; site < vol; site++) {
            int t = (int)(site / ((int64_t)dims[0] * dims[1] * dims[2]));
            double a = 0;
            for (int k = 0; k < 24; k++) a += host[24 * site + k] * host[24 * site + k];
            corr[t] += a;
        }
    }
    if (json) {
        printf("{\"gauge\": \"");
        print_json_chars(gauge_desc);
        printf("\", \"dims\": [%d, %d, %d, %d], \"dslash_type\": \"%s\", \"kappa\": %.17g, \"csw\": %.17g, \"prec\": \"%s\", "
               "\"prec_sloppy\": \"%s\", \"inverter\": \"%s\", \"solve_type\": \"%s\", \"tol\": %.3g, \"batch\": %d, "
               "\"wall_seconds\": %.6f, \"gflops\": %.3f,\n \"solves\": [",
               dims[0], dims[1], dims[2], dims[3], dp.type == TQ_DSLASH_CLOVER ? "clover" : "wilson", dp.kappa, dp.csw,
               tq_precision_name(prec), sp.prec_sloppy ? tq_precision_name(sp.prec_sloppy) : tq_precision_name(prec),
               tq_inverter_name(sp.inverter), tq_solve_type_name(sp.solve_type), sp.tol, batch, wall, flops / wall * 1e-9);
        for (int s = 0; s < nsrc; s++)
            printf("%s{\"source\": %d, \"iterations\": %d, \"reliable_updates\": %d, \"true_residual\": %.6e, \"seconds\": %.6f, "
                   "\"gflops\": %.3f, \"iter_seconds\": %.6f, \"iter_gflops\": %.3f}", s ? ",\n   " : "", s, res[s].iterations,
                   res[s].reliable_updates, res[s].true_residual, res[s].seconds,
                   res[s].seconds > 0 ? res[s].flops / res[s].seconds * 1e-9 : 0.0, res[s].iter_seconds,
                   res[s].iter_seconds > 0 ? res[s].iter_flops / res[s].iter_seconds * 1e-9 : 0.0);
        printf("],\n \"correlator\": [");
        for (int t = 0; t < dims[3]; t++) printf("%s%.17g", t ? ", " : "", corr[t]);
        printf("],\n \"effective_mass\": [");
        for (int t = 0; t + 1 < dims[3]; t++) printf("%s%.10g", t ? ", " : "", log(corr[t] / corr[t + 1]));
        printf("]}\n");
    } else {
        printf("  all solves: %d iterations, %.3f s, %.1f GFLOPS (wall clock of the solves)\n", iters, wall, flops / wall * 1e-9);
        printf("  pion correlator (sum over space and the %d sources):\n      t  C(t)                    m_eff(t) = log C(t)/C(t+1)\n", nsrc);
        for (int t = 0; t < dims[3]; t++) {
            printf("  %5d  %.16e", t, corr[t]);
            if (t + 1 < dims[3]) printf("  %+.8f", log(corr[t] / corr[t + 1]));
            printf("\n");
        }
    }
    rc = st_all == TQ_SUCCESS ? 0 : 1;
done:
    for (int s = 0; s < 12; s++) { tq_field_destroy(x[s]); tq_field_destroy(b[s]); }
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    free(host);
    free(corr);
    tq_host_gauge_free(&hg);
    tq_set_placement(TQ_WHERE_ANY);
    tq_finalize();
    return rc;
}
