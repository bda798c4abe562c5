/* The multigrid transfer of the library (src/solvers/mg_transfer.c, codelets/mg_transfer.c)
 * against the plain-loop reference (reference/mg_reference.h): the block-orthonormalised
 * basis, R v and P c in double (1e-13) and single storage, R P = 1, bitwise the same on
 * several block decompositions, a coarse level as the fine one (vectors of 12 and 24
 * complex per site), and clear errors for bad transfers and fields.
 * test_mg_transfer_cuda (this file with TQ_TEST_CUDA): the same with R and P on a GPU (the
 * blocks' owner; the basis is made on CPU workers), and also 4^4 aggregates, the fine level's
 * in the benchmarks (a thread block of 256 fine sites per aggregate on the GPU). */
#include "tq_test.h"
#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_mg_transfer_cuda"
#else
#define TEST_NAME "test_mg_transfer"
#endif
#include "solvers/mg_internal.h"
#include "mg_test.h"

static double max_diff(const double *a, const double *b, int64_t n, double *scale)
{
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
    if (scale) *scale = s;
    return d;
}

/* A fine-level vector field: spinor for ndof 12 (the Wilson level), coarse kind otherwise. */
static tq_field *fine_field(tq_lattice *lat, int ndof, tq_precision prec, int as_coarse)
{
    tq_field_params fp = {as_coarse ? TQ_FIELD_COARSE : TQ_FIELD_SPINOR, prec, TQ_FULL, (tq_recon)0, as_coarse ? ndof : 0};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &f));
    return f;
}

typedef struct {
    double *basis_host;                 /* [site][k * ndof + d][2], the library's basis */
    double *restricted, *prolonged;     /* R v and P c, host order */
    double *rp;                         /* R P c */
} results;

static void results_free(results *r)
{
    free(r->basis_host);
    free(r->restricted);
    free(r->prolonged);
    free(r->rp);
}

/* One transfer on `block`: basis from vecs, R v, P c, R P c, compared with the reference
 * (ref, built from the same vectors) when prec is double; returns the exports. */
static int run_case(const char *what, const int dims[4], const int block[4], const int agg[4], int ndof, int nvec,
                    int as_coarse, tq_precision prec, const double *vecs, const double *v, const double *c,
                    const mgref_transfer *ref, results *out)
{
    memset(out, 0, sizeof *out);
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) return -1;
    const int64_t nf = ref->nfine, nc = ref->ncoarse;
    tq_mg_transfer *t = NULL;
    CHECK_OK(tq_mg_transfer_create("test", lat, ndof, agg, nvec, prec, &t));
    tq_field **fv = calloc((size_t)nvec, sizeof *fv);
    tq_field *fin = fine_field(lat, ndof, prec, as_coarse), *fout = fine_field(lat, ndof, prec, as_coarse);
    tq_field *cin = NULL, *cout = NULL;
    if (t) {
        tq_field_params cp = tq_mg_coarse_params(t, prec);
        CHECK_OK(tq_field_create(t->coarse, &cp, &cin));
        CHECK_OK(tq_field_create(t->coarse, &cp, &cout));
    }
    int ok = t && fv && fin && fout && cin && cout;
    for (int k = 0; ok && k < nvec; k++) {
        fv[k] = fine_field(lat, ndof, TQ_DOUBLE, as_coarse);
        ok = fv[k] != NULL;
        if (ok) CHECK_OK(tq_field_import(fv[k], vecs + (int64_t)k * nf * ndof * 2));
    }
    if (ok) {
        out->basis_host = malloc(sizeof(double) * (size_t)(nf * ndof * nvec * 2));
        out->restricted = malloc(sizeof(double) * (size_t)(nc * 2 * nvec * 2));
        out->rp = malloc(sizeof(double) * (size_t)(nc * 2 * nvec * 2));
        out->prolonged = malloc(sizeof(double) * (size_t)(nf * ndof * 2));
        CHECK_OK(tq_mg_transfer_set_basis(t, fv));
        CHECK_OK(tq_field_export(t->basis, out->basis_host));
        CHECK_OK(tq_field_import(fin, v));
        CHECK_OK(tq_mg_restrict(t, fin, cout));
        CHECK_OK(tq_field_export(cout, out->restricted));
        CHECK_OK(tq_field_import(cin, c));
        CHECK_OK(tq_mg_prolong(t, cin, fout));
        CHECK_OK(tq_field_export(fout, out->prolonged));
        CHECK_OK(tq_mg_restrict(t, fout, cout));
        CHECK_OK(tq_field_export(cout, out->rp));

        /* the reference: basis [k][site][d] against the library's [site][k][d] */
        double worst_b = 0;
        for (int k = 0; k < nvec; k++)
            for (int64_t s = 0; s < nf; s++)
                for (int d = 0; d < ndof; d++)
                    for (int ri = 0; ri < 2; ri++)
                        worst_b = fmax(worst_b, fabs(out->basis_host[((s * nvec + k) * ndof + d) * 2 + ri] -
                                                     ref->basis[(((int64_t)k * nf + s) * ndof + d) * 2 + ri]));
        double *want_r = malloc(sizeof(double) * (size_t)(nc * 2 * nvec * 2));
        double *want_p = malloc(sizeof(double) * (size_t)(nf * ndof * 2));
        mgref_restrict(want_r, ref, v);
        mgref_prolong(want_p, ref, c);
        double sr, sp, sc;
        const double er = max_diff(out->restricted, want_r, nc * 2 * nvec * 2, &sr);
        const double ep = max_diff(out->prolonged, want_p, nf * ndof * 2, &sp);
        const double erp = max_diff(out->rp, c, nc * 2 * nvec * 2, &sc);
        const double tol = prec == TQ_DOUBLE ? 1e-13 : 2e-6;
        CHECK(worst_b <= tol, "%s: basis differs from the reference's by %.3g", what, worst_b);
        CHECK(er <= tol * sr, "%s: R v differs from the reference's by %.3g (scale %.3g)", what, er, sr);
        CHECK(ep <= tol * sp, "%s: P c differs from the reference's by %.3g (scale %.3g)", what, ep, sp);
        /* single storage rounds P c before R reads it */
        CHECK(erp <= (prec == TQ_DOUBLE ? 1e-13 : 1e-5) * sc, "%s: R P c differs from c by %.3g", what, erp);
        printf("  %-44s basis %.2g, R v %.2g, P c %.2g, R P c - c %.2g\n", what, worst_b, er / sr, ep / sp, erp / sc);
        free(want_r);
        free(want_p);
    }
    for (int k = 0; fv && k < nvec; k++) tq_field_destroy(fv[k]);
    free(fv);
    tq_field_destroy(fin);
    tq_field_destroy(fout);
    tq_field_destroy(cin);
    tq_field_destroy(cout);
    tq_mg_transfer_destroy(t);
    tq_lattice_destroy(lat);
    return ok ? 0 : -1;
}

/* A geometry: random null vectors, v and c; every block decomposition in blocks[] (the
 * first is the reference for bitwise comparisons), double and single. */
static void check_geometry(const char *name, const int dims[4], const int agg[4], int ndof, int nvec, int as_coarse,
                           const int blocks[][4], int nblocks)
{
    const int64_t nf = ref_volume(dims);
    int coarse[4];
    for (int mu = 0; mu < 4; mu++) coarse[mu] = dims[mu] / agg[mu];
    const int64_t nc = ref_volume(coarse);
    double *vecs = malloc(sizeof(double) * (size_t)(nf * ndof * 2 * nvec));
    double *v = malloc(sizeof(double) * (size_t)(nf * ndof * 2)), *c = malloc(sizeof(double) * (size_t)(nc * 2 * nvec * 2));
    for (int64_t i = 0; i < nf * ndof * 2 * nvec; i++) vecs[i] = urand();
    for (int64_t i = 0; i < nf * ndof * 2; i++) v[i] = urand();
    for (int64_t i = 0; i < nc * 2 * nvec * 2; i++) c[i] = urand();
    mgref_transfer ref;
    CHECK(mgref_transfer_make(&ref, dims, agg, ndof, nvec, vecs) == 0, "%s: reference basis", name);
    results first;
    char what[160];
    for (int b = 0; b < nblocks; b++) {
        results r;
        snprintf(what, sizeof what, "%s, blocks %dx%dx%dx%d", name, blocks[b][0], blocks[b][1], blocks[b][2], blocks[b][3]);
        if (run_case(what, dims, blocks[b], agg, ndof, nvec, as_coarse, TQ_DOUBLE, vecs, v, c, &ref, &r)) {
            results_free(&r);
            continue;
        }
        if (b == 0) { first = r; continue; }
        /* an aggregate never straddles a block, and its sums go in one order */
        CHECK(!memcmp(r.basis_host, first.basis_host, sizeof(double) * (size_t)(nf * ndof * nvec * 2)) &&
              !memcmp(r.restricted, first.restricted, sizeof(double) * (size_t)(nc * 2 * nvec * 2)) &&
              !memcmp(r.prolonged, first.prolonged, sizeof(double) * (size_t)(nf * ndof * 2)),
              "%s: not bitwise the same as blocks %dx%dx%dx%d", what, blocks[0][0], blocks[0][1], blocks[0][2], blocks[0][3]);
        results_free(&r);
    }
    if (nblocks > 0) results_free(&first);
    results r;
    snprintf(what, sizeof what, "%s, single storage", name);
    run_case(what, dims, blocks[nblocks - 1], agg, ndof, nvec, as_coarse, TQ_SINGLE, vecs, v, c, &ref, &r);
    results_free(&r);
    mgref_transfer_free(&ref);
    free(vecs);
    free(v);
    free(c);
}

static void check_errors(void)
{
    const int dims[4] = {8, 8, 8, 8}, block[4] = {8, 8, 4, 4};
    tq_lattice *lat = tq_test_lattice(dims, block), *other = tq_test_lattice(dims, NULL);
    if (!lat || !other) return;
    tq_mg_transfer *t = NULL;
    const int a2[4] = {2, 2, 2, 2}, a3[4] = {2, 2, 3, 2}, a4[4] = {4, 4, 4, 4};
    CHECK_ERR(tq_mg_transfer_create("test", lat, 12, a2, 5, TQ_DOUBLE, &t), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_mg_transfer_create("test", lat, 12, a2, 0, TQ_DOUBLE, &t), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_mg_transfer_create("test", lat, 10, a2, 6, TQ_DOUBLE, &t), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_mg_transfer_create("test", lat, 12, a3, 6, TQ_DOUBLE, &t), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "does not divide") != NULL, "aggregate 3: '%s'", tq_last_error());
    CHECK_ERR(tq_mg_transfer_create("test", lat, 12, a4, 6, TQ_DOUBLE, &t), TQ_ERR_INVALID_ARG);   /* coarse blocks 2x2x1x1 */
    CHECK(strstr(tq_last_error(), "odd") != NULL, "odd coarse block: '%s'", tq_last_error());
    CHECK(t == NULL, "a refused transfer was returned");
    const int a1[4] = {1, 1, 2, 2};
    CHECK_ERR(tq_mg_transfer_create("test", lat, 12, a1, 30, TQ_DOUBLE, &t), TQ_ERR_INVALID_ARG);   /* 4 x 6 dof < 30 */

    CHECK_OK(tq_mg_transfer_create("test", lat, 12, a2, 6, TQ_DOUBLE, &t));
    if (t) {
        tq_field *good = fine_field(lat, 12, TQ_DOUBLE, 0), *elsewhere = fine_field(other, 12, TQ_DOUBLE, 0);
        tq_field *wide = fine_field(lat, 24, TQ_DOUBLE, 1), *c = NULL, *c24 = NULL;
        tq_field_params cp = tq_mg_coarse_params(t, TQ_DOUBLE);
        CHECK_OK(tq_field_create(t->coarse, &cp, &c));
        cp.ndof = 24;
        CHECK_OK(tq_field_create(t->coarse, &cp, &c24));
        CHECK_ERR(tq_mg_restrict(t, elsewhere, c), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_restrict(t, wide, c), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_restrict(t, good, c24), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_prolong(t, c24, good), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_prolong(t, c, NULL), TQ_ERR_INVALID_ARG);
        /* dependent null vectors: vector 3 = 2 x vector 1 */
        tq_field *vecs[6];
        const int64_t vol = 8 * 8 * 8 * 8;
        double *h = malloc(sizeof(double) * (size_t)(vol * 24));
        double *h1 = malloc(sizeof(double) * (size_t)(vol * 24));
        for (int k = 0; k < 6; k++) {
            vecs[k] = fine_field(lat, 12, TQ_DOUBLE, 0);
            for (int64_t i = 0; i < vol * 24; i++) h[i] = urand();
            if (k == 1) memcpy(h1, h, sizeof(double) * (size_t)(vol * 24));
            if (k == 3)
                for (int64_t i = 0; i < vol * 24; i++) h[i] = 2 * h1[i];
            if (vecs[k]) CHECK_OK(tq_field_import(vecs[k], h));
        }
        CHECK_ERR(tq_mg_transfer_set_basis(t, vecs), TQ_ERR_BREAKDOWN);
        CHECK(strstr(tq_last_error(), "dependent") != NULL, "dependent vectors: '%s'", tq_last_error());
        printf("  dependent vectors: %s\n", tq_last_error());
        for (int k = 0; k < 6; k++) tq_field_destroy(vecs[k]);
        free(h);
        free(h1);
        tq_field_destroy(good);
        tq_field_destroy(elsewhere);
        tq_field_destroy(wide);
        tq_field_destroy(c);
        tq_field_destroy(c24);
        tq_mg_transfer_destroy(t);
    }
    tq_lattice_destroy(other);
    tq_lattice_destroy(lat);
}

int main(void)
{
    mg_rng_state = 0x2545f4914f6cdd1dull;
#ifdef TQ_TEST_CUDA
    const int init = tq_test_init_gpus(TEST_NAME, 2);
    if (init) return init < 0 ? 1 : init;
#else
    if (tq_test_init_cpus(2)) return 1;
#endif

    /* the Wilson level: spinors, aggregates 2^4, one block and four */
    const int d8[4] = {8, 8, 8, 8}, agg2[4] = {2, 2, 2, 2};
    const int b8[2][4] = {{8, 8, 8, 8}, {8, 8, 4, 4}};
    check_geometry("spinor 8^4, agg 2^4, nvec 6", d8, agg2, 12, 6, 0, b8, 2);
    /* unequal extents and aggregates (x/y/z/t mix-ups), nvec 12 */
    const int d6[4] = {8, 4, 4, 8}, agg6[4] = {4, 2, 2, 1};
    const int b6[2][4] = {{8, 4, 4, 8}, {8, 4, 4, 2}};
    check_geometry("spinor 8x4x4x8, agg 4x2x2x1, nvec 12", d6, agg6, 12, 12, 0, b6, 2);
    /* a coarse level as the fine one: 12 and 24 complex per site (one and two rows) */
    check_geometry("coarse ndof 12 8^4, agg 2^4, nvec 6", d8, agg2, 12, 6, 1, b8, 2);
    const int d4[4] = {4, 4, 4, 8}, b4[1][4] = {{4, 4, 4, 4}};
    check_geometry("coarse ndof 24 4x4x4x8, agg 2^4, nvec 12", d4, agg2, 24, 12, 1, b4, 1);
#ifdef TQ_TEST_CUDA
    /* aggregates 4^4 (a full thread block per aggregate on the GPU), one block and two */
    const int d16[4] = {16, 8, 8, 8}, agg4[4] = {4, 4, 4, 4};
    const int b16[2][4] = {{16, 8, 8, 8}, {8, 8, 8, 8}};
    check_geometry("spinor 16x8x8x8, agg 4^4, nvec 12", d16, agg4, 12, 12, 0, b16, 2);
    check_geometry("coarse ndof 24 16x8x8x8, agg 4^4, nvec 6", d16, agg4, 24, 6, 1, b16, 2);
#endif
    printf("errors:\n");
    check_errors();
    tq_finalize();
    return tq_test_finish(TEST_NAME);
}
