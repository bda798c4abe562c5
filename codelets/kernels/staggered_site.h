/* The improved staggered hopping term per site (issue 36; CPU codelets in
 * codelets/staggered.c): on the sites x of parity p of one block,
 *     out(x) = sum_mu [ V_mu(x) in(x+mu) - V_mu(x-mu)^dag in(x-mu)
 *                       + W_mu(x) in(x+3mu) - W_mu(x-3mu)^dag in(x-3mu) ]
 * (reference/staggered_reference.h's D, the phases in the links), with in of parity 1 - p
 * from the block itself or, across a split direction, from the neighbour block's face three
 * layers deep. A site is computed whole by one task (the interior for sites with no hop
 * across a split direction, the exterior for the others), in the reference's order, so
 * results are bitwise the reference's in double on CPUs and the same for every
 * decomposition. The arithmetic, per direction and per site, in both real types:
 * staggered_site_real.h (a CUDA thread per direction: codelets/staggered_cuda.cu).
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
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++)
        if (a->split[mu] && (x[mu] < TQ_KS_DEPTH || x[mu] >= a->B[mu] - TQ_KS_DEPTH)) return 1;
    return 0;
}

/* Index arithmetic of a site and its neighbours: 32-bit on GPUs as in tq_block_cb (blocks
 * hold fewer than 2^31 sites), 64-bit on CPUs. */
#ifdef __CUDA_ARCH__
typedef int tq_ks_index;
#else
typedef int64_t tq_ks_index;
#endif

/* The task's layouts with a compile-time precision filled in (callers pass a literal, so
 * the typed loads and stores resolve their branches and unroll). */
TQ_HD void tq_ks_layouts(const tq_ks_args *a, int prec, tq_layout *Lin, tq_layout *Lout, tq_layout *Ll)
{
    *Lin = a->L_in; Lin->prec = prec; Lin->nreal = 6; Lin->vec = 2; Lin->has_norm = prec == 2;
    *Lout = a->L_out; Lout->prec = prec; Lout->nreal = 6; Lout->vec = 2; Lout->has_norm = prec == 2;
    /* a coarse field: rows of 12 complex, a norm per row in half precision */
    *Ll = a->L_links; Ll->prec = prec; Ll->nreal = 24; Ll->vec = tq_layout_vec(prec, 24); Ll->has_norm = prec == 2;
}

/* What site x needs to reach its neighbours along one direction mu. mu may differ from
 * one GPU thread to the next (a thread per direction), so it is never an array index
 * here: the per-direction values are picked by comparisons in unrolled loops, which keep
 * everything in registers instead of a local-memory copy of the arguments. */
typedef struct tq_ks_dir {
    int mu, xm, Bm, split;   /* x_mu, the block's extent and whether mu is split */
    tq_ks_index lex, step;   /* x's lexicographic index in the block; that of one hop in mu */
    int64_t fi, fs;          /* faces only: x's face index (its neighbours' in mu too), sites of a layer */
    const void *lo, *hi;     /* faces only: the block below's upper face, the block above's lower one */
    tq_layout Lf;
} tq_ks_dir;

/* faces 0: the caller knows no hop crosses (from unused). */
TQ_HD void tq_ks_dir_init(const tq_ks_args *a, const void *const *from, const int x[4], int mu, int prec, int faces,
                          tq_ks_dir *d)
{
    d->mu = mu;
    d->xm = 0, d->Bm = 1, d->split = 0, d->step = 1, d->lex = 0;
    d->fi = 0, d->fs = 0, d->lo = d->hi = NULL;
    d->Lf = a->L_face[0];
    d->Lf.prec = prec; d->Lf.nreal = 6; d->Lf.vec = 2; d->Lf.has_norm = prec == 2;
    int k = 0;   /* split directions before mu: its faces are from[2 k], from[2 k + 1] */
    int64_t other = 1;
    TQ_UNROLL
    for (int nu = 3; nu >= 0; nu--) d->lex = d->lex * a->B[nu] + x[nu];
    TQ_UNROLL
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) {
            d->xm = x[nu], d->Bm = a->B[nu], d->split = a->split[nu];
            d->Lf.stride = a->L_face[nu].stride;
        } else {
            other *= a->B[nu];
        }
        if (nu < mu) d->step *= a->B[nu], k += a->split[nu];
    }
    if (!faces || !d->split) return;
    d->fs = other / 2;   /* tq_face_sites */
    d->fi = tq_face_index(a->B, mu, x);
    TQ_UNROLL
    for (int j = 0; j < 8; j++) {
        if (j == 2 * k) d->lo = from[j];
        if (j == 2 * k + 1) d->hi = from[j];
    }
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

/* The typed per-site pieces: double (plain names) and float (names ending in _f); TQ_RM(fn)
 * the math function of that type. */
#define TQ_R double
#define TQ_RF(name) name
#define TQ_RM(fn) fn
#include "kernels/staggered_site_real.h"
#undef TQ_R
#undef TQ_RF
#undef TQ_RM
#define TQ_R float
#define TQ_RF(name) name##_f
#define TQ_RM(fn) fn##f
#include "kernels/staggered_site_real.h"
#undef TQ_R
#undef TQ_RF
#undef TQ_RM

#endif
