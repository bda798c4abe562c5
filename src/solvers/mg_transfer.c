/* Multigrid transfer between a level and the next (issue 28): the coarse lattice, the
 * null-vector basis and its block orthonormalisation, restriction and prolongation, each a
 * task per block (codelets/mg_transfer.c), checked against reference/mg_reference.h by
 * tests/test_mg_transfer. May call: src/core, tasks/. */
#include "solvers/mg_internal.h"
#include "tasks/tq_tasks.h"

#include <stdlib.h>
#include <string.h>

static const char dirname[4] = {'x', 'y', 'z', 't'};

int tq_mg_cycle_on_owners(void)
{
    /* TQ_MG_CPU=1: the cycle's codelets on CPU workers too (comparisons) */
    const char *env = getenv("TQ_MG_CPU");
    return !(env && env[0] == '1');
}

tq_task_options tq_mg_cycle_options(const tq_lattice *lat, int b)
{
    return tq_mg_cycle_on_owners() ? tq_internal_block_options(lat, b) : tq_mg_block_options(lat, b);
}

tq_task_options tq_mg_block_options(const tq_lattice *lat, int b) { return tq_internal_block_options_cpu(lat, b); }

tq_mg_transfer_args tq_mg_transfer_block_args(const tq_mg_transfer *t)
{
    tq_mg_transfer_args a;
    memset(&a, 0, sizeof a);
    memcpy(a.fine_block, t->fine->block, sizeof a.fine_block);
    memcpy(a.coarse_block, t->coarse->block, sizeof a.coarse_block);
    memcpy(a.agg, t->agg, sizeof a.agg);
    a.nvec = t->nvec;
    a.rows = t->fine_ndof / 12;
    a.fine_cb = t->fine->block_cb;
    a.coarse_cb = t->coarse->block_cb;
    a.Lb = t->basis->layout;
    return a;
}

tq_field_params tq_mg_coarse_params(const tq_mg_transfer *t, tq_precision prec)
{
    return (tq_field_params){TQ_FIELD_COARSE, prec, TQ_FULL, (tq_recon)0, 2 * t->nvec};
}

tq_status tq_mg_transfer_create(const char *who, tq_lattice *fine, int fine_ndof, const int agg[4], int nvec,
                                tq_precision prec, tq_mg_transfer **out)
{
    if (!fine || !agg || !out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    *out = NULL;
    if (fine_ndof <= 0 || fine_ndof % 12)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: fine vectors of %d complex per site (12 for spinors, else a multiple of 12)",
                        who, fine_ndof);
    if (nvec <= 0 || nvec % 6 || nvec > TQ_MG_MAX_NVEC)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d null vectors (a multiple of 6, at most %d)", who, nvec, TQ_MG_MAX_NVEC);
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    int agg_volume = 1;
    for (int mu = 0; mu < 4; mu++) {
        if (agg[mu] <= 0 || fine->block[mu] % agg[mu])
            return tq_error(TQ_ERR_INVALID_ARG, "%s: aggregate extent %d in %c does not divide the block extent %d", who, agg[mu],
                            dirname[mu], fine->block[mu]);
        if ((fine->block[mu] / agg[mu]) % 2)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: coarse block extent %d / %d = %d in %c is odd (even-odd ordering)", who,
                            fine->block[mu], agg[mu], fine->block[mu] / agg[mu], dirname[mu]);
        lp.dims[mu] = fine->dims[mu] / agg[mu];
        lp.procs[mu] = fine->procs[mu];
        lp.block[mu] = fine->block[mu] / agg[mu];
        agg_volume *= agg[mu];
    }
    lp.group_ranks = fine->group_ranks;   /* a coarse level lies where its fine one does */
    if (nvec > agg_volume * fine_ndof / 2)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d null vectors, but a chirality of an aggregate has %d degrees of freedom", who,
                        nvec, agg_volume * fine_ndof / 2);
    if (starpu_cpu_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: the multigrid transfer runs on CPU workers so far, and none is running", who);
    tq_mg_transfer *t = calloc(1, sizeof *t);
    if (!t) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    t->fine = fine;
    memcpy(t->agg, agg, sizeof t->agg);
    t->nvec = nvec;
    t->fine_ndof = fine_ndof;
    t->prec = prec;
    tq_status s = tq_lattice_create(&lp, &t->coarse);
    tq_field_params bp = {TQ_FIELD_COARSE, prec, TQ_FULL, (tq_recon)0, fine_ndof * nvec};
    if (s == TQ_SUCCESS) s = tq_field_create(fine, &bp, &t->basis);
    if (s != TQ_SUCCESS) {
        tq_mg_transfer_destroy(t);
        return s;
    }
    *out = t;
    return TQ_SUCCESS;
}

void tq_mg_transfer_destroy(tq_mg_transfer *t)
{
    if (!t) return;
    tq_field_destroy(t->basis);
    tq_lattice_destroy(t->coarse);
    free(t);
}

static tq_status check_fine(const char *who, const tq_mg_transfer *t, const tq_field *f)
{
    if (!f) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL field", who);
    if (f->lat != t->fine) return tq_error(TQ_ERR_MISMATCH, "%s: the fine field is not on the transfer's fine lattice", who);
    const int ndof = f->p.kind == TQ_FIELD_SPINOR ? 12 : f->p.kind == TQ_FIELD_COARSE ? f->p.ndof : 0;
    if (ndof != t->fine_ndof || f->p.subset != TQ_FULL)
        return tq_error(TQ_ERR_MISMATCH, "%s: the fine field must cover both parities with %d complex per site", who, t->fine_ndof);
    return TQ_SUCCESS;
}

static tq_status check_coarse(const char *who, const tq_mg_transfer *t, const tq_field *c)
{
    if (!c) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL field", who);
    if (c->lat != t->coarse) return tq_error(TQ_ERR_MISMATCH, "%s: the coarse field is not on the transfer's coarse lattice", who);
    if (c->p.kind != TQ_FIELD_COARSE || c->p.ndof != 2 * t->nvec || c->p.subset != TQ_FULL)
        return tq_error(TQ_ERR_MISMATCH, "%s: the coarse field must be a full coarse field of %d complex per site", who, 2 * t->nvec);
    return TQ_SUCCESS;
}

void tq_mg_field_pair(const tq_field *f, int b, starpu_data_handle_t h[2])
{
    h[0] = tq_field_handle(f, b, 0);
    h[1] = tq_field_handle(f, b, 1);
}

tq_status tq_mg_transfer_set_basis(tq_mg_transfer *t, tq_field *const *vectors)
{
    const char *who = "tq_mg_transfer_set_basis";
    if (!t || !vectors) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    for (int k = 0; k < t->nvec; k++) {
        tq_status s = check_fine(who, t, vectors[k]);
        if (s != TQ_SUCCESS) return s;
    }
    /* The GPU's orthonormalisation reads and writes single complex values, which a
     * half-precision site (one norm for its row) does not allow: a half basis is made and
     * orthonormalised in single, where the cycle runs, then stored in half. */
    tq_field *basis = t->basis;
    if (t->basis->p.prec == TQ_HALF) {
        tq_field_params sp = t->basis->p;
        sp.prec = TQ_SINGLE;
        TQ_CHECK(tq_field_create(t->fine, &sp, &basis));
    }
    const int nb = t->fine->nblocks;
    int64_t *status = calloc((size_t)nb, sizeof *status);
    if (!status) {
        if (basis != t->basis) tq_field_destroy(basis);
        return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    }
    int ret = 0;
    for (int k = 0; k < t->nvec && !ret; k++)
        for (int b = 0; b < nb && !ret; b++) {
            tq_mg_transfer_args a = tq_mg_transfer_block_args(t);
            a.k = k;
            a.Lf = vectors[k]->layout;
            starpu_data_handle_t v[2], B[2];
            a.Lb = basis->layout;
            tq_mg_field_pair(vectors[k], b, v);
            tq_mg_field_pair(basis, b, B);
            const tq_task_options o = tq_mg_cycle_options(t->fine, b);
            ret = tq_task_mg_basis_put(&o, &a, v, B);
        }
    starpu_data_handle_t hs = NULL;
    if (!ret) {
        starpu_vector_data_register(&hs, STARPU_MAIN_RAM, (uintptr_t)status, (uint32_t)nb, sizeof *status);
        struct starpu_data_filter one_each = {.filter_func = starpu_vector_filter_block, .nchildren = (unsigned)nb};
        starpu_data_partition(hs, &one_each);
        for (int b = 0; b < nb && !ret; b++) {
            tq_mg_transfer_args a = tq_mg_transfer_block_args(t);
            a.Lb = basis->layout;
            starpu_data_handle_t B[2];
            tq_mg_field_pair(basis, b, B);
            const tq_task_options o = tq_mg_cycle_options(t->fine, b);
            ret = tq_task_mg_orthonormalise(&o, &a, B, starpu_data_get_sub_data(hs, 1, (unsigned)b));
        }
        starpu_data_unpartition(hs, STARPU_MAIN_RAM);   /* waits for the tasks */
        starpu_data_unregister(hs);
    }
    tq_status copied = TQ_SUCCESS;
    if (basis != t->basis) {
        if (!ret) copied = tq_blas_copy(t->basis, basis);
        tq_field_destroy(basis);
    }
    /* each rank saw its own blocks (the others' entries stay 0) */
    double counts[2] = {0, 0};
    for (int b = 0; b < nb; b++) counts[status[b] < 0] += status[b] < 0 ? 1 : (double)status[b];
    free(status);
    tq_lattice_allreduce_sum(t->fine, counts, 2);
    if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
    if (copied != TQ_SUCCESS) return copied;
    if (counts[1] > 0) return tq_error(TQ_ERR_NOMEM, "%s: out of memory in an orthonormalisation task", who);
    if (counts[0] > 0)
        return tq_error(TQ_ERR_BREAKDOWN, "%s: %.0f null-vector part(s) are linearly dependent on the ones before them on an "
                        "aggregate and chirality (use more varied vectors or fewer of them)", who, counts[0]);
    return TQ_SUCCESS;
}

/* coarse = R fine (to_coarse) or fine = P coarse: a task per block */
static tq_status transfer_vector(const char *who, const tq_mg_transfer *t, const tq_field *fine, const tq_field *coarse,
                                 int to_coarse)
{
    if (!t) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL transfer", who);
    tq_status s = check_fine(who, t, fine);
    if (s == TQ_SUCCESS) s = check_coarse(who, t, coarse);
    if (s != TQ_SUCCESS) return s;
    int ret = 0;
    for (int b = 0; b < t->fine->nblocks && !ret; b++) {
        tq_mg_transfer_args a = tq_mg_transfer_block_args(t);
        a.Lf = fine->layout;
        a.Lc = coarse->layout;
        starpu_data_handle_t f[2], B[2], c[2];
        tq_mg_field_pair(fine, b, f);
        tq_mg_field_pair(t->basis, b, B);
        tq_mg_field_pair(coarse, b, c);
        const tq_task_options o = tq_mg_cycle_options(t->fine, b);
        ret = to_coarse ? tq_task_mg_restrict(&o, &a, f, B, c) : tq_task_mg_prolong(&o, &a, c, B, f);
    }
    return ret ? tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret) : TQ_SUCCESS;
}

tq_status tq_mg_restrict(const tq_mg_transfer *t, const tq_field *fine, tq_field *coarse)
{
    return transfer_vector("tq_mg_restrict", t, fine, coarse, 1);
}

tq_status tq_mg_prolong(const tq_mg_transfer *t, const tq_field *coarse, tq_field *fine)
{
    return transfer_vector("tq_mg_prolong", t, fine, coarse, 0);
}
