/* Building the clover term per site, shared by the CPU and CUDA codelets (codelets/
 * clover_build.c, clover_build_cuda.cu): A(x) = 1 + kappa c_sw sum_{mu<nu} sigma_{mu nu}
 * (i F_{mu nu}(x)) and its inverse, in double, packed as kernels/clover_site.h stores them.
 * F_{mu nu} = (Q_{mu nu} - Q_{mu nu}^dag) / 8 with Q the sum of the four plaquette leaves
 * around x in the (mu, nu) plane (doc/conventions.md).
 *
 * The links come as the host API layout of the whole local lattice (site lexicographic,
 * x fastest; 4 directions x 18 reals per site), so the leaves' diagonal neighbours need no
 * halo of their own; A and A^-1 are stored straight into the clover fields' layout
 * (field_layout.h) of one block and parity, in the fields' precision. */
#ifndef TQ_CLOVER_BUILD_SITE_H
#define TQ_CLOVER_BUILD_SITE_H

#include "kernels/su3.h"
#include "kernels/dslash_wilson_site.h"   /* tq_block_coords */
#include "kernels/clover_site.h"

#include <stdint.h>

/* Arguments of one build task: the sites of one parity of one block (origin: its first
 * site's local coordinates). sigma: sigma_{mu nu} = (i/2)[gamma_mu, gamma_nu] for the 6
 * planes mu < nu. L: the layout of both clover fields' buffers. */
typedef struct tq_clover_build_args {
    int dims[4], block[4], origin[4];
    int parity;
    int64_t cb;
    double kappa, csw;
    double sigma[6][4][4][2];
    tq_layout L;
} tq_clover_build_args;

/* No singular site in a task: the status word it leaves (else the smallest singular site,
 * local lexicographic). */
#define TQ_CLOVER_BUILD_OK UINT64_MAX

TQ_HD int64_t tq_clover_build_shift(const int dims[4], const int x[4], int mu, int dmu, int nu, int dnu)
{
    int y[4] = {x[0], x[1], x[2], x[3]};
    y[mu] = (y[mu] + dmu + dims[mu]) % dims[mu];
    y[nu] = (y[nu] + dnu + dims[nu]) % dims[nu];
    return (((int64_t)y[3] * dims[2] + y[2]) * dims[1] + y[1]) * dims[0] + y[0];
}

#define TQ_CLOVER_LINK(links, site, mu) ((links) + ((site) * 4 + (mu)) * 18)

/* F_{mu nu}(x) (anti-Hermitian 3x3) from the four leaves, each a closed path from x. */
TQ_HD void tq_clover_field_strength(const double *links, const int dims[4], const int x[4], int mu,
                                    int nu, double *F)
{
    const int64_t s0 = tq_clover_build_shift(dims, x, mu, 0, nu, 0);
    const int64_t sp_m = tq_clover_build_shift(dims, x, mu, 1, nu, 0);
    const int64_t sp_n = tq_clover_build_shift(dims, x, mu, 0, nu, 1);
    const int64_t sm_m = tq_clover_build_shift(dims, x, mu, -1, nu, 0);
    const int64_t sm_n = tq_clover_build_shift(dims, x, mu, 0, nu, -1);
    const int64_t sm_m_p_n = tq_clover_build_shift(dims, x, mu, -1, nu, 1);
    const int64_t sm_m_m_n = tq_clover_build_shift(dims, x, mu, -1, nu, -1);
    const int64_t sp_m_m_n = tq_clover_build_shift(dims, x, mu, 1, nu, -1);
    double q[18], t0[18], t1[18], t2[18], leaf[18];
    for (int k = 0; k < 18; k++) q[k] = 0.0;
    /* U_mu(x) U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag */
    tq_su3_mul(t1, TQ_CLOVER_LINK(links, s0, mu), TQ_CLOVER_LINK(links, sp_m, nu));
    tq_su3_mul_adj(t2, t1, TQ_CLOVER_LINK(links, sp_n, mu));
    tq_su3_mul_adj(leaf, t2, TQ_CLOVER_LINK(links, s0, nu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    /* U_nu(x) U_mu(x-mu+nu)^dag U_nu(x-mu)^dag U_mu(x-mu) */
    tq_su3_mul_adj(t1, TQ_CLOVER_LINK(links, s0, nu), TQ_CLOVER_LINK(links, sm_m_p_n, mu));
    tq_su3_mul_adj(t2, t1, TQ_CLOVER_LINK(links, sm_m, nu));
    tq_su3_mul(leaf, t2, TQ_CLOVER_LINK(links, sm_m, mu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    /* U_mu(x-mu)^dag U_nu(x-mu-nu)^dag U_mu(x-mu-nu) U_nu(x-nu) */
    tq_su3_mul(t0, TQ_CLOVER_LINK(links, sm_m_m_n, nu), TQ_CLOVER_LINK(links, sm_m, mu));
    tq_su3_adjoint(t1, t0);
    tq_su3_mul(t2, t1, TQ_CLOVER_LINK(links, sm_m_m_n, mu));
    tq_su3_mul(leaf, t2, TQ_CLOVER_LINK(links, sm_n, nu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    /* U_nu(x-nu)^dag U_mu(x-nu) U_nu(x+mu-nu) U_mu(x)^dag */
    tq_su3_adj_mul(t1, TQ_CLOVER_LINK(links, sm_n, nu), TQ_CLOVER_LINK(links, sm_n, mu));
    tq_su3_mul(t2, t1, TQ_CLOVER_LINK(links, sp_m_m_n, nu));
    tq_su3_mul_adj(leaf, t2, TQ_CLOVER_LINK(links, s0, mu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            F[(a * 3 + b) * 2] = (q[(a * 3 + b) * 2] - q[(b * 3 + a) * 2]) / 8.0;
            F[(a * 3 + b) * 2 + 1] = (q[(a * 3 + b) * 2 + 1] + q[(b * 3 + a) * 2 + 1]) / 8.0;
        }
}

/* The two dense 6x6 blocks of A at x: blk[b][i][j][re/im]. */
TQ_HD void tq_clover_blocks(const tq_clover_build_args *a, const double *links, const int x[4],
                            double blk[2][6][6][2])
{
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 6; i++)
            for (int j = 0; j < 6; j++) {
                blk[b][i][j][0] = i == j ? 1.0 : 0.0;
                blk[b][i][j][1] = 0.0;
            }
    int plane = 0;
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++, plane++) {
            double F[18];
            tq_clover_field_strength(links, a->dims, x, mu, nu, F);
            for (int b = 0; b < 2; b++)
                for (int s = 0; s < 2; s++)
                    for (int t = 0; t < 2; t++) {
                        const double sr = a->sigma[plane][2 * b + s][2 * b + t][0];
                        const double si = a->sigma[plane][2 * b + s][2 * b + t][1];
                        if (sr == 0.0 && si == 0.0) continue;
                        for (int c1 = 0; c1 < 3; c1++)
                            for (int c2 = 0; c2 < 3; c2++) {
                                /* i F = -Im F + i Re F */
                                const double fr = -F[(c1 * 3 + c2) * 2 + 1], fi = F[(c1 * 3 + c2) * 2];
                                blk[b][s * 3 + c1][t * 3 + c2][0] += a->kappa * a->csw * (sr * fr - si * fi);
                                blk[b][s * 3 + c1][t * 3 + c2][1] += a->kappa * a->csw * (sr * fi + si * fr);
                            }
                    }
        }
}

/* Inverts a 6x6 complex matrix in place (Gauss-Jordan, partial pivoting). Returns -1 when a
 * pivot vanishes relative to the matrix's scale. */
TQ_HD int tq_clover_invert6(double m[6][6][2])
{
    double a[6][12][2];
    double scale2 = 0.0;   /* squared moduli throughout: no hypot in the pivot search */
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 12; j++) {
            a[i][j][0] = j < 6 ? m[i][j][0] : (j - 6 == i);
            a[i][j][1] = j < 6 ? m[i][j][1] : 0.0;
            if (j < 6) scale2 = fmax(scale2, m[i][j][0] * m[i][j][0] + m[i][j][1] * m[i][j][1]);
        }
    for (int c = 0; c < 6; c++) {
        int p = c;
        double best = a[c][c][0] * a[c][c][0] + a[c][c][1] * a[c][c][1];
        for (int r = c + 1; r < 6; r++) {
            const double n2 = a[r][c][0] * a[r][c][0] + a[r][c][1] * a[r][c][1];
            if (n2 > best) { best = n2; p = r; }
        }
        const double pr = a[p][c][0], pi = a[p][c][1], pn = pr * pr + pi * pi;
        if (!(pn > 1e-24 * scale2)) return -1;
        if (p != c)
            for (int j = 0; j < 12; j++)
                for (int k = 0; k < 2; k++) { double t = a[p][j][k]; a[p][j][k] = a[c][j][k]; a[c][j][k] = t; }
        const double ir = pr / pn, ii = -pi / pn;   /* row c /= pivot */
        for (int j = 0; j < 12; j++) {
            const double xr = a[c][j][0], xi = a[c][j][1];
            a[c][j][0] = xr * ir - xi * ii;
            a[c][j][1] = xr * ii + xi * ir;
        }
        for (int r = 0; r < 6; r++) {
            if (r == c) continue;
            const double fr = a[r][c][0], fi = a[r][c][1];
            if (fr == 0.0 && fi == 0.0) continue;
            for (int j = 0; j < 12; j++) {
                a[r][j][0] -= fr * a[c][j][0] - fi * a[c][j][1];
                a[r][j][1] -= fr * a[c][j][1] + fi * a[c][j][0];
            }
        }
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) { m[i][j][0] = a[i][j + 6][0]; m[i][j][1] = a[i][j + 6][1]; }
    return 0;
}

/* Packs a Hermitian block into 36 reals (diagonal, then the lower triangle). The inverse is
 * Hermitian up to rounding: the packing averages A_ij and conj(A_ji). */
TQ_HD void tq_clover_pack_block(double m[6][6][2], double *out)
{
    for (int i = 0; i < 6; i++) out[i] = m[i][i][0];
    for (int i = 1; i < 6; i++)
        for (int j = 0; j < i; j++) {
            out[tq_clover_offdiag(i, j)] = 0.5 * (m[i][j][0] + m[j][i][0]);
            out[tq_clover_offdiag(i, j) + 1] = 0.5 * (m[i][j][1] - m[j][i][1]);
        }
}

/* Site cb of the task's block and parity: A and A^-1 into the clover buffers. Returns -1
 * when a block of A is singular (*lex: the site's local lexicographic index), else 0. */
TQ_HD int tq_clover_build_site(const tq_clover_build_args *a, const double *links, int64_t cb, void *A,
                               void *Ainv, int64_t *lex)
{
    int x[4];
    tq_block_coords(a->block, a->parity, cb, x);
    for (int mu = 0; mu < 4; mu++) x[mu] += a->origin[mu];
    *lex = (((int64_t)x[3] * a->dims[2] + x[2]) * a->dims[1] + x[1]) * a->dims[0] + x[0];
    double blk[2][6][6][2], v[TQ_CLOVER_REALS], vi[TQ_CLOVER_REALS];
    tq_clover_blocks(a, links, x, blk);
    int singular = 0;
    for (int b = 0; b < 2; b++) {
        tq_clover_pack_block(blk[b], v + b * TQ_CLOVER_BLOCK_REALS);
        if (tq_clover_invert6(blk[b])) singular = -1;
        tq_clover_pack_block(blk[b], vi + b * TQ_CLOVER_BLOCK_REALS);
    }
    if (a->L.prec == 8) {
        tq_store_site(A, &a->L, cb, v);
        tq_store_site(Ainv, &a->L, cb, vi);
    } else {
        float f[TQ_CLOVER_REALS], fi[TQ_CLOVER_REALS];
        for (int k = 0; k < TQ_CLOVER_REALS; k++) { f[k] = (float)v[k]; fi[k] = (float)vi[k]; }
        tq_store_site_f(A, &a->L, cb, f);
        tq_store_site_f(Ainv, &a->L, cb, fi);
    }
    return singular;
}

#endif
