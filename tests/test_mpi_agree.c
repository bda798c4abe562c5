/* tq_status_agree on 2 MPI ranks (run by test_mpi.sh under mpirun -np 2): a step that fails
 * on one rank only (reading a file that does not exist) gives every rank that rank's error
 * and message, so none of them goes on into a collective step alone; when both fail, the
 * lowest rank's verdict wins; when both succeed, success. Afterwards a collective
 * reduction still works (no rank left behind in a collective). A lattice over a group of
 * one rank (a split grid's): each rank its own whole copy, a different amount of work on
 * each with no collective, a process grid larger than the group and groups that do not
 * split the ranks refused; tq_lattice_groups_in_order runs its steps in group order and
 * spreads one rank's failure. Run without MPI it skips. */
#include "tq_test.h"
#include "core/tq_internal.h"   /* tq_error: a failure with a message of its own on each rank */

/* Rank r's lattice of its own: rank 0 runs three norms on its copy, rank 1 one, with
 * different data; none waits for the other (no collective), each sum is its own. */
static tq_lattice *check_group_of_one(int rank)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    lp.dims[0] = lp.dims[1] = lp.dims[2] = 4;
    lp.dims[3] = 8;
    lp.block[0] = lp.block[1] = lp.block[2] = lp.block[3] = 4;
    lp.group_ranks = 1;
    lp.procs[0] = lp.procs[1] = lp.procs[2] = 1;
    lp.procs[3] = 2;
    tq_lattice *lat = NULL;
    CHECK(tq_lattice_create(&lp, &lat) == TQ_ERR_INVALID_ARG && !lat, "rank %d: a grid of 2 ranks in a group of 1 accepted",
          rank);
    CHECK(strstr(tq_last_error(), "in its group") != NULL, "rank %d: message %s", rank, tq_last_error());
    memset(lp.procs, 0, sizeof lp.procs);
    lp.group_ranks = 3;
    CHECK(tq_lattice_create(&lp, &lat) == TQ_ERR_INVALID_ARG && !lat, "rank %d: groups of 3 of 2 ranks accepted", rank);
    CHECK(strstr(tq_last_error(), "groups of 3 ranks do not split the 2") != NULL, "rank %d: message %s", rank,
          tq_last_error());
    lp.group_ranks = 1;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    if (!lat) return NULL;
    tq_lattice_info li;
    CHECK_OK(tq_lattice_get_info(lat, &li));
    CHECK(li.group_ranks == 1 && li.group == rank && li.local_volume == li.global_volume && li.nblocks == 2 &&
          li.coords[3] == 0, "rank %d: group of one: group_ranks %d, group %d, local volume %lld of %lld, %d blocks", rank,
          li.group_ranks, li.group, (long long)li.local_volume, (long long)li.global_volume, li.nblocks);
    int owner_rank = -1;
    CHECK_OK(tq_lattice_block_owner(lat, 1, &owner_rank, NULL, 0));
    CHECK(owner_rank == rank, "rank %d: block 1 held by rank %d", rank, owner_rank);
    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
    tq_field *x = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &x));
    const int64_t n = li.local_volume * 24;
    double *h = malloc((size_t)n * sizeof *h);
    if (x && h) {
        for (int pass = 0; pass < (rank == 0 ? 3 : 1); pass++) {
            for (int64_t i = 0; i < n; i++) h[i] = (double)(rank + pass + 1);
            CHECK_OK(tq_field_import(x, h));
            double n2 = 0;
            CHECK_OK(tq_blas_norm2(x, &n2));
            const double want = (double)n * (rank + pass + 1) * (rank + pass + 1);
            CHECK(n2 == want, "rank %d pass %d: group-of-one norm2 %.17g, expected %.17g", rank, pass, n2, want);
        }
    }
    free(h);
    tq_field_destroy(x);
    return lat;
}

/* tq_lattice_groups_in_order's steps over groups of one rank: v = (v + rank + 1) * 10 in
 * rank order gives 120 on 2 ranks (210 the other way round); a step failing on rank 1
 * reaches both. */
static tq_status in_order_step(double *v, void *arg)
{
    const int rank = *(const int *)arg;
    v[0] = (v[0] + rank + 1) * 10;
    v[1] = rank;
    return TQ_SUCCESS;
}

static tq_status failing_step(double *v, void *arg)
{
    (void)v;
    return *(const int *)arg == 1 ? tq_error(TQ_ERR_IO, "step failed on rank 1") : TQ_SUCCESS;
}

static void check_groups_in_order(const tq_lattice *lat, int rank)
{
    double v[2] = {0, -1};
    CHECK_OK(tq_lattice_groups_in_order(lat, v, 2, in_order_step, &rank));
    CHECK(v[0] == 120 && v[1] == 1, "rank %d: in order gave %g, %g (expected 120, 1)", rank, v[0], v[1]);
    CHECK(tq_lattice_groups_in_order(lat, v, 2, failing_step, &rank) == TQ_ERR_IO, "rank %d: rank 1's failed step not agreed",
          rank);
    CHECK(strstr(tq_last_error(), "rank 1: step failed on rank 1") != NULL, "rank %d: message %s", rank, tq_last_error());
    CHECK(tq_lattice_groups_in_order(lat, NULL, 2, in_order_step, &rank) == TQ_ERR_INVALID_ARG, "rank %d: NULL array accepted",
          rank);
}

int main(int argc, char **argv)
{
    tq_runtime_info ri;
    const int start = tq_test_mpi_start("test_mpi_agree", 2, &argc, argv, &ri);
    if (start) return start;
    const int rank = ri.mpi_rank;

    /* one rank fails: a file only rank 1 is asked to read, and it does not exist */
    tq_host_gauge g;
    memset(&g, 0, sizeof g);
    tq_status local = TQ_SUCCESS;
    if (rank == 1) local = tq_gauge_read("/nonexistent/taskqcd/lat.ildg", TQ_FORMAT_AUTO, &g, NULL);
    CHECK(rank == 0 || local == TQ_ERR_IO, "rank 1's read failed with %d", (int)local);
    tq_status s = tq_status_agree(local);
    CHECK(s == TQ_ERR_IO, "rank %d: agreed status %d, not TQ_ERR_IO", rank, (int)s);
    CHECK(strstr(tq_last_error(), "rank 1: ") == tq_last_error(), "rank %d: message %s", rank, tq_last_error());
    CHECK(strstr(tq_last_error(), "/nonexistent/taskqcd/lat.ildg") != NULL, "rank %d: message names the file: %s",
          rank, tq_last_error());

    /* both fail differently: rank 0's verdict */
    local = rank == 0 ? tq_error(TQ_ERR_INVALID_ARG, "bad input on 0") : tq_error(TQ_ERR_NOMEM, "no memory on 1");
    s = tq_status_agree(local);
    CHECK(s == TQ_ERR_INVALID_ARG, "rank %d: agreed status %d, not rank 0's", rank, (int)s);
    CHECK(!strcmp(tq_last_error(), "rank 0: bad input on 0"), "rank %d: message %s", rank, tq_last_error());

    /* all succeed */
    CHECK(tq_status_agree(TQ_SUCCESS) == TQ_SUCCESS, "rank %d: success not agreed", rank);

    /* the ranks are still in step: a collective reduction over a 2-rank lattice */
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    lp.dims[0] = lp.dims[1] = lp.dims[2] = 4;
    lp.dims[3] = 8;
    lp.procs[0] = lp.procs[1] = lp.procs[2] = 1;
    lp.procs[3] = 2;
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    if (lat) {
        tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
        tq_field *x = NULL;
        CHECK_OK(tq_field_create(lat, &fp, &x));
        if (x) {
            const int64_t n = 4 * 4 * 4 * 4 * 24;   /* the local volume's reals */
            double *h = malloc((size_t)n * sizeof *h);
            for (int64_t i = 0; i < n; i++) h[i] = 1.0;
            CHECK_OK(tq_field_import(x, h));
            double n2 = 0;
            CHECK_OK(tq_blas_norm2(x, &n2));
            CHECK(n2 == 2.0 * (double)n, "rank %d: norm2 %g, expected %g", rank, n2, 2.0 * (double)n);
            free(h);
            tq_field_destroy(x);
        }
        tq_lattice_destroy(lat);
    }
    tq_lattice *own = check_group_of_one(rank);
    if (own) check_groups_in_order(own, rank);
    tq_lattice_destroy(own);
    tq_finalize();
    char name[64];
    snprintf(name, sizeof name, "test_mpi_agree (rank %d)", rank);
    return tq_test_finish(name);
}
