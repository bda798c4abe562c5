/* Lattice and field internals shared by src/ and tasks/. */
#ifndef TQ_FIELD_INTERNAL_H
#define TQ_FIELD_INTERNAL_H

#include "tq_internal.h"
#include "kernels/field_layout.h"

#include <starpu.h>

struct tq_lattice {
    int dims[4], procs[4], coords[4];
    int local[4], block[4], nb[4];
    int nblocks;
    int64_t local_volume, block_volume, block_cb;   /* block_cb: sites of one parity */
    int nfields;                                    /* live fields (destroy order check) */
};

struct tq_field {
    tq_lattice *lat;
    tq_field_params p;
    int nparity;               /* 1 (single-parity spinor) or 2 */
    int parity[2];             /* the parities held, in handle order */
    tq_layout layout;          /* per block and parity; stride = block_cb */
    starpu_data_handle_t *h;   /* h[b * nparity + i] */
};

static inline starpu_data_handle_t tq_field_handle(const tq_field *f, int block, int i)
{
    return f->h[block * f->nparity + i];
}

/* Local site (x fastest) -> block, parity and index within the block's parity subset. */
static inline void tq_lattice_locate(const tq_lattice *lat, const int x[4], int *block,
                                     int *parity, int64_t *cb)
{
    int xb[4], xi[4];
    for (int mu = 0; mu < 4; mu++) { xb[mu] = x[mu] / lat->block[mu]; xi[mu] = x[mu] % lat->block[mu]; }
    *block = ((xb[3] * lat->nb[2] + xb[2]) * lat->nb[1] + xb[1]) * lat->nb[0] + xb[0];
    /* Block extents are even, so a block's origin has even coordinate sum and the
     * parity inside it is the global parity. */
    *parity = (x[0] + x[1] + x[2] + x[3]) & 1;
    int64_t lex = (((int64_t)xi[3] * lat->block[2] + xi[2]) * lat->block[1] + xi[1]) * lat->block[0] + xi[0];
    *cb = lex / 2;
}

/* Checks kind/subset/lattice agreement of BLAS operands. */
tq_status tq_field_check_compatible(const char *who, const tq_field *a, const tq_field *b,
                                    int same_precision);
int tq_field_kind_is_vector(tq_field_kind k);

/* The clover term A of the operator with these kappa, c_sw and its inverse, as two new
 * clover fields of the gauge field's lattice and precision (src/clover_build.c). */
tq_status tq_clover_build(const tq_field *gauge, double kappa, double csw, tq_field **A,
                          tq_field **Ainv);
/* The same, stored in precision prec (built from the gauge field's links as they are). */
tq_status tq_clover_build_prec(const tq_field *gauge, tq_precision prec, double kappa, double csw, tq_field **A,
                               tq_field **Ainv);

#endif
