/* The quenched generator's sweeps as task graphs (src/gauge/generator.c) against plain host
 * sweeps of the same per-link code (the driver of test_su3_heatbath): from the same hot
 * start, heat-bath and overrelaxation sweeps give the same links, bit for bit on CPU
 * workers whatever the blocks (slabs of time slices, or blocks cut in every direction,
 * whose staples need their neighbours' faces and edges), to rounding on a GPU (one
 * sweep: a Markov chain amplifies last-bit differences). Links stay in SU(3); no refused
 * link; the measurements and the reunitarisation as tasks agree with the host functions;
 * a run resumed from exported links and the sweep count goes on bit for bit; bad
 * parameters are refused with clear errors; at beta = 6.0 on 8^4 the average plaquette is
 * the published quenched value (CPU). */
#include "taskqcd.h"
#include "tq_test.h"
#include "dirac_test_util.h"
#include "heatbath_reference.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_generator_cuda"
#define WHERE TQ_WHERE_CUDA
#else
#define TEST_NAME "test_generator"
#define WHERE TQ_WHERE_CPU
#endif

static double max_diff(const tq_host_gauge *a, const tq_host_gauge *b)
{
    const int64_t n = (int64_t)a->dims[0] * a->dims[1] * a->dims[2] * a->dims[3] * 72;
    double m = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(a->links[i] - b->links[i]);
        if (!(d <= m)) m = d;   /* NaN counts */
    }
    return m;
}

/* A decomposition: nslab blocks of whole time slices, or (nslab 0) blocks of extent block. */
typedef struct decomp {
    int nslab, block[4];
} decomp;

/* Blocks the decomposition makes, and its name in messages. */
static int decomp_blocks(const int dims[4], decomp b, char name[64])
{
    if (b.nslab) {
        snprintf(name, 64, "%d slabs", b.nslab);
        return b.nslab;
    }
    snprintf(name, 64, "blocks %dx%dx%dx%d", b.block[0], b.block[1], b.block[2], b.block[3]);
    return dims[0] / b.block[0] * (dims[1] / b.block[1]) * (dims[2] / b.block[2]) * (dims[3] / b.block[3]);
}

static void decomp_params(decomp b, tq_generator_params *gp)
{
    gp->nslab = b.nslab;
    memcpy(gp->block, b.block, sizeof gp->block);
}

/* nsweeps heat-bath sweeps (each followed by nor overrelaxation sweeps) from a hot start,
 * by the generator on the blocks b and by the host driver. */
static void compare(const int dims[4], double beta, decomp b, int nsweeps, int nor, double tol)
{
    char name[64];
    const int nblocks = decomp_blocks(dims, b, name);
    tq_host_gauge start, ref, out;
    CHECK_OK(tq_host_gauge_alloc(&start, dims));
    CHECK_OK(tq_host_gauge_alloc(&ref, dims));
    CHECK_OK(tq_host_gauge_alloc(&out, dims));
    CHECK_OK(tq_host_gauge_random(&start, 17));
    const int64_t n = (int64_t)dims[0] * dims[1] * dims[2] * dims[3] * 72;
    memcpy(ref.links, start.links, (size_t)n * sizeof(double));
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    gp.beta = beta;
    gp.seed = 4242;
    decomp_params(b, &gp);
    tq_generator *g = NULL;
    CHECK_OK(tq_generator_create(dims, &gp, &g));
    if (!g) goto out;
    CHECK(tq_generator_slabs(g) == nblocks, "%s: %d blocks expected, %d made", name, nblocks, tq_generator_slabs(g));
    CHECK_OK(tq_generator_import(g, &start));
    for (int s = 0; s < nsweeps; s++) {
        CHECK_OK(tq_generator_sweep(g, nor));
        CHECK(ref_heatbath_sweep(&ref, beta, gp.seed, s, 0) == 0, "host sweep refused links");
        for (int k = 0; k < nor; k++) ref_heatbath_sweep(&ref, beta, gp.seed, s, 1);
    }
    CHECK_OK(tq_generator_export(g, &out));
    const double d = max_diff(&out, &ref);
    CHECK(d <= tol, "%dx%dx%dx%d beta %g, %s, %d sweeps (+%d OR): generator and host sweeps differ by %.3g "
          "(tolerance %.1g)", dims[0], dims[1], dims[2], dims[3], beta, name, nsweeps, nor, d, tol);
    double dev = 1;
    CHECK_OK(tq_host_gauge_unitarity(&out, &dev));
    CHECK(dev <= 1e-12, "links left SU(3) by %.3g", dev);
    uint64_t refused = 1;
    CHECK_OK(tq_generator_refused(g, &refused));
    CHECK(refused == 0, "%llu links refused", (unsigned long long)refused);
    tq_plaquette p;
    CHECK_OK(tq_host_gauge_plaquette(&out, &p));
    printf("  %dx%dx%dx%d beta %.2f, %s, %d sweeps (+%d OR): max |generator - host| %.3g, plaquette %.6f\n",
           dims[0], dims[1], dims[2], dims[3], beta, name, nsweeps, nor, d, p.total);
out:
    tq_generator_destroy(g);
    tq_host_gauge_free(&start);
    tq_host_gauge_free(&ref);
    tq_host_gauge_free(&out);
}

#ifndef TQ_TEST_CUDA   /* long; runs in the CPU build */
/* Thermalisation at beta = 6.0 on 8^4 (cold start, sweeps of 1 heat bath + 4
 * overrelaxation): the average plaquette over 120 sweeps after 50 is the published quenched
 * value 0.5937 within 4 standard errors (from blocks of 10 sweeps) or 0.0015, and close to
 * the MILC sample configuration's (same action and beta) when it is present. */
static void test_beta6(void)
{
    const int dims[4] = {8, 8, 8, 8};
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    gp.beta = 6.0;
    gp.seed = 2026;
    tq_generator *g = NULL;
    tq_host_gauge h;
    CHECK_OK(tq_host_gauge_alloc(&h, dims));
    CHECK_OK(tq_generator_create(dims, &gp, &g));
    if (!g) { tq_host_gauge_free(&h); return; }
    const int therm = 50, meas = 120;
    double sum = 0, bsum = 0, blocks[12];
    int nb = 0;
    for (int s = 0; s < therm + meas; s++) {
        CHECK_OK(tq_generator_sweep(g, 4));
        if (s < therm) continue;
        tq_plaquette p;
        CHECK_OK(tq_generator_measure(g, &p, NULL, NULL));
        sum += p.total;
        bsum += p.total;
        if ((s - therm + 1) % 10 == 0) { blocks[nb++] = bsum / 10; bsum = 0; }
    }
    const double mean = sum / meas;
    double v = 0;
    for (int b = 0; b < nb; b++) v += (blocks[b] - mean) * (blocks[b] - mean);
    const double err = sqrt(v / (nb - 1) / nb), tol = fmax(4 * err, 0.0015);
    printf("  8^4 beta 6.0: plaquette %.5f +- %.5f over %d sweeps after %d (published 0.5937)\n", mean, err, meas, therm);
    CHECK(fabs(mean - 0.5937) < tol, "8^4 beta 6: plaquette %.5f +- %.5f, published 0.5937", mean, err);
    char buf[1024];
    const char *path = tq_test_milc_file("lat.sample.l8888", buf, sizeof buf);
    if (path) {
        tq_host_gauge m;
        tq_plaquette pm;
        if (tq_gauge_read(path, TQ_FORMAT_AUTO, &m, NULL) == TQ_SUCCESS) {
            CHECK_OK(tq_host_gauge_plaquette(&m, &pm));
            printf("  MILC sample lat.sample.l8888: plaquette %.5f\n", pm.total);
            CHECK(fabs(mean - pm.total) < 0.005, "8^4 beta 6: plaquette %.5f vs the MILC sample's %.5f", mean, pm.total);
            tq_host_gauge_free(&m);
        }
    }
    tq_generator_destroy(g);
    tq_host_gauge_free(&h);
}
#endif

/* Measurement and reunitarisation as tasks against the host functions, on a hot start and
 * after sweeps (on the blocks b): the plaquette parts and the Polyakov loop agree to
 * rounding; links pushed off SU(3) come back as tq_host_gauge_reunitarize brings them back. */
static void test_measure(const int dims[4], decomp b)
{
    char name[64];
    decomp_blocks(dims, b, name);
    tq_host_gauge h, ref;
    CHECK_OK(tq_host_gauge_alloc(&h, dims));
    CHECK_OK(tq_host_gauge_alloc(&ref, dims));
    CHECK_OK(tq_host_gauge_random(&h, 5));
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    gp.beta = 5.5;
    decomp_params(b, &gp);
    tq_generator *g = NULL;
    CHECK_OK(tq_generator_create(dims, &gp, &g));
    if (!g) goto out;
    CHECK_OK(tq_generator_import(g, &h));
    for (int round = 0; round < 2; round++) {
        if (round) CHECK_OK(tq_generator_sweep(g, 1));
        tq_plaquette p = {0, 0, 0}, q;
        double pr = 9, pi = 9, qr, qi;
        CHECK_OK(tq_generator_measure(g, &p, &pr, &pi));
        CHECK_OK(tq_generator_export(g, &ref));
        CHECK_OK(tq_host_gauge_plaquette(&ref, &q));
        CHECK_OK(tq_host_gauge_polyakov(&ref, &qr, &qi));
        const double d = fmax(fmax(fabs(p.spatial - q.spatial), fabs(p.temporal - q.temporal)),
                              fmax(fmax(fabs(p.total - q.total), fabs(pr - qr)), fabs(pi - qi)));
        printf("  %dx%dx%dx%d, %s, %s: plaquette %.12f (spatial %.6f, temporal %.6f), Polyakov (%+.6f, %+.6f); "
               "max |tasks - host| %.2g\n", dims[0], dims[1], dims[2], dims[3], name, round ? "after a sweep" : "hot start",
               p.total, p.spatial, p.temporal, pr, pi, d);
        CHECK(d <= 1e-13, "measurement as tasks differs from the host's by %.3g", d);
    }
    /* scale every link by 1.01 and add an admixture: far from SU(3) */
    const int64_t n = (int64_t)dims[0] * dims[1] * dims[2] * dims[3] * 72;
    for (int64_t i = 0; i < n; i++) h.links[i] = 1.01 * h.links[i] + 0.003 * (double)((i * 7919) % 13 - 6);
    CHECK_OK(tq_generator_import(g, &h));
    CHECK_OK(tq_generator_reunitarize(g));
    CHECK_OK(tq_generator_export(g, &ref));
    CHECK_OK(tq_host_gauge_reunitarize(&h));
    double dev = 1, d = max_diff(&ref, &h);
    CHECK_OK(tq_host_gauge_unitarity(&ref, &dev));
    printf("  reunitarised as tasks: max |tasks - host| %.2g, max deviation from SU(3) %.2g\n", d, dev);
    CHECK(d <= 1e-14, "reunitarisation as tasks differs from the host's by %.3g", d);
    CHECK(dev <= 1e-13, "reunitarised links are off SU(3) by %.3g", dev);
out:
    tq_generator_destroy(g);
    tq_host_gauge_free(&h);
    tq_host_gauge_free(&ref);
}

/* A checkpoint and resume: 2 sweeps, the links exported and imported into a new generator
 * with the sweep count, 2 more sweeps: the same links, bit for bit, as 4
 * sweeps in one go (on one kind of worker). Without the count the new generator would
 * replay sweeps 0 and 1's random numbers: another configuration. */
static void test_resume(const int dims[4])
{
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    gp.beta = 5.9;
    gp.seed = 77;
    gp.nslab = 2;
    tq_generator *a = NULL, *b = NULL, *c = NULL;
    tq_host_gauge ha, hb, mid;
    CHECK_OK(tq_host_gauge_alloc(&ha, dims));
    CHECK_OK(tq_host_gauge_alloc(&hb, dims));
    CHECK_OK(tq_host_gauge_alloc(&mid, dims));
    CHECK_OK(tq_generator_create(dims, &gp, &a));
    CHECK_OK(tq_generator_create(dims, &gp, &b));
    CHECK_OK(tq_generator_create(dims, &gp, &c));
    if (!a || !b || !c) goto out;
    CHECK(tq_generator_sweeps(a) == 0, "a new generator has done %llu sweeps", (unsigned long long)tq_generator_sweeps(a));
    for (int s = 0; s < 2; s++) CHECK_OK(tq_generator_sweep(a, 1));
    CHECK(tq_generator_sweeps(a) == 2, "after 2 sweeps the count is %llu", (unsigned long long)tq_generator_sweeps(a));
    CHECK_OK(tq_generator_export(a, &mid));
    for (int s = 0; s < 2; s++) CHECK_OK(tq_generator_sweep(a, 1));
    CHECK_OK(tq_generator_export(a, &ha));
    CHECK_OK(tq_generator_import(b, &mid));
    CHECK_OK(tq_generator_set_sweeps(b, 2));
    CHECK_OK(tq_generator_import(c, &mid));   /* count left at 0 */
    for (int s = 0; s < 2; s++) { CHECK_OK(tq_generator_sweep(b, 1)); CHECK_OK(tq_generator_sweep(c, 1)); }
    CHECK(tq_generator_sweeps(b) == 4, "the resumed generator's count is %llu", (unsigned long long)tq_generator_sweeps(b));
    CHECK_OK(tq_generator_export(b, &hb));
    const double d = max_diff(&ha, &hb);
    printf("  resume after 2 of 4 sweeps: max |resumed - uninterrupted| %.3g\n", d);
    CHECK(d == 0.0, "resumed run differs from the uninterrupted one by %.3g", d);
    CHECK_OK(tq_generator_export(c, &hb));
    CHECK(max_diff(&ha, &hb) > 0.0, "without the sweep count the resumed run still matched: the test cannot tell");
    CHECK_ERR(tq_generator_set_sweeps(b, (uint64_t)1 << 24), TQ_ERR_INVALID_ARG);
    CHECK(tq_generator_sweeps(b) == 4, "a refused count changed the state");
    CHECK_ERR(tq_generator_set_sweeps(NULL, 0), TQ_ERR_INVALID_ARG);
    CHECK(tq_generator_sweeps(NULL) == 0, "NULL generator's count");
out:
    tq_generator_destroy(a);
    tq_generator_destroy(b);
    tq_generator_destroy(c);
    tq_host_gauge_free(&ha);
    tq_host_gauge_free(&hb);
    tq_host_gauge_free(&mid);
}

static void test_errors(void)
{
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    tq_generator *g = NULL;
    const int odd[4] = {4, 4, 4, 5}, ok[4] = {4, 4, 4, 4}, zero[4] = {4, 0, 4, 4};
    CHECK_ERR(tq_generator_create(odd, &gp, &g), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "even") != NULL, "odd dimension message: %s", tq_last_error());
    CHECK_ERR(tq_generator_create(zero, &gp, &g), TQ_ERR_INVALID_ARG);
    gp.beta = 0.0;
    CHECK_ERR(tq_generator_create(ok, &gp, &g), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "beta") != NULL, "beta message: %s", tq_last_error());
    gp.beta = 6.0;
    gp.nslab = 3;   /* 4 time slices */
    CHECK_ERR(tq_generator_create(ok, &gp, &g), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "time slices") != NULL, "slab message: %s", tq_last_error());
    gp.nslab = 17;
    CHECK_ERR(tq_generator_create(ok, &gp, &g), TQ_ERR_INVALID_ARG);
    gp.nslab = 4;   /* slabs of one time slice: a block's extents are even */
    CHECK_ERR(tq_generator_create(ok, &gp, &g), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "even") != NULL, "odd block message: %s", tq_last_error());
    gp.nslab = 2;
    const int cubes[4] = {2, 2, 2, 2}, bad_block[4] = {2, 2, 2, 3};
    memcpy(gp.block, cubes, sizeof gp.block);
    CHECK_ERR(tq_generator_create(ok, &gp, &g), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "either") != NULL, "nslab and block message: %s", tq_last_error());
    gp.nslab = 0;
    memcpy(gp.block, bad_block, sizeof gp.block);
    CHECK_ERR(tq_generator_create(ok, &gp, &g), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "block extent") != NULL, "bad block message: %s", tq_last_error());
    memset(gp.block, 0, sizeof gp.block);
    CHECK(g == NULL, "no generator left behind after errors");
    gp.nslab = 2;
    CHECK_OK(tq_generator_create(ok, &gp, &g));
    tq_host_gauge h;
    const int other[4] = {4, 4, 4, 6};
    CHECK_OK(tq_host_gauge_alloc(&h, other));
    CHECK_ERR(tq_generator_export(g, &h), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_generator_sweep(g, -1), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_generator_sweep(NULL, 0), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_generator_measure(NULL, NULL, NULL, NULL), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_generator_reunitarize(NULL), TQ_ERR_INVALID_ARG);
    tq_host_gauge_free(&h);
    tq_generator_destroy(g);
}

int main(void)
{
    int start = dirac_test_start(TEST_NAME, WHERE);
    if (start) return start;
    const int d4[4] = {4, 4, 4, 4}, d6[4] = {4, 6, 4, 8};
    const decomp one = {1, {0}}, two = {2, {0}}, four = {4, {0}};
    /* cut in every direction, blocks two sites thick (both layers are faces): every staple
     * reaches faces and edges; 3 blocks along y (neighbours below and above differ) */
    const decomp cubes = {0, {2, 2, 2, 2}}, mixed = {0, {2, 2, 4, 4}};
#ifdef TQ_TEST_CUDA
    /* one sweep at a time: CPU and GPU arithmetic differ in the last bits */
    compare(d4, 5.7, one, 1, 0, 1e-12);
    compare(d4, 5.7, cubes, 1, 1, 1e-12);
    compare(d6, 6.0, two, 1, 0, 1e-12);
    compare(d6, 6.0, mixed, 1, 0, 1e-12);
    test_measure(d6, one);
    test_measure(d6, four);
    test_measure(d6, mixed);
#else
    test_measure(d6, one);
    test_measure(d6, two);
    test_measure(d6, mixed);
    /* slabs: the faces come from the slabs next to each one (with 2 slabs both from the same
     * one); blocks: faces in every cut direction and the staples' edges */
    compare(d4, 5.7, one, 2, 1, 0.0);
    compare(d4, 5.7, two, 2, 1, 0.0);
    compare(d4, 5.7, cubes, 2, 1, 0.0);
    compare(d6, 1.0, four, 3, 0, 0.0);
    compare(d6, 1.0, mixed, 3, 0, 0.0);
    const decomp xt = {0, {2, 6, 4, 4}};   /* cut in x and t */
    compare(d6, 6.0, xt, 2, 2, 0.0);
    compare(d6, 6.0, cubes, 1, 1, 0.0);
    test_beta6();
#endif
    test_resume(d4);
    test_errors();
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    tq_finalize();
    return tq_test_finish(TEST_NAME);
}
