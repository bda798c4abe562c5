/* Counter-based random numbers: Philox-4x32-10 (Salmon et al., SC'11).
 *
 * Each output block is a pure function of a 64-bit key (the seed) and a 128-bit counter, so
 * a random field can be generated site by site in any order, on any worker or rank, and come
 * out the same for every decomposition. Convention for fields (tq_rng_site_counter):
 *   counter = { draw, stream, site_lo, site_hi }
 * where site is the global lexicographic index, stream says what the numbers are for (the
 * TQ_RNG_STREAM_* values below plus e.g. a direction), and draw counts blocks of 4 words
 * within that (site, stream).
 *
 * The per-block functions are TQ_HD so CUDA kernels can use them; include with -Icodelets.
 */
#ifndef TQ_RNG_H
#define TQ_RNG_H

#include "kernels/philox.h"   /* the per-block functions (CPU and CUDA) */

#include <math.h>
#include <stdint.h>

/* Stream ids: disjoint ranges, low bits free for a direction or component. */
enum {
    TQ_RNG_STREAM_GAUGE_RANDOM = 0x100,     /* + mu */
    TQ_RNG_STREAM_GAUGE_WEAK = 0x200,       /* + mu */
    TQ_RNG_STREAM_GAUGE_TRANSFORM = 0x300,
    TQ_RNG_STREAM_GAUSSIAN_SITES = 0x400,   /* tq_host_gaussian_sites */
    TQ_RNG_STREAM_UNIFORM_SITES = 0x500,    /* tq_internal_field_random */
    TQ_RNG_STREAM_USER = 0x10000            /* first id free for other fields */
};

/* ---- host stream: sequential draws from one (seed, stream, index) ---------------------- */
typedef struct tq_rng_stream {
    uint32_t key[2];
    uint32_t ctr[4];          /* ctr[0] counts blocks; wraps after 2^32 blocks */
    uint32_t buf[4];
    int nbuf;                 /* words of buf not yet used (taken in order) */
    int have_gaussian;        /* Box-Muller makes pairs; the second waits here */
    double gaussian;
} tq_rng_stream;

void tq_rng_stream_init(tq_rng_stream *s, uint64_t seed, uint32_t stream, uint64_t index);
uint32_t tq_rng_stream_u32(tq_rng_stream *s);
/* Uniform in (0, 1) from two words. */
double tq_rng_stream_uniform(tq_rng_stream *s);
/* Standard normal. */
double tq_rng_stream_gaussian(tq_rng_stream *s);

#endif
