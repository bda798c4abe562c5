/* One link update of the quenched generator's sweep (issue 5), shared by the CPU and CUDA
 * codelets: the staple from the generator's link storage, then the heat bath or the
 * overrelaxation of kernels/su3_heatbath.h.
 *
 * Storage: the local lattice's links in double, recon 18, as 8 fields (direction mu,
 * parity p: field 2 mu + p), each cut into nslab equal slabs of the checkerboard index
 * cb = lex(x) / 2 (all dimensions even), one StarPU handle per slab. A sub-step (p, mu)
 * updates field 2 mu + p one task per slab and reads the 7 other fields, which hold every
 * link of its staples: the links updated together do not interact. Random numbers are keyed
 * by the global lexicographic site, so the result depends on neither slabs nor workers.
 *
 * Slabs are whole time slices (cb runs over t slowest). A sweep task reads, of the other 7
 * fields, its own slab and the two time slices next to it (the halos, tq_heatbath_args.halo):
 * the last slice of the slab below and the first of the slab above, which those slabs'
 * tasks copied into face buffers after they changed (as spinor faces are packed), so a
 * slab's neighbours' links travel, not the neighbour slabs. The measurement reads every slab
 * (the Polyakov loop runs through all of t). */
#ifndef TQ_HEATBATH_SITE_H
#define TQ_HEATBATH_SITE_H

#include "kernels/su3_heatbath.h"
#include "kernels/philox.h"

#define TQ_HB_MAX_SLABS 16

typedef struct tq_heatbath_args {
    int dims[4];
    int mu, parity, slab, nslab;
    int overrelax;
    int64_t slab_len;          /* checkerboard sites per slab */
    double beta;
    uint32_t key[2];
    uint32_t sweep;
    int halo;                  /* 1: the task has its own slab and the halos, not every slab */
} tq_heatbath_args;

/* The links the kernel sees: per field, per slab, a pointer (the written slab's is the one
 * updated; the other slabs of the written field are not read); with halos only the task's
 * own slab p[f][slab], and lo[f], hi[f]: the time slice below and the one above it. */
typedef struct tq_heatbath_ptrs {
    double *p[8][TQ_HB_MAX_SLABS];
    double *lo[8], *hi[8];
} tq_heatbath_ptrs;

/* Checkerboard sites of one parity in one time slice: a halo's length. */
TQ_HD int64_t tq_hb_slice_len(const int dims[4])
{
    return (int64_t)dims[0] * dims[1] * dims[2] / 2;
}

TQ_HD double *tq_hb_link(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, const int x[4], int mu)
{
    const int64_t lex = (((int64_t)x[3] * a->dims[2] + x[2]) * a->dims[1] + x[1]) * a->dims[0] + x[0];
    const int f = 2 * mu + ((x[0] + x[1] + x[2] + x[3]) & 1);
    const int64_t cb = lex >> 1;
    if (a->halo) {
        const int64_t start = (int64_t)a->slab * a->slab_len;
        if (cb >= start && cb < start + a->slab_len) return P->p[f][a->slab] + (cb - start) * 18;
        const int64_t slice = tq_hb_slice_len(a->dims), in_slice = cb - (int64_t)x[3] * slice;
        const int t0 = (int)(start / slice);   /* the slab's first time slice */
        return (x[3] == (t0 + a->dims[3] - 1) % a->dims[3] ? P->lo[f] : P->hi[f]) + in_slice * 18;
    }
    return P->p[f][cb / a->slab_len] + (cb % a->slab_len) * 18;
}

/* The coordinates of the site of parity `parity` with checkerboard index cb = lex / 2: the
 * even lexicographic index 2 cb, moved one step in x0 when its parity is the other one. */
TQ_HD void tq_hb_coords(const int dims[4], int parity, int64_t cb, int x[4])
{
    int64_t s = 2 * cb;
    for (int d = 0; d < 4; d++) { x[d] = (int)(s % dims[d]); s /= dims[d]; }
    if (((x[0] + x[1] + x[2] + x[3]) & 1) != parity) x[0] += 1;
}

/* Staple sum A of U_mu(x) (as tq_su3_staple, from the checkerboard storage). */
TQ_HD void tq_hb_staple(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, const int x[4], int mu, double *A)
{
    for (int k = 0; k < 18; k++) A[k] = 0.0;
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) continue;
        int y[4];
        for (int d = 0; d < 4; d++) y[d] = x[d];
        const double *u_nu_x = tq_hb_link(P, a, y, nu);
        y[mu] = (x[mu] + 1) % a->dims[mu];
        const double *u_nu_xmu = tq_hb_link(P, a, y, nu);
        y[nu] = (x[nu] + a->dims[nu] - 1) % a->dims[nu];
        const double *u_nu_xmu_mnu = tq_hb_link(P, a, y, nu);
        y[mu] = x[mu];
        const double *u_mu_xmnu = tq_hb_link(P, a, y, mu);
        const double *u_nu_xmnu = tq_hb_link(P, a, y, nu);
        y[nu] = (x[nu] + 1) % a->dims[nu];
        const double *u_mu_xnu = tq_hb_link(P, a, y, mu);
        tq_su3_staple_add(A, u_nu_x, u_nu_xmu, u_mu_xnu, u_mu_xmnu, u_nu_xmu_mnu, u_nu_xmnu);
    }
}

/* Updates the link of checkerboard index i (within the task's slab) of field (mu, parity);
 * returns nonzero when the heat bath refused a subgroup (weight not positive and finite). */
TQ_HD int tq_heatbath_site(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, int64_t i)
{
    int x[4];
    tq_hb_coords(a->dims, a->parity, (int64_t)a->slab * a->slab_len + i, x);
    double A[18];
    tq_hb_staple(P, a, x, a->mu, A);
    double *U = P->p[2 * a->mu + a->parity][a->slab] + i * 18;
    if (a->overrelax) {
        tq_su3_overrelax_link(A, U);
        return 0;
    }
    const int64_t lex = (((int64_t)x[3] * a->dims[2] + x[2]) * a->dims[1] + x[1]) * a->dims[0] + x[0];
    uint32_t ctr[4];
    tq_rng_site_counter(ctr, 0, TQ_HB_STREAM | a->sweep << 8 | (uint32_t)a->mu << 2, (uint64_t)lex);
    return tq_su3_heatbath_link(a->beta, A, U, a->key, ctr) != 0;
}

#endif
