/* Tests of host gauge fields: unit, Haar-random, weak and gauge-transformed fields, with
 * the plaquette, link trace and unitarity observables, the parts of a weak field and of
 * Gaussian site values that ranks make for themselves, and argument errors. */
#include "tq_test.h"
#include "kernels/su3.h"

#include <stdint.h>

/* Not a hypercube, so a mix-up of directions in the site indexing shows. */
static const int dims[4] = { 4, 6, 4, 8 };

static int64_t volume(void) { return (int64_t)dims[0] * dims[1] * dims[2] * dims[3]; }

static int64_t site_index(const int x[4])
{
    return ((int64_t)(x[3] * dims[2] + x[2]) * dims[1] + x[1]) * dims[0] + x[0];
}

static double *link(const tq_host_gauge *g, int64_t site, int mu)
{
    return g->links + (site * 4 + mu) * 18;
}

static double max_diff(const double *a, const double *b, int64_t n)
{
    double d = 0;
    for (int64_t k = 0; k < n; k++) d = fmax(d, fabs(a[k] - b[k]));
    return d;
}

/* A box's part of the weak field (and of Gaussian site values) equals the global one there,
 * bitwise, whatever the box; the threaded loop over a larger lattice equals boxes of one
 * x-line each. */
static void test_parts(const tq_host_gauge *global)
{
    CHECK_OK(tq_host_gauge_weak((tq_host_gauge *)global, 11, 0.2));
    static const int boxes[][2][4] = { { { 2, 6, 4, 4 }, { 0, 0, 0, 4 } },   /* a rank of a 2x1x1x2 grid */
                                       { { 2, 6, 4, 4 }, { 2, 0, 0, 0 } },
                                       { { 3, 3, 4, 5 }, { 1, 2, 0, 3 } },   /* at an odd place */
                                       { { 4, 6, 4, 8 }, { 0, 0, 0, 0 } } };
    for (int b = 0; b < 4; b++) {
        const int *local = boxes[b][0], *off = boxes[b][1];
        tq_host_gauge part;
        CHECK_OK(tq_host_gauge_alloc(&part, local));
        if (!part.links) return;
        CHECK_OK(tq_host_gauge_weak_part(&part, dims, off, 11, 0.2));
        double worst = 0;
        for (int t = 0; t < local[3]; t++)
            for (int z = 0; z < local[2]; z++)
                for (int y = 0; y < local[1]; y++)
                    for (int x = 0; x < local[0]; x++) {
                        const int gx[4] = { x + off[0], y + off[1], z + off[2], t + off[3] };
                        const int64_t ls = ((int64_t)(t * local[2] + z) * local[1] + y) * local[0] + x;
                        for (int mu = 0; mu < 4; mu++)
                            worst = fmax(worst, max_diff(link(&part, ls, mu), link(global, site_index(gx), mu), 18));
                    }
        CHECK(worst == 0.0, "weak part %d differs from the global field by %g", b, worst);
        tq_host_gauge_free(&part);
    }
    /* Gaussian sites: 16^4 in one call (several threads) against one x-line per call */
    const int big[4] = { 16, 16, 16, 16 }, line[4] = { 16, 1, 1, 1 };
    const int64_t n = 65536;
    double *all = malloc((size_t)n * 2 * sizeof *all), *lines = malloc((size_t)n * 2 * sizeof *lines);
    if (!all || !lines) { CHECK(0, "out of memory"); free(all); free(lines); return; }
    const int origin[4] = { 0, 0, 0, 0 };
    CHECK_OK(tq_host_gaussian_sites(all, 2, big, big, origin, 3));
    for (int t = 0; t < 16; t++)
        for (int z = 0; z < 16; z++)
            for (int y = 0; y < 16; y++) {
                const int off[4] = { 0, y, z, t };
                CHECK_OK(tq_host_gaussian_sites(lines + 2 * 16 * ((t * 16 + z) * 16 + y), 2, big, line, off, 3));
            }
    double worst = max_diff(all, lines, 2 * n), mean = 0, var = 0;
    for (int64_t k = 0; k < 2 * n; k++) mean += all[k];
    mean /= 2 * n;
    for (int64_t k = 0; k < 2 * n; k++) var += (all[k] - mean) * (all[k] - mean);
    var /= 2 * n - 1;
    CHECK(worst == 0.0, "Gaussian sites by lines differ from one call by %g", worst);
    /* 131072 draws: the mean's spread is 0.003, the variance's 0.004 */
    CHECK(fabs(mean) < 0.015 && fabs(var - 1) < 0.02, "Gaussian sites: mean %g, variance %g", mean, var);
    /* another seed gives other numbers */
    CHECK_OK(tq_host_gaussian_sites(lines, 2, big, big, origin, 4));
    CHECK(max_diff(all, lines, 2 * n) > 1, "seeds 3 and 4 give the same Gaussian sites");
    free(all);
    free(lines);
}

/* The last failure's message must name the function that failed (so it is fresh). */
#define CHECK_ERR_FROM(call, code, fn) do { \
    CHECK_ERR(call, code); \
    CHECK(strstr(tq_last_error(), fn) != NULL, "message '%s' does not name %s", tq_last_error(), fn); \
} while (0)

static void test_unit(tq_host_gauge *g)
{
    tq_plaquette p;
    double trace, dev;
    memset(g->links, 0x55, (size_t)volume() * 72 * sizeof(double));
    CHECK_OK(tq_host_gauge_unit(g));
    CHECK_OK(tq_host_gauge_plaquette(g, &p));
    CHECK(p.total == 1.0 && p.spatial == 1.0 && p.temporal == 1.0,
          "unit plaquette %.17g %.17g %.17g", p.total, p.spatial, p.temporal);
    CHECK_OK(tq_host_gauge_link_trace(g, &trace));
    CHECK(trace == 1.0, "unit link trace %.17g", trace);
    double pr, pi;
    CHECK_OK(tq_host_gauge_polyakov(g, &pr, &pi));
    CHECK(pr == 1.0 && pi == 0.0, "unit Polyakov loop (%.17g, %.17g)", pr, pi);
    /* a constant time link diag(e^{i a}, e^{i a}, e^{-2 i a}): the loop is its T-th power */
    const double a = 0.3;
    const int T = g->dims[3];
    for (int64_t s = 0; s < volume(); s++) {
        double *u = g->links + (s * 4 + 3) * 18;
        u[0] = cos(a); u[1] = sin(a); u[8] = cos(a); u[9] = sin(a); u[16] = cos(2 * a); u[17] = -sin(2 * a);
    }
    CHECK_OK(tq_host_gauge_polyakov(g, &pr, &pi));
    const double wr = (2 * cos(T * a) + cos(2 * T * a)) / 3, wi = (2 * sin(T * a) - sin(2 * T * a)) / 3;
    CHECK(fabs(pr - wr) < 1e-14 && fabs(pi - wi) < 1e-14, "Polyakov loop (%.17g, %.17g), expected (%.17g, %.17g)", pr, pi, wr, wi);
    CHECK_OK(tq_host_gauge_unit(g));
    CHECK_OK(tq_host_gauge_unitarity(g, &dev));
    CHECK(dev == 0.0, "unit unitarity %g", dev);
}

static void test_random(tq_host_gauge *g, tq_host_gauge *h)
{
    const int64_t vol = volume(), nlinks = vol * 4;
    double dev, trace;
    tq_plaquette p;

    CHECK_OK(tq_host_gauge_random(g, 12345));
    CHECK_OK(tq_host_gauge_unitarity(g, &dev));
    CHECK(dev < 1e-12, "random field unitarity %g", dev);

    /* Pure function of the seed; another seed changes every link. */
    CHECK_OK(tq_host_gauge_random(h, 12345));
    CHECK(memcmp(g->links, h->links, (size_t)nlinks * 18 * sizeof(double)) == 0, "same seed, different field");
    CHECK_OK(tq_host_gauge_random(h, 12346));
    int64_t same = 0;
    for (int64_t l = 0; l < nlinks; l++) same += max_diff(g->links + l * 18, h->links + l * 18, 18) < 1e-3;
    CHECK(same == 0, "%lld links nearly equal for different seeds", (long long)same);
    /* Directions and sites draw from different streams. */
    CHECK(max_diff(link(g, 0, 0), link(g, 0, 1), 18) > 1e-3, "mu = 0, 1 share a link");
    CHECK(max_diff(link(g, 0, 0), link(g, 1, 0), 18) > 1e-3, "sites 0, 1 share a link");

    /* Haar measure: Re Tr U/3 and each plaquette's Re Tr/3 have mean 0 and variance 1/18;
     * distinct plaquettes of independent Haar links are independent. Bounds: 6 sigma. */
    CHECK_OK(tq_host_gauge_plaquette(g, &p));
    double sigma_plaq = sqrt(1.0 / 18.0 / (6.0 * (double)vol));
    CHECK(fabs(p.total) < 6 * sigma_plaq, "random plaquette %g (6 sigma = %g)", p.total, 6 * sigma_plaq);
    CHECK(fabs(p.spatial) < 6 * sqrt(2.0) * sigma_plaq, "random spatial plaquette %g", p.spatial);
    CHECK(fabs(p.temporal) < 6 * sqrt(2.0) * sigma_plaq, "random temporal plaquette %g", p.temporal);
    CHECK_OK(tq_host_gauge_link_trace(g, &trace));
    CHECK(fabs(trace) < 6 * sqrt(1.0 / 18.0 / (double)nlinks), "random link trace %g", trace);
    /* Haar SU(3): E |Tr U|^2 = 1 (variance 1) and E (Tr U)^3 = 1 (variance about 5; it is
     * 0 for U(3), so this sees the determinant being fixed to 1). */
    double m2 = 0, m3 = 0;
    for (int64_t l = 0; l < nlinks; l++) {
        double tr[2];
        tq_su3_trace(tr, g->links + l * 18);
        m2 += tr[0] * tr[0] + tr[1] * tr[1];
        m3 += tr[0] * tr[0] * tr[0] - 3 * tr[0] * tr[1] * tr[1];
    }
    m2 /= (double)nlinks;
    m3 /= (double)nlinks;
    printf("random field: plaquette %.4f, link trace %.4f, <|Tr U|^2> %.3f, <Re (Tr U)^3> %.3f\n",
           p.total, trace, m2, m3);
    CHECK(fabs(m2 - 1.0) < 6 * sqrt(1.0 / (double)nlinks), "<|Tr U|^2> = %g, want 1", m2);
    CHECK(fabs(m3 - 1.0) < 6 * sqrt(5.0 / (double)nlinks), "<Re (Tr U)^3> = %g, want 1", m3);
}

static void test_weak(tq_host_gauge *g)
{
    tq_plaquette p;
    double dev;

    CHECK_OK(tq_host_gauge_weak(g, 7, 0.0));
    CHECK_OK(tq_host_gauge_plaquette(g, &p));
    CHECK(p.total == 1.0, "epsilon = 0 plaquette %.17g", p.total);

    /* To second order U = exp(eps X) with X anti-Hermitian and E[-Tr X^2] = 16 for this
     * noise, so 1 - P = eps^2 E[-Tr(sum of 4 X)^2]/6 = (32/3) eps^2 on average; the same
     * seed gives the same X, so halving eps divides 1 - P by 4 up to O(eps). */
    double one_minus[2];
    const double eps[2] = { 1e-3, 2e-3 };
    for (int i = 0; i < 2; i++) {
        CHECK_OK(tq_host_gauge_weak(g, 7, eps[i]));
        CHECK_OK(tq_host_gauge_unitarity(g, &dev));
        CHECK(dev < 1e-12, "weak field unitarity %g", dev);
        CHECK_OK(tq_host_gauge_plaquette(g, &p));
        one_minus[i] = 1.0 - p.total;
        CHECK(one_minus[i] > 0, "weak plaquette %.17g not below 1", p.total);
        double c = one_minus[i] / (eps[i] * eps[i]);
        CHECK(c > 8.0 && c < 13.5, "(1 - P)/eps^2 = %g, expected about 32/3", c);
    }
    double ratio = one_minus[1] / one_minus[0];
    printf("weak field: (1 - P)/eps^2 = %.3f at eps = 1e-3 (expect ~%.3f), ratio for 2 eps = %.4f\n",
           one_minus[0] / 1e-6, 32.0 / 3.0, ratio);
    CHECK(fabs(ratio - 4.0) < 0.05, "1 - P does not scale as eps^2: ratio %g", ratio);

    CHECK_OK(tq_host_gauge_weak(g, 7, 0.3));
    CHECK_OK(tq_host_gauge_plaquette(g, &p));
    CHECK(p.total < 0.9 && p.total > 0.0, "eps = 0.3 plaquette %g", p.total);
}

static void test_reunitarize(tq_host_gauge *g, tq_host_gauge *h)
{
    const int64_t n = volume() * 4 * 18;
    double dev;
    CHECK_OK(tq_host_gauge_random(g, 99));
    memcpy(h->links, g->links, (size_t)n * sizeof(double));
    for (int64_t k = 0; k < n; k++) g->links[k] += 1e-6 * sin(0.37 * (double)k);
    CHECK_OK(tq_host_gauge_unitarity(g, &dev));
    CHECK(dev > 1e-7, "perturbation did not break unitarity (%g)", dev);
    CHECK_OK(tq_host_gauge_reunitarize(g));
    CHECK_OK(tq_host_gauge_unitarity(g, &dev));
    CHECK(dev < 1e-13, "after reunitarize: %g", dev);
    double moved = max_diff(g->links, h->links, n);
    CHECK(moved < 1e-5, "reunitarize moved links by %g", moved);
}

static void test_gauge_invariance(tq_host_gauge *g, tq_host_gauge *h)
{
    const int64_t vol = volume(), n = vol * 4 * 18;
    double *G = malloc((size_t)vol * 18 * sizeof(double));
    CHECK(G != NULL, "malloc");
    if (!G) return;
    tq_plaquette p0, p1;
    double dev, tr0, tr1;

    CHECK_OK(tq_host_gauge_random(g, 2718));
    memcpy(h->links, g->links, (size_t)n * sizeof(double));
    CHECK_OK(tq_host_gauge_plaquette(g, &p0));
    CHECK_OK(tq_host_gauge_link_trace(g, &tr0));
    double pl0r, pl0i, pl1r, pl1i;
    CHECK_OK(tq_host_gauge_polyakov(g, &pl0r, &pl0i));
    CHECK_OK(tq_host_gauge_transform_random(g, 31415, G));
    CHECK_OK(tq_host_gauge_polyakov(g, &pl1r, &pl1i));
    CHECK(fabs(pl1r - pl0r) < 1e-12 && fabs(pl1i - pl0i) < 1e-12 && fabs(pl0r) + fabs(pl0i) > 1e-6,
          "Polyakov loop not gauge invariant (or vanishing): (%.17g, %.17g) -> (%.17g, %.17g)", pl0r, pl0i, pl1r, pl1i);
    CHECK_OK(tq_host_gauge_plaquette(g, &p1));
    CHECK_OK(tq_host_gauge_link_trace(g, &tr1));
    CHECK(fabs(p1.total - p0.total) < 1e-12 && fabs(p1.spatial - p0.spatial) < 1e-12
          && fabs(p1.temporal - p0.temporal) < 1e-12,
          "plaquette not gauge invariant: %.17g -> %.17g", p0.total, p1.total);
    CHECK(max_diff(g->links, h->links, n) > 0.5, "links did not change");
    CHECK(fabs(tr1 - tr0) > 1e-6, "link trace unchanged (%g), transform did nothing?", tr1);
    CHECK_OK(tq_host_gauge_unitarity(g, &dev));
    CHECK(dev < 1e-12, "transformed field unitarity %g", dev);
    double gdev = 0;
    for (int64_t s = 0; s < vol; s++) gdev = fmax(gdev, tq_su3_unitarity_deviation(G + s * 18));
    CHECK(gdev < 1e-12, "G not in SU(3): %g", gdev);

    /* U'_mu(x) = G(x) U_mu(x) G(x + mu)^dag, at sites in the bulk and on every boundary. */
    const int sites[4][4] = { { 1, 2, 1, 3 }, { 3, 5, 3, 7 }, { 0, 5, 2, 7 }, { 3, 0, 3, 0 } };
    for (int i = 0; i < 4; i++)
        for (int mu = 0; mu < 4; mu++) {
            int x[4], y[4];
            memcpy(x, sites[i], sizeof x);
            memcpy(y, x, sizeof y);
            y[mu] = (y[mu] + 1) % dims[mu];
            int64_t sx = site_index(x), sy = site_index(y);
            double want[18];
            tq_su3_mul(want, G + sx * 18, link(h, sx, mu));
            tq_su3_mul_adj(want, want, G + sy * 18);
            double d = max_diff(want, link(g, sx, mu), 18);
            CHECK(d < 1e-14, "U' at (%d %d %d %d) mu %d off by %g", x[0], x[1], x[2], x[3], mu, d);
        }

    /* Without an output array the same G is used; G depends on the seed only. */
    memcpy(g->links, h->links, (size_t)n * sizeof(double));
    CHECK_OK(tq_host_gauge_transform_random(g, 31415, NULL));
    double *G2 = malloc((size_t)vol * 18 * sizeof(double));
    CHECK(G2 != NULL, "malloc");
    if (G2) {
        memcpy(h->links, g->links, (size_t)n * sizeof(double));
        CHECK_OK(tq_host_gauge_transform_random(g, 31415, G2));
        CHECK(memcmp(G, G2, (size_t)vol * 18 * sizeof(double)) == 0, "G differs for the same seed");
        CHECK_OK(tq_host_gauge_transform_random(g, 31416, G2));
        CHECK(max_diff(G, G2, vol * 18) > 0.5, "G same for different seeds");
        free(G2);
    }

    /* A weak field stays weak in plaquette though its links are no longer near 1. */
    CHECK_OK(tq_host_gauge_weak(g, 5, 1e-2));
    CHECK_OK(tq_host_gauge_plaquette(g, &p0));
    CHECK_OK(tq_host_gauge_transform_random(g, 6, NULL));
    CHECK_OK(tq_host_gauge_plaquette(g, &p1));
    CHECK_OK(tq_host_gauge_link_trace(g, &tr1));
    CHECK(fabs(p1.total - p0.total) < 1e-12, "weak plaquette changed %.17g -> %.17g", p0.total, p1.total);
    CHECK(fabs(tr1) < 0.1, "link trace of a gauge-transformed weak field %g", tr1);
    free(G);
}

static void test_errors(tq_host_gauge *g)
{
    tq_host_gauge empty = { { 4, 4, 4, 4 }, NULL };
    tq_host_gauge bad_dims = *g;
    bad_dims.dims[2] = 0;
    double G[18];
    const int zero_dims[4] = { 4, 0, 4, 4 };
    tq_host_gauge tmp;

    CHECK_ERR_FROM(tq_host_gauge_alloc(&tmp, zero_dims), TQ_ERR_INVALID_ARG, "tq_host_gauge_alloc");
    CHECK_ERR_FROM(tq_host_gauge_unit(NULL), TQ_ERR_INVALID_ARG, "tq_host_gauge_unit");
    CHECK_ERR_FROM(tq_host_gauge_unit(&empty), TQ_ERR_INVALID_ARG, "tq_host_gauge_unit");
    CHECK_ERR_FROM(tq_host_gauge_random(NULL, 1), TQ_ERR_INVALID_ARG, "tq_host_gauge_random");
    CHECK_ERR_FROM(tq_host_gauge_random(&bad_dims, 1), TQ_ERR_INVALID_ARG, "tq_host_gauge_random");
    CHECK_ERR_FROM(tq_host_gauge_weak(NULL, 1, 0.1), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak");
    CHECK_ERR_FROM(tq_host_gauge_weak(g, 1, -0.1), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak");
    CHECK_ERR_FROM(tq_host_gauge_weak(g, 1, NAN), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak");
    CHECK_ERR_FROM(tq_host_gauge_weak(g, 1, INFINITY), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak");
    const int small[4] = { 4, 6, 4, 4 }, off_ok[4] = { 0, 0, 0, 4 }, off_out[4] = { 0, 0, 0, 5 }, off_neg[4] = { -1, 0, 0, 0 };
    tq_host_gauge half = *g;
    memcpy(half.dims, small, sizeof small);
    CHECK_ERR_FROM(tq_host_gauge_weak_part(&half, dims, off_out, 1, 0.1), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak_part");
    CHECK_ERR_FROM(tq_host_gauge_weak_part(&half, dims, off_neg, 1, 0.1), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak_part");
    CHECK_ERR_FROM(tq_host_gauge_weak_part(&half, dims, NULL, 1, 0.1), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak_part");
    CHECK_ERR_FROM(tq_host_gauge_weak_part(&half, dims, off_ok, 1, -1), TQ_ERR_INVALID_ARG, "tq_host_gauge_weak_part");
    CHECK_ERR_FROM(tq_host_gaussian_sites(G, 2, dims, small, off_out, 1), TQ_ERR_INVALID_ARG, "tq_host_gaussian_sites");
    CHECK_ERR_FROM(tq_host_gaussian_sites(G, 0, dims, small, off_ok, 1), TQ_ERR_INVALID_ARG, "tq_host_gaussian_sites");
    CHECK_ERR_FROM(tq_host_gaussian_sites(NULL, 2, dims, small, off_ok, 1), TQ_ERR_INVALID_ARG, "tq_host_gaussian_sites");
    CHECK_ERR_FROM(tq_host_gauge_reunitarize(NULL), TQ_ERR_INVALID_ARG, "tq_host_gauge_reunitarize");
    CHECK_ERR_FROM(tq_host_gauge_reunitarize(&empty), TQ_ERR_INVALID_ARG, "tq_host_gauge_reunitarize");
    CHECK_ERR_FROM(tq_host_gauge_transform_random(NULL, 1, G), TQ_ERR_INVALID_ARG, "tq_host_gauge_transform_random");
    CHECK_ERR_FROM(tq_host_gauge_transform_random(&empty, 1, NULL), TQ_ERR_INVALID_ARG, "tq_host_gauge_transform_random");
    CHECK_ERR_FROM(tq_host_gauge_plaquette(NULL, NULL), TQ_ERR_INVALID_ARG, "tq_host_gauge_plaquette");
    CHECK_ERR_FROM(tq_host_gauge_link_trace(&empty, G), TQ_ERR_INVALID_ARG, "tq_host_gauge_link_trace");
    CHECK_ERR_FROM(tq_host_gauge_unitarity(g, NULL), TQ_ERR_INVALID_ARG, "tq_host_gauge_unitarity");

    /* A failed weak call leaves the field as it was. */
    CHECK_OK(tq_host_gauge_unit(g));
    CHECK_ERR(tq_host_gauge_weak(g, 1, -1.0), TQ_ERR_INVALID_ARG);
    double dev;
    CHECK_OK(tq_host_gauge_unitarity(g, &dev));
    CHECK(dev == 0.0 && g->links[0] == 1.0, "failed call modified the field");
}

int main(void)
{
    tq_host_gauge g, h;
    CHECK_OK(tq_host_gauge_alloc(&g, dims));
    CHECK_OK(tq_host_gauge_alloc(&h, dims));
    if (!g.links || !h.links) return tq_test_finish("test_gauge_host");
    test_unit(&g);
    test_random(&g, &h);
    test_weak(&g);
    test_parts(&g);
    test_reunitarize(&g, &h);
    test_gauge_invariance(&g, &h);
    test_errors(&g);
    tq_host_gauge_free(&g);
    tq_host_gauge_free(&h);
    return tq_test_finish("test_gauge_host");
}
