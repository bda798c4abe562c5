/* One link update of the quenched generator's sweep (issue 5), shared by the CPU and CUDA
 * codelets: the staple from the generator's link storage, then the heat bath or the
 * overrelaxation of kernels/su3_heatbath.h.
 *
 * Storage: the links in double, recon 18, as 8 fields (direction mu, parity p: field
 * 2 mu + p) on the blocks of a lattice (core/field_internal.h: a rank grid, blocks of even
 * extents, owners), one StarPU handle per field and block; a block's sites of one parity in
 * the order lex(l) / 2 of their block coordinates l (x fastest), 18 doubles each. A
 * sub-step (p, mu) updates field 2 mu + p one task per block and reads the 7 other fields,
 * which hold every link of its staples: the links updated together do not interact. Random
 * numbers are keyed by the global lexicographic site and the staple's links are summed in
 * one order, so the links are the same bits whatever the blocks, ranks or workers.
 *
 * What a block needs beyond its own sites comes through the stencil layer's faces
 * (core/stencil.h: per block and direction the block grid cuts, its lower and upper layer of
 * one parity's sites, 18 reals a site, stored as the links are: a site's 18 doubles
 * together, so that a kernel reads a face's link in place as it reads its block's): after
 * a sub-step each block packs the updated field's faces, and the next sub-steps' tasks read
 * their neighbours'. The staple's U_nu(x+mu-nu) is an edge when both steps leave the block;
 * it lies in the lower mu layer of the upper nu face of the block at +mu -nu, which that
 * block packed for its neighbour in nu: the task reads that face too (QUDA's extended
 * gauge field gets the same corners by exchanging its halos direction after direction). */
#ifndef TQ_HEATBATH_SITE_H
#define TQ_HEATBATH_SITE_H

#include "kernels/su3_heatbath.h"
#include "kernels/philox.h"

typedef struct tq_heatbath_args {
    int dims[4];           /* the whole lattice */
    int block[4];          /* the task's block: its extent (even), */
    int origin[4];         /* its first site in the whole lattice */
    int split[4];          /* 1: the block grid cuts direction mu (faces); 0: the block spans the
                              lattice in it (the links wrap inside the block) */
    int mu, parity;        /* the sub-step (sweep), the field (face pack) */
    int overrelax;
    int64_t block_cb;      /* sites of one parity in a block */
    double beta;
    uint32_t key[2];
    uint32_t sweep;
} tq_heatbath_args;

/* The links a task sees: its block's 8 fields; per field, direction d and side the face it
 * reads (side 0: the layer of the block below next to this block, 1: the block above's),
 * NULL where it reads none; edge[f][nu]: the upper nu face of the block at +mu -nu (mu the
 * sub-step's), where the sub-step reads an edge. */
typedef struct tq_heatbath_ptrs {
    double *own[8];
    double *face[8][4][2];
    double *edge[8][4];
} tq_heatbath_ptrs;

/* Sites of one parity in one layer of a block perpendicular to d: a face's length. */
TQ_HD int64_t tq_hb_face_sites(const tq_heatbath_args *a, int d)
{
    return a->block_cb / a->block[d];
}

/* Index of block coordinates l among one parity's sites: of the whole block (skip -1) or of
 * its layer perpendicular to skip (l[skip] ignored). The fastest remaining extent is even, so
 * lex and lex + 1 differ in parity and lex / 2 numbers each parity's sites. */
TQ_HD int64_t tq_hb_index(const tq_heatbath_args *a, const int l[4], int skip)
{
    int64_t lex = 0;
    for (int d = 3; d >= 0; d--)
        if (d != skip) lex = lex * a->block[d] + l[d];
    return lex >> 1;
}

/* The block coordinates of the site of parity `parity` with index i (tq_hb_index with
 * skip; l[skip] is left as it was): the even lex 2 i, moved one step in the fastest
 * remaining direction when its parity is the other one. The blocks' origins are even, so
 * the parity of block coordinates is the global one. */
TQ_HD void tq_hb_coords(const tq_heatbath_args *a, int parity, int64_t i, int skip, int l[4])
{
    int64_t s = 2 * i;
    int first = -1;
    for (int d = 0; d < 4; d++) {
        if (d == skip) continue;
        if (first < 0) first = d;
        l[d] = (int)(s % a->block[d]);
        s /= a->block[d];
    }
    if (((l[0] + l[1] + l[2] + l[3]) & 1) != parity) l[first] += 1;
}

/* U_dir(y) (y: global coordinates, periodic, at most one step from the block in each
 * direction, and outside it in two at most: then +1 above in one, -1 below in the other), in
 * the block's storage or in a face. */
TQ_HD const double *tq_hb_link(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, const int y[4], int dir)
{
    int l[4], below = -1, above = -1;
    for (int d = 0; d < 4; d++) {
        l[d] = y[d] - a->origin[d];
        if (!a->split[d]) continue;
        if (l[d] < -1) l[d] += a->dims[d];
        else if (l[d] > a->block[d]) l[d] -= a->dims[d];
        if (l[d] < 0) below = d;
        else if (l[d] == a->block[d]) above = d;
    }
    const int f = 2 * dir + ((y[0] + y[1] + y[2] + y[3]) & 1);
    if (below < 0 && above < 0) {   /* the common case, tq_hb_index(a, l, -1) written out */
        const int *B = a->block;
        return P->own[f] + ((((int64_t)l[3] * B[2] + l[2]) * B[1] + l[1]) * B[0] + l[0]) / 2 * 18;
    }
    const double *buf;
    int d;
    if (below >= 0 && above >= 0) {   /* an edge: the block at +above -below's upper face in below */
        l[above] = 0;
        d = below;
        buf = P->edge[f][below];
    } else {
        d = below >= 0 ? below : above;
        buf = P->face[f][d][below < 0];
    }
    return buf + tq_hb_index(a, l, d) * 18;
}

/* Whether the sub-step (a->mu, a->parity) reads field f's face in direction d on `side`:
 * x+mu: U_nu (both parities: x+mu and x+mu-nu); x+nu: U_mu (other parity); x-nu: U_mu and
 * U_nu (other parity), and U_nu(x+mu-nu) (same parity) where mu stays inside. The task's
 * insert function and its codelet list the faces in this order: f, then d, then side. */
TQ_HD int tq_hb_reads_face(const tq_heatbath_args *a, int f, int d, int side)
{
    if (!a->split[d]) return 0;
    const int dir = f / 2, other = f % 2 != a->parity;
    if (d == a->mu) return side == 1 && dir != a->mu;
    if (side == 1) return dir == a->mu && other;
    return (dir == a->mu && other) || dir == d;
}

/* Whether the sub-step reads field f's edge for direction nu: U_nu(x+mu-nu) where both mu and
 * nu are cut. */
TQ_HD int tq_hb_reads_edge(const tq_heatbath_args *a, int f, int nu)
{
    return nu != a->mu && a->split[a->mu] && a->split[nu] && f == 2 * nu + a->parity;
}

/* Global coordinate c one step up or down (periodic in extent n): a compare, not an integer
 * division (twelve per link update). */
TQ_HD int tq_hb_up(int c, int n) { return c + 1 == n ? 0 : c + 1; }
TQ_HD int tq_hb_down(int c, int n) { return c == 0 ? n - 1 : c - 1; }

/* Staple sum A of U_mu(x) (as tq_su3_staple, from the block storage and faces). */
TQ_HD void tq_hb_staple(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, const int x[4], int mu, double *A)
{
    for (int k = 0; k < 18; k++) A[k] = 0.0;
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) continue;
        int y[4];
        for (int d = 0; d < 4; d++) y[d] = x[d];
        const double *u_nu_x = tq_hb_link(P, a, y, nu);
        y[mu] = tq_hb_up(x[mu], a->dims[mu]);
        const double *u_nu_xmu = tq_hb_link(P, a, y, nu);
        y[nu] = tq_hb_down(x[nu], a->dims[nu]);
        const double *u_nu_xmu_mnu = tq_hb_link(P, a, y, nu);
        y[mu] = x[mu];
        const double *u_mu_xmnu = tq_hb_link(P, a, y, mu);
        const double *u_nu_xmnu = tq_hb_link(P, a, y, nu);
        y[nu] = tq_hb_up(x[nu], a->dims[nu]);
        const double *u_mu_xnu = tq_hb_link(P, a, y, mu);
        tq_su3_staple_add(A, u_nu_x, u_nu_xmu, u_mu_xnu, u_mu_xmnu, u_nu_xmu_mnu, u_nu_xmnu);
    }
}

/* The global coordinates of the task block's site of parity `parity` and index i. */
TQ_HD void tq_hb_site(const tq_heatbath_args *a, int parity, int64_t i, int x[4])
{
    int l[4];
    tq_hb_coords(a, parity, i, -1, l);
    for (int d = 0; d < 4; d++) x[d] = a->origin[d] + l[d];
}

/* Updates link i (0 <= i < block_cb) of the block's field (mu, parity); returns nonzero
 * when the heat bath refused a subgroup (weight not positive and finite). */
TQ_HD int tq_heatbath_site(const tq_heatbath_ptrs *P, const tq_heatbath_args *a, int64_t i)
{
    int x[4];
    tq_hb_site(a, a->parity, i, x);
    double A[18];
    tq_hb_staple(P, a, x, a->mu, A);
    double *U = P->own[2 * a->mu + a->parity] + i * 18;
    if (a->overrelax) {
        tq_su3_overrelax_link(A, U);
        return 0;
    }
    const int64_t lex = (((int64_t)x[3] * a->dims[2] + x[2]) * a->dims[1] + x[1]) * a->dims[0] + x[0];
    uint32_t ctr[4];
    tq_rng_site_counter(ctr, 0, TQ_HB_STREAM | a->sweep << 8 | (uint32_t)a->mu << 2, (uint64_t)lex);
    return tq_su3_heatbath_link(a->beta, A, U, a->key, ctr) != 0;
}

/* Site s of a face of one field (parity a->parity) in direction d: the block's lower
 * (side 0) or upper (side 1) layer, from the block's storage src into the face dst. */
TQ_HD void tq_hb_face_pack_site(const tq_heatbath_args *a, int d, int side, int64_t s, const double *src, double *dst)
{
    int l[4];
    l[d] = side ? a->block[d] - 1 : 0;
    tq_hb_coords(a, a->parity, s, d, l);
    const double *p = src + tq_hb_index(a, l, -1) * 18;
    for (int k = 0; k < 18; k++) dst[s * 18 + k] = p[k];
}

#endif
