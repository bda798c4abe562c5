/* The operators built from the hopping and clover terms: M, M_pc (even-odd, symmetric
 * or asymmetric), M_pc^dag M_pc, the even-odd source and the full solution, M_pc with a
 * solver's reduction fused into its last kernel, and chains around an application (one
 * StarPU task per application where the operator is one block). */
#include "dirac/dirac_impl.h"

#include <stdlib.h>
#include <string.h>

tq_status tq_dirac_mat(const tq_dirac *d, tq_field *out, const tq_field *in, int dagger)
{
    const char *who = "tq_dirac_mat";
    if (!d || !out || !in) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (out->nparity != 2 || in->nparity != 2)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in must be full (both-parity) fields", who);
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, 0, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, 0, "in"));
    /* on one block the operator's kernels run one after another anyway: as one chain task
     * they pay StarPU's task-to-task gap once per application */
    tq_internal_chain_begin(tq_internal_dirac_can_chain(d));
    tq_status st = TQ_SUCCESS;
    for (int p = 0; p < 2 && st == TQ_SUCCESS; p++) {
        if (!d->clover) {
            st = tq_dslash_wilson_hop(who, d, out, in, p, dagger, -d->p.kappa, in);
            continue;
        }
        /* A is Hermitian: M^dag = A - kappa D^dag */
        st = tq_clover_term_apply(who, d, 0, out, in, p, 0.0, NULL);
        if (st == TQ_SUCCESS) st = tq_dslash_wilson_hop(who, d, out, in, p, dagger, -d->p.kappa, out);
    }
    return tq_internal_chain_end(tq_internal_dirac_can_chain(d), st, who);
}

/* Whether consecutive M_pc applications of d overlap on a GPU: with several blocks and
 * chains, blocks of at least TQ_OVERLAP_MIN_SITES sites per parity (TQ_MATPC_TURNS=1: any
 * size, 0: never). Measured on two H200s (doc/performance.md, "Two H200s at fbe0ca6"):
 * 32^3x32 and larger blocks 1-7 % faster; 32^3x16 blocks 8 % slower, where the second
 * application's kernels delay the first's faces, which the other GPU waits for. One block
 * keeps one intermediate: there two stencil kernels side by side lost 1-8 % to one after
 * the other. */
enum { TQ_OVERLAP_MIN_SITES = 1 << 19 };
static int matpc_overlaps(const tq_dirac *d)
{
    if (!d->turn || !tq_internal_dirac_can_chain(d)) return 0;
    const char *env = getenv("TQ_MATPC_TURNS");
    if (env && (env[0] == '0' || env[0] == '1')) return env[0] == '1';
    return d->lat->block_cb >= TQ_OVERLAP_MIN_SITES;
}

/* The intermediates of this M_pc application: where applications overlap, tmp and tmp_alt
 * by turns, the other pair held by the owners' chain tasks (tq_task_hold) so that the next
 * application joins them; then an application's first hop need not wait for the one
 * before to finish reading its intermediate (its exterior and rim). */
static tq_field *const *matpc_intermediates(const tq_dirac *d, int p, int dagger)
{
    const unsigned t = __atomic_fetch_add(d->turn, 1u, __ATOMIC_RELAXED);
    tq_field *const *use = t & 1 ? d->tmp_alt : d->tmp, *const *other = t & 1 ? d->tmp : d->tmp_alt;
    /* the parities the application uses: q, and p for the clover dagger's first step */
    const int both = d->clover && d->p.matpc != TQ_MATPC_ASYMMETRIC && dagger;
    for (int blk = 0; blk < d->lat->nblocks; blk++) {
        const tq_task_options opt = tq_internal_block_options(d->lat, blk);
        for (int par = 0; par < 2; par++)
            if ((par != p || both) && tq_task_hold(&opt, tq_dirac_parity_handle(other[par], blk, par))) return d->tmp;
    }
    return use;
}

/* M_pc (or M_pc^dag) in on parity p. The last kernel is always a hopping term with xpay; an
 * epilogue e goes there, and with TQ_EPI_AXPY_NORM2 that kernel updates e->r instead of
 * writing out (out may still serve as the clover term's intermediate). A guarded epilogue
 * (a solver's iteration queued behind its stopping test) guards the kernels before it too
 * (g): past convergence the application costs launches, not stencils. */
static tq_status matpc_tasks(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in, int p,
                             int dagger, const tq_dirac_epilogue *e)
{
    const int q = 1 - p;
    const double k2 = d->p.kappa * d->p.kappa;
    tq_field *const *tmp = matpc_overlaps(d) ? matpc_intermediates(d, p, dagger) : d->tmp;
    tq_field *last = e && e->args.kind == TQ_EPI_AXPY_NORM2 ? e->r : out;
    tq_dirac_epilogue guard;
    const tq_dirac_epilogue *g = NULL;
    if (e && e->args.guard > 0) {
        memset(&guard, 0, sizeof guard);
        guard.args.guard = e->args.guard;
        guard.scalars = e->scalars;
        guard.sc = e->sc;   /* each block's guard read from its owner's replica */
        g = &guard;
    }
    if (!d->clover) {
        /* M_pc = 1 - kappa^2 D_pq D_qp; the dagger applies D^dag in both hops */
        TQ_CHECK(tq_dslash_wilson_submit(who, d, tmp[q], in, q, dagger, 1.0, NULL, NULL, g, TQ_STENCIL_PACK_NEXT));
        return tq_dslash_wilson_submit(who, d, last, tmp[q], p, dagger, -k2, in, NULL, e, TQ_STENCIL_PACKED);
    }
    if (d->p.matpc == TQ_MATPC_ASYMMETRIC) {
        /* A_pp - kappa^2 D_pq A_qq^-1 D_qp (dagger: D^dag in both hops, A Hermitian) */
        TQ_CHECK(tq_dslash_wilson_submit(who, d, tmp[q], in, q, dagger, 1.0, NULL, d->clover_inv, g,
                                         TQ_STENCIL_PACK_NEXT));
        TQ_CHECK(tq_clover_term_submit(who, d, 0, out, in, p, 0.0, NULL, g));
        return tq_dslash_wilson_submit(who, d, last, tmp[q], p, dagger, -k2, out, NULL, e, TQ_STENCIL_PACKED);
    }
    if (!dagger) {
        /* 1 - kappa^2 A_pp^-1 D_pq A_qq^-1 D_qp: two fused hopping + clover applications */
        TQ_CHECK(tq_dslash_wilson_submit(who, d, tmp[q], in, q, 0, 1.0, NULL, d->clover_inv, g, TQ_STENCIL_PACK_NEXT));
        return tq_dslash_wilson_submit(who, d, last, tmp[q], p, 0, -k2, in, d->clover_inv, e, TQ_STENCIL_PACKED);
    }
    /* dagger: 1 - kappa^2 D^dag_pq A_qq^-1 D^dag_qp A_pp^-1 */
    TQ_CHECK(tq_clover_term_submit(who, d, 1, tmp[p], in, p, 0.0, NULL, g));
    TQ_CHECK(tq_dslash_wilson_submit(who, d, tmp[q], tmp[p], q, 1, 1.0, NULL, d->clover_inv, g, TQ_STENCIL_PACK_NEXT));
    return tq_dslash_wilson_submit(who, d, last, tmp[q], p, 1, -k2, in, NULL, e, TQ_STENCIL_PACKED);
}

static tq_status matpc(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in, int p,
                       int dagger, const tq_dirac_epilogue *e)
{
    tq_internal_chain_begin(tq_internal_dirac_can_chain(d));   /* as in tq_dirac_mat */
    const int was = tq_task_overlap(matpc_overlaps(d));
    const tq_status st = matpc_tasks(who, d, out, in, p, dagger, e);
    tq_task_overlap(was);
    return tq_internal_chain_end(tq_internal_dirac_can_chain(d), st, who);
}

tq_status tq_dirac_matpc(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger)
{
    const char *who = "tq_dirac_matpc";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, (int)parity, "in"));
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    return matpc(who, d, out, in, (int)parity, dagger, NULL);
}

tq_status tq_internal_dirac_matpc_epilogue(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                           int dagger, const tq_dirac_epilogue *e)
{
    const char *who = "tq_dirac_matpc (fused reduction)";
    if (!d || !e) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, (int)parity, "in"));
    if (out == in) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    if (!tq_internal_dirac_can_fuse(d))
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: several blocks with TQ_SPLIT_FUSE=0", who);
    if (e->args.split && (!e->sc || (tq_epilogue_partial(&e->args) && !e->partials)))
        return tq_error(TQ_ERR_INVALID_ARG, "%s: a split epilogue needs the scalars and the partials", who);
    /* the kernels built: after M_pc |y|^2 (CG), out = w + c y or the four products
     * (BiCGstab on M_pc); after M_pc^dag r += c y (CG on M_pc^dag M_pc) */
    const int kind = e->args.kind;
    if (!((kind == TQ_EPI_AXPY_NORM2) == (dagger != 0) && kind >= TQ_EPI_NORM2 && kind <= TQ_EPI_BICGSTAB_T))
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: epilogue %d with dagger %d", who, kind, dagger);
    if (kind == TQ_EPI_AXPY_NORM2) {
        TQ_CHECK(tq_dirac_check_spinor(who, d, e->r, (int)parity, "r"));
        if (e->r == in || e->r == out) return tq_error(TQ_ERR_INVALID_ARG, "%s: r is in or out", who);
    }
    if (tq_epilogue_reads_w(kind)) {
        TQ_CHECK(tq_dirac_check_spinor(who, d, e->w, (int)parity, "w"));
        if (e->w == out) return tq_error(TQ_ERR_INVALID_ARG, "%s: w is out", who);
    }
    if (tq_epilogue_reads_u(kind)) {
        TQ_CHECK(tq_dirac_check_spinor(who, d, e->u, (int)parity, "u"));
        if (e->u == out) return tq_error(TQ_ERR_INVALID_ARG, "%s: u is out", who);
    }
    return matpc(who, d, out, in, (int)parity, dagger, e);
}

tq_status tq_dirac_matpc_dag_matpc(const tq_dirac *d, tq_field *out, const tq_field *in,
                                   tq_subset parity)
{
    const char *who = "tq_dirac_matpc_dag_matpc";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, (int)parity, "in"));
    if (in == d->pc[parity] || out == d->pc[parity])
        return tq_error(TQ_ERR_INVALID_ARG, "%s: a field is the operator's work field", who);
    tq_internal_chain_begin(tq_internal_dirac_can_chain(d));   /* as in tq_dirac_mat */
    tq_status st = tq_dirac_matpc(d, d->pc[parity], in, parity, 0);
    if (st == TQ_SUCCESS) st = tq_dirac_matpc(d, out, d->pc[parity], parity, 1);
    return tq_internal_chain_end(tq_internal_dirac_can_chain(d), st, who);
}

/* Even-odd source: with M = [[A_pp, -kappa D_pq], [-kappa D_qp, A_qq]], eliminating parity q
 * gives (A_pp - kappa^2 D_pq A_qq^-1 D_qp) x_p = b_p + kappa D_pq A_qq^-1 b_q; the symmetric
 * form multiplies both sides by A_pp^-1. Wilson: A = 1. */
tq_status tq_dirac_prepare(const tq_dirac *d, tq_field *out, const tq_field *b, tq_subset parity)
{
    const char *who = "tq_dirac_prepare";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, b, 0, "b"));
    if (b->nparity != 2) return tq_error(TQ_ERR_INVALID_ARG, "%s: b must be a full (both-parity) field", who);
    if (out == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: out and b are the same field", who);
    const int p = (int)parity, q = 1 - p;
    if (!d->clover) return tq_dslash_wilson_hop(who, d, out, b, p, 0, d->p.kappa, b);
    TQ_CHECK(tq_clover_term_apply(who, d, 1, d->tmp[q], b, q, 0.0, NULL));
    TQ_CHECK(tq_dslash_wilson_hop(who, d, out, d->tmp[q], p, 0, d->p.kappa, b));
    if (d->p.matpc == TQ_MATPC_SYMMETRIC) TQ_CHECK(tq_clover_term_apply(who, d, 1, out, out, p, 0.0, NULL));
    return TQ_SUCCESS;
}

/* Full solution from the even-odd one: x_q = A_qq^-1 (b_q + kappa D_qp x_p), x_p = x_pc. */
tq_status tq_dirac_reconstruct(const tq_dirac *d, tq_field *x, const tq_field *x_pc,
                               const tq_field *b, tq_subset parity)
{
    const char *who = "tq_dirac_reconstruct";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, x, 0, "x"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, x_pc, (int)parity, "x_pc"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, b, 0, "b"));
    if (x->nparity != 2 || b->nparity != 2)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b must be full (both-parity) fields", who);
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    const int p = (int)parity, q = 1 - p;
    if (x_pc != x) {
        tq_blas_args ba;
        memset(&ba, 0, sizeof ba);
        ba.op = TQ_OP_COPY;
        ba.L[0] = x_pc->layout;
        ba.L[1] = x->layout;
        for (int blk = 0; blk < d->lat->nblocks; blk++) {
            starpu_data_handle_t h[2] = {tq_dirac_parity_handle(x_pc, blk, p), tq_dirac_parity_handle(x, blk, p)};
            const tq_task_options opt = tq_internal_block_options(d->lat, blk);
            int ret = tq_task_blas(&opt, &ba, h, NULL, NULL, NULL, NULL);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    }
    TQ_CHECK(tq_dslash_wilson_hop(who, d, x, x_pc, q, 0, d->p.kappa, b));
    if (d->clover) TQ_CHECK(tq_clover_term_apply(who, d, 1, x, x, q, 0.0, NULL));
    return TQ_SUCCESS;
}

