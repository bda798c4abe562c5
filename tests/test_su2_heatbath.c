/* The SU(2) heat-bath sampler (codelets/kernels/su2_heatbath.h) against its known
 * distribution, with fixed seeds (so the statistical checks pass or fail the same way every
 * run): for several alpha, the histogram of a0 against the exact density
 * sqrt(1 - a0^2) exp(alpha a0) (chi-square over 40 bins, the cells' probabilities integrated
 * numerically, threshold = degrees of freedom + 6 standard deviations), the mean of a0
 * against the exact ratio of integrals, |a| = 1, the direction of (a1, a2, a3) isotropic
 * (mean 0 and <a_i^2> = (1 - <a0^2>) / 3 within 5 standard errors); the same counter gives
 * the same element; a bad alpha is reported. No runtime needed. */
#include "tq_test.h"
#include "kernels/su2_heatbath.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define NBINS 40
#define NSAMPLES 200000

static double density(double alpha, double x) { return sqrt(fmax(0.0, 1.0 - x * x)) * exp(alpha * (x - 1.0)); }

/* Integral of the density over [lo, hi] by Simpson's rule on 2000 panels (the sqrt edge
 * converges slowly, but the chi-square tolerance is far above that error). */
static double integral(double alpha, double lo, double hi, int moment)
{
    const int n = 2000;
    const double h = (hi - lo) / n;
    double s = 0.0;
    for (int i = 0; i <= n; i++) {
        double x = lo + i * h, w = (i == 0 || i == n) ? 1 : (i % 2 ? 4 : 2);
        s += w * density(alpha, x) * (moment ? x : 1.0);
    }
    return s * h / 3.0;
}

static void check_alpha(double alpha, uint64_t seed)
{
    uint32_t key[2];
    tq_rng_key(key, seed);
    long hist[NBINS] = {0};
    double sum0 = 0, sum00 = 0, s1 = 0, s2 = 0, s3 = 0, q1 = 0, q2 = 0, q3 = 0, worst_norm = 0;
    long attempts = 0;
    for (long n = 0; n < NSAMPLES; n++) {
        uint32_t ctr[4];
        tq_rng_site_counter(ctr, 0, 0x777, (uint64_t)n);
        double a[4];
        int t = tq_su2_heatbath(alpha, key, ctr, a);
        if (t < 0) { CHECK(0, "alpha %g: sample %ld not accepted", alpha, n); return; }
        attempts += t;
        worst_norm = fmax(worst_norm, fabs(a[0] * a[0] + a[1] * a[1] + a[2] * a[2] + a[3] * a[3] - 1.0));
        int b = (int)((a[0] + 1.0) / 2.0 * NBINS);
        if (b >= NBINS) b = NBINS - 1;
        if (b < 0) b = 0;
        hist[b]++;
        sum0 += a[0];
        sum00 += a[0] * a[0];
        s1 += a[1]; s2 += a[2]; s3 += a[3];
        q1 += a[1] * a[1]; q2 += a[2] * a[2]; q3 += a[3] * a[3];
    }
    const double z = integral(alpha, -1.0, 1.0, 0);
    double chi2 = 0;
    int dof = 0;
    for (int b = 0; b < NBINS; b++) {
        double lo = -1.0 + 2.0 * b / NBINS, hi = lo + 2.0 / NBINS;
        double expect = NSAMPLES * integral(alpha, lo, hi, 0) / z;
        if (expect < 5) continue;   /* cells too small for the chi-square law */
        chi2 += (hist[b] - expect) * (hist[b] - expect) / expect;
        dof++;
    }
    dof -= 1;
    const double limit = dof + 6.0 * sqrt(2.0 * dof);
    const double mean_exact = integral(alpha, -1.0, 1.0, 1) / z;
    const double mean = sum0 / NSAMPLES, var = sum00 / NSAMPLES - mean * mean;
    const double se = sqrt(var / NSAMPLES);
    const double vec2 = (1.0 - sum00 / NSAMPLES) / 3.0;
    printf("  alpha %6.2f: chi2 %.1f for %d dof (limit %.1f), <a0> %.5f (exact %.5f, +- %.5f), acceptance %.3f\n",
           alpha, chi2, dof, limit, mean, mean_exact, se, (double)NSAMPLES / attempts);
    CHECK(chi2 <= limit, "alpha %g: a0 histogram chi2 %.1f > %.1f", alpha, chi2, limit);
    CHECK(fabs(mean - mean_exact) <= 5 * se + 1e-6, "alpha %g: <a0> = %.6f, exact %.6f", alpha, mean, mean_exact);
    CHECK(worst_norm <= 1e-14, "alpha %g: |a|^2 - 1 up to %.2e", alpha, worst_norm);
    CHECK((double)NSAMPLES / attempts > 0.4, "alpha %g: acceptance %.3f", alpha, (double)NSAMPLES / attempts);
    const double sev = sqrt(vec2 / NSAMPLES);
    const double s[3] = {s1, s2, s3}, q[3] = {q1, q2, q3};
    for (int i = 0; i < 3; i++) {
        CHECK(fabs(s[i] / NSAMPLES) <= 5 * sev, "alpha %g: <a%d> = %.5f (+- %.5f)", alpha, i + 1, s[i] / NSAMPLES, sev);
        /* the variance of a_i^2 is at most <a_i^4> <= vec2 */
        CHECK(fabs(q[i] / NSAMPLES - vec2) <= 5 * sqrt(vec2 / NSAMPLES), "alpha %g: <a%d^2> = %.5f, expected %.5f", alpha,
              i + 1, q[i] / NSAMPLES, vec2);
    }
}

int main(void)
{
    static const double alphas[] = {0.05, 0.5, 0.79, 0.81, 2.0, 8.0, 40.0};
    for (size_t i = 0; i < sizeof alphas / sizeof alphas[0]; i++) check_alpha(alphas[i], 1000 + i);

    /* the same key and counter give the same element, another counter another one */
    uint32_t key[2], c1[4], c2[4], c3[4];
    tq_rng_key(key, 42);
    tq_rng_site_counter(c1, 0, 5, 123);
    tq_rng_site_counter(c2, 0, 5, 123);
    tq_rng_site_counter(c3, 0, 5, 124);
    double a[4], b[4], c[4];
    tq_su2_heatbath(3.0, key, c1, a);
    tq_su2_heatbath(3.0, key, c2, b);
    tq_su2_heatbath(3.0, key, c3, c);
    CHECK(a[0] == b[0] && a[1] == b[1] && a[2] == b[2] && a[3] == b[3], "same counter, different element");
    CHECK(a[0] != c[0], "different counters, same element");
    CHECK(c1[0] == c2[0] && c1[0] >= 3, "the counter advanced by the blocks used (%u)", c1[0]);
    /* bad weights */
    uint32_t c4[4] = {0, 0, 0, 0};
    CHECK(tq_su2_heatbath(0.0, key, c4, a) == -1 && a[0] == 1.0, "alpha 0 refused, identity left");
    CHECK(tq_su2_heatbath(NAN, key, c4, a) == -1, "NaN alpha refused");
    CHECK(tq_su2_heatbath(-1.0, key, c4, a) == -1, "negative alpha refused");
    return tq_test_finish("test_su2_heatbath");
}
