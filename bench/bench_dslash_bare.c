/* The task graph's overhead on the Wilson dslash: D (one parity, even output) applied
 * through the library (tq_dirac_dslash: tasks on the CUDA worker) and by its interior kernel
 * launched directly on the same data (tq_internal_dslash_bare, no StarPU in the loop), one
 * row per precision and gauge compression, in the line format of `taskqcd dslash` (which
 * bench/dslash-sweep.sh reads) plus a "bare kernel" line and the two results' agreement.
 * The bare kernel covers the whole lattice as one block on one process and one GPU.
 *
 * usage: bench_dslash_bare [--dim X Y Z T] [--block X Y Z T] [--prec LIST|all]
 *                          [--recon LIST|all] [--niter N] [runtime options]
 * default: 32^4, single, recon 12, 100 applications (after three warm-ups). Without a CUDA
 * worker it says so and exits with 77 (nothing to measure). */
#include "taskqcd.h"
#include "cli/cli.h"
#include "dirac/dirac_internal.h"                /* tq_internal_dslash_bare */
#include "../reference/wilson_reference.h"       /* ref_spinor_random: the CLI's source */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *me = "bench_dslash_bare";

static void usage(FILE *o)
{
    fprintf(o,
        "usage: bench_dslash_bare [--dim X Y Z T] [--block X Y Z T] [--prec double|single|half|LIST|all]\n"
        "                         [--recon 18|12|8|LIST|all] [--niter N] [runtime options]\n"
        "Times the Wilson dslash (even output) through the task graph on the CUDA worker and as\n"
        "the bare interior kernel on the same data; prints both rates and the task graph's\n"
        "overhead per application. One block (--block, if given, must equal --dim), one GPU.\n"
        "Defaults: 32 32 32 32, single, recon 12, 100 applications after three warm-ups.\n");
}

typedef struct bench_opts {
    int dims[4], niter;
    tq_precision precs[3];
    int recons[3], nprec, nrecon;
} bench_opts;

/* A comma list of precisions (or all) into o->precs; returns 0 on success. */
static int parse_precs(const char *list, bench_opts *o)
{
    if (!strcmp(list, "all")) list = "double,single,half";
    char buf[64];
    snprintf(buf, sizeof buf, "%s", list);
    o->nprec = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
        if (o->nprec == 3 || tq_precision_parse(t, &o->precs[o->nprec++])) return -1;
    return o->nprec ? 0 : -1;
}

/* A comma list of gauge compressions (or all) into o->recons; returns 0 on success. */
static int parse_recons(const char *list, bench_opts *o)
{
    if (!strcmp(list, "all")) list = "18,12,8";
    char buf[64];
    snprintf(buf, sizeof buf, "%s", list);
    o->nrecon = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int r = atoi(t);
        if (o->nrecon == 3 || (r != 18 && r != 12 && r != 8)) return -1;
        o->recons[o->nrecon++] = r;
    }
    return o->nrecon ? 0 : -1;
}

/* Fills o from the command line (runtime options already removed). Returns -1 to go on,
 * otherwise the exit code (0 after --help, 2 for a usage error). */
static int parse_args(int argc, char **argv, bench_opts *o)
{
    const bench_opts defaults = {{32, 32, 32, 32}, 100, {TQ_SINGLE}, {12}, 1, 1};
    *o = defaults;
    int block[4] = {0, 0, 0, 0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (!strcmp(a, "--dim") || !strcmp(a, "--block")) bad = tq_cli_parse_dims(argc, argv, &i, !strcmp(a, "--dim") ? o->dims : block);
        else if (!strcmp(a, "--prec") && v) { i++; bad = parse_precs(v, o); }
        else if (!strcmp(a, "--recon") && v) { i++; bad = parse_recons(v, o); }
        else if (!strcmp(a, "--niter") && v) { i++; bad = tq_cli_parse_positive(v, &o->niter); }
        else if (!strcmp(a, "--help")) { usage(stdout); return 0; }
        else { fprintf(stderr, "%s: unknown option '%s'\n", me, a); usage(stderr); return 2; }
        if (bad) { fprintf(stderr, "%s: bad value for %s\n", me, a); return 2; }
    }
    /* refused here, before StarPU starts, so that the answer does not depend on the machine */
    if (block[0] && memcmp(block, o->dims, sizeof block)) {
        fprintf(stderr, "%s: the bare kernel needs one block (the whole lattice): --block must equal --dim "
                        "(got %dx%dx%dx%d on %dx%dx%dx%d)\n", me, block[0], block[1], block[2], block[3],
                o->dims[0], o->dims[1], o->dims[2], o->dims[3]);
        return 2;
    }
    return -1;
}

/* Where the bare kernel can run: one process with a CUDA worker. Returns -1 to go on,
 * otherwise the exit code after saying why not (77: no GPU, nothing to measure). */
static int check_runtime(void)
{
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    if (ri.mpi_size > 1) {
        fprintf(stderr, "%s: the bare kernel runs on one process (got %d)\n", me, ri.mpi_size);
        return 2;
    }
    if (ri.ncuda_workers == 0) {
        fprintf(stderr, "%s: no CUDA worker (%s): the bare kernel runs on a GPU; nothing to measure\n", me,
                ri.built_with_cuda ? "no GPU found, or --ncuda 0" : "built without CUDA");
        return 77;
    }
    return -1;
}

/* The fields of one case: gauge field, operator, input (odd) and output (even) spinors. */
typedef struct bench_case {
    tq_lattice *lat;
    tq_field *gauge, *in, *out;
    tq_dirac *d;
} bench_case;

static void free_case(bench_case *c)
{
    tq_field_destroy(c->in);
    tq_field_destroy(c->out);
    tq_dirac_destroy(c->d);
    tq_field_destroy(c->gauge);
    tq_lattice_destroy(c->lat);
}

/* Makes c in precision prec and compression recon from hg and src; 0, or 1 with the
 * library's error message set. */
static int make_case(const bench_opts *o, const tq_host_gauge *hg, const double *src, tq_precision prec, int recon,
                     bench_case *c)
{
    memset(c, 0, sizeof *c);
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, o->dims, sizeof lp.dims);
    memcpy(lp.block, o->dims, sizeof lp.block);   /* one block, whatever the worker mix */
    tq_field_params gp = {TQ_FIELD_GAUGE, prec, TQ_FULL, (tq_recon)recon, 0};
    tq_field_params ip = {TQ_FIELD_SPINOR, prec, TQ_ODD, (tq_recon)0, 0}, op = ip;
    op.subset = TQ_EVEN;
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = 0.12;   /* unused by the dslash; the operator needs one */
    return tq_lattice_create(&lp, &c->lat) || tq_field_create(c->lat, &gp, &c->gauge) ||
           tq_gauge_field_import(c->gauge, hg) || tq_dirac_create(c->gauge, &dp, &c->d) ||
           tq_field_create(c->lat, &ip, &c->in) || tq_field_create(c->lat, &op, &c->out) || tq_field_import(c->in, src);
}

/* Seconds per application of the dslash through the task graph, niter applications after
 * three warm-ups (data on the device, clocks up); < 0 on failure. */
static double time_task_graph(const bench_case *c, int niter)
{
    double t0 = 0;
    for (int it = -3; it < niter; it++) {
        if (it == 0) { tq_wait_all(); t0 = tq_cli_now(); }
        if (tq_dirac_dslash(c->d, c->out, c->in, TQ_EVEN, 0)) return -1;
    }
    tq_wait_all();
    return (tq_cli_now() - t0) / niter;
}

/* max |a - b| / max |b| over the even sites (the output's). */
static double relative_difference(const double *a, const double *b, const int dims[4])
{
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    double num = 0, den = 0;
    for (int64_t s = 0; s < vol; s++) {
        if (ref_site_parity(s, dims)) continue;
        for (int k = 0; k < 24; k++) {
            num = fmax(num, fabs(a[24 * s + k] - b[24 * s + k]));
            den = fmax(den, fabs(b[24 * s + k]));
        }
    }
    return den > 0 ? num / den : num;
}

/* Both timings of one case and their lines; graph_out, bare_out: host arrays of vol * 24
 * for the two results (even sites). Returns 0, or 1 after saying what failed. */
static int measure_case(const bench_opts *o, const bench_case *c, tq_precision prec, int recon, double *graph_out,
                        double *bare_out)
{
    const int *dims = o->dims;
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    printf("bench_dslash_bare: wilson dslash, %dx%dx%dx%d, one block, %s recon %d, %d CUDA worker(s), niter %d\n",
           dims[0], dims[1], dims[2], dims[3], tq_precision_name(prec), recon, ri.ncuda_workers, o->niter);
    const double t = time_task_graph(c, o->niter);
    double tb = 0;
    if (t < 0 || tq_field_export(c->out, graph_out) ||
        tq_internal_dslash_bare(c->d, c->out, c->in, TQ_EVEN, o->niter, &tb) || tq_field_export(c->out, bare_out)) {
        fprintf(stderr, "%s: %s\n", me, tq_last_error());
        return 1;
    }
    tq_cli_dslash_cost cost;
    tq_cli_dslash_cost_of(vol, prec, recon, 1, 0, 0, &cost);
    /* the same words and columns as taskqcd dslash's lines (bench/dslash-sweep.sh reads both) */
    printf("  time %.3f ms per application, %.1f GFLOPS, %.1f GB/s (QUDA's byte model), %.1f GB/s (minimal traffic)\n",
           1e3 * t, cost.flops / t * 1e-9, cost.bytes_quda / t * 1e-9, cost.bytes_min / t * 1e-9);
    printf("  bare kernel (launched directly, no StarPU): time %.3f ms, %.1f GFLOPS, %.1f GB/s (minimal traffic); "
           "task graph overhead %.1f us per application (%.1f %%)\n",
           1e3 * tb, cost.flops / tb * 1e-9, cost.bytes_min / tb * 1e-9, 1e6 * (t - tb), 100.0 * (t - tb) / t);
    /* the two paths must compute the same D in (to rounding: the task graph may split the
     * sum into interior and face kernels) */
    const double diff = relative_difference(bare_out, graph_out, dims);
    const double tol = prec == TQ_DOUBLE ? 1e-12 : prec == TQ_SINGLE ? 5e-5 : 5e-3;
    printf("  results: max |bare - task graph| / max |task graph| = %.3g (%s, tolerance %.0e)\n", diff,
           diff <= tol ? "same" : "DIFFER", tol);
    return !(diff <= tol);
}

/* Every precision and compression on one gauge field and source. Returns 0, or 1 when a
 * case failed. */
static int run_cases(const bench_opts *o, const tq_host_gauge *hg, const double *src)
{
    const int64_t vol = (int64_t)o->dims[0] * o->dims[1] * o->dims[2] * o->dims[3];
    /* calloc: the exports fill the even sites only */
    double *graph_out = calloc((size_t)vol * 24, sizeof *graph_out), *bare_out = calloc((size_t)vol * 24, sizeof *bare_out);
    int rc = 0;
    if (!graph_out || !bare_out) { fprintf(stderr, "%s: out of memory\n", me); rc = 1; }
    for (int k = 0; k < o->nprec && graph_out && bare_out; k++)
        for (int r = 0; r < o->nrecon; r++) {
            bench_case c;
            if (make_case(o, hg, src, o->precs[k], o->recons[r], &c)) {
                fprintf(stderr, "%s: %s\n", me, tq_last_error());
                rc = 1;
            } else if (measure_case(o, &c, o->precs[k], o->recons[r], graph_out, bare_out)) {
                rc = 1;
            }
            free_case(&c);
        }
    free(graph_out);
    free(bare_out);
    return rc;
}

int main(int argc, char **argv)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
    bench_opts o;
    int rc = parse_args(argc, argv, &o);
    if (rc >= 0) return rc;
    tq_cli_workers_for_placement(&ip, "cuda");
    if (tq_init(&ip)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
    if ((rc = check_runtime()) >= 0) { tq_finalize(); return rc; }
    tq_set_placement(TQ_WHERE_CUDA);
    /* the gauge field and source of taskqcd dslash: weak-field (seed 1, epsilon 0.2), seed 2 */
    const int64_t vol = (int64_t)o.dims[0] * o.dims[1] * o.dims[2] * o.dims[3];
    tq_host_gauge hg;
    memset(&hg, 0, sizeof hg);
    double *src = malloc((size_t)vol * 24 * sizeof *src);
    if (!src || tq_host_gauge_alloc(&hg, o.dims) || tq_host_gauge_weak(&hg, 1, 0.2)) {
        fprintf(stderr, "%s: %s\n", me, src ? tq_last_error() : "out of memory");
        rc = 1;
    } else {
        ref_spinor_random(src, vol, 2);
        rc = run_cases(&o, &hg, src);
    }
    free(src);
    tq_host_gauge_free(&hg);
    tq_set_placement(TQ_WHERE_ANY);
    tq_finalize();
    return rc;
}
