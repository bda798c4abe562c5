/* Host-side sequential draws on top of the counter-based Philox generator in rng.h. */
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
