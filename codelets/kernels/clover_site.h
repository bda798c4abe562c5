/* Clover term per site, shared by the CPU and CUDA codelets.
 *
 * A(x) = 1 + kappa c_sw sum_{mu<nu} sigma_{mu nu} (i F_{mu nu}(x)) (doc/conventions.md)
 * commutes with gamma_5, which is diag(1, 1, -1, -1) in the DeGrand-Rossi basis, so it is
 * two Hermitian 6x6 blocks: block b acts on spins 2b, 2b+1 (row i = (spin - 2b) * 3 + color),
 * i.e. on reals 12b .. 12b+11 of a spinor site. Stored per site as 72 reals, 36 per block:
 *   [0 .. 5]    the real diagonal A_ii
 *   [6 .. 35]   the 15 entries below it, A_ij for i > j in the order (1,0) (2,0) (2,1)
 *               (3,0) ... (5,4), as (re, im); A_ji = conj(A_ij).
 * The inverse A^-1 is stored the same way (a separate field). */
#ifndef TQ_CLOVER_SITE_H
#define TQ_CLOVER_SITE_H

#include "kernels/field_layout.h"

#define TQ_CLOVER_REALS 72
#define TQ_CLOVER_BLOCK_REALS 36

/* Index of the pair (re, im) of A_ij, i > j, within a block. */
TQ_HD int tq_clover_offdiag(int i, int j)
{
    return 6 + 2 * (i * (i - 1) / 2 + j);
}

/* Arguments of one clover task (one block, one parity): out = K in, or out = x + a K in,
 * with K the clover field or its inverse. */
typedef struct tq_clover_args {
    int64_t cb;            /* sites in the block's parity subset */
    int xpay;
    int in_place;          /* in is out (one read-write buffer) */
    double a;
    int guard;             /* > 0: a solver's guarded application (kernels/solver_scalars.h):
                              the solver scalars are one more buffer (R), and the task does
                              nothing when scalar guard - 1 is 0 */
    tq_layout L_clover, L_in, L_out, L_x;
} tq_clover_args;

#define TQ_R double
#define TQ_RF(name) name
#include "kernels/clover_site_real.h"
#undef TQ_R
#undef TQ_RF
#define TQ_R float
#define TQ_RF(name) name##_f
#include "kernels/clover_site_real.h"
#undef TQ_R
#undef TQ_RF

#endif
