/* The quenched generator: pure-gauge Wilson action, Cabibbo-Marinari heat bath and
 * overrelaxation sweeps as task graphs (codelets/heatbath.c, kernels/heatbath_site.h).
 * A sweep is 8 sub-steps (parity, then direction); each sub-step updates one of the 8 link
 * fields slab by slab (slabs: whole time slices), one task per slab, reading the other 7
 * fields' links in its slab and in the time slices next to it (halos); after each sub-step
 * one pack task per slab copies the updated field's first and last slices into face
 * buffers, which the neighbour slabs' tasks read. */
#include "core/tq_internal.h"
#include "core/placement.h"
#include "core/rng.h"

#include <stdlib.h>
#include <string.h>

struct tq_generator {
    int dims[4];
    tq_generator_params p;
    int nslab;
    int64_t slab_len;
    starpu_data_handle_t *fields[8];   /* [field][slab] */
    starpu_data_handle_t *faces[8];    /* [field][2 slab + 0/1]: first/last time slice (nslab > 1) */
    starpu_data_handle_t *refused;     /* [slab] */
    starpu_data_handle_t *measured;    /* [slab]: the measurement tasks' results */
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
    free(g);
}

void tq_generator_destroy(tq_generator *g) { generator_free(g); }

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
    if (tq_internal_mpi_size() > 1) return tq_error(TQ_ERR_UNSUPPORTED, "%s: the generator runs on one rank for now", who);
    const int64_t half = (int64_t)dims[0] * dims[1] * dims[2] * dims[3] / 2;
    /* slabs: the requested number; by default one when the tasks go to GPUs (a slab per GPU
     * kernel keeps it busy, and every task costs scheduling time: with 16 slabs a 32^4 sweep
     * took 5x longer on an H200), otherwise at least one per CPU worker (up to the limit).
     * Slabs are equal runs of whole time slices: the number divides the time extent. */
    int nslab = p->nslab;
    const int nt = dims[3];
    if (nslab > 0 && nt % nslab)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d slabs do not divide the %d time slices (a slab is whole time "
                        "slices)", who, p->nslab, nt);
    if (nslab == 0) {
        const tq_where w = tq_get_placement();
        int want = w == TQ_WHERE_CUDA ? 1 : (int)starpu_cpu_worker_get_count();
        if (want > TQ_HB_MAX_SLABS) want = TQ_HB_MAX_SLABS;
        if (want > nt) want = nt;
        if (want < 1) want = 1;
        for (nslab = want; nslab <= TQ_HB_MAX_SLABS && nt % nslab; nslab++) {}
        if (nslab > TQ_HB_MAX_SLABS)
            for (nslab = want; nt % nslab; nslab--) {}
    }
    tq_generator *g = calloc(1, sizeof *g);
    if (!g) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    memcpy(g->dims, dims, sizeof g->dims);
    g->p = *p;
    g->nslab = nslab;
    g->slab_len = half / nslab;
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
    if (!g->measured) { generator_free(g); return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who); }
    for (int s = 0; s < nslab; s++)
        starpu_vector_data_register(&g->measured[s], -1, 0, (uint32_t)tq_measure_result_len(g->slab_len), sizeof(double));
    /* cold start; refusal counters at 0 */
    tq_host_gauge h;
    tq_status st = tq_host_gauge_alloc(&h, dims);
    if (st == TQ_SUCCESS) st = tq_host_gauge_unit(&h);
    if (st == TQ_SUCCESS) st = tq_generator_import(g, &h);
    tq_host_gauge_free(&h);
    for (int s = 0; s < nslab && st == TQ_SUCCESS; s++) {
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
    const tq_task_options opt = tq_internal_task_options();
    if (g->nslab == 1) return TQ_SUCCESS;
    tq_heatbath_args a = slab_args(g);
    for (; f < fmax; f++)
        for (a.slab = 0; a.slab < g->nslab; a.slab++) {
            int ret = tq_task_gauge_face_pack(&opt, &a, g->fields[f][a.slab], g->faces[f][2 * a.slab], g->faces[f][2 * a.slab + 1]);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    return TQ_SUCCESS;
}

/* Visits the links of the generator's storage: host_in -> storage (import) or storage ->
 * host_out (export). */
static tq_status transfer(tq_generator *g, double *host_out, const double *host_in)
{
    const int *d = g->dims;
    for (int f = 0; f < 8; f++) {
        const int mu = f / 2, par = f % 2;
        for (int s = 0; s < g->nslab; s++) {
            starpu_data_handle_t h = g->fields[f][s];
            if (starpu_data_acquire(h, host_in ? STARPU_W : STARPU_R))
                return tq_error(TQ_ERR_RUNTIME, "generator: cannot acquire its links in main memory");
            double *buf = (double *)starpu_data_get_local_ptr(h);
            for (int64_t i = 0; i < g->slab_len; i++) {
                const int64_t cb = (int64_t)s * g->slab_len + i;
                int x[4];
                tq_hb_coords(d, par, cb, x);
                const int64_t lex = (((int64_t)x[3] * d[2] + x[2]) * d[1] + x[1]) * d[0] + x[0];
                if (host_in) memcpy(buf + i * 18, host_in + (lex * 4 + mu) * 18, 18 * sizeof(double));
                else memcpy(host_out + (lex * 4 + mu) * 18, buf + i * 18, 18 * sizeof(double));
            }
            starpu_data_release(h);
        }
    }
    return TQ_SUCCESS;
}

static tq_status check_host(const tq_generator *g, const tq_host_gauge *h, const char *who)
{
    if (!g || !h || !h->links) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    for (int mu = 0; mu < 4; mu++)
        if (h->dims[mu] != g->dims[mu])
            return tq_error(TQ_ERR_MISMATCH, "%s: the gauge field is %dx%dx%dx%d, the generator %dx%dx%dx%d", who,
                            h->dims[0], h->dims[1], h->dims[2], h->dims[3], g->dims[0], g->dims[1], g->dims[2], g->dims[3]);
    return TQ_SUCCESS;
}

tq_status tq_generator_import(tq_generator *g, const tq_host_gauge *h)
{
    TQ_CHECK(check_host(g, h, "tq_generator_import"));
    TQ_CHECK(transfer(g, NULL, h->links));
    return pack_faces(g, 0, 8, "tq_generator_import");
}

tq_status tq_generator_export(tq_generator *g, tq_host_gauge *h)
{
    TQ_CHECK(check_host(g, h, "tq_generator_export"));
    return transfer(g, h->links, NULL);
}

static tq_status submit_sweep(tq_generator *g, int overrelax)
{
    const tq_task_options opt = tq_internal_task_options();
    tq_heatbath_args a = slab_args(g);
    a.beta = g->p.beta;
    a.overrelax = overrelax;
    a.sweep = (uint32_t)(g->sweeps & TQ_HB_MAX_SWEEP);
    a.halo = g->nslab > 1;
    tq_rng_key(a.key, g->p.seed);
    for (a.parity = 0; a.parity < 2; a.parity++)
        for (a.mu = 0; a.mu < 4; a.mu++) {
            for (a.slab = 0; a.slab < g->nslab; a.slab++) {
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
    for (int s = 0; s < g->nslab; s++) {
        if (starpu_data_acquire(g->refused[s], STARPU_R)) return tq_error(TQ_ERR_RUNTIME, "tq_generator_refused: acquire failed");
        *count += *(const uint64_t *)starpu_data_get_local_ptr(g->refused[s]);
        starpu_data_release(g->refused[s]);
    }
    return TQ_SUCCESS;
}

tq_status tq_generator_measure(tq_generator *g, tq_plaquette *plaquette, double *polyakov_re, double *polyakov_im)
{
    const tq_task_options opt = tq_internal_task_options();
    const char *who = "tq_generator_measure";
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL generator", who);
    tq_heatbath_args a = slab_args(g);
    for (a.slab = 0; a.slab < g->nslab; a.slab++) {
        int ret = tq_task_gauge_measure(&opt, &a, g->fields, g->measured[a.slab]);
        if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    }
    double sum[TQ_MEASURE_NSUMS] = {0};
    for (int s = 0; s < g->nslab; s++) {   /* in slab order: the same bits every time */
        if (starpu_data_acquire(g->measured[s], STARPU_R)) return tq_error(TQ_ERR_RUNTIME, "%s: acquire failed", who);
        const double *r = (const double *)starpu_data_get_local_ptr(g->measured[s]);
        for (int k = 0; k < TQ_MEASURE_NSUMS; k++) sum[k] += r[k];
        starpu_data_release(g->measured[s]);
    }
    const double vol = 2.0 * (double)g->nslab * (double)g->slab_len, nt = g->dims[3];
    if (plaquette) {
        plaquette->spatial = sum[0] / (9.0 * vol);
        plaquette->temporal = sum[1] / (9.0 * vol);
        plaquette->total = 0.5 * (plaquette->spatial + plaquette->temporal);
    }
    if (polyakov_re) *polyakov_re = sum[2] / (3.0 * vol / nt);
    if (polyakov_im) *polyakov_im = sum[3] / (3.0 * vol / nt);
    return TQ_SUCCESS;
}

tq_status tq_generator_reunitarize(tq_generator *g)
{
    const tq_task_options opt = tq_internal_task_options();
    if (!g) return tq_error(TQ_ERR_INVALID_ARG, "tq_generator_reunitarize: NULL generator");
    for (int f = 0; f < 8; f++)
        for (int s = 0; s < g->nslab; s++) {
            int ret = tq_task_gauge_reunitarize(&opt, g->fields[f][s]);
            if (ret) return tq_error(TQ_ERR_RUNTIME, "tq_generator_reunitarize: task submission failed (%d)", ret);
        }
    return pack_faces(g, 0, 8, "tq_generator_reunitarize");
}
