/* Observables and reunitarisation of the quenched generator's links (issue 5), per site,
 * shared by the CPU and CUDA codelets (codelets/gauge_measure.c): the storage is the
 * generator's 8 fields on blocks of kernels/heatbath_site.h, read through tq_hb_link. */
#ifndef TQ_GAUGE_MEASURE_SITE_H
#define TQ_GAUGE_MEASURE_SITE_H

#include "kernels/heatbath_site.h"

/* Sums a measurement returns: Re Tr of the spatial and of the temporal plaquettes (the
 * measurement task of each block), and Re, Im Tr of the Polyakov loops (the line-trace task
 * of each column of blocks along t, after their lines were multiplied together). */
#define TQ_MEASURE_NSUMS 4
/* CUDA threads per block; the task's result vector also holds one partial per block. */
#define TQ_MEASURE_THREADS 128

/* Doubles in a measurement or line-trace task's result vector, for nsites sites: the sums,
 * then the CUDA blocks' partials. */
TQ_HD int64_t tq_measure_result_len(int64_t nsites)
{
    return TQ_MEASURE_NSUMS * (1 + (nsites + TQ_MEASURE_THREADS - 1) / TQ_MEASURE_THREADS);
}

/* Sites of a block's time slice (both parities): a Polyakov line vector's length in links. */
TQ_HD int64_t tq_measure_slice_sites(const int block[4])
{
    return (int64_t)block[0] * block[1] * block[2];
}

/* Whether the measurement reads field f's face in direction d on `side`: U_nu(x+mu) and
 * U_mu(x+nu), the upper faces of the other directions' fields (listed as for
 * tq_hb_reads_face). */
TQ_HD int tq_measure_reads_face(const tq_heatbath_args *a, int f, int d, int side)
{
    return a->split[d] && side == 1 && f / 2 != d;
}

/* Site i of the task's block (0 <= i < 2 block_cb: parity i / block_cb, index i % block_cb):
 * adds Re Tr of its 6 plaquettes U_mu(x) U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag to v[0] (mu,
 * nu spatial) or v[1] (nu = 3); the plaquettes reach one layer beyond the block, the upper
 * faces. When x is in the block's first time slice, the product of the block's time links
 * along x's line, in t order, goes to line[18 * (x's index in the block's time slice, x
 * fastest)]: the Polyakov loop is the product of the lines of the blocks along t in order
 * (tq_gauge_line_mul_site), so it needs no block's links but its own. */
TQ_HD void tq_gauge_measure_site(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, int64_t i, double v[4],
                                 double *line)
{
    const int parity = (int)(i / a->block_cb);
    int x[4], y[4];
    tq_hb_site(a, parity, i % a->block_cb, x);
    double ab[18], cd[18];
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++) {
            for (int d = 0; d < 4; d++) y[d] = x[d];
            y[mu] = tq_hb_up(x[mu], a->dims[mu]);
            const double *unu_xmu = tq_hb_link(P, a, y, nu);
            y[mu] = x[mu];
            y[nu] = tq_hb_up(x[nu], a->dims[nu]);
            const double *umu_xnu = tq_hb_link(P, a, y, mu);
            tq_su3_mul(ab, tq_hb_link(P, a, x, mu), unu_xmu);
            tq_su3_mul(cd, tq_hb_link(P, a, x, nu), umu_xnu);
            v[nu == 3] += tq_su3_re_trace_mul_adj(ab, cd);
        }
    if (x[3] != a->origin[3]) return;
    double L[18], t[18];
    for (int k = 0; k < 18; k++) L[k] = tq_hb_link(P, a, x, 3)[k];
    for (y[0] = x[0], y[1] = x[1], y[2] = x[2], y[3] = x[3] + 1; y[3] < a->origin[3] + a->block[3]; y[3]++) {
        tq_su3_mul(t, L, tq_hb_link(P, a, y, 3));
        for (int k = 0; k < 18; k++) L[k] = t[k];
    }
    const int64_t s = ((int64_t)(x[2] - a->origin[2]) * a->block[1] + x[1] - a->origin[1]) * a->block[0] + x[0] - a->origin[0];
    for (int k = 0; k < 18; k++) line[18 * s + k] = L[k];
}

/* Spatial site s of two Polyakov line vectors: line[s] = below[s] line[s] (the lines of the
 * blocks below so far, then this block's). */
TQ_HD void tq_gauge_line_mul_site(const double *below, double *line, int64_t s)
{
    double t[18];
    tq_su3_mul(t, below + 18 * s, line + 18 * s);
    for (int k = 0; k < 18; k++) line[18 * s + k] = t[k];
}

/* Re and Im of the trace of spatial site s's line, added to v[2], v[3] (the Polyakov sums). */
TQ_HD void tq_gauge_line_trace_site(const double *line, int64_t s, double v[4])
{
    const double *L = line + 18 * s;
    v[2] += L[0] + L[8] + L[16];
    v[3] += L[1] + L[9] + L[17];
}

#endif
