/* Lattice geometry: global dimensions, MPI process grid, local dimensions and the split of
 * the local lattice into blocks, the unit of StarPU data. */
#include "core/field_internal.h"

#include <stdlib.h>
#include <string.h>

/* Default number of blocks: one per GPU when GPUs are present (a GPU wants a large
 * block: StarPU costs microseconds per task), else one per CPU worker. */
static int default_block_target(void)
{
    if (!tq_is_initialized()) return 1;
    int ncuda = (int)starpu_cuda_worker_get_count();
    int ncpu = (int)starpu_cpu_worker_get_count();
    return ncuda > 0 ? ncuda : (ncpu > 0 ? ncpu : 1);
}

/* Halve the largest block extent (t first on ties) until there are enough blocks; extents
 * stay even so that parity is the same inside every block. */
static void choose_blocks(const int local[4], int target, int block[4])
{
    memcpy(block, local, 4 * sizeof(int));
    int nblocks = 1;
    while (nblocks < target) {
        int best = -1;
        for (int mu = 3; mu >= 0; mu--)
            if (block[mu] % 4 == 0 && (best < 0 || block[mu] > block[best])) best = mu;
        if (best < 0) break;
        block[best] /= 2;
        nblocks *= 2;
    }
}

tq_status tq_lattice_create(const tq_lattice_params *p, tq_lattice **out)
{
    if (!p || !out) return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_create: NULL argument");
    *out = NULL;
    tq_lattice L;
    memset(&L, 0, sizeof L);
    static const char dirname[4] = {'x', 'y', 'z', 't'};
    int procs_given = p->procs[0] || p->procs[1] || p->procs[2] || p->procs[3];
    int block_given = p->block[0] || p->block[1] || p->block[2] || p->block[3];
    for (int mu = 0; mu < 4; mu++) {
        L.dims[mu] = p->dims[mu];
        L.procs[mu] = procs_given ? p->procs[mu] : 1;
        if (L.dims[mu] <= 0)
            return tq_error(TQ_ERR_INVALID_ARG, "lattice: dimension %c is %d (must be positive)", dirname[mu], L.dims[mu]);
        if (L.procs[mu] <= 0 || L.dims[mu] % L.procs[mu])
            return tq_error(TQ_ERR_INVALID_ARG, "lattice: process grid %d does not divide dimension %c = %d", L.procs[mu], dirname[mu], L.dims[mu]);
        L.local[mu] = L.dims[mu] / L.procs[mu];
        if (L.local[mu] % 2)
            return tq_error(TQ_ERR_INVALID_ARG, "lattice: local extent in %c is %d; it must be even for even-odd ordering", dirname[mu], L.local[mu]);
    }
    int nproc = L.procs[0] * L.procs[1] * L.procs[2] * L.procs[3];
    int size = tq_is_initialized() ? tq_internal_mpi_size() : 1;
    if (nproc != size)
        return tq_error(TQ_ERR_INVALID_ARG, "lattice: process grid has %d processes but %d MPI rank(s) are running", nproc, size);
    if (block_given) {
        for (int mu = 0; mu < 4; mu++) {
            int b = p->block[mu];
            if (b <= 0 || b % 2 || L.local[mu] % b)
                return tq_error(TQ_ERR_INVALID_ARG, "lattice: block extent %d in %c must be even and divide the local extent %d", b, dirname[mu], L.local[mu]);
            L.block[mu] = b;
        }
    } else {
        choose_blocks(L.local, default_block_target(), L.block);
    }
    L.nblocks = 1;
    for (int mu = 0; mu < 4; mu++) {
        L.nb[mu] = L.local[mu] / L.block[mu];
        L.nblocks *= L.nb[mu];
    }
    L.local_volume = tq_volume4(L.local);
    L.block_volume = tq_volume4(L.block);
    L.block_cb = L.block_volume / 2;
    /* kernels index the sites of a block with 32-bit integers on GPUs */
    if (L.block_volume >= ((int64_t)1 << 31))
        return tq_error(TQ_ERR_INVALID_ARG, "lattice: a block of %lld sites is too large (at most 2^31 - 1); use smaller blocks",
                        (long long)L.block_volume);
    /* this rank's position in the process grid (x fastest) */
    int r = tq_is_initialized() ? tq_internal_mpi_rank() : 0;
    for (int mu = 0; mu < 4; mu++) { L.coords[mu] = r % L.procs[mu]; r /= L.procs[mu]; }

    tq_lattice *lat = malloc(sizeof *lat);
    if (!lat) return tq_error(TQ_ERR_NOMEM, "tq_lattice_create: out of memory");
    *lat = L;
    *out = lat;
    return TQ_SUCCESS;
}

void tq_lattice_destroy(tq_lattice *lat)
{
    if (!lat) return;
    if (lat->nfields)
        tq_log(0, "warning: lattice destroyed while %d field(s) still use it", lat->nfields);
    free(lat);
}

tq_status tq_lattice_get_info(const tq_lattice *lat, tq_lattice_info *info)
{
    if (!lat || !info) return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_get_info: NULL argument");
    memcpy(info->dims, lat->dims, sizeof info->dims);
    memcpy(info->procs, lat->procs, sizeof info->procs);
    memcpy(info->local, lat->local, sizeof info->local);
    memcpy(info->block, lat->block, sizeof info->block);
    memcpy(info->nblocks_dim, lat->nb, sizeof info->nblocks_dim);
    info->nblocks = lat->nblocks;
    info->global_volume = tq_volume4(lat->dims);
    info->local_volume = lat->local_volume;
    info->block_volume = lat->block_volume;
    return TQ_SUCCESS;
}
