/* The clover term's application: out = K in or x + a K in with K = A or A^-1 of the
 * operator, one task per block and parity (codelets/clover.c). Its build is
 * clover_build.c. */
#include "dirac/dirac_impl.h"

#include <string.h>

/* Submits out = K in (or out = x + a K in when x) on parity `parity`, K = A or A^-1: one
 * task per block. in may be out (in place); x must differ from out. g (or NULL): the guard
 * of a solver's fused application (matpc_tasks); the tasks do nothing when it is shut. */
tq_status tq_clover_term_submit(const char *who, const tq_dirac *d, int inverse, tq_field *out,
                               const tq_field *in, int parity, double a, const tq_field *x,
                               const tq_dirac_epilogue *g)
{
    const tq_field *K = inverse ? d->clover_inv : d->clover;
    tq_clover_args ca;
    memset(&ca, 0, sizeof ca);
    ca.cb = d->lat->block_cb;
    ca.xpay = x != NULL;
    ca.a = a;
    ca.L_clover = K->layout;
    ca.L_in = in->layout;
    ca.L_out = out->layout;
    ca.L_x = x ? x->layout : out->layout;
    ca.guard = g ? g->args.guard : 0;
    for (int b = 0; b < d->lat->nblocks; b++) {
        starpu_data_handle_t ho = tq_dirac_parity_handle(out, b, parity), hi = tq_dirac_parity_handle(in, b, parity);
        ca.in_place = hi == ho;
        const tq_task_options opt = tq_internal_block_options(d->lat, b);
        int ret = tq_task_clover(&opt, &ca, tq_field_handle(K, b, parity), hi, ho, x ? tq_dirac_parity_handle(x, b, parity) : NULL,
                                 g ? tq_dirac_epilogue_scalars(g, opt.worker) : NULL);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    }
    return TQ_SUCCESS;
}

tq_status tq_dirac_clover(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                          int inverse)
{
    const char *who = "tq_dirac_clover";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    if (!d->clover) return tq_error(TQ_ERR_INVALID_ARG, "%s: the operator has no clover term (Wilson)", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, (int)parity, "in"));
    return tq_clover_term_apply(who, d, inverse ? 1 : 0, out, in, (int)parity, 0.0, NULL);
}

