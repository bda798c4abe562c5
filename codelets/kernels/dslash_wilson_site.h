/* Wilson hopping term on one site, shared by the CPU and CUDA codelets.
 *
 *   D psi(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu) ]
 *   D^dag    : the signs in front of gamma_mu swapped
 *
 * in the DeGrand-Rossi gamma basis (doc/conventions.md). One block and one output parity
 * per task. A hop whose neighbour lies in the same block is "interior"; in a direction
 * where the lattice is split into blocks (split[mu]), hops out of the block read a face
 * instead: the neighbour block packed the spin-projected half spinors of its boundary
 * sites (12 reals per site, paper 001 §VI). A forward face carries P psi(y) and the
 * receiver multiplies by its own link U_mu(x); a backward face carries U_mu(y)^dag P psi(y),
 * the link applied by the sender that owns it, so no block needs its neighbours' links.
 *
 * Spin projection with gamma matrices that have one non-zero per row,
 * gamma_mu[s][col(mu,s)] = i^code(mu,s): (1 + sign gamma_mu) psi has components 0, 1
 *   h_s = psi_s + sign i^code psi_col   (s = 0, 1; col in {2, 3})
 * and components 2, 3 follow from them (gamma^2 = 1): full_s = sign i^code(mu,s) h_col(mu,s).
 * Multiplying by i^code is a swap and sign flips, so the projector costs no multiplies. */
#ifndef TQ_DSLASH_WILSON_SITE_H
#define TQ_DSLASH_WILSON_SITE_H

#include "kernels/field_layout.h"
#include "kernels/clover_site.h"
#include "kernels/solver_scalars.h"

/* DeGrand-Rossi: gamma_x, gamma_y have their non-zeros on the anti-diagonal, gamma_z,
 * gamma_t on the off-diagonal 2x2 blocks. */
TQ_HD int tq_gamma_col(int mu, int s)
{
    return mu < 2 ? 3 - s : s ^ 2;
}

/* gamma_mu[s][col] = i^code, code 0..3 = 1, i, -1, -i. */
TQ_HD int tq_gamma_code(int mu, int s)
{
    switch (mu) {
    case 0: return s < 2 ? 1 : 3;                  /* x:  i,  i, -i, -i */
    case 1: return (s == 0 || s == 3) ? 2 : 0;     /* y: -1,  1,  1, -1 */
    case 2: return (s == 0 || s == 3) ? 1 : 3;     /* z:  i, -i, -i,  i */
    default: return 0;                             /* t:  1,  1,  1,  1 */
    }
}

/* The precision of the faces of a field of precision prec (bytes a real: 2 half, 4 single,
 * 8 double): half fields' faces hold single precision. A face holds a hop's half spinor as the hop
 * computes it, so with single faces a half-precision result is the same bits on every
 * block decomposition, as in single and double, and a block reading its neighbours in
 * place (direct) has no rounding to repeat: with half faces that rounding cost the
 * in-place half kernel 115 registers against the one-block kernel's 96. The price: 48
 * bytes a face site instead of 28 (at 32^4 split in t on two GPUs, 0.8 MB more per hop). */
TQ_HD int tq_dslash_wilson_face_prec(int prec) { return prec == 2 ? 4 : prec; }

/* Arguments of the pack, interior and exterior tasks of one block (the codelets' cl_arg). */
typedef struct tq_dslash_wilson_args {
    int B[4];               /* block extents (even) */
    int64_t cb;             /* sites of one parity in the block */
    int parity;             /* interior/exterior: output parity; pack: parity packed */
    int dagger;
    int recon;              /* gauge compression: 18, 12 or 8 */
    int split[4];           /* direction mu crosses blocks: hops out of the block use faces */
    int band;               /* interior task of a split block: TQ_BAND_ALL (0), or the part of
                               its sites it does (tq_interior_band); no epilogue then */
    int band_t[2];          /* a deep band's task: only its sites in the t planes [band_t[0],
                               band_t[1]) (equal: all of them), a band in two tasks */
    double phase_lo[4];     /* boundary factor of hops leaving through the lower face in mu */
    double phase_hi[4];     /* ... and through the upper face (1 unless it is the global boundary) */
    double a;               /* out = a D in, or x + a D in when xpay */
    int xpay;
    int x_separate;         /* xpay with x another field than out (an extra buffer) */
    int clover;             /* out = a K D in (+ x): K (clover or its inverse, an extra
                               buffer) applied to each site's hopping sum before a and x */
    tq_layout L_in, L_out, L_x, L_gauge, L_clover;
    tq_layout L_face[4];    /* 12 reals per face site (tq_dslash_wilson_face_prec); stride = cb / B[mu] */
    int direct;             /* interior task of a block whose neighbours in every split
                               direction are blocks of the same worker: it does every site,
                               reading their sites in place instead of faces (no pack, no
                               exterior task); the task then has 3 more buffers per split mu
                               (tq_dslash_wilson_buf_direct). With a split epilogue
                               (epi.entries) the exterior task after it sums what the
                               interior kept of the face sites: no faces. */
    const void *nbr_in[4][2];   /* direct: in of the block below / above in mu (the codelet
                                   fills them from its buffers) */
    const void *nbr_g[4];       /* direct: the gauge field of the block below, input parity */
    tq_epilogue_args epi;   /* interior task of an unsplit block: a reduction fused into the
                               kernel (kind TQ_EPI_NONE: none); then the task has three more
                               buffers (tq_dslash_wilson_buf_epilogue). Kind TQ_EPI_NONE with
                               epi.guard > 0: a solver's guarded operator application; the
                               task reads the solver scalars (one more buffer,
                               tq_dslash_wilson_buf_guard) and does nothing when the guard is shut */
    tq_partial_sync psync;  /* a split epilogue's partial sent on to the other GPUs' combines
                               in peer mode (face_sync.h; npeer 0: none): after the kernel
                               that writes it, by the CUDA codelets only (peer mode has GPU
                               owners alone) */
} tq_dslash_wilson_args;

/* What an epilogue reads besides the stencil's result: its fields w and u
 * (kernels/solver_scalars.h), and r (AXPY_NORM2: out itself), at index s of a layout like
 * out's with stride `stride` (0: out's own). A GPU thread may stage them in shared memory
 * during the stencil (dslash_wilson_cuda.cu): then they are mini-fields with the block's stride,
 * read at the thread's index. */
typedef struct tq_epi_fields {
    const void *w, *u, *r;
    int64_t s, stride;
} tq_epi_fields;

/* The interior task's buffers after its operands when it has an epilogue, from this index
 * on: the field w (R) when the epilogue reads one and it is not x, the field u (R) when
 * the epilogue reads one more, the reduction scratch (CUDA), the solver scalars (RW), the
 * snapshot (W) if epi.snapshot. */
TQ_HD int tq_dslash_wilson_buf_epilogue(const tq_dslash_wilson_args *a)
{
    return 4 + (a->xpay && a->x_separate ? 1 : 0) + (a->clover ? 1 : 0);
}
TQ_HD int tq_dslash_wilson_buf_u(const tq_dslash_wilson_args *a)
{
    return tq_dslash_wilson_buf_epilogue(a) + (tq_epilogue_reads_w(a->epi.kind) && !a->epi.w_is_x ? 1 : 0);
}
TQ_HD int tq_dslash_wilson_buf_scratch(const tq_dslash_wilson_args *a)
{
    return tq_dslash_wilson_buf_u(a) + (tq_epilogue_reads_u(a->epi.kind) ? 1 : 0);
}
/* Without an epilogue but guarded (epi.guard > 0): the solver scalars (R) from here. */
TQ_HD int tq_dslash_wilson_buf_guard(const tq_dslash_wilson_args *a)
{
    return tq_dslash_wilson_buf_epilogue(a);
}
/* direct: from here, per split mu, the block below's in and gauge (input parity), then the
 * block above's in (all R). */
TQ_HD int tq_dslash_wilson_buf_direct(const tq_dslash_wilson_args *a)
{
    if (a->epi.kind != TQ_EPI_NONE)   /* scratch, scalars, [partial or snapshot], [entries] */
        return tq_dslash_wilson_buf_scratch(a) + 2 + (a->epi.snapshot || tq_epilogue_partial(&a->epi) ? 1 : 0) + (a->epi.entries ? 1 : 0);
    return tq_dslash_wilson_buf_guard(a) + (a->epi.guard > 0 ? 1 : 0);
}

/* A copy of the interior task's arguments with the neighbour pointers of direct filled in
 * from its buffers (ptr(i): buffer i's address); the arguments themselves when not direct. */
#define TQ_DSLASH_WILSON_DIRECT_ARGS(a, copy, ptr)                                              \
    do {                                                                                      \
        if ((a)->direct) {                                                                    \
            copy = *(a);                                                                      \
            int k_ = tq_dslash_wilson_buf_direct(a);                                          \
            for (int mu_ = 0; mu_ < 4; mu_++) {                                               \
                if (!(a)->split[mu_]) continue;                                               \
                copy.nbr_in[mu_][0] = (const void *)ptr(k_);                                  \
                copy.nbr_g[mu_] = (const void *)ptr(k_ + 1);                                  \
                copy.nbr_in[mu_][1] = (const void *)ptr(k_ + 2);                              \
                k_ += 3;                                                                      \
            }                                                                                 \
            (a) = &copy;                                                                      \
        }                                                                                     \
    } while (0)

/* Block-local coordinates of the site with index cb in the parity subset `parity`. */
TQ_HD void tq_block_coords(const int *B, int parity, int64_t cb, int *x)
{
    const int hx = B[0] / 2;
#ifdef __CUDA_ARCH__
    /* blocks hold fewer than 2^31 sites (lattice.c): 32-bit divisions are several times
     * cheaper than 64-bit ones on GPUs */
    const unsigned c = (unsigned)cb;
    unsigned q = c / (unsigned)hx;
    x[1] = (int)(q % (unsigned)B[1]); q /= (unsigned)B[1];
    x[2] = (int)(q % (unsigned)B[2]);
    x[3] = (int)(q / (unsigned)B[2]);
    x[0] = 2 * (int)(c % (unsigned)hx) + ((x[1] + x[2] + x[3] + parity) & 1);
#else
    int64_t r = cb / hx;
    x[1] = (int)(r % B[1]); r /= B[1];
    x[2] = (int)(r % B[2]);
    x[3] = (int)(r / B[2]);
    x[0] = 2 * (int)(cb % hx) + ((x[1] + x[2] + x[3] + parity) & 1);
#endif
}

TQ_HD int64_t tq_block_cb(const int *B, const int *x)
{
#ifdef __CUDA_ARCH__
    return (int64_t)((((x[3] * B[2] + x[2]) * B[1] + x[1]) * B[0] + x[0]) >> 1);
#else
    return ((((int64_t)x[3] * B[2] + x[2]) * B[1] + x[1]) * B[0] + x[0]) >> 1;
#endif
}

/* Sites of one parity on the face of the block perpendicular to mu. */
TQ_HD int64_t tq_face_sites(const int *B, int mu)
{
    return (int64_t)B[0] * B[1] * B[2] * B[3] / B[mu] / 2;
}

/* Index on the face perpendicular to mu: the other three coordinates in order, halved
 * (the fastest of them has an even extent, so sites of one parity get distinct indices,
 * and a site and its neighbour across the face get the same one). */
TQ_HD int64_t tq_face_index(const int *B, int mu, const int *x)
{
    int64_t lex = 0;
    TQ_UNROLL
    for (int d = 3; d >= 0; d--)
        if (d != mu) lex = lex * B[d] + x[d];
    return lex >> 1;
}

/* Coordinates of face site fi (parity `parity`) on the face x_mu = xmu. */
TQ_HD void tq_face_coords(const int *B, int mu, int xmu, int parity, int64_t fi, int *x)
{
    int d[3], n = 0;
    TQ_UNROLL
    for (int k = 0; k < 4; k++)
        if (k != mu) d[n++] = k;
    const int h1 = B[d[0]] / 2;
    int64_t r = fi / h1;
    x[mu] = xmu;
    x[d[1]] = (int)(r % B[d[1]]);
    x[d[2]] = (int)(r / B[d[1]]);
    x[d[0]] = 2 * (int)(fi % h1);
    x[d[0]] += (x[0] + x[1] + x[2] + x[3] + parity) & 1;   /* x[d[0]] even so far */
}

/* Face sites of the pack/exterior loops: for each split direction, the lower face then
 * the upper face. Returns the total; fills (mu, side) of entry e via tq_face_entry. */
TQ_HD int64_t tq_face_total(const tq_dslash_wilson_args *a)
{
    int64_t n = 0;
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++)
        if (a->split[mu]) n += 2 * tq_face_sites(a->B, mu);
    return n;
}

/* Entry e of the face enumeration: direction, side (0 lower, 1 upper), index on the face. */
TQ_HD void tq_face_entry(const tq_dslash_wilson_args *a, int64_t e, int *mu, int *side, int64_t *fi)
{
    TQ_UNROLL
    for (int m = 0; m < 4; m++) {
        if (!a->split[m]) continue;
        const int64_t fs = tq_face_sites(a->B, m);
        if (e < 2 * fs) {
            *mu = m;
            *side = e >= fs;
            *fi = e - (e >= fs ? fs : 0);
            return;
        }
        e -= 2 * fs;
    }
    *mu = -1; *side = 0; *fi = 0;
}

/* The site x (output parity) of face entry e; 0 when an earlier entry takes it (a corner
 * site lies on several split faces: the first split direction's entry takes it, the lower
 * face before the upper), so that one entry computes each face site. */
TQ_HD int tq_face_entry_site(const tq_dslash_wilson_args *a, int64_t e, int *x)
{
    int mu, side;
    int64_t fi;
    tq_face_entry(a, e, &mu, &side, &fi);
    if (mu < 0) return 0;
    tq_face_coords(a->B, mu, side ? a->B[mu] - 1 : 0, a->parity, fi, x);
    TQ_UNROLL
    for (int nu = 0; nu < 4; nu++)
        if (nu < mu && a->split[nu] && (x[nu] == 0 || x[nu] == a->B[nu] - 1)) return 0;
    return 1;
}

/* The face entries of site x, one per split face it lies on, in enumeration order (the
 * first takes the site, tq_face_entry_site; the others are the corner's repeats); returns
 * how many (0: a site off the split faces). */
TQ_HD int tq_face_entries_of(const tq_dslash_wilson_args *a, const int *x, int64_t e[4])
{
    int n = 0;
    int64_t base = 0;
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++) {
        if (!a->split[mu]) continue;
        const int64_t fs = tq_face_sites(a->B, mu);
        if (x[mu] == 0) e[n++] = base + tq_face_index(a->B, mu, x);
        else if (x[mu] == a->B[mu] - 1) e[n++] = base + fs + tq_face_index(a->B, mu, x);
        base += 2 * fs;
    }
    return n;
}

/* Bands of a split block's interior (tq_dslash_wilson_args.band): the deep sites, at least
 * two planes from every split face, read no face site, so a hop's deep band needs only the
 * previous hop's interior, not its exterior, and can run beside that exterior; the rim is
 * the rest of the interior (doc/design.md). */
enum { TQ_BAND_ALL = 0, TQ_BAND_DEEP = 1, TQ_BAND_RIM = 2 };

/* Site x's band, or 0 when it lies on a split face. */
TQ_HD int tq_interior_band(const int *B, const int *split, const int *x)
{
    int band = TQ_BAND_DEEP;
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++) {
        if (!split[mu]) continue;
        const int d = x[mu] < B[mu] - 1 - x[mu] ? x[mu] : B[mu] - 1 - x[mu];
        if (d == 0) return 0;
        if (d == 1) band = TQ_BAND_RIM;
    }
    return band;
}

/* The site indices an interior loop or kernel covers: [lo[0], lo[0] + n[0]), then [lo[1],
 * lo[1] + n[1]); the sites of them outside the task's part are skipped one by one. t
 * varies slowest in the index, so in a block split in t these are whole t planes: the
 * face planes are left out, and a band is the planes it lies in. */
typedef struct tq_site_ranges { int64_t lo[2], n[2]; } tq_site_ranges;

TQ_HD tq_site_ranges tq_interior_ranges(const tq_dslash_wilson_args *a)
{
    tq_site_ranges r = {{0, 0}, {a->cb, 0}};
    const int T = a->B[3];
    if (a->direct || T < 2) return r;
    const int64_t plane = a->cb / T;
    if (a->band == TQ_BAND_DEEP && a->band_t[1] > a->band_t[0]) {
        r.lo[0] = a->band_t[0] * plane; r.n[0] = (a->band_t[1] - a->band_t[0]) * plane;
        return r;
    }
    if (!a->split[3]) return r;
    const int others = a->split[0] || a->split[1] || a->split[2];
    if (a->band == TQ_BAND_DEEP) {
        r.lo[0] = 2 * plane; r.n[0] = T >= 4 ? (T - 4) * plane : 0;
    } else if (a->band == TQ_BAND_RIM && !others && T >= 4) {
        r.lo[0] = plane; r.n[0] = plane; r.lo[1] = (T - 2) * plane; r.n[1] = plane;
    } else {
        r.lo[0] = plane; r.n[0] = (T - 2) * plane;
    }
    return r;
}

/* Whether site s (output parity) lies on a split face. */
TQ_HD int tq_on_split_face(const tq_dslash_wilson_args *a, int64_t s)
{
    int x[4];
    tq_block_coords(a->B, a->parity, s, x);
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++)
        if (a->split[mu] && (x[mu] == 0 || x[mu] == a->B[mu] - 1)) return 1;
    return 0;
}


/* Calls CALL(P, R, D) with the precision (8, 4, 2), compression (18, 12, 8) and dagger (0, 1)
 * as literals, so the CPU loops and the CUDA launches get one compile-time instantiation per
 * combination (a run-time dagger cost the CUDA kernels a select per spinor component). */
#define TQ_DSLASH_WILSON_DISPATCH_R(prec, recon, D, CALL)                                                 \
    do {                                                                                           \
        if ((prec) == 8) {                                                                         \
            if ((recon) == 18) { CALL(8, 18, D); } else if ((recon) == 12) { CALL(8, 12, D); } else { CALL(8, 8, D); } \
        } else if ((prec) == 4) {                                                                  \
            if ((recon) == 18) { CALL(4, 18, D); } else if ((recon) == 12) { CALL(4, 12, D); } else { CALL(4, 8, D); } \
        } else {                                                                                   \
            if ((recon) == 18) { CALL(2, 18, D); } else if ((recon) == 12) { CALL(2, 12, D); } else { CALL(2, 8, D); } \
        }                                                                                          \
    } while (0)
#define TQ_DSLASH_WILSON_DISPATCH(prec, recon, dagger, CALL)                                              \
    do {                                                                                           \
        if (dagger) TQ_DSLASH_WILSON_DISPATCH_R(prec, recon, 1, CALL);                                    \
        else TQ_DSLASH_WILSON_DISPATCH_R(prec, recon, 0, CALL);                                           \
    } while (0)

#define TQ_R double
#define TQ_RF(name) name
#define TQ_RM(fn) fn
#include "kernels/dslash_wilson_site_real.h"
#undef TQ_R
#undef TQ_RF
#undef TQ_RM
#define TQ_R float
#define TQ_RF(name) name##_f
#define TQ_RM(fn) fn##f
#include "kernels/dslash_wilson_site_real.h"
#undef TQ_R
#undef TQ_RF
#undef TQ_RM

#endif
