/* The generic stencil layer (core/stencil.h): face buffers, block neighbours, and the order
 * of one application's tasks. */
#include "core/stencil.h"
#include "core/tq_internal.h"
#include "tq_tasks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

tq_status tq_stencil_create(const tq_lattice *lat, int depth, int prec, int reals, tq_stencil *st)
{
    memset(st, 0, sizeof *st);
    st->lat = lat;
    st->depth = depth;
    st->prec = prec;
    st->reals = reals;
    for (int mu = 0; mu < 4; mu++) {
        st->split[mu] = lat->nb[mu] > 1;   /* global block grid: rank boundaries included */
        st->nsplit += st->split[mu];
    }
    st->nfaces = 2 * st->nsplit;
    if (!st->nfaces) return TQ_SUCCESS;
    st->faces = calloc(2 * (size_t)lat->nblocks * (size_t)st->nfaces, sizeof *st->faces);
    st->turn = calloc(1, sizeof *st->turn);
    st->packed = calloc((size_t)lat->nblocks, sizeof *st->packed);
    if (!st->faces || !st->turn || !st->packed) {
        free(st->faces);
        free(st->turn);
        free(st->packed);
        st->faces = NULL;
        st->turn = NULL;
        st->packed = NULL;
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

static void peer_free(tq_stencil *st)
{
    tq_stencil_peer *pe = st->peer;
    if (!pe) return;
    if (pe->counted) ((tq_lattice *)st->lat)->peer_stencils--;
    tq_peer_memory_destroy(&pe->mem);
    free(pe->buf);
    free(pe->ready);
    free(pe->consumed);
    free(pe->all_peer);
    free(pe);
    st->peer = NULL;
}

void tq_stencil_destroy(tq_stencil *st)
{
    /* peer faces are plain device memory: freed once no task can still use them */
    if (st->peer) starpu_task_wait_for_all();
    peer_free(st);
    if (!st->faces) return;
    for (int i = 0; i < 2 * st->lat->nblocks * st->nfaces; i++) {
        tq_task_note_access(st->faces[i], STARPU_W);
        starpu_data_unregister_submit(st->faces[i]);
    }
    free(st->faces);
    free(st->turn);
    free(st->packed);
    st->faces = NULL;
    st->turn = NULL;
    st->packed = NULL;
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

#ifdef TQ_HAVE_CUDA   /* peer faces only */
/* The direction of face slot j of a block (2 per split direction: lower, upper). */
static int slot_direction(const tq_stencil *st, int j)
{
    for (int mu = 0, k = 0; mu < 4; mu++)
        if (st->split[mu] && k++ == j / 2) return mu;
    return -1;
}

/* The bytes of a face in direction mu, rounded up to 256 (each face its own aligned buffer). */
static size_t face_bytes(const tq_stencil *st, int mu)
{
    const tq_layout L = tq_layout_make(st->prec, st->reals, 1, st->depth * tq_stencil_face_sites(st, mu));
    return ((size_t)tq_layout_bytes(&L) + 255) / 256 * 256;
}
#endif

int tq_stencil_use_peer_faces(tq_stencil *st)
{
#ifndef TQ_HAVE_CUDA
    (void)st;
    return 0;
#else
    if (st->peer || !st->nfaces) return st->peer != NULL;
    const tq_lattice *lat = st->lat;
    tq_peer_units u;
    if (!tq_internal_peer_units(lat, &u)) return 0;
    const int nb = lat->nblocks, nf = st->nfaces;
    const size_t per_set = (size_t)nb * (size_t)nf;
    /* per face of one set: the unit that reads it (-1: not a peer face, both blocks on
     * one unit) and the one that writes it; per unit, the bytes of the faces it reads,
     * then its counters: 2 per_set ready (it reads), 2 per_set consumed (it writes) */
    int *reader = malloc(per_set * sizeof *reader), *writer = malloc(per_set * sizeof *writer), any = 0;
    size_t bytes[TQ_PEER_MAX] = {0}, ctr_at[TQ_PEER_MAX], face_at[TQ_PEER_MAX] = {0};
    if (!reader || !writer) {
        free(reader);
        free(writer);
        return -ENOMEM;
    }
    for (int b = 0; b < nb; b++)
        for (int j = 0; j < nf; j++) {
            const int mu = slot_direction(st, j), r = tq_stencil_neighbour(st, b, mu, j % 2 ? 1 : -1);
            const int uw = u.unit_of_block[b], ur = u.unit_of_block[r];
            reader[(size_t)b * nf + j] = uw != ur ? ur : -1;
            writer[(size_t)b * nf + j] = uw;
            if (uw == ur) continue;
            bytes[ur] += 2 * face_bytes(st, mu);
            any = 1;
        }
    int ret = 0;
    tq_stencil_peer *pe = any ? calloc(1, sizeof *pe) : NULL;
    if (any && pe) {
        pe->buf = calloc(2 * per_set, sizeof *pe->buf);
        pe->ready = calloc(2 * per_set, sizeof *pe->ready);
        pe->consumed = calloc(2 * per_set, sizeof *pe->consumed);
        pe->all_peer = calloc((size_t)nb, 1);
    }
    if (any && (!pe || !pe->buf || !pe->ready || !pe->consumed || !pe->all_peer)) ret = -ENOMEM;
    for (int b = 0; any && !ret && b < nb; b++) {
        pe->all_peer[b] = 1;
        for (int j = 0; j < nf; j++) pe->all_peer[b] &= reader[(size_t)b * nf + j] >= 0;
    }
    for (int k = 0; k < u.n; k++) {
        ctr_at[k] = bytes[k];
        bytes[k] += 4 * per_set * sizeof(uint32_t);
    }
    /* across ranks every rank takes part, whatever its own allocations gave (an agreed
     * answer: none of them then uses peer faces) */
    int made = 1;
    if (any && (!ret || u.ranks > 1)) {
        tq_peer_memory none;
        if (ret) u.self_ok = 0;
        made = tq_peer_memory_create(&u, bytes, pe && !ret ? &pe->mem : &none);
        if (made < 0 && !ret) ret = -ENOMEM;
        if (made != 0 && pe) memset(&pe->mem, 0, sizeof pe->mem);
    }
    for (size_t i = 0; any && !ret && !made && i < 2 * per_set; i++) {
        const size_t f = i % per_set;
        const int ur = reader[f], uw = writer[f];
        if (ur < 0) continue;
        const size_t at = face_at[ur];
        face_at[ur] += face_bytes(st, slot_direction(st, (int)(f % nf)));
        /* the addresses as this process's end of the face reaches them (across ranks a face
         * has at most one end here; with none, no task of this process uses it) */
        const tq_peer_memory *mem = &pe->mem;
        if (!mem->local[uw] && !mem->local[ur]) continue;
        const int here = mem->local[uw] ? uw : ur;
        pe->buf[i] = tq_peer_at(mem, ur, here) + at;
        pe->ready[i] = (uint32_t *)(tq_peer_at(mem, ur, here) + ctr_at[ur]) + i;
        pe->consumed[i] = (uint32_t *)(tq_peer_at(mem, uw, here) + ctr_at[uw]) + 2 * per_set + i;
    }
    /* each of this process's GPUs' tasks in recorded order (see tq_stencil_use_peer_faces in
     * stencil.h) */
    for (int k = 0; any && !ret && !made && k < u.n; k++)
        if (u.worker[k] >= 0) ret = tq_task_sequence_worker(u.worker[k]);
    free(reader);
    free(writer);
    st->peer = pe;
    if (!ret && !made && pe) {
        pe->counted = 1;   /* solves on this lattice may take peer partial sums (peer_partials.c) */
        ((tq_lattice *)lat)->peer_stencils++;
    }
    if (!ret && !made && u.ranks > 1 && u.self == 0) {
        static int said;
        if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
            tq_log(1, "peer mode: faces and partial sums between %d GPUs of %d ranks through CUDA IPC", u.n, u.ranks);
    }
    if (ret || made) {
        peer_free(st);
        return ret;
    }
    return any;
#endif
}

static long packs_ahead;   /* tq_internal_stencil_packs_ahead */
long tq_internal_stencil_packs_ahead(void) { return __atomic_load_n(&packs_ahead, __ATOMIC_RELAXED); }

/* The t planes [*t0, *t1) of the deep band and where its first task ends (*mid; *t1: one
 * task, the default). TQ_DEEP_EARLY=N: the first task N planes, so that the rim and the
 * exterior, ready when the first hop's exterior ends, may start at the second task's start
 * instead of after the whole band (a kernel of one wave holds every SM until it ends). On
 * two H200 it did not pay: 32^4 M_pc 0.127-0.128 ms with one task, 0.129-0.132 with 4, 7 or
 * 10 planes first; 32^3x64 0.202 against 0.203-0.215 (doc/performance.md). */
static void deep_planes(const tq_stencil *st, int *t0, int *mid, int *t1)
{
    const int T = st->lat->block[3];
    *t0 = st->split[3] ? 2 : 0;
    *t1 = st->split[3] ? T - 2 : T;
    const char *env = getenv("TQ_DEEP_EARLY");
    const int early = env && *env ? atoi(env) : 0;
    *mid = early <= 0 || early >= *t1 - *t0 ? *t1 : *t0 + early;
}

static int bands_forced = -1;   /* tq_internal_force_bands */
static long banded;             /* tq_internal_stencil_banded */
void tq_internal_force_bands(int on) { __atomic_store_n(&bands_forced, on < 0 ? -1 : on ? 1 : 0, __ATOMIC_RELAXED); }
long tq_internal_stencil_banded(void) { return __atomic_load_n(&banded, __ATOMIC_RELAXED); }

/* The order of block b's peer faces in application n: as the writer of its own faces
 * (pack: wait until their readers are done with application n - 2, which used the same
 * set; then signal n + 1) or as the reader of its neighbours' (exterior: wait for n + 1,
 * then signal it back). Returns 0 when none of them is a peer face. */
static int peer_sync(const tq_stencil *st, int b, unsigned n, int exterior, const int *dir_of_face, tq_face_sync *s)
{
    const tq_stencil_peer *pe = st->peer;
    if (!pe) return 0;
    const int nf = st->nfaces;
    const size_t set = (size_t)(n & 1) * (size_t)st->lat->nblocks * (size_t)nf;
    int any = 0;
    memset(s, 0, sizeof *s);
    for (int i = 0; i < nf; i++) {
        const int mu = dir_of_face[i], side = i % 2;
        const size_t f = set + (exterior ? (size_t)tq_stencil_neighbour(st, b, mu, side ? 1 : -1) * nf + (size_t)(i ^ 1)
                                         : (size_t)b * nf + (size_t)i);
        if (!pe->buf[f]) continue;
        any = 1;
        s->ptr[mu][side] = pe->buf[f];
        s->wait[mu][side] = exterior ? pe->ready[f] : pe->consumed[f];
        s->signal[mu][side] = exterior ? pe->consumed[f] : pe->ready[f];
    }
    s->signal_value = n + 1;
    s->wait_value = exterior ? n + 1 : n >= 2 ? n - 1 : 0;
    return any;
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

tq_status tq_stencil_submit(const tq_stencil *st, tq_stencil_mode mode, const tq_stencil_ops *ops, void *ctx,
                            const char *who)
{
    const int nb = st->lat->nblocks, nf = st->nfaces, direct = mode != TQ_STENCIL_FACES;
    int ret = 0, dir_of_face[8], nd = 0;   /* the direction of each face an exterior reads */
    /* this application's set of faces (every rank counts the same applications;
     * TQ_FACE_SETS=1: always the first, for comparisons) */
    static int one_set = -1;
    if (one_set < 0) one_set = getenv("TQ_FACE_SETS") && getenv("TQ_FACE_SETS")[0] == '1';
    starpu_data_handle_t *faces = st->faces;
    unsigned n = 0;   /* this application's number */
    if (nf && !direct && !one_set) {
        n = __atomic_fetch_add(st->turn, 1, __ATOMIC_RELAXED);
        faces += (size_t)(n & 1) * (size_t)nb * (size_t)nf;
    }
    const int peer = st->peer && !direct && !one_set;
    static int ahead_off = -1;
    if (ahead_off < 0) ahead_off = getenv("TQ_PACK_AHEAD") && getenv("TQ_PACK_AHEAD")[0] == '0';
    const int pack_next = peer && (ops->ahead & TQ_STENCIL_PACK_NEXT) && !ahead_off;
    const int packed = peer && (ops->ahead & TQ_STENCIL_PACKED);
    int bands_mode = __atomic_load_n(&bands_forced, __ATOMIC_RELAXED);
    if (bands_mode < 0) bands_mode = getenv("TQ_BANDS") && getenv("TQ_BANDS")[0] == '0' ? 0 : 2;
    int bands = (ops->ahead & TQ_STENCIL_BANDS) && ops->interior_band && !direct && nf &&
                (bands_mode == 1 || (bands_mode == 2 && peer));
    for (int mu = 0; mu < 4; mu++)
        if (st->split[mu] && st->lat->block[mu] < 6) bands = 0;   /* a deep band needs 2 planes */
    for (int mu = 0; mu < 4; mu++)
        if (st->split[mu]) dir_of_face[nd++] = mu, dir_of_face[nd++] = mu;
    /* faces first: they gate the neighbours' exterior work (unless the previous
     * application's exterior packed them) */
    for (int b = 0; b < nb && nf && !direct && !ret; b++) {
        if (packed && st->packed[b] == n + 1) continue;
        tq_face_sync sync;
        starpu_data_handle_t mine[8];
        memcpy(mine, faces + (size_t)b * nf, (size_t)nf * sizeof *mine);
        const int has_peer = peer && peer_sync(st, b, n, 0, dir_of_face, &sync);
        for (int i = 0; i < nf && has_peer; i++)
            if (sync.ptr[dir_of_face[i]][i % 2]) mine[i] = NULL;
        ret = ops->pack(ctx, b, mine, has_peer ? &sync : NULL);
    }
    /* faces read on another rank leave as soon as they are packed: posted at the reader's
     * exterior, a send waited for the chain of the pack and the sender's interior
     * (48^4 Wilson M_pc on two ranks of two H200: 3.55 ms, 2.29 without chains) */
    for (int b = 0; b < nb && nf && !direct && !ret; b++) {
        const tq_task_options mine = tq_internal_block_options(st->lat, b);
        for (int i = 0; i < nf && !ret; i++) {
            /* face i of block b comes from the neighbour below (even i: its upper face,
             * slot i + 1) or above (odd i: its lower face, slot i - 1) */
            const int from_block = tq_stencil_neighbour(st, b, dir_of_face[i], i % 2 ? 1 : -1);
            const size_t f = (size_t)from_block * nf + (size_t)(i ^ 1);
            if (peer && st->peer->buf[(size_t)(n & 1) * (size_t)nb * (size_t)nf + f]) continue;   /* through CUDA IPC */
            if (tq_block_rank(st->lat, from_block) != mine.rank && mine.rank >= 0)
                ret = tq_task_transfer(&mine, faces[f]);
        }
    }
    for (int b = 0; b < nb && !ret; b++) {
        starpu_data_handle_t nbr[4 * TQ_STENCIL_MAX_NEIGHBOURS];
        int nn = 0;
        for (int mu = 0; mu < 4 && direct; mu++)
            if (st->split[mu])
                nn += ops->neighbours(ctx, b, mu, tq_stencil_neighbour(st, b, mu, -1), tq_stencil_neighbour(st, b, mu, 1),
                                      nbr + nn);
        int t0 = 0, mid = 0, t1 = 0;
        if (bands) {
            __atomic_fetch_add(&banded, 1, __ATOMIC_RELAXED);
            deep_planes(st, &t0, &mid, &t1);
            ret = ops->interior_band(ctx, b, TQ_BAND_DEEP, t0, mid);
            if (!ret) ret = ops->interior_band(ctx, b, TQ_BAND_RIM, 0, 0);
        } else {
            ret = ops->interior(ctx, b, nbr, nn);
        }
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
        tq_face_sync sync, ahead;
        const int has_peer = peer && peer_sync(st, b, n, 1, dir_of_face, &sync);
        for (int i = 0; i < nf && has_peer; i++)
            if (sync.ptr[dir_of_face[i]][i % 2]) from[i] = NULL;
        /* the next application's faces of this block, packed by this exterior: as that
         * application's pack would, with its set and order */
        const int ahead_here = pack_next && st->peer->all_peer[b];
        if (ahead_here) {
            peer_sync(st, b, n + 1, 0, dir_of_face, &ahead);
            __atomic_fetch_add(&packs_ahead, 1, __ATOMIC_RELAXED);
        }
        st->packed[b] = ahead_here ? n + 2 : 0;
        ret = ops->exterior(ctx, b, from, nf, has_peer ? &sync : NULL, ahead_here ? &ahead : NULL);
        if (!ret && bands && mid < t1) ret = ops->interior_band(ctx, b, TQ_BAND_DEEP, mid, t1);
        /* faces from another owner or rank start towards this block's owner as soon as
         * they are packed, not when its exterior is let go after its interior (their
         * transfer would then stand between the two) */
        const tq_task_options mine = tq_internal_block_options(st->lat, b);
        for (int i = 0; i < nf && !ret; i++) {
            const int mu = dir_of_face[i], from_block = tq_stencil_neighbour(st, b, mu, i % 2 ? 1 : -1);
            const tq_task_options theirs = tq_internal_block_options(st->lat, from_block);
            if (from[i] && (theirs.worker != mine.worker || theirs.rank != mine.rank) &&
                prefetch_face(starpu_data_get_size(from[i]), theirs.rank != mine.rank))
                ret = tq_task_prefetch(&mine, from[i]);
        }
    }
    /* in place with parts: each block's exterior task (what its interior kept apart) after
     * every interior, so that a chain runs the interiors side by side */
    for (int b = 0; b < nb && nf && mode == TQ_STENCIL_IN_PLACE_PARTS && !ret; b++)
        ret = ops->exterior(ctx, b, NULL, 0, NULL, NULL);
    return ret ? tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret) : TQ_SUCCESS;
}
