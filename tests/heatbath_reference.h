/* Plain host sweeps of the quenched generator's per-link code (kernels/su3_heatbath.h):
 * the reference the tests compare the task-graph sweeps with. Checkerboard order: parity,
 * then direction, every site of the parity; random numbers keyed as the codelets key them. */
#ifndef TQ_HEATBATH_REFERENCE_H
#define TQ_HEATBATH_REFERENCE_H

#include "taskqcd.h"
#include "kernels/su3_heatbath.h"

/* Sweep number n (heat bath, or overrelaxation when overrelax); returns the number of links
 * whose heat bath found no positive weight. */
static inline int ref_heatbath_sweep(tq_host_gauge *g, double beta, uint64_t seed, int n, int overrelax)
{
    const int *d = g->dims;
    uint32_t key[2];
    tq_rng_key(key, seed);
    int refused = 0;
    for (int parity = 0; parity < 2; parity++)
        for (int mu = 0; mu < 4; mu++) {
            int x[4];
            for (x[3] = 0; x[3] < d[3]; x[3]++)
            for (x[2] = 0; x[2] < d[2]; x[2]++)
            for (x[1] = 0; x[1] < d[1]; x[1]++)
            for (x[0] = 0; x[0] < d[0]; x[0]++) {
                if (((x[0] + x[1] + x[2] + x[3]) & 1) != parity) continue;
                const int64_t site = (((int64_t)x[3] * d[2] + x[2]) * d[1] + x[1]) * d[0] + x[0];
                double A[18];
                tq_su3_staple(g->links, d, x, mu, A);
                double *U = g->links + (site * 4 + mu) * 18;
                if (overrelax) {
                    tq_su3_overrelax_link(A, U);
                } else {
                    uint32_t ctr[4];
                    tq_rng_site_counter(ctr, 0, TQ_HB_STREAM | (uint32_t)n << 8 | (uint32_t)mu << 2, (uint64_t)site);
                    refused += tq_su3_heatbath_link(beta, A, U, key, ctr) != 0;
                }
            }
        }
    return refused;
}

#endif
