/* Plain-loop double-precision host reference for the Wilson and Wilson-clover Dirac operators.
 *
 * Written from the formulas in doc/conventions.md and the definitions below, independently of
 * the library's kernels, so that a library test compares two implementations. Nothing here is
 * optimised: gamma matrices are explicit 4x4 complex matrices multiplied generically, spin
 * projectors are formed as (1 -/+ gamma_mu) chi with a full gamma multiply, and the clover
 * matrix is assembled as a dense 12x12 complex matrix at every site.
 *
 * Host layout (the API's):
 *   dims[4] = {X, Y, Z, T}, all even; site = ((t*Z + z)*Y + y)*X + x; parity = (x+y+z+t) & 1.
 *   spinor  psi[((site*4 + spin)*3 + color)*2 + reim]               (24 reals per site)
 *   links   links[(((site*4 + mu)*3 + row)*3 + col)*2 + reim]      (72 reals per site)
 *           U_mu(x) is the link from x to x+mu; no boundary phases stored.
 *   bc[4]   real factor (+1 periodic, -1 antiperiodic) applied to every hop that crosses the
 *           lattice boundary in direction mu (forward from L-1 to 0, backward from 0 to L-1).
 *
 * Gamma matrices: DeGrand-Rossi basis (MILC, Chroma, QUDA); gamma_5 = g0 g1 g2 g3 (computed).
 *
 * Hopping term:
 *   D psi(x)     = sum_mu [ (1 - g_mu) U_mu(x) psi(x+mu) + (1 + g_mu) U_mu(x-mu)^dag psi(x-mu) ]
 *   D^dag psi(x) = sum_mu [ (1 + g_mu) U_mu(x) psi(x+mu) + (1 - g_mu) U_mu(x-mu)^dag psi(x-mu) ]
 * Wilson matrix (kappa normalisation): M = 1 - kappa D;  mass form (4 + m) - D/2 = M / (2 kappa)
 * with m = 1/(2 kappa) - 4.
 *
 * Clover (Sheikholeslami-Wohlert, kappa normalisation): see ref_clover_site. M = A - kappa D.
 *
 * Internal helpers are prefixed wref_; names do not collide with tests/blas_reference.h
 * (which already has ref_norm2 with another signature, hence ref_vnorm2 here). */
#ifndef TQ_WILSON_REFERENCE_H
#define TQ_WILSON_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------------------------- */
/* Geometry                                                                                  */
/* ---------------------------------------------------------------------------------------- */

static inline int64_t ref_volume(const int dims[4])
{
    return (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
}

static inline void wref_coords(int64_t site, const int dims[4], int c[4])
{
    for (int mu = 0; mu < 4; mu++) {
        c[mu] = (int)(site % dims[mu]);
        site /= dims[mu];
    }
}

static inline int64_t wref_site(const int c[4], const int dims[4])
{
    return (((int64_t)c[3] * dims[2] + c[2]) * dims[1] + c[1]) * dims[0] + c[0];
}

static inline int ref_site_parity(int64_t site, const int dims[4])
{
    int c[4];
    wref_coords(site, dims, c);
    return (c[0] + c[1] + c[2] + c[3]) & 1;
}

/* Neighbour of site one step in direction mu, forward (dir = +1) or backward (dir = -1),
 * periodically wrapped. *crossed (if not NULL) is set to 1 when the step wraps around. */
static inline int64_t wref_neighbor(int64_t site, const int dims[4], int mu, int dir, int *crossed)
{
    int c[4];
    wref_coords(site, dims, c);
    int w = 0;
    c[mu] += dir;
    if (c[mu] >= dims[mu]) { c[mu] -= dims[mu]; w = 1; }
    if (c[mu] < 0) { c[mu] += dims[mu]; w = 1; }
    if (crossed) *crossed = w;
    return wref_site(c, dims);
}

/* Site reached by a displacement of (d[0], d[1], d[2], d[3]) steps, periodically wrapped. */
static inline int64_t wref_displace(int64_t site, const int dims[4], const int d[4])
{
    int c[4];
    wref_coords(site, dims, c);
    for (int mu = 0; mu < 4; mu++) {
        c[mu] = (c[mu] + d[mu]) % dims[mu];
        if (c[mu] < 0) c[mu] += dims[mu];
    }
    return wref_site(c, dims);
}

static inline const double *wref_link(const double *links, int64_t site, int mu)
{
    return links + (site * 4 + mu) * 18;
}

/* ---------------------------------------------------------------------------------------- */
/* Complex 3x3 matrices (18 doubles, [(row*3 + col)*2 + reim])                               */
/* ---------------------------------------------------------------------------------------- */

/* c = op(a) op(b), op = identity or dagger (da, db != 0); c must not alias a or b. */
static inline void wref_m3_mul(double *c, const double *a, int da, const double *b, int db)
{
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double re = 0, im = 0;
            for (int k = 0; k < 3; k++) {
                double ar, ai, br, bi;
                if (da) { ar = a[(k * 3 + i) * 2]; ai = -a[(k * 3 + i) * 2 + 1]; }
                else    { ar = a[(i * 3 + k) * 2]; ai =  a[(i * 3 + k) * 2 + 1]; }
                if (db) { br = b[(j * 3 + k) * 2]; bi = -b[(j * 3 + k) * 2 + 1]; }
                else    { br = b[(k * 3 + j) * 2]; bi =  b[(k * 3 + j) * 2 + 1]; }
                re += ar * br - ai * bi;
                im += ar * bi + ai * br;
            }
            c[(i * 3 + j) * 2] = re;
            c[(i * 3 + j) * 2 + 1] = im;
        }
}

/* out[color] = op(U) in[color] for one 3-vector (6 doubles); out must not alias in. */
static inline void wref_m3_vec(double *out, const double *u, int dag, const double *in)
{
    for (int i = 0; i < 3; i++) {
        double re = 0, im = 0;
        for (int k = 0; k < 3; k++) {
            double ur, ui;
            if (dag) { ur = u[(k * 3 + i) * 2]; ui = -u[(k * 3 + i) * 2 + 1]; }
            else     { ur = u[(i * 3 + k) * 2]; ui =  u[(i * 3 + k) * 2 + 1]; }
            re += ur * in[2 * k] - ui * in[2 * k + 1];
            im += ur * in[2 * k + 1] + ui * in[2 * k];
        }
        out[2 * i] = re;
        out[2 * i + 1] = im;
    }
}

/* out (24 doubles, one site) = op(U) applied to each of the 4 spin components of in. */
static inline void wref_color_mul_site(double *out, const double *u, int dag, const double *in)
{
    for (int s = 0; s < 4; s++) wref_m3_vec(out + s * 6, u, dag, in + s * 6);
}

/* ---------------------------------------------------------------------------------------- */
/* Gamma matrices                                                                            */
/* ---------------------------------------------------------------------------------------- */

/* gamma_mu[row][col][reim], DeGrand-Rossi basis, mu = 0..3 for x, y, z, t. */
static const double wref_gamma_table[4][4][4][2] = {
    /* gamma_0 (x) = [[0,0,0,i],[0,0,i,0],[0,-i,0,0],[-i,0,0,0]] */
    { { {0, 0}, {0, 0}, {0, 0}, {0, 1} },
      { {0, 0}, {0, 0}, {0, 1}, {0, 0} },
      { {0, 0}, {0, -1}, {0, 0}, {0, 0} },
      { {0, -1}, {0, 0}, {0, 0}, {0, 0} } },
    /* gamma_1 (y) = [[0,0,0,-1],[0,0,1,0],[0,1,0,0],[-1,0,0,0]] */
    { { {0, 0}, {0, 0}, {0, 0}, {-1, 0} },
      { {0, 0}, {0, 0}, {1, 0}, {0, 0} },
      { {0, 0}, {1, 0}, {0, 0}, {0, 0} },
      { {-1, 0}, {0, 0}, {0, 0}, {0, 0} } },
    /* gamma_2 (z) = [[0,0,i,0],[0,0,0,-i],[-i,0,0,0],[0,i,0,0]] */
    { { {0, 0}, {0, 0}, {0, 1}, {0, 0} },
      { {0, 0}, {0, 0}, {0, 0}, {0, -1} },
      { {0, -1}, {0, 0}, {0, 0}, {0, 0} },
      { {0, 0}, {0, 1}, {0, 0}, {0, 0} } },
    /* gamma_3 (t) = [[0,0,1,0],[0,0,0,1],[1,0,0,0],[0,1,0,0]] */
    { { {0, 0}, {0, 0}, {1, 0}, {0, 0} },
      { {0, 0}, {0, 0}, {0, 0}, {1, 0} },
      { {1, 0}, {0, 0}, {0, 0}, {0, 0} },
      { {0, 0}, {1, 0}, {0, 0}, {0, 0} } },
};

/* c = a b for 4x4 complex matrices; c must not alias a or b. (a and b are not modified; they
 * are not declared const because C before C23 does not convert double[4][4][2] to it.) */
static inline void wref_m4_mul(double c[4][4][2], double a[4][4][2], double b[4][4][2])
{
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double re = 0, im = 0;
            for (int k = 0; k < 4; k++) {
                re += a[i][k][0] * b[k][j][0] - a[i][k][1] * b[k][j][1];
                im += a[i][k][0] * b[k][j][1] + a[i][k][1] * b[k][j][0];
            }
            c[i][j][0] = re;
            c[i][j][1] = im;
        }
}

/* The 4x4 gamma matrix g[row][col][reim]: mu = 0..3 from the table, mu = 4 gamma_5 computed as
 * the product gamma_0 gamma_1 gamma_2 gamma_3. */
static inline void ref_gamma_matrix(int mu, double g[4][4][2])
{
    if (mu >= 0 && mu < 4) {
        memcpy(g, wref_gamma_table[mu], sizeof(double) * 32);
        return;
    }
    double g0[4][4][2], g1[4][4][2], g2[4][4][2], g3[4][4][2], t1[4][4][2], t2[4][4][2];
    memcpy(g0, wref_gamma_table[0], sizeof g0);
    memcpy(g1, wref_gamma_table[1], sizeof g1);
    memcpy(g2, wref_gamma_table[2], sizeof g2);
    memcpy(g3, wref_gamma_table[3], sizeof g3);
    wref_m4_mul(t1, g0, g1);
    wref_m4_mul(t2, t1, g2);
    wref_m4_mul(g, t2, g3);
}

/* sigma_{mu nu} = (i/2) [gamma_mu, gamma_nu], as a 4x4 complex matrix. */
static inline void ref_sigma_matrix(int mu, int nu, double s[4][4][2])
{
    double gm[4][4][2], gn[4][4][2], ab[4][4][2], ba[4][4][2];
    ref_gamma_matrix(mu, gm);
    ref_gamma_matrix(nu, gn);
    wref_m4_mul(ab, gm, gn);
    wref_m4_mul(ba, gn, gm);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++) {
            double cr = ab[i][j][0] - ba[i][j][0], ci = ab[i][j][1] - ba[i][j][1];
            /* (i/2)(cr + i ci) = (-ci + i cr)/2 */
            s[i][j][0] = -0.5 * ci;
            s[i][j][1] = 0.5 * cr;
        }
}

/* out = gamma_mu in for one site (24 reals); mu = 4 means gamma_5. out must not alias in. */
static inline void ref_gamma_mul(int mu, const double *in, double *out)
{
    double g[4][4][2];
    ref_gamma_matrix(mu, g);
    for (int s = 0; s < 4; s++)
        for (int c = 0; c < 3; c++) {
            double re = 0, im = 0;
            for (int t = 0; t < 4; t++) {
                double xr = in[(t * 3 + c) * 2], xi = in[(t * 3 + c) * 2 + 1];
                re += g[s][t][0] * xr - g[s][t][1] * xi;
                im += g[s][t][0] * xi + g[s][t][1] * xr;
            }
            out[(s * 3 + c) * 2] = re;
            out[(s * 3 + c) * 2 + 1] = im;
        }
}

/* out = gamma_mu in on every site of a full-lattice spinor (mu = 4: gamma_5). No aliasing. */
static inline void ref_gamma_mul_field(int mu, const double *in, double *out, int64_t volume)
{
    for (int64_t s = 0; s < volume; s++) ref_gamma_mul(mu, in + 24 * s, out + 24 * s);
}

/* ---------------------------------------------------------------------------------------- */
/* Vector utilities over n reals (n/2 complex numbers, re/im interleaved)                    */
/* ---------------------------------------------------------------------------------------- */

/* Re and Im of <x, y> = sum conj(x_k) y_k. */
static inline double ref_cdot_re(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < n; k += 2) s += x[k] * y[k] + x[k + 1] * y[k + 1];
    return s;
}

static inline double ref_cdot_im(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < n; k += 2) s += x[k] * y[k + 1] - x[k + 1] * y[k];
    return s;
}

static inline double ref_vnorm2(const double *x, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < n; k++) s += x[k] * x[k];
    return s;
}

/* |x - y|^2 over n reals */
static inline double ref_vdiff2(const double *x, const double *y, int64_t n)
{
    double s = 0;
    for (int64_t k = 0; k < n; k++) s += (x[k] - y[k]) * (x[k] - y[k]);
    return s;
}

/* ---------------------------------------------------------------------------------------- */
/* Random numbers (splitmix64; independent of the library's Philox generator)                */
/* ---------------------------------------------------------------------------------------- */

static inline uint64_t wref_rng_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

/* uniform in (0, 1) */
static inline double wref_rng_uniform(uint64_t *state)
{
    return ((double)(wref_rng_next(state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

static inline double wref_rng_gaussian(uint64_t *state)
{
    double u1 = wref_rng_uniform(state), u2 = wref_rng_uniform(state);
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* A random SU(3) matrix: Gram-Schmidt of two rows of complex Gaussians, third row =
 * conj(row0 x row1). */
static inline void ref_su3_random(double *m, uint64_t *state)
{
    double r0[6], r1[6];
    for (int k = 0; k < 6; k++) r0[k] = wref_rng_gaussian(state);
    for (int k = 0; k < 6; k++) r1[k] = wref_rng_gaussian(state);
    double n0 = sqrt(ref_vnorm2(r0, 6));
    for (int k = 0; k < 6; k++) r0[k] /= n0;
    /* r1 -= <r0, r1> r0 */
    double pr = ref_cdot_re(r0, r1, 6), pi = ref_cdot_im(r0, r1, 6);
    for (int c = 0; c < 3; c++) {
        r1[2 * c] -= pr * r0[2 * c] - pi * r0[2 * c + 1];
        r1[2 * c + 1] -= pr * r0[2 * c + 1] + pi * r0[2 * c];
    }
    double n1 = sqrt(ref_vnorm2(r1, 6));
    for (int k = 0; k < 6; k++) r1[k] /= n1;
    for (int k = 0; k < 6; k++) { m[k] = r0[k]; m[6 + k] = r1[k]; }
    /* row2_c = conj(r0_a r1_b - r0_b r1_a) for (a, b, c) cyclic */
    for (int c = 0; c < 3; c++) {
        int a = (c + 1) % 3, b = (c + 2) % 3;
        double re = (r0[2 * a] * r1[2 * b] - r0[2 * a + 1] * r1[2 * b + 1])
                  - (r0[2 * b] * r1[2 * a] - r0[2 * b + 1] * r1[2 * a + 1]);
        double im = (r0[2 * a] * r1[2 * b + 1] + r0[2 * a + 1] * r1[2 * b])
                  - (r0[2 * b] * r1[2 * a + 1] + r0[2 * b + 1] * r1[2 * a]);
        m[12 + 2 * c] = re;
        m[12 + 2 * c + 1] = -im;
    }
}

/* Random SU(3) links on every site and direction. */
static inline void ref_gauge_random_su3(double *links, const int dims[4], uint64_t seed)
{
    uint64_t st = seed ^ 0x5851f42d4c957f2dULL;
    int64_t n = ref_volume(dims) * 4;
    for (int64_t l = 0; l < n; l++) ref_su3_random(links + 18 * l, &st);
}

/* Unit links. */
static inline void ref_gauge_unit(double *links, const int dims[4])
{
    int64_t n = ref_volume(dims) * 4;
    memset(links, 0, sizeof(double) * 18 * n);
    for (int64_t l = 0; l < n; l++)
        for (int i = 0; i < 3; i++) links[18 * l + (i * 3 + i) * 2] = 1.0;
}

/* Random spinor: independent Gaussian real and imaginary parts on all 24*volume reals. */
static inline void ref_spinor_random(double *psi, int64_t volume, uint64_t seed)
{
    uint64_t st = seed ^ 0x2545f4914f6cdd1dULL;
    for (int64_t k = 0; k < 24 * volume; k++) psi[k] = wref_rng_gaussian(&st);
}

/* Gauge transformation with g (18 doubles per site): U'_mu(x) = g(x) U_mu(x) g(x+mu)^dag
 * (periodic neighbour). out must not alias in. */
static inline void ref_gauge_transform_links(double *out, const double *links, const double *g,
                                             const int dims[4])
{
    int64_t vol = ref_volume(dims);
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++) {
            double t[18];
            int64_t sp = wref_neighbor(s, dims, mu, +1, NULL);
            wref_m3_mul(t, g + 18 * s, 0, wref_link(links, s, mu), 0);
            wref_m3_mul(out + (s * 4 + mu) * 18, t, 0, g + 18 * sp, 1);
        }
}

/* psi'(x) = g(x) psi(x). out must not alias in. */
static inline void ref_gauge_transform_spinor(double *out, const double *in, const double *g,
                                              int64_t volume)
{
    for (int64_t s = 0; s < volume; s++) wref_color_mul_site(out + 24 * s, g + 18 * s, 0, in + 24 * s);
}

/* ---------------------------------------------------------------------------------------- */
/* Wilson hopping term                                                                       */
/* ---------------------------------------------------------------------------------------- */

/* Hopping term D (dagger = 0) or D^dag (dagger != 0), see the top of the file.
 * out_parity 0 or 1: D psi on the sites of that parity (reading only in's other parity); the
 * other parity's sites of out are set to 0. out_parity 2: all sites.
 * out and in are full-lattice spinors (24 reals per site) and must not alias. */
static inline void ref_wilson_dslash(double *out, const double *links, const double *in,
                                     const int dims[4], const double bc[4], int dagger,
                                     int out_parity)
{
    int64_t vol = ref_volume(dims);
    /* forward hop gets (1 - sgn gamma), backward (1 + sgn gamma) */
    double sgn = dagger ? -1.0 : 1.0;
    for (int64_t s = 0; s < vol; s++) {
        double *o = out + 24 * s;
        memset(o, 0, sizeof(double) * 24);
        if (out_parity != 2 && ref_site_parity(s, dims) != out_parity) continue;
        for (int mu = 0; mu < 4; mu++) {
            double chi[24], gchi[24];
            int crossed;

            /* forward: (1 - sgn g_mu) U_mu(x) psi(x+mu) */
            int64_t sp = wref_neighbor(s, dims, mu, +1, &crossed);
            double ph = crossed ? bc[mu] : 1.0;
            wref_color_mul_site(chi, wref_link(links, s, mu), 0, in + 24 * sp);
            for (int k = 0; k < 24; k++) chi[k] *= ph;
            ref_gamma_mul(mu, chi, gchi);
            for (int k = 0; k < 24; k++) o[k] += chi[k] - sgn * gchi[k];

            /* backward: (1 + sgn g_mu) U_mu(x-mu)^dag psi(x-mu) */
            int64_t sm = wref_neighbor(s, dims, mu, -1, &crossed);
            ph = crossed ? bc[mu] : 1.0;
            wref_color_mul_site(chi, wref_link(links, sm, mu), 1, in + 24 * sm);
            for (int k = 0; k < 24; k++) chi[k] *= ph;
            ref_gamma_mul(mu, chi, gchi);
            for (int k = 0; k < 24; k++) o[k] += chi[k] + sgn * gchi[k];
        }
    }
}

/* M psi = psi - kappa D psi (dagger: psi - kappa D^dag psi) on all sites. No aliasing. */
static inline void ref_wilson_mat(double *out, const double *links, const double *in,
                                  const int dims[4], const double bc[4], double kappa, int dagger)
{
    int64_t n = 24 * ref_volume(dims);
    ref_wilson_dslash(out, links, in, dims, bc, dagger, 2);
    for (int64_t k = 0; k < n; k++) out[k] = in[k] - kappa * out[k];
}

/* ---------------------------------------------------------------------------------------- */
/* Clover term                                                                               */
/* ---------------------------------------------------------------------------------------- */

/* Q_{mu nu}(x): the four plaquettes in the mu-nu plane with a corner at x, all oriented
 * counter-clockwise (mu then nu):
 *     U_mu(x) U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag
 *   + U_nu(x) U_mu(x-mu+nu)^dag U_nu(x-mu)^dag U_mu(x-mu)
 *   + U_mu(x-mu)^dag U_nu(x-mu-nu)^dag U_mu(x-mu-nu) U_nu(x-nu)
 *   + U_nu(x-nu)^dag U_mu(x-nu) U_nu(x+mu-nu) U_mu(x)^dag
 * Links are taken without boundary phases (periodic wrapping). */
static inline void ref_clover_leaves(double *q, const double *links, const int dims[4],
                                     int64_t site, int mu, int nu)
{
    /* each leaf: 4 factors (displacement in units of mu and nu, direction, dagger) */
    static const int leaf[4][4][4] = {
        /* {dmu, dnu, dir(0 = mu, 1 = nu), dag} */
        { {0, 0, 0, 0}, {1, 0, 1, 0}, {0, 1, 0, 1}, {0, 0, 1, 1} },
        { {0, 0, 1, 0}, {-1, 1, 0, 1}, {-1, 0, 1, 1}, {-1, 0, 0, 0} },
        { {-1, 0, 0, 1}, {-1, -1, 1, 1}, {-1, -1, 0, 0}, {0, -1, 1, 0} },
        { {0, -1, 1, 1}, {0, -1, 0, 0}, {1, -1, 1, 0}, {0, 0, 0, 1} },
    };
    memset(q, 0, sizeof(double) * 18);
    for (int l = 0; l < 4; l++) {
        double p[18], t[18];
        memset(p, 0, sizeof p);
        for (int i = 0; i < 3; i++) p[(i * 3 + i) * 2] = 1.0;
        for (int f = 0; f < 4; f++) {
            int d[4] = {0, 0, 0, 0};
            d[mu] += leaf[l][f][0];
            d[nu] += leaf[l][f][1];
            int64_t s = wref_displace(site, dims, d);
            const double *u = wref_link(links, s, leaf[l][f][2] ? nu : mu);
            wref_m3_mul(t, p, 0, u, leaf[l][f][3]);
            memcpy(p, t, sizeof p);
        }
        for (int k = 0; k < 18; k++) q[k] += p[k];
    }
}

/* F_{mu nu}(x) = (Q_{mu nu}(x) - Q_{mu nu}(x)^dag) / 8 (anti-Hermitian, trace not removed). */
static inline void ref_clover_field_strength(double *f, const double *links, const int dims[4],
                                             int64_t site, int mu, int nu)
{
    double q[18];
    ref_clover_leaves(q, links, dims, site, mu, nu);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            f[(i * 3 + j) * 2] = (q[(i * 3 + j) * 2] - q[(j * 3 + i) * 2]) / 8.0;
            f[(i * 3 + j) * 2 + 1] = (q[(i * 3 + j) * 2 + 1] + q[(j * 3 + i) * 2 + 1]) / 8.0;
        }
}

/* The 12x12 clover matrix A(x), A[(r*12 + c)*2 + reim] with r, c = spin*3 + color:
 *
 *     A(x) = 1 + kappa * c_sw * sum_{mu<nu} sigma_{mu nu} (x) (i F_{mu nu}(x))
 *
 * with sigma_{mu nu} = (i/2)[gamma_mu, gamma_nu] (Hermitian, acting on spin) and
 * F_{mu nu} = (Q_{mu nu} - Q_{mu nu}^dag)/8 (anti-Hermitian, so i F is Hermitian, acting on
 * colour). Equivalently, with the Hermitian field strength F^H = -i F = (Q - Q^dag)/(8i):
 * A = 1 - kappa c_sw sum_{mu<nu} sigma F^H = 1 - (kappa c_sw / 2) sum_{all mu,nu} sigma F^H.
 * In the mass normalisation, M_mass = M / (2 kappa), this is the Sheikholeslami-Wohlert term
 * of Luescher et al., (4 + m) - D/2 + c_sw (i/4) sum_{all mu,nu} sigma_{mu nu} F_{mu nu}, the
 * sign that cancels the O(a) term -(i/4) sigma.F of the Wilson term for D as defined above
 * (checked numerically by test_wilson_reference). A is Hermitian and commutes with gamma_5. */
static inline void ref_clover_site(double *A, const double *links, const int dims[4],
                                   int64_t site, double kappa, double csw)
{
    memset(A, 0, sizeof(double) * 288);
    for (int r = 0; r < 12; r++) A[(r * 12 + r) * 2] = 1.0;
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++) {
            double f[18], sig[4][4][2];
            ref_clover_field_strength(f, links, dims, site, mu, nu);
            ref_sigma_matrix(mu, nu, sig);
            for (int s = 0; s < 4; s++)
                for (int t = 0; t < 4; t++)
                    for (int a = 0; a < 3; a++)
                        for (int b = 0; b < 3; b++) {
                            /* iF[a][b] = i (fr + i fi) = -fi + i fr */
                            double ir = -f[(a * 3 + b) * 2 + 1], ii = f[(a * 3 + b) * 2];
                            double re = sig[s][t][0] * ir - sig[s][t][1] * ii;
                            double im = sig[s][t][0] * ii + sig[s][t][1] * ir;
                            int r = s * 3 + a, c = t * 3 + b;
                            A[(r * 12 + c) * 2] += kappa * csw * re;
                            A[(r * 12 + c) * 2 + 1] += kappa * csw * im;
                        }
        }
}

/* out(x) = A(x) in(x) on the sites of the given parity (2 = all sites); the other parity's
 * sites of out are set to 0. Site-local, so out may alias in. */
static inline void ref_clover_apply(double *out, const double *links, const double *in,
                                    const int dims[4], double kappa, double csw, int parity)
{
    int64_t vol = ref_volume(dims);
    double A[288];
    for (int64_t s = 0; s < vol; s++) {
        double t[24];
        if (parity != 2 && ref_site_parity(s, dims) != parity) {
            memset(out + 24 * s, 0, sizeof t);
            continue;
        }
        ref_clover_site(A, links, dims, s, kappa, csw);
        const double *x = in + 24 * s;
        for (int r = 0; r < 12; r++) {
            double re = 0, im = 0;
            for (int c = 0; c < 12; c++) {
                double ar = A[(r * 12 + c) * 2], ai = A[(r * 12 + c) * 2 + 1];
                re += ar * x[2 * c] - ai * x[2 * c + 1];
                im += ar * x[2 * c + 1] + ai * x[2 * c];
            }
            t[2 * r] = re;
            t[2 * r + 1] = im;
        }
        memcpy(out + 24 * s, t, sizeof t);
    }
}

/* Wilson-clover matrix M psi = A psi - kappa D psi (dagger: A psi - kappa D^dag psi, A being
 * Hermitian) on all sites. No aliasing. */
static inline void ref_clover_mat(double *out, const double *links, const double *in,
                                  const int dims[4], const double bc[4], double kappa, double csw,
                                  int dagger)
{
    int64_t n = 24 * ref_volume(dims);
    double *a = (double *)malloc(sizeof(double) * n);
    if (!a) abort();
    ref_clover_apply(a, links, in, dims, kappa, csw, 2);
    ref_wilson_dslash(out, links, in, dims, bc, dagger, 2);
    for (int64_t k = 0; k < n; k++) out[k] = a[k] - kappa * out[k];
    free(a);
}

/* out = A^-1 in on the sites of `parity` (2: all), other sites 0: Gaussian elimination with
 * partial pivoting on the dense 12x12 A of ref_clover_site. */
static inline void ref_clover_solve(double *out, const double *links, const double *in, const int dims[4],
                             double kappa, double csw, int parity)
{
    const int64_t vol = ref_volume(dims);
    double A[288], m[12][13][2];
    for (int64_t s = 0; s < vol; s++) {
        if (parity != 2 && ref_site_parity(s, dims) != parity) { memset(out + 24 * s, 0, 24 * sizeof(double)); continue; }
        ref_clover_site(A, links, dims, s, kappa, csw);
        for (int r = 0; r < 12; r++) {
            for (int c = 0; c < 12; c++) { m[r][c][0] = A[(r * 12 + c) * 2]; m[r][c][1] = A[(r * 12 + c) * 2 + 1]; }
            m[r][12][0] = in[24 * s + 2 * r];
            m[r][12][1] = in[24 * s + 2 * r + 1];
        }
        for (int c = 0; c < 12; c++) {
            int p = c;
            for (int r = c + 1; r < 12; r++)
                if (hypot(m[r][c][0], m[r][c][1]) > hypot(m[p][c][0], m[p][c][1])) p = r;
            for (int j = 0; j < 13; j++)
                for (int k = 0; k < 2; k++) { double t = m[p][j][k]; m[p][j][k] = m[c][j][k]; m[c][j][k] = t; }
            for (int r = c + 1; r < 12; r++) {
                double dn = m[c][c][0] * m[c][c][0] + m[c][c][1] * m[c][c][1];
                double fr = (m[r][c][0] * m[c][c][0] + m[r][c][1] * m[c][c][1]) / dn;
                double fi = (m[r][c][1] * m[c][c][0] - m[r][c][0] * m[c][c][1]) / dn;
                for (int j = c; j < 13; j++) {
                    m[r][j][0] -= fr * m[c][j][0] - fi * m[c][j][1];
                    m[r][j][1] -= fr * m[c][j][1] + fi * m[c][j][0];
                }
            }
        }
        for (int r = 11; r >= 0; r--) {
            double xr = m[r][12][0], xi = m[r][12][1];
            for (int c = r + 1; c < 12; c++) {
                xr -= m[r][c][0] * out[24 * s + 2 * c] - m[r][c][1] * out[24 * s + 2 * c + 1];
                xi -= m[r][c][0] * out[24 * s + 2 * c + 1] + m[r][c][1] * out[24 * s + 2 * c];
            }
            double dn = m[r][r][0] * m[r][r][0] + m[r][r][1] * m[r][r][1];
            out[24 * s + 2 * r] = (xr * m[r][r][0] + xi * m[r][r][1]) / dn;
            out[24 * s + 2 * r + 1] = (xi * m[r][r][0] - xr * m[r][r][1]) / dn;
        }
    }
}

/* Sets the sites of `parity` to zero. */
static inline void ref_zero_parity(double *v, const int dims[4], int parity)
{
    for (int64_t s = 0; s < ref_volume(dims); s++)
        if (ref_site_parity(s, dims) == parity) memset(v + 24 * s, 0, 24 * sizeof(double));
}

/* Even-odd clover operator on parity p of psi (other parity of out 0):
 *   symmetric:  1 - kappa^2 A_pp^-1 D_pq A_qq^-1 D_qp   (dagger: 1 - kappa^2 D^dag_pq A_qq^-1 D^dag_qp A_pp^-1)
 *   asymmetric: A_pp - kappa^2 D_pq A_qq^-1 D_qp        (dagger: D^dag in both hops) */
static inline void ref_clover_matpc(double *out, const double *links, const double *psi, const int dims[4],
                                    const double bc[4], double kappa, double csw, int parity, int dagger,
                                    int asymmetric)
{
    const int64_t n = 24 * ref_volume(dims);
    const int q = 1 - parity;
    const double k2 = kappa * kappa;
    double *t1 = (double *)malloc(n * sizeof *t1), *t2 = (double *)malloc(n * sizeof *t2);
    if (!t1 || !t2) abort();
    if (asymmetric || !dagger) {
        ref_wilson_dslash(t1, links, psi, dims, bc, dagger, q);        /* D_qp psi */
        ref_clover_solve(t2, links, t1, dims, kappa, csw, q);          /* A_qq^-1 */
        ref_wilson_dslash(t1, links, t2, dims, bc, dagger, parity);    /* D_pq */
        if (asymmetric) {
            ref_clover_apply(out, links, psi, dims, kappa, csw, parity);
            for (int64_t k = 0; k < n; k++) out[k] -= k2 * t1[k];
        } else {
            ref_clover_solve(t2, links, t1, dims, kappa, csw, parity);
            for (int64_t k = 0; k < n; k++) out[k] = psi[k] - k2 * t2[k];
        }
    } else {
        /* (1 - k2 A_pp^-1 D_pq A_qq^-1 D_qp)^dag = 1 - k2 D^dag_pq A_qq^-1 D^dag_qp A_pp^-1 */
        ref_clover_solve(t1, links, psi, dims, kappa, csw, parity);
        ref_wilson_dslash(t2, links, t1, dims, bc, 1, q);
        ref_clover_solve(t1, links, t2, dims, kappa, csw, q);
        ref_wilson_dslash(t2, links, t1, dims, bc, 1, parity);
        for (int64_t k = 0; k < n; k++) out[k] = psi[k] - k2 * t2[k];
    }
    ref_zero_parity(out, dims, q);
    free(t1); free(t2);
}


#endif
