/* The Wilson hopping term D (dslash) as a task graph: per block a pack task for the faces
 * its neighbours read, an interior task and an exterior task (codelets/dslash_wilson.c),
 * with the clover term and a solver's reduction fusable into the kernels; the public
 * dslash entry points and the bare-kernel timing reference. */
#include "dirac/dirac_impl.h"

#include <stdlib.h>
#include <string.h>

/* The arguments every task of one hopping-term application shares (the fields' layouts,
 * block extents, split directions); returns the number of split directions. */
static int hopping_args(const tq_dirac *d, const tq_field *out, const tq_field *in, int dagger, double a,
                        const tq_field *x, const tq_field *K, tq_dslash_wilson_args *base)
{
    const tq_lattice *lat = d->lat;
    memset(base, 0, sizeof *base);
    int nsplit = 0;
    for (int mu = 0; mu < 4; mu++) {
        base->B[mu] = lat->block[mu];
        base->split[mu] = lat->nb[mu] > 1;   /* global block grid: rank boundaries included */
        nsplit += base->split[mu];
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
        base->L_face[mu] = tq_layout_make((int)in->p.prec, 12, 1, tq_face_sites(base->B, mu));
    return nsplit;
}

/* Block b's coordinates in the block grid, and the boundary phases of its hops. */
static void block_phases(const tq_dirac *d, int b, tq_dslash_wilson_args *ia, int bcoord[4])
{
    const tq_lattice *lat = d->lat;
    tq_block_grid_coords(lat, b, bcoord);
    for (int mu = 0; mu < 4; mu++) {
        int lo = bcoord[mu] == 0;
        int hi = bcoord[mu] == lat->nb[mu] - 1;
        ia->phase_lo[mu] = lo ? d->p.bc[mu] : 1.0;
        ia->phase_hi[mu] = hi ? d->p.bc[mu] : 1.0;
    }
}

/* The block one step (step = -1 below, +1 above, periodic) from block b at bcoord in mu. */
static int block_step(const tq_lattice *lat, int b, const int bcoord[4], int mu, int step)
{
    int stride = 1;
    for (int nu = 0; nu < mu; nu++) stride *= lat->nb[nu];
    return b + ((bcoord[mu] + lat->nb[mu] + step) % lat->nb[mu] - bcoord[mu]) * stride;
}

/* Submits out = a D in (+ x), or out = a K D in (+ x) with the clover term K (a clover
 * field of the operator: the interior and exterior kernels apply it to each site's hopping
 * sum before it leaves registers), on parity `parity`: per block a pack task (when the
 * lattice is split into blocks), an interior task and an exterior task; the operator's
 * face handles are what StarPU moves between the memories of the blocks' workers. */
tq_status tq_dslash_wilson_submit(const char *who, const tq_dirac *d, tq_field *out, const tq_field *in,
                            int parity, int dagger, double a, const tq_field *x, const tq_field *K,
                            const tq_dirac_epilogue *e)
{
    const tq_lattice *lat = d->lat;
    const int q = 1 - parity;
    tq_dslash_wilson_args base;
    const int nsplit = hopping_args(d, out, in, dagger, a, x, K, &base);
    if (e) base.epi = e->args;

    const int nb = lat->nblocks, nf = 2 * nsplit;
    starpu_data_handle_t *faces = d->faces;
    tq_status st = TQ_SUCCESS;
    int ret = 0;
    /* Blocks of one worker on one rank: each block's one task reads its neighbours' sites in
     * place (the same bits as through faces); no pack and no exterior task, so several
     * blocks on one GPU cost few more kernels than one block (TQ_DIRECT_FACES=0: faces).
     * Double and single only: in half precision the GPU's rounding of a neighbour's site
     * computed in place differed from its face's in the last bits (H100, 93a54ce+). */
    static int faces_forced = -1;   /* the environment read once: every application asks */
    int forced = __atomic_load_n(&faces_forced, __ATOMIC_RELAXED);
    if (forced < 0) {
        const char *env = getenv("TQ_DIRECT_FACES");
        forced = env && env[0] == '0';
        __atomic_store_n(&faces_forced, forced, __ATOMIC_RELAXED);
    }
    base.direct = nf > 0 && in->p.prec != TQ_HALF && lat->procs[0] * lat->procs[1] * lat->procs[2] * lat->procs[3] == 1 &&
                  tq_internal_blocks_share_worker(lat) && !forced;
    /* faces first: they gate the neighbours' exterior work */
    for (int b = 0; b < nb && nf && !base.direct && !ret; b++) {
        tq_dslash_wilson_args pa = base;
        pa.parity = q;
        const tq_task_options opt = tq_internal_block_options(lat, b);
        ret = tq_task_dslash_wilson_pack(&opt, &pa, tq_dirac_parity_handle(in, b, q), tq_field_handle(d->gauge, b, q),
                                  faces + (size_t)b * nf, nf);
    }
    for (int b = 0; b < nb && !ret; b++) {
        tq_dslash_wilson_args ia = base;
        ia.parity = parity;
        int bcoord[4];
        block_phases(d, b, &ia, bcoord);
        starpu_data_handle_t ho = tq_dirac_parity_handle(out, b, parity);
        starpu_data_handle_t hx = x ? (x == out ? ho : tq_dirac_parity_handle(x, b, parity)) : NULL;
        ia.x_separate = hx && hx != ho;
        starpu_data_handle_t hk = K ? tq_field_handle(K, b, parity) : NULL;
        starpu_data_handle_t hw = e && e->w ? tq_dirac_parity_handle(e->w, b, parity) : NULL;
        starpu_data_handle_t hu = e && e->u ? tq_dirac_parity_handle(e->u, b, parity) : NULL;
        ia.epi.w_is_x = hw && hw == hx;
        const tq_task_options opt = tq_internal_block_options(lat, b);
        starpu_data_handle_t nbr[12];
        int nn = 0;
        for (int mu = 0; mu < 4 && base.direct; mu++) {
            if (!base.split[mu]) continue;
            nbr[nn++] = tq_dirac_parity_handle(in, block_step(lat, b, bcoord, mu, -1), q);
            nbr[nn++] = tq_field_handle(d->gauge, block_step(lat, b, bcoord, mu, -1), q);
            nbr[nn++] = tq_dirac_parity_handle(in, block_step(lat, b, bcoord, mu, 1), q);
        }
        ret = tq_task_dslash_wilson_interior(&opt, &ia, tq_dirac_parity_handle(in, b, q), tq_field_handle(d->gauge, b, parity),
                                      tq_field_handle(d->gauge, b, q), ho, hx, hk, hw, hu, e ? e->scalars : NULL,
                                      e ? e->snapshot : NULL, nbr, nn);
        if (ret || !nf || base.direct) continue;
        /* the faces this block reads: from the block below (its upper face) and from the
         * block above (its lower face), per split direction */
        starpu_data_handle_t from[8];
        int k = 0, slot = 0;
        for (int mu = 0; mu < 4; mu++) {
            if (!base.split[mu]) continue;
            from[k++] = faces[(size_t)block_step(lat, b, bcoord, mu, -1) * nf + slot + 1];
            from[k++] = faces[(size_t)block_step(lat, b, bcoord, mu, 1) * nf + slot];
            slot += 2;
        }
        ret = tq_task_dslash_wilson_exterior(&opt, &ia, tq_dirac_parity_handle(in, b, q), tq_field_handle(d->gauge, b, parity),
                                      tq_field_handle(d->gauge, b, q), ho, hx, hk, from, nf);
    }
    if (ret) st = tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    return st;
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
    return tq_dslash_wilson_hop(who, d, out, in, (int)parity, dagger, a, x);
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
    if (d->lat->nblocks != 1 || d->lat->procs[0] * d->lat->procs[1] * d->lat->procs[2] * d->lat->procs[3] != 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: needs one block on one process (the interior kernel alone)", who);
#ifdef TQ_HAVE_CUDA
    int worker = -1;
    if (starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, &worker, 1) < 1)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: no CUDA worker", who);
    const unsigned node = starpu_worker_get_memory_node(worker);
    const int p = (int)parity, q = 1 - p;
    tq_dslash_wilson_args a;
    hopping_args(d, out, in, 0, 1.0, NULL, NULL, &a);
    int bcoord[4];
    block_phases(d, 0, &a, bcoord);
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
    return tq_dslash_wilson_submit(who, d, out, in, (int)parity, dagger, 1.0, NULL, d->clover ? d->clover_inv : NULL, NULL);
}

tq_status tq_dslash_xpay(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger, double a, const tq_field *x)
{
    if (!x) return tq_error(TQ_ERR_INVALID_ARG, "tq_dslash_xpay: NULL x field");
    return dslash_common("tq_dslash_xpay", d, out, in, parity, dagger, a, x);
}

