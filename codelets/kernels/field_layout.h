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
 * vectors), as QUDA does.
 *
 * Half precision stores int16 values. Fields whose values are unbounded (spinors, staggered
 * vectors, clover) keep a float norm per site after the int16 array: value = q * norm / 32767
 * with norm = max |real| of the site (paper 004 §4.6). Gauge links are bounded by 1 and
 * have no norm: value = q / 32767.
 */
#ifndef TQ_FIELD_LAYOUT_H
#define TQ_FIELD_LAYOUT_H

#include "kernels/tq_hd.h"
#include <math.h>
#include <stdint.h>

#define TQ_HALF_SCALE 32767.0
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

/* Scale that turns the int16 of site s into its value (half precision only). */
TQ_HD double tq_half_scale(const void *buf, const tq_layout *L, int64_t s)
{
    return L->has_norm ? (double)tq_layout_norm_cptr(buf, L)[s] / TQ_HALF_SCALE : 1.0 / TQ_HALF_SCALE;
}

/* Real k of site s as double; half_scale from tq_half_scale() (ignored otherwise). */
TQ_HD double tq_load_real(const void *buf, const tq_layout *L, int64_t s, int k, double half_scale)
{
    int64_t i = tq_layout_index(L, s, k);
    if (L->prec == 8) return ((const double *)buf)[i];
    if (L->prec == 4) return (double)((const float *)buf)[i];
    return (double)((const int16_t *)buf)[i] * half_scale;
}

/* Stores real k of site s (double and single only; half goes through tq_store_site). */
TQ_HD void tq_store_real(void *buf, const tq_layout *L, int64_t s, int k, double v)
{
    int64_t i = tq_layout_index(L, s, k);
    if (L->prec == 8) ((double *)buf)[i] = v;
    else ((float *)buf)[i] = (float)v;
}

TQ_HD int16_t tq_half_quantize(double v)
{
    double q = v * TQ_HALF_SCALE;
    if (q > TQ_HALF_SCALE) q = TQ_HALF_SCALE;
    if (q < -TQ_HALF_SCALE) q = -TQ_HALF_SCALE;
    return (int16_t)(q < 0 ? q - 0.5 : q + 0.5);
}

/* Whole-site load/store in double (import/export, and kernels with site-level work). */
TQ_HD void tq_load_site(const void *buf, const tq_layout *L, int64_t s, double *v)
{
    double hs = L->prec == 2 ? tq_half_scale(buf, L, s) : 0.0;
    for (int k = 0; k < L->nreal; k++) v[k] = tq_load_real(buf, L, s, k, hs);
}

TQ_HD void tq_store_site(void *buf, const tq_layout *L, int64_t s, const double *v)
{
    if (L->prec != 2) {
        for (int k = 0; k < L->nreal; k++) tq_store_real(buf, L, s, k, v[k]);
        return;
    }
    double inv = 1.0;
    if (L->has_norm) {
        double m = 0.0;
        for (int k = 0; k < L->nreal; k++) m = fmax(m, fabs(v[k]));
        tq_layout_norm_ptr(buf, L)[s] = (float)m;
        /* quantize against the stored (float) norm so load(store(v)) is consistent */
        double mf = (double)(float)m;
        inv = mf > 0.0 ? 1.0 / mf : 0.0;
    }
    int16_t *q = (int16_t *)buf;
    for (int k = 0; k < L->nreal; k++) q[tq_layout_index(L, s, k)] = tq_half_quantize(v[k] * inv);
}

#endif
