/* The quenched generator: pure-gauge Wilson action, Cabibbo-Marinari heat bath and
 * overrelaxation sweeps as task graphs (codelets/heatbath.c, kernels/heatbath_site.h).
 * A sweep is 8 sub-steps (parity, then direction); each sub-step updates one of the 8 link
 * fields slab by slab (slabs: whole time slices), one task per slab, reading the other 7
 * fields' links in its slab and in the time slices next to it (halos); after each sub-step
 * one pack task per slab copies the updated field's first and last slices into face
 * buffers, which the neighbour slabs' tasks read.
 *
 * Across MPI ranks each rank owns equal runs of whole slabs (rank r: time slices r T/R ..
 * (r+1) T/R - 1) and runs their tasks; faces travel between ranks through tasks/submit.c as
 * any task input does. The measurement needs no slab but its own and the time slice above:
 * each slab's Polyakov lines are multiplied together slab after slab, and the per-slab sums
 * are added in slab order on every rank, so the results are the same bits on any number of
 * ranks. */
#include "core/tq_internal.h"
#include "core/field_internal.h"
#include "core/placement.h"
#include "core/rng.h"

#include <stdlib.h>
#include <string.h>

struct tq_generator {
    int dims[4];
    tq_generator_params p;
    int nslab;
    int64_t slab_len;
    int nranks, rank, per_rank;        /* per_rank: slabs per rank (slab s on rank s / per_rank) */
    int local[4];                      /* this rank's part (import, export): T / nranks time slices */
    starpu_data_handle_t *fields[8];   /* [field][slab] */
    starpu_data_handle_t *faces[8];    /* [field][2 slab + 0/1]: first/last time slice (nslab > 1) */
    starpu_data_handle_t *refused;     /* [slab] */
    starpu_data_handle_t *measured;    /* [slab]: the measurement tasks' results */
    starpu_data_handle_t *lines;       /* [slab]: Polyakov lines (products of the time links) */
    starpu_data_handle_t poly;         /* the Polyakov loops' sums */
    uint64_t sweeps;                   /* heat-bath sweeps done (the random stream's sweep word) */
};

void tq_generator_params_default(tq_generator_params *p)
{
    memset(p, 0, sizeof *p);
    p->beta = 6.0;
    p->seed = 1;
    p->nslab = 0;
}

static void generator_free(tq_generator *g)
{
    if (!g) return;
    for (int f = 0; f < 8; f++) {
        for (int s = 0; g->fields[f] && s < g->nslab; s++)
            if (g->fields[f][s]) starpu_data_unregister(g->fields[f][s]);
        free(g->fields[f]);
        for (int s = 0; g->faces[f] && s < 2 * g->nslab; s++)
            if (g->faces[f][s]) starpu_data_unregister(g->faces[f][s]);
        free(g->faces[f]);
    }
    for (int s = 0; g->refused && s < g->nslab; s++)
        if (g->refused[s]) starpu_data_unregister(g->refused[s]);
    free(g->refused);
    for (int s = 0; g->measured && s < g->nslab; s++)
        if (g->measured[s]) starpu_data_unregister(g->measured[s]);
    free(g->measured);
    for (int s = 0; g->lines && s < g->nslab; s++)
        if (g->lines[s]) starpu_data_unregister(g->lines[s]);
    free(g->lines);
    if (g->poly) starpu_data_unregister(g->poly);
    free(g);
}

void tq_generator_destroy(tq_generator *g) { generator_free(g); }

/* The rank that owns slab s, and the options of a task writing slab s's data. */
static int slab_rank(const tq_generator *g, int s) { return s / g->per_rank; }

/* Owner computes, as for a lattice's blocks (core/placement.h): a rank's slabs go to its
 * owners in turn (one slab per GPU by default), so a slab's links stay in one memory. */
static tq_task_options slab_options(const tq_generator *g, int s)
{
    return tq_internal_part_options(s % g->per_rank, slab_rank(g, s), g->nranks);
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
    if (p->nslab < 0 || p->nslab > TQ_HB_MAX_SLABS)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: nslab must lie in [0, %d] (got %d)", who, TQ_HB_MAX_SLABS, p->nslab);
    const int nranks = tq_internal_mpi_size();
    const int64_t half = (int64_t)dims[0] * dims[1] * dims[2] * dims[3] / 2;
    /* slabs: the requested number; by default one per GPU when the tasks may go to GPUs (a
     * large slab keeps a GPU busy, and every task costs scheduling time: with 16 slabs a
     * 32^4 sweep took 5x longer on an H200; the GPUs own the slabs then, as they own a
     * lattice's blocks), otherwise at least one per CPU worker (up to the limit). Slabs
     * are equal runs of whole time slices: the number divides the time extent; each rank
     * holds the same number of whole slabs. */
    int nslab = p->nslab;
    const int nt = dims[3];
    if (nt % nranks)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: the %d time slices do not split over %d ranks (each rank holds whole "
                        "time slices, as many as the others)", who, nt, nranks);
    if (nranks > TQ_HB_MAX_SLABS)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: %d ranks; the generator runs on at most %d (one slab each)", who,
                        nranks, TQ_HB_MAX_SLABS);
    if (nslab > 0 && nt % nslab)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d slabs do not divide the %d time slices (a slab is whole time "
                        "slices)", who, p->nslab, nt);
    if (nslab > 0 && nslab % nranks)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d slabs do not split over %d ranks (each rank holds whole slabs, "
                        "as many as the others)", who, p->nslab, nranks);
    if (nslab == 0) {
        const tq_where w = tq_get_placement();
        const int nt_rank = nt / nranks, limit = TQ_HB_MAX_SLABS / nranks;
        const int ncuda = (int)starpu_cuda_worker_get_count();
        int want = w != TQ_WHERE_CPU && ncuda > 0 ? ncuda : (int)starpu_cpu_worker_get_count();
        if (want > limit) want = limit;
        if (want > nt_rank) want = nt_rank;
        if (want < 1) want = 1;
        int k;
        for (k = want; k <= limit && nt_rank % k; k++) {}
        if (k > limit)
            for (k = want; nt_rank % k; k--) {}
        nslab = k * nranks;
    }
    tq_generator *g = calloc(1, sizeof *g);
    if (!g) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    memcpy(g->dims, dims, sizeof g->dims);
    g->p = *p;
    g->nslab = nslab;
    g->slab_len = half / nslab;
    g->nranks = nranks;
    g->rank = tq_internal_mpi_rank();
    g->per_rank = nslab / nranks;
    memcpy(g->local, dims, sizeof g->local);
    g->local[3] = nt / nranks;
    for (int f = 0; f < 8; f++) {
        g->fields[f] = calloc((size_t)nslab, sizeof *g->fields[f]);
        if (!g->fields[f]) { generator_free(g); return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who); }
        for (int s = 0; s < nslab; s++)
            starpu_vector_data_register(&g->fields[f][s], -1, 0, (uint32_t)(g->slab_len * 18), sizeof(double));
        if (nslab == 1) continue;   /* one slab: its own halos (periodic) */
        g->faces[f] = calloc((size_t)2 * nslab, sizeof *g->faces[f]);
        if (!g->faces[f]) { generator_free(g); return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who); }
        for (int s = 0; s < 2 * nslab; s++)
            starpu_vector_data_register(&g->faces[f][s], -1, 0, (uint32_t)(tq_hb_slice_len(dims) * 18), sizeof(double));
    }
    g->refused = calloc((size_t)nslab, sizeof *g->refused);
    if (!g->refused) { generator_free(g); return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who); }
    for (int s = 0; s < nslab; s++) starpu_vector_data_register(&g->refused[s], -1, 0, 1, sizeof(uint64_t));
    g->measured = calloc((size_t)nslab, sizeof *g->measured);
    g->lines = calloc((size_t)nslab, sizeof *g->lines);
    if (!g->measured || !g->lines) { generator_free(g); return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who); }
    const int64_t slice = tq_measure_slice_sites(dims);
    for (int s = 0; s < nslab; s++) {
        starpu_vector_data_register(&g->measured[s], -1, 0, (uint32_t)tq_measure_result_len(2 * g->slab_len), sizeof(double));
        starpu_vector_data_register(&g->lines[s], -1, 0, (uint32_t)(slice * 18), sizeof(double));
    }
    starpu_vector_data_register(&g->poly, -1, 0, (uint32_t)tq_measure_result_len(slice), sizeof(double));
    /* cold start; refusal counters at 0 */
    tq_host_gauge h;
    tq_status st = tq_host_gauge_alloc(&h, g->local);
    if (st == TQ_SUCCESS) st = tq_host_gauge_unit(&h);
    if (st == TQ_SUCCESS) st = tq_generator_import(g, &h);
    tq_host_gauge_free(&h);
    for (int s = 0; s < nslab && st == TQ_SUCCESS; s++) {
        tq_task_data_written_on(g->refused[s], slab_rank(g, s));
        if (slab_rank(g, s) != g->rank) continue;
        if (starpu_data_acquire(g->refused[s], STARPU_W)) st = tq_error(TQ_ERR_RUNTIME, "%s: StarPU acquire failed", who);
        else {
            *(uint64_t *)starpu_data_get_local_ptr(g->refused[s]) = 0;
            starpu_data_release(g->refused[s]);
        }
    }
    if (st != TQ_SUCCESS) { generator_free(g); return st; }
    *out = g;
    return TQ_SUCCESS;
}

int tq_generator_slabs(const tq_generator *g) { return g ? g->nslab : 0; }

tq_status tq_generator_local_dims(const tq_generator *g, int local[4], int offset[4])
{
    if (!g || !local) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_local_dims: NULL argument");
    memcpy(local, g->local, sizeof g->local);
    if (offset) {
        offset[0] = offset[1] = offset[2] = 0;
        offset[3] = g->rank * g->local[3];
    }
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

/* The arguments every generator task shares: geometry and slabs. */
static tq_heatbath_args slab_args(const tq_generator *g)
{
    tq_heatbath_args a;
    memset(&a, 0, sizeof a);
    memcpy(a.dims, g->dims, sizeof a.dims);
    a.nslab = g->nslab;
    a.slab_len = g->slab_len;
    return a;
}

/* Submits the face copies of field f (fmax > f: fields f .. fmax - 1) after they changed. */
static tq_status pack_faces(tq_generator *g, int f, int fmax, const char *who)
{
    if (g->nslab == 1) return TQ_SUCCESS;
    tq_heatbath_args a = slab_args(g);
    for (; f < fmax; f++)
        for (a.slab = 0; a.slab < g->nslab; a.slab++) {
            const tq_task_options opt = slab_options(g, a.slab);
            int ret = tq_task_gauge_face_pack(&opt, &a, g->fields[f][a.slab], g->faces[f][2 * a.slab], g->faces[f][2 * a.slab + 1]);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    return TQ_SUCCESS;
}

/* Visits the links of this rank's slabs: host_in -> storage (import) or storage -> host_out
 * (export); the host field is this rank's part (g->local). */
static tq_status transfer(tq_generator *g, double *host_out, const double *host_in)
{
    const int *d = g->dims, *l = g->local;
    const int t_first = g->rank * l[3];
    tq_status st = TQ_SUCCESS;
    for (int f = 0; f < 8 && st == TQ_SUCCESS; f++) {
        const int mu = f / 2, par = f % 2;
        for (int s = 0; s < g->nslab && st == TQ_SUCCESS; s++) {
            starpu_data_handle_t h = g->fields[f][s];
            if (host_in) tq_task_data_written_on(h, slab_rank(g, s));   /* every rank learns who holds it */
            if (slab_rank(g, s) != g->rank) continue;
            const int worker = tq_internal_access_worker(slab_options(g, s), s % g->per_rank, h, host_in != NULL);
            tq_host_access a;
            if ((st = tq_host_access_begin(&a, h, worker, host_in != NULL))) break;
            double *buf = a.host;
            for (int64_t i = 0; i < g->slab_len; i++) {
                const int64_t cb = (int64_t)s * g->slab_len + i;
                int x[4];
                tq_hb_coords(d, par, cb, x);
                const int64_t lex = (((int64_t)(x[3] - t_first) * l[2] + x[2]) * l[1] + x[1]) * l[0] + x[0];
                if (host_in) memcpy(buf + i * 18, host_in + (lex * 4 + mu) * 18, 18 * sizeof(double));
                else memcpy(host_out + (lex * 4 + mu) * 18, buf + i * 18, 18 * sizeof(double));
            }
            st = tq_host_access_end(&a);
        }
    }
    return st;
}

/* The host field h is this rank's part (g->local) or, under MPI, the whole lattice on every
 * rank; *whole says which. */
static tq_status check_host(const tq_generator *g, const tq_host_gauge *h, int *whole, const char *who)
{
    if (!g || !h || !h->links) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    const int *l = g->local, *d = g->dims;
    *whole = g->nranks > 1 && !memcmp(h->dims, d, sizeof g->dims);
    if (*whole || !memcmp(h->dims, l, sizeof g->local)) return TQ_SUCCESS;
    if (g->nranks == 1)
        return tq_error(TQ_ERR_MISMATCH, "%s: the gauge field is %dx%dx%dx%d, the generator %dx%dx%dx%d", who,
                        h->dims[0], h->dims[1], h->dims[2], h->dims[3], l[0], l[1], l[2], l[3]);
    return tq_error(TQ_ERR_MISMATCH, "%s: the gauge field is %dx%dx%dx%d, neither the generator's lattice %dx%dx%dx%d "
                    "nor this rank's part %dx%dx%dx%d", who, h->dims[0], h->dims[1], h->dims[2], h->dims[3],
                    d[0], d[1], d[2], d[3], l[0], l[1], l[2], l[3]);
}

/* This rank's part of a whole-lattice host array: one contiguous run (t runs slowest). */
static int64_t part_offset(const tq_generator *g)
{
    return (int64_t)g->rank * tq_volume4(g->local) * 72;
}

tq_status tq_generator_import(tq_generator *g, const tq_host_gauge *h)
{
    int whole;
    TQ_CHECK(check_host(g, h, &whole, "tq_generator_import"));
    TQ_CHECK(transfer(g, NULL, h->links + (whole ? part_offset(g) : 0)));
    return pack_faces(g, 0, 8, "tq_generator_import");
}

tq_status tq_generator_export(tq_generator *g, tq_host_gauge *h)
{
    int whole;
    TQ_CHECK(check_host(g, h, &whole, "tq_generator_export"));
    TQ_CHECK(transfer(g, h->links + (whole ? part_offset(g) : 0), NULL));
    return whole ? tq_internal_allgather_in_place(h->links, tq_volume4(g->local) * 72) : TQ_SUCCESS;
}

static tq_status submit_sweep(tq_generator *g, int overrelax)
{
    tq_heatbath_args a = slab_args(g);
    a.beta = g->p.beta;
    a.overrelax = overrelax;
    a.sweep = (uint32_t)(g->sweeps & TQ_HB_MAX_SWEEP);
    a.halo = g->nslab > 1;
    tq_rng_key(a.key, g->p.seed);
    for (a.parity = 0; a.parity < 2; a.parity++)
        for (a.mu = 0; a.mu < 4; a.mu++) {
            for (a.slab = 0; a.slab < g->nslab; a.slab++) {
                const tq_task_options opt = slab_options(g, a.slab);
                int ret = tq_task_heatbath(&opt, &a, g->fields, g->faces, g->refused[a.slab]);
                if (ret) return tq_error(TQ_ERR_RUNTIME, "tq_generator_sweep: task submission failed (%d)", ret);
            }
            const int f = 2 * a.mu + a.parity;
            TQ_CHECK(pack_faces(g, f, f + 1, "tq_generator_sweep"));
        }
    return TQ_SUCCESS;
}

tq_status tq_generator_sweep(tq_generator *g, int n_overrelax)
{
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_sweep: NULL generator");
    if (n_overrelax < 0) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_sweep: n_overrelax is %d (must be >= 0)", n_overrelax);
    if (g->sweeps > TQ_HB_MAX_SWEEP)
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_generator_sweep: more than %d heat-bath sweeps with one seed", TQ_HB_MAX_SWEEP);
    TQ_CHECK(submit_sweep(g, 0));
    for (int k = 0; k < n_overrelax; k++) TQ_CHECK(submit_sweep(g, 1));
    g->sweeps++;
    return TQ_SUCCESS;
}

tq_status tq_generator_refused(tq_generator *g, uint64_t *count)
{
    if (!g || !count) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_refused: NULL argument");
    *count = 0;
    double total = 0;   /* exact: counts stay far below 2^53 */
    for (int s = 0; s < g->nslab; s++) {
        if (slab_rank(g, s) != g->rank) continue;
        if (starpu_data_acquire(g->refused[s], STARPU_R)) return tq_error(TQ_ERR_RUNTIME, "tq_generator_refused: acquire failed");
        total += (double)*(const uint64_t *)starpu_data_get_local_ptr(g->refused[s]);
        starpu_data_release(g->refused[s]);
    }
    if (g->nranks > 1) tq_internal_allreduce_sum(&total, 1);
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
    tq_heatbath_args a = slab_args(g);
    a.halo = g->nslab > 1;
    const int n = g->nslab;
    for (a.slab = 0; a.slab < n; a.slab++) {
        const tq_task_options opt = slab_options(g, a.slab);
        int ret = tq_task_gauge_measure(&opt, &a, g->fields, g->faces, g->measured[a.slab], g->lines[a.slab]);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    }
    /* the Polyakov loops: the slabs' lines multiplied in slab order, then traced */
    for (int s = 1; s < n; s++) {
        const tq_task_options opt = slab_options(g, s);
        int ret = tq_task_gauge_line_mul(&opt, g->lines[s - 1], g->lines[s]);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    }
    const tq_task_options last = slab_options(g, n - 1);
    int ret = tq_task_gauge_line_trace(&last, g->lines[n - 1], g->poly);
    if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    /* every rank gets every slab's sums (the others' slots are zero: the sum over ranks is
     * exact) and adds them in slab order: the same bits on any number of ranks */
    double *all = calloc((size_t)TQ_MEASURE_NSUMS * (n + 1), sizeof *all);
    if (!all) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    tq_status st = TQ_SUCCESS;
    for (int s = 0; s < n && st == TQ_SUCCESS; s++)
        if (slab_rank(g, s) == g->rank) st = read_sums(g->measured[s], all + TQ_MEASURE_NSUMS * s, TQ_MEASURE_NSUMS, who);
    if (st == TQ_SUCCESS && slab_rank(g, n - 1) == g->rank) st = read_sums(g->poly, all + TQ_MEASURE_NSUMS * n, TQ_MEASURE_NSUMS, who);
    if (st != TQ_SUCCESS) { free(all); return st; }
    if (g->nranks > 1) tq_internal_allreduce_sum(all, TQ_MEASURE_NSUMS * (n + 1));
    double sum[2] = {0, 0};
    for (int s = 0; s < n; s++)
        for (int k = 0; k < 2; k++) sum[k] += all[TQ_MEASURE_NSUMS * s + k];
    const double vol = 2.0 * (double)n * (double)g->slab_len, nt = g->dims[3];
    if (plaquette) {
        plaquette->spatial = sum[0] / (9.0 * vol);
        plaquette->temporal = sum[1] / (9.0 * vol);
        plaquette->total = 0.5 * (plaquette->spatial + plaquette->temporal);
    }
    if (polyakov_re) *polyakov_re = all[TQ_MEASURE_NSUMS * n + 2] / (3.0 * vol / nt);
    if (polyakov_im) *polyakov_im = all[TQ_MEASURE_NSUMS * n + 3] / (3.0 * vol / nt);
    free(all);
    return TQ_SUCCESS;
}

tq_status tq_generator_reunitarize(tq_generator *g)
{
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_reunitarize: NULL generator");
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < g->nslab; s++) {
            const tq_task_options opt = slab_options(g, s);
            int ret = tq_task_gauge_reunitarize(&opt, g->fields[f][s]);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "tq_generator_reunitarize: task submission failed (%d)", ret);
        }
    return pack_faces(g, 0, 8, "tq_generator_reunitarize");
}
