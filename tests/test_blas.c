/* BLAS-1 and reductions against a plain-loop double-precision host reference
 * (tests/blas_reference.h): every tq_blas_* function, double/single/half, spinor and
 * staggered fields, full and single-parity subsets, two block decompositions; precision
 * conversion by tq_blas_copy; API misuse.
 *
 * How results are judged. The inputs are imported, then exported again: the reference
 * starts from what was actually stored (rounded to the field's precision) and computes in
 * double. A written operand is then compared component by component against the reference
 * relative to the largest |component| of that site ("site max"), because that is how the
 * storage rounds: single rounds each value to 2^-24 relative, half stores
 * round(v / norm * 32767) with norm = float(site max), so every component is within half a
 * quantum, 0.5 * site max / 32767, whatever its own size. On top of that the kernels and
 * the reference may round the double arithmetic differently (a few ulp of the terms).
 * Reductions accumulate in double from the stored inputs: they must match the reference
 * to 1e-12 of a scale that bounds the rounding (the norm itself; sum |x||y| for dots). */
#include "tq_test.h"
#include "../reference/blas_reference.h"

#include <stdint.h>

#define SENTINEL 12345.678

static const tq_precision precs[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};

static int prec_index(tq_precision p) { return p == TQ_DOUBLE ? 0 : p == TQ_SINGLE ? 1 : 2; }

#define REDUCE_TOL reduce_tol(prec)

typedef struct lat_setup {
    const char *name;
    tq_lattice *lat;
    int dims[4];
    int64_t V;
    unsigned char *in[3];     /* per tq_subset: site belongs to it */
} lat_setup;

static double worst_out[RO_NUM][3], worst_red[RO_NUM][3];
static double worst_copy[3][3];
static int ncases;

static const char *kind_str(tq_field_kind k) { return k == TQ_FIELD_SPINOR ? "spinor" : "staggered"; }
static const char *sub_str(tq_subset s) { return s == TQ_FULL ? "full" : s == TQ_EVEN ? "even" : "odd"; }

static double site_max(const double *h, int64_t s, int nreal)
{
    double m = 0.0;
    for (int k = 0; k < nreal; k++) m = fmax(m, fabs(h[s * nreal + k]));
    return m;
}

/* Largest component error of out vs ref over the subset's sites, in units of the allowed
 * error q * (site max of ref) + arith * (site max of the inputs); also checks that sites
 * outside the subset kept the SENTINEL the array was filled with before the export. */
static double compare_field(const ref_geom *g, const double *out, const double *ref,
                            double *const *inputs, int ninputs, double q, double arith,
                            int *sentinel_bad)
{
    double worst = 0.0;
    for (int64_t s = 0; s < g->nsites; s++) {
        if (!g->in[s]) {
            for (int k = 0; k < g->nreal; k++)
                if (out[s * g->nreal + k] != SENTINEL) { (*sentinel_bad)++; break; }
            continue;
        }
        double outmax = site_max(ref, s, g->nreal), inmax = outmax;
        for (int i = 0; i < ninputs; i++) inmax = fmax(inmax, site_max(inputs[i], s, g->nreal));
        double bound = q * outmax + arith * inmax;
        for (int k = 0; k < g->nreal; k++) {
            double err = fabs(out[s * g->nreal + k] - ref[s * g->nreal + k]);
            double r = bound > 0.0 ? err / bound : (err > 0.0 || err != err ? INFINITY : 0.0);
            if (!(r <= worst)) worst = r;   /* NaN propagates as failure */
        }
    }
    return worst;
}

static void fill(double *h, int64_t n, double v)
{
    for (int64_t i = 0; i < n; i++) h[i] = v;
}

/* One op on one configuration. */
static void run_case(const lat_setup *L, tq_field_kind kind, tq_subset sub, tq_precision prec,
                     int op, uint64_t seed)
{
    const int nreal = kind == TQ_FIELD_SPINOR ? 24 : 6;
    const int64_t n = L->V * nreal;
    const ref_opdef *d = &ref_ops[op];
    const int pi = prec_index(prec);
    const double q = quantum(prec);
    ref_geom g = {L->V, nreal, L->in[sub]};
    char what[200];
    snprintf(what, sizeof what, "%s on %s %s %s %s", d->name, L->name, kind_str(kind), sub_str(sub),
             tq_precision_name(prec));
    ncases++;

    tq_field *f[6] = {0};
    double *hin[6] = {0}, *hq[6] = {0}, *href[6] = {0}, *hout[6] = {0};
    tq_field_params fp = {kind, prec, sub, (tq_recon)0, 0};
    int ok = 1;
    for (int i = 0; i < d->nop; i++) {
        hin[i] = malloc((size_t)n * sizeof(double));
        hq[i] = malloc((size_t)n * sizeof(double));
        href[i] = malloc((size_t)n * sizeof(double));
        hout[i] = malloc((size_t)n * sizeof(double));
        if (!hin[i] || !hq[i] || !href[i] || !hout[i]) { fprintf(stderr, "out of memory\n"); exit(99); }
        tq_status st = tq_field_create(L->lat, &fp, &f[i]);
        CHECK(st == TQ_SUCCESS, "%s: create operand %d: %s", what, i, tq_last_error());
        if (st != TQ_SUCCESS) { ok = 0; break; }
        ref_fill_random(hin[i], L->V, nreal, seed, i);
        CHECK_OK(tq_field_import(f[i], hin[i]));
        fill(hq[i], n, SENTINEL);
        CHECK_OK(tq_field_export(f[i], hq[i]));
        /* the stored inputs: import/export round trip within the storage rounding */
        int bad = 0;
        double r = compare_field(&g, hq[i], hin[i], NULL, 0, q, arith_tol(TQ_DOUBLE), &bad);
        CHECK(r <= 1.0 && bad == 0, "%s: operand %d import/export: error %.3g of allowed, %d sites outside the subset written",
              what, i, r, bad);
        memcpy(href[i], hq[i], (size_t)n * sizeof(double));
    }
    if (ok) {
        double res[3] = {NAN, NAN, NAN}, rref[3] = {0, 0, 0}, rref2[3] = {0, 0, 0}, scale[3] = {0, 0, 0};
        tq_status st = ref_run_lib(op, f, res);
        CHECK(st == TQ_SUCCESS, "%s: returned %s: %s", what, tq_status_name(st), tq_last_error());
        ref_run_ref(op, &g, href, rref);
        ref_reduce_after(op, &g, href, rref2, scale);
        for (int i = 0; i < d->nop; i++) {
            fill(hout[i], n, SENTINEL);
            CHECK_OK(tq_field_export(f[i], hout[i]));
            if (d->wr >> i & 1u) {
                int bad = 0;
                double r = compare_field(&g, hout[i], href[i], hq, d->nop, q, arith_tol(prec), &bad);
                CHECK(r <= 1.0 && bad == 0, "%s: operand %d: max error %.3g of allowed, %d sites outside the subset written",
                      what, i, r, bad);
                if (!(r <= worst_out[op][pi])) worst_out[op][pi] = r;
            } else {
                CHECK(memcmp(hout[i], hq[i], (size_t)n * sizeof(double)) == 0,
                      "%s: operand %d is read-only but changed", what, i);
            }
        }
        for (int r = 0; r < d->nres; r++) {
            double err = fabs(res[r] - rref[r]);
            double ratio = scale[r] > 0 ? err / (REDUCE_TOL * scale[r]) : (err > 0 || err != err ? INFINITY : 0);
            if (!(ratio <= 1.0) && d->fused && prec != TQ_DOUBLE) {
                /* a fused reduction may also be of the written operand as stored */
                double alt[3], ascale[3];
                ref_reduce_after(op, &g, hout, alt, ascale);
                double e2 = fabs(res[r] - alt[r]);
                double r2 = ascale[r] > 0 ? e2 / (REDUCE_TOL * ascale[r]) : (e2 > 0 ? INFINITY : 0);
                if (r2 <= 1.0) ratio = r2;
            }
            CHECK(ratio <= 1.0, "%s: result %d = %.17g, reference %.17g (scale %.3g)", what, r, res[r], rref[r], scale[r]);
            if (!(ratio <= worst_red[op][pi])) worst_red[op][pi] = ratio;
        }
    }
    for (int i = 0; i < d->nop; i++) {
        tq_field_destroy(f[i]);
        free(hin[i]); free(hq[i]); free(href[i]); free(hout[i]);
    }
}

/* tq_blas_copy from precision ps to pd. */
static void run_copy(const lat_setup *L, tq_field_kind kind, tq_subset sub, tq_precision ps,
                     tq_precision pd, uint64_t seed)
{
    const int nreal = kind == TQ_FIELD_SPINOR ? 24 : 6;
    const int64_t n = L->V * nreal;
    ref_geom g = {L->V, nreal, L->in[sub]};
    char what[200];
    snprintf(what, sizeof what, "copy %s -> %s on %s %s %s", tq_precision_name(ps), tq_precision_name(pd),
             L->name, kind_str(kind), sub_str(sub));
    ncases++;
    tq_field_params fs = {kind, ps, sub, (tq_recon)0, 0}, fd = {kind, pd, sub, (tq_recon)0, 0};
    tq_field *src = NULL, *dst = NULL, *direct = NULL;
    double *hin = malloc((size_t)n * sizeof(double)), *hq = malloc((size_t)n * sizeof(double));
    double *hout = malloc((size_t)n * sizeof(double)), *hdir = malloc((size_t)n * sizeof(double));
    double *hsrc2 = malloc((size_t)n * sizeof(double));
    if (!hin || !hq || !hout || !hdir || !hsrc2) { fprintf(stderr, "out of memory\n"); exit(99); }
    CHECK_OK(tq_field_create(L->lat, &fs, &src));
    CHECK_OK(tq_field_create(L->lat, &fd, &dst));
    CHECK_OK(tq_field_create(L->lat, &fd, &direct));
    if (src && dst && direct) {
        ref_fill_random(hin, L->V, nreal, seed, 0);
        CHECK_OK(tq_field_import(src, hin));
        ref_fill_random(hout, L->V, nreal, seed, 1);
        CHECK_OK(tq_field_import(dst, hout));              /* something to overwrite */
        fill(hq, n, SENTINEL);
        CHECK_OK(tq_field_export(src, hq));
        CHECK_OK(tq_blas_copy(dst, src));
        fill(hout, n, SENTINEL);
        CHECK_OK(tq_field_export(dst, hout));
        fill(hsrc2, n, SENTINEL);
        CHECK_OK(tq_field_export(src, hsrc2));
        CHECK(memcmp(hsrc2, hq, (size_t)n * sizeof(double)) == 0, "%s: the source changed", what);
        int bad = 0;
        /* to the same or a wider precision the values are kept exactly */
        double qd = (pd == ps || pd == TQ_DOUBLE) ? 0.0 : quantum(pd);
        double r = compare_field(&g, hout, hq, NULL, 0, qd, arith_tol(TQ_DOUBLE), &bad);
        if (qd == 0.0) {
            /* exactly */
            int exact = 1;
            for (int64_t s = 0; s < L->V; s++)
                if (g.in[s] && memcmp(hout + s * nreal, hq + s * nreal, (size_t)nreal * sizeof(double))) exact = 0;
            r = exact ? 0.0 : INFINITY;
        }
        CHECK(r <= 1.0 && bad == 0, "%s: max error %.3g of allowed, %d sites outside the subset written", what, r, bad);
        int a = prec_index(ps), b = prec_index(pd);
        if (!(r <= worst_copy[a][b])) worst_copy[a][b] = r;
        /* converting in a kernel stores what importing the same values stores */
        CHECK_OK(tq_field_import(direct, hq));
        fill(hdir, n, SENTINEL);
        CHECK_OK(tq_field_export(direct, hdir));
        CHECK(memcmp(hdir, hout, (size_t)n * sizeof(double)) == 0,
              "%s: differs from importing the source's values into a %s field", what, tq_precision_name(pd));
    }
    tq_field_destroy(direct);
    tq_field_destroy(dst);
    tq_field_destroy(src);
    free(hin); free(hq); free(hout); free(hdir); free(hsrc2);
}

static int lat_setup_make(lat_setup *L, const char *name, const int dims[4], const int block[4])
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    if (block) memcpy(lp.block, block, sizeof lp.block);
    L->name = name;
    memcpy(L->dims, dims, sizeof L->dims);
    L->lat = NULL;
    tq_status st = tq_lattice_create(&lp, &L->lat);
    CHECK(st == TQ_SUCCESS, "lattice %s: %s", name, tq_last_error());
    if (st != TQ_SUCCESS) return -1;
    tq_lattice_info info;
    CHECK_OK(tq_lattice_get_info(L->lat, &info));
    printf("lattice %s: %dx%dx%dx%d, block %dx%dx%dx%d, %d blocks\n", name, dims[0], dims[1], dims[2], dims[3],
           info.block[0], info.block[1], info.block[2], info.block[3], info.nblocks);
    if (block) CHECK(info.nblocks == (dims[0] / block[0]) * (dims[1] / block[1]) * (dims[2] / block[2]) * (dims[3] / block[3]),
                     "lattice %s: %d blocks", name, info.nblocks);
    L->V = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    for (int sub = 0; sub < 3; sub++) {
        L->in[sub] = malloc((size_t)L->V);
        if (!L->in[sub]) exit(99);
    }
    for (int64_t s = 0; s < L->V; s++) {
        int64_t r = s;
        int par = 0;
        for (int mu = 0; mu < 4; mu++) { par += (int)(r % dims[mu]); r /= dims[mu]; }
        par &= 1;
        L->in[TQ_EVEN][s] = par == 0;
        L->in[TQ_ODD][s] = par == 1;
        L->in[TQ_FULL][s] = 1;
    }
    return 0;
}

static void lat_setup_free(lat_setup *L)
{
    tq_lattice_destroy(L->lat);
    for (int sub = 0; sub < 3; sub++) free(L->in[sub]);
}

/* A few identities that hold exactly or nearly so, and edge coefficients. */
static void test_identities(const lat_setup *L)
{
    const int64_t n = L->V * 24;
    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_field *x = NULL, *y = NULL;
    CHECK_OK(tq_field_create(L->lat, &fp, &x));
    CHECK_OK(tq_field_create(L->lat, &fp, &y));
    double *hx = malloc((size_t)n * sizeof(double)), *hy = malloc((size_t)n * sizeof(double));
    if (!x || !y || !hx || !hy) { free(hx); free(hy); return; }
    ref_fill_random(hx, L->V, 24, 99, 0);
    CHECK_OK(tq_field_import(x, hx));
    double n2 = -1, rd = -1;
    tq_complex z = {-1, -1};
    /* reading one field twice is allowed */
    CHECK_OK(tq_blas_norm2(x, &n2));
    CHECK_OK(tq_blas_rdot(x, x, &rd));
    CHECK_OK(tq_blas_cdot(x, x, &z));
    CHECK(n2 > 0, "norm2 %g", n2);
    CHECK_CLOSE(rd, n2, 1e-13, "rdot(x, x) vs norm2(x)");
    CHECK_CLOSE(z.re, n2, 1e-13, "cdot(x, x).re vs norm2(x)");
    CHECK(fabs(z.im) <= 1e-14 * n2, "cdot(x, x).im = %g", z.im);
    /* y = 1 x + 0 y is x exactly */
    ref_fill_random(hy, L->V, 24, 98, 1);
    CHECK_OK(tq_field_import(y, hy));
    CHECK_OK(tq_blas_axpby(1.0, x, 0.0, y));
    CHECK_OK(tq_field_export(y, hy));
    CHECK(memcmp(hx, hy, (size_t)n * sizeof(double)) == 0, "axpby(1, x, 0, y) != x");
    /* x - x = 0 exactly */
    CHECK_OK(tq_blas_axpy(-1.0, x, y));
    CHECK_OK(tq_blas_norm2(y, &n2));
    CHECK(n2 == 0.0, "|x - x|^2 = %g", n2);
    /* scale by 0 in half precision (all-zero sites: norm 0) */
    tq_field_params hp = {TQ_FIELD_STAGGERED, TQ_HALF, TQ_ODD, (tq_recon)0, 0};
    tq_field *h = NULL;
    CHECK_OK(tq_field_create(L->lat, &hp, &h));
    if (h) {
        CHECK_OK(tq_field_import(h, hx));
        CHECK_OK(tq_blas_scale(0.0, h));
        CHECK_OK(tq_blas_norm2(h, &n2));
        CHECK(n2 == 0.0, "half: |0 x|^2 = %g", n2);
        CHECK_OK(tq_field_export(h, hy));
        int nz = 0;
        for (int64_t i = 0; i < L->V * 6; i++) nz += L->in[TQ_ODD][i / 6] && hy[i] != 0.0;
        CHECK(nz == 0, "half: 0 x has %d nonzero components", nz);
        tq_field_destroy(h);
    }
    tq_field_destroy(y);
    tq_field_destroy(x);
    free(hx); free(hy);
}

/* Misuse: mismatched operands, NULLs, wrong kinds, aliasing of written operands. */
static void test_misuse(const lat_setup *L, const lat_setup *L2)
{
    tq_field_params ps = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_field *a = NULL, *b = NULL, *c = NULL, *d = NULL, *stag = NULL, *sgl = NULL, *even = NULL, *odd = NULL;
    tq_field *other = NULL, *gauge = NULL, *clover = NULL, *even_s = NULL;
    CHECK_OK(tq_field_create(L->lat, &ps, &a));
    CHECK_OK(tq_field_create(L->lat, &ps, &b));
    CHECK_OK(tq_field_create(L->lat, &ps, &c));
    CHECK_OK(tq_field_create(L->lat, &ps, &d));
    CHECK_OK(tq_field_create(L2->lat, &ps, &other));
    tq_field_params p2 = ps;
    p2.kind = TQ_FIELD_STAGGERED;
    CHECK_OK(tq_field_create(L->lat, &p2, &stag));
    p2 = ps; p2.prec = TQ_SINGLE;
    CHECK_OK(tq_field_create(L->lat, &p2, &sgl));
    p2 = ps; p2.subset = TQ_EVEN;
    CHECK_OK(tq_field_create(L->lat, &p2, &even));
    p2.prec = TQ_SINGLE;
    CHECK_OK(tq_field_create(L->lat, &p2, &even_s));
    p2 = ps; p2.subset = TQ_ODD;
    CHECK_OK(tq_field_create(L->lat, &p2, &odd));
    p2 = ps; p2.kind = TQ_FIELD_GAUGE;
    CHECK_OK(tq_field_create(L->lat, &p2, &gauge));
    p2 = ps; p2.kind = TQ_FIELD_CLOVER;
    CHECK_OK(tq_field_create(L->lat, &p2, &clover));
    if (!a || !b || !c || !d || !stag || !sgl || !even || !odd || !other || !gauge || !clover || !even_s) return;

    const int64_t n = L->V * 24;
    double *h0 = malloc((size_t)n * sizeof(double)), *h1 = malloc((size_t)n * sizeof(double));
    if (!h0 || !h1) exit(99);
    ref_fill_random(h0, L->V, 24, 7, 0);
    CHECK_OK(tq_field_import(a, h0));
    CHECK_OK(tq_field_import(b, h0));
    CHECK_OK(tq_field_import(c, h0));
    CHECK_OK(tq_field_import(d, h0));

    double r = 0;
    tq_complex z = {0, 0}, one = {1, 0};
    /* kinds, precisions, subsets, lattices */
    CHECK_ERR(tq_blas_axpy(1.0, a, stag), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_axpy(1.0, stag, a), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_axpy(1.0, a, sgl), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_rdot(sgl, a, &r), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_cdot(a, even, &z), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_axpy(1.0, even, odd), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_axpy(1.0, a, other), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_copy(stag, a), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_copy(even, a), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_copy(even_s, a), TQ_ERR_MISMATCH);       /* converts precision, not subset */
    CHECK_ERR(tq_blas_copy(other, a), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_cg_update(1.0, a, b, c, sgl, &r), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, a, b, c, d, even, sgl, &r, &z), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_bicgstab_direction(one, one, a, stag, b), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_blas_cdot_norm2(a, sgl, &z, &r), TQ_ERR_MISMATCH);
    /* a rejected call leaves its output alone */
    CHECK_OK(tq_field_export(a, h1));
    CHECK(memcmp(h0, h1, (size_t)n * sizeof(double)) == 0, "a rejected call changed a field");
    /* a coarse field of 12 complex per site is a spinor field site for site (multigrid's
     * fine level): copies both ways keep the host values; 24 complex per site do not match */
    {
        tq_field *c12 = NULL, *c24 = NULL;
        const tq_field_params p12 = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 12};
        const tq_field_params p24 = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 24};
        CHECK_OK(tq_field_create(L->lat, &p12, &c12));
        CHECK_OK(tq_field_create(L->lat, &p24, &c24));
        if (c12 && c24 && ps.prec == TQ_DOUBLE && ps.subset == TQ_FULL) {
            CHECK_OK(tq_blas_copy(c12, a));
            CHECK_OK(tq_field_export(c12, h1));
            CHECK(memcmp(h0, h1, (size_t)n * sizeof(double)) == 0, "spinor -> coarse 12: host values differ");
            CHECK_OK(tq_blas_zero(d));
            CHECK_OK(tq_blas_copy(d, c12));
            CHECK_OK(tq_field_export(d, h1));
            CHECK(memcmp(h0, h1, (size_t)n * sizeof(double)) == 0, "coarse 12 -> spinor: host values differ");
            CHECK_ERR(tq_blas_copy(c24, a), TQ_ERR_MISMATCH);
            CHECK_ERR(tq_blas_axpy(1.0, c24, a), TQ_ERR_MISMATCH);
        }
        tq_field_destroy(c12);
        tq_field_destroy(c24);
    }

    /* NULLs */
    CHECK_ERR(tq_blas_zero(NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_copy(NULL, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_copy(a, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_scale(2.0, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy(1.0, NULL, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy(1.0, a, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_xpay(a, 1.0, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpby(1.0, NULL, 1.0, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_caxpy(one, a, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_caxpby(one, NULL, one, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_norm2(NULL, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_norm2(a, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_rdot(a, NULL, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_rdot(a, b, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cdot(NULL, b, &z), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cdot(a, b, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy_norm2(1.0, a, b, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy_norm2(1.0, a, NULL, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_update(1.0, a, b, c, d, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_update(1.0, a, b, NULL, d, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_direction(1.0, NULL, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, a, b, c, d, even, odd, NULL, &z), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, a, b, c, d, even, odd, &r, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, a, b, NULL, d, c, b, &r, &z), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_direction(one, one, a, b, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cdot_norm2(a, b, NULL, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cdot_norm2(a, b, &z, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cdot_norm2(NULL, b, &z, &r), TQ_ERR_INVALID_ARG);

    /* gauge and clover fields are not BLAS operands, in any position */
    CHECK_ERR(tq_blas_zero(gauge), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_norm2(gauge, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy(1.0, a, gauge), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy(1.0, gauge, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_copy(gauge, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_copy(a, gauge), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_scale(1.0, clover), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cdot(clover, clover, &z), TQ_ERR_INVALID_ARG);

    /* a written operand may not alias another operand */
    CHECK_ERR(tq_blas_axpy(1.0, a, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_xpay(a, 1.0, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpby(1.0, a, 2.0, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_caxpy(one, a, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_caxpby(one, a, one, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_copy(a, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_axpy_norm2(1.0, a, a, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_update(1.0, a, b, c, c, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_update(1.0, a, b, a, d, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_update(1.0, a, b, c, b, &r), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_cg_direction(1.0, a, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, a, b, c, d, a, b, &r, &z), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, a, b, c, d, b, c, &r, &z), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_direction(one, one, a, b, a), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_blas_bicgstab_direction(one, one, a, b, b), TQ_ERR_INVALID_ARG);
    /* read-only operands may alias each other */
    CHECK_OK(tq_blas_cg_update(0.5, a, a, c, d, &r));
    CHECK_OK(tq_blas_cdot_norm2(a, a, &z, &r));
    /* the rejected aliased calls did not touch a */
    CHECK_OK(tq_field_export(a, h1));
    CHECK(memcmp(h0, h1, (size_t)n * sizeof(double)) == 0, "a rejected aliased call changed a field");

    free(h0); free(h1);
    tq_field_destroy(clover); tq_field_destroy(gauge); tq_field_destroy(odd); tq_field_destroy(even_s);
    tq_field_destroy(even); tq_field_destroy(sgl); tq_field_destroy(stag); tq_field_destroy(other);
    tq_field_destroy(d); tq_field_destroy(c); tq_field_destroy(b); tq_field_destroy(a);
}

/* Calls that need tq_init. The fields are not dereferenced: the check comes first. */
static void test_not_initialized(const char *when)
{
    double r;
    tq_complex z, one = {1, 0};
    tq_status st = tq_blas_zero(NULL);
    CHECK(st == TQ_ERR_NOT_INITIALIZED, "%s: tq_blas_zero returned %s", when, tq_status_name(st));
    CHECK_ERR(tq_blas_copy(NULL, NULL), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_scale(1.0, NULL), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_axpy(1.0, NULL, NULL), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_caxpby(one, NULL, one, NULL), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_norm2(NULL, &r), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_cdot(NULL, NULL, &z), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_cg_update(1.0, NULL, NULL, NULL, NULL, &r), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_bicgstab_update(one, one, NULL, NULL, NULL, NULL, NULL, NULL, &r, &z), TQ_ERR_NOT_INITIALIZED);
    CHECK_ERR(tq_blas_cdot_norm2(NULL, NULL, &z, &r), TQ_ERR_NOT_INITIALIZED);
}

int main(void)
{
    test_not_initialized("before tq_init");

    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 99;
    /* CPU workers only: the CUDA codelets are test_blas_cuda's (on a GPU machine a copy run on
     * the GPU may round a half value the other way than the host import; that test allows it) */
    CHECK_OK(tq_set_placement(TQ_WHERE_CPU));

    const int dims[4] = {4, 4, 4, 8}, block[4] = {2, 2, 4, 4};
    lat_setup L[2];
    if (lat_setup_make(&L[0], "default-blocks", dims, NULL) || lat_setup_make(&L[1], "blocks-2x2x4x4", dims, block))
        return tq_test_finish("test_blas");

    uint64_t seed = 1;
    for (int l = 0; l < 2; l++)
        for (int k = 0; k < 2; k++) {
            tq_field_kind kind = k ? TQ_FIELD_STAGGERED : TQ_FIELD_SPINOR;
            for (int sub = 0; sub < 3; sub++) {
                tq_subset s = sub == 0 ? TQ_FULL : sub == 1 ? TQ_EVEN : TQ_ODD;
                for (int p = 0; p < 3; p++) {
                    for (int op = 0; op < RO_NUM; op++) run_case(&L[l], kind, s, precs[p], op, seed++);
                    for (int p2 = 0; p2 < 3; p2++) run_copy(&L[l], kind, s, precs[p], precs[p2], seed++);
                }
            }
        }

    printf("%-20s %-26s %-26s\n", "op", "fields: max err / allowed", "reductions: max err / allowed");
    printf("%-20s %8s %8s %8s  %8s %8s %8s\n", "", "double", "single", "half", "double", "single", "half");
    for (int op = 0; op < RO_NUM; op++) {
        printf("%-20s", ref_ops[op].name);
        for (int p = 0; p < 3; p++)
            if (ref_ops[op].wr) printf(" %8.3g", worst_out[op][p]); else printf(" %8s", "-");
        printf(" ");
        for (int p = 0; p < 3; p++)
            if (ref_ops[op].nres) printf(" %8.3g", worst_red[op][p]); else printf(" %8s", "-");
        printf("\n");
    }
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            printf("copy %-6s -> %-6s max err / allowed %.3g\n", tq_precision_name(precs[a]), tq_precision_name(precs[b]),
                   worst_copy[a][b]);
    printf("%d cases\n", ncases);

    test_identities(&L[1]);
    test_misuse(&L[1], &L[0]);

    lat_setup_free(&L[1]);
    lat_setup_free(&L[0]);
    CHECK_OK(tq_finalize());
    test_not_initialized("after tq_finalize");
    return tq_test_finish("test_blas");
}
