/* The quenched generator: pure-gauge Wilson action, Cabibbo-Marinari heat bath and
 * overrelaxation sweeps as task graphs (codelets/heatbath.c, kernels/heatbath_site.h).
 * A sweep is 8 sub-steps (parity, then direction); each sub-step updates one of the 8 link
 * fields one task per block, reading the other 7 fields' links in its block and in the
 * layers next to it; after each sub-step one pack task per block copies the updated
 * field's boundary layers into faces, which the neighbour blocks' tasks read.
 *
 * The links lie on a lattice's blocks (core/field_internal.h: the rank grid, blocks of even
 * extents, each block's owner: a rank and, inside it, a GPU or CPU workers) and their faces
 * are the stencil layer's (core/stencil.h, one stencil per field, depth one layer, 18
 * doubles a site stored together, as the links are), as for the Dirac operators: one
 * decomposition and one halo mechanism.
 * Every rank submits every block's tasks; tasks/submit.c runs each on its block's rank and
 * moves faces between ranks as any task input. The measurement needs no block but its own
 * and its upper faces: each block's Polyakov lines are multiplied together along t, column
 * by column, and the per-block sums are added in block order on every rank, so the results
 * are the same bits on any number of ranks for one block decomposition; the links
 * themselves are the same bits for any decomposition. */
#include "core/tq_internal.h"
#include "core/field_internal.h"
#include "core/placement.h"
#include "core/rng.h"
#include "core/stencil.h"

#include <stdlib.h>
#include <string.h>

/* default blocks along t: at most this many in all */
#define TQ_GENERATOR_MAX_DEFAULT_BLOCKS 16

struct tq_generator {
    int dims[4];
    tq_generator_params p;
    tq_lattice *lat;
    tq_stencil faces[8];               /* per field: its blocks' faces (the first set) */
    int nfaces;                        /* faces per block and field */
    int ncols;                         /* columns of blocks along t: the Polyakov lines' */
    starpu_data_handle_t *fields[8];   /* [field][block] */
    starpu_data_handle_t *refused;     /* [block] */
    starpu_data_handle_t *measured;    /* [block]: the measurement tasks' results */
    starpu_data_handle_t *lines;       /* [block]: Polyakov lines (products of the time links) */
    starpu_data_handle_t *poly;        /* [column]: the Polyakov loops' sums */
    uint64_t sweeps;                   /* heat-bath sweeps done (the random stream's sweep word) */
};

void tq_generator_params_default(tq_generator_params *p)
{
    memset(p, 0, sizeof *p);
    p->beta = 6.0;
    p->seed = 1;
}

static void unregister_all(starpu_data_handle_t *h, int n)
{
    for (int i = 0; h && i < n; i++)
        if (h[i]) starpu_data_unregister(h[i]);
    free(h);
}

static void generator_free(tq_generator *g)
{
    if (!g) return;
    const int nb = g->lat ? g->lat->nblocks : 0;
    for (int f = 0; f < 8; f++) {
        unregister_all(g->fields[f], nb);
        if (g->faces[f].lat) tq_stencil_destroy(&g->faces[f]);
    }
    unregister_all(g->refused, nb);
    unregister_all(g->measured, nb);
    unregister_all(g->lines, nb);
    unregister_all(g->poly, g->ncols);
    tq_lattice_destroy(g->lat);
    free(g);
}

void tq_generator_destroy(tq_generator *g) { generator_free(g); }

/* The generator's blocks: p->block, or p->nslab blocks of whole time slices along t (each
 * spanning its rank's part in x, y, z), or by default blocks of whole time slices, one per
 * GPU when the tasks may go to GPUs (a large block keeps a GPU busy, and every task costs
 * scheduling time: with 16 blocks a 32^4 sweep took 3.8x longer on an H200), otherwise at
 * least one per CPU worker (at most 16 in all), each an even number of slices, cut in z, y
 * and x too where the slabs are too few. */
static tq_status choose_lattice(const int dims[4], const tq_generator_params *p, tq_lattice **out, const char *who)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    memcpy(lp.procs, p->procs, sizeof lp.procs);
    const int block_given = p->block[0] || p->block[1] || p->block[2] || p->block[3];
    if (block_given && p->nslab)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: give either the block extent or the number of slabs (nslab), not both", who);
    if (block_given) {
        memcpy(lp.block, p->block, sizeof lp.block);
        return tq_lattice_create(&lp, out);
    }
    /* the rank grid first (blocks of the lattice's choice), then the blocks in a rank's part */
    tq_lattice *probe = NULL;
    TQ_CHECK(tq_lattice_create(&lp, &probe));
    int local[4], nprocs_t = probe->procs[3], nranks = tq_lattice_nprocs(probe);
    memcpy(local, probe->local, sizeof local);
    memcpy(lp.procs, probe->procs, sizeof lp.procs);
    tq_lattice_destroy(probe);
    memcpy(lp.block, local, sizeof lp.block);
    if (p->nslab) {
        if (dims[3] % p->nslab)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: %d slabs do not divide the %d time slices (a slab is whole time "
                            "slices)", who, p->nslab, dims[3]);
        if (p->nslab % nprocs_t)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: %d slabs do not split over the %d ranks along t (each holds whole "
                            "slabs, as many as the others)", who, p->nslab, nprocs_t);
        lp.block[3] = dims[3] / p->nslab;
        return tq_lattice_create(&lp, out);
    }
    const tq_where w = tq_get_placement();
    const int ncuda = (int)starpu_cuda_worker_get_count();
    int want = w != TQ_WHERE_CPU && ncuda > 0 ? ncuda : (int)starpu_cpu_worker_get_count();
    const int limit = TQ_GENERATOR_MAX_DEFAULT_BLOCKS / nranks > 0 ? TQ_GENERATOR_MAX_DEFAULT_BLOCKS / nranks : 1;
    if (want > limit) want = limit;
    if (want < 1) want = 1;
    int k;   /* blocks along t per rank: an even number of slices each */
    for (k = want; k <= limit && local[3] % (2 * k); k++) {}
    if (k > limit)
        for (k = want; k > 1 && local[3] % (2 * k); k--) {}
    lp.block[3] = local[3] / k;
    /* too few slabs for the workers (an odd number of slices per slab is not allowed): halve
     * z, then y and x, while the halves stay even */
    for (int d = 2, n = k; d >= 0 && n < want; d--)
        for (; n < want && lp.block[d] % 4 == 0; n *= 2) lp.block[d] /= 2;
    return tq_lattice_create(&lp, out);
}

/* The arguments every task on block b shares: geometry. */
static tq_heatbath_args block_args(const tq_generator *g, int b)
{
    tq_heatbath_args a;
    memset(&a, 0, sizeof a);
    const tq_lattice *lat = g->lat;
    int bc[4];
    tq_block_grid_coords(lat, b, bc);
    memcpy(a.dims, g->dims, sizeof a.dims);
    memcpy(a.block, lat->block, sizeof a.block);
    for (int mu = 0; mu < 4; mu++) {
        a.origin[mu] = bc[mu] * lat->block[mu];
        a.split[mu] = lat->nb[mu] > 1;
    }
    a.block_cb = lat->block_cb;
    return a;
}

/* Block b's face handle of field f in direction d: its lower (side 0) or upper (1) one. */
static starpu_data_handle_t face_of(const tq_generator *g, int f, int b, int d, int side)
{
    const tq_stencil *st = &g->faces[f];
    int k = 0;
    for (int nu = 0; nu < d; nu++) k += st->split[nu];
    return st->faces[(size_t)b * st->nfaces + 2 * k + side];
}

/* The handles the tasks of block b read; edges for the sub-step of direction mu. */
static void block_handles(const tq_generator *g, int b, int mu, tq_generator_handles *h)
{
    memset(h, 0, sizeof *h);
    const tq_stencil *st = &g->faces[0];
    for (int f = 0; f < 8; f++) {
        h->own[f] = g->fields[f][b];
        for (int d = 0; d < 4; d++) {
            if (!st->split[d]) continue;
            h->face[f][d][0] = face_of(g, f, tq_stencil_neighbour(st, b, d, -1), d, 1);
            h->face[f][d][1] = face_of(g, f, tq_stencil_neighbour(st, b, d, 1), d, 0);
            if (d != mu && st->split[mu])
                h->edge[f][d] = face_of(g, f, tq_stencil_neighbour(st, tq_stencil_neighbour(st, b, mu, 1), d, -1), d, 1);
        }
    }
}

tq_status tq_generator_create(const int dims[4], const tq_generator_params *p, tq_generator **out)
{
    const char *who = "tq_generator_create";
    if (!out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL output pointer", who);
    *out = NULL;
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "%s: call tq_init first", who);
    if (!dims || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    for (int mu = 0; mu < 4; mu++)
        if (dims[mu] < 2 || dims[mu] % 2)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: dimension %d is %d (must be even and at least 2: the sweep is a "
                            "checkerboard)", who, mu, dims[mu]);
    if (!(p->beta > 0.0) || p->beta > 1e6) return tq_error(TQ_ERR_INVALID_ARG, "%s: beta must be positive (got %g)", who, p->beta);
    if (p->nslab < 0) return tq_error(TQ_ERR_INVALID_ARG, "%s: nslab is %d (must be >= 0)", who, p->nslab);
    tq_generator *g = calloc(1, sizeof *g);
    if (!g) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    memcpy(g->dims, dims, sizeof g->dims);
    g->p = *p;
    tq_status st = choose_lattice(dims, p, &g->lat, who);
    if (st != TQ_SUCCESS) { free(g); return st; }
    const tq_lattice *lat = g->lat;
    const int nb = lat->nblocks;
    g->ncols = lat->nb[0] * lat->nb[1] * lat->nb[2];
    for (int f = 0; f < 8 && st == TQ_SUCCESS; f++) {
        g->fields[f] = calloc((size_t)nb, sizeof *g->fields[f]);
        if (!g->fields[f]) { st = tq_error(TQ_ERR_NOMEM, "%s: out of memory", who); break; }
        for (int b = 0; b < nb; b++)
            starpu_vector_data_register(&g->fields[f][b], -1, 0, (uint32_t)(lat->block_cb * 18), sizeof(double));
        st = tq_stencil_create(lat, 1, 8, 18, &g->faces[f]);
    }
    g->nfaces = g->faces[0].nfaces;
    g->refused = calloc((size_t)nb, sizeof *g->refused);
    g->measured = calloc((size_t)nb, sizeof *g->measured);
    g->lines = calloc((size_t)nb, sizeof *g->lines);
    g->poly = calloc((size_t)g->ncols, sizeof *g->poly);
    if (st == TQ_SUCCESS && (!g->refused || !g->measured || !g->lines || !g->poly))
        st = tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    const int64_t slice = tq_measure_slice_sites(lat->block);
    for (int b = 0; b < nb && st == TQ_SUCCESS; b++) {
        starpu_vector_data_register(&g->refused[b], -1, 0, 1, sizeof(uint64_t));
        starpu_vector_data_register(&g->measured[b], -1, 0, (uint32_t)tq_measure_result_len(2 * lat->block_cb), sizeof(double));
        starpu_vector_data_register(&g->lines[b], -1, 0, (uint32_t)(slice * 18), sizeof(double));
    }
    for (int c = 0; c < g->ncols && st == TQ_SUCCESS; c++)
        starpu_vector_data_register(&g->poly[c], -1, 0, (uint32_t)tq_measure_result_len(slice), sizeof(double));
    /* cold start; refusal counters at 0 */
    tq_host_gauge h = {{0}, NULL};
    if (st == TQ_SUCCESS) st = tq_host_gauge_alloc(&h, lat->local);
    if (st == TQ_SUCCESS) st = tq_host_gauge_unit(&h);
    if (st == TQ_SUCCESS) st = tq_generator_import(g, &h);
    tq_host_gauge_free(&h);
    for (int b = 0; b < nb && st == TQ_SUCCESS; b++) {
        tq_task_data_written_on(g->refused[b], tq_block_global_rank(lat, b));
        if (!tq_block_is_local(lat, b)) continue;
        if (starpu_data_acquire(g->refused[b], STARPU_W)) st = tq_error(TQ_ERR_RUNTIME, "%s: StarPU acquire failed", who);
        else {
            *(uint64_t *)starpu_data_get_local_ptr(g->refused[b]) = 0;
            starpu_data_release(g->refused[b]);
        }
    }
    if (st != TQ_SUCCESS) { generator_free(g); return st; }
    *out = g;
    return TQ_SUCCESS;
}

int tq_generator_slabs(const tq_generator *g) { return g ? g->lat->nblocks : 0; }

const tq_lattice *tq_generator_lattice(const tq_generator *g) { return g ? g->lat : NULL; }

tq_status tq_generator_local_dims(const tq_generator *g, int local[4], int offset[4])
{
    if (!g || !local) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_local_dims: NULL argument");
    memcpy(local, g->lat->local, sizeof g->lat->local);
    for (int mu = 0; offset && mu < 4; mu++) offset[mu] = g->lat->coords[mu] * g->lat->local[mu];
    return TQ_SUCCESS;
}

uint64_t tq_generator_sweeps(const tq_generator *g) { return g ? g->sweeps : 0; }

tq_status tq_generator_set_sweeps(tq_generator *g, uint64_t sweeps)
{
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_set_sweeps: NULL generator");
    /* TQ_HB_MAX_SWEEP + 1: the count after the last sweep one seed allows */
    if (sweeps > (uint64_t)TQ_HB_MAX_SWEEP + 1)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_set_sweeps: %llu sweeps (at most %llu with one seed)",
                        (unsigned long long)sweeps, (unsigned long long)TQ_HB_MAX_SWEEP + 1);
    g->sweeps = sweeps;
    return TQ_SUCCESS;
}

/* Submits the face packing of fields f .. fmax - 1 after they changed. */
static tq_status pack_faces(tq_generator *g, int f, int fmax, const char *who)
{
    if (!g->nfaces) return TQ_SUCCESS;
    for (; f < fmax; f++)
        for (int b = 0; b < g->lat->nblocks; b++) {
            tq_heatbath_args a = block_args(g, b);
            a.parity = f % 2;
            const tq_task_options opt = tq_internal_block_options(g->lat, b);
            int ret = tq_task_gauge_face_pack(&opt, &a, g->fields[f][b], g->faces[f].faces + (size_t)b * g->nfaces, g->nfaces);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    return TQ_SUCCESS;
}

/* Visits the links of this rank's blocks: host_in -> storage (import) or storage -> host_out
 * (export); the host array has the sites of the box hd (x fastest) at ho in the lattice. */
static tq_status transfer(tq_generator *g, double *host_out, const double *host_in, const int hd[4], const int ho[4])
{
    const tq_lattice *lat = g->lat;
    tq_status st = TQ_SUCCESS;
    for (int f = 0; f < 8 && st == TQ_SUCCESS; f++) {
        const int mu = f / 2, par = f % 2;
        for (int b = 0; b < lat->nblocks && st == TQ_SUCCESS; b++) {
            starpu_data_handle_t h = g->fields[f][b];
            if (host_in) tq_task_data_written_on(h, tq_block_global_rank(lat, b));   /* every rank learns who holds it */
            if (!tq_block_is_local(lat, b)) continue;
            const tq_heatbath_args a = block_args(g, b);
            const int worker = tq_internal_access_worker(tq_internal_block_options(lat, b), tq_block_local_index(lat, b), h,
                                                         host_in != NULL);
            tq_host_access acc;
            if ((st = tq_host_access_begin(&acc, h, worker, host_in != NULL))) break;
            double *buf = acc.host;
            for (int64_t i = 0; i < lat->block_cb; i++) {
                int x[4];
                tq_hb_site(&a, par, i, x);
                const int64_t lex = (((int64_t)(x[3] - ho[3]) * hd[2] + x[2] - ho[2]) * hd[1] + x[1] - ho[1]) * hd[0] + x[0] - ho[0];
                if (host_in) memcpy(buf + i * 18, host_in + (lex * 4 + mu) * 18, 18 * sizeof(double));
                else memcpy(host_out + (lex * 4 + mu) * 18, buf + i * 18, 18 * sizeof(double));
            }
            st = tq_host_access_end(&acc);
        }
    }
    return st;
}

/* The host field h is this rank's part (tq_generator_local_dims) or, under MPI, the whole
 * lattice on every rank; *whole says which. */
static tq_status check_host(const tq_generator *g, const tq_host_gauge *h, int *whole, const char *who)
{
    if (!g || !h || !h->links) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    const int *l = g->lat->local, *d = g->dims;
    const int nranks = tq_lattice_nprocs(g->lat);
    *whole = nranks > 1 && !memcmp(h->dims, d, sizeof g->dims);
    if (*whole || !memcmp(h->dims, l, sizeof g->lat->local)) return TQ_SUCCESS;
    if (nranks == 1)
        return tq_error(TQ_ERR_MISMATCH, "%s: the gauge field is %dx%dx%dx%d, the generator %dx%dx%dx%d", who,
                        h->dims[0], h->dims[1], h->dims[2], h->dims[3], l[0], l[1], l[2], l[3]);
    return tq_error(TQ_ERR_MISMATCH, "%s: the gauge field is %dx%dx%dx%d, neither the generator's lattice %dx%dx%dx%d "
                    "nor this rank's part %dx%dx%dx%d", who, h->dims[0], h->dims[1], h->dims[2], h->dims[3],
                    d[0], d[1], d[2], d[3], l[0], l[1], l[2], l[3]);
}

tq_status tq_generator_import(tq_generator *g, const tq_host_gauge *h)
{
    int whole, offset[4];
    TQ_CHECK(check_host(g, h, &whole, "tq_generator_import"));
    TQ_CHECK(tq_generator_local_dims(g, (int[4]){0}, offset));
    static const int zero[4] = {0, 0, 0, 0};
    TQ_CHECK(transfer(g, NULL, h->links, whole ? g->dims : g->lat->local, whole ? zero : offset));
    return pack_faces(g, 0, 8, "tq_generator_import");
}

tq_status tq_generator_export(tq_generator *g, tq_host_gauge *h)
{
    int whole, offset[4];
    TQ_CHECK(check_host(g, h, &whole, "tq_generator_export"));
    TQ_CHECK(tq_generator_local_dims(g, (int[4]){0}, offset));
    if (!whole) return transfer(g, h->links, NULL, g->lat->local, offset);
    double *part = malloc((size_t)g->lat->local_volume * 72 * sizeof *part);
    if (!part) return tq_error(TQ_ERR_NOMEM, "tq_generator_export: out of memory for this rank's part");
    tq_status st = transfer(g, part, NULL, g->lat->local, offset);
    /* collective: every rank goes into the gather, with its status agreed first */
    st = tq_lattice_status_agree(g->lat, st);
    if (st == TQ_SUCCESS) st = tq_lattice_allgather_sites(g->lat, part, h->links, 72);
    free(part);
    return st;
}

static tq_status submit_sweep(tq_generator *g, int overrelax)
{
    uint32_t key[2];
    tq_rng_key(key, g->p.seed);
    for (int parity = 0; parity < 2; parity++)
        for (int mu = 0; mu < 4; mu++) {
            for (int b = 0; b < g->lat->nblocks; b++) {
                tq_heatbath_args a = block_args(g, b);
                a.beta = g->p.beta;
                a.overrelax = overrelax;
                a.sweep = (uint32_t)(g->sweeps & TQ_HB_MAX_SWEEP);
                memcpy(a.key, key, sizeof key);
                a.parity = parity;
                a.mu = mu;
                tq_generator_handles h;
                block_handles(g, b, mu, &h);
                const tq_task_options opt = tq_internal_block_options(g->lat, b);
                int ret = tq_task_heatbath(&opt, &a, &h, g->refused[b]);
                if (ret) return tq_error(TQ_ERR_RUNTIME, "tq_generator_sweep: task submission failed (%d)", ret);
            }
            const int f = 2 * mu + parity;
            TQ_CHECK(pack_faces(g, f, f + 1, "tq_generator_sweep"));
        }
    return TQ_SUCCESS;
}

/* Where the blocks' tasks run on one worker each (one block per GPU, or every block on one
 * worker), a sweep's, a measurement's and a reunitarisation's tasks go to StarPU as one
 * chain task per owner (tasks/submit.c): a sub-step's task costs its kernel, not StarPU's
 * task-to-task gap (about 70 us: 16^4 sweeps were bound by it). */
tq_status tq_generator_sweep(tq_generator *g, int n_overrelax)
{
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_sweep: NULL generator");
    if (n_overrelax < 0) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_sweep: n_overrelax is %d (must be >= 0)", n_overrelax);
    if (g->sweeps > TQ_HB_MAX_SWEEP)
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_generator_sweep: more than %d heat-bath sweeps with one seed", TQ_HB_MAX_SWEEP);
    const int chain = tq_internal_lattice_can_chain(g->lat);
    tq_internal_chain_begin(chain);
    tq_status st = submit_sweep(g, 0);
    for (int k = 0; k < n_overrelax && st == TQ_SUCCESS; k++) st = submit_sweep(g, 1);
    TQ_CHECK(tq_internal_chain_end(chain, st, "tq_generator_sweep"));
    g->sweeps++;
    return TQ_SUCCESS;
}

tq_status tq_generator_refused(tq_generator *g, uint64_t *count)
{
    if (!g || !count) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_refused: NULL argument");
    *count = 0;
    double total = 0;   /* exact: counts stay far below 2^53 */
    for (int b = 0; b < g->lat->nblocks; b++) {
        if (!tq_block_is_local(g->lat, b)) continue;
        if (starpu_data_acquire(g->refused[b], STARPU_R)) return tq_error(TQ_ERR_RUNTIME, "tq_generator_refused: acquire failed");
        total += (double)*(const uint64_t *)starpu_data_get_local_ptr(g->refused[b]);
        starpu_data_release(g->refused[b]);
    }
    tq_lattice_allreduce_sum(g->lat, &total, 1);
    *count = (uint64_t)total;
    return TQ_SUCCESS;
}

/* Copies the first n doubles of h (held on this rank) into out. */
static tq_status read_sums(starpu_data_handle_t h, double *out, int n, const char *who)
{
    if (starpu_data_acquire(h, STARPU_R)) return tq_error(TQ_ERR_RUNTIME, "%s: acquire failed", who);
    memcpy(out, starpu_data_get_local_ptr(h), (size_t)n * sizeof *out);
    starpu_data_release(h);
    return TQ_SUCCESS;
}

tq_status tq_generator_measure(tq_generator *g, tq_plaquette *plaquette, double *polyakov_re, double *polyakov_im)
{
    const char *who = "tq_generator_measure";
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL generator", who);
    const tq_lattice *lat = g->lat;
    const int nb = lat->nblocks, nc = g->ncols;
    const int chain = tq_internal_lattice_can_chain(g->lat);
    tq_internal_chain_begin(chain);
    int ret = 0;
    for (int b = 0; b < nb && !ret; b++) {
        const tq_heatbath_args a = block_args(g, b);
        tq_generator_handles h;
        block_handles(g, b, 0, &h);
        const tq_task_options opt = tq_internal_block_options(lat, b);
        ret = tq_task_gauge_measure(&opt, &a, &h, g->measured[b], g->lines[b]);
    }
    /* the Polyakov loops: each column's lines multiplied in t order (block b + nc lies above
     * block b), then traced by its top block */
    for (int b = nc; b < nb && !ret; b++) {
        const tq_task_options opt = tq_internal_block_options(lat, b);
        ret = tq_task_gauge_line_mul(&opt, g->lines[b - nc], g->lines[b]);
    }
    for (int c = 0; c < nc && !ret; c++) {
        const tq_task_options top = tq_internal_block_options(lat, nb - nc + c);
        ret = tq_task_gauge_line_trace(&top, g->lines[nb - nc + c], g->poly[c]);
    }
    TQ_CHECK(tq_internal_chain_end(chain, ret ? tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret) : TQ_SUCCESS, who));
    /* every rank gets every block's and column's sums (the others' slots are zero: the sum
     * over ranks is exact) and adds them in block order: the same bits on any number of
     * ranks */
    double *all = calloc((size_t)TQ_MEASURE_NSUMS * (nb + nc), sizeof *all);
    if (!all) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    tq_status st = TQ_SUCCESS;
    for (int b = 0; b < nb && st == TQ_SUCCESS; b++)
        if (tq_block_is_local(lat, b)) st = read_sums(g->measured[b], all + TQ_MEASURE_NSUMS * b, TQ_MEASURE_NSUMS, who);
    for (int c = 0; c < nc && st == TQ_SUCCESS; c++)
        if (tq_block_is_local(lat, nb - nc + c)) st = read_sums(g->poly[c], all + TQ_MEASURE_NSUMS * (nb + c), TQ_MEASURE_NSUMS, who);
    st = tq_lattice_status_agree(lat, st);
    if (st != TQ_SUCCESS) { free(all); return st; }
    tq_lattice_allreduce_sum(lat, all, TQ_MEASURE_NSUMS * (nb + nc));
    double sum[4] = {0, 0, 0, 0};
    for (int b = 0; b < nb; b++)
        for (int k = 0; k < 2; k++) sum[k] += all[TQ_MEASURE_NSUMS * b + k];
    for (int c = 0; c < nc; c++)
        for (int k = 2; k < 4; k++) sum[k] += all[TQ_MEASURE_NSUMS * (nb + c) + k];
    const double vol = (double)tq_volume4(g->dims), nt = g->dims[3];
    if (plaquette) {
        plaquette->spatial = sum[0] / (9.0 * vol);
        plaquette->temporal = sum[1] / (9.0 * vol);
        plaquette->total = 0.5 * (plaquette->spatial + plaquette->temporal);
    }
    if (polyakov_re) *polyakov_re = sum[2] / (3.0 * vol / nt);
    if (polyakov_im) *polyakov_im = sum[3] / (3.0 * vol / nt);
    free(all);
    return TQ_SUCCESS;
}

tq_status tq_generator_reunitarize(tq_generator *g)
{
    const char *who = "tq_generator_reunitarize";
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL generator", who);
    const int chain = tq_internal_lattice_can_chain(g->lat);
    tq_internal_chain_begin(chain);
    int ret = 0;
    for (int f = 0; f < 8 && !ret; f++)
        for (int b = 0; b < g->lat->nblocks && !ret; b++) {
            const tq_task_options opt = tq_internal_block_options(g->lat, b);
            ret = tq_task_gauge_reunitarize(&opt, g->fields[f][b]);
        }
    tq_status st = ret ? tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret) : pack_faces(g, 0, 8, who);
    return tq_internal_chain_end(chain, st, who);
}
