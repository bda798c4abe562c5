/* Solver scalars: the TQ_NSCALARS doubles of one Krylov solve, kept in a StarPU handle.
 * A reduction stores its sums in slots and then runs a short scalar program (alpha = rho /
 * <p, Ap>, beta = ..., complex for BiCGstab) so that the coefficients the next BLAS tasks
 * read (tq_blas_args.slot) never pass through the host. When the reduction is one task it
 * does this itself, on the device that ran it; otherwise a combine task sums the per-task
 * partials first. The host reads a snapshot of the scalars, written by the iteration's last
 * reduction, for the stopping test. */
#ifndef TQ_SOLVER_SCALARS_H
#define TQ_SOLVER_SCALARS_H

#include "kernels/tq_hd.h"
#include "face_sync.h"

#include <math.h>

#define TQ_NSCALARS 32

enum tq_scalar_opcode {
    TQ_SC_NOP = 0,
    TQ_SC_COPY,    /* s[d] = s[a] */
    TQ_SC_DIV,     /* s[d] = s[a] / s[b] */
    TQ_SC_MUL,     /* s[d] = s[a] * s[b] */
    TQ_SC_NEG,     /* s[d] = -s[a] */
    TQ_SC_CCOPY,   /* (s[d], s[d+1]) = (s[a], s[a+1]) */
    TQ_SC_CMUL,    /* complex s[d] = s[a] * s[b] (pairs) */
    TQ_SC_CDIV,    /* complex s[d] = s[a] / s[b] */
    TQ_SC_CDIVR,   /* complex s[d] = s[a] / real s[b] */
    TQ_SC_CNEG,    /* complex s[d] = -s[a] */
    TQ_SC_MAX,     /* s[d] = max(s[a], s[b]) */
    TQ_SC_ZERO,    /* s[d] = 0 */
    TQ_SC_RSQRT,   /* s[d] = 1 / sqrt(s[a]) */
    TQ_SC_STOP_LE, /* s[d] = 0 if s[a] <= s[b] (clears a guard slot: the solve converged) */
    TQ_SC_SET,     /* s[d] = a (a small integer immediate) */
    TQ_SC_CSUB,    /* complex s[d] = s[a] - s[b] */
};

typedef struct tq_scalar_instr { signed char op, d, a, b; } tq_scalar_instr;

/* A snapshot's mirror: a copy of it in pinned host memory that the task writing the
 * snapshot also writes (a GPU kernel directly, through the mapping), values first, then seq.
 * The host polls seq instead of waiting until StarPU has seen the task end and copied the
 * snapshot back (100-200 us on an H200). */
typedef struct tq_snapshot_mirror {
    double v[TQ_NSCALARS];
    long long seq;
} tq_snapshot_mirror;

/* Where a task publishes its snapshot (m NULL: nowhere) and the number the host waits for. */
typedef struct tq_mirror_ref {
    tq_snapshot_mirror *m;
    long long seq;
} tq_mirror_ref;

#define TQ_SCALAR_PROGRAM_MAX 8

/* Arguments of a combine task: the sums of n partial buffers (nres results each) go to
 * slots dst .. dst + nres - 1 (n = 0: no sums), then the program runs. guard: nothing
 * happens while it is shut (tq_guard_shut; the BLAS tasks were skipped too). snapshot: one more
 * buffer after the scalars receives a copy of all of them. */
typedef struct tq_scalar_combine_args {
    int n, nres, dst, nprog, guard, snapshot;
    tq_scalar_instr prog[TQ_SCALAR_PROGRAM_MAX];
    tq_mirror_ref mirror;   /* the snapshot's mirror */
    tq_combine_sync sync;   /* peer partials (face_sync.h; sync.remote 0: every partial is a
                               buffer); the buffers are the other partials, in order */
} tq_scalar_combine_args;

TQ_HD void tq_scalar_run(double *s, const tq_scalar_instr *prog, int nprog)
{
    for (int i = 0; i < nprog; i++) {
        const int d = prog[i].d, a = prog[i].a, b = prog[i].b;
        double re, im, den;
        switch (prog[i].op) {
        case TQ_SC_COPY: s[d] = s[a]; break;
        case TQ_SC_DIV: s[d] = s[a] / s[b]; break;
        case TQ_SC_MUL: s[d] = s[a] * s[b]; break;
        case TQ_SC_NEG: s[d] = -s[a]; break;
        case TQ_SC_CCOPY: re = s[a]; im = s[a + 1]; s[d] = re; s[d + 1] = im; break;
        case TQ_SC_CMUL:
            re = s[a] * s[b] - s[a + 1] * s[b + 1];
            im = s[a] * s[b + 1] + s[a + 1] * s[b];
            s[d] = re; s[d + 1] = im;
            break;
        case TQ_SC_CDIV:
            den = s[b] * s[b] + s[b + 1] * s[b + 1];
            re = (s[a] * s[b] + s[a + 1] * s[b + 1]) / den;
            im = (s[a + 1] * s[b] - s[a] * s[b + 1]) / den;
            s[d] = re; s[d + 1] = im;
            break;
        case TQ_SC_CDIVR: re = s[a] / s[b]; im = s[a + 1] / s[b]; s[d] = re; s[d + 1] = im; break;
        case TQ_SC_CNEG: re = -s[a]; im = -s[a + 1]; s[d] = re; s[d + 1] = im; break;
        case TQ_SC_MAX: s[d] = s[a] > s[b] ? s[a] : s[b]; break;
        case TQ_SC_ZERO: s[d] = 0.0; break;
        case TQ_SC_RSQRT: s[d] = 1.0 / sqrt(s[a]); break;
        case TQ_SC_STOP_LE: if (s[a] <= s[b]) s[d] = 0.0; break;
        case TQ_SC_SET: s[d] = (double)a; break;
        case TQ_SC_CSUB: re = s[a] - s[b]; im = s[a + 1] - s[b + 1]; s[d] = re; s[d + 1] = im; break;
        default: break;
        }
    }
}

/* Whether a task's guard holds it back: guard > 0 while slot guard - 1 is 0 (the solve
 * converged: the iterations queued after that do nothing); an inverse guard (< 0) unless
 * slot -guard - 1 is 0 (work that a converged iteration held back, done later behind it:
 * the fused CG's x/p pass in the reliable update that follows); 0: never. */
TQ_HD int tq_guard_shut(const double *s, int guard)
{
    return guard > 0 ? s[guard - 1] == 0.0 : guard < 0 ? s[-guard - 1] != 0.0 : 0;
}

/* The end of a reduction done inside one task: unless the guard holds it back, the nres
 * sums go to slots dst.. and the program runs. */
TQ_HD void tq_scalars_finish(double *s, int guard, int dst, int nres, const double *sum,
                             const tq_scalar_instr *prog, int nprog)
{
    if (tq_guard_shut(s, guard)) return;
    for (int r = 0; r < nres; r++) s[dst + r] = sum[r];
    tq_scalar_run(s, prog, nprog);
}

/* A reduction fused into the last kernel of an operator application (the Wilson interior
 * kernel; src/dirac/dirac_forms.c): with result y of the site, kind
 *   TQ_EPI_NORM2:      y is stored as usual; sum |y|^2
 *   TQ_EPI_AXPY_NORM2: the output buffer holds r: r += c y, with c = c times scalar
 *                      slot - 1 when slot > 0; sum |r|^2 (y itself is not stored)
 *   TQ_EPI_CAXPYZ:     the output buffer receives w + c y with the complex c = c times
 *                      scalars (slot - 1, slot); y itself is not stored; no sums
 *                      (BiCGstab's s = r - alpha M_pc p)
 *   TQ_EPI_BICGSTAB_T: y is stored; sum conj(y) w, |y|^2, conj(u) w, conj(u) y (7 results;
 *                      u: a field read; BiCGstab's <t, s>, |t|^2, <r0, s>, <r0, t> in
 *                      the kernel of t = M_pc s)
 * The sums go to scalar slots dst.. and the program runs (tq_scalars_finish); guard and
 * snapshot as for BLAS tasks (kernels/blas_site.h): a frozen task writes nothing. */
enum {
    TQ_EPI_NONE = 0, TQ_EPI_NORM2 = 1, TQ_EPI_AXPY_NORM2 = 2, TQ_EPI_CAXPYZ = 3, TQ_EPI_BICGSTAB_T = 4
};
#define TQ_EPI_MAX_RESULTS 7

TQ_HD int tq_epilogue_nresults(int kind)
{
    switch (kind) {
    case TQ_EPI_NORM2: case TQ_EPI_AXPY_NORM2: return 1;
    case TQ_EPI_BICGSTAB_T: return 7;
    default: return 0;
    }
}

/* Whether the epilogue reads the field w. */
TQ_HD int tq_epilogue_reads_w(int kind)
{
    return kind == TQ_EPI_CAXPYZ || kind == TQ_EPI_BICGSTAB_T;
}

/* Whether the epilogue reads one more field, u. */
TQ_HD int tq_epilogue_reads_u(int kind)
{
    return kind == TQ_EPI_BICGSTAB_T;
}
typedef struct tq_epilogue_args {
    double c;
    signed char kind, slot, guard, dst, nprog, snapshot;
    signed char w_is_x;       /* w is the xpay field x (one buffer for both) */
    signed char split;        /* several blocks: the interior and the exterior task each sum
                                 their sites into a partial (TQ_BLAS_MAX_RESULTS doubles, the
                                 rest zero) that a combine task adds in block order and
                                 finishes (dst, prog, snapshot); the tasks only read the
                                 scalars */
    signed char entries;      /* split, blocks of one worker (in place): the interior task
                                 does every site, reading its neighbours in place, sums the
                                 sites off the split faces into its partial and stores each
                                 face site's results at its exterior entry (one more buffer);
                                 the exterior task sums those in the exterior kernel's order:
                                 the partials of the face path, with one stencil pass */
    tq_scalar_instr prog[TQ_SCALAR_PROGRAM_MAX];
    tq_mirror_ref mirror;     /* the snapshot's mirror */
} tq_epilogue_args;

/* Whether a split epilogue's tasks write partials (one that sums nothing, CAXPYZ, has no
 * partials and no combine). */
TQ_HD int tq_epilogue_partial(const tq_epilogue_args *e)
{
    return e->split && tq_epilogue_nresults(e->kind) > 0;
}

TQ_HD int tq_epilogue_frozen(const tq_epilogue_args *e, const double *s)
{
    return e->guard > 0 && s[e->guard - 1] == 0.0;
}

TQ_HD double tq_epilogue_coefficient(const tq_epilogue_args *e, const double *s)
{
    return e->slot > 0 ? e->c * s[e->slot - 1] : e->c;
}

/* The imaginary part of the coefficient: only TQ_EPI_CAXPYZ's is complex. */
TQ_HD double tq_epilogue_coefficient_im(const tq_epilogue_args *e, const double *s)
{
    return e->kind == TQ_EPI_CAXPYZ && e->slot > 0 ? e->c * s[e->slot] : 0.0;
}

#endif
