/* Multigrid parameters against a lattice (src/solvers/mg_params.c): the levels' geometry
 * for good parameters, and for bad ones a clear error naming the level and the mismatch
 * (an aggregate that does not divide a block, null vectors 0 or too many, more levels
 * than the lattice can be coarsened into, ...), with the parameters of paper 000 accepted
 * by default on a 32^4 lattice of two blocks. */
#include "tq_test.h"
#include "solvers/mg_internal.h"

static tq_lattice *lattice(int L, int T, int bt)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    lp.dims[0] = lp.dims[1] = lp.dims[2] = L;
    lp.dims[3] = T;
    lp.block[0] = lp.block[1] = lp.block[2] = L;
    lp.block[3] = bt;
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    return lat;
}

/* p must be refused, with a message containing want */
static void refused(const char *what, const tq_mg_params *p, const tq_lattice *lat, const char *want)
{
    int c[TQ_MG_MAX_LEVELS][4], cb[TQ_MG_MAX_LEVELS][4];
    const tq_status st = tq_mg_geometry("test", p, lat, c, cb);
    CHECK(st == TQ_ERR_INVALID_ARG, "%s: accepted (%s)", what, tq_status_name(st));
    CHECK(strstr(tq_last_error(), want) != NULL, "%s: message '%s' does not name '%s'", what, tq_last_error(), want);
    printf("  %-34s %s\n", what, tq_last_error());
}

int main(void)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 1;
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }
    tq_lattice *lat = lattice(32, 32, 16);   /* 2 blocks */
    if (!lat) return tq_test_finish("test_mg_params");

    tq_mg_params p;
    tq_mg_params_default(&p);
    int c[TQ_MG_MAX_LEVELS][4], cb[TQ_MG_MAX_LEVELS][4];
    CHECK_OK(tq_mg_geometry("test", &p, lat, c, cb));
    printf("default on 32^4, blocks 32x32x32x16: levels %dx%dx%dx%d (blocks %dx%dx%dx%d), %dx%dx%dx%d (%dx%dx%dx%d)\n",
           c[1][0], c[1][1], c[1][2], c[1][3], cb[1][0], cb[1][1], cb[1][2], cb[1][3], c[2][0], c[2][1], c[2][2], c[2][3],
           cb[2][0], cb[2][1], cb[2][2], cb[2][3]);
    CHECK(c[1][0] == 8 && c[1][3] == 8 && cb[1][3] == 4 && c[2][0] == 4 && cb[2][3] == 2 && cb[2][0] == 4,
          "default geometry wrong: level 1 %d %d block %d, level 2 %d block %d %d", c[1][0], c[1][3], cb[1][3], c[2][0],
          cb[2][3], cb[2][0]);

    printf("refused:\n");
    tq_mg_params q = p;
    q.block[0][1] = 3;
    refused("aggregate not dividing a block", &q, lat, "level 0 aggregate extent 3 in y");
    q = p;
    q.nvec[1] = 0;
    refused("no null vectors", &q, lat, "level 1 has 0 null vectors");
    q = p;
    q.levels = 4;   /* 32 -> 8 -> 4 -> 2: coarse blocks of t extent 1 */
    refused("more levels than the lattice allows", &q, lat, "level 2 aggregates of 2 in t leave coarse blocks of odd extent 1");
    q = p;
    q.levels = 5;
    refused("more levels than supported", &q, lat, "5 multigrid levels");
    q = p;
    q.block[0][0] = q.block[0][1] = q.block[0][2] = q.block[0][3] = 1;
    refused("more null vectors than an aggregate holds", &q, lat, "an aggregate of 1 sites holds only 6");
    q = p;
    q.nvec[0] = 8;   /* level 1 then has 8 per chirality; 24 vectors of 2^4 aggregates fit in 128 */
    q.block[1][0] = q.block[1][1] = q.block[1][2] = 1;
    q.block[1][3] = 2;
    refused("coarse aggregate too small for nvec", &q, lat, "level 1 has 24 null vectors but an aggregate of 2 sites");
    q = p;
    q.pre_steps[0] = q.post_steps[0] = 0;
    refused("no smoothing", &q, lat, "smoother steps 0 + 0");
    q = p;
    q.setup_tol[1] = 0;
    refused("setup tolerance 0 on level 1", &q, lat, "level 1: setup tolerance 0");
    q = p;
    q.setup_iters[0] = 0;
    refused("no setup iterations on level 0", &q, lat, "level 0: setup tolerance 5e-06 and iterations 0");
    q = p;
    q.coarse_maxiter = 0;
    refused("no coarse iterations", &q, lat, "coarse tolerance");

    /* 2 levels with 2^4 aggregates on a 16^3x8 lattice of one block: 8^3x4 */
    tq_lattice *small = lattice(16, 8, 8);
    if (small) {
        q = p;
        q.levels = 2;
        for (int mu = 0; mu < 4; mu++) q.block[0][mu] = 2;
        CHECK_OK(tq_mg_geometry("test", &q, small, c, cb));
        CHECK(c[1][0] == 8 && c[1][3] == 4 && cb[1][3] == 4, "2 levels on 16^3x8: %d %d %d", c[1][0], c[1][3], cb[1][3]);
        tq_lattice_destroy(small);
    }
    tq_lattice_destroy(lat);
    tq_finalize();
    return tq_test_finish("test_mg_params");
}
