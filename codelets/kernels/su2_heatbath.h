/* SU(2) heat-bath sampling (Kennedy and Pendleton, Phys. Lett. B156 (1985) 393), shared by
 * the CPU and CUDA heat-bath codelets. An SU(2) element is a unit quaternion
 * a = (a0, a1, a2, a3), U = a0 + i a.sigma. The heat bath for a subgroup link with action
 * weight exp(alpha Re Tr(U V) / 2), V's quaternion norm absorbed into alpha, needs
 *   P(a) da  ~  exp(alpha a0) delta(|a| - 1) d^4a,
 * i.e. a0 with density sqrt(1 - a0^2) exp(alpha a0) on [-1, 1] and (a1, a2, a3) uniform on
 * the sphere of radius sqrt(1 - a0^2).
 *
 * With a0 = 1 - 2 delta the density of delta is ~ sqrt(delta) sqrt(1 - delta) exp(-2 alpha
 * delta): delta is drawn from the Gamma(3/2, rate 2 alpha) law as
 * -(ln r1 + cos^2(2 pi r2) ln r3) / (2 alpha) and accepted with probability sqrt(1 - delta).
 * That acceptance vanishes as alpha -> 0 (strong coupling), so below alpha = 0.8 a0 is drawn
 * instead as the x coordinate of a uniform point of the unit disk (density ~ sqrt(1 - x^2):
 * x = sqrt(r1) cos(2 pi r2)) and accepted with probability exp(alpha (x - 1)). Either way
 * an attempt is accepted with probability above 0.4 (the two meet near alpha = 0.8).
 *
 * Random numbers: Philox blocks (kernels/philox.h) at counter ctr, ctr[0] counting blocks:
 * two blocks per attempt, one for the direction, so the result depends only on the key and
 * the counter, never on the worker. */
#ifndef TQ_SU2_HEATBATH_H
#define TQ_SU2_HEATBATH_H

#include "kernels/philox.h"

/* Attempts before giving up (each is accepted with probability above 0.4, so reaching it
 * means a bad alpha, which the caller reports). */
#define TQ_SU2_HB_MAX_ATTEMPTS 1000

/* Draws a (4 doubles) for weight alpha > 0; ctr[0] advances by the blocks used. Returns the
 * number of attempts, or -1 when alpha is not positive and finite or no attempt was
 * accepted (a is then the identity). */
TQ_HD int tq_su2_heatbath(double alpha, const uint32_t key[2], uint32_t ctr[4], double a[4])
{
    const double two_pi = 6.283185307179586476925286766559;
    a[0] = 1.0;
    a[1] = a[2] = a[3] = 0.0;
    if (!(alpha > 0.0) || !(alpha < 1e300)) return -1;
    for (int attempt = 1; attempt <= TQ_SU2_HB_MAX_ATTEMPTS; attempt++) {
        uint32_t w[4], v[4];
        tq_philox4x32(ctr, key, w);
        ctr[0]++;
        tq_philox4x32(ctr, key, v);
        ctr[0]++;
        const double r1 = tq_rng_uniform(w[0], w[1]), r2 = tq_rng_uniform(w[2], w[3]);
        const double r3 = tq_rng_uniform(v[0], v[1]), r4 = tq_rng_uniform(v[2], v[3]);
        double a0;
        if (alpha < 0.8) {
            a0 = sqrt(r1) * cos(two_pi * r2);
            if (r3 > exp(alpha * (a0 - 1.0))) continue;
            (void)r4;
        } else {
            const double c = cos(two_pi * r2);
            const double delta = -(log(r1) + c * c * log(r3)) / (2.0 * alpha);
            if (delta > 1.0 || r4 * r4 > 1.0 - delta) continue;
            a0 = 1.0 - 2.0 * delta;
        }
        tq_philox4x32(ctr, key, w);
        ctr[0]++;
        const double cos_theta = 2.0 * tq_rng_uniform(w[0], w[1]) - 1.0;
        const double phi = two_pi * tq_rng_uniform(w[2], w[3]);
        const double rad = sqrt(fmax(0.0, 1.0 - a0 * a0));
        const double sin_theta = sqrt(fmax(0.0, 1.0 - cos_theta * cos_theta));
        a[0] = a0;
        a[1] = rad * sin_theta * cos(phi);
        a[2] = rad * sin_theta * sin(phi);
        a[3] = rad * cos_theta;
        return attempt;
    }
    return -1;
}

#endif
