/* Plain-loop double-precision host reference for every tq_blas_* function.
 *
 * The operands are host arrays in the API order (nreal doubles per site: 24 for spinors,
 * 6 for staggered vectors, re/im interleaved). A reference geometry lists the sites that
 * take part (a single-parity field covers only the sites of its parity); the other sites
 * are neither read nor written. Reductions sum in lexicographic site order in double.
 *
 * Written from the API's documentation (include/taskqcd.h), independently of the library's
 * kernels, so that a test compares two implementations. */
#ifndef TQ_BLAS_REFERENCE_H
#define TQ_BLAS_REFERENCE_H

#include <stdint.h>
#include <stddef.h>
#include <math.h>

typedef struct ref_geom {
    int64_t nsites;            /* sites of the host array (local volume) */
    int nreal;                 /* reals per site: 24 or 6 */
    const unsigned char *in;   /* in[s] != 0: site s belongs to the field's subset */
} ref_geom;

typedef struct ref_cplx { double re, im; } ref_cplx;

/* Loop over the complex components (re at index k, im at k + 1) of the subset's sites. */
#define REF_FOR(g, k) \
    for (int64_t ref_s_ = 0; ref_s_ < (g)->nsites; ref_s_++) \
        if ((g)->in[ref_s_]) \
            for (int64_t k = ref_s_ * (g)->nreal, ref_e_ = k + (g)->nreal; k < ref_e_; k += 2)

static inline ref_cplx ref_cmul(ref_cplx a, double re, double im)
{
    ref_cplx r = {a.re * re - a.im * im, a.re * im + a.im * re};
    return r;
}

static inline void ref_zero(const ref_geom *g, double *x)
{
    REF_FOR(g, k) { x[k] = 0.0; x[k + 1] = 0.0; }
}

static inline void ref_copy(const ref_geom *g, double *dst, const double *src)
{
    REF_FOR(g, k) { dst[k] = src[k]; dst[k + 1] = src[k + 1]; }
}

static inline void ref_scale(const ref_geom *g, double a, double *x)
{
    REF_FOR(g, k) { x[k] *= a; x[k + 1] *= a; }
}

static inline void ref_axpy(const ref_geom *g, double a, const double *x, double *y)
{
    REF_FOR(g, k) { y[k] = a * x[k] + y[k]; y[k + 1] = a * x[k + 1] + y[k + 1]; }
}

static inline void ref_xpay(const ref_geom *g, const double *x, double a, double *y)
{
    REF_FOR(g, k) { y[k] = x[k] + a * y[k]; y[k + 1] = x[k + 1] + a * y[k + 1]; }
}

static inline void ref_axpby(const ref_geom *g, double a, const double *x, double b, double *y)
{
    REF_FOR(g, k) { y[k] = a * x[k] + b * y[k]; y[k + 1] = a * x[k + 1] + b * y[k + 1]; }
}

static inline void ref_caxpy(const ref_geom *g, ref_cplx a, const double *x, double *y)
{
    REF_FOR(g, k) {
        ref_cplx ax = ref_cmul(a, x[k], x[k + 1]);
        y[k] += ax.re;
        y[k + 1] += ax.im;
    }
}

static inline void ref_caxpby(const ref_geom *g, ref_cplx a, const double *x, ref_cplx b, double *y)
{
    REF_FOR(g, k) {
        ref_cplx ax = ref_cmul(a, x[k], x[k + 1]), by = ref_cmul(b, y[k], y[k + 1]);
        y[k] = ax.re + by.re;
        y[k + 1] = ax.im + by.im;
    }
}

static inline double ref_norm2(const ref_geom *g, const double *x)
{
    double s = 0.0;
    REF_FOR(g, k) s += x[k] * x[k] + x[k + 1] * x[k + 1];
    return s;
}

/* sum conj(x) y */
static inline ref_cplx ref_cdot(const ref_geom *g, const double *x, const double *y)
{
    ref_cplx s = {0.0, 0.0};
    REF_FOR(g, k) {
        s.re += x[k] * y[k] + x[k + 1] * y[k + 1];
        s.im += x[k] * y[k + 1] - x[k + 1] * y[k];
    }
    return s;
}

static inline double ref_rdot(const ref_geom *g, const double *x, const double *y)
{
    return ref_cdot(g, x, y).re;
}

/* y = a x + y; returns |y|^2 (of the new y) */
static inline double ref_axpy_norm2(const ref_geom *g, double a, const double *x, double *y)
{
    ref_axpy(g, a, x, y);
    return ref_norm2(g, y);
}

/* x += alpha p; r -= alpha Ap; returns |r|^2 */
static inline double ref_cg_update(const ref_geom *g, double alpha, const double *p,
                                   const double *Ap, double *x, double *r)
{
    ref_axpy(g, alpha, p, x);
    ref_axpy(g, -alpha, Ap, r);
    return ref_norm2(g, r);
}

/* p = r + beta p */
static inline void ref_cg_direction(const ref_geom *g, double beta, const double *r, double *p)
{
    ref_xpay(g, r, beta, p);
}

/* x += alpha p + omega s; r = s - omega t; returns |r|^2 and <r0, r> */
static inline void ref_bicgstab_update(const ref_geom *g, ref_cplx alpha, ref_cplx omega,
                                       const double *p, const double *s, const double *t,
                                       const double *r0, double *x, double *r,
                                       double *norm2_r, ref_cplx *r0_dot_r)
{
    REF_FOR(g, k) {
        ref_cplx ap = ref_cmul(alpha, p[k], p[k + 1]);
        ref_cplx os = ref_cmul(omega, s[k], s[k + 1]);
        ref_cplx ot = ref_cmul(omega, t[k], t[k + 1]);
        x[k] += ap.re + os.re;
        x[k + 1] += ap.im + os.im;
        r[k] = s[k] - ot.re;
        r[k + 1] = s[k + 1] - ot.im;
    }
    *norm2_r = ref_norm2(g, r);
    *r0_dot_r = ref_cdot(g, r0, r);
}

/* p = r + beta (p - omega v) */
static inline void ref_bicgstab_direction(const ref_geom *g, ref_cplx beta, ref_cplx omega,
                                          const double *r, const double *v, double *p)
{
    REF_FOR(g, k) {
        ref_cplx ov = ref_cmul(omega, v[k], v[k + 1]);
        ref_cplx d = ref_cmul(beta, p[k] - ov.re, p[k + 1] - ov.im);
        p[k] = r[k] + d.re;
        p[k + 1] = r[k + 1] + d.im;
    }
}

/* <x, y> and |x|^2 */
static inline void ref_cdot_norm2(const ref_geom *g, const double *x, const double *y,
                                  ref_cplx *dot, double *norm2_x)
{
    *dot = ref_cdot(g, x, y);
    *norm2_x = ref_norm2(g, x);
}

/* Scales for judging reductions: sum |x||y| over the subset (bounds the rounding of a dot
 * product whatever the cancellation). */
static inline double ref_abs_dot(const ref_geom *g, const double *x, const double *y)
{
    double s = 0.0;
    REF_FOR(g, k) s += (x[k] < 0 ? -x[k] : x[k]) * (y[k] < 0 ? -y[k] : y[k])
                     + (x[k + 1] < 0 ? -x[k + 1] : x[k + 1]) * (y[k + 1] < 0 ? -y[k + 1] : y[k + 1]);
    return s;
}

/* ---- driver shared by the BLAS tests ----------------------------------------------------
 * Every tq_blas_* function as an "op" with its field operands in a fixed order (inputs
 * first, as in the API's argument lists; tq_blas_copy as [src, dst]) and its reductions as
 * up to 3 doubles, in the order the API returns them. */
#include "taskqcd.h"

enum ref_op {
    RO_ZERO, RO_COPY, RO_SCALE, RO_AXPY, RO_XPAY, RO_AXPBY, RO_CAXPY, RO_CAXPBY, RO_NORM2,
    RO_RDOT, RO_CDOT, RO_AXPY_NORM2, RO_CG_UPDATE, RO_CG_DIRECTION, RO_BICGSTAB_UPDATE,
    RO_BICGSTAB_DIRECTION, RO_CDOT_NORM2, RO_NUM
};

typedef struct ref_opdef {
    const char *name;
    int nop;          /* field operands */
    unsigned wr;      /* bit i: operand i is written */
    int nres;         /* reduction results (doubles) */
    int fused;        /* the reductions are of a written operand */
} ref_opdef;

static const ref_opdef ref_ops[RO_NUM] = {
    {"zero", 1, 1u, 0, 0},                 /* [x] */
    {"copy", 2, 2u, 0, 0},                 /* [src, dst] */
    {"scale", 1, 1u, 0, 0},                /* [x] */
    {"axpy", 2, 2u, 0, 0},                 /* [x, y] */
    {"xpay", 2, 2u, 0, 0},
    {"axpby", 2, 2u, 0, 0},
    {"caxpy", 2, 2u, 0, 0},
    {"caxpby", 2, 2u, 0, 0},
    {"norm2", 1, 0u, 1, 0},                /* [x] -> |x|^2 */
    {"rdot", 2, 0u, 1, 0},                 /* [x, y] -> Re<x,y> */
    {"cdot", 2, 0u, 2, 0},                 /* [x, y] -> re, im */
    {"axpy_norm2", 2, 2u, 1, 1},           /* [x, y] -> |y|^2 */
    {"cg_update", 4, 12u, 1, 1},           /* [p, Ap, x, r] -> |r|^2 */
    {"cg_direction", 2, 2u, 0, 0},         /* [r, p] */
    {"bicgstab_update", 6, 48u, 3, 1},     /* [p, s, t, r0, x, r] -> |r|^2, <r0,r> */
    {"bicgstab_direction", 3, 4u, 0, 0},   /* [r, v, p] */
    {"cdot_norm2", 2, 0u, 3, 0},           /* [x, y] -> <x,y> re, im, |x|^2 */
};

/* The coefficients every test uses. */
static const double REF_A = 0.7, REF_B = -1.3;
static const ref_cplx REF_CA = {0.6, -0.8}, REF_CB = {-0.3, 1.1};
static const ref_cplx REF_ALPHA = {0.45, 0.2}, REF_OMEGA = {-0.7, 0.35}, REF_BETA = {0.9, -0.4};

static inline tq_complex ref_tq(ref_cplx c)
{
    tq_complex r = {c.re, c.im};
    return r;
}

/* Runs op on library fields; res receives its reductions. */
static inline tq_status ref_run_lib(int op, tq_field *const *f, double *res)
{
    tq_status st;
    tq_complex z;
    switch (op) {
    case RO_ZERO: return tq_blas_zero(f[0]);
    case RO_COPY: return tq_blas_copy(f[1], f[0]);
    case RO_SCALE: return tq_blas_scale(REF_A, f[0]);
    case RO_AXPY: return tq_blas_axpy(REF_A, f[0], f[1]);
    case RO_XPAY: return tq_blas_xpay(f[0], REF_A, f[1]);
    case RO_AXPBY: return tq_blas_axpby(REF_A, f[0], REF_B, f[1]);
    case RO_CAXPY: return tq_blas_caxpy(ref_tq(REF_CA), f[0], f[1]);
    case RO_CAXPBY: return tq_blas_caxpby(ref_tq(REF_CA), f[0], ref_tq(REF_CB), f[1]);
    case RO_NORM2: return tq_blas_norm2(f[0], &res[0]);
    case RO_RDOT: return tq_blas_rdot(f[0], f[1], &res[0]);
    case RO_CDOT:
        st = tq_blas_cdot(f[0], f[1], &z);
        res[0] = z.re; res[1] = z.im;
        return st;
    case RO_AXPY_NORM2: return tq_blas_axpy_norm2(REF_A, f[0], f[1], &res[0]);
    case RO_CG_UPDATE: return tq_blas_cg_update(REF_A, f[0], f[1], f[2], f[3], &res[0]);
    case RO_CG_DIRECTION: return tq_blas_cg_direction(REF_B, f[0], f[1]);
    case RO_BICGSTAB_UPDATE:
        st = tq_blas_bicgstab_update(ref_tq(REF_ALPHA), ref_tq(REF_OMEGA), f[0], f[1], f[2], f[3],
                                     f[4], f[5], &res[0], &z);
        res[1] = z.re; res[2] = z.im;
        return st;
    case RO_BICGSTAB_DIRECTION:
        return tq_blas_bicgstab_direction(ref_tq(REF_BETA), ref_tq(REF_OMEGA), f[0], f[1], f[2]);
    case RO_CDOT_NORM2:
        st = tq_blas_cdot_norm2(f[0], f[1], &z, &res[2]);
        res[0] = z.re; res[1] = z.im;
        return st;
    }
    return TQ_ERR_INVALID_ARG;
}

/* The same on host arrays with the reference. */
static inline void ref_run_ref(int op, const ref_geom *g, double *const *h, double *res)
{
    ref_cplx z;
    switch (op) {
    case RO_ZERO: ref_zero(g, h[0]); break;
    case RO_COPY: ref_copy(g, h[1], h[0]); break;
    case RO_SCALE: ref_scale(g, REF_A, h[0]); break;
    case RO_AXPY: ref_axpy(g, REF_A, h[0], h[1]); break;
    case RO_XPAY: ref_xpay(g, h[0], REF_A, h[1]); break;
    case RO_AXPBY: ref_axpby(g, REF_A, h[0], REF_B, h[1]); break;
    case RO_CAXPY: ref_caxpy(g, REF_CA, h[0], h[1]); break;
    case RO_CAXPBY: ref_caxpby(g, REF_CA, h[0], REF_CB, h[1]); break;
    case RO_NORM2: res[0] = ref_norm2(g, h[0]); break;
    case RO_RDOT: res[0] = ref_rdot(g, h[0], h[1]); break;
    case RO_CDOT: z = ref_cdot(g, h[0], h[1]); res[0] = z.re; res[1] = z.im; break;
    case RO_AXPY_NORM2: res[0] = ref_axpy_norm2(g, REF_A, h[0], h[1]); break;
    case RO_CG_UPDATE: res[0] = ref_cg_update(g, REF_A, h[0], h[1], h[2], h[3]); break;
    case RO_CG_DIRECTION: ref_cg_direction(g, REF_B, h[0], h[1]); break;
    case RO_BICGSTAB_UPDATE:
        ref_bicgstab_update(g, REF_ALPHA, REF_OMEGA, h[0], h[1], h[2], h[3], h[4], h[5], &res[0], &z);
        res[1] = z.re; res[2] = z.im;
        break;
    case RO_BICGSTAB_DIRECTION: ref_bicgstab_direction(g, REF_BETA, REF_OMEGA, h[0], h[1], h[2]); break;
    case RO_CDOT_NORM2: ref_cdot_norm2(g, h[0], h[1], &z, &res[2]); res[0] = z.re; res[1] = z.im; break;
    default: break;
    }
}

/* The reductions of op computed from the operands as they are after the op (for fused
 * ops: of the written operands' final values), and for each result a scale that bounds
 * its rounding error: the value for a norm, sum |x||y| for a dot product. */
static inline void ref_reduce_after(int op, const ref_geom *g, double *const *h, double *res,
                                    double *scale)
{
    ref_cplx z;
    switch (op) {
    case RO_NORM2: res[0] = scale[0] = ref_norm2(g, h[0]); break;
    case RO_RDOT: res[0] = ref_rdot(g, h[0], h[1]); scale[0] = ref_abs_dot(g, h[0], h[1]); break;
    case RO_CDOT:
        z = ref_cdot(g, h[0], h[1]);
        res[0] = z.re; res[1] = z.im;
        scale[0] = scale[1] = ref_abs_dot(g, h[0], h[1]);
        break;
    case RO_AXPY_NORM2: res[0] = scale[0] = ref_norm2(g, h[1]); break;
    case RO_CG_UPDATE: res[0] = scale[0] = ref_norm2(g, h[3]); break;
    case RO_BICGSTAB_UPDATE:
        res[0] = scale[0] = ref_norm2(g, h[5]);
        z = ref_cdot(g, h[3], h[5]);
        res[1] = z.re; res[2] = z.im;
        scale[1] = scale[2] = ref_abs_dot(g, h[3], h[5]);
        break;
    case RO_CDOT_NORM2:
        z = ref_cdot(g, h[0], h[1]);
        res[0] = z.re; res[1] = z.im;
        scale[0] = scale[1] = ref_abs_dot(g, h[0], h[1]);
        res[2] = scale[2] = ref_norm2(g, h[0]);
        break;
    default: break;
    }
}

/* xorshift64* : the tests' random numbers (fixed seeds, same on every machine). */
static inline uint64_t ref_rng_next(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x >> 12; x ^= x << 25; x ^= x >> 27;
    *s = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* uniform in [-1, 1) */
static inline double ref_rng_uniform(uint64_t *s)
{
    return (double)(ref_rng_next(s) >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

/* Random field data with per-site magnitudes spread over 2^-8 .. 2^8 (exercises half
 * precision's per-site norm), some all-zero sites and some sites dominated by one
 * component. which distinguishes operands (different zero sites). */
static inline void ref_fill_random(double *h, int64_t nsites, int nreal, uint64_t seed, int which)
{
    uint64_t s = seed * 0x9E3779B97F4A7C15ULL + (uint64_t)which * 0xD1B54A32D192ED03ULL + 1;
    for (int i = 0; i < 4; i++) ref_rng_next(&s);
    for (int64_t site = 0; site < nsites; site++) {
        double mag = ldexp(1.0, (int)(ref_rng_next(&s) % 17) - 8);
        int zero = (site % 37) == (int64_t)(5 + which);
        int spike = (site % 41) == 3;
        for (int k = 0; k < nreal; k++) {
            double v = ref_rng_uniform(&s) * mag;
            if (zero) v = 0.0;
            else if (spike && k != 0) v *= 1e-7;
            h[site * nreal + k] = v;
        }
    }
}

/* Tolerances shared by the BLAS tests, all relative to a site max or a sum of |terms|. */

/* Largest storage rounding of a component, relative to its site max. */
static inline double quantum(tq_precision p)
{
    switch (p) {
    case TQ_DOUBLE: return 0.0;
    case TQ_SINGLE: return 6.0e-8;                /* 2^-24 (round to nearest) */
    case TQ_HALF: return 0.5 / 32767.0 * 1.02;   /* half a quantum; the norm is a float */
    }
    return 0.0;
}

/* Arithmetic error relative to the operands' site max: double arithmetic done in another
 * order; all-half operations compute in float (coefficients rounded to float, a product
 * and a sum: about 3 u (1 + |a|) with u = 2^-24, |a| <= 1.3). */
static inline double arith_tol(tq_precision p) { return p == TQ_HALF ? 5e-7 : 4e-14; }

/* Reductions, relative to the sum of |terms|: double per-site arithmetic is exact on stored
 * values up to the final additions; all-half operations sum each site's 24 terms in float
 * (blas_site.h), bounded by gamma_24 = 24 u / (1 - 24 u), u = 2^-24. */
static inline double reduce_tol(tq_precision p) { return p == TQ_HALF ? 1.5e-6 : 1e-12; }

#endif
