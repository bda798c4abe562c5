/* Lattices over groups of ranks (a split grid's sub-grids; run by test_mpi.sh under mpirun
 * -np 4): a lattice over groups of 2 puts each pair of ranks (0 1, 2 3) on its own copy, with
 * its own grid and collectives; the groups do different amounts of work on it (group 0
 * three norms, group 1 one, each reduction moving partial sums between the group's two
 * ranks through StarPU-MPI), and afterwards a lattice over all four ranks still pairs its
 * transfers up (each group's transfers are counted apart). The sites gathered over a group
 * are that group's field; tq_lattice_groups_in_order goes from group 0 to group 1. Run
 * without MPI or on another rank count it skips. */
#include "tq_test.h"

/* A field of dims 4 4 4 8 over lat whose every real is val; its norm2 against the count. */
static void check_norm(tq_lattice *lat, double val, const char *what, int rank)
{
    tq_lattice_info li;
    CHECK_OK(tq_lattice_get_info(lat, &li));
    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
    tq_field *x = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &x));
    const int64_t n = li.local_volume * 24;
    double *h = malloc((size_t)n * sizeof *h);
    if (x && h) {
        for (int64_t i = 0; i < n; i++) h[i] = val;
        CHECK_OK(tq_field_import(x, h));
        double n2 = 0;
        CHECK_OK(tq_blas_norm2(x, &n2));
        const double want = (double)li.global_volume * 24 * val * val;
        CHECK(n2 == want, "rank %d: %s: norm2 %.17g, expected %.17g", rank, what, n2, want);
    }
    free(h);
    tq_field_destroy(x);
}

static tq_status group_step(double *v, void *arg)
{
    const int group = *(const int *)arg;
    v[0] = (v[0] + group + 1) * 10;
    return TQ_SUCCESS;
}

int main(int argc, char **argv)
{
    tq_runtime_info ri;
    const int start = tq_test_mpi_start("test_mpi_groups", 4, &argc, argv, &ri);
    if (start) return start;
    const int rank = ri.mpi_rank, group = rank / 2;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    lp.dims[0] = lp.dims[1] = lp.dims[2] = 4;
    lp.dims[3] = 8;
    lp.block[0] = lp.block[1] = lp.block[2] = lp.block[3] = 4;
    lp.group_ranks = 2;
    tq_lattice *pair = NULL;
    CHECK_OK(tq_lattice_create(&lp, &pair));
    if (pair) {
        tq_lattice_info li;
        CHECK_OK(tq_lattice_get_info(pair, &li));
        CHECK(li.group_ranks == 2 && li.group == group && li.procs[3] == 2 && li.coords[3] == rank % 2 &&
              li.local_volume * 2 == li.global_volume,
              "rank %d: group lattice: group_ranks %d, group %d, grid t %d, coord t %d, local volume %lld of %lld", rank,
              li.group_ranks, li.group, li.procs[3], li.coords[3], (long long)li.local_volume, (long long)li.global_volume);
        int owner = -1;
        CHECK_OK(tq_lattice_block_owner(pair, li.nblocks_global - 1, &owner, NULL, 0));
        CHECK(owner == 2 * group + 1, "rank %d: the group's last block on rank %d (expected %d)", rank, owner, 2 * group + 1);
        /* different work per group: each norm moves partial sums inside the group */
        for (int pass = 0; pass < (group == 0 ? 3 : 1); pass++) check_norm(pair, group + pass + 1.0, "group lattice", rank);
        /* the group's sites, gathered over the group alone: each rank's own value */
        double both[2] = {-1, -1};
        const int64_t nsite = li.local_volume;
        double *local = malloc((size_t)nsite * sizeof *local), *global = malloc((size_t)nsite * 2 * sizeof *global);
        if (local && global) {
            for (int64_t s = 0; s < nsite; s++) local[s] = rank;
            CHECK_OK(tq_lattice_allgather_sites(pair, local, global, 1));
            both[0] = global[0];                    /* t = 0: the group's first rank */
            both[1] = global[2 * nsite - 1];        /* last t: its second */
            CHECK(both[0] == 2 * group && both[1] == 2 * group + 1, "rank %d: gathered over the group: %g %g", rank, both[0],
                  both[1]);
        }
        free(local);
        free(global);
        double v = 0;
        CHECK_OK(tq_lattice_groups_in_order(pair, &v, 1, group_step, (void *)&group));
        CHECK(v == 120, "rank %d: groups in order gave %g (expected 120)", rank, v);
        tq_lattice_destroy(pair);
    }
    /* a lattice over all four ranks afterwards (2^4 blocks: every local extent is 2 or 4): its
     * transfers pair up */
    lp.group_ranks = 0;
    lp.block[0] = lp.block[1] = lp.block[2] = lp.block[3] = 2;
    tq_lattice *all = NULL;
    CHECK_OK(tq_lattice_create(&lp, &all));
    if (all) {
        check_norm(all, 0.5, "lattice over all ranks after the groups' work", rank);
        tq_lattice_destroy(all);
    }
    tq_finalize();
    char name[64];
    snprintf(name, sizeof name, "test_mpi_groups (rank %d)", rank);
    return tq_test_finish(name);
}
