/* Lattice geometry, the distribution layer: global dimensions, the 4-D grid of MPI ranks,
 * each rank's local dimensions, and the split of the global lattice into blocks (the unit
 * of StarPU data and of ownership). Blocks are numbered globally (x fastest) and every rank
 * knows all of them: a block belongs to the rank whose local volume holds it, and the same
 * global block extent gives the same blocks, the same tasks and the same bits on any number
 * of ranks. */
#include "core/field_internal.h"

#include <stdlib.h>
#include <string.h>
#ifdef TQ_HAVE_MPI
#include <mpi.h>
#endif

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

/* The rank grid for nranks ranks when none is given: the factorisation whose local volumes
 * have the smallest face area (the sites a rank exchanges), among those that divide the
 * dimensions into even local extents; of equal ones, the one splitting t most. Returns 0
 * or -1 when no grid fits. */
static int choose_procs(const int dims[4], int nranks, int procs[4])
{
    int64_t best = -1;
    int p[4];
    for (p[0] = 1; p[0] <= nranks; p[0]++) {
        if (nranks % p[0]) continue;
        for (p[1] = 1; p[1] <= nranks / p[0]; p[1]++) {
            if ((nranks / p[0]) % p[1]) continue;
            for (p[2] = 1; p[2] <= nranks / (p[0] * p[1]); p[2]++) {
                if ((nranks / (p[0] * p[1])) % p[2]) continue;
                p[3] = nranks / (p[0] * p[1] * p[2]);
                int ok = 1;
                int64_t area = 0, vol = 1;
                for (int mu = 0; mu < 4; mu++) {
                    ok &= dims[mu] % p[mu] == 0 && (dims[mu] / p[mu]) % 2 == 0;
                    if (ok) vol *= dims[mu] / p[mu];
                }
                if (!ok) continue;
                for (int mu = 0; mu < 4; mu++)
                    if (p[mu] > 1) area += 2 * vol / (dims[mu] / p[mu]);
                /* <: the first of equal candidates, which splits t most (x, y, z grow later) */
                if (best < 0 || area < best) { best = area; memcpy(procs, p, sizeof p); }
            }
        }
    }
    return best < 0 ? -1 : 0;
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
    /* over a group of ranks (a split grid's sub-grid) the grid is the group's */
    const int all = tq_is_initialized() ? tq_internal_mpi_size() : 1;
    if (p->group_ranks < 0 || (p->group_ranks > 0 && all % p->group_ranks))
        return tq_error(TQ_ERR_INVALID_ARG, "lattice: groups of %d ranks do not split the %d running rank(s)", p->group_ranks,
                        all);
    const int grouped = p->group_ranks > 0 && p->group_ranks < all;
    int size = grouped ? p->group_ranks : all;
    for (int mu = 0; mu < 4; mu++) {
        L.dims[mu] = p->dims[mu];
        if (L.dims[mu] <= 0)
            return tq_error(TQ_ERR_INVALID_ARG, "lattice: dimension %c is %d (must be positive)", dirname[mu], L.dims[mu]);
    }
    if (procs_given) memcpy(L.procs, p->procs, sizeof L.procs);
    else if (size == 1) L.procs[0] = L.procs[1] = L.procs[2] = L.procs[3] = 1;
    else if (choose_procs(L.dims, size, L.procs))
        return tq_error(TQ_ERR_INVALID_ARG, "lattice: no grid of %d ranks divides %dx%dx%dx%d into even local extents", size,
                        L.dims[0], L.dims[1], L.dims[2], L.dims[3]);
    for (int mu = 0; mu < 4; mu++) {
        if (L.procs[mu] <= 0 || L.dims[mu] % L.procs[mu])
            return tq_error(TQ_ERR_INVALID_ARG, "lattice: process grid %d does not divide dimension %c = %d", L.procs[mu], dirname[mu], L.dims[mu]);
        L.local[mu] = L.dims[mu] / L.procs[mu];
        if (L.local[mu] % 2)
            return tq_error(TQ_ERR_INVALID_ARG, "lattice: local extent in %c is %d; it must be even for even-odd ordering", dirname[mu], L.local[mu]);
    }
    int nproc = L.procs[0] * L.procs[1] * L.procs[2] * L.procs[3];
    if (nproc != size)
        return tq_error(TQ_ERR_INVALID_ARG, "lattice: process grid %dx%dx%dx%d has %d processes but %d MPI rank(s) %s",
                        L.procs[0], L.procs[1], L.procs[2], L.procs[3], nproc, size,
                        grouped ? "are in its group (group_ranks)" : "are running");
    if (block_given) {
        for (int mu = 0; mu < 4; mu++) {
            int b = p->block[mu];
            if (b <= 0 || b % 2 || L.local[mu] % b)
                return tq_error(TQ_ERR_INVALID_ARG, "lattice: block extent %d in %c must be even and divide the local extent %d%s", b,
                                dirname[mu], L.local[mu], L.procs[mu] > 1 ? " (a block never straddles two ranks)" : "");
            L.block[mu] = b;
        }
    } else {
        choose_blocks(L.local, default_block_target(), L.block);
    }
    L.nblocks = 1;
    L.nlocal_blocks = 1;
    for (int mu = 0; mu < 4; mu++) {
        L.nbl[mu] = L.local[mu] / L.block[mu];
        L.nb[mu] = L.nbl[mu] * L.procs[mu];
        L.nblocks *= L.nb[mu];
        L.nlocal_blocks *= L.nbl[mu];
    }
    L.local_volume = tq_volume4(L.local);
    L.block_volume = tq_volume4(L.block);
    L.block_cb = L.block_volume / 2;
    /* kernels index the sites of a block with 32-bit integers on GPUs */
    if (L.block_volume >= ((int64_t)1 << 31))
        return tq_error(TQ_ERR_INVALID_ARG, "lattice: a block of %lld sites is too large (at most 2^31 - 1); use smaller blocks",
                        (long long)L.block_volume);
    /* this rank's position in the process grid (x fastest): in its group's grid, where the
     * lattice lies over a group (rank_base: the group's first rank among all) */
    int r = tq_is_initialized() ? tq_internal_mpi_rank() : 0;
    L.group_ranks = size;
    L.group = grouped ? r / size : 0;
    L.rank_base = L.group * (grouped ? size : 0);
    r -= L.rank_base;
    L.comm = grouped ? tq_internal_group_comm(size) : 0;
    if (L.comm < 0)
        return tq_error(TQ_ERR_RUNTIME, "lattice: no communicator for groups of %d ranks (at most %d group sizes)", size,
                        TQ_MAX_GROUP_COMMS);
    L.rank = r;
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
    memcpy(info->nblocks_dim, lat->nbl, sizeof info->nblocks_dim);
    memcpy(info->coords, lat->coords, sizeof info->coords);
    info->nblocks = lat->nlocal_blocks;
    info->nblocks_global = lat->nblocks;
    info->global_volume = tq_volume4(lat->dims);
    info->local_volume = lat->local_volume;
    info->block_volume = lat->block_volume;
    info->group_ranks = lat->group_ranks;
    info->group = lat->group;
    return TQ_SUCCESS;
}

/* Copies the local sites (x fastest) of the rank at grid coordinates c between its local
 * array and their places in a global array, one x-row at a time: to_global 1 writes global. */
static void copy_rank_sites(const tq_lattice *lat, const int c[4], double *local, double *global, int nreal,
                            int to_global)
{
    const int *L = lat->local, *D = lat->dims;
    const size_t row = (size_t)L[0] * (size_t)nreal * sizeof(double);
    for (int t = 0; t < L[3]; t++)
        for (int z = 0; z < L[2]; z++)
            for (int y = 0; y < L[1]; y++) {
                const int64_t g = (((int64_t)(c[3] * L[3] + t) * D[2] + c[2] * L[2] + z) * D[1] + c[1] * L[1] + y) * D[0] +
                                  (int64_t)c[0] * L[0];
                const int64_t l = (((int64_t)t * L[2] + z) * L[1] + y) * L[0];
                if (to_global) memcpy(global + g * nreal, local + l * nreal, row);
                else memcpy(local + l * nreal, global + g * nreal, row);
            }
}

tq_status tq_lattice_scatter_sites(const tq_lattice *lat, const double *global, double *local, int nreal)
{
    if (!lat || !global || !local || nreal <= 0) return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_scatter_sites: bad argument");
    copy_rank_sites(lat, lat->coords, local, (double *)global, nreal, 0);
    return TQ_SUCCESS;
}

tq_status tq_lattice_allgather_sites(const tq_lattice *lat, const double *local, double *global, int nreal)
{
    if (!lat || !global || !local || nreal <= 0) return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_allgather_sites: bad argument");
    const int nranks = tq_lattice_nprocs(lat);   /* those of its group */
    const size_t site = (size_t)nreal * sizeof(double);
    if (nranks == 1) {
        memcpy(global, local, (size_t)lat->local_volume * site);
        return TQ_SUCCESS;
    }
#ifdef TQ_HAVE_MPI
    const int64_t count = lat->local_volume * nreal;
    if (count > 0x7fffffff)
        return tq_error(TQ_ERR_UNSUPPORTED, "lattice: a rank's %lld reals are too many to gather in one message", (long long)count);
    double *all = malloc((size_t)nranks * (size_t)lat->local_volume * site);
    if (!all) return tq_error(TQ_ERR_NOMEM, "lattice: out of memory gathering %d ranks' sites", nranks);
    if (tq_internal_allgather_on(lat->comm, local, all, (int)count)) {
        free(all);
        return tq_error(TQ_ERR_RUNTIME, "lattice: MPI_Allgather failed");
    }
    /* rank r's local sites go to their global places */
    for (int r = 0; r < nranks; r++) {
        int c[4], q = r;
        for (int mu = 0; mu < 4; mu++) { c[mu] = q % lat->procs[mu]; q /= lat->procs[mu]; }
        copy_rank_sites(lat, c, all + (size_t)r * (size_t)lat->local_volume * (size_t)nreal, global, nreal, 1);
    }
    free(all);
    return TQ_SUCCESS;
#else
    return tq_error(TQ_ERR_UNSUPPORTED, "lattice: %d ranks in a build without MPI", nranks);
#endif
}

tq_status tq_lattice_groups_in_order(const tq_lattice *lat, double *v, int64_t n,
                                     tq_status (*step)(double *v, void *arg), void *arg)
{
    if (!lat || !v || n < 0 || !step)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_groups_in_order: NULL lattice, array or step, or negative count");
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_lattice_groups_in_order: call tq_init first");
    /* rank j of each group holds the same sites: the chain goes group to group, group_ranks apart */
    return tq_internal_in_order(lat->group_ranks, v, n, step, arg);
}
