/* Host-side sequential draws on top of the counter-based Philox generator in rng.h, and
 * host arrays of Gaussian site values made from them. */
#include "core/tq_internal.h"
#include "core/rng.h"

void tq_rng_stream_init(tq_rng_stream *s, uint64_t seed, uint32_t stream, uint64_t index)
{
    tq_rng_key(s->key, seed);
    tq_rng_site_counter(s->ctr, 0, stream, index);
    s->nbuf = 0;
    s->have_gaussian = 0;
    s->gaussian = 0.0;
}

uint32_t tq_rng_stream_u32(tq_rng_stream *s)
{
    if (s->nbuf == 0) {
        tq_philox4x32(s->ctr, s->key, s->buf);
        s->ctr[0]++;
        s->nbuf = 4;
    }
    /* Take words in block order so a stream reproduces tq_philox4x32's output. */
    return s->buf[4 - s->nbuf--];
}

double tq_rng_stream_uniform(tq_rng_stream *s)
{
    uint32_t w0 = tq_rng_stream_u32(s);
    uint32_t w1 = tq_rng_stream_u32(s);
    return tq_rng_uniform(w0, w1);
}

double tq_rng_stream_gaussian(tq_rng_stream *s)
{
    if (s->have_gaussian) {
        s->have_gaussian = 0;
        return s->gaussian;
    }
    uint32_t w[4];
    for (int k = 0; k < 4; k++) w[k] = tq_rng_stream_u32(s);
    double g0;
    tq_rng_gaussian2(w, &g0, &s->gaussian);
    s->have_gaussian = 1;
    return g0;
}

typedef struct gaussian_box {
    double *dst;
    int nreal;
    int local[4], global[4], offset[4];
    uint64_t seed;
} gaussian_box;

static void gaussian_range(int64_t begin, int64_t end, void *arg)
{
    const gaussian_box *b = arg;
    for (int64_t s = begin; s < end; s++) {
        const int64_t gs = tq_box_global_site(s, b->local, b->offset, b->global);
        tq_rng_stream rng;
        tq_rng_stream_init(&rng, b->seed, TQ_RNG_STREAM_GAUSSIAN_SITES, (uint64_t)gs);
        double *v = b->dst + s * b->nreal;
        for (int k = 0; k < b->nreal; k++) v[k] = tq_rng_stream_gaussian(&rng);
    }
}

tq_status tq_host_gaussian_sites(double *dst, int nreal, const int global_dims[4], const int local[4],
                                 const int offset[4], uint64_t seed)
{
    if (!dst || !global_dims || !local || !offset || nreal <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gaussian_sites: NULL array or dimensions, or %d reals per site", nreal);
    gaussian_box b = {dst, nreal, {0}, {0}, {0}, seed};
    for (int mu = 0; mu < 4; mu++) {
        if (local[mu] <= 0 || offset[mu] < 0 || offset[mu] + local[mu] > global_dims[mu])
            return tq_error(TQ_ERR_INVALID_ARG,
                            "tq_host_gaussian_sites: in direction %d the box of %d sites at %d does not fit the lattice "
                            "of %d", mu, local[mu], offset[mu], global_dims[mu]);
        b.local[mu] = local[mu];
        b.global[mu] = global_dims[mu];
        b.offset[mu] = offset[mu];
    }
    tq_host_parallel_for(tq_volume4(local), gaussian_range, &b);
    return TQ_SUCCESS;
}
