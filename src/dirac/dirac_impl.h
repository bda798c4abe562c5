/* What the files of src/dirac/ share and nothing outside it sees: the operator object and
 * the graph builders of the hopping and clover terms the operator forms are made of. */
#ifndef TQ_DIRAC_IMPL_H
#define TQ_DIRAC_IMPL_H

#include "dirac/dirac_internal.h"
#include "core/stencil.h"

#include <starpu.h>

struct tq_dirac {
    const tq_field *gauge;
    tq_lattice *lat;
    tq_dirac_params p;
    /* work fields, made once: a field created per call costs a GPU allocation and a free
     * (which synchronises the device) every time; reusing one only orders the calls that
     * share it. tmp[q]: the intermediate of M_pc on parity q; pc[p]: M_pc in inside
     * M_pc^dag M_pc. */
    tq_field *tmp[2], *pc[2];
    /* with several blocks, M_pc takes its intermediates from tmp and tmp_alt by turns
     * (*turn counts the applications), so that an application's first hop need not wait
     * for the one before to finish reading its intermediate (src/dirac/dirac_forms.c) */
    tq_field *tmp_alt[2];
    unsigned *turn;
    /* the hopping term's faces (one site deep, half spinors), made once for the same reason */
    tq_stencil stencil;
    /* clover operators: A and A^-1 on both parities (NULL for Wilson) */
    tq_field *clover, *clover_inv;
    /* a work copy (tq_internal_dirac_work) shares gauge and clover fields with its parent;
     * a sloppy copy (tq_internal_dirac_sloppy) owns a gauge field in another precision */
    int shares_clover;
    tq_field *owned_gauge;
    /* the sloppy copy of the last mixed-precision solve, kept for the next one (making it
     * converts the gauge field and builds the clover term: seconds at 32^4) */
    tq_dirac *sloppy;
};

/* The handle of block b, parity `parity` of f (which must hold that parity). */
static inline starpu_data_handle_t tq_dirac_parity_handle(const tq_field *f, int b, int parity)
{
    return f->nparity == 2 ? tq_field_handle(f, b, parity) : tq_field_handle(f, b, 0);
}

static inline int tq_dirac_holds_parity(const tq_field *f, int parity)
{
    return f->nparity == 2 || f->parity[0] == parity;
}

/* The solver scalars a task of e's application on `worker` reads: with the solve's scalars
 * known (e->sc) its owner's replica, so that in peer mode no GPU reads a replica another
 * GPU's combine writes (a StarPU transfer between GPUs inside an iteration, doc/design.md
 * "Peer mode"); else e->scalars. */
static inline starpu_data_handle_t tq_dirac_epilogue_scalars(const tq_dirac_epilogue *e, int worker)
{
    return e->sc ? tq_scalars_for_worker(e->sc, worker) : e->scalars;
}

/* Argument checks (src/dirac/dirac.c): f is a spinor of d's lattice and precision holding
 * parity `parity`; parity is TQ_EVEN or TQ_ODD. name: the argument's name in messages. */
tq_status tq_dirac_check_spinor(const char *who, const tq_dirac *d, const tq_field *f, int parity,
                                const char *name);
tq_status tq_dirac_check_parity(const char *who, tq_subset parity);

/* Submits out = a D in (+ x), or out = a K D in (+ x) with the clover field K, on parity
 * `parity`, e: a solver's epilogue fused into the kernels (or NULL) (dslash_wilson.c).
 * ahead: TQ_STENCIL_PACK_NEXT when the caller's next hop reads out with the same dagger
 * (M_pc's first hop; then without an epilogue), TQ_STENCIL_PACKED on that next hop, else 0
 * (core/stencil.h). */
tq_status tq_dslash_wilson_submit(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                                  int parity, int dagger, double a, const tq_field *x, const tq_field *K,
                                  const tq_dirac_epilogue *e, unsigned ahead);
/* out = a D in (+ x): no clover term, no epilogue. */
static inline tq_status tq_dslash_wilson_hop(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                                             int parity, int dagger, double a, const tq_field *x)
{
    return tq_dslash_wilson_submit(who, d, out, in, parity, dagger, a, x, NULL, NULL, 0);
}

/* Submits out = K in (or out = x + a K in when x) on parity `parity`, K = A or A^-1
 * (inverse); g: a solver's guard (or NULL) (clover.c). */
tq_status tq_clover_term_submit(const char *who, const tq_dirac *d, int inverse, tq_field *out,
                                const tq_field *in, int parity, double a, const tq_field *x,
                                const tq_dirac_epilogue *g);
static inline tq_status tq_clover_term_apply(const char *who, const tq_dirac *d, int inverse, tq_field *out,
                                             const tq_field *in, int parity, double a, const tq_field *x)
{
    return tq_clover_term_submit(who, d, inverse, out, in, parity, a, x, NULL);
}

#endif
