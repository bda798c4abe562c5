/* Lattice geometry: explicit and automatic block decompositions, and the errors of
 * tq_lattice_create (with a message, and no lattice returned). */
#define _POSIX_C_SOURCE 200809L
#include "tq_test.h"

#include <stdlib.h>
#include <string.h>

static tq_lattice_params make(int x, int y, int z, int t)
{
    tq_lattice_params p;
    memset(&p, 0, sizeof p);
    p.dims[0] = x; p.dims[1] = y; p.dims[2] = z; p.dims[3] = t;
    return p;
}

/* Checks the invariants every lattice must satisfy (one rank). */
static void check_consistent(const tq_lattice_info *li, const char *what)
{
    int64_t vol = 1, bvol = 1;
    int nb = 1;
    for (int mu = 0; mu < 4; mu++) {
        CHECK(li->procs[mu] == 1, "%s: procs[%d] = %d", what, mu, li->procs[mu]);
        CHECK(li->local[mu] == li->dims[mu], "%s: local[%d] = %d, dims %d", what, mu, li->local[mu], li->dims[mu]);
        CHECK(li->block[mu] > 0 && li->block[mu] % 2 == 0, "%s: block[%d] = %d not even", what, mu, li->block[mu]);
        CHECK(li->block[mu] > 0 && li->local[mu] % li->block[mu] == 0, "%s: block[%d] = %d does not divide %d",
              what, mu, li->block[mu], li->local[mu]);
        if (li->block[mu] > 0)
            CHECK(li->nblocks_dim[mu] == li->local[mu] / li->block[mu], "%s: nblocks_dim[%d] = %d", what, mu,
                  li->nblocks_dim[mu]);
        vol *= li->dims[mu];
        bvol *= li->block[mu];
        nb *= li->nblocks_dim[mu];
    }
    CHECK(li->global_volume == vol, "%s: global_volume %lld (expected %lld)", what, (long long)li->global_volume, (long long)vol);
    CHECK(li->local_volume == vol, "%s: local_volume %lld", what, (long long)li->local_volume);
    CHECK(li->block_volume == bvol, "%s: block_volume %lld (expected %lld)", what, (long long)li->block_volume, (long long)bvol);
    CHECK(li->nblocks == nb, "%s: nblocks %d, product of nblocks_dim %d", what, li->nblocks, nb);
    CHECK((int64_t)li->nblocks * li->block_volume == li->local_volume, "%s: blocks do not tile the local lattice", what);
}

static void check_explicit(void)
{
    tq_lattice_params p = make(8, 4, 6, 12);
    int blk[4] = {4, 2, 6, 4};
    memcpy(p.block, blk, sizeof blk);
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&p, &lat));
    if (!lat) return;
    tq_lattice_info li;
    CHECK_OK(tq_lattice_get_info(lat, &li));
    check_consistent(&li, "explicit 8x4x6x12 / 4x2x6x4");
    int enb[4] = {2, 2, 1, 3};
    for (int mu = 0; mu < 4; mu++) {
        CHECK(li.dims[mu] == p.dims[mu], "dims[%d] = %d", mu, li.dims[mu]);
        CHECK(li.block[mu] == blk[mu], "block[%d] = %d (asked for %d)", mu, li.block[mu], blk[mu]);
        CHECK(li.nblocks_dim[mu] == enb[mu], "nblocks_dim[%d] = %d (expected %d)", mu, li.nblocks_dim[mu], enb[mu]);
    }
    CHECK(li.nblocks == 12, "nblocks %d (expected 12)", li.nblocks);
    CHECK(li.block_volume == 192, "block_volume %lld (expected 192)", (long long)li.block_volume);
    CHECK(li.global_volume == 2304 && li.local_volume == 2304, "volumes %lld %lld",
          (long long)li.global_volume, (long long)li.local_volume);
    /* peer mode needs blocks on two or more GPUs: never with CPU workers alone */
    int peer = -1;
    CHECK_OK(tq_lattice_peer_gpus(lat, &peer));
    CHECK(peer == 0, "peer mode over %d GPUs with CPU workers alone", peer);
    CHECK_ERR(tq_lattice_peer_gpus(lat, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_lattice_peer_gpus(NULL, &peer), TQ_ERR_INVALID_ARG);
    tq_lattice_destroy(lat);

    /* one block equal to the lattice; explicit process grid 1 1 1 1 */
    p = make(4, 4, 4, 4);
    for (int mu = 0; mu < 4; mu++) { p.block[mu] = 4; p.procs[mu] = 1; }
    CHECK_OK(tq_lattice_create(&p, &lat));
    if (lat) {
        CHECK_OK(tq_lattice_get_info(lat, &li));
        check_consistent(&li, "4^4 one block");
        CHECK(li.nblocks == 1 && li.block_volume == 256, "nblocks %d, block_volume %lld", li.nblocks,
              (long long)li.block_volume);
        tq_lattice_destroy(lat);
    }

    /* smallest blocks */
    p = make(4, 4, 4, 4);
    for (int mu = 0; mu < 4; mu++) p.block[mu] = 2;
    CHECK_OK(tq_lattice_create(&p, &lat));
    if (lat) {
        CHECK_OK(tq_lattice_get_info(lat, &li));
        check_consistent(&li, "4^4 / 2^4");
        CHECK(li.nblocks == 16 && li.block_volume == 16, "nblocks %d, block_volume %lld", li.nblocks,
              (long long)li.block_volume);
        tq_lattice_destroy(lat);
    }
}

/* Automatic blocks; min_blocks: what the worker mix requires where the extents allow. */
static void check_auto(int x, int y, int z, int t, int min_blocks)
{
    char what[64];
    snprintf(what, sizeof what, "automatic %dx%dx%dx%d", x, y, z, t);
    tq_lattice_params p = make(x, y, z, t);
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&p, &lat));
    if (!lat) return;
    tq_lattice_info li;
    CHECK_OK(tq_lattice_get_info(lat, &li));
    check_consistent(&li, what);
    CHECK(li.nblocks >= min_blocks, "%s: %d block(s), expected at least %d", what, li.nblocks, min_blocks);
    tq_lattice_destroy(lat);
}

/* tq_lattice_create must fail with TQ_ERR_INVALID_ARG, a message containing `word`, and
 * leave *out NULL. */
static void expect_invalid(const tq_lattice_params *p, const char *word, const char *what)
{
    tq_lattice *lat = (tq_lattice *)p;   /* garbage that must be overwritten */
    tq_status s = tq_lattice_create(p, &lat);
    CHECK(s == TQ_ERR_INVALID_ARG, "%s: returned %s (expected TQ_ERR_INVALID_ARG)", what, tq_status_name(s));
    CHECK(lat == NULL, "%s: a lattice was returned on error", what);
    CHECK(tq_last_error()[0] != '\0', "%s: no message", what);
    if (word) CHECK(strstr(tq_last_error(), word) != NULL, "%s: message '%s' lacks '%s'", what, tq_last_error(), word);
    if (s == TQ_SUCCESS && lat && lat != (tq_lattice *)p) tq_lattice_destroy(lat);
}

static void check_errors(void)
{
    tq_lattice_params p;
    p = make(5, 4, 4, 4);   expect_invalid(&p, "even", "odd x");
    p = make(4, 4, 4, 7);   expect_invalid(&p, "even", "odd t");
    p = make(4, 0, 4, 4);   expect_invalid(&p, "positive", "zero y");
    p = make(4, 4, -4, 4);  expect_invalid(&p, "positive", "negative z");

    p = make(8, 8, 8, 8); p.block[0] = 6; p.block[1] = 8; p.block[2] = 8; p.block[3] = 8;
    expect_invalid(&p, "divide", "block 6 in 8");
    p = make(8, 8, 8, 8); p.block[0] = 8; p.block[1] = 8; p.block[2] = 8; p.block[3] = 16;
    expect_invalid(&p, "divide", "block larger than the lattice");
    p = make(4, 4, 4, 4); p.block[0] = 4; p.block[1] = 1; p.block[2] = 4; p.block[3] = 4;
    expect_invalid(&p, "even", "odd block extent 1");
    p = make(12, 4, 4, 4); p.block[0] = 3; p.block[1] = 4; p.block[2] = 4; p.block[3] = 4;
    expect_invalid(&p, "even", "odd block extent 3");
    p = make(4, 4, 4, 4); p.block[0] = 4; p.block[1] = 0; p.block[2] = 4; p.block[3] = 4;
    expect_invalid(&p, NULL, "partly given block");
    p = make(4, 4, 4, 4); p.block[0] = -2; p.block[1] = 4; p.block[2] = 4; p.block[3] = 4;
    expect_invalid(&p, NULL, "negative block");

    /* process grids that do not match the single running rank, or do not divide */
    p = make(8, 8, 8, 8); p.procs[0] = 2; p.procs[1] = 1; p.procs[2] = 1; p.procs[3] = 1;
    expect_invalid(&p, "rank", "2 processes, 1 rank");
    p = make(8, 8, 8, 8); p.procs[0] = 1; p.procs[1] = 1; p.procs[2] = 2; p.procs[3] = 2;
    expect_invalid(&p, "rank", "4 processes, 1 rank");
    p = make(12, 8, 8, 8); p.procs[0] = 5; p.procs[1] = 1; p.procs[2] = 1; p.procs[3] = 1;
    expect_invalid(&p, "divide", "grid 5 in 12");
    p = make(8, 8, 8, 8); p.procs[0] = 1; p.procs[1] = 0; p.procs[2] = 1; p.procs[3] = 1;
    expect_invalid(&p, NULL, "grid with a 0");
    p = make(12, 8, 8, 8); p.procs[0] = 4; p.procs[1] = 1; p.procs[2] = 1; p.procs[3] = 1;
    expect_invalid(&p, "even", "local extent 3");

    tq_lattice *lat = (tq_lattice *)&p;
    CHECK_ERR(tq_lattice_create(NULL, &lat), TQ_ERR_INVALID_ARG);
    p = make(4, 4, 4, 4);
    CHECK_ERR(tq_lattice_create(&p, NULL), TQ_ERR_INVALID_ARG);
    tq_lattice_info li;
    CHECK_ERR(tq_lattice_get_info(NULL, &li), TQ_ERR_INVALID_ARG);
    CHECK_OK(tq_lattice_create(&p, &lat));
    if (lat) {
        CHECK_ERR(tq_lattice_get_info(lat, NULL), TQ_ERR_INVALID_ARG);
        tq_lattice_destroy(lat);
    }
    tq_lattice_destroy(NULL);
}

int main(void)
{
    unsetenv("STARPU_NCPU");
    unsetenv("STARPU_NCUDA");

    /* without a runtime: automatic blocks are still valid */
    check_auto(4, 4, 4, 4, 1);
    check_explicit();
    check_errors();

    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 2;
    ip.ncuda = 0;
    ip.verbosity = 0;
    ip.use_mpi = 0;
    if (tq_init(&ip)) {
        fprintf(stderr, "tq_init: %s\n", tq_last_error());
        return 1;
    }
    tq_runtime_info ri;
    CHECK_OK(tq_get_runtime_info(&ri));
    int workers = ri.ncpu_workers;
    CHECK(workers == 2, "%d CPU workers (asked for 2)", workers);
    /* with two workers the automatic choice splits the lattice where extents allow */
    check_auto(4, 4, 4, 4, workers);
    check_auto(8, 8, 8, 8, workers);
    check_auto(8, 4, 4, 4, workers);
    check_auto(4, 4, 4, 12, workers);
    check_auto(6, 10, 2, 4, workers);
    check_auto(12, 6, 6, 2, workers);
    /* no extent divisible by 4: the only decomposition with even blocks is one block */
    check_auto(2, 6, 2, 2, 1);
    {
        tq_lattice_params p = make(2, 6, 2, 2);
        tq_lattice *lat = NULL;
        CHECK_OK(tq_lattice_create(&p, &lat));
        if (lat) {
            tq_lattice_info li;
            tq_lattice_get_info(lat, &li);
            CHECK(li.nblocks == 1, "2x6x2x2: %d blocks", li.nblocks);
            tq_lattice_destroy(lat);
        }
    }
    /* errors are the same with the runtime up */
    check_errors();
    /* explicit blocks override the worker mix */
    check_explicit();
    tq_finalize();
    return tq_test_finish("test_lattice");
}
