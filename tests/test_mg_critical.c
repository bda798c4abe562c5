/* Multigrid near the critical kappa (issue 28): on a quenched 8^4 configuration made by the
 * library's generator (beta 6.0, cold start, seed 1, 100 sweeps of 1 heat bath + 4
 * overrelaxation, on CPU workers), clover c_sw 1, at kappa 0.140 and 0.148 (BiCGstab on the
 * even-odd system in double: 73 and 1709 iterations; 266 at 0.1465, 2520 at 0.150), BiCGstab
 * needs many hundreds of iterations at 0.148 and several times more than at 0.140, while
 * two-level multigrid GCR (12 null vectors, 2^4 aggregates, the
 * command line's set-up and coarse tolerances) reaches 1e-10 true residual at both in about
 * as many outer iterations; with the outer GCR iterating in single precision (reliable
 * updates in double) too, in at most a third more outer iterations. Prints the table.
 * Quick (tq_test_quick, the sanitizer run): kappa 0.140 alone, the comparisons across kappa
 * and the BiCGstab solve only they need left out, the configuration after 30 sweeps. */
#include "tq_test.h"
#include "mg_test.h"

/* The configuration, as `taskqcd propagator --dim 8 8 8 8 --therm 100` makes it (nsweeps
 * 100; quick: fewer). */
static int quenched(const int dims[4], int nsweeps, tq_host_gauge *g)
{
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    tq_generator *gen = NULL;
    CHECK_OK(tq_generator_create(dims, &gp, &gen));
    if (!gen) return -1;
    int ok = 1;
    for (int s = 1; ok && s <= nsweeps; s++) {
        ok = tq_generator_sweep(gen, 4) == TQ_SUCCESS;
        if (ok && s % 10 == 0) ok = tq_generator_reunitarize(gen) == TQ_SUCCESS;
    }
    if (ok) ok = tq_generator_export(gen, g) == TQ_SUCCESS;
    tq_generator_destroy(gen);
    CHECK(ok, "generating the configuration failed: %s", tq_last_error());
    return ok ? 0 : -1;
}

int main(void)
{
    if (tq_test_init_cpus(2)) return 1;
    mg_rng_state = 0x13198a2e03707344ull;
    const int dims[4] = {8, 8, 8, 8};
    const int64_t n = 4096 * 24;
    const double kappa[2] = {0.140, 0.148};
    int bicg[2] = {0, 0}, outer[2] = {0, 0}, outer_single[2] = {0, 0};
    long coarse[2] = {0, 0};
    double res[2] = {1, 1}, res_single[2] = {1, 1};
    tq_lattice *lat = tq_test_lattice(dims, dims);
    tq_host_gauge g;
    CHECK_OK(tq_host_gauge_alloc(&g, dims));
    double *hb = malloc(sizeof(double) * (size_t)n), *h = malloc(sizeof(double) * (size_t)n);
    tq_field *b = NULL, *x = NULL, *w = NULL;
    /* quick: 30 sweeps (the generator's code is the same every sweep: test_generator checks it;
     * the field is thermalised at beta 6 well before, kappa 0.140 as far from critical) */
    const int nsweeps = tq_test_quick() ? 30 : 100;
    if (!lat || !g.links || !hb || !h || quenched(dims, nsweeps, &g)) { CHECK(0, "set-up failed"); goto out; }
    for (int64_t i = 0; i < n; i++) hb[i] = urand();
    b = spinor(lat, hb);
    x = spinor(lat, NULL);
    w = spinor(lat, NULL);
    if (!b || !x || !w) goto out;
    const int nk = tq_test_quick() ? 1 : 2;
    if (nk == 1)
        printf("  quick: kappa %.3f alone (no comparison with %.3f), its BiCGstab solve (compared only across kappa) left "
               "out, the configuration after %d sweeps, not 100\n", kappa[0], kappa[1], nsweeps);
    for (int k = 0; k < nk; k++) {
        tq_field *gauge = NULL;
        tq_dirac *d = NULL;
        tq_multigrid *mg = NULL;
        if (mg_test_dirac(lat, &g, kappa[k], 1.0, &gauge, &d)) goto next;
        tq_solver_params sp;
        tq_solver_params_default(&sp);
        sp.inverter = TQ_INV_BICGSTAB;
        sp.tol = 1e-10;
        sp.maxiter = 5000;
        tq_solver_result r;
        if (nk > 1) {   /* quick (one kappa): no comparison needs BiCGstab's iterations */
            CHECK_OK(tq_solve(d, x, b, &sp, &r));
            bicg[k] = r.iterations;
        }
        tq_mg_params p;
        tq_mg_params_default(&p);
        p.levels = 2;
        for (int mu = 0; mu < 4; mu++) p.block[0][mu] = 2;
        p.nvec[0] = 12;
        p.smoother_prec = p.nullvec_prec = TQ_DOUBLE;
        p.setup_iters[0] = 100;
        p.coarse_tol = 0.1;
        p.coarse_maxiter = 20;
        p.verbosity = 0;
        CHECK_OK(tq_multigrid_create(d, &p, 1, &mg));
        if (!mg) goto next;
        sp.inverter = TQ_INV_GCR;
        sp.solve_type = TQ_SOLVE_DIRECT;
        sp.maxiter = 500;
        CHECK_OK(tq_multigrid_solve(mg, x, b, &sp, &r));
        tq_multigrid_info info;
        CHECK_OK(tq_multigrid_get_info(mg, &info));
        outer[k] = r.iterations;
        coarse[k] = info.level_iterations[1];
        res[k] = residual_of(d, x, hb, w, h, n);
        /* the outer GCR iterating in single precision (reliable updates in double) */
        sp.prec_sloppy = TQ_SINGLE;
        CHECK_OK(tq_multigrid_prepare(mg, &sp));   /* the sloppy operator made before the solve */
        CHECK_ERR(tq_multigrid_prepare(NULL, &sp), TQ_ERR_INVALID_ARG);
        CHECK_OK(tq_blas_zero(x));
        CHECK_OK(tq_multigrid_solve(mg, x, b, &sp, &r));
        outer_single[k] = r.iterations;
        res_single[k] = residual_of(d, x, hb, w, h, n);
    next:
        tq_multigrid_destroy(mg);
        tq_dirac_destroy(d);
        tq_field_destroy(gauge);
    }
    printf("  kappa   BiCGstab (even-odd)   multigrid GCR: outer, level-1 GCR, true residual   outer GCR in single: "
           "outer, true residual\n");
    for (int k = 0; k < nk; k++)
        printf("  %.3f   %6d                %6d %8ld   %.2g          %6d   %.2g\n", kappa[k], bicg[k], outer[k], coarse[k],
               res[k], outer_single[k], res_single[k]);
    for (int k = 0; k < nk; k++)
        CHECK(res_single[k] < 1e-9 && outer_single[k] > 0 && outer_single[k] <= outer[k] + outer[k] / 3 + 2,
              "outer GCR in single at %.3f: %d iterations (double: %d), true residual %.3g", kappa[k], outer_single[k],
              outer[k], res_single[k]);
    for (int k = 0; k < nk; k++) CHECK(res[k] < 1e-9, "multigrid true residual %.3g at %.3f", res[k], kappa[k]);
    if (nk < 2) goto out;
    CHECK(bicg[1] >= 500 && bicg[1] >= 5 * bicg[0], "BiCGstab: %d iterations at %.3f, %d at %.3f (not near critical)",
          bicg[0], kappa[0], bicg[1], kappa[1]);
    CHECK(outer[1] > 0 && outer[1] <= 2 * outer[0] + 4, "multigrid: %d outer iterations at %.3f, %d at %.3f (not flat)",
          outer[0], kappa[0], outer[1], kappa[1]);
    CHECK(outer[1] > 0 && 10 * outer[1] <= bicg[1], "multigrid %d outer iterations against BiCGstab's %d", outer[1], bicg[1]);
out:
    tq_field_destroy(w);
    tq_field_destroy(x);
    tq_field_destroy(b);
    tq_host_gauge_free(&g);
    free(hb);
    free(h);
    tq_lattice_destroy(lat);
    return tq_test_finish("test_mg_critical");
}
