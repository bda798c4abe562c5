/* Multigrid transfer per site, shared by the CPU codelets (codelets/mg_transfer.c) and the
 * CUDA ones (codelets/mg_cuda.cu): restriction R = P^dag per coarse site, prolongation P per fine site, the
 * block orthonormalisation of the null-vector basis per aggregate, and the copy of a null
 * vector into the basis. Definitions as in reference/mg_reference.h (paper 000 section
 * 3.4): a coarse site is an aggregate of agg[4] fine sites of one block; the first half of
 * a site's complex degrees of freedom has chirality 0, the second chirality 1 (Wilson
 * spinors: spins 0, 1 and 2, 3); coarse degree of freedom chi nvec + k is the coefficient of
 * basis vector k on the chirality-chi part of the aggregate. Arithmetic in double, the sums
 * in the reference's order (fine sites of an aggregate lexicographically, then degrees of
 * freedom), whatever the storage precision (the GPU's restriction sums an aggregate's
 * sites in a tree instead: the same to rounding, and the same for every decomposition).
 *
 * Fields hold rows of 24 reals (12 complex): a Wilson spinor is one row; a coarse field of
 * ndof complex has ndof / 12 rows, row j of site s stored as site j cb + s of its buffer
 * (src/core/field_internal.h). The basis of nvec vectors over fine sites of `rows` rows is a
 * coarse-kind field of nvec rows rows: vector k's row r is row k rows + r. */
#ifndef TQ_MG_TRANSFER_SITE_H
#define TQ_MG_TRANSFER_SITE_H

#include "kernels/field_layout.h"
#include "kernels/dslash_wilson_site.h"   /* tq_block_coords, tq_block_cb */

#include <stdint.h>

#define TQ_MG_SITE_MAX_NVEC 64   /* = TQ_MG_MAX_NVEC (src/solvers/mg_internal.h) */

/* One block's transfer: fine and coarse block extents (coarse = fine / agg, every extent
 * even), sites of one parity in each, the null vectors, fine rows per site, and the layouts
 * of the fine vector, the basis and the coarse vector buffers. k: the vector a basis copy
 * writes. */
typedef struct tq_mg_transfer_args {
    int fine_block[4], coarse_block[4], agg[4];
    int nvec, rows, k;
    int64_t fine_cb, coarse_cb;
    tq_layout Lf, Lb, Lc;
} tq_mg_transfer_args;

/* The fine site of offset o (x fastest) inside the aggregate of coarse block-local
 * coordinates xc: its block-local coordinates xf, parity and index. */
TQ_HD void tq_mg_fine_site_at(const tq_mg_transfer_args *a, const int xc[4], int o, int xf[4], int *parity, int64_t *s)
{
    for (int mu = 0; mu < 4; mu++) {
        xf[mu] = xc[mu] * a->agg[mu] + o % a->agg[mu];
        o /= a->agg[mu];
    }
    *parity = (xf[0] + xf[1] + xf[2] + xf[3]) & 1;
    *s = tq_block_cb(a->fine_block, xf);
}

/* The same without the coordinates. */
TQ_HD void tq_mg_fine_site(const tq_mg_transfer_args *a, const int xc[4], int o, int *parity, int64_t *s)
{
    int xf[4];
    tq_mg_fine_site_at(a, xc, o, xf, parity, s);
}

TQ_HD int tq_mg_agg_volume(const tq_mg_transfer_args *a) { return a->agg[0] * a->agg[1] * a->agg[2] * a->agg[3]; }

/* c += conj(b) v for one complex: restriction's product, in one order everywhere. */
TQ_HD void tq_mg_conj_mac(const double *b, const double *v, double *c)
{
    c[0] += b[0] * v[0] + b[1] * v[1];
    c[1] += b[0] * v[1] - b[1] * v[0];
}

/* coarse(pc, sc) = sum over the aggregate's fine sites and each chirality's degrees of
 * freedom of conj(basis_k) fine. fine[p], basis[p], coarse[p]: the buffers of parity p. */
TQ_HD void tq_mg_restrict_site(const tq_mg_transfer_args *a, const void *const fine[2], const void *const basis[2],
                               void *const coarse[2], int pc, int64_t sc)
{
    int xc[4];
    tq_block_coords(a->coarse_block, pc, sc, xc);
    const int nvec = a->nvec, half = 6 * a->rows, vol = tq_mg_agg_volume(a);
    double acc[2 * TQ_MG_SITE_MAX_NVEC][2];
    for (int i = 0; i < 2 * nvec; i++) acc[i][0] = acc[i][1] = 0;
    for (int o = 0; o < vol; o++) {
        int pf;
        int64_t sf;
        tq_mg_fine_site(a, xc, o, &pf, &sf);
        for (int r = 0; r < a->rows; r++) {
            double v[24], b[24];
            tq_load_site(fine[pf], &a->Lf, r * a->fine_cb + sf, v);
            for (int k = 0; k < nvec; k++) {
                tq_load_site(basis[pf], &a->Lb, (k * a->rows + r) * a->fine_cb + sf, b);
                for (int e = 0; e < 12; e++) tq_mg_conj_mac(b + 2 * e, v + 2 * e, acc[(12 * r + e >= half) * nvec + k]);
            }
        }
    }
    for (int j = 0; j < nvec / 6; j++) {   /* 2 nvec complex: nvec / 6 rows */
        double out[24];
        for (int e = 0; e < 12; e++) out[2 * e] = acc[12 * j + e][0], out[2 * e + 1] = acc[12 * j + e][1];
        tq_store_site(coarse[pc], &a->Lc, j * a->coarse_cb + sc, out);
    }
}

/* fine(pf, sf) = sum_k basis_k coarse(chi nvec + k) on each chirality. */
TQ_HD void tq_mg_prolong_site(const tq_mg_transfer_args *a, const void *const coarse[2], const void *const basis[2],
                              void *const fine[2], int pf, int64_t sf)
{
    int xf[4], xc[4];
    tq_block_coords(a->fine_block, pf, sf, xf);
    for (int mu = 0; mu < 4; mu++) xc[mu] = xf[mu] / a->agg[mu];
    const int pc = (xc[0] + xc[1] + xc[2] + xc[3]) & 1;
    const int64_t sc = tq_block_cb(a->coarse_block, xc);
    const int nvec = a->nvec, half = 6 * a->rows;
    double c[2 * TQ_MG_SITE_MAX_NVEC * 2];
    for (int j = 0; j < nvec / 6; j++) tq_load_site(coarse[pc], &a->Lc, j * a->coarse_cb + sc, c + 24 * j);
    for (int r = 0; r < a->rows; r++) {
        double out[24], b[24];
        for (int e = 0; e < 24; e++) out[e] = 0;
        for (int k = 0; k < nvec; k++) {
            tq_load_site(basis[pf], &a->Lb, (k * a->rows + r) * a->fine_cb + sf, b);
            for (int e = 0; e < 12; e++) {
                const double *x = c + 2 * ((12 * r + e >= half) * nvec + k);
                out[2 * e] += b[2 * e] * x[0] - b[2 * e + 1] * x[1];
                out[2 * e + 1] += b[2 * e] * x[1] + b[2 * e + 1] * x[0];
            }
        }
        tq_store_site(fine[pf], &a->Lf, r * a->fine_cb + sf, out);
    }
}

/* basis row k rows + r = vector row r at fine site (pf, sf). */
TQ_HD void tq_mg_basis_put_site(const tq_mg_transfer_args *a, const void *const vec[2], void *const basis[2], int pf,
                                int64_t sf)
{
    for (int r = 0; r < a->rows; r++) {
        double v[24];
        tq_load_site(vec[pf], &a->Lf, r * a->fine_cb + sf, v);
        tq_store_site(basis[pf], &a->Lb, (a->k * a->rows + r) * a->fine_cb + sf, v);
    }
}

/* Modified Gram-Schmidt of the basis on the aggregate of coarse site (pc, sc), each
 * chirality apart, in double in w (nvec x aggregate volume x 12 rows complex), written
 * back in the basis's precision. Returns the number of vectors found (numerically) in the
 * span of the ones before them on a chirality part (those are left zero). */
TQ_HD int tq_mg_orthonormalise_site(const tq_mg_transfer_args *a, void *const basis[2], int pc, int64_t sc, double *w)
{
    int xc[4];
    tq_block_coords(a->coarse_block, pc, sc, xc);
    const int nvec = a->nvec, vol = tq_mg_agg_volume(a), n = vol * 12 * a->rows;   /* complex per vector */
    const int half = 6 * a->rows;
    for (int o = 0; o < vol; o++) {
        int pf;
        int64_t sf;
        tq_mg_fine_site(a, xc, o, &pf, &sf);
        for (int k = 0; k < nvec; k++)
            for (int r = 0; r < a->rows; r++)
                tq_load_site(basis[pf], &a->Lb, (k * a->rows + r) * a->fine_cb + sf, w + 2 * ((int64_t)k * n + (o * a->rows + r) * 12));
    }
    int dependent = 0;
    for (int chi = 0; chi < 2; chi++)
        for (int k = 0; k < nvec; k++) {
            double *vk = w + 2 * (int64_t)k * n;
            double before = 0;
            for (int i = 0; i < n; i++)
                if ((i % (12 * a->rows) >= half) == chi) before += vk[2 * i] * vk[2 * i] + vk[2 * i + 1] * vk[2 * i + 1];
            for (int j = 0; j < k; j++) {
                const double *vj = w + 2 * (int64_t)j * n;
                double re = 0, im = 0;   /* <v_j, v_k> on this chirality */
                for (int i = 0; i < n; i++) {
                    if ((i % (12 * a->rows) >= half) != chi) continue;
                    re += vj[2 * i] * vk[2 * i] + vj[2 * i + 1] * vk[2 * i + 1];
                    im += vj[2 * i] * vk[2 * i + 1] - vj[2 * i + 1] * vk[2 * i];
                }
                for (int i = 0; i < n; i++) {
                    if ((i % (12 * a->rows) >= half) != chi) continue;
                    vk[2 * i] -= re * vj[2 * i] - im * vj[2 * i + 1];
                    vk[2 * i + 1] -= re * vj[2 * i + 1] + im * vj[2 * i];
                }
            }
            double n2 = 0;
            for (int i = 0; i < n; i++)
                if ((i % (12 * a->rows) >= half) == chi) n2 += vk[2 * i] * vk[2 * i] + vk[2 * i + 1] * vk[2 * i + 1];
            const int bad = !(n2 > 1e-24 * before) || n2 == 0.0;
            dependent += bad;
            const double f = bad ? 0.0 : 1.0 / sqrt(n2);
            for (int i = 0; i < n; i++)
                if ((i % (12 * a->rows) >= half) == chi) vk[2 * i] *= f, vk[2 * i + 1] *= f;
        }
    for (int o = 0; o < vol; o++) {
        int pf;
        int64_t sf;
        tq_mg_fine_site(a, xc, o, &pf, &sf);
        for (int k = 0; k < nvec; k++)
            for (int r = 0; r < a->rows; r++)
                tq_store_site(basis[pf], &a->Lb, (k * a->rows + r) * a->fine_cb + sf, w + 2 * ((int64_t)k * n + (o * a->rows + r) * 12));
    }
    return dependent;
}

#endif
