/* The improved staggered hopping term per site (issue 36; CPU codelets in
 * codelets/staggered.c): on the sites x of parity p of one block,
 *     out(x) = sum_mu [ V_mu(x) in(x+mu) - V_mu(x-mu)^dag in(x-mu)
 *                       + W_mu(x) in(x+3mu) - W_mu(x-3mu)^dag in(x-3mu) ]
 * (reference/staggered_reference.h's D, the phases in the links), with in of parity 1 - p
 * from the block itself or, across a split direction, from the neighbour block's face three
 * layers deep. A site is computed whole by one task (the interior for sites with no hop
 * across a split direction, the exterior for the others), in the reference's order, so
 * results are bitwise the reference's in double and the same for every decomposition.
 *
 * Links: a coarse field of 144 complex per site (12 rows of 12 complex, row j of site s at
 * site j cb + s): 16 3x3 matrices, row-major, matrix m at complex 9 m, direction-major:
 * m = TQ_KS_MAT(mu, k) for V_mu(x), V_mu(x-mu)^dag, W_mu(x), W_mu(x-3mu)^dag (k 0..3), so
 * a direction's four are rows 3 mu .. 3 mu + 2, loaded together where they are used (a
 * GPU thread holds 72 reals of links, not 288). Every link a site reads is its own, so
 * faces carry vectors only. Faces: layers 0..2 of parity 1 - p's
 * sites, layer l of the lower face at x_mu = l, of the upper one at x_mu = B - 1 - l; face
 * site l * (sites of one layer) + tq_face_index. */
#ifndef TQ_STAGGERED_SITE_H
#define TQ_STAGGERED_SITE_H

#include "kernels/field_layout.h"
#include "kernels/dslash_wilson_site.h"   /* tq_block_coords, tq_block_cb, tq_face_index, tq_face_sites */

#include <stdint.h>

#define TQ_KS_DEPTH 3        /* the Naik link's reach */
#define TQ_KS_LINK_NDOF 144  /* complex per site of the links field: 16 matrices */
#define TQ_KS_DIR_ROWS 3     /* rows of 12 complex per direction: its 4 matrices */

/* The links field's matrix k of direction mu (k: one of the four below). */
enum { TQ_KS_FAT, TQ_KS_FAT_BACK, TQ_KS_LONG, TQ_KS_LONG_BACK };
#define TQ_KS_MAT(mu, k) (4 * (mu) + (k))

typedef struct tq_ks_args {
    int B[4], split[4];
    int parity;               /* the output's */
    int nfaces;               /* 2 x the split directions */
    int64_t cb;               /* sites of one parity in the block */
    tq_layout L_in, L_out, L_links, L_face[4];
} tq_ks_args;

/* Whether site x of the block has a hop across a split direction. */
TQ_HD int tq_ks_on_face(const tq_ks_args *a, const int x[4])
{
    for (int mu = 0; mu < 4; mu++)
        if (a->split[mu] && (x[mu] < TQ_KS_DEPTH || x[mu] >= a->B[mu] - TQ_KS_DEPTH)) return 1;
    return 0;
}

/* The four links of direction mu at site s (72 reals: TQ_KS_FAT .. TQ_KS_LONG_BACK). */
TQ_HD void tq_ks_load_dir_links(const tq_ks_args *a, const void *links, int64_t s, int mu, double *u)
{
    for (int j = 0; j < TQ_KS_DIR_ROWS; j++)
        tq_load_site(links, &a->L_links, (TQ_KS_DIR_ROWS * mu + j) * a->cb + s, u + 24 * j);
}

/* out = u in for a 3x3 complex matrix and a colour vector (reference/wilson_reference.h's
 * product order). */
TQ_HD void tq_ks_mat_vec(const double *u, const double *in, double *out)
{
    for (int i = 0; i < 3; i++) {
        double re = 0, im = 0;
        for (int k = 0; k < 3; k++) {
            const double ur = u[(i * 3 + k) * 2], ui = u[(i * 3 + k) * 2 + 1];
            re += ur * in[2 * k] - ui * in[2 * k + 1];
            im += ur * in[2 * k + 1] + ui * in[2 * k];
        }
        out[2 * i] = re;
        out[2 * i + 1] = im;
    }
}

/* The input vector `step` sites from x in mu (step +-1 or +-3), from the block (in) or a
 * face (from[2 k + side], side 0: the block below's upper face, 1: the block above's lower
 * face), into v. */
TQ_HD void tq_ks_load_neighbour(const tq_ks_args *a, const void *in, const void *const *from, const int x[4], int mu,
                                int step, double *v)
{
    int y[4] = {x[0], x[1], x[2], x[3]};
    y[mu] += step;
    if ((y[mu] < 0 || y[mu] >= a->B[mu]) && a->split[mu]) {
        int k = 0;
        for (int nu = 0; nu < mu; nu++) k += a->split[nu];
        const int below = y[mu] < 0;
        const int layer = below ? -1 - y[mu] : y[mu] - a->B[mu];
        const int64_t fs = layer * tq_face_sites(a->B, mu) + tq_face_index(a->B, mu, y);
        tq_load_site(from[2 * k + (below ? 0 : 1)], &a->L_face[mu], fs, v);
        return;
    }
    y[mu] = (y[mu] + a->B[mu]) % a->B[mu];   /* periodic inside an unsplit direction */
    tq_load_site(in, &a->L_in, tq_block_cb(a->B, y), v);
}

/* Site s (parity a->parity) computed whole; from NULL where the caller knows no hop crosses. */
TQ_HD void tq_ks_site(const tq_ks_args *a, const void *in, const void *links, const void *const *from, void *out,
                      int64_t s)
{
    int x[4];
    tq_block_coords(a->B, a->parity, s, x);
    double u[72], v[6], t[6], acc[6] = {0, 0, 0, 0, 0, 0};
    for (int mu = 0; mu < 4; mu++) {
        tq_ks_load_dir_links(a, links, s, mu, u);
        for (int h = 1; h <= 3; h += 2) {
            const int fwd = h == 1 ? TQ_KS_FAT : TQ_KS_LONG;   /* V_mu(x) or W_mu(x), then its backward partner */
            tq_ks_load_neighbour(a, in, from, x, mu, h, v);
            tq_ks_mat_vec(u + 18 * fwd, v, t);
            for (int i = 0; i < 6; i++) acc[i] += t[i];
            tq_ks_load_neighbour(a, in, from, x, mu, -h, v);
            tq_ks_mat_vec(u + 18 * (fwd + 1), v, t);
            for (int i = 0; i < 6; i++) acc[i] -= t[i];
        }
    }
    tq_store_site(out, &a->L_out, s, acc);
}

/* Pack: the input's sites (parity a->parity: the one the readers hop to) in the three
 * layers at the block's lower and upper boundary in each split direction into
 * faces[2 k + side]. */
TQ_HD void tq_ks_pack_site(const tq_ks_args *a, const void *in, void *const *faces, int64_t s)
{
    int x[4];
    tq_block_coords(a->B, a->parity, s, x);
    double v[6];
    int k = 0, loaded = 0;
    for (int mu = 0; mu < 4; mu++) {
        if (!a->split[mu]) continue;
        for (int side = 0; side < 2; side++) {
            const int layer = side ? a->B[mu] - 1 - x[mu] : x[mu];
            if (layer >= TQ_KS_DEPTH) continue;
            if (!loaded) tq_load_site(in, &a->L_in, s, v), loaded = 1;
            tq_store_site(faces[2 * k + side], &a->L_face[mu], layer * tq_face_sites(a->B, mu) + tq_face_index(a->B, mu, x), v);
        }
        k++;
    }
}

#endif
