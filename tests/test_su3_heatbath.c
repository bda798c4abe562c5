/* The SU(3) link updates of the quenched generator (codelets/kernels/su3_heatbath.h),
 * driven here by plain host sweeps (checkerboard: parity, then direction, so the links
 * updated together do not interact): overrelaxation leaves the total Wilson action
 * unchanged; the heat bath at strong coupling gives the series value of the average
 * plaquette, <P> = beta/18 + beta^2/216 + O(beta^3); at beta = 5.7 it reaches the
 * published quenched value region; links stay in SU(3); the same seed gives the same bits.
 * No runtime needed. */
#include "taskqcd.h"
#include "tq_test.h"
#include "heatbath_reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sweep(tq_host_gauge *g, double beta, uint64_t seed, int n, int overrelax)
{
    int refused = ref_heatbath_sweep(g, beta, seed, n, overrelax);
    CHECK(refused == 0, "sweep %d: the heat bath refused %d links", n, refused);
}

static double plaquette(const tq_host_gauge *g)
{
    tq_plaquette p;
    tq_host_gauge_plaquette(g, &p);
    return p.total;
}

/* beta, lattice, sweeps: average plaquette and its standard error from blocks of 10. */
static void run(tq_host_gauge *g, double beta, uint64_t seed, int therm, int meas, int nor, double *mean, double *err)
{
    double sum = 0, blocks[64];
    int nb = 0, in_block = 0;
    double bsum = 0;
    for (int n = 0; n < therm + meas; n++) {
        sweep(g, beta, seed, n, 0);
        for (int k = 0; k < nor; k++) sweep(g, beta, seed, n, 1);
        if (n < therm) continue;
        double p = plaquette(g);
        sum += p;
        bsum += p;
        if (++in_block == 10 && nb < 64) { blocks[nb++] = bsum / 10; bsum = 0; in_block = 0; }
    }
    *mean = sum / meas;
    double v = 0;
    for (int b = 0; b < nb; b++) v += (blocks[b] - *mean) * (blocks[b] - *mean);
    *err = nb > 1 ? sqrt(v / (nb - 1) / nb) : 1.0;
}

int main(void)
{
    const int d4[4] = {4, 4, 4, 4};
    tq_host_gauge g;
    CHECK_OK(tq_host_gauge_alloc(&g, d4));
    CHECK_OK(tq_host_gauge_random(&g, 3));

    /* overrelaxation is microcanonical: the sum of all plaquettes stays put */
    double before = plaquette(&g);
    sweep(&g, 1.0, 1, 0, 1);
    double after = plaquette(&g);
    printf("  overrelaxation sweep: plaquette %.15f -> %.15f\n", before, after);
    CHECK(fabs(after - before) <= 1e-13, "overrelaxation changed the action: %.3g", after - before);
    double dev;
    CHECK_OK(tq_host_gauge_unitarity(&g, &dev));
    CHECK(dev <= 1e-13, "overrelaxation left links %.2e off SU(3)", dev);

    /* strong coupling */
    static const double betas[] = {0.3, 0.8};
    for (int i = 0; i < 2; i++) {
        const double beta = betas[i];
        CHECK_OK(tq_host_gauge_random(&g, 10 + i));
        double mean, err;
        run(&g, beta, 100 + i, 20, 200, 0, &mean, &err);
        const double series = beta / 18 + beta * beta / 216;
        printf("  beta %.2f (4^4, 200 sweeps): <P> = %.5f +- %.5f, strong-coupling series %.5f\n", beta, mean, err, series);
        CHECK(fabs(mean - series) <= 4 * err + beta * beta * beta / 500, "beta %g: <P> %.5f vs series %.5f (+- %.5f)", beta,
              mean, series, err);
        CHECK_OK(tq_host_gauge_unitarity(&g, &dev));
        CHECK(dev <= 1e-12, "beta %g: links %.2e off SU(3) after 220 heat-bath sweeps", beta, dev);
    }

    /* the same seed gives the same bits */
    tq_host_gauge h;
    CHECK_OK(tq_host_gauge_alloc(&h, d4));
    CHECK_OK(tq_host_gauge_random(&g, 77));
    CHECK_OK(tq_host_gauge_random(&h, 77));
    for (int n = 0; n < 3; n++) { sweep(&g, 5.0, 9, n, 0); sweep(&h, 5.0, 9, n, 0); }
    CHECK(memcmp(g.links, h.links, 256 * 72 * sizeof(double)) == 0, "same seed, different configuration");
    sweep(&h, 5.0, 10, 3, 0);
    sweep(&g, 5.0, 9, 3, 0);
    CHECK(memcmp(g.links, h.links, 256 * 72 * sizeof(double)) != 0, "another seed, same configuration");
    tq_host_gauge_free(&h);

    /* weak coupling: beta = 5.7 on 4^4, heat bath + 3 overrelaxation sweeps; the published
     * large-volume value is 0.549 (normalised to 1); 4^4 sits a little above it */
    CHECK_OK(tq_host_gauge_unit(&g));
    double mean, err;
    run(&g, 5.7, 500, 50, 100, 3, &mean, &err);
    printf("  beta 5.70 (4^4, 100 sweeps after 50, 3 OR each): <P> = %.4f +- %.4f (large volume: 0.549)\n", mean, err);
    CHECK(mean > 0.53 && mean < 0.60, "beta 5.7: <P> = %.4f outside the expected region", mean);
    tq_host_gauge_free(&g);
    return tq_test_finish("test_su3_heatbath");
}
