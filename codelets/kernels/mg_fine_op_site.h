/* The Wilson-clover matrix M = A - kappa D written as a stencil-form operator (the fine level
 * of multigrid, kernels/coarse_op_site.h's links with n = 12), per site, shared by the CPU
 * codelets (codelets/mg_fine_op.c) and, later, the CUDA ones:
 *     X(x)     = A(x), the clover term (two Hermitian 6x6 blocks, kernels/clover_site.h), or 1
 *     Yf_mu(x) = -kappa phase (1 - gamma_mu) U_mu(x), phase the boundary condition where the
 *                hop leaves the lattice
 *     Yb_mu(x) = gamma_5 Yf_mu(x - mu)^dag gamma_5 = -kappa phase (1 + gamma_mu) U_mu(x - mu)^dag
 * (gamma_5 = diag(1, 1, -1, -1), DeGrand-Rossi: every entry of 1 -+ gamma_mu is 0, +-1 or
 * +-i, so both forms give the same bits). Three steps per block: X and every Yf; the Yf_mu of
 * the block's upper layer in each split direction into faces (both parities, 144 complex per
 * site, indexed by the layer's lexicographic index); every Yb from the Yf below it, across a
 * split direction from the face of the block below. */
#ifndef TQ_MG_FINE_OP_SITE_H
#define TQ_MG_FINE_OP_SITE_H

#include "kernels/mg_coarsen_site.h"   /* tq_mg_layer_index */

typedef struct tq_mg_fine_args {
    int B[4], split[4], nfaces, recon, clover;
    int parity;                /* of the local task's sites */
    int64_t cb;
    double kappa;
    double phase_hi[4];        /* factor of forward hops through the block's upper face */
    tq_layout Lg, Lclover, Llinks, L_face[4];
} tq_mg_fine_args;

/* Matrix m (12 x 12 complex, row-major) of the links at site s: load and store. */
TQ_HD void tq_mg_fine_load(const tq_mg_fine_args *a, const void *links, int64_t s, int m, double *M)
{
    for (int r = 0; r < 12; r++) tq_load_site(links, &a->Llinks, ((int64_t)m * 12 + r) * a->cb + s, M + 24 * r);
}

TQ_HD void tq_mg_fine_store(const tq_mg_fine_args *a, void *links, int64_t s, int m, const double *M)
{
    for (int r = 0; r < 12; r++) tq_store_site(links, &a->Llinks, ((int64_t)m * 12 + r) * a->cb + s, M + 24 * r);
}

/* X and Yf_mu of site s of parity p. */
TQ_HD void tq_mg_fine_local_site(const tq_mg_fine_args *a, const void *gauge, const void *clover, void *links, int p,
                                 int64_t s)
{
    double M[288];
    for (int i = 0; i < 288; i++) M[i] = 0;
    if (a->clover) {
        double k[TQ_CLOVER_REALS];
        tq_load_site(clover, &a->Lclover, s, k);
        for (int b = 0; b < 2; b++) {
            const double *kb = k + b * TQ_CLOVER_BLOCK_REALS;
            for (int i = 0; i < 6; i++) {
                M[2 * ((6 * b + i) * 12 + 6 * b + i)] = kb[i];
                for (int j = 0; j < i; j++) {
                    const double *e = kb + tq_clover_offdiag(i, j);
                    M[2 * ((6 * b + i) * 12 + 6 * b + j)] = e[0];
                    M[2 * ((6 * b + i) * 12 + 6 * b + j) + 1] = e[1];
                    M[2 * ((6 * b + j) * 12 + 6 * b + i)] = e[0];
                    M[2 * ((6 * b + j) * 12 + 6 * b + i) + 1] = -e[1];
                }
            }
        }
    } else {
        for (int i = 0; i < 12; i++) M[2 * (i * 12 + i)] = 1.0;
    }
    tq_mg_fine_store(a, links, s, 0, M);
    int x[4];
    tq_block_coords(a->B, p, s, x);
    for (int mu = 0; mu < 4; mu++) {
        double u[18];
        tq_link_load(gauge, &a->Lg, s, mu, a->recon, u);
        const double f = -a->kappa * (x[mu] == a->B[mu] - 1 ? a->phase_hi[mu] : 1.0);
        for (int i = 0; i < 288; i++) M[i] = 0;
        for (int sp = 0; sp < 4; sp++)
            for (int t = 0; t < 4; t++) {
                /* (1 - gamma_mu)[sp][t] */
                double gr = sp == t ? 1.0 : 0.0, gi = 0.0;
                if (t == tq_gamma_col(mu, sp)) {
                    const int code = tq_gamma_code(mu, sp);
                    gr -= code == 0 ? 1.0 : code == 2 ? -1.0 : 0.0;
                    gi -= code == 1 ? 1.0 : code == 3 ? -1.0 : 0.0;
                }
                if (gr == 0.0 && gi == 0.0) continue;
                for (int ca = 0; ca < 3; ca++)
                    for (int cb = 0; cb < 3; cb++) {
                        const double ur = u[2 * (ca * 3 + cb)], ui = u[2 * (ca * 3 + cb) + 1];
                        double *e = M + 2 * ((3 * sp + ca) * 12 + 3 * t + cb);
                        e[0] = f * (gr * ur - gi * ui);
                        e[1] = f * (gr * ui + gi * ur);
                    }
            }
        tq_mg_fine_store(a, links, s, 1 + 2 * mu, M);
    }
}

/* Pack: Yf_mu of site (p, s) into faces[2 k + 1] where it lies on the block's upper layer in
 * the k-th split direction mu (the block above reads it for its lower layer's Yb_mu). */
TQ_HD void tq_mg_fine_pack_site(const tq_mg_fine_args *a, const void *links, void *const *faces, int p, int64_t s)
{
    int x[4];
    tq_block_coords(a->B, p, s, x);
    int k = 0;
    for (int mu = 0; mu < 4; mu++) {
        if (!a->split[mu]) continue;
        if (x[mu] == a->B[mu] - 1) {
            double M[288];
            tq_mg_fine_load(a, links, s, 1 + 2 * mu, M);
            tq_store_site(faces[2 * k + 1], &a->L_face[mu], tq_mg_layer_index(a->B, mu, x), M);
        }
        k++;
    }
}

/* Yb_mu of site (p, s) for every mu, from Yf_mu(x - mu): links[q] holds parity q's matrices;
 * from[2 k]: the block below's upper layer in the k-th split direction. */
TQ_HD void tq_mg_fine_back_site(const tq_mg_fine_args *a, void *const links[2], const void *const *from, int p, int64_t s)
{
    int x[4];
    tq_block_coords(a->B, p, s, x);
    int k = 0;
    for (int mu = 0; mu < 4; mu++) {
        double F[288], Bm[288];
        int y[4] = {x[0], x[1], x[2], x[3]};
        y[mu] -= 1;
        if (y[mu] < 0 && a->split[mu]) {
            tq_load_site(from[2 * k], &a->L_face[mu], tq_mg_layer_index(a->B, mu, x), F);
        } else {
            y[mu] = (y[mu] + a->B[mu]) % a->B[mu];   /* periodic inside an unsplit direction */
            tq_mg_fine_load(a, links[1 - p], tq_block_cb(a->B, y), 1 + 2 * mu, F);
        }
        for (int d = 0; d < 12; d++)
            for (int e = 0; e < 12; e++) {
                const double sg = (d < 6) == (e < 6) ? 1.0 : -1.0;
                Bm[2 * (d * 12 + e)] = sg * F[2 * (e * 12 + d)];
                Bm[2 * (d * 12 + e) + 1] = -sg * F[2 * (e * 12 + d) + 1];
            }
        tq_mg_fine_store(a, links[p], s, 2 + 2 * mu, Bm);
        k += a->split[mu];
    }
}

#endif
