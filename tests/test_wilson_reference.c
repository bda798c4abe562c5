/* Self-test of the host reference Wilson / Wilson-clover operators (tests/wilson_reference.h):
 * gamma algebra, gamma_5-hermiticity, adjointness, even-odd structure, boundary conditions,
 * free-field plane waves, gauge covariance, clover Hermiticity / chirality, and the sign of
 * the clover term (tree-level O(a) improvement on a smooth background). Uses no library code. */
#include "tq_test.h"
#include "../reference/wilson_reference.h"

#include <stdint.h>

static const double PI = 3.14159265358979323846;

static double *dalloc(int64_t n)
{
    double *p = (double *)calloc((size_t)n, sizeof(double));
    if (!p) { fprintf(stderr, "out of memory\n"); exit(99); }
    return p;
}

/* |a - b| / |b| over n reals */
static double rel_diff(const double *a, const double *b, int64_t n)
{
    double d = ref_vdiff2(a, b, n), nb = ref_vnorm2(b, n);
    return sqrt(d / (nb > 0 ? nb : 1.0));
}

static double max_abs_diff(const double *a, const double *b, int64_t n)
{
    double d = 0;
    for (int64_t k = 0; k < n; k++) d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

/* ----------------------------------------------------------------------------------------- */

static void test_gamma(void)
{
    double g[5][4][4][2];
    for (int mu = 0; mu < 5; mu++) ref_gamma_matrix(mu, g[mu]);

    /* {gamma_mu, gamma_nu} = 2 delta_{mu nu} for mu, nu in 0..4 (gamma_5 included) */
    for (int mu = 0; mu < 5; mu++)
        for (int nu = 0; nu < 5; nu++) {
            double ab[4][4][2], ba[4][4][2], dev = 0;
            wref_m4_mul(ab, g[mu], g[nu]);
            wref_m4_mul(ba, g[nu], g[mu]);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    double want = (mu == nu && i == j) ? 2.0 : 0.0;
                    dev = fmax(dev, fabs(ab[i][j][0] + ba[i][j][0] - want));
                    dev = fmax(dev, fabs(ab[i][j][1] + ba[i][j][1]));
                }
            CHECK(dev == 0.0, "{gamma_%d, gamma_%d} deviates from 2 delta by %g", mu, nu, dev);
        }

    /* gamma_5 = g0 g1 g2 g3 = diag(1, 1, -1, -1) */
    double dev5 = 0;
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double want = (i != j) ? 0.0 : (i < 2 ? 1.0 : -1.0);
            dev5 = fmax(dev5, fabs(g[4][i][j][0] - want));
            dev5 = fmax(dev5, fabs(g[4][i][j][1]));
        }
    CHECK(dev5 == 0.0, "gamma_5 differs from diag(1,1,-1,-1) by %g", dev5);

    /* Hermitian */
    for (int mu = 0; mu < 5; mu++) {
        double dev = 0;
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                dev = fmax(dev, fabs(g[mu][i][j][0] - g[mu][j][i][0]));
                dev = fmax(dev, fabs(g[mu][i][j][1] + g[mu][j][i][1]));
            }
        CHECK(dev == 0.0, "gamma_%d not Hermitian (%g)", mu, dev);
    }

    /* sigma_{mu nu} Hermitian, antisymmetric in (mu, nu), nonzero for mu != nu */
    for (int mu = 0; mu < 4; mu++)
        for (int nu = 0; nu < 4; nu++) {
            double s[4][4][2], t[4][4][2], herm = 0, anti = 0, norm = 0;
            ref_sigma_matrix(mu, nu, s);
            ref_sigma_matrix(nu, mu, t);
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++) {
                    herm = fmax(herm, fabs(s[i][j][0] - s[j][i][0]) + fabs(s[i][j][1] + s[j][i][1]));
                    anti = fmax(anti, fabs(s[i][j][0] + t[i][j][0]) + fabs(s[i][j][1] + t[i][j][1]));
                    norm += s[i][j][0] * s[i][j][0] + s[i][j][1] * s[i][j][1];
                }
            CHECK(herm == 0.0 && anti == 0.0, "sigma_%d%d: herm %g, antisym %g", mu, nu, herm, anti);
            CHECK(mu == nu ? norm == 0.0 : fabs(norm - 4.0) < 1e-15, "|sigma_%d%d|^2 = %g", mu, nu, norm);
        }

    /* ref_gamma_mul agrees with the matrices: gamma_mu^2 = 1 and g0(g1(g2(g3 psi))) = g5 psi */
    double psi[24], a[24], b[24], c[24], d[24];
    ref_spinor_random(psi, 1, 11);
    for (int mu = 0; mu < 5; mu++) {
        ref_gamma_mul(mu, psi, a);
        ref_gamma_mul(mu, a, b);
        CHECK(max_abs_diff(b, psi, 24) < 1e-15, "gamma_%d^2 psi != psi", mu);
        CHECK(max_abs_diff(a, psi, 24) > 0.1, "gamma_%d psi == psi", mu);
    }
    ref_gamma_mul(3, psi, a);
    ref_gamma_mul(2, a, b);
    ref_gamma_mul(1, b, c);
    ref_gamma_mul(0, c, d);
    ref_gamma_mul(4, psi, a);
    CHECK(max_abs_diff(a, d, 24) < 1e-15, "gamma_5 psi differs from g0 g1 g2 g3 psi");
    for (int s = 0; s < 4; s++)
        for (int k = 0; k < 6; k++)
            CHECK(a[s * 6 + k] == (s < 2 ? 1.0 : -1.0) * psi[s * 6 + k], "gamma_5 psi spin %d", s);
}

/* Generated links are SU(3) and not trivial. */
static void test_su3_random(void)
{
    const int dims[4] = {2, 2, 2, 2};
    int64_t nl = ref_volume(dims) * 4;
    double *u = dalloc(18 * nl);
    ref_gauge_random_su3(u, dims, 5);
    double unit_dev = 0, det_dev = 0, offdiag = 0;
    for (int64_t l = 0; l < nl; l++) {
        const double *m = u + 18 * l;
        double p[18];
        wref_m3_mul(p, m, 0, m, 1); /* U U^dag */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                unit_dev = fmax(unit_dev, fabs(p[(i * 3 + j) * 2] - (i == j)));
                unit_dev = fmax(unit_dev, fabs(p[(i * 3 + j) * 2 + 1]));
                if (i != j) offdiag = fmax(offdiag, hypot(m[(i * 3 + j) * 2], m[(i * 3 + j) * 2 + 1]));
            }
        /* det by cofactor expansion along row 0 */
        double dr = 0, di = 0;
        for (int j = 0; j < 3; j++) {
            int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
            /* minor = m1j1 m2j2 - m1j2 m2j1 */
            double ar = m[(3 + j1) * 2], ai = m[(3 + j1) * 2 + 1], br = m[(6 + j2) * 2], bi = m[(6 + j2) * 2 + 1];
            double cr = m[(3 + j2) * 2], ci = m[(3 + j2) * 2 + 1], er = m[(6 + j1) * 2], ei = m[(6 + j1) * 2 + 1];
            double mr = ar * br - ai * bi - (cr * er - ci * ei);
            double mi = ar * bi + ai * br - (cr * ei + ci * er);
            dr += m[j * 2] * mr - m[j * 2 + 1] * mi;
            di += m[j * 2] * mi + m[j * 2 + 1] * mr;
        }
        det_dev = fmax(det_dev, fabs(dr - 1) + fabs(di));
    }
    CHECK(unit_dev < 1e-14, "U U^dag - 1 = %g", unit_dev);
    CHECK(det_dev < 1e-14, "det U - 1 = %g", det_dev);
    CHECK(offdiag > 0.3, "random links look trivial (max off-diagonal %g)", offdiag);
    free(u);
}

/* ----------------------------------------------------------------------------------------- */

static const int DIMS[4] = {4, 4, 4, 6};
static const double BC_AP[4] = {1, 1, 1, -1};

static void test_gamma5_hermiticity_and_adjoint(void)
{
    int64_t vol = ref_volume(DIMS), n = 24 * vol;
    double *u = dalloc(72 * vol), *psi = dalloc(n), *chi = dalloc(n), *t1 = dalloc(n), *t2 = dalloc(n),
           *t3 = dalloc(n);
    ref_gauge_random_su3(u, DIMS, 1);
    ref_spinor_random(psi, vol, 2);
    ref_spinor_random(chi, vol, 3);

    for (int dag = 0; dag < 2; dag++) {
        /* gamma_5 D gamma_5 psi = D^dag psi (and the reverse) */
        ref_gamma_mul_field(4, psi, t1, vol);
        ref_wilson_dslash(t2, u, t1, DIMS, BC_AP, dag, 2);
        ref_gamma_mul_field(4, t2, t1, vol);
        ref_wilson_dslash(t3, u, psi, DIMS, BC_AP, !dag, 2);
        double r = rel_diff(t1, t3, n);
        CHECK(r < 1e-14, "gamma_5 D%s gamma_5 != D%s: rel %g", dag ? "^dag" : "", dag ? "" : "^dag", r);
        CHECK(rel_diff(t2, t3, n) > 0.1, "D is gamma_5-commuting?");

        /* same for M = 1 - kappa D and the clover matrix */
        ref_gamma_mul_field(4, psi, t1, vol);
        ref_wilson_mat(t2, u, t1, DIMS, BC_AP, 0.137, dag);
        ref_gamma_mul_field(4, t2, t1, vol);
        ref_wilson_mat(t3, u, psi, DIMS, BC_AP, 0.137, !dag);
        r = rel_diff(t1, t3, n);
        CHECK(r < 1e-14, "gamma_5 M gamma_5 != M^dag (dagger %d): rel %g", dag, r);

        ref_gamma_mul_field(4, psi, t1, vol);
        ref_clover_mat(t2, u, t1, DIMS, BC_AP, 0.137, 1.6, dag);
        ref_gamma_mul_field(4, t2, t1, vol);
        ref_clover_mat(t3, u, psi, DIMS, BC_AP, 0.137, 1.6, !dag);
        r = rel_diff(t1, t3, n);
        CHECK(r < 1e-14, "gamma_5 M_clover gamma_5 != M_clover^dag (dagger %d): rel %g", dag, r);
    }

    /* <chi, D psi> = <D^dag chi, psi>, and the same for the clover matrix */
    for (int op = 0; op < 2; op++) {
        if (op == 0) {
            ref_wilson_dslash(t1, u, psi, DIMS, BC_AP, 0, 2);
            ref_wilson_dslash(t2, u, chi, DIMS, BC_AP, 1, 2);
        } else {
            ref_clover_mat(t1, u, psi, DIMS, BC_AP, 0.125, 1.9, 0);
            ref_clover_mat(t2, u, chi, DIMS, BC_AP, 0.125, 1.9, 1);
        }
        double lr = ref_cdot_re(chi, t1, n), li = ref_cdot_im(chi, t1, n);
        double rr = ref_cdot_re(t2, psi, n), ri = ref_cdot_im(t2, psi, n);
        double scale = sqrt(ref_vnorm2(chi, n) * ref_vnorm2(t1, n));
        CHECK(fabs(lr - rr) < 1e-12 * scale && fabs(li - ri) < 1e-12 * scale,
              "%s: <chi, D psi> = (%.15g, %.15g), <D^dag chi, psi> = (%.15g, %.15g), scale %g",
              op ? "clover" : "dslash", lr, li, rr, ri, scale);
        CHECK(fabs(li) > 1e-3 * scale, "inner product is real: test too weak");
    }
    free(u); free(psi); free(chi); free(t1); free(t2); free(t3);
}

/* Even-odd structure: dslash to parity p reads only the other parity, writes 0 on it, and the
 * two halves add up to the full operator. */
static void test_parity(void)
{
    int64_t vol = ref_volume(DIMS), n = 24 * vol;
    double *u = dalloc(72 * vol), *psi = dalloc(n), *junk = dalloc(n), *in2 = dalloc(n), *full = dalloc(n),
           *half[2] = {dalloc(n), dalloc(n)}, *o2 = dalloc(n);
    ref_gauge_random_su3(u, DIMS, 7);
    ref_spinor_random(psi, vol, 8);
    ref_spinor_random(junk, vol, 9);
    for (int dag = 0; dag < 2; dag++) {
        ref_wilson_dslash(full, u, psi, DIMS, BC_AP, dag, 2);
        for (int p = 0; p < 2; p++) {
            ref_wilson_dslash(half[p], u, psi, DIMS, BC_AP, dag, p);
            /* garbage on the output parity of the input: no change */
            memcpy(in2, psi, sizeof(double) * n);
            for (int64_t s = 0; s < vol; s++)
                if (ref_site_parity(s, DIMS) == p)
                    for (int k = 0; k < 24; k++) in2[24 * s + k] = 1e3 * junk[24 * s + k];
            ref_wilson_dslash(o2, u, in2, DIMS, BC_AP, dag, p);
            CHECK(max_abs_diff(o2, half[p], n) == 0.0, "parity %d dagger %d reads its own parity", p, dag);
            /* changing the other parity does change it */
            memcpy(in2, psi, sizeof(double) * n);
            for (int64_t s = 0; s < vol; s++)
                if (ref_site_parity(s, DIMS) != p)
                    for (int k = 0; k < 24; k++) in2[24 * s + k] = junk[24 * s + k];
            ref_wilson_dslash(o2, u, in2, DIMS, BC_AP, dag, p);
            CHECK(rel_diff(o2, half[p], n) > 0.1, "parity %d output ignores the other parity", p);
            /* zero on the other parity, nonzero on its own */
            double zero_other = 0, own = 0;
            for (int64_t s = 0; s < vol; s++)
                for (int k = 0; k < 24; k++) {
                    if (ref_site_parity(s, DIMS) != p) zero_other = fmax(zero_other, fabs(half[p][24 * s + k]));
                    else own = fmax(own, fabs(half[p][24 * s + k]));
                }
            CHECK(zero_other == 0.0 && own > 0.1, "parity %d: other parity %g, own %g", p, zero_other, own);
        }
        for (int64_t k = 0; k < n; k++) o2[k] = half[0][k] + half[1][k];
        CHECK(max_abs_diff(o2, full, n) == 0.0, "even + odd halves != full dslash (dagger %d)", dag);
    }

    /* clover_apply on one parity = full application restricted to it; aliasing allowed */
    ref_clover_apply(full, u, psi, DIMS, 0.13, 1.5, 2);
    for (int p = 0; p < 2; p++) {
        ref_clover_apply(half[p], u, psi, DIMS, 0.13, 1.5, p);
        for (int64_t s = 0; s < vol; s++) {
            int own = ref_site_parity(s, DIMS) == p;
            double d = 0;
            for (int k = 0; k < 24; k++) d = fmax(d, fabs(half[p][24 * s + k] - (own ? full[24 * s + k] : 0.0)));
            if (d != 0.0) { CHECK(d == 0.0, "clover_apply parity %d site %ld: %g", p, (long)s, d); break; }
        }
    }
    memcpy(in2, psi, sizeof(double) * n);
    ref_clover_apply(in2, u, in2, DIMS, 0.13, 1.5, 2);
    CHECK(max_abs_diff(in2, full, n) == 0.0, "clover_apply in place differs");

    free(u); free(psi); free(junk); free(in2); free(full); free(half[0]); free(half[1]); free(o2);
}

/* Boundary conditions: bc = -1 in direction mu is the same as periodic bc with the links
 * U_mu(x) on the last slice x_mu = L_mu - 1 negated. */
static void test_boundary_conditions(void)
{
    int64_t vol = ref_volume(DIMS), n = 24 * vol;
    double *u = dalloc(72 * vol), *u2 = dalloc(72 * vol), *psi = dalloc(n), *a = dalloc(n), *b = dalloc(n),
           *c = dalloc(n);
    ref_gauge_random_su3(u, DIMS, 21);
    ref_spinor_random(psi, vol, 22);
    const double bcs[3][4] = { {1, 1, 1, -1}, {-1, 1, 1, 1}, {1, -1, -1, -1} };
    const double per[4] = {1, 1, 1, 1};
    for (int i = 0; i < 3; i++) {
        memcpy(u2, u, sizeof(double) * 72 * vol);
        for (int64_t s = 0; s < vol; s++) {
            int x[4];
            wref_coords(s, DIMS, x);
            for (int mu = 0; mu < 4; mu++)
                if (bcs[i][mu] < 0 && x[mu] == DIMS[mu] - 1)
                    for (int k = 0; k < 18; k++) u2[(s * 4 + mu) * 18 + k] = -u[(s * 4 + mu) * 18 + k];
        }
        for (int dag = 0; dag < 2; dag++) {
            ref_wilson_dslash(a, u, psi, DIMS, bcs[i], dag, 2);
            ref_wilson_dslash(b, u2, psi, DIMS, per, dag, 2);
            ref_wilson_dslash(c, u, psi, DIMS, per, dag, 2);
            double r = rel_diff(a, b, n);
            CHECK(r < 1e-15, "bc set %d dagger %d: rel %g", i, dag, r);
            CHECK(rel_diff(a, c, n) > 0.01, "bc set %d has no effect", i);
        }
    }
    free(u); free(u2); free(psi); free(a); free(b); free(c);
}

/* Free field: D e^{ipx} u = e^{ipx} sum_mu (2 cos p_mu - 2 i sin p_mu gamma_mu) u
 * (dagger: + 2 i sin), p_mu = (2 pi n_mu + pi [bc_mu = -1]) / L_mu. */
static void test_free_field(void)
{
    int64_t vol = ref_volume(DIMS), n = 24 * vol;
    double *u = dalloc(72 * vol), *psi = dalloc(n), *out = dalloc(n), *want = dalloc(n);
    ref_gauge_unit(u, DIMS);
    const int mom[5][4] = { {0, 0, 0, 0}, {1, 0, 0, 0}, {1, 2, 3, 1}, {3, 1, 0, 5}, {0, 3, 2, 2} };
    const double bcs[2][4] = { {1, 1, 1, -1}, {-1, 1, -1, 1} };
    for (int ib = 0; ib < 2; ib++)
        for (int im = 0; im < 5; im++) {
            double p[4], us[24], w[24], gu[24];
            for (int mu = 0; mu < 4; mu++)
                p[mu] = (2 * PI * mom[im][mu] + (bcs[ib][mu] < 0 ? PI : 0.0)) / DIMS[mu];
            ref_spinor_random(us, 1, 100 + im);
            for (int64_t s = 0; s < vol; s++) {
                int x[4];
                wref_coords(s, DIMS, x);
                double ph = p[0] * x[0] + p[1] * x[1] + p[2] * x[2] + p[3] * x[3];
                double cr = cos(ph), ci = sin(ph);
                for (int k = 0; k < 12; k++) {
                    psi[24 * s + 2 * k] = cr * us[2 * k] - ci * us[2 * k + 1];
                    psi[24 * s + 2 * k + 1] = cr * us[2 * k + 1] + ci * us[2 * k];
                }
            }
            for (int dag = 0; dag < 2; dag++) {
                /* w = sum_mu (2 cos p - (+/-) 2 i sin p gamma_mu) u */
                double sg = dag ? -1.0 : 1.0;
                memset(w, 0, sizeof w);
                for (int mu = 0; mu < 4; mu++) {
                    ref_gamma_mul(mu, us, gu);
                    double c2 = 2 * cos(p[mu]), s2 = 2 * sin(p[mu]) * sg;
                    for (int k = 0; k < 12; k++) {
                        /* -i s2 (gr + i gi) = s2 gi - i s2 gr */
                        w[2 * k] += c2 * us[2 * k] + s2 * gu[2 * k + 1];
                        w[2 * k + 1] += c2 * us[2 * k + 1] - s2 * gu[2 * k];
                    }
                }
                for (int64_t s = 0; s < vol; s++) {
                    int x[4];
                    wref_coords(s, DIMS, x);
                    double ph = p[0] * x[0] + p[1] * x[1] + p[2] * x[2] + p[3] * x[3];
                    double cr = cos(ph), ci = sin(ph);
                    for (int k = 0; k < 12; k++) {
                        want[24 * s + 2 * k] = cr * w[2 * k] - ci * w[2 * k + 1];
                        want[24 * s + 2 * k + 1] = cr * w[2 * k + 1] + ci * w[2 * k];
                    }
                }
                ref_wilson_dslash(out, u, psi, DIMS, bcs[ib], dag, 2);
                double scale = 0;
                for (int64_t k = 0; k < n; k++) scale = fmax(scale, fabs(want[k]));
                double d = max_abs_diff(out, want, n);
                CHECK(d < 1e-12 * scale, "plane wave n=(%d,%d,%d,%d) bc set %d dagger %d: max diff %g (scale %g)",
                      mom[im][0], mom[im][1], mom[im][2], mom[im][3], ib, dag, d, scale);
            }
        }
    free(u); free(psi); free(out); free(want);
}

/* Gauge covariance: D[U'] g psi = g D[U] psi, same for A and the clover matrix. */
static void test_gauge_covariance(void)
{
    int64_t vol = ref_volume(DIMS), n = 24 * vol;
    double *u = dalloc(72 * vol), *u2 = dalloc(72 * vol), *g = dalloc(18 * vol), *psi = dalloc(n),
           *psi2 = dalloc(n), *a = dalloc(n), *b = dalloc(n), *c = dalloc(n);
    ref_gauge_random_su3(u, DIMS, 31);
    {
        uint64_t st = 32;
        for (int64_t s = 0; s < vol; s++) ref_su3_random(g + 18 * s, &st);
    }
    ref_gauge_transform_links(u2, u, g, DIMS);
    ref_spinor_random(psi, vol, 33);
    ref_gauge_transform_spinor(psi2, psi, g, vol);
    CHECK(rel_diff(u2, u, 72 * vol) > 0.1, "gauge transformation trivial");

    for (int op = 0; op < 4; op++) {
        for (int dag = 0; dag < 2; dag++) {
            const char *name = "";
            switch (op) {
            case 0: /* dslash, both parities and full */
                name = "dslash";
                ref_wilson_dslash(a, u2, psi2, DIMS, BC_AP, dag, 2);
                ref_wilson_dslash(c, u, psi, DIMS, BC_AP, dag, 2);
                break;
            case 1:
                name = "dslash parity 1";
                ref_wilson_dslash(a, u2, psi2, DIMS, BC_AP, dag, 1);
                ref_wilson_dslash(c, u, psi, DIMS, BC_AP, dag, 1);
                break;
            case 2:
                name = "clover A";
                ref_clover_apply(a, u2, psi2, DIMS, 0.14, 1.3, 2);
                ref_clover_apply(c, u, psi, DIMS, 0.14, 1.3, 2);
                break;
            case 3:
                name = "clover matrix";
                ref_clover_mat(a, u2, psi2, DIMS, BC_AP, 0.14, 1.3, dag);
                ref_clover_mat(c, u, psi, DIMS, BC_AP, 0.14, 1.3, dag);
                break;
            }
            ref_gauge_transform_spinor(b, c, g, vol);
            double r = rel_diff(a, b, n);
            CHECK(r < 1e-13, "%s (dagger %d) not gauge covariant: rel %g", name, dag, r);
            CHECK(rel_diff(a, c, n) > 0.1, "%s: gauge covariance test trivial", name);
        }
    }
    free(u); free(u2); free(g); free(psi); free(psi2); free(a); free(b); free(c);
}

/* Clover matrix properties at every site. */
static void test_clover_site(void)
{
    int64_t vol = ref_volume(DIMS), n = 24 * vol;
    double *u = dalloc(72 * vol), *psi = dalloc(n), *a = dalloc(n), *b = dalloc(n);
    double A[288];

    /* unit links: A = 1 exactly */
    ref_gauge_unit(u, DIMS);
    double dev = 0;
    for (int64_t s = 0; s < vol; s++) {
        ref_clover_site(A, u, DIMS, s, 0.13, 1.7);
        for (int r = 0; r < 12; r++)
            for (int c = 0; c < 12; c++) {
                dev = fmax(dev, fabs(A[(r * 12 + c) * 2] - (r == c)));
                dev = fmax(dev, fabs(A[(r * 12 + c) * 2 + 1]));
            }
    }
    CHECK(dev == 0.0, "A != 1 on unit links (%g)", dev);

    /* random links: Hermitian, trace 12, commutes with gamma_5 (chiral blocks), nontrivial */
    ref_gauge_random_su3(u, DIMS, 41);
    double g5[4][4][2];
    ref_gamma_matrix(4, g5);
    double herm = 0, chiral = 0, comm = 0, tr = 0, nontriv = 0;
    for (int64_t s = 0; s < vol; s++) {
        ref_clover_site(A, u, DIMS, s, 0.13, 1.7);
        double tre = 0, tim = 0;
        for (int r = 0; r < 12; r++) {
            tre += A[(r * 12 + r) * 2];
            tim += A[(r * 12 + r) * 2 + 1];
            for (int c = 0; c < 12; c++) {
                herm = fmax(herm, fabs(A[(r * 12 + c) * 2] - A[(c * 12 + r) * 2]));
                herm = fmax(herm, fabs(A[(r * 12 + c) * 2 + 1] + A[(c * 12 + r) * 2 + 1]));
                if ((r / 3 < 2) != (c / 3 < 2))
                    chiral = fmax(chiral, hypot(A[(r * 12 + c) * 2], A[(r * 12 + c) * 2 + 1]));
                nontriv = fmax(nontriv, hypot(A[(r * 12 + c) * 2] - (r == c), A[(r * 12 + c) * 2 + 1]));
                /* (g5 A - A g5)[r][c], gamma_5 as a generic 4x4 matrix (x) 1_color */
                double cr = 0, ci = 0;
                for (int t = 0; t < 4; t++) {
                    int rr = t * 3 + r % 3, cc = t * 3 + c % 3;
                    double g1r = g5[r / 3][t][0], g1i = g5[r / 3][t][1];
                    double a1r = A[(rr * 12 + c) * 2], a1i = A[(rr * 12 + c) * 2 + 1];
                    double g2r = g5[t][c / 3][0], g2i = g5[t][c / 3][1];
                    double a2r = A[(r * 12 + cc) * 2], a2i = A[(r * 12 + cc) * 2 + 1];
                    cr += g1r * a1r - g1i * a1i - (a2r * g2r - a2i * g2i);
                    ci += g1r * a1i + g1i * a1r - (a2r * g2i + a2i * g2r);
                }
                comm = fmax(comm, hypot(cr, ci));
            }
        }
        tr = fmax(tr, fabs(tre - 12) + fabs(tim));
    }
    CHECK(herm < 1e-15, "A not Hermitian (%g)", herm);
    CHECK(chiral < 1e-15, "A mixes chiralities (%g)", chiral);
    CHECK(comm < 1e-15, "[gamma_5, A] = %g", comm);
    CHECK(tr < 1e-13, "Tr A != 12 (%g)", tr);
    CHECK(nontriv > 0.05, "A - 1 too small on random links (%g)", nontriv);

    /* A - 1 is linear in kappa c_sw; c_sw = 0 gives the Wilson matrix */
    ref_spinor_random(psi, vol, 42);
    double *a1 = dalloc(n);
    ref_clover_apply(a, u, psi, DIMS, 0.1, 1.0, 2);
    ref_clover_apply(b, u, psi, DIMS, 0.05, 4.0, 2);
    ref_clover_apply(a1, u, psi, DIMS, 0.1, 0.0, 2);
    for (int64_t k = 0; k < n; k++) b[k] = psi[k] + 0.5 * (b[k] - psi[k]);
    CHECK(rel_diff(a, b, n) < 1e-14, "A not linear in kappa c_sw");
    CHECK(max_abs_diff(a1, psi, n) == 0.0, "A != 1 at c_sw = 0");
    ref_clover_mat(a, u, psi, DIMS, BC_AP, 0.12, 0.0, 0);
    ref_wilson_mat(b, u, psi, DIMS, BC_AP, 0.12, 0);
    CHECK(rel_diff(a, b, n) < 1e-15, "clover matrix at c_sw = 0 != Wilson matrix");
    free(a1);
    free(u); free(psi); free(a); free(b);
}

/* Sign of the clover term. With D_W = (4 + m) - D/2 (m = 0), the naive operator
 * N = (1/2) sum_mu gamma_mu (U psi(x+mu) - U^dag psi(x-mu)) = (D^dag - D)/4 and
 * T = c_sw (i/4) sum sigma F = A(kappa = 1/2) - 1, tree-level O(a) improvement says
 *     D_W + T = N - N^2 / 2 + O(a^2)
 * on a smooth background only for the right sign of T: the Wilson term -(1/2) sum nabla* nabla
 * equals -(1/2) N^2 - (i/4) sigma.F + O(a^2), and c_sw = 1 cancels the sigma.F piece. The
 * residual r = D_W + T - N + N^2/2 is O(a^2) for c_sw = +1, O(a) for c_sw = 0 or -1. */
static double clover_sign_residual(const int dims[4], double csw, double *r_csw0)
{
    int64_t vol = ref_volume(dims), n = 24 * vol;
    double *u = dalloc(72 * vol), *psi = dalloc(n), *d = dalloc(n), *dd = dalloc(n), *nps = dalloc(n),
           *nn = dalloc(n), *t = dalloc(n), *r = dalloc(n);
    const double per[4] = {1, 1, 1, 1};
    /* smooth abelian background in the x-y plane: U_mu = V diag(e^{i a}, e^{i b}, e^{-i(a+b)}) V^dag */
    double v[18];
    uint64_t st = 77;
    ref_su3_random(v, &st);
    ref_gauge_unit(u, dims);
    for (int64_t s = 0; s < vol; s++) {
        int x[4];
        wref_coords(s, dims, x);
        double px = 2 * PI * x[0] / dims[0], py = 2 * PI * x[1] / dims[1];
        for (int mu = 0; mu < 2; mu++) {
            double th[2];
            /* lattice potential a A: fixed in physical units, so O(1/L) */
            double amp = 2 * PI / dims[0];
            th[0] = amp * (0.8 * sin(py + 0.3 + mu) + 0.5 * cos(px + py + 1.1 * mu));
            th[1] = amp * (0.6 * cos(px - 0.7 * mu) - 0.4 * sin(py - px + 0.2));
            double dg[18], t1[18];
            memset(dg, 0, sizeof dg);
            double ang[3] = {th[0], th[1], -th[0] - th[1]};
            for (int i = 0; i < 3; i++) {
                dg[(i * 3 + i) * 2] = cos(ang[i]);
                dg[(i * 3 + i) * 2 + 1] = sin(ang[i]);
            }
            wref_m3_mul(t1, v, 0, dg, 0);
            wref_m3_mul(u + (s * 4 + mu) * 18, t1, 0, v, 1);
        }
    }
    /* smooth spinor: a constant random spinor times a long-wavelength envelope */
    double us[24];
    ref_spinor_random(us, 1, 78);
    for (int64_t s = 0; s < vol; s++) {
        int x[4];
        wref_coords(s, dims, x);
        double e = 1.0 + 0.5 * cos(2 * PI * x[0] / dims[0]) * sin(2 * PI * x[1] / dims[1]);
        for (int k = 0; k < 24; k++) psi[24 * s + k] = e * us[k];
    }
    ref_wilson_dslash(d, u, psi, dims, per, 0, 2);
    ref_wilson_dslash(dd, u, psi, dims, per, 1, 2);
    for (int64_t k = 0; k < n; k++) nps[k] = 0.25 * (dd[k] - d[k]);
    ref_wilson_dslash(dd, u, nps, dims, per, 1, 2);
    ref_wilson_dslash(nn, u, nps, dims, per, 0, 2);
    for (int64_t k = 0; k < n; k++) nn[k] = 0.25 * (dd[k] - nn[k]); /* N^2 psi */
    double res[2];
    for (int pass = 0; pass < 2; pass++) {
        ref_clover_apply(t, u, psi, dims, 0.5, pass ? 0.0 : csw, 2);
        for (int64_t k = 0; k < n; k++)
            r[k] = 4 * psi[k] - 0.5 * d[k] + (t[k] - psi[k]) - nps[k] + 0.5 * nn[k];
        res[pass] = sqrt(ref_vnorm2(r, n) / ref_vnorm2(psi, n));
    }
    *r_csw0 = res[1];
    free(u); free(psi); free(d); free(dd); free(nps); free(nn); free(t); free(r);
    return res[0];
}

static void test_clover_sign(void)
{
    const int d16[4] = {16, 16, 2, 2}, d32[4] = {32, 32, 2, 2};
    double z16, z32;
    double p16 = clover_sign_residual(d16, 1.0, &z16);
    double m16 = clover_sign_residual(d16, -1.0, &z16);
    double p32 = clover_sign_residual(d32, 1.0, &z32);
    double m32 = clover_sign_residual(d32, -1.0, &z32);
    printf("clover O(a) residual |r|/|psi|: L=16: c_sw=+1 %.3e, 0 %.3e, -1 %.3e; "
           "L=32: +1 %.3e, 0 %.3e, -1 %.3e\n", p16, z16, m16, p32, z32, m32);
    /* With the background fixed in physical units, T ~ a^2 F: the c_sw = 0 residual (= T)
     * falls like 1/L^2, the c_sw = +1 remainder at least like 1/L^3, and c_sw = -1 doubles T. */
    CHECK(z32 > 0.2 * z16 && z32 < 0.3 * z16, "c_sw = 0 residual not ~1/L^2: %g, %g", z16, z32);
    CHECK(p32 < 0.2 * z32, "c_sw = +1 does not cancel the O(a) term: %g vs %g at c_sw = 0", p32, z32);
    CHECK(p32 < 0.15 * p16, "c_sw = +1 remainder not higher order: L=16 %g, L=32 %g", p16, p32);
    CHECK(m32 > 1.8 * z32 && m16 > 1.5 * z16, "c_sw = -1 residual %g, %g vs c_sw = 0 %g, %g",
          m16, m32, z16, z32);
}

int main(void)
{
    test_gamma();
    test_su3_random();
    test_gamma5_hermiticity_and_adjoint();
    test_parity();
    test_boundary_conditions();
    test_free_field();
    test_gauge_covariance();
    test_clover_site();
    test_clover_sign();
    return tq_test_finish("test_wilson_reference");
}
