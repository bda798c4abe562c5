/* Random vector fields made where the field lives (codelets/random_field.c): each real
 * uniform in (-1, 1), from Philox (kernels/philox.h) keyed by the global site. 2 u - 1 of
 * tq_rng_uniform's 52 random bits is exact in double, with no function whose last bit
 * differs between a C library and CUDA, so every device, block decomposition and rank grid
 * stores the same bits. Multigrid's null-vector starts (src/solvers/mg_setup.c): made on
 * the host and imported, 24 of them took the set-up 2.3 s of a 7.6 s set-up at 32^4 on an
 * H200 with the GPU idle (doc/performance.md). */
#ifndef TQ_RANDOM_FIELD_SITE_H
#define TQ_RANDOM_FIELD_SITE_H

#include "kernels/tq_hd.h"
#include "kernels/philox.h"
#include "kernels/field_layout.h"
#include "kernels/dslash_wilson_site.h"   /* tq_block_coords */

/* One block and parity of a vector field. */
typedef struct tq_random_field_args {
    tq_layout L;           /* the field's layout (stride: block_cb sites per row) */
    int B[4];              /* block extents */
    int origin[4];         /* the block's first site, global coordinates */
    int global[4];         /* the lattice's extents */
    int parity;            /* of these sites (global: block origins have even coordinates) */
    int rows;              /* rows of 24 reals per site, row j of site s at j block_cb + s */
    int64_t block_cb;      /* sites of this parity in the block */
    uint32_t key[2];       /* tq_rng_key of the seed */
    uint32_t stream;       /* the counter's stream word */
} tq_random_field_args;

/* Site cb of the block's parity: reals 24 j + k of row j from Philox block 12 j + k / 2 of
 * (stream, global lexicographic site). */
TQ_HD void tq_random_field_site(const tq_random_field_args *a, void *out, int64_t cb)
{
    int x[4];
    tq_block_coords(a->B, a->parity, cb, x);
    int64_t site = 0;
    for (int mu = 3; mu >= 0; mu--) site = site * a->global[mu] + a->origin[mu] + x[mu];
    for (int j = 0; j < a->rows; j++) {
        double v[24];
        TQ_UNROLL
        for (int k = 0; k < 24; k += 2) {
            uint32_t ctr[4], w[4];
            tq_rng_site_counter(ctr, (uint32_t)(12 * j + k / 2), a->stream, (uint64_t)site);
            tq_philox4x32(ctr, a->key, w);
            v[k] = 2.0 * tq_rng_uniform(w[0], w[1]) - 1.0;
            v[k + 1] = 2.0 * tq_rng_uniform(w[2], w[3]) - 1.0;
        }
        tq_store_site(out, &a->L, (int64_t)j * a->block_cb + cb, v);
    }
}

#endif
