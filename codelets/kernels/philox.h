/* Philox-4x32-10 (Salmon et al., SC'11) and the per-block helpers, shared by host code
 * (src/core/rng.h builds sequential streams on them) and CPU/CUDA codelets (gauge generation,
 * heat-bath). Conventions: src/core/rng.h. */
#ifndef TQ_PHILOX_H
#define TQ_PHILOX_H

#include "kernels/tq_hd.h"

#include <math.h>
#include <stdint.h>

/* out = Philox-4x32-10(ctr, key); ctr, key and out as in Random123's philox4x32. */
TQ_HD void tq_philox4x32(const uint32_t ctr[4], const uint32_t key[2], uint32_t out[4])
{
    const uint32_t M0 = 0xD2511F53u, M1 = 0xCD9E8D57u;
    const uint32_t W0 = 0x9E3779B9u, W1 = 0xBB67AE85u;   /* Weyl key schedule */
    uint32_t x0 = ctr[0], x1 = ctr[1], x2 = ctr[2], x3 = ctr[3];
    uint32_t k0 = key[0], k1 = key[1];
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)M0 * x0, p1 = (uint64_t)M1 * x2;
        uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
        uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
        x0 = hi1 ^ x1 ^ k0;
        x1 = lo1;
        x2 = hi0 ^ x3 ^ k1;
        x3 = lo0;
        k0 += W0;
        k1 += W1;
    }
    out[0] = x0; out[1] = x1; out[2] = x2; out[3] = x3;
}

TQ_HD void tq_rng_key(uint32_t key[2], uint64_t seed)
{
    key[0] = (uint32_t)seed;
    key[1] = (uint32_t)(seed >> 32);
}

TQ_HD void tq_rng_site_counter(uint32_t ctr[4], uint32_t draw, uint32_t stream, uint64_t site)
{
    ctr[0] = draw;
    ctr[1] = stream;
    ctr[2] = (uint32_t)site;
    ctr[3] = (uint32_t)(site >> 32);
}

/* Uniform double strictly inside (0, 1) from 52 bits of two words: (k + 1/2) 2^-52 is
 * exact for k < 2^52, never 0 (log is safe) and at most 1 - 2^-53. */
TQ_HD double tq_rng_uniform(uint32_t w0, uint32_t w1)
{
    uint64_t k = ((uint64_t)(w0 & 0xFFFFFu) << 32) | w1;
    return ((double)k + 0.5) * (1.0 / 4503599627370496.0);   /* 2^-52 */
}

/* Two independent standard normal numbers (mean 0, variance 1) from one Philox block,
 * by Box-Muller. */
TQ_HD void tq_rng_gaussian2(const uint32_t w[4], double *g0, double *g1)
{
    const double two_pi = 6.283185307179586476925286766559;
    double r = sqrt(-2.0 * log(tq_rng_uniform(w[0], w[1])));
    double phi = two_pi * tq_rng_uniform(w[2], w[3]);
    *g0 = r * cos(phi);
    *g1 = r * sin(phi);
}

#endif
