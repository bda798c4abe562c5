/* The improved staggered operator (issue 36), first piece: the hopping term D of MILC's
 * M = 2m + D from precomputed fat and long links, through the generic stencil layer with
 * faces three sites deep (src/dirac/staggered.c; codelets on CPU and CUDA), checked against
 * reference/staggered_reference.h by tests/test_staggered, and the asqtad links built from
 * thin links by tasks. Not yet public: HISQ, mixed precision, several ranks and the command
 * line come next. */
#ifndef TQ_STAGGERED_H
#define TQ_STAGGERED_H

#include "core/stencil.h"

typedef struct tq_ks_op {
    tq_lattice *lat;          /* not owned */
    tq_precision prec;        /* links and vectors */
    tq_field *links;          /* 16 matrices per site (kernels/staggered_site.h) */
    tq_stencil stencil;       /* faces of 3 layers of 6 reals */
} tq_ks_op;

/* The operator on lat from fat and long links with their phases and boundary factors
 * (reference/staggered_reference.h's V and W: 72 doubles per site, site order of the API).
 * One rank only (no link halo yet); every block extent in a split direction at least 3
 * (the Naik term's reach). The tasks run on each block's owner (a GPU where there is one). */
tq_status tq_ks_op_create(tq_lattice *lat, const double *fat, const double *lng, tq_precision prec, tq_ks_op **out);
/* The same from thin links without phases (72 doubles per site, the API's layout, the whole
 * lattice on every rank: the links near a rank's part come from its neighbours'): asqtad fat and long links with tadpole factor u0, the staggered phases and the
 * boundary factors bc[mu] (MILC: {1, 1, 1, -1}), built by tasks per block and parity
 * (kernels/staggered_links_site.h) straight into the operator's links. */
tq_status tq_ks_op_create_asqtad(tq_lattice *lat, const double *thin, double u0, const double bc[4], tq_precision prec,
                                 tq_ks_op **out);
/* A copy of op's links in precision prec (a mixed-precision solve's sloppy operator). */
tq_status tq_ks_op_copy(const tq_ks_op *op, tq_precision prec, tq_ks_op **out);
/* The same for HISQ: fat7 links of thin projected onto U(3) (a task per time slice), then
 * their asqtad-like smearing with the Lepage term doubled and the Naik links, eps the Naik
 * epsilon (|eps| < 1; 0 for light quarks). */
tq_status tq_ks_op_create_hisq(tq_lattice *lat, const double *thin, double eps, const double bc[4], tq_precision prec,
                               tq_ks_op **out);
void tq_ks_op_destroy(tq_ks_op *op);
/* out = D in on full staggered fields of the operator's lattice and precision. */
tq_status tq_ks_dslash(const tq_ks_op *op, tq_field *out, const tq_field *in);
/* out_p = D_pq in_q: out a single-parity field of parity p (or a full field's parity view),
 * in one of the other parity. */
tq_status tq_ks_hop(const tq_ks_op *op, tq_field *out, const tq_field *in);

#endif
