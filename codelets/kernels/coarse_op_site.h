/* The multigrid coarse operator per site, shared by the CPU codelets (codelets/coarse_op.c)
 * and the CUDA ones (codelets/mg_cuda.cu): on the sites x of parity p of one block,
 *     out(x) = [X(x) in(x)] + sum_mu [Yf_mu(x) in(x + mu) + Yb_mu(x) in(x - mu)]
 * (reference/mg_reference.h's stencil form; boundary phases are folded into the Y), with
 * in(x +- mu) of parity 1 - p from the block itself or, across a split direction, from the
 * neighbour block's face. A site is computed whole by one task (the interior for sites
 * with no hop across a split direction, the exterior for the others), every product in the
 * reference's order, so results are bitwise the same for every block decomposition.
 *
 * Vectors: coarse fields of n complex per site (n / 12 rows of 24 reals, row j of site s
 * at site j cb + s). Links: a coarse field of 9 n^2 complex per site, matrix m (0: X,
 * 1 + 2 mu: Yf_mu, 2 + 2 mu: Yb_mu) row-major at m n^2 + i n + j. Faces: one layer of
 * parity 1 - p's sites of a block's lower / upper boundary in mu, 2 n reals each
 * (kernels/field_layout.h), indexed by tq_face_index. */
#ifndef TQ_COARSE_OP_SITE_H
#define TQ_COARSE_OP_SITE_H

#include "kernels/field_layout.h"
#include "kernels/dslash_wilson_site.h"   /* tq_block_coords, tq_block_cb, tq_face_index */

#include <stdint.h>

#define TQ_COARSE_MAX_N 128   /* complex per coarse site: 2 x TQ_MG_MAX_NVEC */

typedef struct tq_coarse_args {
    int B[4], split[4];
    int n, parity, local;     /* local: add the X term */
    int no_hops;              /* 1: the X term alone (matrix 0 of the links; local must be 1) */
    int nfaces;               /* 2 x the split directions */
    int64_t cb;               /* sites of one parity in the block */
    tq_layout L_in, L_out, L_links, L_face[4];
} tq_coarse_args;

/* Whether site x of the block has a hop across a split direction. */
TQ_HD int tq_coarse_on_face(const tq_coarse_args *a, const int x[4])
{
    for (int mu = 0; mu < 4; mu++)
        if (a->split[mu] && (x[mu] == 0 || x[mu] == a->B[mu] - 1)) return 1;
    return 0;
}

TQ_HD void tq_coarse_load_vector(const void *buf, const tq_layout *L, int n, int64_t cb, int64_t s, double *v)
{
    for (int j = 0; j < n / 12; j++) tq_load_site(buf, L, j * cb + s, v + 24 * j);
}

/* re + i im += sum over the 12 columns of one chunk of a matrix row (y) of y_e v_e: the one
 * product order of the whole-site and the per-row kernels. */
TQ_HD void tq_coarse_chunk_dot(const double *y, const double *v, double *re, double *im)
{
    for (int e = 0; e < 12; e++) {
        *re += y[2 * e] * v[2 * e] - y[2 * e + 1] * v[2 * e + 1];
        *im += y[2 * e] * v[2 * e + 1] + y[2 * e + 1] * v[2 * e];
    }
}

/* Chunk c of row i of matrix m of the links at site s (columns 12 c .. 12 c + 11). */
TQ_HD void tq_coarse_load_link_chunk(const tq_coarse_args *a, const void *links, int m, int i, int c, int64_t s, double *y)
{
    const int per_row = a->n / 12;
    tq_load_site(links, &a->L_links, (((int64_t)m * a->n + i) * per_row + c) * a->cb + s, y);
}

/* out += M v for matrix m of the links at site s (each row summed over its columns in
 * order, then added, as mgref_matvec_add does). */
TQ_HD void tq_coarse_matvec_add(const tq_coarse_args *a, const void *links, int m, int64_t s, const double *v, double *out)
{
    for (int i = 0; i < a->n; i++) {
        double re = 0, im = 0;
        for (int c = 0; c < a->n / 12; c++) {
            double y[24];
            tq_coarse_load_link_chunk(a, links, m, i, c, s, y);
            tq_coarse_chunk_dot(y, v + 24 * c, &re, &im);
        }
        out[2 * i] += re;
        out[2 * i + 1] += im;
    }
}

/* Where matrix m's vector for site x lives: m 0 the site itself (in_same), m = 1 + 2 mu +
 * dir the neighbour x + mu (dir 0) or x - mu (dir 1): in the block (in, at site *site of
 * each row) or, across a split direction, in from[2 k + side]'s face (*face set: one site
 * of 2 n reals). */
TQ_HD const void *tq_coarse_source(const tq_coarse_args *a, const void *in_same, const void *in, const void *const *from,
                                   const int x[4], int m, int64_t *site, int *face)
{
    *face = 0;
    if (m == 0) {
        *site = tq_block_cb(a->B, x);
        return in_same;
    }
    const int mu = (m - 1) / 2, dir = (m - 1) % 2;
    int y[4] = {x[0], x[1], x[2], x[3]};
    y[mu] += dir ? -1 : 1;
    if ((y[mu] < 0 || y[mu] >= a->B[mu]) && a->split[mu]) {
        int k = 0;
        for (int nu = 0; nu < mu; nu++) k += a->split[nu];
        *face = 1;
        *site = tq_face_index(a->B, mu, y);
        return from[2 * k + (dir ? 0 : 1)];
    }
    y[mu] = (y[mu] + a->B[mu]) % a->B[mu];   /* periodic inside an unsplit direction */
    *site = tq_block_cb(a->B, y);
    return in;
}

/* Site s (parity a->parity) computed whole. in: the block's input of the other parity;
 * from[2 k + side]: per split direction k the block below's upper face (side 0: the x - mu
 * neighbours of the sites at x_mu = 0) and the block above's lower face (the x + mu
 * neighbours at x_mu = B - 1), or NULL where the caller knows no hop crosses. */
TQ_HD void tq_coarse_site(const tq_coarse_args *a, const void *in_same, const void *in, const void *links,
                          const void *const *from, void *out, int64_t s)
{
    const int n = a->n;
    int x[4];
    tq_block_coords(a->B, a->parity, s, x);
    double acc[2 * TQ_COARSE_MAX_N], v[2 * TQ_COARSE_MAX_N];
    for (int i = 0; i < 2 * n; i++) acc[i] = 0;
    for (int m = a->local ? 0 : 1; m < (a->no_hops ? 1 : 9); m++) {
        int64_t site;
        int face;
        const void *buf = tq_coarse_source(a, in_same, in, from, x, m, &site, &face);
        if (face) tq_load_site(buf, &a->L_face[(m - 1) / 2], site, v);
        else tq_coarse_load_vector(buf, &a->L_in, n, a->cb, site, v);
        tq_coarse_matvec_add(a, links, m, s, v, acc);
    }
    for (int j = 0; j < n / 12; j++) tq_store_site(out, &a->L_out, j * a->cb + s, acc + 24 * j);
}

/* Reals 24 c .. 24 c + 23 of face site `site` (a face site holds 2 n reals), chunk by chunk. */
TQ_HD void tq_coarse_load_face_chunk(const void *buf, const tq_layout *L, int64_t site, int c, double *v)
{
    const double hs = L->prec == 2 ? tq_half_scale(buf, L, site) : 0;
    const int per = 24 / L->vec;
    TQ_UNROLL
    for (int j = 0; j < per; j++) tq_load_chunk(buf, L, site, c * per + j, hs, v + j * L->vec);
}

/* tq_coarse_load_face_chunk in single precision (the same loads). */
TQ_HD void tq_coarse_load_face_chunk_f(const void *buf, const tq_layout *L, int64_t site, int c, float *v)
{
    const float hs = L->prec == 2 ? tq_half_scale_f(buf, L, site) : 0.0f;
    const int per = 24 / L->vec;
    TQ_UNROLL
    for (int j = 0; j < per; j++) tq_load_chunk_f(buf, L, site, c * per + j, hs, v + j * L->vec);
}

/* tq_coarse_source for the per-row functions below, with the layout to read the vector
 * with: Lin, or where it comes from a face, the face's layout in Lin's precision. */
TQ_HD const void *tq_coarse_row_source(const tq_coarse_args *a, const tq_layout *Lin, const void *in_same, const void *in,
                                       const void *const *from, const int x[4], int m, int64_t *site, int *face,
                                       tq_layout *Lf)
{
    const void *buf = tq_coarse_source(a, in_same, in, from, x, m, site, face);
    *Lf = *Lin;
    if (*face) {
        *Lf = a->L_face[(m - 1) / 2];
        Lf->prec = Lin->prec, Lf->vec = Lin->vec;
    }
    return buf;
}

/* Matrix m's part of row i at site s (block coordinates x): the row's chunks of Y_m times
 * the vector tq_coarse_source finds, in chunk order, as tq_coarse_site sums them. The
 * links and input layouts come apart from a, with the faces' precision that of Lin, so
 * that a GPU kernel can pass layouts whose precision is a compile-time constant (its
 * per-chunk arrays then stay in registers). */
TQ_HD void tq_coarse_row_matrix(const tq_coarse_args *a, const tq_layout *Ll, const tq_layout *Lin, const void *in_same,
                                const void *in, const void *links, const void *const *from, const int x[4], int64_t s,
                                int i, int m, double *out_re, double *out_im)
{
    int64_t site;
    int face;
    tq_layout Lf;
    const void *buf = tq_coarse_row_source(a, Lin, in_same, in, from, x, m, &site, &face, &Lf);
    const int per_row = a->n / 12;
    double re = 0, im = 0;
    for (int c = 0; c < per_row; c++) {
        double y[24], v[24];
        tq_load_site(links, Ll, (((int64_t)m * a->n + i) * per_row + c) * a->cb + s, y);
        if (face) tq_coarse_load_face_chunk(buf, &Lf, site, c, v);
        else tq_load_site(buf, Lin, c * a->cb + site, v);
        tq_coarse_chunk_dot(y, v, &re, &im);
    }
    *out_re = re;
    *out_im = im;
}

/* tq_coarse_row_matrix for half links, the GPU kernels' (codelets/mg_cuda.cu): the
 * products in single precision (a half link carries 15 bits), each chunk's 12 summed in
 * single, the chunks in double, in the same order on every decomposition (interior and
 * exterior alike). Converting every value to double held the 8^4 hop at 78 us (2.1 TB/s);
 * this takes 71 us (doc/performance.md, "Multigrid"). The CPU keeps double products: the
 * two agree to rounding, as in double (where the GPU contracts products into fused
 * multiply-adds). */
TQ_HD void tq_coarse_row_matrix_f(const tq_coarse_args *a, const tq_layout *Ll, const tq_layout *Lin, const void *in_same,
                                  const void *in, const void *links, const void *const *from, const int x[4], int64_t s,
                                  int i, int m, double *out_re, double *out_im)
{
    int64_t site;
    int face;
    tq_layout Lf;
    const void *buf = tq_coarse_row_source(a, Lin, in_same, in, from, x, m, &site, &face, &Lf);
    const int per_row = a->n / 12;
    double re = 0, im = 0;
    for (int c = 0; c < per_row; c++) {
        float y[24], v[24];
        tq_load_site_f(links, Ll, (((int64_t)m * a->n + i) * per_row + c) * a->cb + s, y);
        if (face) tq_coarse_load_face_chunk_f(buf, &Lf, site, c, v);
        else tq_load_site_f(buf, Lin, c * a->cb + site, v);
        float cr = 0, ci = 0;
        TQ_UNROLL
        for (int e = 0; e < 12; e++) {
            cr += y[2 * e] * v[2 * e] - y[2 * e + 1] * v[2 * e + 1];
            ci += y[2 * e] * v[2 * e + 1] + y[2 * e + 1] * v[2 * e];
        }
        re += cr;
        im += ci;
    }
    *out_re = re;
    *out_im = im;
}

/* Pack: the input's sites (parity a->parity here: the one the readers hop to) on the
 * block's lower and upper boundary in each split direction into faces[2 k + side]. */
TQ_HD void tq_coarse_pack_site(const tq_coarse_args *a, const void *in, void *const *faces, int64_t s)
{
    int x[4];
    tq_block_coords(a->B, a->parity, s, x);
    double v[2 * TQ_COARSE_MAX_N];
    int k = 0, loaded = 0;
    for (int mu = 0; mu < 4; mu++) {
        if (!a->split[mu]) continue;
        for (int side = 0; side < 2; side++)
            if (x[mu] == (side ? a->B[mu] - 1 : 0)) {
                if (!loaded) tq_coarse_load_vector(in, &a->L_in, a->n, a->cb, s, v), loaded = 1;
                tq_store_site(faces[2 * k + side], &a->L_face[mu], tq_face_index(a->B, mu, x), v);
            }
        k++;
    }
}

/* The even-odd form's links at site s (parity a->parity): hat matrix 0 = X^-1, matrix m =
 * X^-1 Y_m (m = 1 .. 8, the same layout as the links), so that the Schur complement
 * preconditioned by X_ee^-1 is 1 - Yhat_eo Yhat_oe, two hopping terms. X^-1 by Gauss-Jordan
 * elimination with partial pivoting, in double whatever the storage. work: 6 n^2 doubles.
 * Returns 0, or 1 where X is singular (the site's hat matrices are then NaN). */
TQ_HD int tq_coarse_hat_site(const tq_coarse_args *a, const void *links, void *hat, int64_t s, double *work)
{
    const int n = a->n, per_row = n / 12;
    double *x = work, *inv = work + 2 * n * n, *y = work + 4 * n * n;
    for (int i = 0; i < n; i++)
        for (int c = 0; c < per_row; c++) tq_coarse_load_link_chunk(a, links, 0, i, c, s, x + 2 * (i * n + 12 * c));
    for (int i = 0; i < 2 * n * n; i++) inv[i] = 0;
    for (int i = 0; i < n; i++) inv[2 * (i * n + i)] = 1;
    int singular = 0;
    for (int k = 0; k < n; k++) {
        int piv = k;
        double best = -1;
        for (int i = k; i < n; i++) {
            const double m = x[2 * (i * n + k)] * x[2 * (i * n + k)] + x[2 * (i * n + k) + 1] * x[2 * (i * n + k) + 1];
            if (m > best) best = m, piv = i;
        }
        if (!(best > 0)) { singular = 1; break; }
        if (piv != k)
            for (int j = 0; j < 2 * n; j++) {
                double t = x[2 * k * n + j]; x[2 * k * n + j] = x[2 * piv * n + j]; x[2 * piv * n + j] = t;
                t = inv[2 * k * n + j]; inv[2 * k * n + j] = inv[2 * piv * n + j]; inv[2 * piv * n + j] = t;
            }
        /* row k /= pivot */
        const double pr = x[2 * (k * n + k)] / best, pi = -x[2 * (k * n + k) + 1] / best;   /* 1 / pivot */
        for (int j = 0; j < n; j++) {
            double *e = x + 2 * (k * n + j), *f = inv + 2 * (k * n + j);
            const double er = e[0] * pr - e[1] * pi, ei = e[0] * pi + e[1] * pr;
            const double fr = f[0] * pr - f[1] * pi, fi = f[0] * pi + f[1] * pr;
            e[0] = er, e[1] = ei, f[0] = fr, f[1] = fi;
        }
        for (int i = 0; i < n; i++) {   /* row i -= x[i][k] row k */
            if (i == k) continue;
            const double cr = x[2 * (i * n + k)], ci = x[2 * (i * n + k) + 1];
            if (cr == 0 && ci == 0) continue;
            for (int j = 0; j < n; j++) {
                const double *e = x + 2 * (k * n + j), *f = inv + 2 * (k * n + j);
                x[2 * (i * n + j)] -= cr * e[0] - ci * e[1];
                x[2 * (i * n + j) + 1] -= cr * e[1] + ci * e[0];
                inv[2 * (i * n + j)] -= cr * f[0] - ci * f[1];
                inv[2 * (i * n + j) + 1] -= cr * f[1] + ci * f[0];
            }
        }
    }
    if (singular)
        for (int i = 0; i < 2 * n * n; i++) inv[i] = 0.0 / 0.0;
    for (int m = 0; m < 9; m++) {
        /* y = matrix m of the links (the identity for m = 0), then row i of inv y */
        for (int i = 0; i < n; i++)
            for (int c = 0; c < per_row; c++) {
                if (m > 0) tq_coarse_load_link_chunk(a, links, m, i, c, s, y + 2 * (i * n + 12 * c));
                else
                    for (int e = 0; e < 12; e++) y[2 * (i * n + 12 * c + e)] = (i == 12 * c + e), y[2 * (i * n + 12 * c + e) + 1] = 0;
            }
        for (int i = 0; i < n; i++)
            for (int c = 0; c < per_row; c++) {
                double row[24];
                for (int e = 0; e < 12; e++) {
                    const int j = 12 * c + e;
                    double re = 0, im = 0;
                    for (int k = 0; k < n; k++) {
                        const double *u = inv + 2 * (i * n + k), *v = y + 2 * (k * n + j);
                        re += u[0] * v[0] - u[1] * v[1];
                        im += u[0] * v[1] + u[1] * v[0];
                    }
                    row[2 * e] = re, row[2 * e + 1] = im;
                }
                tq_store_site(hat, &a->L_links, (((int64_t)m * n + i) * per_row + c) * a->cb + s, row);
            }
    }
    return singular;
}

#endif
