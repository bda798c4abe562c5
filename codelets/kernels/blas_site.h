/* BLAS-1 and reduction arithmetic on one site, shared by the CPU and CUDA codelets.
 *
 * Every operation works on complex components (re, im) of up to 6 operands; inputs are
 * loaded and arithmetic done in double whatever the storage precision (the operations are
 * memory bound), and reductions accumulate in double. The operand order of each operation
 * is the order of its StarPU buffers; a reduction's partial sums go to one more buffer. */
#ifndef TQ_BLAS_SITE_H
#define TQ_BLAS_SITE_H

#include "kernels/field_layout.h"

enum tq_blas_op {
    TQ_OP_ZERO,               /* y = 0                                  [y]             */
    TQ_OP_COPY,               /* y = x (converting precision)           [x, y]          */
    TQ_OP_SCALE,              /* x = a x                                [x]             */
    TQ_OP_AXPY,               /* y = a x + y                            [x, y]          */
    TQ_OP_XPAY,               /* y = x + a y                            [x, y]          */
    TQ_OP_AXPBY,              /* y = a x + b y                          [x, y]          */
    TQ_OP_CAXPY,              /* y = a x + y, a complex                 [x, y]          */
    TQ_OP_CAXPBY,             /* y = a x + b y, a, b complex            [x, y]          */
    TQ_OP_NORM2,              /* sum |x|^2                              [x]             */
    TQ_OP_RDOT,               /* Re sum conj(x) y                       [x, y]          */
    TQ_OP_CDOT,               /* sum conj(x) y                          [x, y]          */
    TQ_OP_AXPY_NORM2,         /* y = a x + y; sum |y|^2                 [x, y]          */
    TQ_OP_CG_UPDATE,          /* x += a p; r -= a Ap; sum |r|^2         [p, Ap, x, r]   */
    TQ_OP_CG_DIRECTION,       /* p = r + b p                            [r, p]          */
    TQ_OP_BICGSTAB_UPDATE,    /* x += alpha p + omega s; r = s - omega t;
                                 sum |r|^2, sum conj(r0) r              [p, s, t, r0, x, r] */
    TQ_OP_BICGSTAB_DIRECTION, /* p = r + beta (p - omega v)             [r, v, p]       */
    TQ_OP_CDOT_NORM2,         /* sum conj(x) y, sum |x|^2               [x, y]          */
    TQ_NUM_BLAS_OPS
};

#define TQ_BLAS_MAX_OPERANDS 6
#define TQ_BLAS_MAX_RESULTS 3
#define TQ_BLAS_MAX_REALS 24        /* spinor; staggered has 6 */

/* Operands per op, bit masks of operands read and written, and number of results. */
TQ_HD int tq_blas_noperands(int op)
{
    switch (op) {
    case TQ_OP_ZERO: case TQ_OP_SCALE: case TQ_OP_NORM2: return 1;
    case TQ_OP_CG_UPDATE: return 4;
    case TQ_OP_BICGSTAB_UPDATE: return 6;
    case TQ_OP_BICGSTAB_DIRECTION: return 3;
    default: return 2;
    }
}

TQ_HD unsigned tq_blas_reads(int op)
{
    switch (op) {
    case TQ_OP_ZERO: return 0u;
    case TQ_OP_COPY: return 1u;
    case TQ_OP_SCALE: case TQ_OP_NORM2: return 1u;
    case TQ_OP_CG_UPDATE: return 15u;
    case TQ_OP_BICGSTAB_UPDATE: return 31u;      /* r is write-only */
    case TQ_OP_BICGSTAB_DIRECTION: return 7u;
    default: return 3u;
    }
}

TQ_HD unsigned tq_blas_writes(int op)
{
    switch (op) {
    case TQ_OP_ZERO: case TQ_OP_SCALE: return 1u;
    case TQ_OP_NORM2: case TQ_OP_RDOT: case TQ_OP_CDOT: case TQ_OP_CDOT_NORM2: return 0u;
    case TQ_OP_CG_UPDATE: return 12u;
    case TQ_OP_BICGSTAB_UPDATE: return 48u;
    case TQ_OP_BICGSTAB_DIRECTION: return 4u;
    default: return 2u;
    }
}

TQ_HD int tq_blas_nresults(int op)
{
    switch (op) {
    case TQ_OP_NORM2: case TQ_OP_RDOT: case TQ_OP_AXPY_NORM2: case TQ_OP_CG_UPDATE: return 1;
    case TQ_OP_CDOT: return 2;
    case TQ_OP_BICGSTAB_UPDATE: case TQ_OP_CDOT_NORM2: return 3;
    default: return 0;
    }
}

/* One complex component of every operand: v[i][0] + i v[i][1]. Written operands are
 * updated in place; acc receives this component's contribution to the reductions. */
TQ_HD void tq_blas_pair(int op, const double *c, double v[TQ_BLAS_MAX_OPERANDS][2], double *acc)
{
    double re, im;
    switch (op) {
    case TQ_OP_ZERO:
        v[0][0] = 0.0; v[0][1] = 0.0; break;
    case TQ_OP_COPY:
        v[1][0] = v[0][0]; v[1][1] = v[0][1]; break;
    case TQ_OP_SCALE:
        v[0][0] *= c[0]; v[0][1] *= c[0]; break;
    case TQ_OP_AXPY:
        v[1][0] += c[0] * v[0][0]; v[1][1] += c[0] * v[0][1]; break;
    case TQ_OP_XPAY:
        v[1][0] = v[0][0] + c[0] * v[1][0]; v[1][1] = v[0][1] + c[0] * v[1][1]; break;
    case TQ_OP_AXPBY:
        v[1][0] = c[0] * v[0][0] + c[1] * v[1][0]; v[1][1] = c[0] * v[0][1] + c[1] * v[1][1]; break;
    case TQ_OP_CAXPY:
        v[1][0] += c[0] * v[0][0] - c[1] * v[0][1];
        v[1][1] += c[0] * v[0][1] + c[1] * v[0][0];
        break;
    case TQ_OP_CAXPBY:
        re = c[0] * v[0][0] - c[1] * v[0][1] + c[2] * v[1][0] - c[3] * v[1][1];
        im = c[0] * v[0][1] + c[1] * v[0][0] + c[2] * v[1][1] + c[3] * v[1][0];
        v[1][0] = re; v[1][1] = im;
        break;
    case TQ_OP_NORM2:
        acc[0] += v[0][0] * v[0][0] + v[0][1] * v[0][1]; break;
    case TQ_OP_RDOT:
        acc[0] += v[0][0] * v[1][0] + v[0][1] * v[1][1]; break;
    case TQ_OP_CDOT:
        acc[0] += v[0][0] * v[1][0] + v[0][1] * v[1][1];
        acc[1] += v[0][0] * v[1][1] - v[0][1] * v[1][0];
        break;
    case TQ_OP_AXPY_NORM2:
        v[1][0] += c[0] * v[0][0]; v[1][1] += c[0] * v[0][1];
        acc[0] += v[1][0] * v[1][0] + v[1][1] * v[1][1];
        break;
    case TQ_OP_CG_UPDATE:
        v[2][0] += c[0] * v[0][0]; v[2][1] += c[0] * v[0][1];
        v[3][0] -= c[0] * v[1][0]; v[3][1] -= c[0] * v[1][1];
        acc[0] += v[3][0] * v[3][0] + v[3][1] * v[3][1];
        break;
    case TQ_OP_CG_DIRECTION:
        v[1][0] = v[0][0] + c[0] * v[1][0]; v[1][1] = v[0][1] + c[0] * v[1][1]; break;
    case TQ_OP_BICGSTAB_UPDATE:
        /* operands p s t r0 x r; c = alpha (re, im), omega (re, im) */
        v[4][0] += c[0] * v[0][0] - c[1] * v[0][1] + c[2] * v[1][0] - c[3] * v[1][1];
        v[4][1] += c[0] * v[0][1] + c[1] * v[0][0] + c[2] * v[1][1] + c[3] * v[1][0];
        v[5][0] = v[1][0] - (c[2] * v[2][0] - c[3] * v[2][1]);
        v[5][1] = v[1][1] - (c[2] * v[2][1] + c[3] * v[2][0]);
        acc[0] += v[5][0] * v[5][0] + v[5][1] * v[5][1];
        acc[1] += v[3][0] * v[5][0] + v[3][1] * v[5][1];
        acc[2] += v[3][0] * v[5][1] - v[3][1] * v[5][0];
        break;
    case TQ_OP_BICGSTAB_DIRECTION:
        /* operands r v p; c = beta (re, im), omega (re, im) */
        re = v[2][0] - (c[2] * v[1][0] - c[3] * v[1][1]);
        im = v[2][1] - (c[2] * v[1][1] + c[3] * v[1][0]);
        v[2][0] = v[0][0] + c[0] * re - c[1] * im;
        v[2][1] = v[0][1] + c[0] * im + c[1] * re;
        break;
    case TQ_OP_CDOT_NORM2:
        acc[0] += v[0][0] * v[1][0] + v[0][1] * v[1][1];
        acc[1] += v[0][0] * v[1][1] - v[0][1] * v[1][0];
        acc[2] += v[0][0] * v[0][0] + v[0][1] * v[0][1];
        break;
    default:
        break;
    }
}

/* The whole operation on site s, one storage chunk (2 or 4 reals) at a time so that GPU
 * threads issue one vector load or store per chunk. bufs[i] and L[i] are operand i's
 * buffer and layout; all operands share nreal; vec is the smallest operand vec, and mixed
 * says whether some operand has a larger one (a converting copy between double, vec 2,
 * and single or half, vec 4): then chunks of 2 are used and outputs stored per site. */
TQ_HD void tq_blas_site_n(int op, const double *c, void *const *bufs, const tq_layout *L,
                          int64_t s, double *acc, const int nreal, const int vec,
                          const int mixed)
{
    const int nop = tq_blas_noperands(op);
    const unsigned rd = tq_blas_reads(op), wr = tq_blas_writes(op);
    double hs[TQ_BLAS_MAX_OPERANDS];
    int half_out = 0;
    TQ_UNROLL
    for (int i = 0; i < nop; i++) {
        hs[i] = (L[i].prec == 2 && (rd >> i & 1u)) ? tq_half_scale(bufs[i], &L[i], s) : 0.0;
        if (L[i].prec == 2 && (wr >> i & 1u)) half_out = 1;
    }
    /* half-precision outputs need the whole site before the norm is known */
    double out[2][TQ_BLAS_MAX_REALS];
    double v[TQ_BLAS_MAX_OPERANDS][2];
    double in[TQ_BLAS_MAX_OPERANDS][4], res[TQ_BLAS_MAX_OPERANDS][4] = {{0.0}};
    TQ_UNROLL
    for (int k0 = 0; k0 < nreal; k0 += vec) {
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (rd >> i & 1u) {
                if (!mixed) tq_load_chunk(bufs[i], &L[i], s, k0 / vec, hs[i], in[i]);
                else {
                    /* converting copy between vec 2 and vec 4 layouts: pick the right half */
                    double tmp[4];
                    tq_load_chunk(bufs[i], &L[i], s, k0 / L[i].vec, hs[i], tmp);
                    int off = k0 % L[i].vec;
                    in[i][0] = tmp[off]; in[i][1] = tmp[off + 1];
                }
            }
        TQ_UNROLL
        for (int p = 0; p < vec; p += 2) {
            TQ_UNROLL
            for (int i = 0; i < nop; i++)
                if (rd >> i & 1u) { v[i][0] = in[i][p]; v[i][1] = in[i][p + 1]; }
            tq_blas_pair(op, c, v, acc);
            for (int i = 0; i < nop; i++)
                if (wr >> i & 1u) { res[i][p] = v[i][0]; res[i][p + 1] = v[i][1]; }
        }
        int o = 0;
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (wr >> i & 1u) {
                if (L[i].prec == 2 || mixed) {
                    TQ_UNROLL
                    for (int p = 0; p < vec; p++) out[o][k0 + p] = res[i][p];
                } else {
                    tq_store_chunk(bufs[i], &L[i], s, k0 / vec, 1.0, res[i]);
                }
                o++;
            }
    }
    if (half_out || mixed) {
        int o = 0;
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (wr >> i & 1u) {
                if (L[i].prec == 2 || mixed) {
                    /* the site's norm first (half), then its chunks */
                    double inv = 1.0;
                    if (L[i].has_norm) {
                        double m = 0.0;
                        TQ_UNROLL
                        for (int k = 0; k < nreal; k++) m = fmax(m, fabs(out[o][k]));
                        float mf = (float)m;
                        tq_layout_norm_ptr(bufs[i], &L[i])[s] = mf;
                        inv = mf > 0.0f ? 1.0 / (double)mf : 0.0;
                    }
                    const int ov = mixed ? L[i].vec : vec;
                    TQ_UNROLL
                    for (int k0 = 0; k0 < nreal; k0 += ov) tq_store_chunk(bufs[i], &L[i], s, k0 / ov, inv, out[o] + k0);
                }
                o++;
            }
    }
}

/* Loop bounds passed as arguments so that callers with compile-time shapes (the CUDA
 * specialisations) get fully unrolled loops and the site in registers. */
TQ_HD void tq_blas_site(int op, const double *c, void *const *bufs, const tq_layout *L,
                        int64_t s, double *acc)
{
    const int nop = tq_blas_noperands(op);
    int vec = L[0].vec, mixed = 0;
    for (int i = 1; i < nop; i++) if (L[i].vec < vec) vec = L[i].vec;
    for (int i = 0; i < nop; i++) mixed |= L[i].vec != vec;
    tq_blas_site_n(op, c, bufs, L, s, acc, L[0].nreal, vec, mixed);
}

/* Arguments of one BLAS task (the codelet's cl_arg). */
typedef struct tq_blas_args {
    int op;
    double c[4];
    tq_layout L[TQ_BLAS_MAX_OPERANDS];
} tq_blas_args;

#endif
