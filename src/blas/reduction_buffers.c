/* The reduction buffers of a solve's scalars (tq_scalars, blas_internal.h): the BLAS
 * reductions' per-task scratch, the split epilogues' scratch (zeroed: its counter) and
 * their entries in place. Pools that grow to the largest request and live as long as the
 * scalars. */
#include "blas/blas_internal.h"

#include <stdlib.h>

tq_status tq_scalars_scratch(tq_scalars *sc, int n, starpu_data_handle_t **scratch)
{
    if (n > sc->nscratch) {
        starpu_data_handle_t *p = realloc(sc->scratch, (size_t)n * sizeof *p);
        if (!p) return tq_error(TQ_ERR_NOMEM, "solver: out of memory for reduction buffers");
        sc->scratch = p;
        for (int t = sc->nscratch; t < n; t++) starpu_vector_data_register(&p[t], -1, 0, TQ_REDUCE_SCRATCH, sizeof(double));
        sc->nscratch = n;
    }
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
