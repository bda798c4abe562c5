/* Pure-gauge Wilson action updates of one SU(3) link, shared by CPU and CUDA code (issue 5:
 * the sweep codelets will call these per site). With the staple sum A of U = U_mu(x) the
 * local action is -(beta/3) Re Tr(U A):
 *  - heat bath (Cabibbo-Marinari): for each of the three SU(2) subgroups (0,1), (1,2),
 *    (0,2), the 2x2 block w of W = U A is projected on SU(2) x R+, w -> k M(v) (|v| = 1);
 *    y is drawn with weight exp((2 beta / 3) k y0) (kernels/su2_heatbath.h) and U becomes
 *    X U with X = M(y) M(v)^dag embedded in the subgroup;
 *  - overrelaxation: X = (M(v)^dag)^2 per subgroup, which leaves Re Tr(U A) unchanged
 *    (microcanonical).
 * Quaternions a = (a0, a1, a2, a3) stand for M(a) = [[a0 + i a3, a2 + i a1],
 * [-a2 + i a1, a0 - i a3]] (Tr M = 2 a0).
 *
 * Random numbers (counter-based, kernels/philox.h): site = global lexicographic index,
 * stream word = TQ_HB_STREAM | sweep << 8 | mu << 2 | subgroup, draw counted from 0; the
 * configuration depends only on the seed and the update schedule. */
#ifndef TQ_SU3_HEATBATH_H
#define TQ_SU3_HEATBATH_H

#include "kernels/su3.h"
#include "kernels/su2_heatbath.h"

#define TQ_HB_STREAM 0x80000000u
#define TQ_HB_MAX_SWEEP 0x7FFFFF

/* Subgroup s: rows/columns (i, j). */
TQ_HD void tq_su3_subgroup(int s, int *i, int *j)
{
    *i = s == 1 ? 1 : 0;
    *j = s == 0 ? 1 : 2;
}

/* k and v with w's SU(2)-like part = k M(v): from the 2x2 block (i, j) of W. */
TQ_HD double tq_su2_project(const double *W, int i, int j, double v[4])
{
    const double w00r = TQ_SU3_RE(W, i, i), w00i = TQ_SU3_IM(W, i, i);
    const double w11r = TQ_SU3_RE(W, j, j), w11i = TQ_SU3_IM(W, j, j);
    const double w01r = TQ_SU3_RE(W, i, j), w01i = TQ_SU3_IM(W, i, j);
    const double w10r = TQ_SU3_RE(W, j, i), w10i = TQ_SU3_IM(W, j, i);
    v[0] = 0.5 * (w00r + w11r);
    v[3] = 0.5 * (w00i - w11i);
    v[2] = 0.5 * (w01r - w10r);
    v[1] = 0.5 * (w01i + w10i);
    const double k = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3]);
    if (k > 0)
        for (int c = 0; c < 4; c++) v[c] /= k;
    return k;
}

/* U = X U with X = M(x) embedded in rows/columns (i, j) (x need not be unit for the
 * algebra; callers pass SU(2) elements). */
TQ_HD void tq_su3_left_mul_su2(double *U, int i, int j, const double x[4])
{
    /* M(x) = [[x0 + i x3, x2 + i x1], [-x2 + i x1, x0 - i x3]] */
    const double m00r = x[0], m00i = x[3], m01r = x[2], m01i = x[1];
    const double m10r = -x[2], m10i = x[1], m11r = x[0], m11i = -x[3];
    for (int c = 0; c < 3; c++) {
        const double ar = TQ_SU3_RE(U, i, c), ai = TQ_SU3_IM(U, i, c);
        const double br = TQ_SU3_RE(U, j, c), bi = TQ_SU3_IM(U, j, c);
        TQ_SU3_RE(U, i, c) = m00r * ar - m00i * ai + m01r * br - m01i * bi;
        TQ_SU3_IM(U, i, c) = m00r * ai + m00i * ar + m01r * bi + m01i * br;
        TQ_SU3_RE(U, j, c) = m10r * ar - m10i * ai + m11r * br - m11i * bi;
        TQ_SU3_IM(U, j, c) = m10r * ai + m10i * ar + m11r * bi + m11i * br;
    }
}

/* Quaternion product c = a b, so that M(c) = M(a) M(b); conj(a) = (a0, -a1, -a2, -a3)
 * gives M(a)^dag. */
TQ_HD void tq_quat_mul(double c[4], const double a[4], const double b[4])
{
    const double c0 = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
    const double c1 = a[0] * b[1] + b[0] * a[1] - (a[2] * b[3] - a[3] * b[2]);
    const double c2 = a[0] * b[2] + b[0] * a[2] - (a[3] * b[1] - a[1] * b[3]);
    const double c3 = a[0] * b[3] + b[0] * a[3] - (a[1] * b[2] - a[2] * b[1]);
    c[0] = c0; c[1] = c1; c[2] = c2; c[3] = c3;
}

/* Heat bath of one link U (in place) with staple sum A; ctr's words 1..3 name the link
 * (ctr[0] is set here per subgroup). Returns 0, or -1 when a subgroup's weight is not
 * positive and finite (the subgroup is then left alone). */
TQ_HD int tq_su3_heatbath_link(double beta, const double *A, double *U, const uint32_t key[2], uint32_t ctr[4])
{
    int status = 0;
    const uint32_t base = ctr[1];
    for (int s = 0; s < 3; s++) {
        int i, j;
        tq_su3_subgroup(s, &i, &j);
        double W[18], v[4], y[4], x[4];
        tq_su3_mul(W, U, A);
        const double k = tq_su2_project(W, i, j, v);
        ctr[0] = 0;
        ctr[1] = base | (uint32_t)s;
        if (tq_su2_heatbath(2.0 * beta / 3.0 * k, key, ctr, y) < 0) { status = -1; continue; }
        const double vc[4] = {v[0], -v[1], -v[2], -v[3]};
        tq_quat_mul(x, y, vc);
        tq_su3_left_mul_su2(U, i, j, x);
    }
    ctr[1] = base;
    return status;
}

/* Overrelaxation of one link U (in place) with staple sum A. */
TQ_HD void tq_su3_overrelax_link(const double *A, double *U)
{
    for (int s = 0; s < 3; s++) {
        int i, j;
        tq_su3_subgroup(s, &i, &j);
        double W[18], v[4], x[4];
        tq_su3_mul(W, U, A);
        if (!(tq_su2_project(W, i, j, v) > 0)) continue;
        const double vc[4] = {v[0], -v[1], -v[2], -v[3]};
        tq_quat_mul(x, vc, vc);
        tq_su3_left_mul_su2(U, i, j, x);
    }
}

/* Adds to A the two staples of U_mu(x) in the plane (mu, nu), from their six links (every
 * storage layout gathers these pointers, then calls this):
 *   U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag + U_nu(x+mu-nu)^dag U_mu(x-nu)^dag U_nu(x-nu). */
TQ_HD void tq_su3_staple_add(double *A, const double *u_nu_x, const double *u_nu_xmu, const double *u_mu_xnu,
                             const double *u_mu_xmnu, const double *u_nu_xmu_mnu, const double *u_nu_xmnu)
{
    double t[18], t2[18];
    tq_su3_mul_adj(t, u_nu_xmu, u_mu_xnu);
    tq_su3_mul_adj(t2, t, u_nu_x);
    for (int k = 0; k < 18; k++) A[k] += t2[k];
    /* (U_mu(x-nu) U_nu(x+mu-nu))^dag U_nu(x-nu) */
    tq_su3_mul(t, u_mu_xmnu, u_nu_xmu_mnu);
    tq_su3_adj_mul(t2, t, u_nu_xmnu);
    for (int k = 0; k < 18; k++) A[k] += t2[k];
}

/* Staple sum A of U_mu(x) from the local links in the host API layout (72 doubles a site,
 * periodic in every direction):
 *   A = sum_{nu != mu} U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag
 *                    + U_nu(x+mu-nu)^dag U_mu(x-nu)^dag U_nu(x-nu)
 * so that the plaquettes containing U_mu(x) are Re Tr(U_mu(x) A) summed. */
TQ_HD void tq_su3_staple(const double *links, const int dims[4], const int x[4], int mu, double *A)
{
    for (int k = 0; k < 18; k++) A[k] = 0.0;
    for (int nu = 0; nu < 4; nu++) {
        if (nu == mu) continue;
        int y[4];
        int64_t s_mu, s_nu, s_mnu, s_mu_mnu, s0;
#define TQ_HB_SITE(c) ((((int64_t)(c)[3] * dims[2] + (c)[2]) * dims[1] + (c)[1]) * dims[0] + (c)[0])
        for (int d = 0; d < 4; d++) y[d] = x[d];
        s0 = TQ_HB_SITE(y);
        y[mu] = (x[mu] + 1) % dims[mu];
        s_mu = TQ_HB_SITE(y);
        y[nu] = (x[nu] + dims[nu] - 1) % dims[nu];
        s_mu_mnu = TQ_HB_SITE(y);
        y[mu] = x[mu];
        s_mnu = TQ_HB_SITE(y);
        y[nu] = (x[nu] + 1) % dims[nu];
        s_nu = TQ_HB_SITE(y);
#undef TQ_HB_SITE
        const double *u_nu_xmu = links + (s_mu * 4 + nu) * 18, *u_mu_xnu = links + (s_nu * 4 + mu) * 18;
        const double *u_nu_x = links + (s0 * 4 + nu) * 18;
        const double *u_nu_xmu_mnu = links + (s_mu_mnu * 4 + nu) * 18, *u_mu_xmnu = links + (s_mnu * 4 + mu) * 18;
        const double *u_nu_xmnu = links + (s_mnu * 4 + nu) * 18;
        tq_su3_staple_add(A, u_nu_x, u_nu_xmu, u_mu_xnu, u_mu_xmnu, u_nu_xmu_mnu, u_nu_xmnu);
    }
}

#endif
