/* Self-test of the host reference for improved staggered fermions
 * (reference/staggered_reference.h): the asqtad fat and long links on a unit field (the
 * value the coefficients sum to, tadpole factors included), on a constant abelian field
 * (every path ends one link, or three, further on), MILC's route through phased thin links
 * against the other route (phases after the paths), gauge covariance of the links and of D,
 * D's anti-hermiticity and its even-odd structure, and -D^2 on free plane waves (the Naik
 * term's dispersion); HISQ's U(3) projection, its links on a unit field and their gauge
 * covariance. Uses no library code. */
#include "tq_test.h"
#include "../reference/staggered_reference.h"

#include <stdint.h>

static const int DIMS[4] = {4, 4, 4, 6};
static const double BC[4] = {1, 1, 1, -1};

static double *dalloc(int64_t n)
{
    double *p = (double *)calloc((size_t)n, sizeof(double));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(99); }
    return p;
}

static double max_abs_diff(const double *a, const double *b, int64_t n)
{
    double d = 0;
    for (int64_t k = 0; k < n; k++) d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

/* Whether every link of field (4 per site) is f_mu(x) times the complex number z_mu, f the
 * phases and boundary factors of a `hops`-link hop; the largest deviation in *worst. */
static double worst_scalar_links(const double *field, const double z[4][2], int hops)
{
    const int64_t vol = ref_volume(DIMS);
    double worst = 0;
    for (int64_t s = 0; s < vol; s++) {
        int c[4];
        wref_coords(s, DIMS, c);
        for (int mu = 0; mu < 4; mu++) {
            const double f = ref_ks_eta(c, mu) * (c[mu] + hops >= DIMS[mu] ? BC[mu] : 1.0);
            const double *u = field + (s * 4 + mu) * 18;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    const double re = i == j ? f * z[mu][0] : 0, im = i == j ? f * z[mu][1] : 0;
                    worst = fmax(worst, fmax(fabs(u[(i * 3 + j) * 2] - re), fabs(u[(i * 3 + j) * 2 + 1] - im)));
                }
        }
    }
    return worst;
}

static void test_unit_field(void)
{
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol), *fat = dalloc(72 * vol), *lng = dalloc(72 * vol);
    ref_gauge_unit(u, DIMS);
    const double u0s[2] = {1.0, 0.875};
    for (int k = 0; k < 2; k++) {
        const double u0 = u0s[k];
        ref_ks_fat_long(fat, lng, u, DIMS, u0, BC);
        /* 1 one-link path, 6 three-link staples, 24 five-link, 48 seven-link, 6 Lepage */
        const double fat_value = 5.0 / 8 + 6.0 / 16 / pow(u0, 2) + 24.0 / 64 / pow(u0, 4) + 48.0 / 384 / pow(u0, 6) -
                                 6.0 / 16 / pow(u0, 4);
        const double long_value = -1.0 / 24 / pow(u0, 2);
        double zf[4][2], zl[4][2];
        for (int mu = 0; mu < 4; mu++) zf[mu][0] = fat_value, zf[mu][1] = 0, zl[mu][0] = long_value, zl[mu][1] = 0;
        const double wf = worst_scalar_links(fat, zf, 1), wl = worst_scalar_links(lng, zl, 3);
        CHECK(wf < 1e-14, "unit field, u0 %.3f: fat links differ from %.15f eta by %.3g", u0, fat_value, wf);
        CHECK(wl < 1e-15, "unit field, u0 %.3f: long links differ from %.15f eta by %.3g", u0, long_value, wl);
        if (u0 == 1.0) CHECK(fabs(fat_value + 3 * long_value - 1.0) < 1e-15, "c1 + 3 cN = %.17g, not 1", fat_value + 3 * long_value);
        printf("  unit field, u0 %.3f: fat %.12f, long %.12f (times the phases)    max dev %.2g / %.2g\n", u0, fat_value,
               long_value, wf, wl);
    }
    free(u);
    free(fat);
    free(lng);
}

/* U_mu(x) = exp(i a_mu) 1: a path's product is exp(i (a . displacement)), so every fat-link
 * path that ends at x + mu gives exp(i a_mu), and the long link exp(3 i a_mu). */
static void test_abelian_field(void)
{
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol), *fat = dalloc(72 * vol), *lng = dalloc(72 * vol);
    const double a[4] = {0.3, -1.1, 0.7, 2.3};
    memset(u, 0, sizeof(double) * 72 * (size_t)vol);
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++)
            for (int i = 0; i < 3; i++) {
                u[(s * 4 + mu) * 18 + (i * 3 + i) * 2] = cos(a[mu]);
                u[(s * 4 + mu) * 18 + (i * 3 + i) * 2 + 1] = sin(a[mu]);
            }
    ref_ks_fat_long(fat, lng, u, DIMS, 1.0, BC);
    double zf[4][2], zl[4][2];
    for (int mu = 0; mu < 4; mu++) {
        zf[mu][0] = 9.0 / 8 * cos(a[mu]), zf[mu][1] = 9.0 / 8 * sin(a[mu]);
        zl[mu][0] = -1.0 / 24 * cos(3 * a[mu]), zl[mu][1] = -1.0 / 24 * sin(3 * a[mu]);
    }
    const double wf = worst_scalar_links(fat, zf, 1), wl = worst_scalar_links(lng, zl, 3);
    CHECK(wf < 1e-14, "constant abelian field: fat links differ from 9/8 exp(i a_mu) by %.3g", wf);
    CHECK(wl < 1e-15, "constant abelian field: long links differ from -1/24 exp(3 i a_mu) by %.3g", wl);
    printf("  constant abelian field: fat 9/8 exp(i a_mu), long -1/24 exp(3 i a_mu)   max dev %.2g / %.2g\n", wf, wl);
    free(u);
    free(fat);
    free(lng);
}

/* The largest deviation of L2 (the links of the gauge-transformed field) from
 * g(x) L_mu(x) g(x + hops mu)^dag, a `hops`-link field's covariance (want: work space). */
static double covariance_deviation(const double *L, const double *L2, const double *g, int hops, double *want)
{
    const int64_t vol = ref_volume(DIMS);
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++) {
            int d[4] = {0, 0, 0, 0};
            d[mu] = hops;
            double t[18];
            wref_m3_mul(t, g + 18 * s, 0, wref_link(L, s, mu), 0);
            wref_m3_mul(want + (s * 4 + mu) * 18, t, 0, g + 18 * wref_displace(s, DIMS, d), 1);
        }
    return max_abs_diff(L2, want, 72 * vol);
}

/* MILC's route (phases into the thin links, signed staples) equals phases after the paths. */
static void test_phased_route(void)
{
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol), *f1 = dalloc(72 * vol), *l1 = dalloc(72 * vol), *f2 = dalloc(72 * vol),
           *l2 = dalloc(72 * vol);
    ref_gauge_random_su3(u, DIMS, 11);
    ref_ks_fat_long(f1, l1, u, DIMS, 0.9, BC);
    ref_ks_fat_long_phased(f2, l2, u, DIMS, 0.9, BC);
    const double df = max_abs_diff(f1, f2, 72 * vol), dl = max_abs_diff(l1, l2, 72 * vol);
    CHECK(df < 1e-13, "random field: the phased route's fat links differ by %.3g", df);
    CHECK(dl < 1e-14, "random field: the phased route's long links differ by %.3g", dl);
    /* and the phases matter: without the boundary factor the routes part */
    const double periodic[4] = {1, 1, 1, 1};
    ref_ks_fat_long_phased(f2, l2, u, DIMS, 0.9, periodic);
    CHECK(max_abs_diff(f1, f2, 72 * vol) > 1e-3, "the time boundary's factor changes nothing");
    printf("  random SU(3) field, u0 0.9: MILC's phased route agrees to %.2g (fat) / %.2g (long)\n", df, dl);
    free(u);
    free(f1);
    free(l1);
    free(f2);
    free(l2);
}

static void test_gauge_covariance(void)
{
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol), *u2 = dalloc(72 * vol), *g = dalloc(18 * vol);
    double *fat = dalloc(72 * vol), *lng = dalloc(72 * vol), *fat2 = dalloc(72 * vol), *lng2 = dalloc(72 * vol);
    double *want = dalloc(72 * vol);
    ref_gauge_random_su3(u, DIMS, 21);
    uint64_t st = 77;
    for (int64_t s = 0; s < vol; s++) ref_su3_random(g + 18 * s, &st);
    ref_gauge_transform_links(u2, u, g, DIMS);
    ref_ks_fat_long(fat, lng, u, DIMS, 0.85, BC);
    ref_ks_fat_long(fat2, lng2, u2, DIMS, 0.85, BC);
    /* V'_mu(x) = g(x) V_mu(x) g(x + mu)^dag; W'_mu(x) = g(x) W_mu(x) g(x + 3 mu)^dag */
    for (int h = 1; h <= 3; h += 2) {
        const double dev = covariance_deviation(h == 1 ? fat : lng, h == 1 ? fat2 : lng2, g, h, want);
        CHECK(dev < 1e-13, "gauge covariance of the %s links: deviation %.3g", h == 1 ? "fat" : "long", dev);
        printf("  gauge covariance of the %s links: max dev %.2g\n", h == 1 ? "fat" : "long", dev);
    }

    /* D'(g psi) = g (D psi) */
    double *psi = dalloc(6 * vol), *gpsi = dalloc(6 * vol), *out = dalloc(6 * vol), *out2 = dalloc(6 * vol),
           *gout = dalloc(6 * vol);
    for (int64_t k = 0; k < 6 * vol; k++) psi[k] = wref_rng_gaussian(&st);
    for (int64_t s = 0; s < vol; s++) wref_m3_vec(gpsi + 6 * s, g + 18 * s, 0, psi + 6 * s);
    ref_ks_dslash(out, fat, lng, psi, DIMS);
    ref_ks_dslash(out2, fat2, lng2, gpsi, DIMS);
    for (int64_t s = 0; s < vol; s++) wref_m3_vec(gout + 6 * s, g + 18 * s, 0, out + 6 * s);
    const double dev = max_abs_diff(out2, gout, 6 * vol);
    CHECK(dev < 1e-12, "gauge covariance of D: deviation %.3g", dev);
    printf("  gauge covariance of D: max dev %.2g\n", dev);
    free(u);
    free(u2);
    free(g);
    free(fat);
    free(lng);
    free(fat2);
    free(lng2);
    free(want);
    free(psi);
    free(gpsi);
    free(out);
    free(out2);
    free(gout);
}

/* <phi, D psi> = -<D phi, psi>; D maps even sites to odd ones and odd to even. */
static void test_operator(void)
{
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol), *fat = dalloc(72 * vol), *lng = dalloc(72 * vol);
    double *phi = dalloc(6 * vol), *psi = dalloc(6 * vol), *dphi = dalloc(6 * vol), *dpsi = dalloc(6 * vol);
    ref_gauge_random_su3(u, DIMS, 31);
    ref_ks_fat_long(fat, lng, u, DIMS, 0.9, BC);
    uint64_t st = 99;
    for (int64_t k = 0; k < 6 * vol; k++) phi[k] = wref_rng_gaussian(&st), psi[k] = wref_rng_gaussian(&st);
    ref_ks_dslash(dphi, fat, lng, phi, DIMS);
    ref_ks_dslash(dpsi, fat, lng, psi, DIMS);
    const double a_re = ref_cdot_re(phi, dpsi, 6 * vol), a_im = ref_cdot_im(phi, dpsi, 6 * vol);
    const double b_re = ref_cdot_re(dphi, psi, 6 * vol), b_im = ref_cdot_im(dphi, psi, 6 * vol);
    const double scale = sqrt(ref_vnorm2(phi, 6 * vol) * ref_vnorm2(dpsi, 6 * vol));
    const double dev = hypot(a_re + b_re, a_im + b_im) / scale;
    CHECK(dev < 1e-14, "D is not anti-Hermitian: <phi, D psi> + <D phi, psi> = %.3g relative", dev);
    CHECK(hypot(a_re, a_im) / scale > 1e-3, "<phi, D psi> vanishes: the test would not see a sign error");
    printf("  anti-hermiticity: |<phi, D psi> + <D phi, psi>| / (|phi| |D psi|) = %.2g\n", dev);

    /* psi on even sites only: D psi lives on odd sites, and is not zero there */
    for (int64_t s = 0; s < vol; s++)
        if (ref_site_parity(s, DIMS)) memset(psi + 6 * s, 0, 6 * sizeof(double));
    ref_ks_dslash(dpsi, fat, lng, psi, DIMS);
    double on_even = 0, on_odd = 0;
    for (int64_t s = 0; s < vol; s++)
        for (int i = 0; i < 6; i++) {
            if (ref_site_parity(s, DIMS)) on_odd += dpsi[6 * s + i] * dpsi[6 * s + i];
            else on_even += dpsi[6 * s + i] * dpsi[6 * s + i];
        }
    CHECK(on_even == 0.0 && on_odd > 0.0, "D of an even field: |.|^2 %.3g on even sites, %.3g on odd", on_even, on_odd);

    /* M = 2m + D */
    double *m = dalloc(6 * vol);
    ref_ks_mat(m, fat, lng, psi, 0.05, DIMS);
    double worst = 0;
    for (int64_t k = 0; k < 6 * vol; k++) worst = fmax(worst, fabs(m[k] - (dpsi[k] + 0.1 * psi[k])));
    CHECK(worst < 1e-15, "M != 2m + D: %.3g", worst);
    free(m);
    free(u);
    free(fat);
    free(lng);
    free(phi);
    free(psi);
    free(dphi);
    free(dpsi);
}

/* Free field: with unit links the phases anticommute the directions' hops away, so D^2 =
 * sum_mu A_mu^2 with A_mu = 9/8 (one hop) - 1/24 (three hops), and a plane wave e^{ipx} chi
 * (p_t an odd multiple of pi/T: antiperiodic) is an eigenvector of -D^2 with eigenvalue
 * sum_mu 4 (9/8 sin p_mu - 1/24 sin 3 p_mu)^2. */
static void test_free_field(void)
{
    static const double PI = 3.14159265358979323846;
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol), *fat = dalloc(72 * vol), *lng = dalloc(72 * vol);
    double *psi = dalloc(6 * vol), *d1 = dalloc(6 * vol), *d2 = dalloc(6 * vol);
    ref_gauge_unit(u, DIMS);
    ref_ks_fat_long(fat, lng, u, DIMS, 1.0, BC);
    const int n[3][4] = {{1, 0, 3, 2}, {0, 0, 0, 0}, {2, 1, 1, 5}};
    const double chi[6] = {0.3, -0.2, 1.1, 0.4, -0.7, 0.9};
    for (int k = 0; k < 3; k++) {
        double p[4], lambda = 0;
        for (int mu = 0; mu < 4; mu++) {
            p[mu] = (2 * n[k][mu] + (BC[mu] < 0 ? 1 : 0)) * PI / DIMS[mu];
            const double a = 9.0 / 8 * sin(p[mu]) - 1.0 / 24 * sin(3 * p[mu]);
            lambda += 4 * a * a;
        }
        for (int64_t s = 0; s < vol; s++) {
            int c[4];
            wref_coords(s, DIMS, c);
            const double ph = p[0] * c[0] + p[1] * c[1] + p[2] * c[2] + p[3] * c[3];
            for (int i = 0; i < 3; i++) {
                psi[6 * s + 2 * i] = cos(ph) * chi[2 * i] - sin(ph) * chi[2 * i + 1];
                psi[6 * s + 2 * i + 1] = cos(ph) * chi[2 * i + 1] + sin(ph) * chi[2 * i];
            }
        }
        ref_ks_dslash(d1, fat, lng, psi, DIMS);
        ref_ks_dslash(d2, fat, lng, d1, DIMS);
        double worst = 0;
        for (int64_t i = 0; i < 6 * vol; i++) worst = fmax(worst, fabs(-d2[i] - lambda * psi[i]));
        CHECK(worst < 1e-13, "free field, momentum (%d, %d, %d, %d): -D^2 psi differs from %.6f psi by %.3g", n[k][0],
              n[k][1], n[k][2], n[k][3], lambda, worst);
        printf("  free field, n = (%d, %d, %d, %d): -D^2 = %.6f on the plane wave, max dev %.2g\n", n[k][0], n[k][1],
               n[k][2], n[k][3], lambda, worst);
    }
    free(u);
    free(fat);
    free(lng);
    free(psi);
    free(d1);
    free(d2);
}

/* HISQ: the U(3) projection (W^dag W = 1; a unitary V unchanged; c V -> (c / |c|) V), the
 * fat and long links of a unit field (9/8 + eps/8 and -(1 + eps)/24 times the phases), and
 * gauge covariance of both. */
static void test_hisq(void)
{
    uint64_t st = 0x510e527fade682d1ull;
    double V[18], W[18], Q[18], U[18], worst = 0, same = 0, scaled = 0;
    const int64_t vol = ref_volume(DIMS);
    double *u = dalloc(72 * vol);
    ref_gauge_random_su3(u, DIMS, 41);
    for (int k = 0; k < 20; k++) {
        sref_fat_link(V, u, DIMS, k, k % 4, sref_fat7_coeff);   /* a smeared link: far from unitary */
        sref_u3_project(W, V);
        wref_m3_mul(Q, W, 1, W, 0);
        for (int i = 0; i < 18; i++) worst = fmax(worst, fabs(Q[i] - ((i == 0 || i == 8 || i == 16) ? 1.0 : 0.0)));
        ref_su3_random(U, &st);
        sref_u3_project(W, U);
        same = fmax(same, max_abs_diff(W, U, 18));
        const double cr = 0.3 + 0.1 * k, ci = -0.2;   /* (cr + i ci) U -> its phase times U */
        for (int i = 0; i < 9; i++) {
            V[2 * i] = cr * U[2 * i] - ci * U[2 * i + 1];
            V[2 * i + 1] = cr * U[2 * i + 1] + ci * U[2 * i];
        }
        sref_u3_project(W, V);
        const double a = sqrt(cr * cr + ci * ci);
        for (int i = 0; i < 9; i++) {
            scaled = fmax(scaled, fabs(W[2 * i] - V[2 * i] / a));
            scaled = fmax(scaled, fabs(W[2 * i + 1] - V[2 * i + 1] / a));
        }
    }
    CHECK(worst < 1e-14, "U(3) projection: W^dag W differs from 1 by %.3g", worst);
    CHECK(same < 1e-14, "U(3) projection of an SU(3) matrix: changed by %.3g", same);
    CHECK(scaled < 1e-14, "U(3) projection of c U: differs from (c/|c|) U by %.3g", scaled);
    printf("  U(3) projection: |W^dag W - 1| %.2g, SU(3) kept to %.2g, c U -> (c/|c|) U to %.2g\n", worst, same, scaled);

    double *unit = dalloc(72 * vol), *fat = dalloc(72 * vol), *lng = dalloc(72 * vol);
    ref_gauge_unit(unit, DIMS);
    for (int k = 0; k < 2; k++) {
        const double eps = k ? 0.3 : 0.0, fv = 9.0 / 8.0 + eps / 8.0, lv = -(1.0 + eps) / 24.0;
        ref_hisq_fat_long(fat, lng, unit, DIMS, eps, BC);
        double zf[4][2], zl[4][2];
        for (int mu = 0; mu < 4; mu++) zf[mu][0] = fv, zf[mu][1] = 0, zl[mu][0] = lv, zl[mu][1] = 0;
        const double wf = worst_scalar_links(fat, zf, 1), wl = worst_scalar_links(lng, zl, 3);
        CHECK(wf < 1e-14 && wl < 1e-15, "HISQ unit field, eps %.1f: fat off %.15f eta by %.3g, long off %.15f by %.3g", eps,
              fv, wf, lv, wl);
        printf("  HISQ unit field, eps %.1f: fat %.12f, long %.12f (times the phases)    max dev %.2g / %.2g\n", eps, fv, lv,
               wf, wl);
    }

    /* covariance on a rough but not random field (1 + 0.4 X projected onto U(3), X Gaussian):
     * on Haar-random links fat7 links come out nearly singular, and the projection then
     * amplifies rounding (1e-9 here); thermalised fields are smooth like this one */
    double *u2 = dalloc(72 * vol), *g = dalloc(18 * vol), *fat2 = dalloc(72 * vol), *lng2 = dalloc(72 * vol),
           *want = dalloc(72 * vol);
    for (int64_t k = 0; k < 4 * vol; k++) {
        double M[18];
        for (int i = 0; i < 18; i++) M[i] = 0.4 * wref_rng_gaussian(&st) + ((i == 0 || i == 8 || i == 16) ? 1.0 : 0.0);
        sref_u3_project(u + 18 * k, M);
    }
    for (int64_t x = 0; x < vol; x++) ref_su3_random(g + 18 * x, &st);
    ref_gauge_transform_links(u2, u, g, DIMS);
    ref_hisq_fat_long(fat, lng, u, DIMS, 0.1, BC);
    ref_hisq_fat_long(fat2, lng2, u2, DIMS, 0.1, BC);
    for (int h = 1; h <= 3; h += 2) {
        const double dev = covariance_deviation(h == 1 ? fat : lng, h == 1 ? fat2 : lng2, g, h, want);
        CHECK(dev < 1e-12, "HISQ: gauge covariance of the %s links: deviation %.3g", h == 1 ? "fat" : "long", dev);
        printf("  HISQ: gauge covariance of the %s links: max dev %.2g\n", h == 1 ? "fat" : "long", dev);
    }
    free(u);
    free(u2);
    free(g);
    free(unit);
    free(fat);
    free(lng);
    free(fat2);
    free(lng2);
    free(want);
}

int main(void)
{
    test_unit_field();
    test_abelian_field();
    test_phased_route();
    test_gauge_covariance();
    test_operator();
    test_free_field();
    test_hisq();
    return tq_test_finish("test_staggered_reference");
}
