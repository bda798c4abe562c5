/* taskqcd dslash: applies a Wilson-type operator (in the spirit of QUDA's dslash_test),
 * checks it against the plain-loop double-precision reference and prints time, GFLOPS and
 * GB/s. Flops as QUDA counts them: 1320 per site for the hopping term, +48 per site for
 * the x + a D y of M and M_pc, +504 per clover (or inverse) application; the clover
 * "dslash" (A^-1 D) counts 1872, QUDA's figure. Bytes (clover: +72 reals per application):
 * QUDA's model (per output site 8 links as stored, 8 neighbour spinors, 1 output spinor, +1
 * spinor for xpay) and the minimal-traffic model (every link, input spinor and output
 * spinor moved once: per output site of one parity 8 links + 1 input + 1 output spinor, +1
 * for xpay); both in tq_cli_dslash_cost_of. The kernel without the task graph, for its
 * overhead, is timed by bench/bench_dslash_bare (it needs library internals). */
#include "cli.h"
#include "taskqcd.h"
#include "../../reference/wilson_reference.h"   /* the reference the tests use */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void dslash_usage(FILE *o)
{
    fprintf(o,
        "usage: taskqcd dslash [--dim X Y Z T] [--block X Y Z T] [--gridsize X Y Z T]\n"
        "                      [--prec double|single|half|LIST|all]\n"
        "                      [--recon 18|12|8|LIST|all] [--dslash-type wilson|clover] [--kappa K] [--csw C]\n"
        "                      [--matpc sym|asym]\n"
        "                      [--test dslash|mat|matpc|matpcdagmatpc|LIST|all] [--dagger] [--niter N]\n"
        "                      [--gauge FILE] [--where any|cpu|cuda] [--check|--no-check]\n"
        "                      [runtime options]\n"
        "Applies the operator niter times (after three warm-ups), prints time per application,\n"
        "GFLOPS and GB/s, and checks the result against the double-precision plain-loop\n"
        "reference (by default when the volume is at most 16^4). Without --gauge the gauge\n"
        "field is weak-field random (seed 1, epsilon 0.2). Boundary conditions: antiperiodic in t.\n"
        "--prec, --recon and --test take comma lists (or all): one run per combination on the same\n"
        "gauge field and source, which are made or read once.\n"
        "Clover: --test dslash applies A^-1 D; matpc is the symmetric (default, 1 - k^2 A^-1 D\n"
        "A^-1 D) or asymmetric (A - k^2 D A^-1 D) even-odd operator; --csw defaults to 1.\n"
        "Under mpirun: --gridsize is the grid of ranks (default: the one with the smallest faces);\n"
        "--block is the global block extent, so the same --block gives the same bits on any grid.\n");
}



enum { T_DSLASH, T_MAT, T_MATPC, T_MATPCDAG };

/* What one invocation asks for; each precision and compression is one case. */
typedef struct dslash_opts {
    int dims[4], block[4], procs[4];
    int niter, tests[4], ntests, dagger, check, clover, asym;
    int by_parts;            /* under mpirun: each rank makes its sites of the weak field and source */
    int progress;            /* large lattices: set-up steps reported on stderr (rank 0) */
    double kappa, csw;
    const char *where, *gauge_file;
    tq_precision precs[3];
    int recons[3], nprec, nrecon;
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

/* The comma-list options --prec, --recon and --test (value v). Returns 0 when a was one of
 * them, 1 when it was not, 2 after saying why v is bad. */
static int parse_list_option(dslash_opts *o, const char *a, const char *v)
{
    if (!strcmp(a, "--prec")) {
        int pv[3];
        if ((o->nprec = parse_list(v, precision_names, 6, 3, pv, 3)) < 1) {
            fprintf(stderr, "taskqcd dslash: --prec takes double, single, half, a comma list of them or all (got '%s')\n", v);
            return 2;
        }
        for (int k = 0; k < o->nprec; k++) o->precs[k] = (tq_precision)pv[k];
    } else if (!strcmp(a, "--recon")) {
        if ((o->nrecon = parse_list(v, recon_names, 3, 3, o->recons, 3)) < 1) {
            fprintf(stderr, "taskqcd dslash: --recon takes 18, 12, 8, a comma list of them or all (got '%s')\n", v);
            return 2;
        }
    } else if (!strcmp(a, "--test")) {
        if ((o->ntests = parse_list(v, test_names, 4, 4, o->tests, 4)) < 1) {
            fprintf(stderr, "taskqcd dslash: unknown --test '%s' (dslash, mat, matpc, matpcdagmatpc, a comma list or all)\n", v);
            return 2;
        }
    } else {
        return 1;
    }
    return 0;
}

/* The other options with a value v: the operator's and the run's. Returns 0 when a was one
 * of them, 1 when it was not, 2 after saying why v is bad. */
static int parse_value_option(dslash_opts *o, const char *a, const char *v)
{
    if (!strcmp(a, "--dslash-type")) {
        if (!strcmp(v, "clover")) o->clover = 1;
        else if (!strcmp(v, "wilson")) o->clover = 0;
        else { fprintf(stderr, "taskqcd dslash: unknown --dslash-type '%s' (wilson, clover)\n", v); return 2; }
    } else if (!strcmp(a, "--csw")) {
        char *end;
        o->csw = strtod(v, &end);
        if (*end || !isfinite(o->csw)) { fprintf(stderr, "taskqcd dslash: --csw needs a number\n"); return 2; }
    } else if (!strcmp(a, "--matpc")) {
        if (!strcmp(v, "sym") || !strcmp(v, "symmetric")) o->asym = 0;
        else if (!strcmp(v, "asym") || !strcmp(v, "asymmetric")) o->asym = 1;
        else { fprintf(stderr, "taskqcd dslash: unknown --matpc '%s' (sym, asym)\n", v); return 2; }
    } else if (!strcmp(a, "--kappa")) {
        o->kappa = atof(v);
        if (!(o->kappa > 0)) { fprintf(stderr, "taskqcd dslash: --kappa must be positive\n"); return 2; }
    } else if (!strcmp(a, "--niter")) {
        if (tq_cli_parse_positive(v, &o->niter)) { fprintf(stderr, "taskqcd dslash: --niter must be a positive integer\n"); return 2; }
    } else if (!strcmp(a, "--gauge")) {
        o->gauge_file = v;
    } else if (!strcmp(a, "--where")) {
        o->where = v;
        if (strcmp(v, "any") && strcmp(v, "cpu") && strcmp(v, "cuda")) {
            fprintf(stderr, "taskqcd dslash: --where must be any, cpu or cuda\n");
            return 2;
        }
    } else {
        return parse_list_option(o, a, v);
    }
    return 0;
}

/* Fills o from the command line (runtime options already removed). Returns -1 to go on,
 * otherwise the exit code (0 after --help, 2 for a usage error). */
static int parse_dslash_args(int argc, char **argv, dslash_opts *o)
{
    const dslash_opts defaults = {.dims = {16, 16, 16, 16}, .niter = 10, .tests = {T_DSLASH}, .ntests = 1,
                                  .check = -1, .kappa = 0.12, .csw = 1.0, .where = "any",
                                  .precs = {TQ_SINGLE}, .recons = {12}, .nprec = 1, .nrecon = 1};
    *o = defaults;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc = 1;
        if (!strcmp(a, "--dim") || !strcmp(a, "--block") || !strcmp(a, "--gridsize")) {
            if (tq_cli_parse_dims(argc, argv, &i, !strcmp(a, "--dim") ? o->dims : !strcmp(a, "--block") ? o->block : o->procs)) {
                fprintf(stderr, "taskqcd dslash: %s needs 4 positive integers\n", a);
                return 2;
            }
            rc = 0;
        } else if (i + 1 < argc && (rc = parse_value_option(o, a, argv[i + 1])) == 0) {
            i++;
        } else if (rc == 2) {
            return 2;
        } else if (!strcmp(a, "--dagger")) {
            o->dagger = 1;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--no-check")) {
            o->check = 0;
        } else if (!strcmp(a, "--help")) {
            dslash_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "taskqcd dslash: unknown option '%s'\n", a);
            dslash_usage(stderr);
            return 2;
        }
    }
    return -1;
}

/* The gauge field of every case: --gauge's file or weak-field random; sets o->dims to the
 * file's. Returns 0, or the exit code after saying why not. */
static int load_gauge(dslash_opts *o, tq_host_gauge *hg)
{
    memset(hg, 0, sizeof *hg);
    if (o->gauge_file) {
        if (tq_gauge_read(o->gauge_file, TQ_FORMAT_AUTO, hg, NULL)) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); return 1; }
        memcpy(o->dims, hg->dims, sizeof o->dims);
        tq_host_gauge_reunitarize(hg);   /* single-precision files: SU(3) in double */
    } else if (!o->by_parts || o->check) {   /* the check's reference takes the global field */
        if (tq_host_gauge_alloc(hg, o->dims)) { fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error()); return 2; }
        tq_host_gauge_weak(hg, 1, 0.2);
    }
    return 0;
}

/* Set-up of a large lattice takes a while: says which step ended, and when. */
static void note_step(const dslash_opts *o, const char *step)
{
    static double start = -1;
    if (start < 0) start = tq_cli_now();
    if (o->progress) fprintf(stderr, "taskqcd dslash: %s (%.1f s)\n", step, tq_cli_now() - start);
}

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
    dslash_opts o;
    int rc = parse_dslash_args(argc, argv, &o);
    if (rc >= 0) return rc;
    tq_cli_workers_for_placement(&ip, o.where);
    const int init = tq_cli_init("taskqcd dslash", &ip);
    if (init) return init;
    /* read after tq_init: under mpirun every rank must learn that one could not read it */
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    /* each rank of several makes only its part of the weak field and the source (the same
     * values as the global ones: the check, on the global lattice, compares them too) */
    const int64_t vol = (int64_t)o.dims[0] * o.dims[1] * o.dims[2] * o.dims[3];
    if (o.check < 0) o.check = vol <= 65536;
    o.by_parts = ri.mpi_size > 1 && !o.gauge_file;
    o.progress = vol >= (1 << 24) && ri.mpi_rank == 0;
    note_step(&o, "started");
    tq_host_gauge hg;
    if ((rc = tq_cli_agree("taskqcd dslash", load_gauge(&o, &hg)))) {
        tq_host_gauge_free(&hg);
        tq_finalize();
        return rc;
    }
    if (hg.links) note_step(&o, o.gauge_file ? "gauge field read" : "weak gauge field made on the host");
    tq_set_placement(!strcmp(o.where, "cpu") ? TQ_WHERE_CPU : !strcmp(o.where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);

    /* the global source, made once (at 64^4 making it costs more than the timing) */
    static const int origin[4] = {0, 0, 0, 0};
    const int global_src = !o.by_parts || o.check;
    double *src = global_src ? malloc((size_t)vol * 24 * sizeof *src) : NULL;
    if (!src && global_src) {
        fprintf(stderr, "taskqcd dslash: out of memory for the source\n");
        rc = 1;
    } else {
        if (src) {
            tq_host_gaussian_sites(src, 24, o.dims, o.dims, origin, 2);
            note_step(&o, "source made on the host");
        }
        for (int k = 0; k < o.nprec; k++)
            for (int ir = 0; ir < o.nrecon; ir++)
                if (run_case(&o, &hg, src, o.precs[k], o.recons[ir])) rc = 1;
    }
    free(src);
    tq_host_gauge_free(&hg);
    tq_set_placement(TQ_WHERE_ANY);
    tq_finalize();
    return rc;
}

/* This rank's sites of the global gauge field and source (*split = 1: new arrays to free),
 * or the global ones themselves on one rank; by_parts: made here for this rank's sites
 * only (the same values as the global ones). Returns 0 or a failure status. */
static tq_status local_sites(const tq_lattice *lat, const tq_host_gauge *hg, const double *src, int by_parts,
                             tq_host_gauge *lg, double **lsrc, int *split)
{
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    if (li.local_volume == li.global_volume && !by_parts) return TQ_SUCCESS;
    tq_status st = tq_host_gauge_alloc(lg, li.local);
    if (st) return st;
    *lsrc = malloc((size_t)li.local_volume * 24 * sizeof **lsrc);
    *split = 1;
    if (!*lsrc) {
        fprintf(stderr, "taskqcd dslash: out of memory for this rank's source\n");
        return TQ_ERR_NOMEM;
    }
    if (by_parts) {
        int offset[4];
        for (int mu = 0; mu < 4; mu++) offset[mu] = li.coords[mu] * li.local[mu];
        st = tq_host_gauge_weak_part(lg, li.dims, offset, 1, 0.2);
        return st ? st : tq_host_gaussian_sites(*lsrc, 24, li.dims, li.local, offset, 2);
    }
    st = tq_lattice_scatter_sites(lat, hg->links, lg->links, 72);
    return st ? st : tq_lattice_scatter_sites(lat, src, *lsrc, 24);
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
    memcpy(lp.procs, o->procs, sizeof lp.procs);
    tq_field_params gp = {TQ_FIELD_GAUGE, prec, TQ_FULL, (tq_recon)recon, 0};
    /* over several ranks: this rank's sites of the global gauge field and source */
    tq_host_gauge lg = *hg;
    double *lsrc = (double *)src;
    int split = 0;
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = o->clover ? TQ_DSLASH_CLOVER : TQ_DSLASH_WILSON;
    dp.kappa = o->kappa;
    dp.csw = o->csw;
    dp.matpc = o->asym ? TQ_MATPC_ASYMMETRIC : TQ_MATPC_SYMMETRIC;
    double setup[3] = {0, 0, 0};   /* gauge import start, operator start, end */
    if (tq_lattice_create(&lp, &lat) || local_sites(lat, hg, src, o->by_parts, &lg, &lsrc, &split) ||
        (note_step(o, split ? "this rank's sites of the gauge field and source" : "lattice"), tq_field_create(lat, &gp, &gauge)) ||
        (setup[0] = tq_cli_now(), tq_gauge_field_import(gauge, &lg)) ||
        (note_step(o, "gauge field imported"), setup[1] = tq_cli_now(), tq_dirac_create(gauge, &dp, &d))) {
        fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
    } else {
        setup[2] = tq_cli_now();
        rc = 0;
        for (int k = 0; k < o->ntests; k++)
            if (run_test(o, hg, lsrc, lat, d, prec, recon, o->tests[k], k == 0 ? setup : NULL)) rc = 1;
    }
    if (split) { tq_host_gauge_free(&lg); free(lsrc); }
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    return rc;
}

/* The line that names a test, and the set-up times (setup: the first test only). */
static void print_test_header(const dslash_opts *o, tq_lattice *lat, tq_precision prec, int recon, int test,
                              const double *setup)
{
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    static const char *names[] = {"dslash", "mat", "matpc", "matpcdagmatpc"};
    char opname[96];
    if (o->clover) snprintf(opname, sizeof opname, "clover (c_sw %g, %s even-odd)", o->csw, o->asym ? "asymmetric" : "symmetric");
    else snprintf(opname, sizeof opname, "wilson");
    const int *dims = o->dims;
    char ranks[64] = "";
    if (ri.mpi_size > 1)
        snprintf(ranks, sizeof ranks, ", ranks %dx%dx%dx%d", li.procs[0], li.procs[1], li.procs[2], li.procs[3]);
    printf("taskqcd dslash: %s %s%s, %dx%dx%dx%d, blocks %dx%dx%dx%d (%d)%s, %s recon %d, kappa %g, where %s, "
           "%d CPU + %d CUDA workers%s\n",
           opname, names[test], o->dagger ? " dagger" : "", dims[0], dims[1], dims[2], dims[3], li.block[0], li.block[1],
           li.block[2], li.block[3], li.nblocks_global, ranks, tq_precision_name(prec), recon, o->kappa, o->where,
           ri.ncpu_workers, ri.ncuda_workers, ri.mpi_size > 1 ? " per rank" : "");
    if (setup)
        printf("  set-up: gauge import %.3f s, operator %.3f s%s\n", setup[1] - setup[0], setup[2] - setup[1],
               o->clover ? " (clover term and inverse built by tasks)" : "");
}

/* Applies the test's operator niter times after three warm-ups (data on the device, clocks
 * up); *seconds per application, *submit of them the host's submission (when it is most of
 * the time, the host's task-graph work limits the rate, not the devices). */
static tq_status time_operator(const dslash_opts *o, tq_dirac *d, tq_field *out, const tq_field *in, int test,
                               double *seconds, double *submit)
{
    tq_status st = TQ_SUCCESS;
    double t0 = 0;
    for (int it = -3; it < o->niter && st == TQ_SUCCESS; it++) {
        if (it == 0) {
            tq_wait_all();
            note_step(o, "warm-up applications done");
            t0 = tq_cli_now();
        }
        switch (test) {
        case T_DSLASH:
            /* clover: A^-1 D, the "dslash" of the even-odd clover operator (one fused kernel) */
            st = tq_dirac_dslash(d, out, in, TQ_EVEN, o->dagger);
            break;
        case T_MAT: st = tq_dirac_mat(d, out, in, o->dagger); break;
        case T_MATPC: st = tq_dirac_matpc(d, out, in, TQ_EVEN, o->dagger); break;
        default: st = tq_dirac_matpc_dag_matpc(d, out, in, TQ_EVEN); break;
        }
    }
    *submit = (tq_cli_now() - t0) / o->niter;
    tq_wait_all();
    *seconds = (tq_cli_now() - t0) / o->niter;
    return st;
}

/* Time, GFLOPS and GB/s of one application taking t seconds, and the counts per site. */
static void print_rates(const dslash_opts *o, tq_precision prec, int recon, int test, double t, double submit)
{
    const int64_t vol = (int64_t)o->dims[0] * o->dims[1] * o->dims[2] * o->dims[3];
    /* single-parity hopping terms, clover applications and xpays per application */
    double hops = 0, clovers = 0, xpays = 0;
    switch (test) {
    case T_DSLASH: hops = 1; clovers = o->clover; xpays = o->clover; break;   /* clover: QUDA's 1872 */
    case T_MAT: hops = 2; clovers = 2 * o->clover; xpays = 2; break;
    case T_MATPC: hops = 2; clovers = 2 * o->clover; xpays = 1; break;
    default: hops = 4; clovers = 4 * o->clover; xpays = 2; break;
    }
    tq_cli_dslash_cost c;
    tq_cli_dslash_cost_of(vol, prec, recon, hops, clovers, xpays, &c);
    const double sb = c.spinor_bytes, lb = c.link_bytes;
    printf("  time %.3f ms per application, %.1f GFLOPS, %.1f GB/s (QUDA's byte model), %.1f GB/s (minimal traffic)\n",
           1e3 * t, c.flops / t * 1e-9, c.bytes_quda / t * 1e-9, c.bytes_min / t * 1e-9);
    printf("  per output site and hop: 1320 flops, %.0f B (QUDA), %.0f B (minimal); xpay +48 flops, +%.0f B",
           8 * lb + 9 * sb, 8 * lb + 2 * sb, sb);
    if (o->clover) printf("; clover term +504 flops, +%.0f B", c.clover_bytes);
    printf("\n  host submission %.3f ms of each application (the rest is the workers and devices)\n", 1e3 * submit);
}

/* M_pc (dagger dg) or, with twice, M_pc^dag M_pc, of the even-odd Wilson operator on the
 * even sites of in, by the plain-loop reference (tmp, tmp2: scratch of vol * 24). */
static void reference_wilson_matpc(const dslash_opts *o, const double *links, const double *in, double *out, int twice,
                                   double *tmp, double *tmp2)
{
    const int64_t vol = (int64_t)o->dims[0] * o->dims[1] * o->dims[2] * o->dims[3], n = vol * 24;
    double bc[4] = {1, 1, 1, -1};
    const double kappa = o->kappa;
    memcpy(tmp2, in, (size_t)n * sizeof *tmp2);
    for (int ps = 0; ps < (twice ? 2 : 1); ps++) {
        int dg = twice ? ps : o->dagger;
        ref_wilson_dslash(tmp, links, tmp2, o->dims, bc, dg, 1);
        ref_wilson_dslash(out, links, tmp, o->dims, bc, dg, 0);
        for (int64_t k = 0; k < n; k++) out[k] = tmp2[k] - kappa * kappa * out[k];
        for (int64_t s = 0; s < vol; s++)
            if (ref_site_parity(s, o->dims)) memset(out + 24 * s, 0, 24 * sizeof(double));
        memcpy(tmp2, out, (size_t)n * sizeof *tmp2);
    }
}

/* The test's operator applied to in by the double-precision reference, into ref. Returns 0,
 * or 1 when out of memory. */
static int reference_result(const dslash_opts *o, const double *links, const double *in, double *ref, int test)
{
    const int64_t vol = (int64_t)o->dims[0] * o->dims[1] * o->dims[2] * o->dims[3];
    double *tmp = malloc((size_t)vol * 24 * sizeof *tmp), *tmp2 = malloc((size_t)vol * 24 * sizeof *tmp2);
    if (!tmp || !tmp2) { free(tmp); free(tmp2); return 1; }
    double bc[4] = {1, 1, 1, -1};
    const int *dims = o->dims;
    const int dagger = o->dagger, asym = o->asym;
    const double kappa = o->kappa, csw = o->csw;
    if (o->clover) {
        if (test == T_DSLASH) {
            ref_wilson_dslash(tmp, links, in, dims, bc, dagger, 0);
            ref_clover_solve(ref, links, tmp, dims, kappa, csw, 0);
        } else if (test == T_MAT) {
            ref_clover_mat(ref, links, in, dims, bc, kappa, csw, dagger);
        } else if (test == T_MATPC) {
            ref_clover_matpc(ref, links, in, dims, bc, kappa, csw, 0, dagger, asym);
        } else {
            ref_clover_matpc(tmp, links, in, dims, bc, kappa, csw, 0, 0, asym);
            ref_clover_matpc(ref, links, tmp, dims, bc, kappa, csw, 0, 1, asym);
        }
    } else if (test == T_DSLASH) {
        ref_wilson_dslash(ref, links, in, dims, bc, dagger, 0);
    } else if (test == T_MAT) {
        ref_wilson_mat(ref, links, in, dims, bc, kappa, dagger);
    } else {
        reference_wilson_matpc(o, links, in, ref, test == T_MATPCDAG, tmp, tmp2);
    }
    free(tmp);
    free(tmp2);
    return 0;
}

/* Compares out = op(in) with the reference applied to in as the library holds it (rounded
 * to prec) and prints the relative error. Returns 0, or 1 (too large, or out of memory). */
static int check_against_reference(const dslash_opts *o, const tq_host_gauge *hg, const tq_lattice *lat, const tq_field *in,
                                   const tq_field *out,
                                   tq_precision prec, int test)
{
    const int64_t vol = (int64_t)o->dims[0] * o->dims[1] * o->dims[2] * o->dims[3], n = vol * 24;
    double *hin = calloc((size_t)n, sizeof *hin), *hout = calloc((size_t)n, sizeof *hout);
    double *href = malloc((size_t)n * sizeof *href), *local = calloc((size_t)n, sizeof *local);
    int rc = 1;
    /* every rank exports its sites; the global fields are assembled on every rank */
    if (!hin || !hout || !href || !local) {
        fprintf(stderr, "taskqcd dslash: out of memory\n");
    } else if (tq_field_export(in, local) || tq_lattice_allgather_sites(lat, local, hin, 24) ||
               (memset(local, 0, (size_t)n * sizeof *local), tq_field_export(out, local)) ||
               tq_lattice_allgather_sites(lat, local, hout, 24)) {
        fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
    } else if (reference_result(o, hg->links, hin, href, test)) {
        fprintf(stderr, "taskqcd dslash: out of memory\n");
    } else {
        const int parity = test == T_MAT ? 2 : 0;
        double num = 0, den = 0;
        for (int64_t s = 0; s < vol; s++) {
            if (parity != 2 && ref_site_parity(s, o->dims) != parity) continue;
            for (int k = 0; k < 24; k++) {
                num = fmax(num, fabs(hout[24 * s + k] - href[24 * s + k]));
                den = fmax(den, fabs(href[24 * s + k]));
            }
        }
        double err = den > 0 ? num / den : num;
        double tol = prec == TQ_DOUBLE ? 1e-12 : prec == TQ_SINGLE ? 5e-5 : 5e-3;
        printf("  check against the reference: max |out - ref| / max |ref| = %.3g (%s, tolerance %.0e)\n", err,
               err <= tol ? "ok" : "FAILED", tol);
        rc = !(err <= tol);
    }
    free(hin);
    free(hout);
    free(href);
    free(local);
    return rc;
}

/* One test of operator d: timing and the check against the reference. setup: the set-up
 * times to print (first test only). Returns 0 or 1 (failure). */
static int run_test(const dslash_opts *o, const tq_host_gauge *hg, const double *src, tq_lattice *lat, tq_dirac *d,
                    tq_precision prec, int recon, int test, const double *setup)
{
    int rc = 1;
    tq_field *in = NULL, *out = NULL;
    tq_field_params sp = {TQ_FIELD_SPINOR, prec, test == T_MAT ? TQ_FULL : TQ_EVEN, (tq_recon)0, 0};
    tq_field_params op_in = sp;
    if (test == T_DSLASH) op_in.subset = TQ_ODD;
    double t = 0, submit = 0;
    if (tq_field_create(lat, &op_in, &in) || tq_field_create(lat, &sp, &out) || tq_field_import(in, src)) {
        fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
    } else {
        note_step(o, "source imported");
        print_test_header(o, lat, prec, recon, test, setup);
        if (time_operator(o, d, out, in, test, &t, &submit)) {
            fprintf(stderr, "taskqcd dslash: %s\n", tq_last_error());
        } else {
            print_rates(o, prec, recon, test, t, submit);
            rc = o->check ? check_against_reference(o, hg, lat, in, out, prec, test) : 0;
        }
    }
    tq_field_destroy(in);
    tq_field_destroy(out);
    return rc;
}
