/* An application's use of TaskQCD, from host arrays to host arrays, using only the public
 * API (include/taskqcd.h): a gauge field and a source the application owns, the clover
 * operator, a mixed-precision solve, the solution back in host memory; then the checks an
 * application would make. Built and run by `make check` (examples/solve_from_host), so it
 * cannot go stale.
 *
 * Host layouts (doc/conventions.md): sites lexicographic with x fastest; a gauge site is
 * 4 directions x 3x3 complex (72 doubles), a spinor site 4 spins x 3 colors complex (24). */
#include "taskqcd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

static void expect(int ok, const char *what)
{
    if (!ok) {
        failures++;
        fprintf(stderr, "solve_from_host: FAIL: %s (%s)\n", what, tq_last_error());
    }
}

int main(void)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.verbosity = 0;
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }

    /* the application's gauge field (here generated; normally read or produced by the
     * application) and source: a point source at the origin, spin 0, color 0 */
    const int dims[4] = {4, 4, 4, 8};
    const long vol = 4L * 4 * 4 * 8;
    tq_host_gauge hg;
    expect(tq_host_gauge_alloc(&hg, dims) == TQ_SUCCESS, "host gauge");
    expect(tq_host_gauge_weak(&hg, 5, 0.2) == TQ_SUCCESS, "weak field");
    double *source = calloc((size_t)vol * 24, sizeof *source), *solution = calloc((size_t)vol * 24, sizeof *solution);
    source[0] = 1.0;

    /* lattice, gauge field on the workers, operator */
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    tq_lattice *lat = NULL;
    tq_field *gauge = NULL, *x = NULL, *b = NULL;
    tq_dirac *d = NULL;
    tq_field_params gp = {TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, TQ_RECON_12, 0};
    tq_field_params sp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    expect(tq_lattice_create(&lp, &lat) == TQ_SUCCESS, "lattice");
    expect(tq_field_create(lat, &gp, &gauge) == TQ_SUCCESS, "gauge field");
    expect(tq_gauge_field_import(gauge, &hg) == TQ_SUCCESS, "gauge import");
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);   /* bc all zero: antiperiodic in time */
    dp.type = TQ_DSLASH_CLOVER;
    dp.kappa = 0.12;
    dp.csw = 1.0;
    expect(tq_dirac_create(gauge, &dp, &d) == TQ_SUCCESS, "operator");
    expect(tq_field_create(lat, &sp, &x) == TQ_SUCCESS && tq_field_create(lat, &sp, &b) == TQ_SUCCESS, "spinors");
    expect(tq_field_import(b, source) == TQ_SUCCESS, "source import");

    /* BiCGstab on the even-odd system, double with half-precision reliable updates */
    tq_solver_params sv;
    tq_solver_params_default(&sv);
    sv.inverter = TQ_INV_BICGSTAB;
    sv.prec_sloppy = TQ_HALF;
    sv.tol = 1e-10;
    tq_solver_result res;
    expect(tq_solve(d, x, b, &sv, &res) == TQ_SUCCESS, "solve");
    expect(tq_field_export(x, solution) == TQ_SUCCESS, "solution export");
    printf("solve_from_host: %d iterations, %d reliable updates, true residual %.2e\n", res.iterations,
           res.reliable_updates, res.true_residual);
    expect(res.true_residual <= 1e-9, "true residual below 1e-9");

    /* the solution in host memory: M x = b checked by applying M to it through the library */
    tq_field *mx = NULL;
    double *hmx = calloc((size_t)vol * 24, sizeof *hmx);
    expect(tq_field_create(lat, &sp, &mx) == TQ_SUCCESS && tq_field_import(x, solution) == TQ_SUCCESS &&
           tq_dirac_mat(d, mx, x, 0) == TQ_SUCCESS && tq_field_export(mx, hmx) == TQ_SUCCESS, "M x");
    double r2 = 0;
    for (long k = 0; k < vol * 24; k++) r2 += (hmx[k] - source[k]) * (hmx[k] - source[k]);
    expect(sqrt(r2) <= 1e-9, "|M x - b| from host arrays");

    /* what a bad request gets: a code and a message naming the problem, nothing half built */
    tq_dirac *bad = NULL;
    dp.kappa = -0.1;
    expect(tq_dirac_create(gauge, &dp, &bad) == TQ_ERR_INVALID_ARG && bad == NULL, "negative kappa refused");
    expect(strstr(tq_last_error(), "kappa") != NULL, "the message names kappa");
    sv.inverter = (tq_inverter)42;
    expect(tq_solve(d, x, b, &sv, &res) == TQ_ERR_INVALID_ARG && strstr(tq_last_error(), "inverter"), "unknown inverter");
    tq_solver_params_default(&sv);
    sv.prec_sloppy = (tq_precision)3;
    expect(tq_solve(d, x, b, &sv, &res) == TQ_ERR_INVALID_ARG && strstr(tq_last_error(), "precision"), "unknown precision");
    tq_host_gauge small;
    const int sdims[4] = {4, 4, 4, 4};
    expect(tq_host_gauge_alloc(&small, sdims) == TQ_SUCCESS, "small host gauge");
    expect(tq_gauge_field_import(gauge, &small) == TQ_ERR_MISMATCH && strstr(tq_last_error(), "4x4x4x4"),
           "mismatched dimensions refused");
    tq_host_gauge_free(&small);

    tq_field_destroy(mx);
    tq_field_destroy(x);
    tq_field_destroy(b);
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    tq_host_gauge_free(&hg);
    free(source);
    free(solution);
    free(hmx);
    tq_finalize();
    printf("solve_from_host: %s\n", failures ? "FAILED" : "ok");
    return failures ? 1 : 0;
}
