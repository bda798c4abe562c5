/* The clover term A(x) = 1 + kappa c_sw sum_{mu<nu} sigma_{mu nu} (i F_{mu nu}(x)) and its
 * inverse (kernels/clover_build_site.h), built once per operator in double by build tasks
 * over ranges of sites, on whatever workers the placement allows, and imported into two
 * clover fields (layout: kernels/clover_site.h). */
#include "field_internal.h"
#include "tasks/tq_tasks.h"
#include "kernels/wilson_site.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sigma_{mu nu} = (i/2) [gamma_mu, gamma_nu] for the 6 planes mu < nu, from the gamma tables
 * the kernels use (one non-zero i^code per row). */
static void sigma_matrices(double sig[6][4][4][2])
{
    double g[4][4][4][2];
    memset(g, 0, sizeof g);
    static const double re[4] = {1, 0, -1, 0}, im[4] = {0, 1, 0, -1};
    for (int mu = 0; mu < 4; mu++)
        for (int s = 0; s < 4; s++) {
            int c = tq_gamma_col(mu, s), k = tq_gamma_code(mu, s) & 3;
            g[mu][s][c][0] = re[k];
            g[mu][s][c][1] = im[k];
        }
    int plane = 0;
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++, plane++)
            for (int s = 0; s < 4; s++)
                for (int t = 0; t < 4; t++) {
                    double cr = 0, ci = 0;   /* [g_mu, g_nu]_{st} */
                    for (int r = 0; r < 4; r++) {
                        cr += g[mu][s][r][0] * g[nu][r][t][0] - g[mu][s][r][1] * g[nu][r][t][1];
                        ci += g[mu][s][r][0] * g[nu][r][t][1] + g[mu][s][r][1] * g[nu][r][t][0];
                        cr -= g[nu][s][r][0] * g[mu][r][t][0] - g[nu][s][r][1] * g[mu][r][t][1];
                        ci -= g[nu][s][r][0] * g[mu][r][t][1] + g[nu][s][r][1] * g[mu][r][t][0];
                    }
                    sig[plane][s][t][0] = -0.5 * ci;   /* (i/2)(cr + i ci) */
                    sig[plane][s][t][1] = 0.5 * cr;
                }
}

static tq_status clover_field(const tq_field *gauge, tq_field **f)
{
    tq_field_params fp = {TQ_FIELD_CLOVER, gauge->p.prec, TQ_FULL, (tq_recon)0};
    return tq_field_create(gauge->lat, &fp, f);
}

/* Sites per build task: enough tasks for every worker to take several, none so small that
 * the task overhead shows. */
static int64_t build_chunk(int64_t volume)
{
    const int64_t workers = (int64_t)starpu_worker_get_count();
    int64_t chunk = volume / (4 * (workers > 0 ? workers : 1));
    if (chunk < 4096) chunk = 4096;
    return chunk < volume ? chunk : volume;
}

/* Runs the build tasks over the host arrays A and Ainv (volume x 72 doubles); *bad receives
 * the smallest singular site or TQ_CLOVER_BUILD_OK. */
static tq_status build_tasks(const tq_lattice *lat, double *links, double kappa, double csw, double *A,
                             double *Ainv, uint64_t *bad)
{
    const char *who = "tq_clover_build";
    const int64_t volume = lat->local_volume, chunk = build_chunk(volume);
    const int64_t ntasks = (volume + chunk - 1) / chunk;
    uint64_t *status = malloc((size_t)ntasks * sizeof *status);
    tq_clover_build_args *args = malloc(sizeof *args);
    if (!status || !args) {
        free(status); free(args);
        return tq_error(TQ_ERR_NOMEM, "%s: out of memory for %lld build tasks", who, (long long)ntasks);
    }
    memcpy(args->dims, lat->local, sizeof args->dims);
    args->kappa = kappa;
    args->csw = csw;
    sigma_matrices(args->sigma);
    starpu_data_handle_t hl, ha, hai, hs;
    const size_t site = TQ_CLOVER_REALS * sizeof(double);
    starpu_vector_data_register(&hl, STARPU_MAIN_RAM, (uintptr_t)links, (uint32_t)(volume * 4), 18 * sizeof(double));
    starpu_vector_data_register(&ha, STARPU_MAIN_RAM, (uintptr_t)A, (uint32_t)volume, site);
    starpu_vector_data_register(&hai, STARPU_MAIN_RAM, (uintptr_t)Ainv, (uint32_t)volume, site);
    starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)status, (uint32_t)ntasks, sizeof *status);
    struct starpu_data_filter by_chunk = {.filter_func = starpu_vector_filter_list_long,
                                          .nchildren = (unsigned)ntasks};
    long *lengths = malloc((size_t)ntasks * sizeof *lengths);
    tq_status st = TQ_SUCCESS;
    if (!lengths) st = tq_error(TQ_ERR_NOMEM, "%s: out of memory for %lld build tasks", who, (long long)ntasks);
    if (st == TQ_SUCCESS) {
        for (int64_t t = 0; t < ntasks; t++) lengths[t] = (long)(t + 1 < ntasks ? chunk : volume - t * chunk);
        by_chunk.filter_arg_ptr = lengths;
        starpu_data_partition(ha, &by_chunk);
        starpu_data_partition(hai, &by_chunk);
        struct starpu_data_filter one_each = {.filter_func = starpu_vector_filter_block, .nchildren = (unsigned)ntasks};
        starpu_data_partition(hs, &one_each);
        for (int64_t t = 0; t < ntasks && st == TQ_SUCCESS; t++) {
            args->first = t * chunk;
            args->count = lengths[t];
            int ret = tq_task_clover_build(args, hl, starpu_data_get_sub_data(ha, 1, (unsigned)t),
                                           starpu_data_get_sub_data(hai, 1, (unsigned)t),
                                           starpu_data_get_sub_data(hs, 1, (unsigned)t));
            if (ret) st = tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
        starpu_data_unpartition(ha, STARPU_MAIN_RAM);
        starpu_data_unpartition(hai, STARPU_MAIN_RAM);
        starpu_data_unpartition(hs, STARPU_MAIN_RAM);
    }
    starpu_data_unregister(hl);
    starpu_data_unregister(ha);
    starpu_data_unregister(hai);
    starpu_data_unregister(hs);
    *bad = TQ_CLOVER_BUILD_OK;
    if (st == TQ_SUCCESS)
        for (int64_t t = 0; t < ntasks; t++)
            if (status[t] < *bad) *bad = status[t];
    free(lengths);
    free(status);
    free(args);
    return st;
}

tq_status tq_clover_build(const tq_field *gauge, double kappa, double csw, tq_field **A,
                          tq_field **Ainv)
{
    const char *who = "tq_clover_build";
    *A = *Ainv = NULL;
    const tq_lattice *lat = gauge->lat;
    tq_host_gauge g;
    TQ_CHECK(tq_host_gauge_alloc(&g, lat->local));
    tq_status st = tq_gauge_field_export(gauge, &g);
    double *host = NULL, *host_inv = NULL;
    if (st == TQ_SUCCESS) {
        host = malloc((size_t)lat->local_volume * TQ_CLOVER_REALS * sizeof *host);
        host_inv = malloc((size_t)lat->local_volume * TQ_CLOVER_REALS * sizeof *host_inv);
        if (!host || !host_inv)
            st = tq_error(TQ_ERR_NOMEM, "%s: out of memory for %lld clover sites", who, (long long)lat->local_volume);
    }
    uint64_t bad = TQ_CLOVER_BUILD_OK;
    if (st == TQ_SUCCESS) st = build_tasks(lat, g.links, kappa, csw, host, host_inv, &bad);
    if (st == TQ_SUCCESS && bad != TQ_CLOVER_BUILD_OK) {
        int x[4];
        uint64_t r = bad;
        for (int mu = 0; mu < 4; mu++) { x[mu] = (int)(r % (uint64_t)lat->local[mu]); r /= (uint64_t)lat->local[mu]; }
        st = tq_error(TQ_ERR_INVALID_ARG, "%s: the clover term is singular at site (%d,%d,%d,%d) (kappa %g, c_sw %g)",
                      who, x[0], x[1], x[2], x[3], kappa, csw);
    }
    if (st == TQ_SUCCESS) st = clover_field(gauge, A);
    if (st == TQ_SUCCESS) st = clover_field(gauge, Ainv);
    if (st == TQ_SUCCESS) st = tq_field_import(*A, host);
    if (st == TQ_SUCCESS) st = tq_field_import(*Ainv, host_inv);
    free(host);
    free(host_inv);
    tq_host_gauge_free(&g);
    if (st != TQ_SUCCESS) {
        tq_field_destroy(*A);
        tq_field_destroy(*Ainv);
        *A = *Ainv = NULL;
    }
    return st;
}
