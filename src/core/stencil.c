/* The generic stencil layer (core/stencil.h): face buffers, block neighbours, and the order
 * of one application's tasks. */
#include "core/stencil.h"

#include <stdlib.h>
#include <string.h>

tq_status tq_stencil_create(const tq_lattice *lat, int depth, int prec, int reals, tq_stencil *st)
{
    memset(st, 0, sizeof *st);
    st->lat = lat;
    st->depth = depth;
    for (int mu = 0; mu < 4; mu++) {
        st->split[mu] = lat->nb[mu] > 1;   /* global block grid: rank boundaries included */
        st->nsplit += st->split[mu];
    }
    st->nfaces = 2 * st->nsplit;
    if (!st->nfaces) return TQ_SUCCESS;
    st->faces = calloc(2 * (size_t)lat->nblocks * (size_t)st->nfaces, sizeof *st->faces);
    st->turn = calloc(1, sizeof *st->turn);
    if (!st->faces || !st->turn) {
        free(st->faces);
        free(st->turn);
        st->faces = NULL;
        st->turn = NULL;
        return tq_error(TQ_ERR_NOMEM, "stencil: out of memory for %d blocks' faces", lat->nblocks);
    }
    for (int b = 0; b < 2 * lat->nblocks; b++) {
        int k = 0;
        for (int mu = 0; mu < 4; mu++) {
            if (!st->split[mu]) continue;
            const tq_layout L = tq_layout_make(prec, reals, 1, depth * tq_stencil_face_sites(st, mu));
            const size_t site_bytes = (size_t)(tq_layout_bytes(&L) / L.stride);
            for (int side = 0; side < 2; side++)
                starpu_vector_data_register(&st->faces[b * st->nfaces + k++], -1, 0, (uint32_t)L.stride, site_bytes);
        }
    }
    return TQ_SUCCESS;
}

void tq_stencil_destroy(tq_stencil *st)
{
    if (!st->faces) return;
    for (int i = 0; i < 2 * st->lat->nblocks * st->nfaces; i++) starpu_data_unregister_submit(st->faces[i]);
    free(st->faces);
    free(st->turn);
    st->faces = NULL;
    st->turn = NULL;
}

int64_t tq_stencil_face_sites(const tq_stencil *st, int mu)
{
    const int *B = st->lat->block;
    return (int64_t)B[0] * B[1] * B[2] * B[3] / B[mu] / 2;
}

int tq_stencil_neighbour(const tq_stencil *st, int b, int mu, int step)
{
    const tq_lattice *lat = st->lat;
    int bc[4], stride = 1;
    tq_block_grid_coords(lat, b, bc);
    for (int nu = 0; nu < mu; nu++) stride *= lat->nb[nu];
    return b + ((bc[mu] + lat->nb[mu] + step) % lat->nb[mu] - bc[mu]) * stride;
}

int tq_stencil_at_boundary(const tq_stencil *st, int b, int mu, int side)
{
    int bc[4];
    tq_block_grid_coords(st->lat, b, bc);
    return side ? bc[mu] == st->lat->nb[mu] - 1 : bc[mu] == 0;
}

/* Whether a face of `bytes` goes on to its reader's memory as soon as it is packed
 * (tq_task_prefetch) rather than when the reader's exterior starts. Each such move costs
 * StarPU two bookkeeping tasks (an acquire's pre- and post-sync tasks), so it pays only
 * where the transfer itself is long: on two H100s (NVLink), 64^4 Wilson M_pc took 2.586 /
 * 1.598 ms single / half with it and 2.769 / 1.737 without (faces 6.3 / 3.7 MB), but 32^4
 * took 0.392 / 0.554 with it and 0.349 / 0.308 without (faces 0.79 / 0.46 MB). Faces from
 * another rank only with TQ_FACE_PREFETCH=ranks: they reach host memory through
 * StarPU-MPI first, and two ranks on two H100s took 11.8 / 5.3 ms per 64^4 M_pc with them
 * against 10.3 / 4.4 without. TQ_FACE_PREFETCH=0: never, 1: every face of this process. */
static int prefetch_face(size_t bytes, int other_rank)
{
    static int mode = -1;
    if (mode < 0) {
        const char *env = getenv("TQ_FACE_PREFETCH");
        mode = env && env[0] == '0' ? 0 : env && env[0] == '1' ? 1 : env && !strcmp(env, "ranks") ? 3 : 2;
    }
    if (other_rank && mode != 3) return 0;
    return mode == 1 || (mode >= 2 && bytes >= ((size_t)1 << 20));
}

tq_status tq_stencil_submit(const tq_stencil *st, int direct, const tq_stencil_ops *ops, void *ctx, const char *who)
{
    const int nb = st->lat->nblocks, nf = st->nfaces;
    int ret = 0, dir_of_face[8], nd = 0;   /* the direction of each face an exterior reads */
    /* this application's set of faces (every rank counts the same applications;
     * TQ_FACE_SETS=1: always the first, for comparisons) */
    static int one_set = -1;
    if (one_set < 0) one_set = getenv("TQ_FACE_SETS") && getenv("TQ_FACE_SETS")[0] == '1';
    starpu_data_handle_t *faces = st->faces;
    if (nf && !direct && !one_set)
        faces += (size_t)(__atomic_fetch_add(st->turn, 1, __ATOMIC_RELAXED) & 1) * (size_t)nb * (size_t)nf;
    for (int mu = 0; mu < 4; mu++)
        if (st->split[mu]) dir_of_face[nd++] = mu, dir_of_face[nd++] = mu;
    /* faces first: they gate the neighbours' exterior work */
    for (int b = 0; b < nb && nf && !direct && !ret; b++) ret = ops->pack(ctx, b, faces + (size_t)b * nf);
    /* faces read on another rank leave as soon as they are packed: posted at the reader's
     * exterior, a send waited for the chain of the pack and the sender's interior
     * (48^4 Wilson M_pc on two ranks of two H200: 3.55 ms, 2.29 without chains) */
    for (int b = 0; b < nb && nf && !direct && !ret; b++) {
        const tq_task_options mine = tq_internal_block_options(st->lat, b);
        for (int i = 0; i < nf && !ret; i++) {
            /* face i of block b comes from the neighbour below (even i: its upper face,
             * slot i + 1) or above (odd i: its lower face, slot i - 1) */
            const int from_block = tq_stencil_neighbour(st, b, dir_of_face[i], i % 2 ? 1 : -1);
            if (tq_block_rank(st->lat, from_block) != mine.rank && mine.rank >= 0)
                ret = tq_task_transfer(&mine, faces[(size_t)from_block * nf + (i ^ 1)]);
        }
    }
    for (int b = 0; b < nb && !ret; b++) {
        starpu_data_handle_t nbr[4 * TQ_STENCIL_MAX_NEIGHBOURS];
        int nn = 0;
        for (int mu = 0; mu < 4 && direct; mu++)
            if (st->split[mu])
                nn += ops->neighbours(ctx, b, mu, tq_stencil_neighbour(st, b, mu, -1), tq_stencil_neighbour(st, b, mu, 1),
                                      nbr + nn);
        ret = ops->interior(ctx, b, nbr, nn);
        if (ret || !nf || direct) continue;
        /* the faces this block reads: from the block below (its upper face) and from the
         * block above (its lower face), per split direction */
        starpu_data_handle_t from[8];
        int k = 0, slot = 0;
        for (int mu = 0; mu < 4; mu++) {
            if (!st->split[mu]) continue;
            from[k++] = faces[(size_t)tq_stencil_neighbour(st, b, mu, -1) * nf + slot + 1];
            from[k++] = faces[(size_t)tq_stencil_neighbour(st, b, mu, 1) * nf + slot];
            slot += 2;
        }
        ret = ops->exterior(ctx, b, from, nf);
        /* faces from another owner or rank start towards this block's owner as soon as
         * they are packed, not when its exterior is let go after its interior (their
         * transfer would then stand between the two) */
        const tq_task_options mine = tq_internal_block_options(st->lat, b);
        for (int i = 0; i < nf && !ret; i++) {
            const int mu = dir_of_face[i], from_block = tq_stencil_neighbour(st, b, mu, i % 2 ? 1 : -1);
            const tq_task_options theirs = tq_internal_block_options(st->lat, from_block);
            if ((theirs.worker != mine.worker || theirs.rank != mine.rank) &&
                prefetch_face(starpu_data_get_size(from[i]), theirs.rank != mine.rank))
                ret = tq_task_prefetch(&mine, from[i]);
        }
    }
    return ret ? tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret) : TQ_SUCCESS;
}
