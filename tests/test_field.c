/* Fields: import/export round trips for every kind, precision, subset and several block
 * decompositions; byte counts; the memory layout of codelets/kernels/field_layout.h as
 * actually found in the StarPU buffers; parameter errors. */
#define _POSIX_C_SOURCE 200809L
#include "tq_test.h"
#include "core/field_internal.h"   /* struct tq_field, tq_lattice_locate: the layout check */
#include "kernels/field_layout.h"
#include "kernels/philox.h"            /* the random field's definition, recomputed here */

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int verbose;

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double urand(void)   /* uniform in [0, 1) (splitmix64) */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-53;
}

#define SENTINEL (-12345.678)

static int site_parity(const int dims[4], int64_t s)
{
    int sum = 0;
    for (int mu = 0; mu < 4; mu++) { sum += (int)(s % dims[mu]); s /= dims[mu]; }
    return sum & 1;
}

static const char *kind_str(tq_field_kind k)
{
    return k == TQ_FIELD_SPINOR ? "spinor" : k == TQ_FIELD_STAGGERED ? "staggered" :
           k == TQ_FIELD_CLOVER ? "clover" : k == TQ_FIELD_COARSE ? "coarse" : "gauge";
}

static const char *subset_str(tq_subset s)
{
    return s == TQ_EVEN ? "even" : s == TQ_ODD ? "odd" : "full";
}

/* Round trip of a spinor/staggered/clover/coarse field (ndof: coarse only). */
static void check_vector_roundtrip(tq_lattice *lat, tq_field_kind kind, tq_precision prec, tq_subset subset, int ndof)
{
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    char what[160];
    snprintf(what, sizeof what, "%s%.0d %s %s %dx%dx%dx%d/%dx%dx%dx%d", kind_str(kind), ndof, tq_precision_name(prec),
             subset_str(subset), li.dims[0], li.dims[1], li.dims[2], li.dims[3], li.block[0], li.block[1],
             li.block[2], li.block[3]);
    int nreal = kind == TQ_FIELD_SPINOR ? 24 : kind == TQ_FIELD_STAGGERED ? 6 : kind == TQ_FIELD_COARSE ? 2 * ndof : 72;
    tq_field_params fp = {kind, prec, subset, 0, ndof};
    tq_field *f = NULL;
    tq_status s = tq_field_create(lat, &fp, &f);
    CHECK(s == TQ_SUCCESS, "%s: create: %s", what, tq_last_error());
    if (!f) return;

    tq_field_params got;
    CHECK_OK(tq_field_get_params(f, &got));
    CHECK(got.kind == kind && got.prec == prec && got.subset == subset && got.recon == 0 && got.ndof == ndof,
          "%s: params %d %d %d %d", what, got.kind, got.prec, got.subset, got.recon);
    CHECK(tq_field_reals_per_site(f) == nreal, "%s: %d reals per site", what, tq_field_reals_per_site(f));
    int64_t sites = subset == TQ_FULL ? li.local_volume : li.local_volume / 2;
    /* half precision: a norm per site, per row of 24 reals on coarse fields */
    const int norms = kind == TQ_FIELD_COARSE ? ndof / 12 : 1;
    size_t expect_bytes = (size_t)sites * (size_t)(nreal * (int)prec + (prec == TQ_HALF ? 4 * norms : 0));
    CHECK(tq_field_bytes(f) == expect_bytes, "%s: %zu bytes (expected %zu)", what, tq_field_bytes(f), expect_bytes);

    int64_t vol = li.local_volume;
    size_t n = (size_t)vol * nreal;
    double *in = malloc(n * sizeof *in), *out = malloc(n * sizeof *out), *smax = malloc((size_t)vol * sizeof *smax);
    for (int64_t x = 0; x < vol; x++) {
        /* magnitudes varying over six decades from site to site (half precision's norm) */
        double scale = pow(10.0, 6.0 * urand() - 3.0);
        smax[x] = 0;
        for (int k = 0; k < nreal; k++) {
            in[x * nreal + k] = scale * (2.0 * urand() - 1.0);
            smax[x] = fmax(smax[x], fabs(in[x * nreal + k]));
        }
    }
    /* one all-zero site (half: zero norm) */
    memset(in, 0, nreal * sizeof *in);
    memset(in + (vol - 1) * nreal, 0, nreal * sizeof *in);
    smax[0] = smax[vol - 1] = 0;
    for (size_t i = 0; i < n; i++) out[i] = SENTINEL;

    CHECK_OK(tq_field_import(f, in));
    CHECK_OK(tq_field_export(f, out));

    double worst = 0;   /* relative to the site's largest component */
    int bad_other = 0, bad_value = 0;
    for (int64_t x = 0; x < vol; x++) {
        int par = site_parity(li.dims, x);
        int held = subset == TQ_FULL || (int)subset == par;
        const double *a = in + x * nreal, *b = out + x * nreal;
        if (!held) {
            for (int k = 0; k < nreal; k++)
                if (memcmp(&b[k], &(double){SENTINEL}, sizeof(double))) bad_other++;
            continue;
        }
        if (prec == TQ_DOUBLE) {
            if (memcmp(a, b, nreal * sizeof *a)) bad_value++;
            continue;
        }
        for (int k = 0; k < nreal; k++) {
            double d = fabs(a[k] - b[k]);
            if (smax[x] == 0) { if (b[k] != 0) bad_value++; continue; }
            if (!(d <= smax[x])) bad_value++;   /* NaN or nonsense */
            worst = fmax(worst, d / smax[x]);
        }
    }
    CHECK(bad_other == 0, "%s: %d host entries of the other parity were overwritten", what, bad_other);
    CHECK(bad_value == 0, "%s: %d sites/values wrong", what, bad_value);
    if (prec == TQ_SINGLE) {
        CHECK(worst <= 1e-7, "%s: relative error %.3g > 1e-7", what, worst);
        CHECK(worst > 0, "%s: single precision round trip was exact (stored as double?)", what);
    } else if (prec == TQ_HALF) {
        CHECK(worst <= 0x1p-15, "%s: relative error %.3g > 2^-15", what, worst);
        CHECK(worst > 1e-7, "%s: half precision error %.3g too small (stored as float?)", what, worst);
    }
    if (verbose && prec != TQ_DOUBLE) printf("  %s: max error / site max %.3g\n", what, worst);

    /* exporting twice gives the same; importing the export of a double field is a no-op */
    double *out2 = malloc(n * sizeof *out2);
    for (size_t i = 0; i < n; i++) out2[i] = SENTINEL;
    CHECK_OK(tq_field_export(f, out2));
    CHECK(!memcmp(out, out2, n * sizeof *out), "%s: second export differs", what);
    if (prec != TQ_DOUBLE) {
        /* re-quantising an already quantised value is exact (single) or stable (half) */
        CHECK_OK(tq_field_import(f, out));
        CHECK_OK(tq_field_export(f, out2));
        double drift = 0;
        for (int64_t x = 0; x < vol; x++)
            if (smax[x] > 0)
                for (int k = 0; k < nreal; k++)
                    if (out2[x * nreal + k] != SENTINEL)
                        drift = fmax(drift, fabs(out2[x * nreal + k] - out[x * nreal + k]) / smax[x]);
        CHECK(prec == TQ_SINGLE ? drift == 0 : drift <= 0x1p-15, "%s: second round trip drifts by %.3g", what, drift);
    }
    free(out2);
    free(in);
    free(out);
    free(smax);
    tq_field_destroy(f);
}

/* Haar-random SU(3) through a gauge field of the given precision and compression. */
static void check_gauge_roundtrip(tq_lattice *lat, const tq_host_gauge *g, tq_precision prec, int recon,
                                  int via_raw)
{
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    char what[160];
    snprintf(what, sizeof what, "gauge %s recon %d %dx%dx%dx%d/%dx%dx%dx%d%s", tq_precision_name(prec), recon,
             li.dims[0], li.dims[1], li.dims[2], li.dims[3], li.block[0], li.block[1], li.block[2],
             li.block[3], via_raw ? " (tq_field_import)" : "");
    tq_field_params fp = {TQ_FIELD_GAUGE, prec, TQ_FULL, (tq_recon)recon, 0};
    tq_field *f = NULL;
    tq_status s = tq_field_create(lat, &fp, &f);
    CHECK(s == TQ_SUCCESS, "%s: create: %s", what, tq_last_error());
    if (!f) return;
    tq_field_params got;
    tq_field_get_params(f, &got);
    CHECK((int)got.recon == recon && got.kind == TQ_FIELD_GAUGE, "%s: recon %d", what, (int)got.recon);
    CHECK(tq_field_reals_per_site(f) == 4 * recon, "%s: %d reals per site stored", what, tq_field_reals_per_site(f));
    /* stored compressed; half precision gauge links have no norm */
    size_t expect_bytes = (size_t)li.local_volume * 4 * recon * (size_t)prec;
    CHECK(tq_field_bytes(f) == expect_bytes, "%s: %zu bytes (expected %zu)", what, tq_field_bytes(f), expect_bytes);

    int64_t vol = li.local_volume;
    size_t n = (size_t)vol * 72;
    tq_host_gauge back;
    CHECK_OK(tq_host_gauge_alloc(&back, g->dims));
    if (!back.links) { tq_field_destroy(f); return; }
    for (size_t i = 0; i < n; i++) back.links[i] = SENTINEL;
    if (via_raw) {
        CHECK_OK(tq_field_import(f, g->links));
        CHECK_OK(tq_field_export(f, back.links));
    } else {
        CHECK_OK(tq_gauge_field_import(f, g));
        CHECK_OK(tq_gauge_field_export(f, &back));
    }

    /* error in the stored rows (two for 12, all for 18, a = first row exactly for 8 up
     * to the phase) and after reconstruction (the whole matrix) */
    double err_rows = 0, err_all = 0, worst_unit = 0, err8_scaled = 0;
    int exact_mismatch = 0, nonfinite = 0;
    for (int64_t l = 0; l < vol * 4; l++) {
        const double *a = g->links + 18 * l, *b = back.links + 18 * l;
        for (int k = 0; k < 18; k++) {
            if (!isfinite(b[k])) { nonfinite++; continue; }
            double d = fabs(a[k] - b[k]);
            err_all = fmax(err_all, d);
            if (k < (recon == 18 ? 18 : 12)) err_rows = fmax(err_rows, d);
        }
        if (recon == 8) {
            /* the 8-parameter reconstruction divides by n2 = |a2|^2 + |a3|^2 and takes the
             * moduli |a1| = sqrt(1 - n2), |c1| = sqrt(n2 - |b1|^2) (su3.h): its error is
             * the storage rounding amplified by about 1/n2, 1/|a1| and 1/|c1| */
            double n2 = a[2] * a[2] + a[3] * a[3] + a[4] * a[4] + a[5] * a[5], dl = 0;
            double amp = fmin(n2, fmin(hypot(a[0], a[1]), hypot(a[12], a[13])));
            for (int k = 0; k < 18; k++) dl = fmax(dl, fabs(a[k] - b[k]));
            if (n2 > 0) err8_scaled = fmax(err8_scaled, dl * amp);
        }
        if (prec == TQ_DOUBLE && recon == 18 && memcmp(a, b, 18 * sizeof *a)) exact_mismatch++;
        if (prec == TQ_DOUBLE && recon == 12 && memcmp(a, b, 12 * sizeof *a)) exact_mismatch++;
        double dev = 0, uu[18];
        /* |U U^dag - 1| of the exported link */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double re = 0, im = 0;
                for (int k = 0; k < 3; k++) {
                    double ar = b[6 * i + 2 * k], ai = b[6 * i + 2 * k + 1];
                    double br = b[6 * j + 2 * k], bi = b[6 * j + 2 * k + 1];
                    re += ar * br + ai * bi;
                    im += ai * br - ar * bi;
                }
                uu[2 * (3 * i + j)] = re - (i == j);
                uu[2 * (3 * i + j) + 1] = im;
            }
        for (int k = 0; k < 18; k++) dev = fmax(dev, fabs(uu[k]));
        worst_unit = fmax(worst_unit, dev);
    }
    CHECK(nonfinite == 0, "%s: %d non-finite reals exported", what, nonfinite);
    if (verbose) printf("  %s: max |dU| rows %.3g, all %.3g, unitarity %.3g, recon-8 |dU| min(n2,|a1|,|c1|) %.3g\n", what,
                        err_rows, err_all, worst_unit, err8_scaled);
    if (recon == 8) {
        /* unit roundoff of the storage: 2^-53, 2^-24, 2^-16 (int16 / 32767) */
        double unit = prec == TQ_DOUBLE ? 0x1p-53 : prec == TQ_SINGLE ? 0x1p-24 : 0x1p-16;
        CHECK(err8_scaled <= 16 * unit, "%s: recon-8 error x min(n2, |a1|, |c1|) = %.3g > 16 x %.3g", what, err8_scaled, unit);
    }

    /* tolerances: per element of the 3x3 link, absolute (links are bounded by 1) */
    double tol_rows, tol_all;
    if (prec == TQ_DOUBLE) {
        CHECK(recon == 8 || exact_mismatch == 0, "%s: %d links not bitwise exact", what, exact_mismatch);
        tol_rows = recon == 8 ? 1e-12 : 0;
        tol_all = recon == 18 ? 0 : recon == 12 ? 1e-14 : 1e-12;
    } else if (prec == TQ_SINGLE) {
        tol_rows = recon == 8 ? 1e-5 : 6e-8;     /* float rounding of |x| <= 1: 2^-24 */
        tol_all = recon == 18 ? 6e-8 : recon == 12 ? 5e-7 : 1e-5;
    } else {
        /* int16 / 32767: 1.5e-5 per stored element; the 8-parameter reconstruction divides
         * by |a2|^2 + |a3|^2 and so amplifies it where that is small */
        tol_rows = recon == 8 ? 2e-3 : 1.6e-5;
        tol_all = recon == 18 ? 1.6e-5 : recon == 12 ? 1e-4 : 2e-3;
    }
    CHECK(err_rows <= tol_rows, "%s: error in the stored rows %.3g > %.3g", what, err_rows, tol_rows);
    CHECK(err_all <= tol_all, "%s: error after reconstruction %.3g > %.3g", what, err_all, tol_all);
    if (prec != TQ_DOUBLE) CHECK(err_all > 0, "%s: exact round trip (not stored in %s?)", what, tq_precision_name(prec));
    if (recon != 18) {
        /* reconstruction yields SU(3) up to the storage precision */
        double tol_u = prec == TQ_DOUBLE ? 1e-12 : prec == TQ_SINGLE ? 1e-5 : 2e-3;
        CHECK(worst_unit <= tol_u, "%s: exported links deviate from unitarity by %.3g", what, worst_unit);
    }
    tq_host_gauge_free(&back);
    tq_field_destroy(f);
}

/* The StarPU buffers follow codelets/kernels/field_layout.h: real k of site s of the
 * block/parity buffer at tq_layout_index(). */
static void check_buffer_layout(tq_lattice *lat, tq_precision prec, tq_field_kind kind, int ndof)
{
    tq_field_params fp = {kind, prec, TQ_FULL, 0, ndof};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &f));
    if (!f) return;
    int nreal = tq_field_reals_per_site(f);
    int64_t vol = lat->local_volume;
    double *in = malloc((size_t)vol * nreal * sizeof *in);
    /* values that are exact in float: site * 128 + k */
    for (int64_t x = 0; x < vol; x++)
        for (int k = 0; k < nreal; k++) in[x * nreal + k] = (double)(x * 128 + k);
    CHECK_OK(tq_field_import(f, in));
    int bad = 0;
    for (int b = 0; b < lat->nblocks; b++)
        for (int i = 0; i < f->nparity; i++) {
            starpu_data_handle_t h = tq_field_handle(f, b, i);
            CHECK(starpu_data_get_size(h) == (size_t)tq_layout_bytes(&f->layout), "buffer size %zu vs %lld",
                  starpu_data_get_size(h), (long long)tq_layout_bytes(&f->layout));
            starpu_data_acquire(h, STARPU_R);
            const void *buf = (const void *)STARPU_VECTOR_GET_PTR(starpu_data_get_interface_on_node(h, STARPU_MAIN_RAM));
            int x[4];
            for (x[3] = 0; x[3] < lat->local[3]; x[3]++)
            for (x[2] = 0; x[2] < lat->local[2]; x[2]++)
            for (x[1] = 0; x[1] < lat->local[1]; x[1]++)
            for (x[0] = 0; x[0] < lat->local[0]; x[0]++) {
                int blk, par; int64_t cb;
                tq_lattice_locate(lat, x, &blk, &par, &cb);
                if (blk != b || par != f->parity[i]) continue;
                int64_t lex = ((x[3] * lat->local[2] + x[2]) * lat->local[1] + x[1]) * lat->local[0] + x[0];
                for (int k = 0; k < nreal; k++) {
                    /* coarse fields: rows of 24 reals (field_internal.h) */
                    int64_t idx = tq_layout_index(&f->layout, tq_field_row(f, cb, k / 24), k % 24);
                    double v = prec == TQ_DOUBLE ? ((const double *)buf)[idx] : (double)((const float *)buf)[idx];
                    if (v != in[lex * nreal + k]) bad++;
                }
            }
            starpu_data_release(h);
        }
    CHECK(bad == 0, "%s %s: %d reals not where field_layout.h puts them", kind_str(kind), tq_precision_name(prec), bad);
    free(in);
    tq_field_destroy(f);
}

static void check_layout_header(void)
{
    tq_layout L = tq_layout_make(4, 24, 1, 10);
    CHECK(L.vec == 4 && L.has_norm == 0 && L.nreal == 24 && L.stride == 10, "single 24: vec %d norm %d", L.vec, L.has_norm);
    /* component-major: vector j of all sites, then vector j+1 */
    CHECK(tq_layout_index(&L, 0, 0) == 0 && tq_layout_index(&L, 0, 3) == 3, "first vector");
    CHECK(tq_layout_index(&L, 1, 0) == 4, "site 1 starts at %lld", (long long)tq_layout_index(&L, 1, 0));
    CHECK(tq_layout_index(&L, 0, 4) == 40, "second vector of site 0 at %lld", (long long)tq_layout_index(&L, 0, 4));
    CHECK(tq_layout_index(&L, 3, 5) == 53, "real 5 of site 3 at %lld", (long long)tq_layout_index(&L, 3, 5));
    CHECK(tq_layout_index(&L, 9, 23) == 239, "last real at %lld", (long long)tq_layout_index(&L, 9, 23));
    CHECK(tq_layout_bytes(&L) == 10 * 24 * 4, "bytes %lld", (long long)tq_layout_bytes(&L));
    /* every index used exactly once */
    char seen[240] = {0};
    int dup = 0;
    for (int s = 0; s < 10; s++)
        for (int k = 0; k < 24; k++) {
            int64_t i = tq_layout_index(&L, s, k);
            if (i < 0 || i >= 240 || seen[i]++) dup++;
        }
    CHECK(dup == 0, "single 24 layout is not a bijection (%d)", dup);

    tq_layout D = tq_layout_make(8, 24, 1, 10);
    CHECK(D.vec == 2 && D.has_norm == 0, "double 24: vec %d", D.vec);
    CHECK(tq_layout_index(&D, 1, 0) == 2 && tq_layout_index(&D, 0, 2) == 20, "double layout");
    tq_layout S6 = tq_layout_make(4, 6, 1, 10), G18 = tq_layout_make(4, 18, 0, 10);
    CHECK(S6.vec == 2 && G18.vec == 2, "single 6 / 18: vec %d %d", S6.vec, G18.vec);
    tq_layout H = tq_layout_make(2, 24, 1, 10), HG = tq_layout_make(2, 48, 0, 10);
    CHECK(H.vec == 4 && H.has_norm == 1, "half 24: vec %d norm %d", H.vec, H.has_norm);
    CHECK(tq_layout_bytes(&H) == 10 * (24 * 2 + 4), "half 24 bytes %lld", (long long)tq_layout_bytes(&H));
    CHECK(HG.has_norm == 0 && tq_layout_bytes(&HG) == 10 * 48 * 2, "half gauge: norm %d", HG.has_norm);
    /* half quantisation: symmetric, saturating */
    CHECK(tq_half_quantize(1.0) == 32767 && tq_half_quantize(-1.0) == -32767, "quantize +-1");
    CHECK(tq_half_quantize(2.0) == 32767 && tq_half_quantize(-7.0) == -32767, "quantize saturates");
    CHECK(tq_half_quantize(0.0) == 0, "quantize 0");
    /* nearest integer, ties to even (the GPU store rounds the same way), in both real types */
    CHECK(tq_half_quantize(2.5 / 32767.0) == 2 && tq_half_quantize(3.5 / 32767.0) == 4, "quantize ties to even");
    CHECK(tq_half_quantize(-2.5 / 32767.0) == -2 && tq_half_quantize(2.51 / 32767.0) == 3, "quantize rounds to nearest");
    CHECK(tq_half_quantize_f(2.5f / 32767.0f) == 2 && tq_half_quantize_f(-1234.4f / 32767.0f) == -1234, "float quantize");
    for (int k = -32767; k <= 32767; k += 97)
        CHECK(tq_half_quantize_f((float)k / 32767.0f) == k, "float quantize %d", k);
}

static void check_bytes_examples(tq_lattice *lat4)
{
    /* the examples of the brief: 4^4 spinor single full = 256 x 24 x 4 */
    struct { tq_field_kind k; tq_precision p; tq_subset s; int recon; size_t bytes; } ex[] = {
        {TQ_FIELD_SPINOR, TQ_SINGLE, TQ_FULL, 0, 256 * 24 * 4},
        {TQ_FIELD_SPINOR, TQ_HALF, TQ_FULL, 0, 256 * (24 * 2 + 4)},
        {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_EVEN, 0, 128 * 24 * 8},
        {TQ_FIELD_STAGGERED, TQ_HALF, TQ_ODD, 0, 128 * (6 * 2 + 4)},
        {TQ_FIELD_CLOVER, TQ_SINGLE, TQ_FULL, 0, 256 * 72 * 4},
        {TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, 0, 256 * 72 * 8},   /* recon 0 means 18 */
        {TQ_FIELD_GAUGE, TQ_SINGLE, TQ_FULL, 12, 256 * 48 * 4},
        {TQ_FIELD_GAUGE, TQ_HALF, TQ_FULL, 8, 256 * 32 * 2},
    };
    for (size_t i = 0; i < sizeof ex / sizeof ex[0]; i++) {
        tq_field_params fp = {ex[i].k, ex[i].p, ex[i].s, (tq_recon)ex[i].recon, 0};
        tq_field *f = NULL;
        CHECK_OK(tq_field_create(lat4, &fp, &f));
        if (!f) continue;
        CHECK(tq_field_bytes(f) == ex[i].bytes, "example %zu: %zu bytes (expected %zu)", i, tq_field_bytes(f), ex[i].bytes);
        tq_field_params got;
        tq_field_get_params(f, &got);
        if (ex[i].k == TQ_FIELD_GAUGE && ex[i].recon == 0)
            CHECK(got.recon == TQ_RECON_18 && tq_field_reals_per_site(f) == 72, "recon 0 -> %d", (int)got.recon);
        tq_field_destroy(f);
    }
    /* recon is ignored for non-gauge fields */
    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, TQ_RECON_8, 0};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(lat4, &fp, &f));
    if (f) {
        tq_field_params got;
        tq_field_get_params(f, &got);
        CHECK(got.recon == 0 && tq_field_reals_per_site(f) == 24, "spinor recon %d, %d reals", (int)got.recon,
              tq_field_reals_per_site(f));
        tq_field_destroy(f);
    }
    CHECK(tq_field_bytes(NULL) == 0 && tq_field_reals_per_site(NULL) == 0, "NULL field sizes");
}

static void expect_create_error(tq_lattice *lat, tq_field_params fp, tq_status code, const char *what)
{
    tq_field *f = (tq_field *)lat;
    tq_status s = tq_field_create(lat, &fp, &f);
    CHECK(s == code && tq_last_error()[0], "%s: %s (expected %s), message '%s'", what, tq_status_name(s),
          tq_status_name(code), tq_last_error());
    CHECK(f == NULL, "%s: a field was returned on error", what);
    if (s == TQ_SUCCESS && f && f != (tq_field *)lat) tq_field_destroy(f);
}

/* The BLAS on coarse fields (they see rows of 24 reals): norm2, cdot and axpy against the
 * host arrays, and fields of different ndof refused. */
static void check_coarse_blas(tq_lattice *lat)
{
    const int ndof = 24, nreal = 2 * ndof;
    const int64_t vol = lat->local_volume;
    tq_field_params fp = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, 0, ndof};
    tq_field *x = NULL, *y = NULL, *z = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &x));
    CHECK_OK(tq_field_create(lat, &fp, &y));
    fp.ndof = 12;
    CHECK_OK(tq_field_create(lat, &fp, &z));
    double *a = malloc((size_t)vol * nreal * sizeof *a), *b = malloc((size_t)vol * nreal * sizeof *b);
    double *c = malloc((size_t)vol * nreal * sizeof *c);
    if (x && y && z && a && b && c) {
        double n2 = 0, re = 0, im = 0;
        for (int64_t i = 0; i < vol * nreal; i++) a[i] = 2 * urand() - 1, b[i] = 2 * urand() - 1;
        for (int64_t i = 0; i < vol * ndof; i++) {
            n2 += a[2 * i] * a[2 * i] + a[2 * i + 1] * a[2 * i + 1];
            re += a[2 * i] * b[2 * i] + a[2 * i + 1] * b[2 * i + 1];
            im += a[2 * i] * b[2 * i + 1] - a[2 * i + 1] * b[2 * i];
        }
        CHECK_OK(tq_field_import(x, a));
        CHECK_OK(tq_field_import(y, b));
        double got = 0;
        tq_complex d = {0, 0};
        CHECK_OK(tq_blas_norm2(x, &got));
        CHECK(fabs(got - n2) <= 1e-12 * n2, "coarse norm2 %.15g, host %.15g", got, n2);
        CHECK_OK(tq_blas_cdot(x, y, &d));
        CHECK(fabs(d.re - re) <= 1e-12 * n2 && fabs(d.im - im) <= 1e-12 * n2, "coarse cdot (%.15g, %.15g), host (%.15g, %.15g)",
              d.re, d.im, re, im);
        CHECK_OK(tq_blas_axpy(0.5, x, y));
        CHECK_OK(tq_field_export(y, c));
        double worst = 0;
        for (int64_t i = 0; i < vol * nreal; i++) worst = fmax(worst, fabs(c[i] - (0.5 * a[i] + b[i])));
        CHECK(worst <= 1e-15, "coarse axpy differs from the host's by %.3g", worst);
        CHECK_ERR(tq_blas_axpy(1.0, x, z), TQ_ERR_MISMATCH);
    }
    free(a);
    free(b);
    free(c);
    tq_field_destroy(z);
    tq_field_destroy(y);
    tq_field_destroy(x);
}

/* tq_internal_field_random: every stored real is the definition's value at its global site
 * (recomputed here from Philox: row j, real k from block 12 j + k / 2 of (stream, site)),
 * rounded to the field's precision, in (-1, 1); two decompositions of one lattice store the
 * same bits; another seed gives other values. */
static void check_random_field(tq_lattice *a, tq_lattice *b, tq_field_kind kind, tq_precision prec, tq_subset subset,
                               int ndof)
{
    tq_lattice_info li;
    tq_lattice_get_info(a, &li);
    char what[96];
    snprintf(what, sizeof what, "random %s%.0d %s %s", kind_str(kind), ndof, tq_precision_name(prec), subset_str(subset));
    const int nreal = kind == TQ_FIELD_SPINOR ? 24 : kind == TQ_FIELD_STAGGERED ? 6 : 2 * ndof;
    const tq_field_params fp = {kind, prec, subset, 0, ndof};
    const uint64_t seed = 77;
    const uint32_t stream = 0x500;
    tq_field *fa = NULL, *fb = NULL, *fc = NULL;
    const size_t n = (size_t)li.local_volume * (size_t)nreal;
    double *ha = calloc(n, sizeof *ha), *hb = calloc(n, sizeof *hb), *hc = calloc(n, sizeof *hc);
    CHECK(ha && hb && hc, "%s: out of memory", what);
    CHECK_OK(tq_field_create(a, &fp, &fa));
    CHECK_OK(tq_field_create(b, &fp, &fb));
    CHECK_OK(tq_field_create(a, &fp, &fc));
    if (!ha || !hb || !hc || !fa || !fb || !fc) goto out;
    CHECK_OK(tq_internal_field_random(fa, seed, stream));
    CHECK_OK(tq_internal_field_random(fb, seed, stream));
    CHECK_OK(tq_internal_field_random(fc, seed + 1, stream));
    CHECK_OK(tq_field_export(fa, ha));
    CHECK_OK(tq_field_export(fb, hb));
    CHECK_OK(tq_field_export(fc, hc));
    uint32_t key[2];
    tq_rng_key(key, seed);
    int64_t bad = 0, outside = 0, same_c = 0, held = 0;
    double err = 0, sum = 0, sum2 = 0;
    for (int64_t site = 0; site < li.local_volume; site++) {
        int x[4];
        int64_t q = site;
        for (int mu = 0; mu < 4; mu++) { x[mu] = (int)(q % li.dims[mu]); q /= li.dims[mu]; }
        const int par = (x[0] + x[1] + x[2] + x[3]) & 1;
        if ((subset == TQ_EVEN && par) || (subset == TQ_ODD && !par)) continue;
        held++;
        for (int r = 0; r < nreal; r++) {
            const int j = r / 24, k = r % 24;
            uint32_t ctr[4], w[4];
            tq_rng_site_counter(ctr, (uint32_t)(12 * j + k / 2), stream, (uint64_t)site);
            tq_philox4x32(ctr, key, w);
            const double want = 2.0 * tq_rng_uniform(k % 2 ? w[2] : w[0], k % 2 ? w[3] : w[1]) - 1.0;
            const double got = ha[site * nreal + r];
            const double e = fabs(got - want);
            if (prec == TQ_DOUBLE ? got != want : prec == TQ_SINGLE ? got != (double)(float)want : e > 1e-4) bad++;
            if (e > err) err = e;
            if (!(got > -1.0 && got < 1.0)) outside++;
            if (memcmp(&got, &hb[site * nreal + r], sizeof got)) bad++;
            if (got == hc[site * nreal + r]) same_c++;
            sum += got;
            sum2 += got * got;
        }
    }
    const double cnt = (double)held * nreal, mean = sum / cnt, var = sum2 / cnt - mean * mean;
    CHECK(bad == 0, "%s: %lld values differ from the definition or between decompositions (largest difference %.3g)",
          what, (long long)bad, err);
    CHECK(outside == 0, "%s: %lld values outside (-1, 1)", what, (long long)outside);
    CHECK(same_c < cnt / 100 + 1, "%s: another seed repeats %lld of %.0f values", what, (long long)same_c, cnt);
    /* uniform on (-1, 1): mean 0, variance 1/3 (5 sigma of this many values) */
    CHECK(fabs(mean) < 5 * sqrt(1.0 / 3 / cnt) && fabs(var - 1.0 / 3) < 5 * 0.3 / sqrt(cnt),
          "%s: mean %.4f, variance %.4f over %.0f values", what, mean, var, cnt);
    if (verbose) printf("  %s: %.0f values as defined, the same bits on both decompositions\n", what, cnt);
out:
    tq_field_destroy(fa);
    tq_field_destroy(fb);
    tq_field_destroy(fc);
    free(ha);
    free(hb);
    free(hc);
}

static void check_errors(tq_lattice *lat4)
{
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_EVEN, 18, 0}, TQ_ERR_INVALID_ARG, "gauge even");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_GAUGE, TQ_SINGLE, TQ_ODD, 12, 0}, TQ_ERR_INVALID_ARG, "gauge odd");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_CLOVER, TQ_DOUBLE, TQ_ODD, 0, 0}, TQ_ERR_INVALID_ARG, "clover odd");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, (tq_recon)10, 0}, TQ_ERR_INVALID_ARG, "recon 10");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, (tq_recon)9, 0}, TQ_ERR_INVALID_ARG, "recon 9");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_SPINOR, (tq_precision)3, TQ_FULL, 0, 0}, TQ_ERR_INVALID_ARG, "precision 3");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_SPINOR, (tq_precision)16, TQ_FULL, 0, 0}, TQ_ERR_INVALID_ARG, "precision 16");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_SPINOR, (tq_precision)0, TQ_FULL, 0, 0}, TQ_ERR_INVALID_ARG, "precision 0");
    expect_create_error(lat4, (tq_field_params){(tq_field_kind)7, TQ_DOUBLE, TQ_FULL, 0, 0}, TQ_ERR_INVALID_ARG, "kind 7");
    expect_create_error(lat4, (tq_field_params){(tq_field_kind)-1, TQ_DOUBLE, TQ_FULL, 0, 0}, TQ_ERR_INVALID_ARG, "kind -1");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_SPINOR, TQ_DOUBLE, (tq_subset)3, 0, 0}, TQ_ERR_INVALID_ARG, "subset 3");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, 0, 0}, TQ_ERR_INVALID_ARG, "coarse ndof 0");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_COARSE, TQ_SINGLE, TQ_FULL, 0, 18}, TQ_ERR_INVALID_ARG, "coarse ndof 18");
    expect_create_error(lat4, (tq_field_params){TQ_FIELD_COARSE, TQ_HALF, TQ_EVEN, 0, -24}, TQ_ERR_INVALID_ARG, "coarse ndof -24");

    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
    tq_field *f = NULL;
    CHECK_ERR(tq_field_create(NULL, &fp, &f), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_field_create(lat4, NULL, &f), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_field_create(lat4, &fp, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_field_get_params(NULL, &fp), TQ_ERR_INVALID_ARG);

    double buf[256 * 72];
    memset(buf, 0, sizeof buf);
    CHECK_OK(tq_field_create(lat4, &fp, &f));
    if (f) {
        CHECK_ERR(tq_field_import(f, NULL), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_field_export(f, NULL), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_field_get_params(f, NULL), TQ_ERR_INVALID_ARG);
        tq_host_gauge g;
        int d4[4] = {4, 4, 4, 4};
        if (tq_host_gauge_alloc(&g, d4) == TQ_SUCCESS) {
            /* a spinor field is not a gauge field */
            tq_status s = tq_gauge_field_import(f, &g);
            CHECK(s != TQ_SUCCESS && tq_last_error()[0], "gauge import into a spinor field: %s", tq_status_name(s));
            s = tq_gauge_field_export(f, &g);
            CHECK(s != TQ_SUCCESS && tq_last_error()[0], "gauge export from a spinor field: %s", tq_status_name(s));
            tq_host_gauge_free(&g);
        }
        tq_field_destroy(f);
    }
    CHECK_ERR(tq_field_import(NULL, buf), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_field_export(NULL, buf), TQ_ERR_INVALID_ARG);

    /* host gauge of the wrong dimensions */
    fp = (tq_field_params){TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, TQ_RECON_12, 0};
    CHECK_OK(tq_field_create(lat4, &fp, &f));
    if (f) {
        int bad_dims[3][4] = {{4, 4, 4, 2}, {2, 4, 4, 4}, {4, 4, 8, 4}};
        for (int k = 0; k < 3; k++) {
            tq_host_gauge g;
            if (tq_host_gauge_alloc(&g, bad_dims[k])) continue;
            tq_host_gauge_unit(&g);
            CHECK_ERR(tq_gauge_field_import(f, &g), TQ_ERR_MISMATCH);
            CHECK_ERR(tq_gauge_field_export(f, &g), TQ_ERR_MISMATCH);
            tq_host_gauge_free(&g);
        }
        tq_host_gauge none = {{4, 4, 4, 4}, NULL};
        CHECK_ERR(tq_gauge_field_import(f, &none), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_gauge_field_export(f, &none), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_gauge_field_import(f, NULL), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_gauge_field_import(NULL, &none), TQ_ERR_INVALID_ARG);
        tq_field_destroy(f);
    }
}

int main(int argc, char **argv)
{
    verbose = argc > 1 && !strcmp(argv[1], "-v");
    unsetenv("STARPU_NCPU");
    unsetenv("STARPU_NCUDA");
    check_layout_header();

    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 2;
    ip.verbosity = 0;
    ip.use_mpi = 0;
    if (tq_init(&ip)) {
        fprintf(stderr, "tq_init: %s\n", tq_last_error());
        return 1;
    }

    /* decompositions: automatic (2 CPU workers: 2 blocks), many small blocks, and a lattice
     * with unequal extents and blocks (catches x/y/z/t mix-ups in the site maps) */
    int d4[4] = {4, 4, 4, 4}, b2[4] = {2, 2, 2, 2};
    int d6[4] = {6, 4, 2, 8}, b6[4] = {2, 4, 2, 4};
    tq_lattice *lats[3] = {tq_test_lattice(d4, NULL), tq_test_lattice(d4, b2), tq_test_lattice(d6, b6)};
    for (int i = 0; i < 3; i++)
        if (!lats[i]) return tq_test_finish("test_field");
    tq_lattice_info li0;
    tq_lattice_get_info(lats[0], &li0);
    tq_runtime_info ri;
    CHECK_OK(tq_get_runtime_info(&ri));
    /* lattice.c: one block per GPU when there are GPUs, else one per CPU worker */
    int want_blocks = ri.ncuda_workers > 0 ? ri.ncuda_workers : ri.ncpu_workers;
    CHECK(li0.nblocks >= (want_blocks < 2 ? want_blocks : 2), "automatic decomposition has %d block(s) for %d CPU and %d CUDA workers",
          li0.nblocks, ri.ncpu_workers, ri.ncuda_workers);

    check_bytes_examples(lats[0]);
    check_errors(lats[0]);

    tq_field_kind kinds[3] = {TQ_FIELD_SPINOR, TQ_FIELD_STAGGERED, TQ_FIELD_CLOVER};
    tq_precision precs[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
    tq_subset subsets[3] = {TQ_FULL, TQ_EVEN, TQ_ODD};
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++)
            for (int p = 0; p < 3; p++)
                for (int s = 0; s < 3; s++) {
                    if (kinds[k] == TQ_FIELD_CLOVER && subsets[s] != TQ_FULL) continue;
                    check_vector_roundtrip(lats[l], kinds[k], precs[p], subsets[s], 0);
                }
    for (int l = 0; l < 3; l++)
        for (int p = 0; p < 3; p++)
            for (int s = 0; s < 3; s++)
                for (int nd = 12; nd <= 48; nd += 36) check_vector_roundtrip(lats[l], TQ_FIELD_COARSE, precs[p], subsets[s], nd);
    check_coarse_blas(lats[1]);
    /* random fields: lats[0] and lats[1] are one lattice in two decompositions */
    for (int p = 0; p < 3; p++)
        for (int s = 0; s < 3; s++) check_random_field(lats[0], lats[1], TQ_FIELD_SPINOR, precs[p], subsets[s], 0);
    check_random_field(lats[1], lats[0], TQ_FIELD_STAGGERED, TQ_SINGLE, TQ_FULL, 0);
    check_random_field(lats[0], lats[1], TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, 48);
    check_random_field(lats[0], lats[1], TQ_FIELD_COARSE, TQ_HALF, TQ_ODD, 24);
    CHECK_ERR(tq_internal_field_random(NULL, 1, 0x500), TQ_ERR_INVALID_ARG);

    int recons[3] = {18, 12, 8};
    for (int l = 0; l < 3; l++) {
        tq_lattice_info li;
        tq_lattice_get_info(lats[l], &li);
        tq_host_gauge g;
        CHECK_OK(tq_host_gauge_alloc(&g, li.dims));
        if (!g.links) continue;
        CHECK_OK(tq_host_gauge_random(&g, 1000 + (uint64_t)l));
        for (int p = 0; p < 3; p++)
            for (int r = 0; r < 3; r++) check_gauge_roundtrip(lats[l], &g, precs[p], recons[r], l == 2);
        tq_host_gauge_free(&g);
    }

    for (int l = 0; l < 3; l++) {
        check_buffer_layout(lats[l], TQ_SINGLE, TQ_FIELD_SPINOR, 0);
        check_buffer_layout(lats[l], TQ_DOUBLE, TQ_FIELD_SPINOR, 0);
        check_buffer_layout(lats[l], TQ_SINGLE, TQ_FIELD_STAGGERED, 0);
        check_buffer_layout(lats[l], TQ_SINGLE, TQ_FIELD_COARSE, 36);
        check_buffer_layout(lats[l], TQ_DOUBLE, TQ_FIELD_COARSE, 12);
    }

    for (int i = 0; i < 3; i++) tq_lattice_destroy(lats[i]);
    tq_finalize();
    return tq_test_finish("test_field");
}
