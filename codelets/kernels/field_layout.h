/* The one memory layout of every field buffer, read by CPU and CUDA kernels alike
 * (StarPU copies bytes between memories; it never converts layouts).
 *
 * A buffer holds the sites of one block and one parity. Each site has nreal reals, grouped
 * in short vectors of `vec` reals; vector j of every site is stored contiguously over the
 * sites ("component-major with stride", QUDA's float4/double2 ordering, paper 001 eq. 4):
 *
 *     real k of site s  at  ((k / vec) * stride + s) * vec + k % vec
 *
 * so consecutive GPU threads (sites) read consecutive vectors (coalesced) and a CPU loop
 * over sites streams through each component array. vec is 2 for double, and 4 for single
 * and half when nreal is a multiple of 4 (2 otherwise, e.g. 18-real links, 6-real staggered
 * vectors), as QUDA does. Gauge fields with 18-real links use vec 2 in every precision so
 * that each link starts on a vector boundary (field.c).
 *
 * Half precision stores integers q in [-32767, 32767] as the 16-bit unsigned q + 32768
 * ("offset binary": a GPU turns it into a float with one byte permute and one add,
 * tq_half_word_unpack). Fields whose values are unbounded (spinors, staggered vectors,
 * clover) keep a float norm per site after the 16-bit array: value = q * norm / 32767
 * with norm = max |real| of the site (paper 004 §4.6). Gauge links are bounded by 1 and
 * have no norm: value = q / 32767.
 */
#ifndef TQ_FIELD_LAYOUT_H
#define TQ_FIELD_LAYOUT_H

#include "kernels/tq_hd.h"
#include <math.h>
#include <stdint.h>

#define TQ_HALF_SCALE 32767.0
#define TQ_HALF_OFFSET 32768   /* stored = q + TQ_HALF_OFFSET */
#define TQ_MAX_REALS_PER_SITE 72   /* clover: 2 x 36 */

typedef struct tq_layout {
    int prec;          /* bytes per real: 8, 4 or 2 */
    int nreal;         /* reals per site */
    int vec;           /* reals per vector */
    int has_norm;      /* half precision with a per-site norm */
    int64_t stride;    /* sites in the buffer */
} tq_layout;

TQ_HD int tq_layout_vec(int prec, int nreal)
{
    return (prec != 8 && nreal % 4 == 0) ? 4 : 2;
}

TQ_HD tq_layout tq_layout_make(int prec, int nreal, int norm_when_half, int64_t stride)
{
    tq_layout L;
    L.prec = prec;
    L.nreal = nreal;
    L.vec = tq_layout_vec(prec, nreal);
    L.has_norm = (prec == 2 && norm_when_half) ? 1 : 0;
    L.stride = stride;
    return L;
}

TQ_HD int64_t tq_layout_bytes(const tq_layout *L)
{
    return L->stride * L->nreal * L->prec + (L->has_norm ? L->stride * 4 : 0);
}

TQ_HD int64_t tq_layout_index(const tq_layout *L, int64_t s, int k)
{
    return ((int64_t)(k / L->vec) * L->stride + s) * L->vec + k % L->vec;
}

TQ_HD float *tq_layout_norm_ptr(void *buf, const tq_layout *L)
{
    return (float *)((char *)buf + L->stride * L->nreal * 2);
}

TQ_HD const float *tq_layout_norm_cptr(const void *buf, const tq_layout *L)
{
    return (const float *)((const char *)buf + L->stride * L->nreal * 2);
}

#ifdef __CUDACC__
/* Half precision on GPUs without the integer <-> float conversion instructions, which run
 * at a quarter of the FP32 rate and dominated the half-precision dslash:
 * - load: the stored u = q + 32768 placed in the low mantissa bits of 2^23 is the float
 *   2^23 + q + 32768 exactly; subtracting 2^23 + 32768 leaves q;
 * - store: adding 1.5 * 2^23 + 32768 to a float q of magnitude below 2^15 rounds it to the
 *   nearest integer (ties to even) and leaves q + 32768 in the low 16 bits of the result. */
#define TQ_HALF_BIAS 8421376.0f   /* 2^23 + 32768 */

/* The two 16-bit values of w as the exact floats q + TQ_HALF_BIAS (callers that combine
 * values before unbiasing them, e.g. the half-precision spin projection). */
__device__ __forceinline__ void tq_half_word_unpack_biased(unsigned w, float *lo, float *hi)
{
    *lo = __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7610));
    *hi = __uint_as_float(__byte_perm(w, 0x4B000000u, 0x7632));
}

__device__ __forceinline__ void tq_half_word_unpack(unsigned w, float *lo, float *hi)
{
    tq_half_word_unpack_biased(w, lo, hi);
    *lo -= TQ_HALF_BIAS;
    *hi -= TQ_HALF_BIAS;
}

/* q0, q1: already scaled to [-32767, 32767]. */
__device__ __forceinline__ unsigned tq_half_word_pack(float q0, float q1)
{
    return __byte_perm(__float_as_uint(q0 + 12615680.0f), __float_as_uint(q1 + 12615680.0f), 0x5410);
}
#endif

/* Chunk loads/stores and half-precision scaling, in double (these names) and in float
 * (suffix _f, for kernels that compute single- and half-precision sites in float). */
#define TQ_R double
#define TQ_RF(name) name
#include "kernels/field_layout_real.h"
#undef TQ_R
#undef TQ_RF
#define TQ_R float
#define TQ_RF(name) name##_f
#include "kernels/field_layout_real.h"
#undef TQ_R
#undef TQ_RF

/* Site s of src into dst: the same reals in another precision, each read and rounded as a
 * host export and import round them (the CPU branches of tq_load_chunk, tq_store_chunk and
 * tq_half_prepare_site, in double), one real at a time, so that a CPU and a GPU store the
 * same bits. A one-off copy (a solver's sloppy links and clover terms): no vector
 * accesses; a half-precision site with a norm is staged whole. */
TQ_HD double tq_layout_real_at(const void *buf, const tq_layout *L, int64_t s, int k, double half_scale)
{
    const int64_t i = tq_layout_index(L, s, k);
    if (L->prec == 8) return ((const double *)buf)[i];
    if (L->prec == 4) return (double)((const float *)buf)[i];
    return (double)((int)((const uint16_t *)buf)[i] - TQ_HALF_OFFSET) * half_scale;
}

TQ_HD void tq_layout_convert_site(const void *src, const tq_layout *Ls, void *dst, const tq_layout *Ld, int64_t s)
{
    const double hs = Ls->prec == 2 ? tq_half_scale(src, Ls, s) : 0;
    if (Ld->has_norm) {
        double v[TQ_MAX_REALS_PER_SITE];
        for (int k = 0; k < Ld->nreal; k++) v[k] = tq_layout_real_at(src, Ls, s, k, hs);
        const double inv = tq_half_prepare_site(dst, Ld, s, v);
        for (int k = 0; k < Ld->nreal; k++)
            ((uint16_t *)dst)[tq_layout_index(Ld, s, k)] = (uint16_t)(tq_half_quantize(v[k] * inv) + TQ_HALF_OFFSET);
        return;
    }
    for (int k = 0; k < Ld->nreal; k++) {
        const double v = tq_layout_real_at(src, Ls, s, k, hs);
        const int64_t o = tq_layout_index(Ld, s, k);
        if (Ld->prec == 8) ((double *)dst)[o] = v;
        else if (Ld->prec == 4) ((float *)dst)[o] = (float)v;
        else ((uint16_t *)dst)[o] = (uint16_t)(tq_half_quantize(v) + TQ_HALF_OFFSET);
    }
}

#endif
