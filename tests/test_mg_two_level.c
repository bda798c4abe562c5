/* Two-level multigrid on the CPU, end to end with the library's pieces: the Wilson-clover
 * matrix of a weak field in stencil form (tq_mg_fine_op_create), null vectors from random
 * vectors smoothed by a few GCR iterations on F e = F x0, the block-orthonormal basis, the
 * Galerkin coarse operator (tq_mg_coarsen), and flexible GCR preconditioned by the
 * two-level cycle (tq_mg_two_level_apply). Asserts: the preconditioned solve reaches a true
 * residual below 1e-9, with at most a quarter of the outer iterations plain GCR needs;
 * bad cycle parameters are refused. Quick (tq_test_quick, the sanitizer run): plain GCR runs
 * after the two-level solve and stops at 4 times its iterations (enough for the comparison). */
#include "tq_test.h"
#include "solvers/mg_internal.h"
#include "solvers/solver_internal.h"
#include "mg_test.h"

enum { NVEC = 12 };

/* A coarse-kind field of 12 complex per site with uniform random entries. */
static tq_field *random_field(tq_lattice *lat, double *host, int64_t n)
{
    const tq_field_params fp = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 12};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &f));
    for (int64_t i = 0; i < n; i++) host[i] = urand();
    if (f) CHECK_OK(tq_field_import(f, host));
    return f;
}

static double true_residual(const tq_mg_coarse_op *F, const tq_field *x, const tq_field *b, tq_field *w, double *h1,
                            double *h2, int64_t n)
{
    CHECK_OK(tq_mg_coarse_apply(F, w, x));
    CHECK_OK(tq_field_export(w, h1));
    CHECK_OK(tq_field_export(b, h2));
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) num += (h2[i] - h1[i]) * (h2[i] - h1[i]), den += h2[i] * h2[i];
    return sqrt(num / den);
}

int main(void)
{
    if (tq_test_init_cpus(2)) return 1;
    mg_rng_state = 0x6a09e667f3bcc909ull;
    const int dims[4] = {8, 8, 8, 8}, agg[4] = {4, 4, 4, 4};
    const int64_t vol = 4096, n = vol * 24;
    tq_lattice *lat = tq_test_lattice(dims, dims);
    tq_host_gauge g;
    CHECK_OK(tq_host_gauge_alloc(&g, dims));
    double *h = malloc(sizeof(double) * (size_t)n), *h1 = malloc(sizeof(double) * (size_t)n);
    tq_field *gauge = NULL, *v[NVEC] = {NULL}, *b = NULL, *x = NULL, *w = NULL;
    tq_dirac *d = NULL;
    tq_mg_coarse_op *F = NULL, *C = NULL;
    tq_mg_transfer *t = NULL;
    tq_mg_two_level *m = NULL;
    if (!lat || !g.links || !h || !h1) { CHECK(0, "set-up failed"); goto out; }
    CHECK_OK(tq_host_gauge_weak(&g, 5, 0.3));
    /* kappa 0.1245: light, plain GCR needs tens of iterations */
    if (mg_test_dirac(lat, &g, 0.1245, 1.0, &gauge, &d)) goto out;
    if (d) CHECK_OK(tq_mg_fine_op_create("test", d, TQ_DOUBLE, TQ_DOUBLE, &F));
    CHECK_OK(tq_mg_transfer_create("test", lat, 12, agg, NVEC, TQ_DOUBLE, &t));
    b = random_field(lat, h, n);
    w = random_field(lat, h, n);
    x = random_field(lat, h, n);
    if (!F || !t || !b || !w || !x) goto out;

    /* null vectors: x0 - e with F e = F x0 solved loosely (the smooth error stays) */
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.inverter = TQ_INV_GCR;
    sp.tol = 1e-12;
    sp.maxiter = 16;
    for (int k = 0; k < NVEC; k++) {
        v[k] = random_field(lat, h, n);
        if (!v[k]) goto out;
        CHECK_OK(tq_mg_coarse_apply(F, w, v[k]));
        const tq_status s = tq_mg_coarse_solve(F, x, w, &sp, NULL);
        CHECK(s == TQ_SUCCESS || s == TQ_ERR_NOT_CONVERGED, "null-vector solve %d: %s", k, tq_last_error());
        CHECK_OK(tq_blas_axpy(-1.0, x, v[k]));
    }
    CHECK_OK(tq_mg_transfer_set_basis(t, v));
    CHECK_OK(tq_mg_coarse_op_create("test", t->coarse, 2 * NVEC, TQ_DOUBLE, TQ_DOUBLE, &C));
    if (!C) goto out;
    CHECK_OK(tq_mg_coarsen(F, t, C));
    tq_solver_params cp;
    tq_solver_params_default(&cp);
    cp.inverter = TQ_INV_GCR;
    cp.tol = 1e-3;
    cp.maxiter = 100;
    CHECK_OK(tq_mg_two_level_create(F, t, C, 4, 4, &cp, &m));
    if (!m) goto out;
    CHECK_ERR(tq_mg_two_level_create(F, t, C, 0, 0, &cp, NULL), TQ_ERR_INVALID_ARG);
    tq_mg_two_level *bad = NULL;
    CHECK_ERR(tq_mg_two_level_create(F, t, C, 0, 0, &cp, &bad), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_mg_two_level_create(C, t, F, 4, 4, &cp, &bad), TQ_ERR_MISMATCH);

    /* plain GCR against GCR with the two-level cycle, on one source */
    tq_solver_params op;
    tq_solver_params_default(&op);
    op.inverter = TQ_INV_GCR;
    op.tol = 1e-10;
    op.maxiter = 3000;
    tq_krylov_out plain, mg;
    memset(&plain, 0, sizeof plain);
    memset(&mg, 0, sizeof mg);
    /* quick (the sanitizer run): the two-level solve first, then plain GCR only as far as the
     * comparison needs (4 times the two-level iterations: still short of the tolerance there
     * or the check fails), not to its own convergence; GCR's code is the same either way */
    const int quick = tq_test_quick();
    tq_status sp0 = TQ_SUCCESS;
    double r0 = 0;
    if (!quick) {
        sp0 = tq_mg_coarse_solve(F, x, b, &op, &plain);
        CHECK(sp0 == TQ_SUCCESS || sp0 == TQ_ERR_NOT_CONVERGED, "plain GCR: %s", tq_last_error());
        r0 = true_residual(F, x, b, w, h, h1, n);
    }
    CHECK_OK(tq_mg_level_solve(F, x, b, &op, tq_mg_two_level_apply, m, &mg));
    const double r1 = true_residual(F, x, b, w, h, h1, n);
    if (quick) {
        printf("  quick: plain GCR stopped after %d iterations (4 times the two-level solve's), not run to convergence\n",
               4 * mg.iterations);
        op.maxiter = 4 * mg.iterations;
        sp0 = tq_mg_coarse_solve(F, x, b, &op, &plain);
        CHECK(sp0 == TQ_SUCCESS || sp0 == TQ_ERR_NOT_CONVERGED, "plain GCR: %s", tq_last_error());
        r0 = true_residual(F, x, b, w, h, h1, n);
        op.maxiter = 3000;
    }
    printf("  plain GCR: %d iterations%s, true residual %.2g\n", plain.iterations,
           quick && sp0 == TQ_ERR_NOT_CONVERGED ? " (not converged yet)" : "", r0);
    printf("  two-level GCR: %d iterations (%ld coarse GCR iterations in all), true residual %.2g\n", mg.iterations,
           m->coarse_iterations, r1);
    CHECK(r1 < 1e-9, "two-level GCR: true residual %.3g", r1);
    CHECK(4 * mg.iterations <= plain.iterations, "two-level GCR took %d iterations, plain GCR %d", mg.iterations,
          plain.iterations);
    op.inverter = TQ_INV_BICGSTAB;   /* a preconditioner needs flexible GCR */
    CHECK_ERR(tq_mg_level_solve(F, x, b, &op, tq_mg_two_level_apply, m, NULL), TQ_ERR_INVALID_ARG);
out:
    tq_mg_two_level_destroy(m);
    for (int k = 0; k < NVEC; k++) tq_field_destroy(v[k]);
    tq_field_destroy(b);
    tq_field_destroy(x);
    tq_field_destroy(w);
    tq_mg_coarse_op_destroy(C);
    tq_mg_transfer_destroy(t);
    tq_mg_coarse_op_destroy(F);
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    tq_host_gauge_free(&g);
    free(h);
    free(h1);
    tq_finalize();
    return tq_test_finish("test_mg_two_level");
}
