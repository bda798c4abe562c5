/* Plain-loop double-precision host reference for improved staggered fermions (asqtad):
 * the fat and long links built from thin links, the staggered phases, and the operator.
 *
 * Written from the action's definition (doc/conventions.md, "Improved staggered fermions"),
 * independently of the library's kernels: every path is walked link by link as a product of
 * 3x3 matrices, every orientation enumerated explicitly. Nothing here is optimised.
 *
 * Host layout: that of reference/wilson_reference.h (whose geometry and matrix helpers this
 * header uses): site = ((t*Z + z)*Y + y)*X + x, links[((site*4 + mu)*9 + row*3 + col)*2 + re/im],
 * U_mu(x) from x to x+mu. A staggered field has one colour vector per site:
 * psi[(site*3 + color)*2 + reim] (6 reals per site).
 *
 * The asqtad fat link (MILC's asqtad action; tadpole factor u0, a path of L links weighted by
 * u0^-(L-1)), on thin links WITHOUT staggered phases:
 *   V_mu(x) = c1 U_mu(x) + c3 sum(3-staples) + c5 sum(5-staples) + c7 sum(7-staples)
 *             + cL sum(Lepage staples)
 *   W_mu(x) = cN U_mu(x) U_mu(x+mu) U_mu(x+2mu)                              (the Naik link)
 * with c1 = 5/8, c3 = 1/16, c5 = 1/64, c7 = 1/384, cL = -1/16, cN = -1/24 (before the u0
 * factors). The staples run over every transverse direction and both signs: 6 three-link,
 * 24 five-link, 48 seven-link and 6 Lepage paths per link. A unit gauge field gives V = 9/8
 * and W = -1/24 (9/8 + 3 cN = 1: the tree-level normalised Naik derivative).
 * MILC multiplies the staggered phases into the thin links first and then uses the signs
 * (c3, c5, c7) -> (-1/16, +1/64, -1/384): each transverse direction a path detours through
 * contributes a factor -1 of the phases. ref_ks_fat_long_phased is that route, kept as an
 * independent check of the phase bookkeeping.
 *
 * Staggered phases (MILC): eta_x = 1, eta_y = (-1)^x, eta_z = (-1)^(x+y),
 * eta_t = (-1)^(x+y+z); boundary factor bc[mu] on every link (and so every fat and long
 * link) that crosses the lattice's end in mu (bc = {1, 1, 1, -1}: antiperiodic in time).
 *
 * Operator (MILC's normalisation M = 2m + D; D anti-Hermitian, links with phases):
 *   D psi(x) = sum_mu [ V_mu(x) psi(x+mu) - V_mu(x-mu)^dag psi(x-mu)
 *                       + W_mu(x) psi(x+3mu) - W_mu(x-3mu)^dag psi(x-3mu) ]
 * D connects even sites with odd ones only (one and three hops), so the even-odd operator
 * is 4m^2 - D_eo D_oe on the even sites.
 *
 * Internal helpers are prefixed sref_. */
#ifndef TQ_STAGGERED_REFERENCE_H
#define TQ_STAGGERED_REFERENCE_H

#include "wilson_reference.h"

/* Path coefficients of the asqtad action for thin links without phases, u0 = 1. */
enum { SREF_ONE, SREF_NAIK, SREF_STAPLE3, SREF_STAPLE5, SREF_STAPLE7, SREF_LEPAGE, SREF_NPATH };
static const double sref_asqtad_coeff[SREF_NPATH] = {5.0 / 8.0, -1.0 / 24.0, 1.0 / 16.0, 1.0 / 64.0, 1.0 / 384.0,
                                                     -1.0 / 16.0};
/* Links per path (the u0 weight is u0^-(length - 1)). */
static const int sref_path_length[SREF_NPATH] = {1, 3, 3, 5, 7, 5};

/* The coefficients with the tadpole factors folded in. */
static inline void ref_asqtad_coefficients(double u0, double c[SREF_NPATH])
{
    for (int p = 0; p < SREF_NPATH; p++) c[p] = sref_asqtad_coeff[p] / pow(u0, sref_path_length[p] - 1);
}

/* The staggered phase eta_mu at coordinates c (MILC's convention). */
static inline int ref_ks_eta(const int c[4], int mu)
{
    int s = 0;
    for (int nu = 0; nu < mu; nu++) s += c[nu];
    return (s & 1) ? -1 : 1;
}

/* The product of the links along a path from `site`: steps[k] = +(mu + 1) forward along mu,
 * -(mu + 1) backward (the link U_mu(y - mu)^dag), periodically wrapped. out = 18 doubles.
 * Returns the site the path ends on. */
static inline int64_t sref_path(double *out, const double *links, const int dims[4], int64_t site, const int *steps,
                                int nsteps)
{
    double acc[18], t[18];
    memset(acc, 0, sizeof acc);
    for (int i = 0; i < 3; i++) acc[(i * 3 + i) * 2] = 1.0;
    int64_t y = site;
    for (int k = 0; k < nsteps; k++) {
        const int mu = (steps[k] > 0 ? steps[k] : -steps[k]) - 1;
        if (steps[k] > 0) {
            wref_m3_mul(t, acc, 0, wref_link(links, y, mu), 0);
            y = wref_neighbor(y, dims, mu, +1, NULL);
        } else {
            y = wref_neighbor(y, dims, mu, -1, NULL);
            wref_m3_mul(t, acc, 0, wref_link(links, y, mu), 1);
        }
        memcpy(acc, t, sizeof acc);
    }
    memcpy(out, acc, sizeof acc);
    return y;
}

/* acc += c * path */
static inline void sref_add_path(double *acc, double c, const double *links, const int dims[4], int64_t site,
                                 const int *steps, int nsteps)
{
    double p[18];
    sref_path(p, links, dims, site, steps, nsteps);
    for (int i = 0; i < 18; i++) acc[i] += c * p[i];
}

/* The fat link V_mu(x) of links at `site` with coefficients c (SREF_NAIK unused): the
 * staples enumerated as signed transverse directions nu, then rho, then sigma, each distinct
 * from mu and from each other; the Lepage staple goes twice along nu. */
static inline void sref_fat_link(double *V, const double *links, const int dims[4], int64_t site, int mu,
                                 const double c[SREF_NPATH])
{
    memset(V, 0, 18 * sizeof(double));
    const int m = mu + 1;
    int steps[7] = {m};
    sref_add_path(V, c[SREF_ONE], links, dims, site, steps, 1);
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) continue;
        for (int snu = -1; snu <= 1; snu += 2) {
            const int n = snu * (nu + 1);
            const int s3[3] = {n, m, -n}, sl[5] = {n, n, m, -n, -n};
            sref_add_path(V, c[SREF_STAPLE3], links, dims, site, s3, 3);
            sref_add_path(V, c[SREF_LEPAGE], links, dims, site, sl, 5);
            for (int rho = 0; rho < 4; rho++) {
                if (rho == mu || rho == nu) continue;
                for (int srho = -1; srho <= 1; srho += 2) {
                    const int r = srho * (rho + 1);
                    const int s5[5] = {n, r, m, -r, -n};
                    sref_add_path(V, c[SREF_STAPLE5], links, dims, site, s5, 5);
                    for (int sig = 0; sig < 4; sig++) {
                        if (sig == mu || sig == nu || sig == rho) continue;
                        for (int ssig = -1; ssig <= 1; ssig += 2) {
                            const int q = ssig * (sig + 1);
                            const int s7[7] = {n, r, q, m, -q, -r, -n};
                            sref_add_path(V, c[SREF_STAPLE7], links, dims, site, s7, 7);
                        }
                    }
                }
            }
        }
    }
}

/* Multiplies the staggered phases and the boundary factors into `field` (4 matrices per
 * site): a one-link field (hops = 1: U_mu(x) crosses the end when x_mu = L - 1) or a
 * three-link one (hops = 3: W_mu(x) crosses when x_mu >= L - 3). */
static inline void ref_ks_apply_phases(double *field, const int dims[4], const double bc[4], int hops)
{
    const int64_t vol = ref_volume(dims);
    for (int64_t s = 0; s < vol; s++) {
        int c[4];
        wref_coords(s, dims, c);
        for (int mu = 0; mu < 4; mu++) {
            const double f = ref_ks_eta(c, mu) * (c[mu] + hops >= dims[mu] ? bc[mu] : 1.0);
            double *u = field + (s * 4 + mu) * 18;
            for (int i = 0; i < 18; i++) u[i] *= f;
        }
    }
}

/* Every site's fat and long links of `links` with path coefficients c, as they are. */
static inline void sref_links_from(double *fat, double *lng, const double *links, const int dims[4],
                                   const double c[SREF_NPATH])
{
    const int64_t vol = ref_volume(dims);
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++) {
            sref_fat_link(fat + (s * 4 + mu) * 18, links, dims, s, mu, c);
            const int naik[3] = {mu + 1, mu + 1, mu + 1};
            double *w = lng + (s * 4 + mu) * 18;
            memset(w, 0, 18 * sizeof(double));
            sref_add_path(w, c[SREF_NAIK], links, dims, s, naik, 3);
        }
}

/* Asqtad fat and long links (18 doubles per link, 4 per site, with the staggered phases and
 * boundary factors) from thin links without phases. */
static inline void ref_ks_fat_long(double *fat, double *lng, const double *links, const int dims[4], double u0,
                                   const double bc[4])
{
    double c[SREF_NPATH];
    ref_asqtad_coefficients(u0, c);
    sref_links_from(fat, lng, links, dims, c);
    ref_ks_apply_phases(fat, dims, bc, 1);
    ref_ks_apply_phases(lng, dims, bc, 3);
}

/* MILC's route: the phases and boundary factors multiplied into the thin links first, then
 * the paths with MILC's signs (each transverse direction of a path a factor -1). Equal to
 * ref_ks_fat_long up to rounding. */
static inline void ref_ks_fat_long_phased(double *fat, double *lng, const double *links, const int dims[4], double u0,
                                          const double bc[4])
{
    const int64_t vol = ref_volume(dims);
    double *ph = (double *)malloc(sizeof(double) * 72 * (size_t)vol);
    if (!ph) return;
    memcpy(ph, links, sizeof(double) * 72 * (size_t)vol);
    ref_ks_apply_phases(ph, dims, bc, 1);
    double c[SREF_NPATH];
    ref_asqtad_coefficients(u0, c);
    c[SREF_STAPLE3] = -c[SREF_STAPLE3];
    c[SREF_STAPLE7] = -c[SREF_STAPLE7];
    sref_links_from(fat, lng, ph, dims, c);
    free(ph);
}

/* out = D in (staggered fields, 6 doubles per site) with fat and long links carrying their
 * phases; out must not alias in. */
static inline void ref_ks_dslash(double *out, const double *fat, const double *lng, const double *in,
                                 const int dims[4])
{
    const int64_t vol = ref_volume(dims);
    for (int64_t s = 0; s < vol; s++) {
        double acc[6] = {0, 0, 0, 0, 0, 0}, t[6];
        for (int mu = 0; mu < 4; mu++) {
            int d[4] = {0, 0, 0, 0};
            for (int h = 1; h <= 3; h += 2) {
                const double *L = h == 1 ? fat : lng;
                d[mu] = h;
                const int64_t fwd = wref_displace(s, dims, d);
                d[mu] = -h;
                const int64_t bwd = wref_displace(s, dims, d);
                wref_m3_vec(t, wref_link(L, s, mu), 0, in + 6 * fwd);
                for (int i = 0; i < 6; i++) acc[i] += t[i];
                wref_m3_vec(t, wref_link(L, bwd, mu), 1, in + 6 * bwd);
                for (int i = 0; i < 6; i++) acc[i] -= t[i];
            }
        }
        memcpy(out + 6 * s, acc, sizeof acc);
    }
}

/* out = (2m + D) in. */
static inline void ref_ks_mat(double *out, const double *fat, const double *lng, const double *in, double mass,
                              const int dims[4])
{
    ref_ks_dslash(out, fat, lng, in, dims);
    const int64_t n = 6 * ref_volume(dims);
    for (int64_t i = 0; i < n; i++) out[i] += 2.0 * mass * in[i];
}

/* ---- HISQ (Follana et al., hep-lat/0610092; MILC's HISQ action) ----------------------------
 * Two levels of smearing on thin links without phases:
 *   level 1: V = fat7(U) (c1 = 1/8, c3 = 1/16, c5 = 1/64, c7 = 1/384: a unit field gives 1),
 *            then W = V (V^dag V)^(-1/2), the projection onto U(3);
 *   level 2: the asqtad-like fat link of W with the Lepage coefficient doubled, c1 = 1 + eps/8,
 *            c3 = 1/16, c5 = 1/64, c7 = 1/384, cL = -1/8 (a unit field gives 9/8 + eps/8),
 *            and the Naik link of W with -(1 + eps)/24 (eps: the Naik epsilon of heavy
 *            quarks; 0 for light ones); no tadpole factor.
 * The phases and boundary factors go on last, as for asqtad (a sign per link commutes with
 * the projection). The inverse square root here: Denman-Beavers iterations (the library's
 * kernel uses the closed form of the eigenvalues: an independent route). */
static const double sref_fat7_coeff[SREF_NPATH] = {1.0 / 8.0, 0.0, 1.0 / 16.0, 1.0 / 64.0, 1.0 / 384.0, 0.0};

/* The inverse of a 3x3 complex matrix (adjugate over determinant). */
static inline void sref_m3_inverse(double *inv, const double *a)
{
    double cof[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {   /* cofactor of a[j][i] into inv[i][j] (the adjugate) */
            const int r0 = (j + 1) % 3, r1 = (j + 2) % 3, c0 = (i + 1) % 3, c1 = (i + 2) % 3;
            const double *p = a + (r0 * 3 + c0) * 2, *q = a + (r1 * 3 + c1) * 2, *u = a + (r0 * 3 + c1) * 2,
                         *v = a + (r1 * 3 + c0) * 2;
            cof[(i * 3 + j) * 2] = p[0] * q[0] - p[1] * q[1] - (u[0] * v[0] - u[1] * v[1]);
            cof[(i * 3 + j) * 2 + 1] = p[0] * q[1] + p[1] * q[0] - (u[0] * v[1] + u[1] * v[0]);
        }
    double dr = 0, di = 0;   /* det = sum_j a[0][j] cof[j][0] */
    for (int j = 0; j < 3; j++) {
        const double *x = a + j * 2, *y = cof + (j * 3) * 2;
        dr += x[0] * y[0] - x[1] * y[1];
        di += x[0] * y[1] + x[1] * y[0];
    }
    const double n = dr * dr + di * di;
    for (int k = 0; k < 9; k++) {
        const double re = cof[2 * k], im = cof[2 * k + 1];
        inv[2 * k] = (re * dr + im * di) / n;
        inv[2 * k + 1] = (im * dr - re * di) / n;
    }
}

/* W = V (V^dag V)^(-1/2): Q = V^dag V scaled to trace 3, then Denman-Beavers iterations
 * Y <- (Y + Z^-1) / 2, Z <- (Z + Y^-1) / 2 from Y = Q, Z = 1 (Z -> Q^(-1/2)) until Z stops
 * changing. */
static inline void sref_u3_project(double *W, const double *V)
{
    double Q[18], Y[18], Z[18], Yi[18], Zi[18];
    wref_m3_mul(Q, V, 1, V, 0);
    const double q = (Q[0] + Q[8] + Q[16]) / 3.0;
    for (int i = 0; i < 18; i++) Y[i] = Q[i] / q, Z[i] = (i == 0 || i == 8 || i == 16) ? 1.0 : 0.0;
    for (int it = 0; it < 100; it++) {
        sref_m3_inverse(Yi, Y);
        sref_m3_inverse(Zi, Z);
        double change = 0, size = 0;
        for (int i = 0; i < 18; i++) {
            const double z = 0.5 * (Z[i] + Yi[i]);
            change += (z - Z[i]) * (z - Z[i]);
            size += z * z;
            Y[i] = 0.5 * (Y[i] + Zi[i]);
            Z[i] = z;
        }
        if (change <= 1e-32 * size) break;
    }
    for (int i = 0; i < 18; i++) Z[i] /= sqrt(q);
    wref_m3_mul(W, V, 0, Z, 0);
}

/* HISQ fat and long links (with phases and boundary factors) from thin links without phases. */
static inline void ref_hisq_fat_long(double *fat, double *lng, const double *links, const int dims[4], double eps,
                                     const double bc[4])
{
    const int64_t vol = ref_volume(dims);
    double *w = (double *)malloc(sizeof(double) * 72 * (size_t)vol);
    if (!w) return;
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++) {
            double V[18];
            sref_fat_link(V, links, dims, s, mu, sref_fat7_coeff);
            sref_u3_project(w + (s * 4 + mu) * 18, V);
        }
    const double c[SREF_NPATH] = {1.0 + eps / 8.0, -(1.0 + eps) / 24.0, 1.0 / 16.0, 1.0 / 64.0, 1.0 / 384.0, -1.0 / 8.0};
    sref_links_from(fat, lng, w, dims, c);
    free(w);
    ref_ks_apply_phases(fat, dims, bc, 1);
    ref_ks_apply_phases(lng, dims, bc, 3);
}

#endif
