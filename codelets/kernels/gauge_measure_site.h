/* Observables and reunitarisation of the quenched generator's links (issue 5), per site,
 * shared by the CPU and CUDA codelets (codelets/gauge_measure.c): the storage is the
 * generator's 8 slabbed fields of kernels/heatbath_site.h, read through tq_hb_link. */
#ifndef TQ_GAUGE_MEASURE_SITE_H
#define TQ_GAUGE_MEASURE_SITE_H

#include "kernels/heatbath_site.h"

/* Sums a measurement returns: Re Tr of the spatial and of the temporal plaquettes (the
 * measurement task of each slab), and Re, Im Tr of the Polyakov loops (the line-trace task,
 * after the slabs' lines were multiplied together). */
#define TQ_MEASURE_NSUMS 4
/* CUDA threads per block; the task's result vector also holds one partial per block. */
#define TQ_MEASURE_THREADS 128

/* Doubles in a measurement or line-trace task's result vector, for nsites sites: the sums,
 * then the CUDA blocks' partials. */
TQ_HD int64_t tq_measure_result_len(int64_t nsites)
{
    return TQ_MEASURE_NSUMS * (1 + (nsites + TQ_MEASURE_THREADS - 1) / TQ_MEASURE_THREADS);
}

/* Sites of one time slice (both parities): a Polyakov line vector's length in links. */
TQ_HD int64_t tq_measure_slice_sites(const int dims[4])
{
    return (int64_t)dims[0] * dims[1] * dims[2];
}

/* Site i of the task's slab (0 <= i < 2 slab_len: parity i / slab_len, checkerboard index
 * slab * slab_len + i % slab_len): adds Re Tr of its 6 plaquettes U_mu(x) U_nu(x+mu)
 * U_mu(x+nu)^dag U_nu(x)^dag to v[0] (mu, nu spatial) or v[1] (nu = 3); the plaquettes
 * reach one time slice beyond the slab, the first slice above (P->hi, with halos). When x is
 * in the slab's first time slice, the product of the slab's time links along x's line, in t
 * order, goes to line[18 * (spatial lexicographic index of x)]: the Polyakov loop is the
 * product of the slabs' lines in slab order (tq_gauge_line_mul_site), so it needs no slab's
 * links but its own. */
TQ_HD void tq_gauge_measure_site(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, int64_t i, double v[4],
                                 double *line)
{
    const int parity = (int)(i / a->slab_len);
    int x[4], y[4];
    tq_hb_coords(a->dims, parity, (int64_t)a->slab * a->slab_len + i % a->slab_len, x);
    double ab[18], cd[18];
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++) {
            for (int d = 0; d < 4; d++) y[d] = x[d];
            y[mu] = (x[mu] + 1) % a->dims[mu];
            const double *unu_xmu = tq_hb_link(P, a, y, nu);
            y[mu] = x[mu];
            y[nu] = (x[nu] + 1) % a->dims[nu];
            const double *umu_xnu = tq_hb_link(P, a, y, mu);
            tq_su3_mul(ab, tq_hb_link(P, a, x, mu), unu_xmu);
            tq_su3_mul(cd, tq_hb_link(P, a, x, nu), umu_xnu);
            v[nu == 3] += tq_su3_re_trace_mul_adj(ab, cd);
        }
    const int nt = a->dims[3] / a->nslab, t0 = a->slab * nt;
    if (x[3] != t0) return;
    double L[18], t[18];
    for (int k = 0; k < 18; k++) L[k] = tq_hb_link(P, a, x, 3)[k];
    for (y[0] = x[0], y[1] = x[1], y[2] = x[2], y[3] = t0 + 1; y[3] < t0 + nt; y[3]++) {
        tq_su3_mul(t, L, tq_hb_link(P, a, y, 3));
        for (int k = 0; k < 18; k++) L[k] = t[k];
    }
    double *out = line + 18 * (((int64_t)x[2] * a->dims[1] + x[1]) * a->dims[0] + x[0]);
    for (int k = 0; k < 18; k++) out[k] = L[k];
}

/* Spatial site s of two Polyakov line vectors: line[s] = below[s] line[s] (the lines of the
 * slabs so far, then this slab's). */
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
