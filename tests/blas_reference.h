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

#endif
