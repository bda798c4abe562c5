/* The reduction buffers of a solve's scalars (tq_scalars, blas_internal.h): the BLAS
 * reductions' partial sums and per-task scratch, the split epilogues' partial sums, scratch
 * (zeroed: its counter) and entries in place. Pools that grow to the largest request and
 * live as long as the scalars. */
#include "blas/blas_internal.h"

#include <stdlib.h>

/* Grows the pool *pool of *count vector handles of len doubles (no home memory) to n. */
static tq_status grow_vectors(starpu_data_handle_t **pool, int *count, int n, uint32_t len)
{
    if (n <= *count) return TQ_SUCCESS;
    starpu_data_handle_t *p = realloc(*pool, (size_t)n * sizeof *p);
    if (!p) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for reduction buffers");
    *pool = p;
    for (int t = *count; t < n; t++) starpu_vector_data_register(&p[t], -1, 0, len, sizeof(double));
    *count = n;
    return TQ_SUCCESS;
}

tq_status tq_scalars_partials(tq_scalars *sc, int n, starpu_data_handle_t **partials)
{
    TQ_CHECK(grow_vectors(&sc->partials, &sc->npartials, 2 * n, TQ_BLAS_MAX_RESULTS));
    *partials = sc->partials + (sc->reductions++ & 1) * n;
    return TQ_SUCCESS;
}

/* Apart from the BLAS reductions' pool: in peer mode a BLAS reduction's partial handles
 * stay on their block's GPU (the other GPUs' combines read them through peer memory), but
 * every replica's combine reads a split epilogue's, so they go to every GPU. Sharing one
 * pool (sets of nblocks and of 2 nblocks handles, in turn) made them overlap once a
 * reliable update had shifted the turns; then a BLAS task writing a handle another GPU's
 * split combine had read waited (StarPU) for the end of the chain task holding that
 * combine, where the same GPU's peer combine of that very BLAS reduction waited on its
 * stream for the task: two GPUs of one process hung (test_solver_cuda, 2 x H200,
 * doc/design.md). Here a split epilogue's task overwrites only what split combines read,
 * two epilogues before. */
tq_status tq_scalars_epilogue_partials(tq_scalars *sc, int n, starpu_data_handle_t **partials)
{
    TQ_CHECK(grow_vectors(&sc->epartials, &sc->nepartials, 2 * n, TQ_BLAS_MAX_RESULTS));
    *partials = sc->epartials + (sc->epilogue_reductions++ & 1) * n;
    return TQ_SUCCESS;
}

tq_status tq_scalars_scratch(tq_scalars *sc, int n, starpu_data_handle_t **scratch)
{
    TQ_CHECK(grow_vectors(&sc->scratch, &sc->nscratch, n, TQ_REDUCE_SCRATCH));
    *scratch = sc->scratch;
    return TQ_SUCCESS;
}

tq_status tq_scalars_epilogue_scratch(tq_scalars *sc, int n, starpu_data_handle_t **scratch)
{
    if (n > sc->nescratch) {
        starpu_data_handle_t *p = realloc(sc->escratch, (size_t)n * sizeof *p);
        if (p) sc->escratch = p;
        double **b = p ? realloc(sc->escratch_buf, (size_t)n * sizeof *b) : NULL;
        if (b) sc->escratch_buf = b;
        if (!p || !b) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for reduction buffers");
        for (int t = sc->nescratch; t < n; t++) {
            b[t] = calloc(TQ_REDUCE_SCRATCH, sizeof(double));
            if (!b[t]) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for reduction buffers");
            starpu_vector_data_register(&p[t], STARPU_MAIN_RAM, (uintptr_t)b[t], TQ_REDUCE_SCRATCH, sizeof(double));
            sc->nescratch = t + 1;
        }
    }
    *scratch = sc->escratch;
    return TQ_SUCCESS;
}

tq_status tq_scalars_epilogue_entries(tq_scalars *sc, const tq_lattice *lat, starpu_data_handle_t **entries)
{
    /* the exterior entries of a block (tq_face_total): both faces of each split direction */
    int64_t nent = 0;
    for (int mu = 0; mu < 4; mu++)
        if (lat->nb[mu] > 1) nent += 2 * (lat->block_cb / lat->block[mu]);
    const size_t len = (size_t)(nent > 0 ? nent : 1) * TQ_EPI_MAX_RESULTS;
    if (lat->nblocks > sc->nentries || len > sc->entries_len) {
        /* the largest asked so far: lattices taking turns do not re-register every call */
        const int n = lat->nblocks > sc->nentries ? lat->nblocks : sc->nentries;   /* by block */
        const size_t want = len > sc->entries_len ? len : sc->entries_len;
        for (int t = 0; t < sc->nentries; t++) starpu_data_unregister_no_coherency(sc->entries[t]);
        sc->nentries = 0;
        starpu_data_handle_t *p = realloc(sc->entries, (size_t)n * sizeof *p);
        if (!p) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for reduction buffers");
        sc->entries = p;
        for (int t = 0; t < n; t++) starpu_vector_data_register(&p[t], -1, 0, (uint32_t)want, sizeof(double));
        sc->nentries = n;
        sc->entries_len = want;
    }
    *entries = sc->entries;
    return TQ_SUCCESS;
}

void tq_scalars_buffers_release(tq_scalars *sc)
{
    for (int t = 0; t < sc->npartials; t++) starpu_data_unregister(sc->partials[t]);
    free(sc->partials);
    for (int t = 0; t < sc->nepartials; t++) starpu_data_unregister(sc->epartials[t]);
    free(sc->epartials);
    for (int t = 0; t < sc->nscratch; t++) starpu_data_unregister_no_coherency(sc->scratch[t]);
    free(sc->scratch);
    for (int t = 0; t < sc->nescratch; t++) {
        starpu_data_unregister_no_coherency(sc->escratch[t]);
        free(sc->escratch_buf[t]);
    }
    free(sc->escratch);
    free(sc->escratch_buf);
    for (int t = 0; t < sc->nentries; t++) starpu_data_unregister_no_coherency(sc->entries[t]);
    free(sc->entries);
}
