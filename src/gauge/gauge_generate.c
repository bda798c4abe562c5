/* Host gauge fields from scratch: unit, Haar-random, weak (near unit) and random gauge
 * transformations. Every random number is keyed by (seed, global site, stream) through
 * Philox, so a field is a pure function of its seed and lattice size, whatever the order
 * of the loops or the decomposition of a later parallel version. */
#include "core/tq_internal.h"
#include "core/rng.h"
#include "kernels/su3.h"

#include <math.h>
#include <stdlib.h>

static tq_status check_gauge(const tq_host_gauge *g, const char *fn)
{
    if (!g || !g->links) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL gauge field", fn);
    for (int mu = 0; mu < 4; mu++)
        if (g->dims[mu] <= 0)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: dimension %d is %d (must be > 0)", fn, mu, g->dims[mu]);
    return TQ_SUCCESS;
}

static int64_t neighbour_forward(const int dims[4], int64_t site, int mu)
{
    int x[4];
    int64_t s = site;
    for (int d = 0; d < 4; d++) { x[d] = (int)(s % dims[d]); s /= dims[d]; }
    x[mu] = (x[mu] + 1) % dims[mu];
    return ((int64_t)(x[3] * dims[2] + x[2]) * dims[1] + x[1]) * dims[0] + x[0];
}

/* Haar-random SU(3): two rows of independent complex Gaussians, Gram-Schmidt, third row
 * from the cross product. The first two rows of a Haar SU(3) matrix are a uniformly
 * distributed orthonormal pair, which is what Gram-Schmidt of Gaussian rows gives (the
 * Gaussian measure is invariant under unitary maps), and they fix the third row. */
static void haar_su3(double *u, uint64_t seed, uint32_t stream, int64_t site)
{
    tq_rng_stream rng;
    tq_rng_stream_init(&rng, seed, stream, (uint64_t)site);
    for (int k = 0; k < 12; k++) u[k] = tq_rng_stream_gaussian(&rng);
    tq_su3_reunitarize(u);
}

tq_status tq_host_gauge_reunitarize(tq_host_gauge *g)
{
    TQ_CHECK(check_gauge(g, "tq_host_gauge_reunitarize"));
    int64_t n = tq_volume4(g->dims) * 4;
    for (int64_t l = 0; l < n; l++) tq_su3_reunitarize(g->links + l * 18);
    return TQ_SUCCESS;
}

tq_status tq_host_gauge_unit(tq_host_gauge *g)
{
    TQ_CHECK(check_gauge(g, "tq_host_gauge_unit"));
    int64_t n = tq_volume4(g->dims) * 4;
    for (int64_t l = 0; l < n; l++) tq_su3_unit(g->links + l * 18);
    return TQ_SUCCESS;
}

tq_status tq_host_gauge_random(tq_host_gauge *g, uint64_t seed)
{
    TQ_CHECK(check_gauge(g, "tq_host_gauge_random"));
    int64_t vol = tq_volume4(g->dims);
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++)
            haar_su3(g->links + (s * 4 + mu) * 18, seed, TQ_RNG_STREAM_GAUGE_RANDOM + (uint32_t)mu, s);
    return TQ_SUCCESS;
}

/* A box of a global lattice: the sites of g (g->dims) start at offset of global. */
typedef struct weak_box {
    double *links;
    int local[4], global[4], offset[4];
    uint64_t seed;
    double epsilon;
} weak_box;

static void weak_sites(int64_t begin, int64_t end, void *arg)
{
    const weak_box *b = arg;
    for (int64_t s = begin; s < end; s++) {
        const int64_t gs = tq_box_global_site(s, b->local, b->offset, b->global);
        for (int mu = 0; mu < 4; mu++) {
            double *u = b->links + (s * 4 + mu) * 18;
            tq_rng_stream rng;
            tq_rng_stream_init(&rng, b->seed, TQ_RNG_STREAM_GAUGE_WEAK + (uint32_t)mu, (uint64_t)gs);
            tq_su3_unit(u);
            /* Only rows a, b matter: reunitarize rebuilds c from them. */
            for (int k = 0; k < 12; k++) u[k] += b->epsilon * tq_rng_stream_gaussian(&rng);
            tq_su3_reunitarize(u);
        }
    }
}

tq_status tq_host_gauge_weak_part(tq_host_gauge *g, const int global_dims[4], const int offset[4], uint64_t seed,
                                  double epsilon)
{
    TQ_CHECK(check_gauge(g, "tq_host_gauge_weak_part"));
    if (!global_dims || !offset) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_weak_part: NULL dimensions or offset");
    if (!(epsilon >= 0.0) || isinf(epsilon))
        return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_weak_part: epsilon is %g (must be finite and >= 0)", epsilon);
    weak_box b = {g->links, {0}, {0}, {0}, seed, epsilon};
    for (int mu = 0; mu < 4; mu++) {
        if (offset[mu] < 0 || global_dims[mu] <= 0 || offset[mu] + g->dims[mu] > global_dims[mu])
            return tq_error(TQ_ERR_INVALID_ARG,
                            "tq_host_gauge_weak_part: in direction %d the box of %d sites at %d does not fit the "
                            "lattice of %d", mu, g->dims[mu], offset[mu], global_dims[mu]);
        b.local[mu] = g->dims[mu];
        b.global[mu] = global_dims[mu];
        b.offset[mu] = offset[mu];
    }
    tq_host_parallel_for(tq_volume4(g->dims), weak_sites, &b);
    return TQ_SUCCESS;
}

tq_status tq_host_gauge_weak(tq_host_gauge *g, uint64_t seed, double epsilon)
{
    static const int origin[4] = {0, 0, 0, 0};
    TQ_CHECK(check_gauge(g, "tq_host_gauge_weak"));
    return tq_host_gauge_weak_part(g, g->dims, origin, seed, epsilon);
}

tq_status tq_host_gauge_transform_random(tq_host_gauge *g, uint64_t seed, double *transform)
{
    TQ_CHECK(check_gauge(g, "tq_host_gauge_transform_random"));
    int64_t vol = tq_volume4(g->dims);
    double *gt = transform ? transform : malloc((size_t)vol * 18 * sizeof(double));
    if (!gt)
        return tq_error(TQ_ERR_NOMEM, "tq_host_gauge_transform_random: cannot allocate %lld sites", (long long)vol);
    for (int64_t s = 0; s < vol; s++) haar_su3(gt + s * 18, seed, TQ_RNG_STREAM_GAUGE_TRANSFORM, s);
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++) {
            double *u = g->links + (s * 4 + mu) * 18;
            tq_su3_mul(u, gt + s * 18, u);
            tq_su3_mul_adj(u, u, gt + neighbour_forward(g->dims, s, mu) * 18);
        }
    if (!transform) free(gt);
    return TQ_SUCCESS;
}
