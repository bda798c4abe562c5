/* The Galerkin coarse operator D_c = R D P per coarse site, shared by the CPU codelets
 * (codelets/mg_coarsen.c) and the CUDA ones (codelets/mg_cuda.cu). D is a stencil-form operator of nf
 * complex per fine site (kernels/coarse_op_site.h: X, Yf_mu, Yb_mu per site, boundary
 * phases folded in); the basis and the aggregates are the transfer's
 * (kernels/mg_transfer_site.h). For each fine site x of the coarse site's aggregate, in
 * lexicographic order, as reference/mg_reference.h's mgref_coarsen does:
 *     X_c    += V(x)^dag X(x) V(x)
 *     Yf_mu,c or X_c (where x + mu stays in the aggregate) += V(x)^dag Yf_mu(x) V(x + mu)
 *     Yb_mu,c or X_c (where x - mu stays in the aggregate) += V(x)^dag Yb_mu(x) V(x - mu)
 * restricted to chirality blocks (basis column i = chi nvec + k is vector k's chirality-chi
 * part). Every entry's sum in the reference's order, in double: the results are bitwise
 * the reference's (double basis and links) and the same for every block decomposition.
 *
 * V(x +- mu) across a split direction comes from the neighbour block's face: one layer of
 * the block's boundary sites, both parities, each the basis vectors of the site in double
 * (nvec x rows rows of 24 reals), indexed by the layer's lexicographic site index. */
#ifndef TQ_MG_COARSEN_SITE_H
#define TQ_MG_COARSEN_SITE_H

#include "kernels/mg_transfer_site.h"

#include <stdint.h>

/* The most shared memory the GPU's Galerkin kernel stages per thread block (the bases of two
 * sites, a fine matrix and M V: 16 (4 nvec nf + nf^2) bytes); larger products go to CPU
 * workers. Below every recent GPU's opt-in limit (163 KB on A100, 227 KB on H100). */
#define TQ_MG_COARSEN_GPU_MAX_BYTES (160.0 * 1024)

typedef struct tq_mg_coarsen_args {
    tq_mg_transfer_args t;       /* fine and coarse block, aggregates, nvec, rows, basis layout Lb */
    int nf;                      /* fine complex per site: 12 rows */
    int split[4], nfaces;
    tq_layout L_flinks, L_clinks, L_face[4];
} tq_mg_coarsen_args;

/* Doubles of the workspace tq_mg_coarsen_site needs. */
TQ_HD int64_t tq_mg_coarsen_work(const tq_mg_coarsen_args *a)
{
    const int64_t nf = a->nf, nc = 2 * a->t.nvec;
    return 2 * (nf * nf + 2 * a->t.nvec * nf + nf * nc + 9 * nc * nc);
}

/* The layer index of block-local site x on the face perpendicular to mu. */
TQ_HD int64_t tq_mg_layer_index(const int *B, int mu, const int *x)
{
    int64_t lex = 0;
    for (int d = 3; d >= 0; d--)
        if (d != mu) lex = lex * B[d] + x[d];
    return lex;
}

/* The basis vectors at fine site x (block-local; one step outside the block in a split
 * direction: from that side's face) into v[k][d] (nvec x nf complex). */
TQ_HD void tq_mg_coarsen_load_basis(const tq_mg_coarsen_args *a, const void *const basis[2], const void *const *from,
                                    const int *xin, double *v)
{
    const tq_mg_transfer_args *t = &a->t;
    int x[4] = {xin[0], xin[1], xin[2], xin[3]};
    int k_split = 0;
    for (int mu = 0; mu < 4; mu++) {
        const int out = x[mu] < 0 ? 0 : x[mu] >= t->fine_block[mu] ? 1 : -1;
        if (out >= 0 && a->split[mu]) {
            /* the block below's upper face (from[2 k]) or the block above's lower face
             * (from[2 k + 1]); their layers have the same in-layer coordinates */
            tq_load_site(from[2 * k_split + out], &a->L_face[mu], tq_mg_layer_index(t->fine_block, mu, x), v);
            return;
        }
        if (out >= 0) x[mu] = (x[mu] + t->fine_block[mu]) % t->fine_block[mu];   /* periodic, unsplit */
        k_split += a->split[mu];
    }
    const int p = (x[0] + x[1] + x[2] + x[3]) & 1;
    const int64_t s = tq_block_cb(t->fine_block, x);
    for (int k = 0; k < t->nvec; k++)
        for (int r = 0; r < t->rows; r++)
            tq_load_site(basis[p], &t->Lb, (k * t->rows + r) * t->fine_cb + s, v + 2 * ((int64_t)k * a->nf + 12 * r));
}

/* Pack, one vector: basis vector k at fine site (p, s) into each face of a split direction
 * whose boundary layer holds the site (faces[2 k']: the lower layer, faces[2 k' + 1]: the
 * upper one), entries k nf .. k nf + nf - 1 of the layer site. Faces are double. */
TQ_HD void tq_mg_coarsen_pack_vector(const tq_mg_coarsen_args *a, const void *const basis[2], void *const *faces, int p,
                                     int64_t s, int k)
{
    const tq_mg_transfer_args *t = &a->t;
    int x[4];
    tq_block_coords(t->fine_block, p, s, x);
    for (int r = 0; r < t->rows; r++) {
        double v[24];
        int loaded = 0, kf = 0;
        for (int mu = 0; mu < 4; mu++) {
            if (!a->split[mu]) continue;
            for (int side = 0; side < 2; side++)
                if (x[mu] == (side ? t->fine_block[mu] - 1 : 0)) {
                    if (!loaded) tq_load_site(basis[p], &t->Lb, (k * t->rows + r) * t->fine_cb + s, v), loaded = 1;
                    const int64_t layer = tq_mg_layer_index(t->fine_block, mu, x);
                    for (int e = 0; e < 12; e++)
                        tq_store_complex(faces[2 * kf + side], &a->L_face[mu], layer, k * a->nf + 12 * r + e, v[2 * e],
                                         v[2 * e + 1]);
                }
            kf++;
        }
    }
}

/* (M Vn)[d][j]: row d of the fine matrix M (nf x nf) times basis column j's chirality part
 * at the column site (Vn: nvec x nf), the sum over the part in order. */
TQ_HD void tq_mg_galerkin_mv(const tq_mg_coarsen_args *a, const double *M, const double *Vn, int d, int j, double *re,
                             double *im)
{
    const int nf = a->nf, nvec = a->t.nvec, half = nf / 2, cj = j / nvec;
    const double *bj = Vn + 2 * (int64_t)(j % nvec) * nf;
    double mr = 0, mi = 0;
    for (int e = cj * half; e < (cj + 1) * half; e++) {
        const double *me = M + 2 * ((int64_t)d * nf + e);
        mr += me[0] * bj[2 * e] - me[1] * bj[2 * e + 1];
        mi += me[0] * bj[2 * e + 1] + me[1] * bj[2 * e];
    }
    *re = mr;
    *im = mi;
}

/* Entry (i, j) of Vs^dag (M Vn) on the chirality block of i: MV from tq_mg_galerkin_mv
 * (nf x nc), Vs the basis at the row site; the sum over the rows d in order. */
TQ_HD void tq_mg_galerkin_entry(const tq_mg_coarsen_args *a, const double *MV, const double *Vs, int i, int j, double *re,
                                double *im)
{
    const int nf = a->nf, nvec = a->t.nvec, nc = 2 * nvec, half = nf / 2, ci = i / nvec;
    const double *bi = Vs + 2 * (int64_t)(i % nvec) * nf;
    double r = 0, m = 0;
    for (int d = ci * half; d < (ci + 1) * half; d++) {
        const double mr = MV[2 * ((int64_t)d * nc + j)], mi = MV[2 * ((int64_t)d * nc + j) + 1];
        r += bi[2 * d] * mr + bi[2 * d + 1] * mi;
        m += bi[2 * d] * mi - bi[2 * d + 1] * mr;
    }
    *re = r;
    *im = m;
}

/* out (nc x nc complex) += Vs^dag M Vn on chirality blocks: M the fine matrix (nf x nf),
 * Vs and Vn the basis at the row site and the column site (nvec x nf). The inner sums
 * (M Vn)[d][j] are the reference's, made once per (d, j) instead of once per (i, j, d). */
TQ_HD void tq_mg_galerkin_add(const tq_mg_coarsen_args *a, double *out, const double *M, const double *Vs, const double *Vn,
                              double *MV)
{
    const int nf = a->nf, nc = 2 * a->t.nvec;
    for (int j = 0; j < nc; j++)
        for (int d = 0; d < nf; d++) tq_mg_galerkin_mv(a, M, Vn, d, j, MV + 2 * ((int64_t)d * nc + j), MV + 2 * ((int64_t)d * nc + j) + 1);
    for (int i = 0; i < nc; i++)
        for (int j = 0; j < nc; j++) {
            double re, im;
            tq_mg_galerkin_entry(a, MV, Vs, i, j, &re, &im);
            out[2 * ((int64_t)i * nc + j)] += re;
            out[2 * ((int64_t)i * nc + j) + 1] += im;
        }
}

/* The matrix fine site x's term mm (0: X; 1 + 2 mu + dir: the hop to x + mu, dir 0, or x - mu,
 * dir 1) adds to: 0 where the hop stays in the aggregate, else mm; y: the term's column site. */
TQ_HD int tq_mg_coarsen_target(const tq_mg_transfer_args *t, const int *xf, int mm, int *y)
{
    for (int mu = 0; mu < 4; mu++) y[mu] = xf[mu];
    if (mm == 0) return 0;
    const int mu = (mm - 1) / 2, dir = (mm - 1) % 2;
    y[mu] += dir ? -1 : 1;
    const int inside = dir ? xf[mu] % t->agg[mu] != 0 : (xf[mu] + 1) % t->agg[mu] != 0;
    return inside ? 0 : mm;
}

/* Matrix m (0: X, 1 + 2 mu: Yf_mu, 2 + 2 mu: Yb_mu) of the fine links at (p, s) into M. */
TQ_HD void tq_mg_coarsen_load_matrix(const tq_mg_coarsen_args *a, const void *const flinks[2], int p, int64_t s, int m,
                                     double *M)
{
    const int rows = a->nf * a->nf / 12;
    for (int r = 0; r < rows; r++)
        tq_load_site(flinks[p], &a->L_flinks, ((int64_t)m * rows + r) * a->t.fine_cb + s, M + 24 * r);
}

/* The nine coarse matrices of coarse site (pc, sc): w holds tq_mg_coarsen_work(a) doubles. */
TQ_HD void tq_mg_coarsen_site(const tq_mg_coarsen_args *a, const void *const basis[2], const void *const flinks[2],
                              const void *const *from, void *const clinks[2], int pc, int64_t sc, double *w)
{
    const tq_mg_transfer_args *t = &a->t;
    const int nf = a->nf, nvec = t->nvec, nc = 2 * nvec, vol = tq_mg_agg_volume(t);
    double *M = w, *Vs = M + 2 * (int64_t)nf * nf, *Vn = Vs + 2 * (int64_t)nvec * nf, *MV = Vn + 2 * (int64_t)nvec * nf;
    double *acc = MV + 2 * (int64_t)nf * nc;   /* 9 matrices nc x nc */
    const int64_t mc = 2 * (int64_t)nc * nc;
    for (int64_t i = 0; i < 9 * mc; i++) acc[i] = 0;
    int xc[4];
    tq_block_coords(t->coarse_block, pc, sc, xc);
    for (int o = 0; o < vol; o++) {
        int pf, xf[4];
        int64_t sf;
        tq_mg_fine_site_at(t, xc, o, xf, &pf, &sf);
        tq_mg_coarsen_load_basis(a, basis, from, xf, Vs);
        tq_mg_coarsen_load_matrix(a, flinks, pf, sf, 0, M);
        tq_mg_galerkin_add(a, acc, M, Vs, Vs, MV);
        for (int mm = 1; mm < 9; mm++) {   /* forward (x + mu), then backward, per direction */
            int y[4];
            const int target = tq_mg_coarsen_target(t, xf, mm, y);
            tq_mg_coarsen_load_basis(a, basis, from, y, Vn);
            tq_mg_coarsen_load_matrix(a, flinks, pf, sf, mm, M);
            tq_mg_galerkin_add(a, acc + target * mc, M, Vs, Vn, MV);
        }
    }
    const int crows = nc * nc / 12;
    for (int m = 0; m < 9; m++)
        for (int r = 0; r < crows; r++)
            tq_store_site(clinks[pc], &a->L_clinks, ((int64_t)m * crows + r) * t->coarse_cb + sc, acc + m * mc + 24 * r);
}

#endif
