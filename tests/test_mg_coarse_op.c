/* The multigrid coarse operator of the library (src/solvers/mg_coarse_op.c,
 * codelets/coarse_op.c) against the plain-loop stencil of reference/mg_reference.h on random
 * links: bitwise in double, to rounding in single and half, bitwise the same on one block and on
 * decompositions whose faces cross every direction (blocks of extent 2: every site on a
 * face; in half only for 12 complex per site), for 12 and 24 complex per site; clear errors for bad operators and fields.
 * test_mg_coarse_op_cuda (this file with TQ_TEST_CUDA): the same on a GPU (the blocks'
 * owner), where double agrees with the reference to rounding (the GPU contracts products
 * into fused multiply-adds) and the decompositions still bitwise; with two GPUs the faces
 * between them are peer faces (written GPU to GPU, core/stencil.h), checked to have been
 * used, over three applications (both face sets, then the first again once its readers are
 * done with it). */
#include "tq_test.h"
#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_mg_coarse_op_cuda"
#define DOUBLE_TOL 1e-13
#else
#define TEST_NAME "test_mg_coarse_op"
#define DOUBLE_TOL 0.0
#endif
#include "solvers/mg_internal.h"
#include "mg_test.h"

/* The links in the library's host order (mg_test.h), a new array. */
static double *links_host(const mgref_stencil *s)
{
    double *h = malloc(sizeof(double) * (size_t)(s->nsite * 9 * mgref_mat_reals(s->ndof)));
    if (h) mg_links_to_host(s, h);
    return h;
}

/* Operators apply() made whose faces between GPUs were peer faces (core/stencil.h). */
static int peer_ops;

/* D_c in on `block`, exported into got; 0 on success. */
static int apply(const int dims[4], const int block[4], int n, tq_precision link_prec, tq_precision prec,
                 const double *links, const double *in, double *got)
{
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) return -1;
    tq_mg_coarse_op *op = NULL;
    tq_field *x = NULL, *y = NULL;
    tq_field_params fp = {TQ_FIELD_COARSE, prec, TQ_FULL, (tq_recon)0, n};
    CHECK_OK(tq_mg_coarse_op_create("test", lat, n, link_prec, prec, &op));
    if (op && op->stencil.peer) peer_ops++;
    CHECK_OK(tq_field_create(lat, &fp, &x));
    CHECK_OK(tq_field_create(lat, &fp, &y));
    int ok = op && x && y;
    if (ok) {
        CHECK_OK(tq_field_import(op->links, links));
        CHECK_OK(tq_field_import(x, in));
        CHECK_OK(tq_mg_coarse_apply(op, y, x));
        CHECK_OK(tq_mg_coarse_apply(op, y, x));   /* again: the second set of faces */
        CHECK_OK(tq_mg_coarse_apply(op, y, x));   /* the first set again */
        CHECK_OK(tq_field_export(y, got));
    }
    tq_field_destroy(x);
    tq_field_destroy(y);
    tq_mg_coarse_op_destroy(op);
    tq_lattice_destroy(lat);
    return ok ? 0 : -1;
}

static void check_operator(const int dims[4], int n, const int blocks[][4], int nblocks)
{
    mgref_stencil s;
    if (mgref_stencil_alloc(&s, dims, n)) { CHECK(0, "out of memory"); return; }
    const int64_t m = mgref_mat_reals(n), nv = s.nsite * n * 2;
    for (int64_t i = 0; i < s.nsite * m; i++) s.x[i] = urand();
    for (int64_t i = 0; i < s.nsite * 4 * m; i++) s.yf[i] = urand(), s.yb[i] = urand();
    double *links = links_host(&s), *in = malloc(sizeof(double) * (size_t)nv), *want = malloc(sizeof(double) * (size_t)nv);
    double *first = malloc(sizeof(double) * (size_t)nv), *got = malloc(sizeof(double) * (size_t)nv);
    if (!links || !in || !want || !first || !got) { CHECK(0, "out of memory"); goto out; }
    for (int64_t i = 0; i < nv; i++) in[i] = urand();
    mgref_stencil_apply(want, &s, in);
    /* links and vectors in double, single, half; then half links with single vectors (the
     * multigrid set-up's half precision) */
    for (int pi = 0; pi < 4; pi++) {
        const tq_precision prec = pi == 2 ? TQ_HALF : pi == 0 ? TQ_DOUBLE : TQ_SINGLE;
        const tq_precision link_prec = pi >= 2 ? TQ_HALF : prec;
        for (int b = 0; b < nblocks; b++) {
            char what[160];
            snprintf(what, sizeof what, "n %d %dx%dx%dx%d, blocks %dx%dx%dx%d, %s%s", n, dims[0], dims[1], dims[2], dims[3],
                     blocks[b][0], blocks[b][1], blocks[b][2], blocks[b][3], tq_precision_name(prec),
                     pi == 3 ? " (half links)" : "");
            if (apply(dims, blocks[b], n, link_prec, prec, links, in, b ? got : first)) continue;
            const double *r = b ? got : first;
            double worst = 0, scale = 0;
            for (int64_t i = 0; i < nv; i++) worst = fmax(worst, fabs(r[i] - want[i])), scale = fmax(scale, fabs(want[i]));
            if (prec == TQ_DOUBLE) CHECK(worst <= DOUBLE_TOL * scale, "%s: differs from the reference by %.3g", what, worst);
            else if (link_prec == TQ_SINGLE)
                CHECK(worst <= 1e-5 * scale, "%s: differs from the reference by %.3g (scale %.3g)", what, worst, scale);
            else   /* 16-bit values, a scale per 12 complex: the links' (and a half input's) rounding */
                CHECK(worst <= 2e-4 * scale && worst > 1e-6 * scale, "%s: differs from the reference by %.3g (scale %.3g)",
                      what, worst, scale);
            /* in half a face site of more than 12 complex carries one scale, the field one per
             * 12 complex: other decompositions agree to rounding (checked above), not bitwise */
            if (b && (prec != TQ_HALF || n == 12)) CHECK(!memcmp(got, first, sizeof(double) * (size_t)nv), "%s: not bitwise the same as one block", what);
            printf("  %-58s max |D_c v - reference| / max %.2g\n", what, worst / scale);
        }
    }
out:
    free(links);
    free(in);
    free(want);
    free(first);
    free(got);
    mgref_stencil_free(&s);
}

static void check_errors(void)
{
    const int dims[4] = {4, 4, 4, 4};
    tq_lattice *lat = tq_test_lattice(dims, NULL), *other = tq_test_lattice(dims, NULL);
    if (!lat || !other) return;
    tq_mg_coarse_op *op = NULL;
    CHECK_ERR(tq_mg_coarse_op_create("test", lat, 18, TQ_DOUBLE, TQ_DOUBLE, &op), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_mg_coarse_op_create("test", lat, 0, TQ_DOUBLE, TQ_DOUBLE, &op), TQ_ERR_INVALID_ARG);
    CHECK(op == NULL, "a refused operator was returned");
    CHECK_OK(tq_mg_coarse_op_create("test", lat, 12, TQ_DOUBLE, TQ_DOUBLE, &op));
    tq_field_params fp = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 12};
    tq_field *x = NULL, *y = NULL, *wide = NULL, *single = NULL, *elsewhere = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &x));
    CHECK_OK(tq_field_create(lat, &fp, &y));
    CHECK_OK(tq_field_create(other, &fp, &elsewhere));
    fp.ndof = 24;
    CHECK_OK(tq_field_create(lat, &fp, &wide));
    fp.ndof = 12;
    fp.prec = TQ_SINGLE;
    CHECK_OK(tq_field_create(lat, &fp, &single));
    if (op && x && y && wide && single && elsewhere) {
        CHECK_ERR(tq_mg_coarse_apply(op, x, x), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_mg_coarse_apply(op, y, wide), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_coarse_apply(op, single, x), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_coarse_apply(op, elsewhere, x), TQ_ERR_MISMATCH);
        CHECK_ERR(tq_mg_coarse_apply(NULL, y, x), TQ_ERR_INVALID_ARG);
        printf("  %s\n", tq_last_error());
    }
    tq_field_destroy(x);
    tq_field_destroy(y);
    tq_field_destroy(wide);
    tq_field_destroy(single);
    tq_field_destroy(elsewhere);
    tq_mg_coarse_op_destroy(op);
    tq_lattice_destroy(other);
    tq_lattice_destroy(lat);
}

int main(void)
{
    mg_rng_state = 0x853c49e6748fea9bull;
#ifdef TQ_TEST_CUDA
    const int init = tq_test_init_gpus(TEST_NAME, 2);
    if (init) return init < 0 ? 1 : init;
#else
    if (tq_test_init_cpus(2)) return 1;
#endif
    const int d[4] = {4, 4, 4, 8};
    const int blocks[3][4] = {{4, 4, 4, 8}, {4, 4, 2, 4}, {2, 2, 2, 2}};
    check_operator(d, 12, blocks, 3);
    const int d2[4] = {2, 4, 2, 4}, blocks2[2][4] = {{2, 4, 2, 4}, {2, 2, 2, 2}};
    check_operator(d2, 24, blocks2, 2);
#ifdef TQ_TEST_CUDA
    /* with two GPUs the split decompositions' faces between them go GPU to GPU (peer
     * faces), and those results were bitwise one block's above */
    if (starpu_cuda_worker_get_count() >= 2) {
        CHECK(peer_ops > 0, "%u GPUs: no coarse operator used peer faces", starpu_cuda_worker_get_count());
        printf("  %d coarse operators with peer faces between %u GPUs\n", peer_ops, starpu_cuda_worker_get_count());
    }
#endif
    printf("errors:\n");
    check_errors();
    tq_finalize();
    return tq_test_finish(TEST_NAME);
}
