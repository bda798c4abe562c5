/* Tests of the per-site SU(3) functions (codelets/kernels/su3.h) and the Philox generator
 * (src/core/rng.h): known-answer vectors, distribution sanity, algebraic identities, gauge
 * compression round trips and re-unitarisation. */
#include "tq_test.h"
#include "core/rng.h"
#include "kernels/su3.h"

#include <stdint.h>

/* Largest |a_k - b_k| over n doubles. */
static double max_diff(const double *a, const double *b, int n)
{
    double d = 0;
    for (int k = 0; k < n; k++) d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

/* A 3x3 matrix of independent complex Gaussians (not unitary). */
static void gaussian_matrix(double *m, tq_rng_stream *rng)
{
    for (int k = 0; k < 18; k++) m[k] = tq_rng_stream_gaussian(rng);
}

/* Haar-random SU(3) the same way the library does it, but written out here. */
static void haar(double *u, tq_rng_stream *rng)
{
    gaussian_matrix(u, rng);
    tq_su3_reunitarize(u);
}

static void test_philox_kat(void)
{
    /* Random123 kat_vectors for philox4x32 with 10 rounds. */
    static const uint32_t vec[3][10] = {
        { 0, 0, 0, 0, 0, 0, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8 },
        { 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff,
          0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd },
        { 0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344, 0xa4093822, 0x299f31d0,
          0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1 },
    };
    for (int v = 0; v < 3; v++) {
        uint32_t out[4];
        tq_philox4x32(vec[v], vec[v] + 4, out);
        for (int k = 0; k < 4; k++)
            CHECK(out[k] == vec[v][6 + k], "KAT %d word %d: got 0x%08x, want 0x%08x", v, k,
                  (unsigned)out[k], (unsigned)vec[v][6 + k]);
    }
}

static void test_rng_stream(void)
{
    /* A stream yields the Philox blocks of counters {0, stream, index}, {1, ...}, ... */
    const uint64_t seed = 0x0123456789abcdefULL;
    tq_rng_stream s;
    tq_rng_stream_init(&s, seed, 7, 0x1122334455ULL);
    uint32_t key[2], ctr[4], block[4];
    tq_rng_key(key, seed);
    CHECK(key[0] == 0x89abcdefu && key[1] == 0x01234567u, "key split 0x%08x 0x%08x",
          (unsigned)key[0], (unsigned)key[1]);
    for (uint32_t draw = 0; draw < 3; draw++) {
        tq_rng_site_counter(ctr, draw, 7, 0x1122334455ULL);
        CHECK(ctr[2] == 0x22334455u && ctr[3] == 0x11u, "site split");
        tq_philox4x32(ctr, key, block);
        for (int k = 0; k < 4; k++) {
            uint32_t w = tq_rng_stream_u32(&s);
            CHECK(w == block[k], "stream word %d of block %u", k, (unsigned)draw);
        }
    }

    /* Neighbouring counters and keys give unrelated blocks. */
    uint32_t c0[4] = { 0, 0, 0, 0 }, c1[4] = { 0, 0, 1, 0 }, k0[2] = { 0, 0 }, k1[2] = { 0, 1 };
    uint32_t o0[4], o1[4], o2[4];
    tq_philox4x32(c0, k0, o0);
    tq_philox4x32(c1, k0, o1);
    tq_philox4x32(c0, k1, o2);
    int same01 = 0, same02 = 0;
    for (int k = 0; k < 4; k++) { same01 += o0[k] == o1[k]; same02 += o0[k] == o2[k]; }
    CHECK(same01 == 0 && same02 == 0, "neighbouring counter/key share %d/%d words", same01, same02);

    /* Uniforms stay strictly inside (0, 1) at the extreme words. */
    double lo = tq_rng_uniform(0, 0), hi = tq_rng_uniform(0xffffffffu, 0xffffffffu);
    CHECK(lo > 0.0 && hi < 1.0, "uniform range [%.17g, %.17g]", lo, hi);
    CHECK(tq_rng_uniform(0x80000u, 0) == 0.5 + 0.5 / 4503599627370496.0, "uniform midpoint");

    /* Moments: with n draws, 6 standard deviations of the estimator. */
    const int n = 200000;
    double su = 0, sg = 0, sg2 = 0, sg4 = 0;
    tq_rng_stream_init(&s, 42, 1, 0);
    for (int i = 0; i < n; i++) {
        double u = tq_rng_stream_uniform(&s);
        CHECK(u > 0.0 && u < 1.0, "uniform %g out of (0,1)", u);
        su += u;
    }
    for (int i = 0; i < n; i++) {
        double g = tq_rng_stream_gaussian(&s);
        sg += g; sg2 += g * g; sg4 += g * g * g * g;
    }
    CHECK_CLOSE(su / n, 0.5, 6 * sqrt(1.0 / 12 / n), "uniform mean");
    CHECK_CLOSE(sg / n, 0.0, 6 * sqrt(1.0 / n), "gaussian mean");
    CHECK_CLOSE(sg2 / n, 1.0, 6 * sqrt(2.0 / n), "gaussian variance");
    CHECK_CLOSE(sg4 / n, 3.0, 6 * sqrt(96.0 / n), "gaussian fourth moment");
}

static void test_algebra(void)
{
    tq_rng_stream rng;
    tq_rng_stream_init(&rng, 2024, TQ_RNG_STREAM_USER, 0);

    /* Hand-computed: A = 1 + i E_01, B = 1 + 2 E_10 -> (AB)_00 = 1 + 2i, (AB)_01 = i,
     * (AB)_10 = 2, (AB)_11 = 1. */
    double A[18], B[18], C[18];
    tq_su3_unit(A);
    TQ_SU3_IM(A, 0, 1) = 1.0;
    tq_su3_unit(B);
    TQ_SU3_RE(B, 1, 0) = 2.0;
    tq_su3_mul(C, A, B);
    double want[18] = { 1, 2, 0, 1, 0, 0,  2, 0, 1, 0, 0, 0,  0, 0, 0, 0, 1, 0 };
    CHECK(max_diff(C, want, 18) == 0.0, "hand-computed product");

    /* det diag(2, 3i, 1) = 6i; Tr = 3 + 3i */
    double D[18] = { 0 }, det[2], tr[2];
    D[0] = 2.0; D[9] = 3.0; D[16] = 1.0;
    tq_su3_det(det, D);
    tq_su3_trace(tr, D);
    CHECK(det[0] == 0.0 && det[1] == 6.0, "det diag = %g%+gi", det[0], det[1]);
    CHECK(tr[0] == 3.0 && tr[1] == 3.0, "trace diag = %g%+gi", tr[0], tr[1]);

    for (int trial = 0; trial < 200; trial++) {
        double a[18], b[18], ab[18], t1[18], t2[18], bd[18], ad[18];
        gaussian_matrix(a, &rng);
        gaussian_matrix(b, &rng);
        tq_su3_mul(ab, a, b);
        tq_su3_adjoint(ad, a);
        tq_su3_adjoint(bd, b);

        /* a b^dag and a^dag b agree with explicit adjoints */
        tq_su3_mul_adj(t1, a, b);
        tq_su3_mul(t2, a, bd);
        CHECK(max_diff(t1, t2, 18) < 1e-13, "mul_adj vs mul(adjoint)");
        tq_su3_adj_mul(t1, a, b);
        tq_su3_mul(t2, ad, b);
        CHECK(max_diff(t1, t2, 18) < 1e-13, "adj_mul vs mul(adjoint)");

        /* (ab)^dag = b^dag a^dag; adjoint twice is the identity */
        tq_su3_adjoint(t1, ab);
        tq_su3_mul(t2, bd, ad);
        CHECK(max_diff(t1, t2, 18) < 1e-13, "(ab)^dag = b^dag a^dag");
        tq_su3_adjoint(t1, ad);
        CHECK(max_diff(t1, a, 18) == 0.0, "adjoint twice");

        /* det(ab) = det a det b; Tr(ab) = Tr(ba); Re Tr(a b^dag) */
        double da[2], db[2], dab[2], trab[2], trba[2], ba[18];
        tq_su3_det(da, a);
        tq_su3_det(db, b);
        tq_su3_det(dab, ab);
        CHECK_CLOSE(dab[0], da[0] * db[0] - da[1] * db[1], 1e-12, "Re det(ab)");
        CHECK_CLOSE(dab[1], da[0] * db[1] + da[1] * db[0], 1e-12, "Im det(ab)");
        tq_su3_mul(ba, b, a);
        tq_su3_trace(trab, ab);
        tq_su3_trace(trba, ba);
        CHECK(fabs(trab[0] - trba[0]) < 1e-13 && fabs(trab[1] - trba[1]) < 1e-13, "Tr ab = Tr ba");
        tq_su3_mul_adj(t1, a, b);
        tq_su3_trace(tr, t1);
        CHECK_CLOSE(tq_su3_re_trace_mul_adj(a, b), tr[0], 1e-13, "re_trace_mul_adj");

        /* Output may alias an input. */
        memcpy(t1, a, sizeof t1);
        tq_su3_mul(t1, t1, b);
        CHECK(max_diff(t1, ab, 18) == 0.0, "mul with c == a");
        memcpy(t1, b, sizeof t1);
        tq_su3_mul(t1, a, t1);
        CHECK(max_diff(t1, ab, 18) == 0.0, "mul with c == b");

        /* Matrix-vector products agree with the matrix product on column 0 of b. */
        double v[6], w[6], wd[6];
        for (int i = 0; i < 3; i++) { v[2 * i] = TQ_SU3_RE(b, i, 0); v[2 * i + 1] = TQ_SU3_IM(b, i, 0); }
        tq_su3_mul_vec(w, a, v);
        tq_su3_adj_mul_vec(wd, a, v);
        tq_su3_adj_mul(t2, a, b);
        for (int i = 0; i < 3; i++) {
            CHECK(fabs(w[2 * i] - TQ_SU3_RE(ab, i, 0)) < 1e-13 && fabs(w[2 * i + 1] - TQ_SU3_IM(ab, i, 0)) < 1e-13, "mul_vec");
            CHECK(fabs(wd[2 * i] - TQ_SU3_RE(t2, i, 0)) < 1e-13 && fabs(wd[2 * i + 1] - TQ_SU3_IM(t2, i, 0)) < 1e-13, "adj_mul_vec");
        }

        /* For SU(3): U U^dag = U^dag U = 1, det U = 1 */
        double u[18], one[18], ud[2];
        haar(u, &rng);
        tq_su3_unit(one);
        tq_su3_mul_adj(t1, u, u);
        tq_su3_adj_mul(t2, u, u);
        CHECK(max_diff(t1, one, 18) < 1e-14 && max_diff(t2, one, 18) < 1e-14, "U U^dag = U^dag U = 1");
        tq_su3_det(ud, u);
        CHECK(fabs(ud[0] - 1.0) < 1e-14 && fabs(ud[1]) < 1e-14, "det U = %.17g%+.17gi", ud[0], ud[1]);
        CHECK(tq_su3_unitarity_deviation(u) < 1e-14, "unitarity deviation %g", tq_su3_unitarity_deviation(u));
    }

    double bad[18];
    tq_su3_unit(bad);
    bad[5] = NAN;
    CHECK(isinf(tq_su3_unitarity_deviation(bad)), "NaN link must not pass a tolerance");
}

static void test_reunitarize(void)
{
    tq_rng_stream rng;
    tq_rng_stream_init(&rng, 77, TQ_RNG_STREAM_USER, 1);
    double worst_after = 0, worst_before = 1e300, worst_move = 0, worst_fixed = 0;
    for (int trial = 0; trial < 1000; trial++) {
        double u[18], v[18], w[18];
        haar(u, &rng);
        for (int k = 0; k < 18; k++) v[k] = u[k] + 1e-4 * tq_rng_stream_gaussian(&rng);
        worst_before = fmin(worst_before, tq_su3_unitarity_deviation(v));
        tq_su3_reunitarize(v);
        worst_after = fmax(worst_after, tq_su3_unitarity_deviation(v));
        worst_move = fmax(worst_move, max_diff(u, v, 18));
        /* An SU(3) matrix is (nearly) a fixed point. */
        memcpy(w, u, sizeof w);
        tq_su3_reunitarize(w);
        worst_fixed = fmax(worst_fixed, max_diff(u, w, 18));
    }
    CHECK(worst_before > 1e-6, "perturbation too small to test: %g", worst_before);
    CHECK(worst_after < 1e-14, "after reunitarize: deviation %g", worst_after);
    CHECK(worst_move < 1e-2, "reunitarize moved a nearby matrix by %g", worst_move);
    CHECK(worst_fixed < 1e-14, "reunitarize changed an SU(3) matrix by %g", worst_fixed);

    /* A matrix far from SU(3) also ends up in SU(3) (used on Gaussian matrices). */
    double g[18];
    gaussian_matrix(g, &rng);
    tq_su3_reunitarize(g);
    CHECK(tq_su3_unitarity_deviation(g) < 1e-14, "Gaussian -> SU(3): %g", tq_su3_unitarity_deviation(g));
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static void test_compression(void)
{
    tq_rng_stream rng;
    tq_rng_stream_init(&rng, 99, TQ_RNG_STREAM_USER, 2);
    /* Products of two Haar matrices: Haar too, and their third row was not made by the
     * cross product that recon 12 uses. */
    enum { n = 100000 };
    static double err8[n];
    double err12 = 0, dev8 = 0;
    for (int trial = 0; trial < n; trial++) {
        double v[18], u[18], p12[12], p8[8], r[18];
        haar(v, &rng);
        haar(u, &rng);
        tq_su3_mul(u, u, v);
        tq_su3_pack_12(p12, u);
        tq_su3_reconstruct_12(r, p12);
        err12 = fmax(err12, max_diff(u, r, 18));
        tq_su3_pack_8(p8, u);
        tq_su3_reconstruct_8(r, p8);
        err8[trial] = max_diff(u, r, 18);
        dev8 = fmax(dev8, tq_su3_unitarity_deviation(r));
    }
    qsort(err8, n, sizeof err8[0], compare_doubles);
    double median8 = err8[n / 2], p999_8 = err8[n - n / 1000], max8 = err8[n - 1];
    printf("recon over %d Haar matrices: max error 12: %.3g; 8: median %.3g, 99.9%% %.3g, max %.3g\n",
           n, err12, median8, p999_8, max8);
    CHECK(err12 < 1e-14, "recon 12 round trip error %g", err12);
    /* Recon 8 takes |a1| and |c1| as square roots of 1 - |a2|^2 - |a3|^2 and
     * 1 - |a1|^2 - |b1|^2, so the input's rounding-level non-unitarity (~1e-16) grows
     * like 1/|c1| in the rare matrices with a tiny |c1|: a tail, not the typical error. */
    CHECK(median8 < 1e-15, "recon 8 median error %g", median8);
    CHECK(p999_8 < 2e-14, "recon 8 99.9th percentile error %g", p999_8);
    CHECK(max8 < 1e-12, "recon 8 max error %g", max8);
    CHECK(dev8 < 1e-12, "recon 8 unitarity %g", dev8);

    /* Near-unit links (|a1| close to 1, the weak-field case): still accurate. */
    double worst_near = 0;
    for (int trial = 0; trial < 1000; trial++) {
        double u[18], p8[8], r[18];
        tq_su3_unit(u);
        for (int k = 0; k < 12; k++) u[k] += 1e-6 * tq_rng_stream_gaussian(&rng);
        tq_su3_reunitarize(u);
        tq_su3_pack_8(p8, u);
        tq_su3_reconstruct_8(r, p8);
        worst_near = fmax(worst_near, max_diff(u, r, 18));
    }
    CHECK(worst_near < 1e-13, "recon 8 of near-unit links: error %g", worst_near);

    /* a = (e^{i theta}, 0, 0) cannot carry rows b, c; unit and diag(z, 1, z^*) come back. */
    double one[18], p8[8], r[18];
    tq_su3_unit(one);
    tq_su3_pack_8(p8, one);
    tq_su3_reconstruct_8(r, p8);
    CHECK(max_diff(r, one, 18) == 0.0, "recon 8 of the unit matrix: error %g", max_diff(r, one, 18));
    double z[18] = { 0 };
    z[0] = cos(0.7); z[1] = sin(0.7); z[8] = 1.0; z[16] = cos(0.7); z[17] = -sin(0.7);
    tq_su3_pack_8(p8, z);
    tq_su3_reconstruct_8(r, p8);
    CHECK(max_diff(r, z, 18) < 1e-15, "recon 8 of diag(z,1,z*): error %g", max_diff(r, z, 18));
}

int main(void)
{
    test_philox_kat();
    test_rng_stream();
    test_algebra();
    test_reunitarize();
    test_compression();
    return tq_test_finish("test_su3");
}
