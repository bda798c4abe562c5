/* Improved staggered benchmark (issue 36): the asqtad link build from random thin links and
 * the hopping term D on a full field (both parities: one application is every site's 16
 * hops), per precision; then the solves' time to solution: CG for one mass and multi-shift
 * CG for 8 masses, double with --sloppy iterations (single by default), a point source.
 * Flops counted as QUDA does: 1146 per site for the improved staggered dslash. Bytes: what
 * an application reads and writes per site, each site's 16 links (18 reals each,
 * uncompressed; in half a norm per 12-complex row: 12 floats), its 16 neighbours and its
 * output (6 reals each; in half a norm each). Compare with the device-to-device copy of
 * bench_blas in the same call.
 *
 * usage: bench_staggered [--dim X Y Z T] [--niter N] [--prec LIST] [--where cuda|cpu|any]
 *                        [--sloppy P|none] [--no-solve]
 * default: 32 32 32 32, 100 applications, double,single,half, cuda, sloppy single. */
#include "config.h"
#include "taskqcd.h"
#include "cli/cli.h"
#include "dirac/staggered.h"
#include "../reference/wilson_reference.h"   /* ref_gauge_random_su3 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KS_FLOPS_PER_SITE 1146.0

static double bytes_per_site(tq_precision prec)
{
    const double b = (double)prec, norm = prec == TQ_HALF ? 4.0 : 0.0;
    return 16 * 18 * b + 12 * norm + 17 * (6 * b + norm);
}

/* One precision's row; 0 on success. */
static int run(tq_lattice *lat, const double *thin, const double *in, tq_precision prec, int niter)
{
    const int64_t vol = (int64_t)lat->local_volume;
    const double bc[4] = {1, 1, 1, -1};
    tq_ks_op *op = NULL;
    tq_field *x = NULL, *y = NULL;
    const tq_field_params fp = {TQ_FIELD_STAGGERED, prec, TQ_FULL, (tq_recon)0, 0};
    double t0 = tq_cli_now();
    int rc = tq_ks_op_create_asqtad(lat, thin, 0.9, bc, prec, &op) != TQ_SUCCESS;
    const double t_build = tq_cli_now() - t0;
    if (!rc) rc = tq_field_create(lat, &fp, &x) || tq_field_create(lat, &fp, &y) || tq_field_import(x, in);
    for (int i = 0; i < 5 && !rc; i++) rc = tq_ks_dslash(op, y, x) != TQ_SUCCESS;   /* warm-up: allocations, models */
    starpu_task_wait_for_all();
    t0 = tq_cli_now();
    for (int i = 0; i < niter && !rc; i++) rc = tq_ks_dslash(op, i % 2 ? x : y, i % 2 ? y : x) != TQ_SUCCESS;
    starpu_task_wait_for_all();
    const double t = (tq_cli_now() - t0) / niter;
    if (rc) fprintf(stderr, "bench_staggered: %s\n", tq_last_error());
    else
        printf("  %-7s %10.1f %10.3f %10.1f %10.1f\n", tq_precision_name(prec), t_build * 1e3, t * 1e3,
               KS_FLOPS_PER_SITE * (double)vol / t * 1e-9, bytes_per_site(prec) * (double)vol / t * 1e-9);
    tq_field_destroy(x);
    tq_field_destroy(y);
    tq_ks_op_destroy(op);
    return rc;
}

/* CG for mass 0.1 and multi-shift CG for 8 masses (0.1 to 0.8) on a point source, double
 * with sloppy iterations; 0 on success. */
static int solves(tq_lattice *lat, const double *thin, tq_precision sloppy)
{
    enum { NM = 8 };
    double masses[NM];
    for (int i = 0; i < NM; i++) masses[i] = 0.1 * (i + 1);
    const double bc[4] = {1, 1, 1, -1};
    const tq_field_params fp = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_staggered *op = NULL;
    tq_field *b = NULL, *x[NM] = {NULL};
    const size_t nv = 6 * (size_t)lat->local_volume;
    double *h = calloc(nv, sizeof *h);
    int rc = !h || tq_staggered_create_asqtad(lat, thin, 0.9, bc, TQ_DOUBLE, &op) || tq_field_create(lat, &fp, &b);
    for (int i = 0; i < NM && !rc; i++) rc = tq_field_create(lat, &fp, &x[i]) != TQ_SUCCESS;
    if (!rc) {
        h[0] = 1.0;   /* site 0 (even), color 0 */
        rc = tq_field_import(b, h) != TQ_SUCCESS;
    }
    tq_solver_params p;
    tq_solver_params_default(&p);
    p.inverter = TQ_INV_CG;
    p.tol = 1e-8;
    p.maxiter = 5000;
    p.prec_sloppy = sloppy;
    tq_solver_result r, rs[NM];
    if (!rc) rc = tq_staggered_solve(op, masses[0], x[0], b, &p, &r) != TQ_SUCCESS;   /* warm-up */
    if (!rc) rc = tq_staggered_solve(op, masses[0], x[0], b, &p, &r) != TQ_SUCCESS;
    if (!rc)
        printf("  CG, m 0.1, tol 1e-8, sloppy %s: %d iterations, %.3f s, %.1f GFLOPS, true residual %.2e\n",
               sloppy ? tq_precision_name(sloppy) : "none", r.iterations, r.seconds, r.flops / r.seconds * 1e-9,
               r.true_residual);
    if (!rc) rc = tq_staggered_solve_multishift(op, NM, masses, x, b, &p, rs) != TQ_SUCCESS;
    if (!rc) {
        double flops = 0, worst = 0;
        for (int i = 0; i < NM; i++) flops += rs[i].flops, worst = rs[i].true_residual > worst ? rs[i].true_residual : worst;
        printf("  multi-shift CG, 8 masses 0.1 .. 0.8, sloppy %s: %d iterations (the lightest), %.3f s, %.1f GFLOPS, "
               "worst true residual %.2e\n", sloppy ? tq_precision_name(sloppy) : "none", rs[0].iterations, rs[0].seconds,
               flops / rs[0].seconds * 1e-9, worst);
    }
    if (rc) fprintf(stderr, "bench_staggered: the solves: %s\n", tq_last_error());
    for (int i = 0; i < NM; i++) tq_field_destroy(x[i]);
    tq_field_destroy(b);
    tq_staggered_destroy(op);
    free(h);
    return rc;
}

int main(int argc, char **argv)
{
    int dims[4] = {32, 32, 32, 32}, niter = 100, solve = 1;
    tq_precision sloppy = TQ_SINGLE;
    const char *precs = "double,single,half", *where = "cuda";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dim")) {
            if (tq_cli_parse_dims(argc, argv, &i, dims)) { fprintf(stderr, "bench_staggered: --dim needs 4 positive integers\n"); return 2; }
        } else if (!strcmp(argv[i], "--niter") && i + 1 < argc) {
            if (tq_cli_parse_positive(argv[++i], &niter)) { fprintf(stderr, "bench_staggered: --niter needs a positive integer\n"); return 2; }
        } else if (!strcmp(argv[i], "--prec") && i + 1 < argc) {
            precs = argv[++i];
        } else if (!strcmp(argv[i], "--where") && i + 1 < argc) {
            where = argv[++i];
        } else if (!strcmp(argv[i], "--sloppy") && i + 1 < argc) {
            const char *v = argv[++i];
            if (!strcmp(v, "none")) sloppy = (tq_precision)0;
            else if (tq_precision_parse(v, &sloppy)) { fprintf(stderr, "bench_staggered: --sloppy double|single|half|none\n"); return 2; }
        } else if (!strcmp(argv[i], "--no-solve")) {
            solve = 0;
        } else {
            fprintf(stderr, "bench_staggered: unknown option '%s'\n", argv[i]);
            return 2;
        }
    }
    tq_init_params p;
    tq_init_params_default(&p);
    p.use_mpi = 0;
    tq_cli_workers_for_placement(&p, where);
    if (tq_init(&p)) { fprintf(stderr, "bench_staggered: %s\n", tq_last_error()); return 1; }
    const tq_where w = !strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "any") ? TQ_WHERE_ANY : TQ_WHERE_CUDA;
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    if (tq_set_placement(w)) {
        printf("bench_staggered: %s\n", tq_last_error());
        tq_finalize();
        return 0;
    }
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof dims);
    tq_lattice *lat = NULL;
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    double *thin = malloc(sizeof(double) * 72 * (size_t)vol), *in = malloc(sizeof(double) * 6 * (size_t)vol);
    int rc = !thin || !in;
    if (rc) fprintf(stderr, "bench_staggered: out of memory\n");
    if (!rc && tq_lattice_create(&lp, &lat)) { fprintf(stderr, "bench_staggered: %s\n", tq_last_error()); rc = 1; }
    if (!rc) {
        ref_gauge_random_su3(thin, dims, 7);
        uint64_t st = 0x9e3779b97f4a7c15ull;
        for (int64_t i = 0; i < 6 * vol; i++) in[i] = wref_rng_gaussian(&st);
        printf("bench_staggered: %dx%dx%dx%d, %d applications of D (both parities), StarPU %s, %d CPU + %d CUDA workers, "
               "placement %s\n", dims[0], dims[1], dims[2], dims[3], niter, ri.starpu_version, ri.ncpu_workers,
               ri.ncuda_workers, where);
        printf("  %-7s %10s %10s %10s %10s\n", "prec", "build ms", "D ms", "GFLOPS", "GB/s");
        const char *names[3] = {"double", "single", "half"};
        const tq_precision pr[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
        for (int k = 0; k < 3 && !rc; k++)
            if (tq_cli_list_has(precs, names[k])) rc = run(lat, thin, in, pr[k], niter);
        if (!rc && solve) rc = solves(lat, thin, sloppy);
    }
    free(thin);
    free(in);
    tq_lattice_destroy(lat);
    tq_finalize();
    return rc;
}
