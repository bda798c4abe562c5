/* Plain-loop double-precision reference for adaptive aggregation multigrid (issue 28): the
 * operator of every level as a nearest-neighbour stencil of dense matrices, the aggregation
 * with chirality kept apart, block orthonormalisation, prolongation P, restriction R = P^dag
 * and the Galerkin coarse operator R D P formed directly from the stencil's matrices and
 * the basis (paper 000, section 3.4). Written from the definitions below, independently of
 * the library's kernels, so that the library's transfer and coarse-operator codelets can be
 * checked against it.
 *
 * A level's vector: nsite sites (lexicographic, x fastest: site = ((t Z + z) Y + y) X + x),
 * ndof complex degrees of freedom each, as v[(site * ndof + d) * 2 + reim]. The first half of
 * a site's degrees of freedom has chirality 0, the second half chirality 1: on the fine
 * Wilson level d = 3 spin + color, and gamma_5 = diag(1, 1, -1, -1) (doc/conventions.md)
 * makes spins 0, 1 chirality 0 (gamma_5 = +1); on a coarse level d = chirality nvec + k.
 *
 * A stencil operator: (D v)(x) = X(x) v(x) + sum_mu [Yf_mu(x) v(x + mu) + Yb_mu(x) v(x - mu)]
 * with ndof x ndof complex matrices (row-major, complex pairs), periodic; boundary phases are
 * folded into the Y of the sites whose hop crosses. mgref_wilson_clover_stencil writes the
 * Wilson-clover matrix M = A - kappa D of wilson_reference.h in this form.
 *
 * Aggregates: blocks agg[4] of sites (each dividing the level's extents); coarse site of x:
 * (x_mu / agg_mu). The basis of aggregate a and chirality c holds nvec vectors, each the
 * chirality-c part of a null vector on the sites of a, orthonormalised by modified
 * Gram-Schmidt; coarse degree of freedom c nvec + k of site a is the coefficient of basis
 * vector k of (a, c). */
#ifndef TQ_MG_REFERENCE_H
#define TQ_MG_REFERENCE_H

#include "wilson_reference.h"

typedef struct {
    int dims[4];
    int ndof;
    int64_t nsite;
    double *x;    /* [site][ndof][ndof][2] */
    double *yf;   /* [site][mu][ndof][ndof][2]: from x + mu */
    double *yb;   /* [site][mu][ndof][ndof][2]: from x - mu */
} mgref_stencil;

static inline int64_t mgref_mat_reals(int n) { return (int64_t)n * n * 2; }

static inline int mgref_stencil_alloc(mgref_stencil *s, const int dims[4], int ndof)
{
    memcpy(s->dims, dims, sizeof s->dims);
    s->ndof = ndof;
    s->nsite = ref_volume(dims);
    const int64_t m = mgref_mat_reals(ndof);
    s->x = (double *)calloc((size_t)(s->nsite * m), sizeof(double));
    s->yf = (double *)calloc((size_t)(s->nsite * 4 * m), sizeof(double));
    s->yb = (double *)calloc((size_t)(s->nsite * 4 * m), sizeof(double));
    return s->x && s->yf && s->yb ? 0 : -1;
}

static inline void mgref_stencil_free(mgref_stencil *s)
{
    free(s->x); free(s->yf); free(s->yb);
    s->x = s->yf = s->yb = NULL;
}

/* out += M in, M n x n complex (row-major), in and out n complex */
static inline void mgref_matvec_add(double *out, const double *m, const double *in, int n)
{
    for (int i = 0; i < n; i++) {
        double re = 0, im = 0;
        for (int j = 0; j < n; j++) {
            const double *a = m + ((int64_t)i * n + j) * 2, *b = in + j * 2;
            re += a[0] * b[0] - a[1] * b[1];
            im += a[0] * b[1] + a[1] * b[0];
        }
        out[i * 2] += re;
        out[i * 2 + 1] += im;
    }
}

static inline void mgref_stencil_apply(double *out, const mgref_stencil *s, const double *in)
{
    const int n = s->ndof;
    const int64_t m = mgref_mat_reals(n);
    memset(out, 0, sizeof(double) * (size_t)(s->nsite * n * 2));
    for (int64_t site = 0; site < s->nsite; site++) {
        double *o = out + site * n * 2;
        mgref_matvec_add(o, s->x + site * m, in + site * n * 2, n);
        for (int mu = 0; mu < 4; mu++) {
            int crossed;
            const int64_t fwd = wref_neighbor(site, s->dims, mu, +1, &crossed);
            const int64_t bwd = wref_neighbor(site, s->dims, mu, -1, &crossed);
            mgref_matvec_add(o, s->yf + (site * 4 + mu) * m, in + fwd * n * 2, n);
            mgref_matvec_add(o, s->yb + (site * 4 + mu) * m, in + bwd * n * 2, n);
        }
    }
}

/* The 12 x 12 matrix of spin matrix g (4x4 complex) times color matrix u (3x3 complex, u^dag
 * when dag), scaled by f: entry (3 s + a, 3 t + b) = f g[s][t] u[a][b]. */
static inline void mgref_spin_color(double *m, double g[4][4][2], const double *u, int dag, double f)
{
    for (int s = 0; s < 4; s++)
        for (int a = 0; a < 3; a++)
            for (int t = 0; t < 4; t++)
                for (int b = 0; b < 3; b++) {
                    const double *ue = dag ? u + (b * 3 + a) * 2 : u + (a * 3 + b) * 2;
                    const double ur = ue[0], ui = dag ? -ue[1] : ue[1];
                    double *e = m + ((int64_t)(3 * s + a) * 12 + 3 * t + b) * 2;
                    e[0] = f * (g[s][t][0] * ur - g[s][t][1] * ui);
                    e[1] = f * (g[s][t][0] * ui + g[s][t][1] * ur);
                }
}

/* M = A - kappa D (wilson_reference.h's ref_clover_mat; csw 0: Wilson, A = 1) as a stencil. */
static inline int mgref_wilson_clover_stencil(mgref_stencil *s, const double *links, const int dims[4], const double bc[4],
                                              double kappa, double csw)
{
    if (mgref_stencil_alloc(s, dims, 12)) return -1;
    const int64_t m = mgref_mat_reals(12);
    /* A, column by column: A e_j (ref_clover_apply on a unit field would cost the whole
     * lattice per column; ref_clover_site gives the site's dense matrix) */
    double *e = (double *)calloc((size_t)(s->nsite * 24), sizeof(double));
    double *ae = (double *)calloc((size_t)(s->nsite * 24), sizeof(double));
    if (!e || !ae) { free(e); free(ae); return -1; }
    for (int j = 0; j < 12; j++) {
        memset(e, 0, sizeof(double) * (size_t)(s->nsite * 24));
        for (int64_t site = 0; site < s->nsite; site++) e[site * 24 + j * 2] = 1.0;
        ref_clover_apply(ae, links, e, dims, kappa, csw, 2);
        for (int64_t site = 0; site < s->nsite; site++)
            for (int i = 0; i < 12; i++) {
                s->x[site * m + ((int64_t)i * 12 + j) * 2] = ae[site * 24 + i * 2];
                s->x[site * m + ((int64_t)i * 12 + j) * 2 + 1] = ae[site * 24 + i * 2 + 1];
            }
    }
    free(e); free(ae);
    /* hops: -kappa (1 - g_mu) U_mu(x) from x + mu, -kappa (1 + g_mu) U_mu(x - mu)^dag from x - mu */
    for (int mu = 0; mu < 4; mu++) {
        double g[4][4][2], pm[4][4][2], pp[4][4][2];
        ref_gamma_matrix(mu, g);
        for (int a = 0; a < 4; a++)
            for (int b = 0; b < 4; b++)
                for (int r = 0; r < 2; r++) {
                    const double id = a == b && r == 0 ? 1.0 : 0.0;
                    pm[a][b][r] = id - g[a][b][r];
                    pp[a][b][r] = id + g[a][b][r];
                }
        for (int64_t site = 0; site < s->nsite; site++) {
            int crossed_f, crossed_b;
            wref_neighbor(site, dims, mu, +1, &crossed_f);
            const int64_t bwd = wref_neighbor(site, dims, mu, -1, &crossed_b);
            mgref_spin_color(s->yf + (site * 4 + mu) * m, pm, wref_link(links, site, mu), 0,
                             -kappa * (crossed_f ? bc[mu] : 1.0));
            mgref_spin_color(s->yb + (site * 4 + mu) * m, pp, wref_link(links, bwd, mu), 1,
                             -kappa * (crossed_b ? bc[mu] : 1.0));
        }
    }
    return 0;
}

/* ---- aggregation ------------------------------------------------------------------------ */

typedef struct {
    int fine[4], agg[4], coarse[4];
    int fine_ndof, nvec;            /* coarse ndof = 2 nvec */
    int64_t nfine, ncoarse;
    double *basis;                  /* [k][fine site][fine ndof][2]: vector k's parts */
} mgref_transfer;

static inline int64_t mgref_aggregate_of(const mgref_transfer *t, int64_t site)
{
    int c[4], a[4];
    wref_coords(site, t->fine, c);
    for (int mu = 0; mu < 4; mu++) a[mu] = c[mu] / t->agg[mu];
    return wref_site(a, t->coarse);
}

static inline int mgref_chirality(int d, int ndof) { return d >= ndof / 2; }

/* Orthonormalises the chirality parts of nvec vectors (each nfine x fine_ndof complex) per
 * aggregate by modified Gram-Schmidt and keeps them as the basis. Returns 0, or -1 when
 * an aggregate's part of a vector is (numerically) in the span of the ones before it. */
static inline int mgref_transfer_make(mgref_transfer *t, const int fine[4], const int agg[4], int fine_ndof, int nvec,
                                      const double *vectors)
{
    memcpy(t->fine, fine, sizeof t->fine);
    memcpy(t->agg, agg, sizeof t->agg);
    for (int mu = 0; mu < 4; mu++) t->coarse[mu] = fine[mu] / agg[mu];
    t->fine_ndof = fine_ndof;
    t->nvec = nvec;
    t->nfine = ref_volume(fine);
    t->ncoarse = ref_volume(t->coarse);
    const int64_t len = t->nfine * fine_ndof * 2;
    t->basis = (double *)malloc(sizeof(double) * (size_t)(len * nvec));
    if (!t->basis) return -1;
    memcpy(t->basis, vectors, sizeof(double) * (size_t)(len * nvec));
    const int half = fine_ndof / 2;
    for (int64_t a = 0; a < t->ncoarse; a++)
        for (int chi = 0; chi < 2; chi++)
            for (int k = 0; k < nvec; k++) {
                double *vk = t->basis + k * len;
                for (int j = 0; j < k; j++) {
                    const double *vj = t->basis + j * len;
                    double re = 0, im = 0;   /* <v_j, v_k> on (a, chi) */
                    for (int64_t s = 0; s < t->nfine; s++) {
                        if (mgref_aggregate_of(t, s) != a) continue;
                        for (int d = chi * half; d < (chi + 1) * half; d++) {
                            const double *x = vj + (s * fine_ndof + d) * 2, *y = vk + (s * fine_ndof + d) * 2;
                            re += x[0] * y[0] + x[1] * y[1];
                            im += x[0] * y[1] - x[1] * y[0];
                        }
                    }
                    for (int64_t s = 0; s < t->nfine; s++) {
                        if (mgref_aggregate_of(t, s) != a) continue;
                        for (int d = chi * half; d < (chi + 1) * half; d++) {
                            const double *x = vj + (s * fine_ndof + d) * 2;
                            double *y = vk + (s * fine_ndof + d) * 2;
                            y[0] -= re * x[0] - im * x[1];
                            y[1] -= re * x[1] + im * x[0];
                        }
                    }
                }
                double n2 = 0, n2_before = 0;
                for (int64_t s = 0; s < t->nfine; s++) {
                    if (mgref_aggregate_of(t, s) != a) continue;
                    for (int d = chi * half; d < (chi + 1) * half; d++) {
                        const double *y = vk + (s * fine_ndof + d) * 2, *o = vectors + k * len + (s * fine_ndof + d) * 2;
                        n2 += y[0] * y[0] + y[1] * y[1];
                        n2_before += o[0] * o[0] + o[1] * o[1];
                    }
                }
                if (!(n2 > 1e-24 * n2_before) || n2 == 0.0) return -1;
                const double f = 1.0 / sqrt(n2);
                for (int64_t s = 0; s < t->nfine; s++) {
                    if (mgref_aggregate_of(t, s) != a) continue;
                    for (int d = chi * half; d < (chi + 1) * half; d++) {
                        vk[(s * fine_ndof + d) * 2] *= f;
                        vk[(s * fine_ndof + d) * 2 + 1] *= f;
                    }
                }
            }
    return 0;
}

static inline void mgref_transfer_free(mgref_transfer *t)
{
    free(t->basis);
    t->basis = NULL;
}

/* Basis vector i = chi nvec + k of aggregate a at fine degree of freedom d of site s (0
 * outside a or off chirality chi): its real and imaginary parts. */
static inline const double *mgref_basis_at(const mgref_transfer *t, int i, int64_t s, int d)
{
    const int k = i % t->nvec;
    return t->basis + (int64_t)k * t->nfine * t->fine_ndof * 2 + (s * t->fine_ndof + d) * 2;
}

/* fine = P coarse */
static inline void mgref_prolong(double *fine, const mgref_transfer *t, const double *coarse)
{
    const int nf = t->fine_ndof, nc = 2 * t->nvec;
    for (int64_t s = 0; s < t->nfine; s++) {
        const int64_t a = mgref_aggregate_of(t, s);
        for (int d = 0; d < nf; d++) {
            const int chi = mgref_chirality(d, nf);
            double re = 0, im = 0;
            for (int k = 0; k < t->nvec; k++) {
                const int i = chi * t->nvec + k;
                const double *b = mgref_basis_at(t, i, s, d), *c = coarse + (a * nc + i) * 2;
                re += b[0] * c[0] - b[1] * c[1];
                im += b[0] * c[1] + b[1] * c[0];
            }
            fine[(s * nf + d) * 2] = re;
            fine[(s * nf + d) * 2 + 1] = im;
        }
    }
}

/* coarse = R fine = P^dag fine */
static inline void mgref_restrict(double *coarse, const mgref_transfer *t, const double *fine)
{
    const int nf = t->fine_ndof, nc = 2 * t->nvec;
    memset(coarse, 0, sizeof(double) * (size_t)(t->ncoarse * nc * 2));
    for (int64_t s = 0; s < t->nfine; s++) {
        const int64_t a = mgref_aggregate_of(t, s);
        for (int d = 0; d < nf; d++) {
            const int chi = mgref_chirality(d, nf);
            const double *f = fine + (s * nf + d) * 2;
            for (int k = 0; k < t->nvec; k++) {
                const int i = chi * t->nvec + k;
                const double *b = mgref_basis_at(t, i, s, d);
                double *c = coarse + (a * nc + i) * 2;
                c[0] += b[0] * f[0] + b[1] * f[1];
                c[1] += b[0] * f[1] - b[1] * f[0];
            }
        }
    }
}

/* out(i, j) += B_i(s)^dag M B_j(s'), B the basis columns at fine sites s (row side) and s'
 * (column side) for coarse rows/columns of chirality blocks: the Galerkin product of one
 * fine matrix entry. */
static inline void mgref_galerkin_add(double *out, const mgref_transfer *t, const double *m, int64_t s, int64_t s2)
{
    const int nf = t->fine_ndof, nc = 2 * t->nvec;
    for (int i = 0; i < nc; i++)
        for (int j = 0; j < nc; j++) {
            double re = 0, im = 0;
            const int ci = i / t->nvec, cj = j / t->nvec, half = nf / 2;
            for (int d = ci * half; d < (ci + 1) * half; d++) {
                const double *bi = mgref_basis_at(t, i, s, d);
                double mr = 0, mi = 0;   /* (M B_j(s2))[d] */
                for (int e = cj * half; e < (cj + 1) * half; e++) {
                    const double *me = m + ((int64_t)d * nf + e) * 2, *bj = mgref_basis_at(t, j, s2, e);
                    mr += me[0] * bj[0] - me[1] * bj[1];
                    mi += me[0] * bj[1] + me[1] * bj[0];
                }
                re += bi[0] * mr + bi[1] * mi;
                im += bi[0] * mi - bi[1] * mr;
            }
            out[((int64_t)i * nc + j) * 2] += re;
            out[((int64_t)i * nc + j) * 2 + 1] += im;
        }
}

/* The coarse operator R D P as a stencil, from D's matrices and the basis: a hop that stays
 * inside an aggregate goes to the coarse local term, one that leaves it to the coarse hop
 * in its direction. */
static inline int mgref_coarsen(mgref_stencil *c, const mgref_stencil *f, const mgref_transfer *t)
{
    const int nc = 2 * t->nvec;
    if (mgref_stencil_alloc(c, t->coarse, nc)) return -1;
    const int64_t mf = mgref_mat_reals(f->ndof), mc = mgref_mat_reals(nc);
    for (int64_t s = 0; s < f->nsite; s++) {
        const int64_t a = mgref_aggregate_of(t, s);
        mgref_galerkin_add(c->x + a * mc, t, f->x + s * mf, s, s);
        for (int mu = 0; mu < 4; mu++) {
            int crossed;
            const int64_t fwd = wref_neighbor(s, f->dims, mu, +1, &crossed);
            const int64_t bwd = wref_neighbor(s, f->dims, mu, -1, &crossed);
            const int64_t af = mgref_aggregate_of(t, fwd), ab = mgref_aggregate_of(t, bwd);
            int c4[4], in_f, in_b;
            wref_coords(s, f->dims, c4);
            /* whether the hop leaves the aggregate (the neighbour's aggregate may still be a
             * itself where the coarse extent is 1) */
            in_f = (c4[mu] + 1) % t->agg[mu] != 0;
            in_b = c4[mu] % t->agg[mu] != 0;
            mgref_galerkin_add(in_f ? c->x + a * mc : c->yf + (a * 4 + mu) * mc, t, f->yf + (s * 4 + mu) * mf, s, fwd);
            mgref_galerkin_add(in_b ? c->x + a * mc : c->yb + (a * 4 + mu) * mc, t, f->yb + (s * 4 + mu) * mf, s, bwd);
            (void)af; (void)ab;
        }
    }
    return 0;
}

#endif
