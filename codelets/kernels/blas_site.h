/* BLAS-1 and reduction arithmetic on one site, shared by the CPU and CUDA codelets.
 *
 * Every operation works on complex components (re, im) of up to 6 operands; inputs are
 * loaded and arithmetic done in double whatever the storage precision (the operations are
 * memory bound), and reductions accumulate in double. The operand order of each operation
 * is the order of its StarPU buffers; a reduction's partial sums go to one more buffer. */
#ifndef TQ_BLAS_SITE_H
#define TQ_BLAS_SITE_H

#include "kernels/field_layout.h"
#include "kernels/solver_scalars.h"

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
    TQ_OP_CAXPYZ,             /* z = a x + y, a complex                 [x, y, z]       */
    TQ_OP_CG_X_DIRECTION,     /* x += a p; p = r + b p (the old p in both)
                                 (CG whose r update is fused into the operator) [r, p, x] */
    TQ_OP_BICGSTAB_STEP,      /* x += alpha p + omega s; r' = s - omega t;
                                 p = r' + beta (p - delta (r - s)); r = r';
                                 sum |r|^2, sum conj(q) p    [p, s, t, r, q, x]
                                 (BiCGstab whose other reductions are fused into the
                                 operator: q = M^dag r0, delta = omega / alpha, and
                                 (r - s) / alpha = v = M p, not stored) */
    /* A mixed-precision solver's reliable update (x precise, xs sloppy; b and Ax precise,
     * r, p and r0 sloppy: tq_blas_other_precision): */
    TQ_OP_ACCUMULATE,         /* y += x (x is then stale: zeroed, or overwritten by
                                 a _SET pass)                           [xs, x]         */
    TQ_OP_RELIABLE_RESIDUAL,  /* r' = b - Ax; p += r' - r; r = r'; sum |r'|^2
                                                                        [b, Ax, r, p]   */
    TQ_OP_RELIABLE_RESIDUAL_RHO, /* the same, and sum conj(r0) r'       [b, Ax, r, p, r0] */
    TQ_OP_RELIABLE_RESIDUAL_RHO_QP, /* the same, and sum conj(q) p' (the fused BiCGstab's
                                 next alpha = rho / <q, p>)          [b, Ax, r, p, r0, q] */
    /* The first pass after a reliable update in the fused solvers: x_sloppy = ... instead
     * of x_sloppy += ..., so the accumulation need not zero it nor this pass read it: */
    TQ_OP_CG_X_DIRECTION_SET, /* x = a p; p = r + b p                   [r, p, x]       */
    TQ_OP_BICGSTAB_STEP_SET,  /* x = alpha p + omega s; the rest as TQ_OP_BICGSTAB_STEP
                                                                     [p, s, t, r, q, x] */
    /* Several vectors in one pass (GCR's orthogonalisation: classical Gram-Schmidt over a
     * group of directions reads y once for the group, not once per direction): */
    TQ_OP_MCDOT2,             /* sum conj(x_i) y, i = 0, 1              [x0, x1, y]     */
    TQ_OP_MCDOT3,             /*   i = 0 .. 2                           [x0, x1, x2, y] */
    TQ_OP_MCDOT4,             /*   i = 0 .. 3                       [x0, .., x3, y]     */
    TQ_OP_MCAXPY2,            /* y += sum a_i x_i, a_i complex (c[2i], c[2i + 1]) [x0, x1, y] */
    TQ_OP_MCAXPY3,            /*   i = 0 .. 2                           [x0, x1, x2, y] */
    TQ_OP_MCAXPY4,            /*   i = 0 .. 3                       [x0, .., x3, y]     */
    /* The end of a GCR iteration in one pass (alpha = <Az, r> / |Az|^2, s = 1 / |Az|, from
     * a TQ_OP_CDOT_NORM2 of Az and r): the update with the unnormalised direction, which
     * is then stored normalised: */
    TQ_OP_GCR_UPDATE,         /* x += alpha z; r -= alpha Az; z *= s; Az *= s; sum |r|^2
                                 (c: alpha re, im; s)                   [z, Az, x, r]   */
    TQ_NUM_BLAS_OPS
};

/* CASE(op) for every operation: the codelets' switches instantiate one loop (CPU) or one
 * kernel family (CUDA) per operation, so that the per-site switch folds away. */
#define TQ_BLAS_FOR_EACH_OP(CASE)                                                                  \
    CASE(TQ_OP_ZERO) CASE(TQ_OP_COPY) CASE(TQ_OP_SCALE) CASE(TQ_OP_AXPY) CASE(TQ_OP_XPAY)          \
    CASE(TQ_OP_AXPBY) CASE(TQ_OP_CAXPY) CASE(TQ_OP_CAXPBY) CASE(TQ_OP_NORM2) CASE(TQ_OP_RDOT)     \
    CASE(TQ_OP_CDOT) CASE(TQ_OP_AXPY_NORM2) CASE(TQ_OP_CG_UPDATE) CASE(TQ_OP_CG_DIRECTION)        \
    CASE(TQ_OP_BICGSTAB_UPDATE) CASE(TQ_OP_BICGSTAB_DIRECTION) CASE(TQ_OP_CDOT_NORM2)             \
    CASE(TQ_OP_CAXPYZ) CASE(TQ_OP_CG_X_DIRECTION) CASE(TQ_OP_BICGSTAB_STEP) CASE(TQ_OP_ACCUMULATE)      \
    CASE(TQ_OP_RELIABLE_RESIDUAL) CASE(TQ_OP_RELIABLE_RESIDUAL_RHO) CASE(TQ_OP_RELIABLE_RESIDUAL_RHO_QP)        \
    CASE(TQ_OP_CG_X_DIRECTION_SET) CASE(TQ_OP_BICGSTAB_STEP_SET) CASE(TQ_OP_MCDOT2) CASE(TQ_OP_MCDOT3)          \
    CASE(TQ_OP_MCDOT4) CASE(TQ_OP_MCAXPY2) CASE(TQ_OP_MCAXPY3) CASE(TQ_OP_MCAXPY4) CASE(TQ_OP_GCR_UPDATE)

#define TQ_BLAS_MAX_OPERANDS 6
#define TQ_BLAS_MAX_WRITTEN 4       /* operands written by one op (TQ_OP_GCR_UPDATE) */
#define TQ_BLAS_MAX_RESULTS 8      /* TQ_OP_MCDOT4 */
#define TQ_BLAS_MAX_COEFS 8
#define TQ_BLAS_MAX_REALS 24        /* spinor; staggered has 6 */

/* Vectors x_i of a multi-vector op (TQ_OP_MCDOT2 .. TQ_OP_MCAXPY4); 0 for the others. */
TQ_HD_CONSTEXPR int tq_blas_multi(int op)
{
    return op >= TQ_OP_MCDOT2 && op <= TQ_OP_MCDOT4 ? op - TQ_OP_MCDOT2 + 2
         : op >= TQ_OP_MCAXPY2 && op <= TQ_OP_MCAXPY4 ? op - TQ_OP_MCAXPY2 + 2 : 0;
}
TQ_HD_CONSTEXPR int tq_blas_multi_dot(int op) { return op >= TQ_OP_MCDOT2 && op <= TQ_OP_MCDOT4; }

/* Operands per op, bit masks of operands read and written, and number of results. */
TQ_HD_CONSTEXPR int tq_blas_noperands(int op)
{
    if (tq_blas_multi(op)) return tq_blas_multi(op) + 1;
    switch (op) {
    case TQ_OP_ZERO: case TQ_OP_SCALE: case TQ_OP_NORM2: return 1;
    case TQ_OP_CG_UPDATE: case TQ_OP_RELIABLE_RESIDUAL: case TQ_OP_GCR_UPDATE: return 4;
    case TQ_OP_RELIABLE_RESIDUAL_RHO: return 5;
    case TQ_OP_BICGSTAB_UPDATE: case TQ_OP_BICGSTAB_STEP: case TQ_OP_RELIABLE_RESIDUAL_RHO_QP:
    case TQ_OP_BICGSTAB_STEP_SET:
        return 6;
    case TQ_OP_BICGSTAB_DIRECTION: case TQ_OP_CAXPYZ: case TQ_OP_CG_X_DIRECTION: case TQ_OP_CG_X_DIRECTION_SET: return 3;
    default: return 2;
    }
}

TQ_HD_CONSTEXPR unsigned tq_blas_reads(int op)
{
    if (tq_blas_multi(op)) return (2u << tq_blas_multi(op)) - 1u;
    switch (op) {
    case TQ_OP_ZERO: return 0u;
    case TQ_OP_COPY: return 1u;
    case TQ_OP_SCALE: case TQ_OP_NORM2: return 1u;
    case TQ_OP_CG_UPDATE: case TQ_OP_RELIABLE_RESIDUAL: case TQ_OP_GCR_UPDATE: return 15u;
    case TQ_OP_BICGSTAB_UPDATE: return 31u;      /* r is write-only */
    case TQ_OP_RELIABLE_RESIDUAL_RHO: return 31u;
    case TQ_OP_BICGSTAB_STEP: case TQ_OP_RELIABLE_RESIDUAL_RHO_QP: return 63u;
    case TQ_OP_BICGSTAB_DIRECTION: case TQ_OP_CG_X_DIRECTION: return 7u;
    case TQ_OP_CG_X_DIRECTION_SET: return 3u;     /* x is write-only */
    case TQ_OP_BICGSTAB_STEP_SET: return 31u;
    default: return 3u;
    }
}

TQ_HD_CONSTEXPR unsigned tq_blas_writes(int op)
{
    if (tq_blas_multi(op)) return tq_blas_multi_dot(op) ? 0u : 1u << tq_blas_multi(op);
    switch (op) {
    case TQ_OP_ZERO: case TQ_OP_SCALE: return 1u;
    case TQ_OP_NORM2: case TQ_OP_RDOT: case TQ_OP_CDOT: case TQ_OP_CDOT_NORM2: return 0u;
    case TQ_OP_CG_UPDATE: case TQ_OP_RELIABLE_RESIDUAL: case TQ_OP_RELIABLE_RESIDUAL_RHO:
    case TQ_OP_RELIABLE_RESIDUAL_RHO_QP:
        return 12u;
    case TQ_OP_ACCUMULATE: return 2u;
    case TQ_OP_GCR_UPDATE: return 15u;
    case TQ_OP_BICGSTAB_UPDATE: return 48u;
    case TQ_OP_BICGSTAB_STEP: case TQ_OP_BICGSTAB_STEP_SET: return 41u;   /* p, r, x */
    case TQ_OP_BICGSTAB_DIRECTION: case TQ_OP_CAXPYZ: return 4u;
    case TQ_OP_CG_X_DIRECTION: case TQ_OP_CG_X_DIRECTION_SET: return 6u;
    default: return 2u;
    }
}

TQ_HD_CONSTEXPR int tq_blas_nresults(int op)
{
    if (tq_blas_multi_dot(op)) return 2 * tq_blas_multi(op);
    switch (op) {
    case TQ_OP_NORM2: case TQ_OP_RDOT: case TQ_OP_AXPY_NORM2: case TQ_OP_CG_UPDATE: case TQ_OP_RELIABLE_RESIDUAL:
    case TQ_OP_GCR_UPDATE:
        return 1;
    case TQ_OP_CDOT: return 2;
    case TQ_OP_BICGSTAB_UPDATE: case TQ_OP_CDOT_NORM2: case TQ_OP_BICGSTAB_STEP: case TQ_OP_RELIABLE_RESIDUAL_RHO:
    case TQ_OP_BICGSTAB_STEP_SET:
        return 3;
    case TQ_OP_RELIABLE_RESIDUAL_RHO_QP: return 5;
    default: return 0;
    }
}

/* Operands that may be stored in another precision than operand 0 (all of them in the same
 * one); the others share operand 0's. */
TQ_HD_CONSTEXPR unsigned tq_blas_other_precision(int op)
{
    switch (op) {
    case TQ_OP_COPY: case TQ_OP_ACCUMULATE: return 2u;
    case TQ_OP_RELIABLE_RESIDUAL: return 12u;
    case TQ_OP_RELIABLE_RESIDUAL_RHO: return 28u;
    case TQ_OP_RELIABLE_RESIDUAL_RHO_QP: return 60u;
    default: return 0u;
    }
}

/* Coefficients per op: 4 (c[0..3]), 8 for TQ_OP_BICGSTAB_STEP(_SET) (alpha, omega, beta,
 * delta), 2 per vector for TQ_OP_MCAXPY3 and 4. */
TQ_HD int tq_blas_ncoefs(int op)
{
    if (op == TQ_OP_MCAXPY3 || op == TQ_OP_MCAXPY4) return 2 * tq_blas_multi(op);
    return op == TQ_OP_BICGSTAB_STEP || op == TQ_OP_BICGSTAB_STEP_SET ? 8 : 4;
}

/* The per-site arithmetic in double (tq_blas_pair, tq_blas_site_n) and in float (suffix _f;
 * used when every operand is half precision: values carry 16 bits, and float halves the
 * registers a GPU thread needs for a site). Reductions always accumulate in double: a
 * site's contribution is summed in the site's type, then added to the double total. */
#define TQ_R double
#define TQ_RF(name) name
#include "kernels/blas_site_real.h"
#undef TQ_R
#undef TQ_RF
#define TQ_R float
#define TQ_RF(name) name##_f
#include "kernels/blas_site_real.h"
#undef TQ_R
#undef TQ_RF

/* The operation on site s with shapes read from the layouts (run-time loop bounds); the
 * CUDA specialisations call tq_blas_site_n(_f) with compile-time shapes instead. */
TQ_HD void tq_blas_site(int op, const double *c, void *const *bufs, const tq_layout *L,
                        int64_t s, double *acc)
{
    const int nop = tq_blas_noperands(op);
    int vec = L[0].vec, mixed = 0;
    for (int i = 1; i < nop; i++) if (L[i].vec < vec) vec = L[i].vec;
    int all_half = 1;
    for (int i = 0; i < nop; i++) {
        mixed |= L[i].vec != vec;
        all_half &= L[i].prec == 2;
    }
    if (all_half && !mixed) {
        float cf[TQ_BLAS_MAX_COEFS];
        for (int k = 0; k < TQ_BLAS_MAX_COEFS; k++) cf[k] = (float)c[k];
        tq_blas_site_n_f(op, cf, bufs, L, s, acc, L[0].nreal, vec, 0);
    } else {
        tq_blas_site_n(op, c, bufs, L, s, acc, L[0].nreal, vec, mixed);
    }
}

/* Arguments of one BLAS task (the codelet's cl_arg). Coefficient k is c[k], or, when
 * slot[k] > 0, c[k] times scalar slot[k] - 1 of the solver scalars (kernels/solver_scalars.h;
 * then use_scalars is 1 and the task has the scalars' buffer).
 *
 * Solver tasks may also have: guard: the task writes nothing while it is shut (tq_guard_shut:
 * > 0, a speculatively queued iteration after convergence; < 0, work held back by a
 * converged iteration that runs only then); fused (reductions): the sums go to
 * scalar slots dst, dst + 1, ... and then prog runs, in this task (scalars read-write, no
 * partial buffer); snapshot: a buffer after the scalars receives a copy of all of them.
 *
 * Buffers in order: the op's operands; for reductions the partial sums (W, not when fused)
 * and the CUDA scratch; the scalars (R, or RW when fused); the snapshot (W). */
typedef struct tq_blas_args {
    int op;
    int use_scalars;
    double c[TQ_BLAS_MAX_COEFS];
    signed char slot[TQ_BLAS_MAX_COEFS];
    signed char guard, fused, snapshot, dst, nprog;
    tq_scalar_instr prog[TQ_SCALAR_PROGRAM_MAX];
    tq_mirror_ref mirror;   /* the snapshot's mirror (kernels/solver_scalars.h) */
    tq_layout L[TQ_BLAS_MAX_OPERANDS];
    tq_partial_sync sync;   /* a reduction's partial sums to other GPUs (face_sync.h; npeer 0: none) */
} tq_blas_args;

/* Buffer indices of a task (see tq_blas_args). */
TQ_HD int tq_blas_buf_partial(const tq_blas_args *a) { return tq_blas_noperands(a->op); }
TQ_HD int tq_blas_buf_scratch(const tq_blas_args *a) { return tq_blas_noperands(a->op) + (a->fused ? 0 : 1); }
TQ_HD int tq_blas_buf_scalars(const tq_blas_args *a)
{
    return tq_blas_noperands(a->op) + (tq_blas_nresults(a->op) ? (a->fused ? 1 : 2) : 0);
}
TQ_HD int tq_blas_nbuffers(const tq_blas_args *a)
{
    return tq_blas_buf_scalars(a) + (a->use_scalars ? 1 : 0) + (a->use_scalars && a->snapshot ? 1 : 0);
}

/* The coefficients of a task: immediate, or scaled scalars read from scal. */
TQ_HD void tq_blas_coefficients(const tq_blas_args *a, const double *scal, double *c)
{
    for (int k = 0; k < TQ_BLAS_MAX_COEFS; k++) c[k] = a->slot[k] > 0 && scal ? a->c[k] * scal[a->slot[k] - 1] : a->c[k];
}

/* Whether the task's guard holds it back. */
TQ_HD int tq_blas_frozen(const tq_blas_args *a, const double *scal)
{
    return a->guard != 0 && scal && tq_guard_shut(scal, a->guard);
}

/* The end of a fused reduction: sums into their slots, the program, all of it unless the
 * guard holds the task back. */
TQ_HD void tq_blas_fused_finish(const tq_blas_args *a, double *scal, const double *sum)
{
    tq_scalars_finish(scal, a->guard, a->dst, tq_blas_nresults(a->op), sum, a->prog, a->nprog);
}

#endif
