/* The clover term A(x) = 1 + kappa c_sw sum_{mu<nu} sigma_{mu nu} (i F_{mu nu}(x)) and its
 * inverse (kernels/clover_build_site.h), built once per operator in double by one task per
 * block and parity, on whatever worker the placement allows, straight into the two clover
 * fields (layout: kernels/clover_site.h) in their precision. The tasks read the whole local
 * gauge field in the host API layout (exported once), so no link halo is needed. */
#include "dirac/dirac_internal.h"

#include "kernels/dslash_wilson_site.h"

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

static tq_status clover_field(const tq_field *gauge, tq_precision prec, tq_field **f)
{
    tq_field_params fp = {TQ_FIELD_CLOVER, prec, TQ_FULL, (tq_recon)0, 0};
    return tq_field_create(gauge->lat, &fp, f);
}

/* One build task per block and parity, writing the clover fields in place; *bad receives
 * the smallest singular site or TQ_CLOVER_BUILD_OK. */
static tq_status build_tasks(const tq_lattice *lat, double *links, double kappa, double csw, tq_field *A,
                             tq_field *Ainv, uint64_t *bad)
{
    const char *who = "tq_clover_build";
    const int ntasks = lat->nblocks * 2;
    uint64_t *status = malloc((size_t)ntasks * sizeof *status);
    tq_clover_build_args *args = malloc(sizeof *args);
    if (!status || !args) {
        free(status); free(args);
        return tq_error(TQ_ERR_NOMEM, "%s: out of memory for %d build tasks", who, ntasks);
    }
    memcpy(args->dims, lat->dims, sizeof args->dims);   /* links: the global lattice's */
    memcpy(args->block, lat->block, sizeof args->block);
    args->cb = lat->block_cb;
    args->kappa = kappa;
    args->csw = csw;
    args->L = A->layout;
    sigma_matrices(args->sigma);
    starpu_data_handle_t hl, hs;
    for (int t = 0; t < ntasks; t++) status[t] = TQ_CLOVER_BUILD_OK;   /* the other ranks' blocks */
    starpu_vector_data_register(&hl, STARPU_MAIN_RAM, (uintptr_t)links, (uint32_t)(tq_volume4(lat->dims) * 4),
                                18 * sizeof(double));
    starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)status, (uint32_t)ntasks, sizeof *status);
    struct starpu_data_filter one_each = {.filter_func = starpu_vector_filter_block, .nchildren = (unsigned)ntasks};
    starpu_data_partition(hs, &one_each);
    tq_status st = TQ_SUCCESS;
    for (int b = 0; b < lat->nblocks && st == TQ_SUCCESS; b++) {
        tq_block_grid_coords(lat, b, args->origin);
        for (int mu = 0; mu < 4; mu++) args->origin[mu] *= lat->block[mu];
        for (int i = 0; i < 2 && st == TQ_SUCCESS; i++) {
            args->parity = A->parity[i];
            const tq_task_options opt = tq_internal_block_options(lat, b);
            int ret = tq_task_clover_build(&opt, args, hl, tq_field_handle(A, b, i), tq_field_handle(Ainv, b, i),
                                           starpu_data_get_sub_data(hs, 1, (unsigned)(2 * b + i)));
            if (ret) st = tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    }
    starpu_data_unpartition(hs, STARPU_MAIN_RAM);   /* waits for the tasks */
    starpu_data_unregister(hs);
    starpu_data_unregister(hl);
    *bad = TQ_CLOVER_BUILD_OK;
    if (st == TQ_SUCCESS)
        for (int t = 0; t < ntasks; t++)
            if (status[t] < *bad) *bad = status[t];
    /* each rank saw its own blocks' status: the first singular site of all */
    if (st == TQ_SUCCESS) *bad = tq_lattice_allreduce_min_u64(lat, *bad);
    free(status);
    free(args);
    return st;
}

tq_status tq_clover_build(const tq_field *gauge, double kappa, double csw, tq_field **A,
                          tq_field **Ainv)
{
    return tq_clover_build_prec(gauge, gauge->p.prec, kappa, csw, A, Ainv);
}

tq_status tq_clover_build_prec(const tq_field *gauge, tq_precision prec, double kappa, double csw, tq_field **A,
                               tq_field **Ainv)
{
    const char *who = "tq_clover_build";
    *A = *Ainv = NULL;
    const tq_lattice *lat = gauge->lat;
    /* the build reads neighbouring links: every rank works from the global field */
    tq_host_gauge g, local;
    TQ_CHECK(tq_host_gauge_alloc(&g, lat->dims));
    tq_status st;
    if (tq_volume4(lat->dims) == lat->local_volume) {
        st = tq_gauge_field_export(gauge, &g);
    } else if ((st = tq_host_gauge_alloc(&local, lat->local)) == TQ_SUCCESS) {
        st = tq_gauge_field_export(gauge, &local);
        if (st == TQ_SUCCESS) st = tq_lattice_allgather_sites(lat, local.links, g.links, 72);
        tq_host_gauge_free(&local);
    }
    if (st == TQ_SUCCESS) st = clover_field(gauge, prec, A);
    if (st == TQ_SUCCESS) st = clover_field(gauge, prec, Ainv);
    uint64_t bad = TQ_CLOVER_BUILD_OK;
    if (st == TQ_SUCCESS) st = build_tasks(lat, g.links, kappa, csw, *A, *Ainv, &bad);
    if (st == TQ_SUCCESS && bad != TQ_CLOVER_BUILD_OK) {
        int x[4];
        uint64_t r = bad;
        for (int mu = 0; mu < 4; mu++) { x[mu] = (int)(r % (uint64_t)lat->dims[mu]); r /= (uint64_t)lat->dims[mu]; }
        st = tq_error(TQ_ERR_INVALID_ARG, "%s: the clover term is singular at site (%d,%d,%d,%d) (kappa %g, c_sw %g)",
                      who, x[0], x[1], x[2], x[3], kappa, csw);
    }
    tq_host_gauge_free(&g);
    if (st != TQ_SUCCESS) {
        tq_field_destroy(*A);
        tq_field_destroy(*Ainv);
        *A = *Ainv = NULL;
    }
    return st;
}
