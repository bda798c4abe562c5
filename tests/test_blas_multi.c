/* The multi-vector BLAS operations of GCR's orthogonalisation (tq_blas_submit, as
 * src/solvers/gcr.c submits them):
 *   TQ_OP_MCDOTm  [x0 .. x(m-1), y]: <x_i, y> = sum conj(x_i) y, i < m (2m results)
 *   TQ_OP_MCAXPYm [x0 .. x(m-1), y]: y += sum a_i x_i, a_i complex, the coefficients read
 *                                    from scalar slots times -1 as GCR does
 * for m = 2, 3, 4, in double, single and half precision, on color-spinor (24 reals a site),
 * staggered (6) and coarse (48 complex: the run-time-shape kernels) fields, on CPU workers
 * and on CUDA workers where there are any, on one block (the reduction in its task) and on
 * 16 blocks (32 tasks and the combine). Each result against a plain double loop over the
 * inputs as stored:
 *  - the sums within 1e-12 of sum |x_i| |y| (1e-6 in half precision, whose site products
 *    are summed in float before the double accumulation);
 *  - y within its storage rounding relative to the site's largest component (1e-13 double,
 *    1e-6 single, 5e-5 half), the x_i unchanged bit for bit;
 *  - a multi-vector op equals the single-vector ops applied in turn (CDOT per x_i; CAXPY
 *    per x_i in double) to the same tolerance: what GCR's groups replace.
 * TQ_OP_GCR_UPDATE (the end of a GCR iteration) likewise against double arithmetic.
 * Bad use: an op over fields of different lattices is refused. */
#include "tq_test.h"
#include "solvers/solver_internal.h"

#include <stdint.h>

static uint64_t rng_state = 777;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

static double storage_tol(tq_precision p) { return p == TQ_DOUBLE ? 1e-13 : p == TQ_SINGLE ? 1e-6 : 5e-5; }

typedef struct shape {
    const char *name;
    tq_lattice *lat;
    tq_subset sub;
    int64_t V;
} shape;

typedef struct kind {
    const char *name;
    tq_field_kind kind;
    int ndof;    /* coarse */
    int nreal;   /* per site */
} kind;

enum { SLOT_SUM = 0, SLOT_COEF = 10 };

/* Largest error of each group of w reals (a site; a coarse site's 12 complex, which share a
 * half-precision norm) relative to that group's largest reference value. */
static double group_rel_err(const double *out, const double *ref, size_t n, int w)
{
    double worst = 0.0;
    for (size_t g = 0; g < n; g += (size_t)w) {
        double m = 0.0, e = 0.0;
        for (int k = 0; k < w; k++) {
            m = fmax(m, fabs(ref[g + k]));
            e = fmax(e, fabs(out[g + k] - ref[g + k]));
        }
        if (m > 0.0) worst = fmax(worst, e / m);
        else if (e > 0.0) worst = INFINITY;
    }
    return worst;
}

/* nf random fields of kind K and precision prec on shape S (f), and their values as stored
 * (q: allocated here; sites outside the subset 0); tmp holds n reals. 0 if one failed. */
static int random_operands(const shape *S, const kind *K, tq_precision prec, int nf, tq_field **f, double **q,
                           double *tmp)
{
    const size_t n = (size_t)S->V * (size_t)K->nreal;
    int ok = 1;
    for (int i = 0; i < nf && ok; i++) {
        tq_field_params fp = {K->kind, prec, K->kind == TQ_FIELD_COARSE ? TQ_FULL : S->sub, (tq_recon)0, K->ndof};
        q[i] = calloc(n, sizeof(double));   /* export leaves sites outside the subset alone: 0 */
        if (!q[i]) { fprintf(stderr, "out of memory\n"); exit(99); }
        for (size_t j = 0; j < n; j++) tmp[j] = uniform() * (1.0 + 0.5 * i);
        CHECK_OK(tq_field_create(S->lat, &fp, &f[i]));
        ok = f[i] && tq_field_import(f[i], tmp) == TQ_SUCCESS && tq_field_export(f[i], q[i]) == TQ_SUCCESS;
    }
    return ok;
}

static void run_case(const shape *S, const kind *K, int m, int dot, tq_precision prec, tq_where where)
{
    const int op = dot ? TQ_OP_MCDOT2 + (m - 2) : TQ_OP_MCAXPY2 + (m - 2);
    char what[200];
    snprintf(what, sizeof what, "%s%d %s %s on %s (%s)", dot ? "mcdot" : "mcaxpy", m, K->name, tq_precision_name(prec),
             where == TQ_WHERE_CPU ? "CPU" : "CUDA", S->name);
    const size_t n = (size_t)S->V * (size_t)K->nreal;
    tq_field *f[5] = {0};
    double *q[5] = {0}, *out = malloc(n * sizeof(double)), *ref = malloc(n * sizeof(double));
    double *tmp = malloc(n * sizeof(double));
    if (!out || !ref || !tmp) { fprintf(stderr, "out of memory\n"); exit(99); }
    tq_scalars *sc = NULL;
    const int ok = random_operands(S, K, prec, m + 1, f, q, tmp);
    CHECK(ok, "%s: set-up: %s", what, tq_last_error());
    if (ok) CHECK_OK(tq_scalars_create(&sc));
    if (ok && sc) {
        /* coefficients in scalar slots (as GCR's betas), used times -1 */
        double coef[8], minus[8];
        signed char slots[8];
        for (int k = 0; k < 8; k++) {
            coef[k] = uniform();
            minus[k] = -1.0;
            slots[k] = (signed char)(SLOT_COEF + 1 + k);
        }
        CHECK_OK(tq_scalars_write(sc, SLOT_COEF, 8, coef));
        double res[TQ_NSCALARS] = {0};
        CHECK_OK(tq_set_placement(where));
        if (dot) sc->snap_next = 0;
        tq_status st = tq_blas_submit("test_blas_multi", op, dot ? NULL : minus, dot ? NULL : slots, f, sc,
                                      SLOT_SUM, NULL, 0);
        CHECK(st == TQ_SUCCESS, "%s: %s", what, tq_last_error());
        if (st == TQ_SUCCESS && dot) CHECK_OK(tq_scalars_read_snapshot(sc, 0, res));
        for (int i = 0; i <= m; i++) {
            memset(out, 0, n * sizeof(double));
            CHECK_OK(tq_field_export(f[i], out));
            if (i < m || dot) {
                CHECK(memcmp(out, q[i], n * sizeof(double)) == 0, "%s: operand %d is only read but changed", what, i);
                continue;
            }
            /* y += sum -coef_i x_i, in order, in double */
            for (size_t j = 0; j < n; j += 2) {
                double re = q[m][j], im = q[m][j + 1];
                for (int k = 0; k < m; k++) {
                    const double ar = -coef[2 * k], ai = -coef[2 * k + 1];
                    re += ar * q[k][j] - ai * q[k][j + 1];
                    im += ar * q[k][j + 1] + ai * q[k][j];
                }
                ref[j] = re;
                ref[j + 1] = im;
            }
            const double e = group_rel_err(out, ref, n, K->nreal < 24 ? K->nreal : 24);
            CHECK(e <= storage_tol(prec), "%s: y: error %.3g of the site max (tol %.3g)", what, e, storage_tol(prec));
        }
        if (dot) {
            /* the sums, and the single-vector CDOT of the same operands */
            for (int k = 0; k < m; k++) {
                double dre = 0, dim = 0, scale = 0;
                for (size_t j = 0; j < n; j += 2) {
                    const double ar = q[k][j], ai = q[k][j + 1], br = q[m][j], bi = q[m][j + 1];
                    dre += ar * br + ai * bi;
                    dim += ar * bi - ai * br;
                    scale += hypot(ar, ai) * hypot(br, bi);
                }
                /* half precision: a site's products are summed in float (kernels/blas_site.h) */
                const double dtol = prec == TQ_HALF ? 1e-6 : 1e-12;
                CHECK(fabs(res[2 * k] - dre) <= dtol * scale && fabs(res[2 * k + 1] - dim) <= dtol * scale,
                      "%s: <x%d, y> (%.17g, %.17g) vs (%.17g, %.17g)", what, k, res[2 * k], res[2 * k + 1], dre, dim);
                tq_field *g[2] = {f[k], f[m]};
                double one[TQ_NSCALARS] = {0};
                sc->snap_next = 1;
                CHECK_OK(tq_blas_submit("test_blas_multi", TQ_OP_CDOT, NULL, NULL, g, sc, SLOT_SUM, NULL, 0));
                CHECK_OK(tq_scalars_read_snapshot(sc, 1, one));
                CHECK(fabs(res[2 * k] - one[0]) <= 1e-12 * scale && fabs(res[2 * k + 1] - one[1]) <= 1e-12 * scale,
                      "%s: <x%d, y> (%.17g, %.17g) vs the single cdot (%.17g, %.17g)", what, k, res[2 * k],
                      res[2 * k + 1], one[0], one[1]);
            }
        }
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    }
    tq_scalars_destroy(sc);
    for (int i = 0; i <= m; i++) {
        tq_field_destroy(f[i]);
        free(q[i]);
    }
    free(out);
    free(ref);
    free(tmp);
}

/* TQ_OP_GCR_UPDATE [z, Az, x, r] (the end of a GCR iteration, src/solvers/gcr.c): x += a z,
 * r -= a Az, z *= s, Az *= s and |r|^2, a complex and s real read from scalar slots, against
 * the same arithmetic in double on the inputs as stored. */
static void run_update(const shape *S, const kind *K, tq_precision prec, tq_where where)
{
    char what[200];
    snprintf(what, sizeof what, "gcr update %s %s on %s (%s)", K->name, tq_precision_name(prec),
             where == TQ_WHERE_CPU ? "CPU" : "CUDA", S->name);
    const size_t n = (size_t)S->V * (size_t)K->nreal;
    tq_field *f[4] = {0};
    double *q[4] = {0}, *out = malloc(n * sizeof(double)), *ref = malloc(n * sizeof(double));
    if (!out || !ref) { fprintf(stderr, "out of memory\n"); exit(99); }
    tq_scalars *sc = NULL;
    const int ok = random_operands(S, K, prec, 4, f, q, ref);
    CHECK(ok, "%s: set-up: %s", what, tq_last_error());
    if (ok) CHECK_OK(tq_scalars_create(&sc));
    if (ok && sc) {
        const double coef[3] = {uniform(), uniform(), 0.5 + 0.25 * uniform()};   /* a (re, im), s */
        const double one[4] = {1, 1, 1, 1};
        const signed char slots[4] = {SLOT_COEF + 1, SLOT_COEF + 2, SLOT_COEF + 3, 0};
        CHECK_OK(tq_scalars_write(sc, SLOT_COEF, 3, coef));
        CHECK_OK(tq_set_placement(where));
        sc->snap_next = 0;
        tq_status st = tq_blas_submit("test_blas_multi", TQ_OP_GCR_UPDATE, one, slots, f, sc, SLOT_SUM, NULL, 0);
        CHECK(st == TQ_SUCCESS, "%s: %s", what, tq_last_error());
        double res[TQ_NSCALARS] = {0};
        if (st == TQ_SUCCESS) CHECK_OK(tq_scalars_read_snapshot(sc, 0, res));
        const double ar = coef[0], ai = coef[1], sc2 = coef[2];
        double rr = 0.0;
        for (int i = 0; i < 4; i++) {
            for (size_t j = 0; j < n; j += 2) {
                double re, im;
                if (i < 2) {
                    re = sc2 * q[i][j]; im = sc2 * q[i][j + 1];
                } else {
                    const double sign = i == 2 ? 1.0 : -1.0;   /* x += a z, r -= a Az */
                    re = q[i][j] + sign * (ar * q[i - 2][j] - ai * q[i - 2][j + 1]);
                    im = q[i][j + 1] + sign * (ar * q[i - 2][j + 1] + ai * q[i - 2][j]);
                    if (i == 3) rr += re * re + im * im;
                }
                ref[j] = re;
                ref[j + 1] = im;
            }
            memset(out, 0, n * sizeof(double));
            CHECK_OK(tq_field_export(f[i], out));
            const double e = group_rel_err(out, ref, n, K->nreal < 24 ? K->nreal : 24);
            CHECK(e <= storage_tol(prec), "%s: operand %d: error %.3g of the site max (tol %.3g)", what, i, e,
                  storage_tol(prec));
        }
        /* half precision: a site's products are summed in float (kernels/blas_site.h) */
        const double rtol = prec == TQ_HALF ? 1e-6 : 1e-12;
        CHECK(fabs(res[0] - rr) <= rtol * rr, "%s: |r|^2 %.17g vs %.17g", what, res[0], rr);
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    }
    tq_scalars_destroy(sc);
    for (int i = 0; i < 4; i++) {
        tq_field_destroy(f[i]);
        free(q[i]);
    }
    free(out);
    free(ref);
}

int main(void)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 99;
    const int d[4] = {4, 4, 8, 8}, block[4] = {2, 2, 4, 4};
    shape S[2] = {{"even sites, one block", tq_test_lattice(d, d), TQ_EVEN, 0},
                  {"full field, 16 blocks", tq_test_lattice(d, block), TQ_FULL, 0}};
    if (!S[0].lat || !S[1].lat) return tq_test_finish("test_blas_multi");
    for (int l = 0; l < 2; l++) S[l].V = (int64_t)d[0] * d[1] * d[2] * d[3];
    const kind K[3] = {{"spinor", TQ_FIELD_SPINOR, 0, 24}, {"staggered", TQ_FIELD_STAGGERED, 0, 6},
                       {"coarse 48", TQ_FIELD_COARSE, 48, 96}};
    const tq_precision precs[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
    const tq_where wheres[2] = {TQ_WHERE_CPU, TQ_WHERE_CUDA};
    const int nwhere = info.ncuda_workers > 0 ? 2 : 1;
    if (nwhere == 1) printf("no CUDA worker: the CUDA cases are skipped (CPU workers only)\n");
    for (int w = 0; w < nwhere; w++)
        for (int l = 0; l < 2; l++)
            for (int k = 0; k < 3; k++)
                for (int p = 0; p < 3; p++)
                    for (int m = 2; m <= 4; m++)
                        for (int dot = 0; dot < 2; dot++) run_case(&S[l], &K[k], m, dot, precs[p], wheres[w]);
    for (int w = 0; w < nwhere; w++)
        for (int l = 0; l < 2; l++)
            for (int k = 0; k < 3; k++)
                for (int p = 0; p < 3; p++) run_update(&S[l], &K[k], precs[p], wheres[w]);

    /* fields of two lattices in one op are refused */
    tq_field *a = NULL, *b = NULL, *c = NULL;
    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_scalars *sc = NULL;
    CHECK_OK(tq_field_create(S[0].lat, &fp, &a));
    CHECK_OK(tq_field_create(S[1].lat, &fp, &b));
    CHECK_OK(tq_field_create(S[0].lat, &fp, &c));
    CHECK_OK(tq_scalars_create(&sc));
    if (a && b && c && sc) {
        tq_field *f[3] = {a, b, c};
        CHECK(tq_blas_submit("test_blas_multi", TQ_OP_MCDOT2, NULL, NULL, f, sc, 0, NULL, 0) != TQ_SUCCESS,
              "an op over two lattices is refused");
    }
    tq_scalars_destroy(sc);
    tq_field_destroy(a);
    tq_field_destroy(b);
    tq_field_destroy(c);
    for (int l = 0; l < 2; l++) tq_lattice_destroy(S[l].lat);
    tq_finalize();
    return tq_test_finish("test_blas_multi");
}
