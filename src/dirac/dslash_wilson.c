/* The Wilson hopping term D (dslash) as a task graph: per block a pack task for the faces
 * its neighbours read, an interior task and an exterior task (codelets/dslash_wilson.c),
 * with the clover term and a solver's reduction fusable into the kernels; the public
 * dslash entry points and the bare-kernel timing reference. */
#include "dirac/dirac_impl.h"

#include <stdlib.h>
#include <string.h>

/* The arguments every task of one hopping-term application shares (the fields' layouts,
 * block extents, split directions). */
static void hopping_args(const tq_dirac *d, const tq_field *out, const tq_field *in, int dagger, double a,
                        const tq_field *x, const tq_field *K, tq_dslash_wilson_args *base)
{
    const tq_lattice *lat = d->lat;
    memset(base, 0, sizeof *base);
    for (int mu = 0; mu < 4; mu++) {
        base->B[mu] = lat->block[mu];
        base->split[mu] = d->stencil.split[mu];
    }
    base->cb = lat->block_cb;
    base->dagger = dagger ? 1 : 0;
    base->recon = (int)d->gauge->p.recon;
    base->a = a;
    base->xpay = x != NULL;
    base->L_in = in->layout;
    base->L_out = out->layout;
    base->L_x = x ? x->layout : out->layout;
    base->L_gauge = d->gauge->layout;
    base->clover = K != NULL;
    base->L_clover = K ? K->layout : out->layout;
    for (int mu = 0; mu < 4; mu++)
        base->L_face[mu] = tq_layout_make(tq_dslash_wilson_face_prec((int)in->p.prec), 12, 1,
                                          tq_stencil_face_sites(&d->stencil, mu));
}

/* The boundary phases of block b's hops. */
static void block_phases(const tq_dirac *d, int b, tq_dslash_wilson_args *ia)
{
    for (int mu = 0; mu < 4; mu++) {
        ia->phase_lo[mu] = tq_stencil_at_boundary(&d->stencil, b, mu, 0) ? d->p.bc[mu] : 1.0;
        ia->phase_hi[mu] = tq_stencil_at_boundary(&d->stencil, b, mu, 1) ? d->p.bc[mu] : 1.0;
    }
}

/* One application's operands, for the stencil layer's per-block calls. */
typedef struct hop_ctx {
    const tq_dirac *d;
    tq_field *out;
    const tq_field *in, *x, *K;
    const tq_dirac_epilogue *e;
    tq_dslash_wilson_args base;
    int parity;
    int in_parts;   /* TQ_STENCIL_IN_PLACE_PARTS: a split epilogue with its blocks in place */
} hop_ctx;

static int hop_pack(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync)
{
    const hop_ctx *c = (const hop_ctx *)ctx;
    tq_dslash_wilson_face_args pa;
    memset(&pa, 0, sizeof pa);
    pa.a = c->base;
    pa.a.parity = 1 - c->parity;
    if (sync) pa.sync = *sync;
    const tq_task_options opt = tq_internal_block_options(c->d->lat, b);
    return tq_task_dslash_wilson_pack(&opt, &pa, tq_dirac_parity_handle(c->in, b, 1 - c->parity),
                                      tq_field_handle(c->d->gauge, b, 1 - c->parity), faces, c->d->stencil.nfaces);
}

/* In place: the input and the links of the block below (its upper boundary's hops come
 * from there), and the input of the block above. */
static int hop_neighbours(void *ctx, int b, int mu, int below, int above, starpu_data_handle_t *out)
{
    (void)b; (void)mu;
    const hop_ctx *c = (const hop_ctx *)ctx;
    const int q = 1 - c->parity;
    out[0] = tq_dirac_parity_handle(c->in, below, q);
    out[1] = tq_field_handle(c->d->gauge, below, q);
    out[2] = tq_dirac_parity_handle(c->in, above, q);
    return 3;
}

/* The handles and arguments of block b's interior and exterior tasks. */
typedef struct hop_block {
    tq_dslash_wilson_args a;
    starpu_data_handle_t ho, hx, hk, hw, hu;
} hop_block;

static hop_block block_operands(const hop_ctx *c, int b)
{
    hop_block h;
    h.a = c->base;
    h.a.parity = c->parity;
    block_phases(c->d, b, &h.a);
    h.ho = tq_dirac_parity_handle(c->out, b, c->parity);
    h.hx = c->x ? (c->x == c->out ? h.ho : tq_dirac_parity_handle(c->x, b, c->parity)) : NULL;
    h.a.x_separate = h.hx && h.hx != h.ho;
    h.hk = c->K ? tq_field_handle(c->K, b, c->parity) : NULL;
    h.hw = c->e && c->e->w ? tq_dirac_parity_handle(c->e->w, b, c->parity) : NULL;
    h.hu = c->e && c->e->u ? tq_dirac_parity_handle(c->e->u, b, c->parity) : NULL;
    h.a.epi.w_is_x = h.hw && h.hw == h.hx;
    return h;
}

/* The epilogue's handles for block b's interior (part 0) or exterior (part 1) task under
 * options opt: the scalars of its owner (tq_dirac_epilogue_scalars); a split epilogue's
 * tasks write their own partial, in peer mode also sent on to the other GPUs (psync, the
 * task's arguments'). */
static tq_epilogue_handles epilogue_handles(const hop_ctx *c, const hop_block *h, int b, int part, const tq_task_options *opt,
                                            tq_partial_sync *psync)
{
    tq_epilogue_handles eh = {h->hw, h->hu, NULL, NULL, NULL, NULL, NULL};
    if (!c->e) return eh;
    eh.scalars = tq_dirac_epilogue_scalars(c->e, opt->worker);
    eh.snapshot = c->e->snapshot;
    if (c->e->args.split) {
        eh.partial = c->e->partials ? c->e->partials[2 * b + part] : NULL;
        if (c->e->peer && eh.partial)   /* also to the other GPUs' combines */
            tq_scalars_partial_sync(c->e->sc, 2 * b + part, b, c->e->peer_n, tq_epilogue_nresults(c->e->args.kind),
                                    psync);
        eh.scratch = c->e->scratch ? c->e->scratch[2 * b + part] : NULL;
        eh.entries = c->in_parts && c->e->entries ? c->e->entries[b] : NULL;
    }
    return eh;
}

/* A peer partial across ranks: each rank's combine reads only its own blocks' partials as
 * handles and the others' through CUDA IPC, so none moves by MPI (as blas.c's). */
static void peer_partial_everywhere(const tq_dslash_wilson_args *a, const tq_epilogue_handles *eh)
{
    if (a->psync.npeer && eh->partial) tq_task_data_on_every_rank(eh->partial);
}

/* Block b's interior task, or one band of it (band, TQ_STENCIL_BANDS: no epilogue; the
 * deep band's t planes [t0, t1), all of them when equal). */
static int interior_task(const hop_ctx *c, int b, int band, int t0, int t1, starpu_data_handle_t *nbr, int nnbr)
{
    hop_block h = block_operands(c, b);
    h.a.band = band;
    h.a.band_t[0] = t0;
    h.a.band_t[1] = t1;
    h.a.epi.entries = (signed char)c->in_parts;   /* the face sites' results kept by entry */
    const tq_task_options opt = tq_internal_block_options(c->d->lat, b);
    const int q = 1 - c->parity;
    const tq_epilogue_handles eh = epilogue_handles(c, &h, b, 0, &opt, &h.a.psync);
    const int ret = tq_task_dslash_wilson_interior(&opt, &h.a, tq_dirac_parity_handle(c->in, b, q),
                                                   tq_field_handle(c->d->gauge, b, c->parity),
                                                   tq_field_handle(c->d->gauge, b, q), h.ho, h.hx, h.hk, &eh, nbr, nnbr);
    peer_partial_everywhere(&h.a, &eh);
    return ret;
}

static int hop_interior(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr)
{
    return interior_task((const hop_ctx *)ctx, b, TQ_BAND_ALL, 0, 0, nbr, nnbr);
}

static int hop_interior_band(void *ctx, int b, int band, int t0, int t1)
{
    return interior_task((const hop_ctx *)ctx, b, band, t0, t1, NULL, 0);
}

/* Block b's exterior task: from the faces (from, sync), or after an interior in place with
 * a split epilogue (in_parts): the sum of the face sites' results the interior kept, the
 * same partial as through faces. */
static int hop_exterior(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync,
                        const tq_face_sync *ahead)
{
    const hop_ctx *c = (const hop_ctx *)ctx;
    hop_block h = block_operands(c, b);
    const tq_task_options opt = tq_internal_block_options(c->d->lat, b);
    const int q = 1 - c->parity;
    tq_dslash_wilson_face_args fa;
    memset(&fa, 0, sizeof fa);
    fa.a = h.a;
    fa.a.epi.entries = (signed char)c->in_parts;
    if (!fa.a.epi.split) fa.a.epi.kind = TQ_EPI_NONE;   /* only a split epilogue has an exterior part */
    if (sync) fa.sync = *sync;
    if (ahead) {   /* the next hop's faces too (no epilogue here: tq_dslash_wilson_submit) */
        fa.pack_ahead = 1;
        fa.ahead = *ahead;
    }
    const tq_epilogue_handles eh = epilogue_handles(c, &h, b, 1, &opt, &fa.a.psync);
    const int ret = tq_task_dslash_wilson_exterior(&opt, &fa, tq_dirac_parity_handle(c->in, b, q),
                                                   tq_field_handle(c->d->gauge, b, c->parity),
                                                   tq_field_handle(c->d->gauge, b, q), h.ho, h.hx, h.hk, from, nfrom, &eh);
    peer_partial_everywhere(&fa.a, &eh);
    return ret;
}

/* TQ_DIRECT_FACES=0 (or a test, tq_internal_force_faces): blocks of one worker through
 * faces; the environment read once (-1: not yet), as every application asks */
static int faces_forced = -1;

void tq_internal_force_faces(int on) { __atomic_store_n(&faces_forced, on < 0 ? -1 : on ? 1 : 0, __ATOMIC_RELAXED); }

void tq_internal_reduction_grid_limit(int nblocks) { tq_task_dslash_reduce_blocks_limit(nblocks); }

/* Submits out = a D in (+ x), or out = a K D in (+ x) with the clover term K (a clover
 * field of the operator: the interior and exterior kernels apply it to each site's hopping
 * sum before it leaves registers), on parity `parity`, through the stencil layer
 * (core/stencil.h): per block a pack task (when the lattice is split into blocks), an
 * interior task and an exterior task; the operator's face handles are what StarPU moves
 * between the memories of the blocks' workers. */
tq_status tq_dslash_wilson_submit(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                            int parity, int dagger, double a, const tq_field *x, const tq_field *K,
                            const tq_dirac_epilogue *e, unsigned ahead)
{
    const tq_lattice *lat = d->lat;
    hop_ctx c = {.d = d, .out = out, .in = in, .x = x, .K = K, .e = e, .parity = parity};
    hopping_args(d, out, in, dagger, a, x, K, &c.base);
    if (e) c.base.epi = e->args;
    /* Blocks of one worker on one rank: each block's one task reads its neighbours' sites in
     * place (the same bits as through faces); no pack and no exterior task, so several
     * blocks on one GPU cost few more kernels than one block (TQ_DIRECT_FACES=0: faces).
     * Every precision: pack and in-place reads project a site the same way
     * (tq_load_project), so half precision gives the face path's bits too. */
    int forced = __atomic_load_n(&faces_forced, __ATOMIC_RELAXED);
    if (forced < 0) {
        const char *env = getenv("TQ_DIRECT_FACES");
        forced = env && env[0] == '0';
        __atomic_store_n(&faces_forced, forced, __ATOMIC_RELAXED);
    }
    const int in_place = d->stencil.nfaces > 0 && tq_lattice_nprocs(lat) == 1 && tq_internal_blocks_share_worker(lat) &&
                         !forced;
    /* a split epilogue sums the interior and the face sites apart, in the same two parts
     * in place as through faces, so that its partials do not depend on where the blocks run */
    const tq_stencil_mode mode = !in_place ? TQ_STENCIL_FACES
                               : e && tq_epilogue_partial(&e->args) ? TQ_STENCIL_IN_PLACE_PARTS : TQ_STENCIL_IN_PLACE;
    c.base.direct = mode != TQ_STENCIL_FACES;   /* every site, the neighbours read in place */
    c.in_parts = mode == TQ_STENCIL_IN_PLACE_PARTS;
    /* packing the next hop ahead: only an exterior without a reduction's part (its kernel
     * is the plain one) */
    if (e && (e->args.kind != TQ_EPI_NONE || c.in_parts)) ahead &= ~TQ_STENCIL_PACK_NEXT;
    /* the second hop's interior in two bands: only without a reduction (its sums would
     * take a third part) */
    if ((ahead & TQ_STENCIL_PACKED) && !(e && e->args.kind != TQ_EPI_NONE) && mode == TQ_STENCIL_FACES)
        ahead |= TQ_STENCIL_BANDS;
    const tq_stencil_ops ops = {hop_pack, hop_neighbours, hop_interior, hop_exterior, ahead, hop_interior_band};
    return tq_stencil_submit(&d->stencil, mode, &ops, &c, who);
}

static tq_status dslash_common(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                               tq_subset parity, int dagger, double a, const tq_field *x)
{
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, 1 - (int)parity, "in"));
    if (x) TQ_CHECK(tq_dirac_check_spinor(who, d, x, (int)parity, "x"));
    if (out == in && out->nparity == 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    /* one chain task per owner, as tq_dirac_mat: a hop's pack, interior and exterior pay
     * StarPU's task-to-task gap once (on two H200s a lone 32^4 hop took 0.147 ms as three
     * tasks per GPU, two hops of M_pc as one chain 0.170) */
    tq_internal_chain_begin(tq_internal_dirac_can_chain(d));
    return tq_internal_chain_end(tq_internal_dirac_can_chain(d),
                                 tq_dslash_wilson_hop(who, d, out, in, (int)parity, dagger, a, x), who);
}

tq_status tq_dslash(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity, int dagger)
{
    return dslash_common("tq_dslash", d, out, in, parity, dagger, 1.0, NULL);
}

/* The bare-kernel reference of the task-graph overhead measurement (dirac_internal.h). */
tq_status tq_internal_dslash_bare(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                  int niter, double *seconds)
{
    const char *who = "tq_internal_dslash_bare";
    if (!d || !seconds || niter <= 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: bad argument", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, 1 - (int)parity, "in"));
    if (d->lat->nblocks != 1 || tq_lattice_nprocs(d->lat) != 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: needs one block on one process (the interior kernel alone)", who);
#ifdef TQ_HAVE_CUDA
    int worker = -1;
    if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, &worker, 1) < 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: no CUDA worker", who);
    const unsigned node = starpu_worker_get_memory_node(worker);
    const int p = (int)parity, q = 1 - p;
    tq_dslash_wilson_args a;
    hopping_args(d, out, in, 0, 1.0, NULL, NULL, &a);
    block_phases(d, 0, &a);
    a.parity = p;
    /* in, gauge of both parities, out: brought to the GPU and held there while the kernels run */
    starpu_data_handle_t h[4] = {tq_dirac_parity_handle(in, 0, q), tq_field_handle(d->gauge, 0, p),
                                 tq_field_handle(d->gauge, 0, q), tq_dirac_parity_handle(out, 0, p)};
    const enum starpu_data_access_mode mode[4] = {STARPU_R, STARPU_R, STARPU_R, STARPU_W};
    void *ptr[4] = {NULL, NULL, NULL, NULL};
    int held = 0, err = -1;
    while (held < 4 && starpu_data_acquire_on_node(h[held], (int)node, mode[held]) == 0) {
        ptr[held] = starpu_data_handle_to_pointer(h[held], node);
        held++;
    }
    if (held == 4 && ptr[0] && ptr[1] && ptr[2] && ptr[3]) {
        starpu_cuda_set_device((unsigned)starpu_worker_get_devid(worker));
        err = tq_dslash_wilson_interior_bare_cuda(&a, ptr[0], ptr[1], ptr[2], NULL, ptr[3], niter, seconds);
    }
    while (held > 0) { held--; starpu_data_release_on_node(h[held], (int)node); }
    if (err) return tq_error(TQ_ERR_RUNTIME, "%s: kernel launch failed (%d)", who, err);
    return TQ_SUCCESS;
#else
    (void)niter;
    return tq_error(TQ_ERR_UNSUPPORTED, "%s: built without CUDA", who);
#endif
}

tq_status tq_dirac_dslash(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity, int dagger)
{
    const char *who = "tq_dirac_dslash";
    if (!d) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator", who);
    TQ_CHECK(tq_dirac_check_parity(who, parity));
    TQ_CHECK(tq_dirac_check_spinor(who, d, out, (int)parity, "out"));
    TQ_CHECK(tq_dirac_check_spinor(who, d, in, 1 - (int)parity, "in"));
    if (out == in && out->nparity == 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: out and in are the same field", who);
    tq_internal_chain_begin(tq_internal_dirac_can_chain(d));   /* as dslash_common */
    return tq_internal_chain_end(tq_internal_dirac_can_chain(d),
                                 tq_dslash_wilson_submit(who, d, out, in, (int)parity, dagger, 1.0, NULL,
                                                         d->clover ? d->clover_inv : NULL, NULL, 0),
                                 who);
}

tq_status tq_dslash_xpay(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger, double a, const tq_field *x)
{
    if (!x) return tq_error(TQ_ERR_INVALID_ARG, "tq_dslash_xpay: NULL x field");
    return dslash_common("tq_dslash_xpay", d, out, in, parity, dagger, a, x);
}

