/* Per-site SU(3) algebra shared by CPU and CUDA code (compiled by gcc as C11 and by nvcc
 * as CUDA C++, see tq_hd.h).
 *
 * A 3x3 complex matrix is 18 doubles, row-major, (re, im) pairs: element (i, j) is
 * m[2*(3*i+j)] + i m[2*(3*i+j)+1]. A color vector is 6 doubles. Rows are called a, b, c
 * as in paper 004 Appendix A.
 *
 * Matrix products and the adjoint go through a local temporary, so the output may alias an
 * input (u = g u is fine). Callers with float data convert to double around these calls.
 */
#ifndef TQ_SU3_H
#define TQ_SU3_H

#include "tq_hd.h"

#include <math.h>

/* Real and imaginary parts of element (i, j). */
#define TQ_SU3_RE(m, i, j) ((m)[2 * (3 * (i) + (j))])
#define TQ_SU3_IM(m, i, j) ((m)[2 * (3 * (i) + (j)) + 1])

TQ_HD void tq_su3_copy(double *dst, const double *src)
{
    for (int k = 0; k < 18; k++) dst[k] = src[k];
}

TQ_HD void tq_su3_unit(double *u)
{
    for (int k = 0; k < 18; k++) u[k] = 0.0;
    u[0] = u[8] = u[16] = 1.0;
}

/* c = a b */
TQ_HD void tq_su3_mul(double *c, const double *a, const double *b)
{
    double t[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double re = 0, im = 0;
            for (int k = 0; k < 3; k++) {
                double ar = TQ_SU3_RE(a, i, k), ai = TQ_SU3_IM(a, i, k);
                double br = TQ_SU3_RE(b, k, j), bi = TQ_SU3_IM(b, k, j);
                re += ar * br - ai * bi;
                im += ar * bi + ai * br;
            }
            TQ_SU3_RE(t, i, j) = re;
            TQ_SU3_IM(t, i, j) = im;
        }
    tq_su3_copy(c, t);
}

/* c = a b^dag: (a b^dag)_ij = sum_k a_ik conj(b_jk) */
TQ_HD void tq_su3_mul_adj(double *c, const double *a, const double *b)
{
    double t[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double re = 0, im = 0;
            for (int k = 0; k < 3; k++) {
                double ar = TQ_SU3_RE(a, i, k), ai = TQ_SU3_IM(a, i, k);
                double br = TQ_SU3_RE(b, j, k), bi = TQ_SU3_IM(b, j, k);
                re += ar * br + ai * bi;
                im += ai * br - ar * bi;
            }
            TQ_SU3_RE(t, i, j) = re;
            TQ_SU3_IM(t, i, j) = im;
        }
    tq_su3_copy(c, t);
}

/* c = a^dag b: (a^dag b)_ij = sum_k conj(a_ki) b_kj */
TQ_HD void tq_su3_adj_mul(double *c, const double *a, const double *b)
{
    double t[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double re = 0, im = 0;
            for (int k = 0; k < 3; k++) {
                double ar = TQ_SU3_RE(a, k, i), ai = TQ_SU3_IM(a, k, i);
                double br = TQ_SU3_RE(b, k, j), bi = TQ_SU3_IM(b, k, j);
                re += ar * br + ai * bi;
                im += ar * bi - ai * br;
            }
            TQ_SU3_RE(t, i, j) = re;
            TQ_SU3_IM(t, i, j) = im;
        }
    tq_su3_copy(c, t);
}

/* b = a^dag */
TQ_HD void tq_su3_adjoint(double *b, const double *a)
{
    double t[18];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            TQ_SU3_RE(t, i, j) = TQ_SU3_RE(a, j, i);
            TQ_SU3_IM(t, i, j) = -TQ_SU3_IM(a, j, i);
        }
    tq_su3_copy(b, t);
}

/* out = u v and out = u^dag v for a color vector v (out must not alias v). */
TQ_HD void tq_su3_mul_vec(double *out, const double *u, const double *v)
{
    for (int i = 0; i < 3; i++) {
        double re = 0, im = 0;
        for (int k = 0; k < 3; k++) {
            double ur = TQ_SU3_RE(u, i, k), ui = TQ_SU3_IM(u, i, k);
            re += ur * v[2 * k] - ui * v[2 * k + 1];
            im += ur * v[2 * k + 1] + ui * v[2 * k];
        }
        out[2 * i] = re;
        out[2 * i + 1] = im;
    }
}

TQ_HD void tq_su3_adj_mul_vec(double *out, const double *u, const double *v)
{
    for (int i = 0; i < 3; i++) {
        double re = 0, im = 0;
        for (int k = 0; k < 3; k++) {
            double ur = TQ_SU3_RE(u, k, i), ui = TQ_SU3_IM(u, k, i);
            re += ur * v[2 * k] + ui * v[2 * k + 1];
            im += ur * v[2 * k + 1] - ui * v[2 * k];
        }
        out[2 * i] = re;
        out[2 * i + 1] = im;
    }
}

/* tr = Tr a (complex, two doubles) */
TQ_HD void tq_su3_trace(double *tr, const double *a)
{
    tr[0] = a[0] + a[8] + a[16];
    tr[1] = a[1] + a[9] + a[17];
}

/* Re Tr(a b^dag) = sum_ij Re(a_ij conj(b_ij)), without forming the product (plaquettes). */
TQ_HD double tq_su3_re_trace_mul_adj(const double *a, const double *b)
{
    double t = 0;
    for (int k = 0; k < 9; k++) t += a[2 * k] * b[2 * k] + a[2 * k + 1] * b[2 * k + 1];
    return t;
}

/* w = x cross y for complex 3-vectors (no conjugation). */
TQ_HD void tq_su3_cross(double *w, const double *x, const double *y)
{
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        w[2 * k] = x[2 * k1] * y[2 * k2] - x[2 * k1 + 1] * y[2 * k2 + 1]
                 - (x[2 * k2] * y[2 * k1] - x[2 * k2 + 1] * y[2 * k1 + 1]);
        w[2 * k + 1] = x[2 * k1] * y[2 * k2 + 1] + x[2 * k1 + 1] * y[2 * k2]
                     - (x[2 * k2] * y[2 * k1 + 1] + x[2 * k2 + 1] * y[2 * k1]);
    }
}

/* det = a . (b x c) for rows a, b, c (complex, two doubles). */
TQ_HD void tq_su3_det(double *det, const double *u)
{
    double bc[6];
    tq_su3_cross(bc, u + 6, u + 12);
    double dr = 0, di = 0;
    for (int k = 0; k < 3; k++) {
        dr += u[2 * k] * bc[2 * k] - u[2 * k + 1] * bc[2 * k + 1];
        di += u[2 * k] * bc[2 * k + 1] + u[2 * k + 1] * bc[2 * k];
    }
    det[0] = dr;
    det[1] = di;
}

/* Third row from the first two: c = (a x b)^*, which for orthonormal a, b makes det = 1
 * (paper 004, A.1). */
TQ_HD void tq_su3_third_row(double *u)
{
    double w[6];
    tq_su3_cross(w, u, u + 6);
    for (int k = 0; k < 3; k++) {
        u[12 + 2 * k] = w[2 * k];
        u[12 + 2 * k + 1] = -w[2 * k + 1];
    }
}

/* Largest of |(U U^dag - 1)_ij| and |det U - 1|; +inf when anything is NaN, so a broken
 * link can never pass a tolerance test. */
TQ_HD double tq_su3_unitarity_deviation(const double *u)
{
    double worst = 0;
    double uu[18], det[2];
    tq_su3_mul_adj(uu, u, u);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double d = hypot(TQ_SU3_RE(uu, i, j) - (i == j), TQ_SU3_IM(uu, i, j));
            if (d > worst || isnan(d)) worst = isnan(d) ? INFINITY : d;
        }
    tq_su3_det(det, u);
    double d = hypot(det[0] - 1.0, det[1]);
    if (d > worst || isnan(d)) worst = isnan(d) ? INFINITY : d;
    return worst;
}

/* Project back to SU(3) in place: normalise row a, make row b orthonormal to it
 * (Gram-Schmidt), then c = (a x b)^*. The old third row is ignored, so this also builds
 * an SU(3) matrix from any two independent rows. A zero row gives NaNs. */
TQ_HD void tq_su3_reunitarize(double *u)
{
    double *a = u, *b = u + 6;
    double n = 0;
    for (int k = 0; k < 6; k++) n += a[k] * a[k];
    n = 1.0 / sqrt(n);
    for (int k = 0; k < 6; k++) a[k] *= n;
    /* b -= <a, b> a with <a, b> = sum_k conj(a_k) b_k */
    double pr = 0, pi = 0;
    for (int k = 0; k < 3; k++) {
        pr += a[2 * k] * b[2 * k] + a[2 * k + 1] * b[2 * k + 1];
        pi += a[2 * k] * b[2 * k + 1] - a[2 * k + 1] * b[2 * k];
    }
    for (int k = 0; k < 3; k++) {
        b[2 * k] -= pr * a[2 * k] - pi * a[2 * k + 1];
        b[2 * k + 1] -= pr * a[2 * k + 1] + pi * a[2 * k];
    }
    n = 0;
    for (int k = 0; k < 6; k++) n += b[k] * b[k];
    n = 1.0 / sqrt(n);
    for (int k = 0; k < 6; k++) b[k] *= n;
    tq_su3_third_row(u);
}

/* ---- gauge compression (paper 004, Appendix A) ------------------------------------------ */

/* 12 numbers: the first two rows as stored. */
TQ_HD void tq_su3_pack_12(double *p, const double *u)
{
    for (int k = 0; k < 12; k++) p[k] = u[k];
}

TQ_HD void tq_su3_reconstruct_12(double *u, const double *p)
{
    for (int k = 0; k < 12; k++) u[k] = p[k];
    tq_su3_third_row(u);
}

/* 8 numbers: p = { arg a1, arg c1, Re a2, Im a2, Re a3, Im a3, Re b1, Im b1 }. */
TQ_HD void tq_su3_pack_8(double *p, const double *u)
{
    p[0] = atan2(u[1], u[0]);     /* a1 */
    p[1] = atan2(u[13], u[12]);   /* c1 */
    p[2] = u[2];
    p[3] = u[3];
    p[4] = u[4];
    p[5] = u[5];
    p[6] = u[6];
    p[7] = u[7];
}

/* The rows b, c span the plane orthogonal to a, which has the orthogonal basis
 *   B = (0, -a3^*, a2^*),  C = (a x B)^* = (n2, -a1^* a2, -a1^* a3),  |B|^2 = n2, |C|^2 = n2,
 * with n2 = |a2|^2 + |a3|^2. (b, c) is an SU(2) rotation of (B, C)/N whose entries are
 * fixed by the first column: b = (c1^* B + b1 C)/n2, c = (-b1^* B + c1 C)/n2.
 * The moduli come from unitarity: |a1|^2 = 1 - n2 and |c1|^2 = 1 - |a1|^2 - |b1|^2
 * = n2 - |b1|^2; the second form avoids cancellation when |a1| is close to 1.
 * n2 == 0 (a = (e^{i theta}, 0, 0), e.g. a unit link) loses b and c entirely; we return
 * diag(a1, 1, a1^*), which is exact for unit links. */
TQ_HD void tq_su3_reconstruct_8(double *u, const double *p)
{
    double a2r = p[2], a2i = p[3], a3r = p[4], a3i = p[5], b1r = p[6], b1i = p[7];
    double n2 = a2r * a2r + a2i * a2i + a3r * a3r + a3i * a3i;
    double a1_mod = sqrt(fmax(0.0, 1.0 - n2));
    double a1r = a1_mod * cos(p[0]), a1i = a1_mod * sin(p[0]);
    if (n2 == 0.0) {
        for (int k = 0; k < 18; k++) u[k] = 0.0;
        u[0] = a1r;
        u[1] = a1i;
        u[8] = 1.0;
        u[16] = a1r;
        u[17] = -a1i;
        return;
    }
    double c1_mod = sqrt(fmax(0.0, n2 - (b1r * b1r + b1i * b1i)));
    double c1r = c1_mod * cos(p[1]), c1i = c1_mod * sin(p[1]);

    double B[6] = { 0.0, 0.0, -a3r, a3i, a2r, -a2i };
    /* C_k = -a1^* a_k for k = 2, 3 */
    double C[6] = { n2, 0.0,
                    -(a1r * a2r + a1i * a2i), -(a1r * a2i - a1i * a2r),
                    -(a1r * a3r + a1i * a3i), -(a1r * a3i - a1i * a3r) };
    double inv = 1.0 / n2;

    u[0] = a1r; u[1] = a1i;
    u[2] = a2r; u[3] = a2i;
    u[4] = a3r; u[5] = a3i;
    u[6] = b1r; u[7] = b1i;      /* stored exactly; the formula would round them */
    u[12] = c1r; u[13] = c1i;
    for (int k = 1; k < 3; k++) {
        double Br = B[2 * k], Bi = B[2 * k + 1], Cr = C[2 * k], Ci = C[2 * k + 1];
        /* b_k = (c1^* B_k + b1 C_k) / n2 */
        u[6 + 2 * k] = (c1r * Br + c1i * Bi + b1r * Cr - b1i * Ci) * inv;
        u[6 + 2 * k + 1] = (c1r * Bi - c1i * Br + b1r * Ci + b1i * Cr) * inv;
        /* c_k = (-b1^* B_k + c1 C_k) / n2 */
        u[12 + 2 * k] = (-(b1r * Br + b1i * Bi) + c1r * Cr - c1i * Ci) * inv;
        u[12 + 2 * k + 1] = (-(b1r * Bi - b1i * Br) + c1r * Ci + c1i * Cr) * inv;
    }
}

#endif
