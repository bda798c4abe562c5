/* The solvers' own BLAS passes (src/solvers/ submits them with tq_blas_submit), on
 * CPU workers and on CUDA workers where there are any, and on two shapes (an even-parity
 * field on one block: a reduction ends in its one task; a full field on 16 blocks: 32
 * tasks and the combine task).
 *
 * Guards (tq_blas_args.guard, tq_guard_shut in kernels/solver_scalars.h, set through
 * tq_scalars.guard):
 *  - guard g > 0 (the iterations queued after convergence): the task runs while scalar slot
 *    g - 1 is nonzero and writes nothing while it is 0;
 *  - an inverse guard g < 0 (the fused CG's x/p pass, done in the reliable update behind an
 *    iteration that held it back): the task runs only while slot -g - 1 is 0.
 * For each guard and each value of its slot:
 *  - TQ_OP_CG_X_DIRECTION (x += alpha p; p = r + beta p, coefficients from scalar slots) in
 *    single precision: when it runs, x and p as a plain double loop over the stored inputs
 *    gives them (within 1e-6 of each site's largest component), r unchanged; when held
 *    back, all three unchanged bit for bit;
 *  - TQ_OP_NORM2 into a scalar slot with a program (slot 1 = 2 |x|^2): when it runs, the
 *    sum within 1e-12 and the program's result; when held back, both slots unchanged.
 *
 * The first x pass after a reliable update (TQ_OP_CG_X_DIRECTION_SET, TQ_OP_BICGSTAB_STEP_SET:
 * x = ... instead of x += ...), in single and half precision: with x holding arbitrary
 * values (up to 7 times the other fields'), every output field must equal that of the +=
 * pass on the same inputs with x = 0 within its storage rounding (1e-6 of the site's
 * largest component in single precision, 5e-5 in half: the passes may be different kernels,
 * with different operation orders), and every sum within 1e-5 relative. */
#include "tq_test.h"
#include "solvers/solver_internal.h"

#include <stdint.h>

enum { SLOT_SUM = 0, SLOT_PROG = 1, SLOT_ALPHA = 4, SLOT_BETA = 5, SLOT_GUARD = 9, SLOT_COEF = 12 };
#define SENTINEL 12345.0

static uint64_t rng_state = 424242;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

typedef struct shape {
    const char *name;
    tq_lattice *lat;
    tq_subset sub;
    size_t n;   /* reals of a full-lattice host array */
} shape;

/* Whether a task with this guard runs when the guard slot holds go (independent of the
 * library's tq_guard_shut on purpose). */
static int expect_run(int guard, double go)
{
    return guard > 0 ? go != 0.0 : guard < 0 ? go == 0.0 : 1;
}

static void run_case(const shape *S, int guard, double go, tq_where where)
{
    char what[160];
    snprintf(what, sizeof what, "guard %d, slot %g, %s (%s)", guard, go, where == TQ_WHERE_CPU ? "CPU" : "CUDA", S->name);
    const int runs = expect_run(guard, go);
    tq_field *f[3] = {0};   /* r, p, x */
    double *q[3], *out[3];
    int ok = 1;
    for (int i = 0; i < 3; i++) {
        tq_field_params fp = {TQ_FIELD_SPINOR, TQ_SINGLE, S->sub, (tq_recon)0, 0};
        double *in = calloc(S->n, sizeof(double));
        q[i] = calloc(S->n, sizeof(double));
        out[i] = calloc(S->n, sizeof(double));
        if (!in || !q[i] || !out[i]) { fprintf(stderr, "out of memory\n"); exit(99); }
        for (size_t j = 0; j < S->n; j++) in[j] = uniform() * (1.0 + i);
        CHECK_OK(tq_field_create(S->lat, &fp, &f[i]));
        ok = ok && f[i] && tq_field_import(f[i], in) == TQ_SUCCESS && tq_field_export(f[i], q[i]) == TQ_SUCCESS;
        free(in);
    }
    CHECK(ok, "%s: set-up: %s", what, tq_last_error());
    tq_scalars *sc = NULL;
    if (ok) CHECK_OK(tq_scalars_create(&sc));
    if (ok && sc) {
        const double alpha = 0.375, beta = -1.25;
        double init[TQ_NSCALARS];
        for (int k = 0; k < TQ_NSCALARS; k++) init[k] = SENTINEL;
        init[SLOT_ALPHA] = alpha;
        init[SLOT_BETA] = beta;
        init[SLOT_GUARD] = go;
        CHECK_OK(tq_scalars_write(sc, 0, TQ_NSCALARS, init));
        CHECK_OK(tq_set_placement(where));
        const double one[4] = {1, 1, 1, 1};
        const signed char slots[4] = {SLOT_ALPHA + 1, SLOT_BETA + 1, 0, 0};
        static const tq_scalar_instr prog[] = {{TQ_SC_SET, 8, 2, 0}, {TQ_SC_MUL, SLOT_PROG, 8, SLOT_SUM}};
        sc->guard = guard;
        CHECK_OK(tq_blas_submit("test_blas_solver", TQ_OP_CG_X_DIRECTION, one, slots, f, sc, 0, NULL, 0));
        tq_field *fx[1] = {f[2]};
        sc->snap_next = 0;
        CHECK_OK(tq_blas_submit("test_blas_solver", TQ_OP_NORM2, NULL, NULL, fx, sc, SLOT_SUM, prog, 2));
        sc->guard = 0;
        double s[TQ_NSCALARS] = {0};
        CHECK_OK(tq_scalars_read_snapshot(sc, 0, s));
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
        for (int i = 0; i < 3; i++) CHECK_OK(tq_field_export(f[i], out[i]));

        if (!runs) {
            for (int i = 0; i < 3; i++)
                CHECK(memcmp(out[i], q[i], S->n * sizeof(double)) == 0, "%s: held back, but operand %d changed", what, i);
            CHECK(s[SLOT_SUM] == SENTINEL && s[SLOT_PROG] == SENTINEL,
                  "%s: held back, but the reduction wrote its slots (%.6g, %.6g)", what, s[SLOT_SUM], s[SLOT_PROG]);
        } else {
            double *xr = malloc(S->n * sizeof(double)), *pr = malloc(S->n * sizeof(double));
            if (!xr || !pr) { fprintf(stderr, "out of memory\n"); exit(99); }
            double x2 = 0.0;
            for (size_t j = 0; j < S->n; j++) {
                xr[j] = q[2][j] + alpha * q[1][j];
                pr[j] = q[0][j] + beta * q[1][j];
                x2 += out[2][j] * out[2][j];   /* the norm of x as stored */
            }
            CHECK(memcmp(out[0], q[0], S->n * sizeof(double)) == 0, "%s: r is only read but changed", what);
            const double ex = tq_test_site_rel_err(out[2], xr, S->n / 24), ep = tq_test_site_rel_err(out[1], pr, S->n / 24);
            CHECK(ex <= 1e-6 && ep <= 1e-6, "%s: x error %.3g, p error %.3g of the site max (tol 1e-6)", what, ex, ep);
            CHECK(fabs(s[SLOT_SUM] - x2) <= 1e-12 * x2, "%s: |x|^2 %.17g vs %.17g", what, s[SLOT_SUM], x2);
            CHECK(s[SLOT_PROG] == 2.0 * s[SLOT_SUM], "%s: the program gave %.17g for 2 |x|^2 = %.17g", what,
                  s[SLOT_PROG], 2.0 * s[SLOT_SUM]);
            free(xr);
            free(pr);
        }
        CHECK(s[SLOT_GUARD] == go && s[SLOT_ALPHA] == alpha, "%s: the guard or a coefficient slot changed", what);
    }
    tq_scalars_destroy(sc);
    for (int i = 0; i < 3; i++) {
        tq_field_destroy(f[i]);
        free(q[i]);
        free(out[i]);
    }
}

/* op_set on (inputs, x arbitrary) against op_plus on (inputs, x = 0). */
static void set_case(const shape *S, int op_plus, int op_set, tq_precision prec, tq_where where)
{
    char what[160];
    snprintf(what, sizeof what, "%s vs %s with x = 0, %s, %s (%s)", tq_blas_op_name(op_set), tq_blas_op_name(op_plus),
             tq_precision_name(prec), where == TQ_WHERE_CPU ? "CPU" : "CUDA", S->name);
    const int nop = tq_blas_noperands(op_plus), xi = nop - 1;   /* x is the last operand of both */
    tq_field *f[2][TQ_BLAS_MAX_OPERANDS] = {{0}};
    /* zeroed: an even-parity field's export leaves the odd sites of the array as they were */
    double *in = malloc(S->n * sizeof(double)), *out[2] = {calloc(S->n, sizeof(double)), calloc(S->n, sizeof(double))};
    if (!in || !out[0] || !out[1]) { fprintf(stderr, "out of memory\n"); exit(99); }
    tq_scalars *sc[2] = {NULL, NULL};
    double res[2][TQ_NSCALARS];
    int ok = 1;
    for (int v = 0; v < 2 && ok; v++) {
        const uint64_t seed = rng_state;
        for (int i = 0; i < nop && ok; i++) {
            tq_field_params fp = {TQ_FIELD_SPINOR, prec, S->sub, (tq_recon)0, 0};
            for (size_t j = 0; j < S->n; j++) in[j] = i == xi ? (v ? 7.0 * uniform() : 0.0) : uniform() * (1.0 + i);
            CHECK_OK(tq_field_create(S->lat, &fp, &f[v][i]));
            ok = f[v][i] && tq_field_import(f[v][i], in) == TQ_SUCCESS;
        }
        if (v == 0) rng_state = seed;   /* the same inputs for both (x aside) */
        else rng_state += 1;
        if (ok) CHECK_OK(tq_scalars_create(&sc[v]));
        ok = ok && sc[v];
    }
    CHECK(ok, "%s: set-up: %s", what, tq_last_error());
    if (ok) {
        const double coef[8] = {0.375, -0.25, 1.125, 0.5, -1.25, 0.75, 0.625, -0.125};
        double init[TQ_NSCALARS] = {0};
        signed char slots[8] = {0};
        for (int k = 0; k < 8; k++) {
            init[SLOT_COEF + k] = coef[k];
            slots[k] = (signed char)(SLOT_COEF + k + 1);
        }
        const double one[8] = {1, 1, 1, 1, 1, 1, 1, 1};
        const int nres = tq_blas_nresults(op_plus);
        CHECK_OK(tq_set_placement(where));
        for (int v = 0; v < 2; v++) {
            CHECK_OK(tq_scalars_write(sc[v], 0, TQ_NSCALARS, init));
            sc[v]->snap_next = nres ? 0 : -1;
            CHECK_OK(tq_blas_submit("test_blas_solver", v ? op_set : op_plus, one, slots, f[v], sc[v], SLOT_SUM, NULL, 0));
            memset(res[v], 0, sizeof res[v]);
            if (nres) CHECK_OK(tq_scalars_read_snapshot(sc[v], 0, res[v]));
        }
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
        const unsigned wr = tq_blas_writes(op_plus);
        for (int i = 0; i < nop; i++) {
            CHECK_OK(tq_field_export(f[0][i], out[0]));
            CHECK_OK(tq_field_export(f[1][i], out[1]));
            const double tol = prec == TQ_HALF ? 5e-5 : 1e-6;
            if (i == xi || (wr >> i & 1u)) {
                const double e = tq_test_site_rel_err(out[1], out[0], S->n / 24);
                CHECK(e <= tol, "%s: operand %d differs by %.3g of the site max (tol %.3g)", what, i, e, tol);
            } else {
                CHECK(memcmp(out[0], out[1], S->n * sizeof(double)) == 0, "%s: operand %d is only read but differs", what, i);
            }
        }
        for (int r = 0; r < nres; r++) {
            const double a = res[1][SLOT_SUM + r], b = res[0][SLOT_SUM + r];
            CHECK(fabs(a - b) <= 1e-5 * fmax(fmax(fabs(a), fabs(b)), 1.0), "%s: sum %d: %.17g vs %.17g", what, r, a, b);
        }
    }
    for (int v = 0; v < 2; v++) {
        tq_scalars_destroy(sc[v]);
        for (int i = 0; i < nop; i++) tq_field_destroy(f[v][i]);
        free(out[v]);
    }
    free(in);
}

int main(void)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 99;
    const int d[4] = {8, 8, 8, 12}, block[4] = {4, 4, 4, 6};
    const size_t n = (size_t)8 * 8 * 8 * 12 * 24;
    shape S[2] = {{"even sites, one block", tq_test_lattice(d, d), TQ_EVEN, n},
                  {"full field, 16 blocks", tq_test_lattice(d, block), TQ_FULL, n}};
    if (!S[0].lat || !S[1].lat) return tq_test_finish("test_blas_solver");
    const tq_where wheres[2] = {TQ_WHERE_CPU, TQ_WHERE_CUDA};
    const int nwhere = info.ncuda_workers > 0 ? 2 : 1;
    if (nwhere == 1) printf("no CUDA worker: the CUDA cases are skipped (CPU workers only)\n");
    const int guards[3] = {0, SLOT_GUARD + 1, -(SLOT_GUARD + 1)};
    const double gos[2] = {0.0, 1.0};
    for (int w = 0; w < nwhere; w++)
        for (int l = 0; l < 2; l++)
            for (int g = 0; g < 3; g++)
                for (int v = 0; v < 2; v++) run_case(&S[l], guards[g], gos[v], wheres[w]);
    const tq_precision sloppy[2] = {TQ_SINGLE, TQ_HALF};
    for (int w = 0; w < nwhere; w++)
        for (int l = 0; l < 2; l++)
            for (int p = 0; p < 2; p++) {
                set_case(&S[l], TQ_OP_CG_X_DIRECTION, TQ_OP_CG_X_DIRECTION_SET, sloppy[p], wheres[w]);
                set_case(&S[l], TQ_OP_BICGSTAB_STEP, TQ_OP_BICGSTAB_STEP_SET, sloppy[p], wheres[w]);
            }
    for (int l = 0; l < 2; l++) tq_lattice_destroy(S[l].lat);
    tq_finalize();
    return tq_test_finish("test_blas_solver");
}
