/* taskqcd dslash: applies a Wilson-type operator (in the spirit of QUDA's dslash_test),
 * checks it against the plain-loop double-precision reference and prints time, GFLOPS and
 * GB/s. Flops as QUDA counts them: 1320 per site for the hopping term, +48 per site for
 * the x + a D y of M and M_pc, +504 per clover (or inverse) application; the clover
 * "dslash" (A^-1 D) counts 1872, QUDA's figure. Bytes (clover: +72 reals per application): QUDA's model (per output site 8 links as stored,
 * 8 neighbour spinors, 1 output spinor, +1 spinor for xpay) and the minimal-traffic model
 * (every link, input spinor and output spinor moved once: per output site of one parity
 * 8 links + 1 input + 1 output spinor, +1 for xpay). */
#include "cli.h"
#include "taskqcd.h"
#include "dirac/dirac_internal.h"                 /* tq_internal_dslash_bare */
#include "../../reference/wilson_reference.h"   /* the reference the tests use */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void dslash_usage(FILE *o)
{
    fprintf(o,
        "usage: taskqcd dslash [--dim X Y Z T] [--block X Y Z T] [--prec double|single|half|LIST|all]\n"
        "                      [--recon 18|12|8|LIST|all] [--dslash-type wilson|clover] [--kappa K] [--csw C]\n"
        "                      [--matpc sym|asym]\n"
        "                      [--test dslash|mat|matpc|matpcdagmatpc|LIST|all] [--dagger] [--niter N]\n"
        "                      [--gauge FILE] [--where any|cpu|cuda] [--check|--no-check]\n"
        "                      [--bare] [runtime options]\n"
        "Applies the operator niter times (after three warm-ups), prints time per application,\n"
        "GFLOPS and GB/s, and checks the result against the double-precision plain-loop\n"
        "reference (by default when the volume is at most 16^4). Without --gauge the gauge\n"
        "field is weak-field random (seed 1, epsilon 0.2). Boundary conditions: antiperiodic in t.\n"
        "--prec, --recon and --test take comma lists (or all): one run per combination on the same\n"
        "gauge field and source, which are made or read once.\n"
        "Clover: --test dslash applies A^-1 D; matpc is the symmetric (default, 1 - k^2 A^-1 D\n"
        "A^-1 D) or asymmetric (A - k^2 D A^-1 D) even-odd operator; --csw defaults to 1.\n"
        "--bare (Wilson dslash test, one block, a CUDA worker): also times the interior\n"
        "kernel launched directly on the same data, and prints the task graph's overhead.\n");
}


enum { T_DSLASH, T_MAT, T_MATPC, T_MATPCDAG };

/* What one invocation applies; precision and compression vary per case. */
typedef struct dslash_opts {
    int dims[4], block[4];
    int niter, tests[4], ntests, dagger, check, clover, asym, bare;
    double kappa, csw;
    const char *where;
} dslash_opts;

/* A name a list item may take and the value it stands for. */
typedef struct list_name { const char *name; int value; } list_name;

/* Parses a comma list of names from table (or "all": the first nall entries) into out
 * (at most max values); returns the count, or -1 for an unknown name or too many. */
static int parse_list(const char *list, const list_name *table, int ntable, int nall, int *out, int max)
{
    int n = 0;
    if (!strcmp(list, "all")) {
        for (; n < nall && n < max; n++) out[n] = table[n].value;
        return n;
    }
    char buf[96];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int found = -1;
        for (int k = 0; k < ntable && found < 0; k++)
            if (!strcmp(t, table[k].name)) found = k;
        if (n == max || found < 0) return -1;
        out[n++] = table[found].value;
    }
    return n;
}

static const list_name precision_names[] = {
    {"double", TQ_DOUBLE}, {"single", TQ_SINGLE}, {"half", TQ_HALF}, {"d", TQ_DOUBLE}, {"s", TQ_SINGLE}, {"h", TQ_HALF}};
static const list_name recon_names[] = {{"18", 18}, {"12", 12}, {"8", 8}};
static const list_name test_names[] = {{"dslash", T_DSLASH}, {"mat", T_MAT}, {"matpc", T_MATPC}, {"matpcdagmatpc", T_MATPCDAG}};

static int run_case(const dslash_opts *o, const tq_host_gauge *hg, const double *src, tq_precision prec, int recon);
static int run_test(const dslash_opts *o, const tq_host_gauge *hg, const double *src, tq_lattice *lat, tq_dirac *d,
                    tq_precision prec, int recon, int test, const double *setup);

int tq_cmd_dslash(int argc, char **argv)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    if (tq_init_params_from_args(&ip, &argc, argv)) {
        fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
        return 2;
    }
    int dims[4] = {16, 16, 16, 16}, block[4] = {0, 0, 0, 0};
    int niter = 10, tests[4] = {T_DSLASH}, ntests = 1, dagger = 0, check = -1;
    double kappa = 0.12, csw = 1.0;
    int clover = 0, asym = 0, bare = 0;
    tq_precision precs[3] = {TQ_SINGLE};
    int recons[3] = {12}, nprec = 1, nrecon = 1;
    const char *gauge_file = NULL, *where = "any";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--dim") || !strcmp(a, "--block")) {
            if (tq_cli_parse_dims(argc, argv, &i, !strcmp(a, "--dim") ? dims : block)) {
                fprintf(stderr, "taskqcd dslash: %s needs 4 positive integers\n", a);
                return 2;
            }
        } else if (!strcmp(a, "--prec") && i + 1 < argc) {
            int pv[3];
            if ((nprec = parse_list(argv[++i], precision_names, 6, 3, pv, 3)) < 1) {
                fprintf(stderr, "taskqcd dslash: --prec takes double, single, half, a comma list of them or all (got '%s')\n", argv[i]);
                return 2;
            }
            for (int k = 0; k < nprec; k++) precs[k] = (tq_precision)pv[k];
        } else if (!strcmp(a, "--recon") && i + 1 < argc) {
            if ((nrecon = parse_list(argv[++i], recon_names, 3, 3, recons, 3)) < 1) {
                fprintf(stderr, "taskqcd dslash: --recon takes 18, 12, 8, a comma list of them or all (got '%s')\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--dslash-type") && i + 1 < argc) {
            const char *t = argv[++i];
            if (!strcmp(t, "clover")) clover = 1;
            else if (!strcmp(t, "wilson")) clover = 0;
            else { fprintf(stderr, "taskqcd dslash: unknown --dslash-type '%s' (wilson, clover)\n", t); return 2; }
        } else if (!strcmp(a, "--csw") && i + 1 < argc) {
            char *end;
            csw = strtod(argv[++i], &end);
            if (*end || !isfinite(csw)) { fprintf(stderr, "taskqcd dslash: --csw needs a number\n"); return 2; }
        } else if (!strcmp(a, "--matpc") && i + 1 < argc) {
            const char *t = argv[++i];
            if (!strcmp(t, "sym") || !strcmp(t, "symmetric")) asym = 0;
            else if (!strcmp(t, "asym") || !strcmp(t, "asymmetric")) asym = 1;
            else { fprintf(stderr, "taskqcd dslash: unknown --matpc '%s' (sym, asym)\n", t); return 2; }
        } else if (!strcmp(a, "--test") && i + 1 < argc) {
            if ((ntests = parse_list(argv[++i], test_names, 4, 4, tests, 4)) < 1) {
                fprintf(stderr, "taskqcd dslash: unknown --test '%s' (dslash, mat, matpc, matpcdagmatpc, a comma list or all)\n", argv[i]);
                return 2;
            }
        } else if (!strcmp(a, "--kappa") && i + 1 < argc) {
            kappa = atof(argv[++i]);
            if (!(kappa > 0)) { fprintf(stderr, "taskqcd dslash: --kappa must be positive\n"); return 2; }
        } else if (!strcmp(a, "--niter") && i + 1 < argc) {
            if (tq_cli_parse_positive(argv[++i], &niter)) { fprintf(stderr, "taskqcd dslash: --niter must be a positive integer\n"); return 2; }
        } else if (!strcmp(a, "--gauge") && i + 1 < argc) {
            gauge_file = argv[++i];
        } else if (!strcmp(a, "--where") && i + 1 < argc) {
            where = argv[++i];
            if (strcmp(where, "any") && strcmp(where, "cpu") && strcmp(where, "cuda")) {
                fprintf(stderr, "taskqcd dslash: --where must be any, cpu or cuda\n");
                return 2;
            }
        } else if (!strcmp(a, "--dagger")) {
            dagger = 1;
        } else if (!strcmp(a, "--bare")) {
            bare = 1;
        } else if (!strcmp(a, "--check")) {
            check = 1;
        } else if (!strcmp(a, "--no-check")) {
            check = 0;
        } else if (!strcmp(a, "--help")) {
            dslash_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "taskqcd dslash: unknown option '%s'\n", a);
            dslash_usage(stderr);
            return 2;
        }
    }

    int has_dslash = 0;
    for (int k = 0; k < ntests; k++) has_dslash |= tests[k] == T_DSLASH;
    if (bare && (clover || !has_dslash || dagger)) {
        fprintf(stderr, "taskqcd dslash: --bare times the Wilson hopping kernel: use it with --test dslash, "
                        "--dslash-type wilson and no --dagger\n");
        return 2;
    }
    tq_host_gauge hg;
    memset(&hg, 0, sizeof hg);
    if (gauge_file) {
        if (tq_gauge_read(gauge_file, TQ_FORMAT_AUTO, &hg, NULL)) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); return 1; }
        memcpy(dims, hg.dims, sizeof dims);
        tq_host_gauge_reunitarize(&hg);   /* single-precision files: SU(3) in double */
    } else {
        if (tq_host_gauge_alloc(&hg, dims)) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); return 2; }
        tq_host_gauge_weak(&hg, 1, 0.2);
    }
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    if (check < 0) check = vol <= 65536;
    tq_cli_sched_for_placement(&ip, where);
    if (tq_init(&ip)) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); tq_host_gauge_free(&hg); return 1; }
    tq_set_placement(!strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);

    dslash_opts o = {{dims[0], dims[1], dims[2], dims[3]}, {block[0], block[1], block[2], block[3]},
                     niter, {tests[0], tests[1], tests[2], tests[3]}, ntests, dagger, check, clover, asym, bare,
                     kappa, csw, where};
    int rc = 0;
    /* the source, made once (at 64^4 making it costs more than the timing) */
    double *src = malloc((size_t)vol * 24 * sizeof *src);
    if (!src) {
        fprintf(stderr, "taskqcd dslash: out of memory for the source\n");
        rc = 1;
    } else {
        ref_spinor_random(src, vol, 2);
        for (int k = 0; k < nprec; k++)
            for (int ir = 0; ir < nrecon; ir++)
                if (run_case(&o, &hg, src, precs[k], recons[ir])) rc = 1;
    }
    free(src);
    tq_host_gauge_free(&hg);
    tq_set_placement(TQ_WHERE_ANY);
    tq_finalize();
    return rc;
}

/* One operator in one precision and compression: lattice, gauge field and operator made
 * once, then every listed test; frees everything it made. Returns 0 or 1 (failure). */
static int run_case(const dslash_opts *o, const tq_host_gauge *hg, const double *src, tq_precision prec, int recon)
{
    int rc = 1;
    tq_lattice *lat = NULL;
    tq_field *gauge = NULL;
    tq_dirac *d = NULL;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, o->dims, sizeof lp.dims);
    memcpy(lp.block, o->block, sizeof lp.block);
    tq_field_params gp = {TQ_FIELD_GAUGE, prec, TQ_FULL, (tq_recon)recon};
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = o->clover ? TQ_DSLASH_CLOVER : TQ_DSLASH_WILSON;
    dp.kappa = o->kappa;
    dp.csw = o->csw;
    dp.matpc = o->asym ? TQ_MATPC_ASYMMETRIC : TQ_MATPC_SYMMETRIC;
    double setup[3] = {0, 0, 0};   /* gauge import start, operator start, end */
    if (tq_lattice_create(&lp, &lat) || tq_field_create(lat, &gp, &gauge) ||
        (setup[0] = tq_cli_now(), tq_gauge_field_import(gauge, hg)) || (setup[1] = tq_cli_now(), tq_dirac_create(gauge, &dp, &d))) {
        fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
    } else {
        setup[2] = tq_cli_now();
        rc = 0;
        for (int k = 0; k < o->ntests; k++)
            if (run_test(o, hg, src, lat, d, prec, recon, o->tests[k], k == 0 ? setup : NULL)) rc = 1;
    }
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    return rc;
}

/* One test of operator d: timing, optional --bare and the check against the reference.
 * setup: the set-up times to print (first test only). Returns 0 or 1 (failure). */
static int run_test(const dslash_opts *o, const tq_host_gauge *hgp, const double *src, tq_lattice *lat, tq_dirac *d,
                    tq_precision prec, int recon, int test, const double *setup)
{
    const int *dims = o->dims;
    const int niter = o->niter, dagger = o->dagger, check = o->check, clover = o->clover;
    const int asym = o->asym, bare = o->bare && test == T_DSLASH;
    const double kappa = o->kappa, csw = o->csw;
    const char *where = o->where;
    const tq_host_gauge hg = *hgp;
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    int rc = 1;
    tq_field *in = NULL, *out = NULL;
    double *hin = NULL, *hout = NULL, *href = NULL;
    tq_subset sub = test == T_MAT ? TQ_FULL : TQ_EVEN;
    tq_field_params sp = {TQ_FIELD_SPINOR, prec, sub, (tq_recon)0};
    tq_field_params op_in = sp;
    if (test == T_DSLASH) op_in.subset = TQ_ODD;
    if (tq_field_create(lat, &op_in, &in) || tq_field_create(lat, &sp, &out)) {
        fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
        goto done;
    }
    hin = malloc((size_t)vol * 24 * sizeof *hin);
    hout = calloc((size_t)vol * 24, sizeof *hout);
    if (!hin || !hout) { fprintf(stderr, "taskqcd dslash: out of memory\n"); goto done; }
    memcpy(hin, src, (size_t)vol * 24 * sizeof *hin);
    if (tq_field_import(in, hin)) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); goto done; }

    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    static const char *names[] = {"dslash", "mat", "matpc", "matpcdagmatpc"};
    char opname[96];
    if (clover) snprintf(opname, sizeof opname, "clover (c_sw %g, %s even-odd)", csw, asym ? "asymmetric" : "symmetric");
    else snprintf(opname, sizeof opname, "wilson");
    printf("taskqcd dslash: %s %s%s, %dx%dx%dx%d, blocks %dx%dx%dx%d (%d), %s recon %d, kappa %g, where %s, "
           "%d CPU + %d CUDA workers\n",
           opname, names[test], dagger ? " dagger" : "", dims[0], dims[1], dims[2], dims[3], li.block[0], li.block[1],
           li.block[2], li.block[3], li.nblocks, tq_precision_name(prec), recon, kappa, where,
           ri.ncpu_workers, ri.ncuda_workers);
    if (setup)
        printf("  set-up: gauge import %.3f s, operator %.3f s%s\n", setup[1] - setup[0], setup[2] - setup[1],
               clover ? " (clover term and inverse built by tasks)" : "");

    tq_status st = TQ_SUCCESS;
    double t0 = 0;
    /* three warm-up applications: data on the device, clocks up */
    for (int it = -3; it < niter && st == TQ_SUCCESS; it++) {
        if (it == 0) { tq_wait_all(); t0 = tq_cli_now(); }
        switch (test) {
        case T_DSLASH:
            /* clover: A^-1 D, the "dslash" of the even-odd clover operator (one fused kernel) */
            st = tq_dirac_dslash(d, out, in, TQ_EVEN, dagger);
            break;
        case T_MAT: st = tq_dirac_mat(d, out, in, dagger); break;
        case T_MATPC: st = tq_dirac_matpc(d, out, in, TQ_EVEN, dagger); break;
        default: st = tq_dirac_matpc_dag_matpc(d, out, in, TQ_EVEN); break;
        }
    }
    tq_wait_all();
    double t = (tq_cli_now() - t0) / niter;
    if (st) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); goto done; }

    /* counts per application */
    const double half_sites = vol / 2.0;
    const double sb = prec == TQ_HALF ? 24 * 2 + 4 : 24.0 * (int)prec, lb = recon * (double)(int)prec;
    /* single-parity hopping terms, clover applications and xpays per application */
    double hops = 0, clovers = 0, xpays = 0;
    switch (test) {
    case T_DSLASH: hops = 1; clovers = clover; xpays = clover; break;   /* clover: QUDA's 1872 */
    case T_MAT: hops = 2; clovers = 2 * clover; xpays = 2; break;
    case T_MATPC: hops = 2; clovers = 2 * clover; xpays = 1; break;
    default: hops = 4; clovers = 4 * clover; xpays = 2; break;
    }
    /* a clover site: 72 reals (half: int16 + a float norm) */
    const double cb = prec == TQ_HALF ? 72 * 2 + 4 : 72.0 * (int)prec;
    double flops = half_sites * (1320.0 * hops + 504.0 * clovers + 48.0 * xpays);
    double bytes_quda = half_sites * (hops * (8 * lb + 9 * sb) + clovers * cb + xpays * sb);
    double bytes_min = half_sites * (hops * (8 * lb + 2 * sb) + clovers * cb + xpays * sb);
    printf("  time %.3f ms per application, %.1f GFLOPS, %.1f GB/s (QUDA's byte model), %.1f GB/s (minimal traffic)\n",
           1e3 * t, flops / t * 1e-9, bytes_quda / t * 1e-9, bytes_min / t * 1e-9);
    printf("  per output site and hop: 1320 flops, %.0f B (QUDA), %.0f B (minimal); xpay +48 flops, +%.0f B",
           8 * lb + 9 * sb, 8 * lb + 2 * sb, sb);
    if (clover) printf("; clover term +504 flops, +%.0f B", cb);
    printf("\n");
    if (bare) {
        double tb = 0;
        if (tq_internal_dslash_bare(d, out, in, TQ_EVEN, niter, &tb)) {
            fprintf(stderr, "taskqcd dslash: --bare: %s\n", tq_last_error());
            goto done;
        }
        printf("  bare kernel (launched directly, no StarPU): time %.3f ms, %.1f GFLOPS, %.1f GB/s (minimal traffic); "
               "task graph overhead %.1f us per application (%.1f %%)\n",
               1e3 * tb, flops / tb * 1e-9, bytes_min / tb * 1e-9, 1e6 * (t - tb), 100.0 * (t - tb) / t);
    }

    rc = 0;
    if (check) {
        href = malloc((size_t)vol * 24 * sizeof *href);
        double *tmp = malloc((size_t)vol * 24 * sizeof *tmp), *tmp2 = malloc((size_t)vol * 24 * sizeof *tmp2);
        if (!href || !tmp || !tmp2) { free(tmp); free(tmp2); fprintf(stderr, "taskqcd dslash: out of memory\n"); rc = 1; goto done; }
        double bc[4] = {1, 1, 1, -1};
        const int64_t n = vol * 24;
        int parity = test == T_MAT ? 2 : 0;
        /* the input as the library holds it (rounded to prec) */
        memset(hout, 0, (size_t)n * sizeof *hout);
        tq_field_export(in, hout);
        memcpy(hin, hout, (size_t)n * sizeof *hin);
        if (clover) {
            if (test == T_DSLASH) {
                ref_wilson_dslash(tmp, hg.links, hin, dims, bc, dagger, 0);
                ref_clover_solve(href, hg.links, tmp, dims, kappa, csw, 0);
            } else if (test == T_MAT) {
                ref_clover_mat(href, hg.links, hin, dims, bc, kappa, csw, dagger);
            } else if (test == T_MATPC) {
                ref_clover_matpc(href, hg.links, hin, dims, bc, kappa, csw, 0, dagger, asym);
            } else {
                ref_clover_matpc(tmp, hg.links, hin, dims, bc, kappa, csw, 0, 0, asym);
                ref_clover_matpc(href, hg.links, tmp, dims, bc, kappa, csw, 0, 1, asym);
            }
        } else if (test == T_DSLASH) {
            ref_wilson_dslash(href, hg.links, hin, dims, bc, dagger, 0);
        } else if (test == T_MAT) {
            ref_wilson_mat(href, hg.links, hin, dims, bc, kappa, dagger);
        } else {
            int passes = test == T_MATPC ? 1 : 2;
            memcpy(tmp2, hin, (size_t)n * sizeof *tmp2);
            for (int ps = 0; ps < passes; ps++) {
                int dg = test == T_MATPC ? dagger : ps;
                ref_wilson_dslash(tmp, hg.links, tmp2, dims, bc, dg, 1);
                ref_wilson_dslash(href, hg.links, tmp, dims, bc, dg, 0);
                for (int64_t k = 0; k < n; k++) href[k] = tmp2[k] - kappa * kappa * href[k];
                for (int64_t s = 0; s < vol; s++)
                    if (ref_site_parity(s, dims)) memset(href + 24 * s, 0, 24 * sizeof(double));
                memcpy(tmp2, href, (size_t)n * sizeof *tmp2);
            }
        }
        memset(hout, 0, (size_t)n * sizeof *hout);
        tq_field_export(out, hout);
        double num = 0, den = 0;
        for (int64_t s = 0; s < vol; s++) {
            if (parity != 2 && ref_site_parity(s, dims) != parity) continue;
            for (int k = 0; k < 24; k++) {
                num = fmax(num, fabs(hout[24 * s + k] - href[24 * s + k]));
                den = fmax(den, fabs(href[24 * s + k]));
            }
        }
        double err = den > 0 ? num / den : num;
        double tol = prec == TQ_DOUBLE ? 1e-12 : prec == TQ_SINGLE ? 5e-5 : 5e-3;
        printf("  check against the reference: max |out - ref| / max |ref| = %.3g (%s, tolerance %.0e)\n", err,
               err <= tol ? "ok" : "FAILED", tol);
        if (!(err <= tol)) rc = 1;
        free(tmp);
        free(tmp2);
    }
done:
    free(hin); free(hout); free(href);
    tq_field_destroy(in);
    tq_field_destroy(out);
    return rc;
}
