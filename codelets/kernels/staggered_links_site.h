/* Asqtad fat and long links per site (issue 36; codelets/staggered.c, staggered_cuda.cu):
 * the links field of the staggered operator (kernels/staggered_site.h: per site and
 * direction V_mu(x), V_mu(x-mu)^dag, W_mu(x), W_mu(x-3mu)^dag) from the thin links of the whole lattice in the
 * host API layout (one read-only buffer, as the clover build reads them: no link halo).
 *
 * The fat link is built as nested staples, the way the action is usually written:
 *     V_mu(x) = c1 U_mu(x) + sum_nu [ c3 S_nu(U) + cL S_nu(S_nu(U))
 *                                     + sum_rho ( c5 S_nu(S_rho(U)) + sum_sig c7 S_nu(S_rho(S_sig(U))) ) ]
 * over signed transverse directions, all distinct, with S_nu(M)(x) = U_nu(x) M(x+nu)
 * U_nu(x+mu)^dag (for -nu: U_nu(x-nu)^dag M(x-nu) U_nu(x-nu+mu)): an inner staple is
 * recomputed at each displaced site where it is needed, a different association of the
 * same products than reference/staggered_reference.h's link-by-link walk (they agree to
 * rounding). Coefficients c (tadpole factors folded in) and the staggered phases and
 * boundary factors as doc/conventions.md states them. */
#ifndef TQ_STAGGERED_LINKS_SITE_H
#define TQ_STAGGERED_LINKS_SITE_H

#include "kernels/su3.h"
#include "kernels/field_layout.h"
#include "kernels/dslash_wilson_site.h"   /* tq_block_coords */
#include "kernels/staggered_site.h"       /* TQ_KS_LINK_NDOF */

#include <stdint.h>

enum { TQ_KS_C1, TQ_KS_NAIK, TQ_KS_C3, TQ_KS_C5, TQ_KS_C7, TQ_KS_LEPAGE, TQ_KS_NCOEFF };

typedef struct tq_ks_build_args {
    int dims[4];              /* the global lattice (the thin links') */
    int block[4], origin[4];  /* the block and its first site's global coordinates */
    int parity;
    int64_t cb;
    double c[TQ_KS_NCOEFF];
    double bc[4];             /* boundary factor of a hop across the lattice's end */
    tq_layout L;              /* the links field's */
} tq_ks_build_args;

/* The global site one step from x (coordinates, changed in place) along signed direction
 * d (+-(mu + 1)), periodically wrapped. */
TQ_HD void tq_ks_step(const int dims[4], int x[4], int d)
{
    const int mu = (d > 0 ? d : -d) - 1;
    x[mu] = (x[mu] + (d > 0 ? 1 : dims[mu] - 1)) % dims[mu];
}

TQ_HD const double *tq_ks_thin(const double *links, const int dims[4], const int x[4], int mu)
{
    const int64_t s = (((int64_t)x[3] * dims[2] + x[2]) * dims[1] + x[1]) * dims[0] + x[0];
    return links + (s * 4 + mu) * 18;
}

/* The staple chain S_{d[0]}(S_{d[1]}(... U_mu ...)) from x (n <= 3 staples; n 0: U_mu(x)),
 * wrapped from the innermost outwards. */
TQ_HD void tq_ks_staples(const double *links, const int dims[4], const int x[4], int mu, const int *d, int n, double *out)
{
    int s[4][4];   /* s[k]: where staple k starts; s[n]: the inner link's site */
    for (int i = 0; i < 4; i++) s[0][i] = x[i];
    for (int k = 0; k < n; k++) {
        for (int i = 0; i < 4; i++) s[k + 1][i] = s[k][i];
        tq_ks_step(dims, s[k + 1], d[k]);
    }
    double m[18], t[18];
    tq_su3_copy(m, tq_ks_thin(links, dims, s[n], mu));
    for (int k = n - 1; k >= 0; k--) {
        const int nu = (d[k] > 0 ? d[k] : -d[k]) - 1;
        int z[4] = {s[k][0], s[k][1], s[k][2], s[k][3]};   /* the staple's far leg */
        tq_ks_step(dims, z, mu + 1);
        if (d[k] > 0) {   /* U_nu(y) M(y+nu) U_nu(y+mu)^dag */
            tq_su3_mul(t, tq_ks_thin(links, dims, s[k], nu), m);
            tq_su3_mul_adj(m, t, tq_ks_thin(links, dims, z, nu));
        } else {          /* U_nu(y-nu)^dag M(y-nu) U_nu(y-nu+mu) */
            tq_ks_step(dims, z, d[k]);
            tq_su3_adj_mul(t, tq_ks_thin(links, dims, s[k + 1], nu), m);
            tq_su3_mul(m, t, tq_ks_thin(links, dims, z, nu));
        }
    }
    tq_su3_copy(out, m);
}

/* out += c m */
TQ_HD void tq_ks_add_scaled(double *out, double c, const double *m)
{
    for (int i = 0; i < 18; i++) out[i] += c * m[i];
}

/* The fat link V_mu(x), phases and boundary factor included. */
TQ_HD void tq_ks_fat_link(const tq_ks_build_args *a, const double *links, const int x[4], int mu, double *V)
{
    double m[18];
    int d[3];
    tq_ks_staples(links, a->dims, x, mu, d, 0, m);
    for (int i = 0; i < 18; i++) V[i] = a->c[TQ_KS_C1] * m[i];
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) continue;
        for (int snu = -1; snu <= 1; snu += 2) {
            d[0] = snu * (nu + 1);
            tq_ks_staples(links, a->dims, x, mu, d, 1, m);
            tq_ks_add_scaled(V, a->c[TQ_KS_C3], m);
            if (a->c[TQ_KS_LEPAGE] != 0.0) {   /* HISQ's first level has none */
                d[1] = d[0];
                tq_ks_staples(links, a->dims, x, mu, d, 2, m);
                tq_ks_add_scaled(V, a->c[TQ_KS_LEPAGE], m);
            }
            for (int rho = 0; rho < 4; rho++) {
                if (rho == mu || rho == nu) continue;
                for (int srho = -1; srho <= 1; srho += 2) {
                    d[1] = srho * (rho + 1);
                    tq_ks_staples(links, a->dims, x, mu, d, 2, m);
                    tq_ks_add_scaled(V, a->c[TQ_KS_C5], m);
                    for (int sig = 0; sig < 4; sig++) {
                        if (sig == mu || sig == nu || sig == rho) continue;
                        for (int ssig = -1; ssig <= 1; ssig += 2) {
                            d[2] = ssig * (sig + 1);
                            tq_ks_staples(links, a->dims, x, mu, d, 3, m);
                            tq_ks_add_scaled(V, a->c[TQ_KS_C7], m);
                        }
                    }
                }
            }
        }
    }
}

/* The Naik link W_mu(x) = cN U_mu(x) U_mu(x+mu) U_mu(x+2mu). */
TQ_HD void tq_ks_long_link(const tq_ks_build_args *a, const double *links, const int x[4], int mu, double *W)
{
    int y[4] = {x[0], x[1], x[2], x[3]};
    double t[18], m[18];
    tq_su3_copy(m, tq_ks_thin(links, a->dims, y, mu));
    for (int k = 0; k < 2; k++) {
        tq_ks_step(a->dims, y, mu + 1);
        tq_su3_mul(t, m, tq_ks_thin(links, a->dims, y, mu));
        tq_su3_copy(m, t);
    }
    for (int i = 0; i < 18; i++) W[i] = a->c[TQ_KS_NAIK] * m[i];
}

/* eta_mu(x) times the boundary factor of a hop of `hops` links from x along mu. */
TQ_HD double tq_ks_phase(const tq_ks_build_args *a, const int x[4], int mu, int hops)
{
    int s = 0;
    for (int nu = 0; nu < mu; nu++) s += x[nu];
    return ((s & 1) ? -1.0 : 1.0) * (x[mu] + hops >= a->dims[mu] ? a->bc[mu] : 1.0);
}

/* The 16 matrices of site cb (parity a->parity) of the block into the links buffer out. */
TQ_HD void tq_ks_build_site(const tq_ks_build_args *a, const double *links, void *out, int64_t cb)
{
    int xb[4], x[4];
    tq_block_coords(a->block, a->parity, cb, xb);
    for (int mu = 0; mu < 4; mu++) x[mu] = a->origin[mu] + xb[mu];
    double u[72], m[18];   /* one direction's four matrices: its three rows */
    for (int mu = 0; mu < 4; mu++) {
        double f = tq_ks_phase(a, x, mu, 1);
        tq_ks_fat_link(a, links, x, mu, m);
        for (int i = 0; i < 18; i++) u[18 * TQ_KS_FAT + i] = f * m[i];
        f = tq_ks_phase(a, x, mu, 3);
        tq_ks_long_link(a, links, x, mu, m);
        for (int i = 0; i < 18; i++) u[18 * TQ_KS_LONG + i] = f * m[i];
        for (int h = 1; h <= 3; h += 2) {   /* the backward links: of the site h steps down, daggered */
            int y[4] = {x[0], x[1], x[2], x[3]};
            for (int k = 0; k < h; k++) tq_ks_step(a->dims, y, -(mu + 1));
            if (h == 1) tq_ks_fat_link(a, links, y, mu, m);
            else tq_ks_long_link(a, links, y, mu, m);
            f = tq_ks_phase(a, y, mu, h);
            double md[18];
            tq_su3_adjoint(md, m);
            for (int i = 0; i < 18; i++) u[18 * (h == 1 ? TQ_KS_FAT_BACK : TQ_KS_LONG_BACK) + i] = f * md[i];
        }
        for (int j = 0; j < TQ_KS_DIR_ROWS; j++) tq_store_site(out, &a->L, (TQ_KS_DIR_ROWS * mu + j) * a->cb + cb, u + 24 * j);
    }
}

/* ---- HISQ's first level (kernels shared with the asqtad build above) ----------------------
 * W_mu(x) = V (V^dag V)^(-1/2) with V the fat7 link of the thin links (tq_ks_fat_link with
 * fat7's coefficients, no phases): the links the second level smears again and the Naik term
 * uses (src/dirac/staggered.c, tq_ks_op_create_hisq). */

/* W = V (V^dag V)^(-1/2), the projection onto U(3): the eigenvalues g_k of Q = V^dag V in
 * closed form (the trigonometric solution of its characteristic cubic), then
 * Q^(-1/2) = f0 + f1 Q + f2 Q^2 with the f's from the symmetric functions u, v, w of the
 * sqrt(g_k) (smooth in the g_k: nearly equal eigenvalues cost no accuracy). */
TQ_HD void tq_ks_u3_project(double *W, const double *V)
{
    double Q[18], Q2[18], B[18], S[18];
    tq_su3_adj_mul(Q, V, V);
    tq_su3_mul(Q2, Q, Q);
    const double c0 = (Q[0] + Q[8] + Q[16]) / 3.0;
    double p2 = 0;   /* tr((Q - c0)^2) / 6, summed as |entries|^2 (no cancellation) */
    for (int i = 0; i < 18; i++) {
        const double q = Q[i] - ((i == 0 || i == 8 || i == 16) ? c0 : 0.0);
        B[i] = q;
        p2 += q * q;
    }
    p2 /= 6.0;
    double g[3] = {c0, c0, c0};
    if (p2 > 1e-30 * c0 * c0) {
        const double p = sqrt(p2);
        for (int i = 0; i < 18; i++) B[i] /= p;
        double det[2];
        tq_su3_det(det, B);
        double r = det[0] / 2.0;
        r = r > 1.0 ? 1.0 : r < -1.0 ? -1.0 : r;
        const double phi = acos(r) / 3.0, two_pi_3 = 2.0943951023931954923;
        for (int k = 0; k < 3; k++) g[k] = c0 + 2.0 * p * cos(phi + two_pi_3 * k);
    }
    const double s0 = sqrt(g[0]), s1 = sqrt(g[1]), s2 = sqrt(g[2]);
    const double u = s0 + s1 + s2, v = s0 * s1 + s0 * s2 + s1 * s2, w = s0 * s1 * s2;
    const double den = w * (u * v - w);
    const double f0 = (-w * (u * u + v) + u * v * v) / den, f1 = (-w - u * u * u + 2.0 * u * v) / den, f2 = u / den;
    for (int i = 0; i < 18; i++) S[i] = f1 * Q[i] + f2 * Q2[i] + ((i == 0 || i == 8 || i == 16) ? f0 : 0.0);
    tq_su3_mul(W, V, S);
}

/* A first-level task's sites: a range of the API's site order (whole time slices). */
typedef struct tq_ks_smear_args {
    tq_ks_build_args b;   /* dims and fat7's coefficients (the rest unused) */
    int64_t first, count;
} tq_ks_smear_args;

/* W of site first + i (4 links, 72 doubles at w + 72 i). */
TQ_HD void tq_ks_hisq_w_site(const tq_ks_smear_args *a, const double *thin, double *w, int64_t i)
{
    int64_t s = a->first + i;
    int x[4];
    for (int mu = 0; mu < 4; mu++) x[mu] = (int)(s % a->b.dims[mu]), s /= a->b.dims[mu];
    double V[18];
    for (int mu = 0; mu < 4; mu++) {
        tq_ks_fat_link(&a->b, thin, x, mu, V);
        tq_ks_u3_project(w + (i * 4 + mu) * 18, V);
    }
}


#endif
