/* Flops and bytes of one application of a Wilson-type operator, as QUDA counts them, shared
 * by `taskqcd dslash` and bench/bench_dslash_bare so that their rows compare. */
#include "cli.h"

void tq_cli_dslash_cost_of(int64_t vol, tq_precision prec, int recon, double hops, double clovers, double xpays,
                           tq_cli_dslash_cost *c)
{
    const double half_sites = vol / 2.0;
    /* half: int16 components and one float norm per spinor or clover site */
    c->spinor_bytes = prec == TQ_HALF ? 24 * 2 + 4 : 24.0 * (int)prec;
    c->link_bytes = recon * (double)(int)prec;
    c->clover_bytes = prec == TQ_HALF ? 72 * 2 + 4 : 72.0 * (int)prec;
    const double sb = c->spinor_bytes, lb = c->link_bytes, cb = c->clover_bytes;
    c->flops = half_sites * (1320.0 * hops + 504.0 * clovers + 48.0 * xpays);
    c->bytes_quda = half_sites * (hops * (8 * lb + 9 * sb) + clovers * cb + xpays * sb);
    c->bytes_min = half_sites * (hops * (8 * lb + 2 * sb) + clovers * cb + xpays * sb);
}
