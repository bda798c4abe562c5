/* The clover term A(x) = 1 + kappa c_sw sum_{mu<nu} sigma_{mu nu} (i F_{mu nu}(x)) and its
 * inverse, built from the gauge links on the host in double precision and imported into two
 * clover fields (layout: kernels/clover_site.h). F_{mu nu} = (Q_{mu nu} - Q_{mu nu}^dag) / 8
 * with Q the sum of the four plaquette leaves around x in the (mu, nu) plane
 * (doc/conventions.md). Built once per operator; the applications are codelets. */
#include "field_internal.h"
#include "kernels/su3.h"
#include "kernels/wilson_site.h"
#include "kernels/clover_site.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sigma_{mu nu} = (i/2) [gamma_mu, gamma_nu] for the 6 planes mu < nu, from the gamma tables
 * the kernels use (one non-zero i^code per row). */
static void sigma_matrices(double sig[6][4][4][2])
{
    double g[4][4][4][2];
    memset(g, 0, sizeof g);
    static const double re[4] = {1, 0, -1, 0}, im[4] = {0, 1, 0, -1};
    for (int mu = 0; mu < 4; mu++)
        for (int s = 0; s < 4; s++) {
            int c = tq_gamma_col(mu, s), k = tq_gamma_code(mu, s) & 3;
            g[mu][s][c][0] = re[k];
            g[mu][s][c][1] = im[k];
        }
    int plane = 0;
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++, plane++)
            for (int s = 0; s < 4; s++)
                for (int t = 0; t < 4; t++) {
                    double cr = 0, ci = 0;   /* [g_mu, g_nu]_{st} */
                    for (int r = 0; r < 4; r++) {
                        cr += g[mu][s][r][0] * g[nu][r][t][0] - g[mu][s][r][1] * g[nu][r][t][1];
                        ci += g[mu][s][r][0] * g[nu][r][t][1] + g[mu][s][r][1] * g[nu][r][t][0];
                        cr -= g[nu][s][r][0] * g[mu][r][t][0] - g[nu][s][r][1] * g[mu][r][t][1];
                        ci -= g[nu][s][r][0] * g[mu][r][t][1] + g[nu][s][r][1] * g[mu][r][t][0];
                    }
                    sig[plane][s][t][0] = -0.5 * ci;   /* (i/2)(cr + i ci) */
                    sig[plane][s][t][1] = 0.5 * cr;
                }
}

static int64_t shifted(const int dims[4], const int x[4], int mu, int dmu, int nu, int dnu)
{
    int y[4] = {x[0], x[1], x[2], x[3]};
    y[mu] = (y[mu] + dmu + dims[mu]) % dims[mu];
    y[nu] = (y[nu] + dnu + dims[nu]) % dims[nu];
    return (((int64_t)y[3] * dims[2] + y[2]) * dims[1] + y[1]) * dims[0] + y[0];
}

static const double *gauge_link(const tq_host_gauge *g, int64_t site, int mu)
{
    return g->links + (site * 4 + mu) * 18;
}

/* F_{mu nu}(x) (anti-Hermitian 3x3) from the four leaves, each a closed path from x. */
static void field_strength(const tq_host_gauge *g, const int x[4], int mu, int nu, double *F)
{
    const int *d = g->dims;
    const int64_t s0 = shifted(d, x, mu, 0, nu, 0);
    const int64_t sp_m = shifted(d, x, mu, 1, nu, 0), sp_n = shifted(d, x, mu, 0, nu, 1);
    const int64_t sm_m = shifted(d, x, mu, -1, nu, 0), sm_n = shifted(d, x, mu, 0, nu, -1);
    const int64_t sm_m_p_n = shifted(d, x, mu, -1, nu, 1), sm_m_m_n = shifted(d, x, mu, -1, nu, -1);
    const int64_t sp_m_m_n = shifted(d, x, mu, 1, nu, -1);
    double q[18], t0[18], t1[18], t2[18], leaf[18];
    memset(q, 0, sizeof q);
    /* U_mu(x) U_nu(x+mu) U_mu(x+nu)^dag U_nu(x)^dag */
    tq_su3_mul(t1, gauge_link(g, s0, mu), gauge_link(g, sp_m, nu));
    tq_su3_mul_adj(t2, t1, gauge_link(g, sp_n, mu));
    tq_su3_mul_adj(leaf, t2, gauge_link(g, s0, nu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    /* U_nu(x) U_mu(x-mu+nu)^dag U_nu(x-mu)^dag U_mu(x-mu) */
    tq_su3_mul_adj(t1, gauge_link(g, s0, nu), gauge_link(g, sm_m_p_n, mu));
    tq_su3_mul_adj(t2, t1, gauge_link(g, sm_m, nu));
    tq_su3_mul(leaf, t2, gauge_link(g, sm_m, mu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    /* U_mu(x-mu)^dag U_nu(x-mu-nu)^dag U_mu(x-mu-nu) U_nu(x-nu) */
    tq_su3_mul(t0, gauge_link(g, sm_m_m_n, nu), gauge_link(g, sm_m, mu));
    tq_su3_adjoint(t1, t0);
    tq_su3_mul(t2, t1, gauge_link(g, sm_m_m_n, mu));
    tq_su3_mul(leaf, t2, gauge_link(g, sm_n, nu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    /* U_nu(x-nu)^dag U_mu(x-nu) U_nu(x+mu-nu) U_mu(x)^dag */
    tq_su3_adj_mul(t1, gauge_link(g, sm_n, nu), gauge_link(g, sm_n, mu));
    tq_su3_mul(t2, t1, gauge_link(g, sp_m_m_n, nu));
    tq_su3_mul_adj(leaf, t2, gauge_link(g, s0, mu));
    for (int k = 0; k < 18; k++) q[k] += leaf[k];
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            F[(a * 3 + b) * 2] = (q[(a * 3 + b) * 2] - q[(b * 3 + a) * 2]) / 8.0;
            F[(a * 3 + b) * 2 + 1] = (q[(a * 3 + b) * 2 + 1] + q[(b * 3 + a) * 2 + 1]) / 8.0;
        }
}

/* The two dense 6x6 blocks of A at x: blk[b][i][j][re/im]. */
static void clover_blocks(const tq_host_gauge *g, const int x[4], double kappa, double csw,
                          double sig[6][4][4][2], double blk[2][6][6][2])
{
    memset(blk, 0, sizeof(double) * 2 * 6 * 6 * 2);
    for (int b = 0; b < 2; b++)
        for (int i = 0; i < 6; i++) blk[b][i][i][0] = 1.0;
    int plane = 0;
    for (int mu = 0; mu < 4; mu++)
        for (int nu = mu + 1; nu < 4; nu++, plane++) {
            double F[18];
            field_strength(g, x, mu, nu, F);
            for (int b = 0; b < 2; b++)
                for (int s = 0; s < 2; s++)
                    for (int t = 0; t < 2; t++) {
                        const double sr = sig[plane][2 * b + s][2 * b + t][0], si = sig[plane][2 * b + s][2 * b + t][1];
                        if (sr == 0.0 && si == 0.0) continue;
                        for (int a = 0; a < 3; a++)
                            for (int c = 0; c < 3; c++) {
                                /* i F_ac = -Im F + i Re F */
                                const double fr = -F[(a * 3 + c) * 2 + 1], fi = F[(a * 3 + c) * 2];
                                blk[b][s * 3 + a][t * 3 + c][0] += kappa * csw * (sr * fr - si * fi);
                                blk[b][s * 3 + a][t * 3 + c][1] += kappa * csw * (sr * fi + si * fr);
                            }
                    }
        }
}

/* Inverts a 6x6 complex matrix in place (Gauss-Jordan, partial pivoting). Returns -1 when a
 * pivot vanishes relative to the matrix's scale. */
static int invert6(double m[6][6][2])
{
    double a[6][12][2];
    double scale = 0.0;
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 12; j++) {
            a[i][j][0] = j < 6 ? m[i][j][0] : (j - 6 == i);
            a[i][j][1] = j < 6 ? m[i][j][1] : 0.0;
            if (j < 6) scale = fmax(scale, hypot(m[i][j][0], m[i][j][1]));
        }
    for (int c = 0; c < 6; c++) {
        int p = c;
        for (int r = c + 1; r < 6; r++)
            if (hypot(a[r][c][0], a[r][c][1]) > hypot(a[p][c][0], a[p][c][1])) p = r;
        const double pr = a[p][c][0], pi = a[p][c][1], pn = pr * pr + pi * pi;
        if (!(sqrt(pn) > 1e-12 * scale)) return -1;
        if (p != c)
            for (int j = 0; j < 12; j++)
                for (int k = 0; k < 2; k++) { double t = a[p][j][k]; a[p][j][k] = a[c][j][k]; a[c][j][k] = t; }
        /* row c /= pivot */
        const double ir = pr / pn, ii = -pi / pn;
        for (int j = 0; j < 12; j++) {
            const double xr = a[c][j][0], xi = a[c][j][1];
            a[c][j][0] = xr * ir - xi * ii;
            a[c][j][1] = xr * ii + xi * ir;
        }
        for (int r = 0; r < 6; r++) {
            if (r == c) continue;
            const double fr = a[r][c][0], fi = a[r][c][1];
            if (fr == 0.0 && fi == 0.0) continue;
            for (int j = 0; j < 12; j++) {
                a[r][j][0] -= fr * a[c][j][0] - fi * a[c][j][1];
                a[r][j][1] -= fr * a[c][j][1] + fi * a[c][j][0];
            }
        }
    }
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 6; j++) { m[i][j][0] = a[i][j + 6][0]; m[i][j][1] = a[i][j + 6][1]; }
    return 0;
}

/* Packs a Hermitian block into 36 reals (diagonal, then the lower triangle). The inverse is
 * Hermitian up to rounding: the packing averages A_ij and conj(A_ji). */
static void pack_block(double m[6][6][2], double *out)
{
    for (int i = 0; i < 6; i++) out[i] = m[i][i][0];
    for (int i = 1; i < 6; i++)
        for (int j = 0; j < i; j++) {
            out[tq_clover_offdiag(i, j)] = 0.5 * (m[i][j][0] + m[j][i][0]);
            out[tq_clover_offdiag(i, j) + 1] = 0.5 * (m[i][j][1] - m[j][i][1]);
        }
}

static tq_status clover_field(const tq_field *gauge, tq_field **f)
{
    tq_field_params fp = {TQ_FIELD_CLOVER, gauge->p.prec, TQ_FULL, (tq_recon)0};
    return tq_field_create(gauge->lat, &fp, f);
}

tq_status tq_clover_build(const tq_field *gauge, double kappa, double csw, tq_field **A,
                          tq_field **Ainv)
{
    const char *who = "tq_clover_build";
    *A = *Ainv = NULL;
    const tq_lattice *lat = gauge->lat;
    tq_host_gauge g;
    TQ_CHECK(tq_host_gauge_alloc(&g, lat->local));
    tq_status st = tq_gauge_field_export(gauge, &g);
    double *host = NULL, *host_inv = NULL;
    if (st == TQ_SUCCESS) {
        host = malloc((size_t)lat->local_volume * TQ_CLOVER_REALS * sizeof *host);
        host_inv = malloc((size_t)lat->local_volume * TQ_CLOVER_REALS * sizeof *host_inv);
        if (!host || !host_inv)
            st = tq_error(TQ_ERR_NOMEM, "%s: out of memory for %lld clover sites", who, (long long)lat->local_volume);
    }
    double sig[6][4][4][2];
    sigma_matrices(sig);
    for (int64_t s = 0; s < lat->local_volume && st == TQ_SUCCESS; s++) {
        int x[4];
        int64_t r = s;
        for (int mu = 0; mu < 4; mu++) { x[mu] = (int)(r % lat->local[mu]); r /= lat->local[mu]; }
        double blk[2][6][6][2];
        clover_blocks(&g, x, kappa, csw, sig, blk);
        for (int b = 0; b < 2; b++) {
            pack_block(blk[b], host + s * TQ_CLOVER_REALS + b * TQ_CLOVER_BLOCK_REALS);
            if (invert6(blk[b]))
                st = tq_error(TQ_ERR_INVALID_ARG, "%s: the clover term is singular at site (%d,%d,%d,%d) (kappa %g, c_sw %g)",
                              who, x[0], x[1], x[2], x[3], kappa, csw);
            pack_block(blk[b], host_inv + s * TQ_CLOVER_REALS + b * TQ_CLOVER_BLOCK_REALS);
        }
    }
    if (st == TQ_SUCCESS) st = clover_field(gauge, A);
    if (st == TQ_SUCCESS) st = clover_field(gauge, Ainv);
    if (st == TQ_SUCCESS) st = tq_field_import(*A, host);
    if (st == TQ_SUCCESS) st = tq_field_import(*Ainv, host_inv);
    free(host);
    free(host_inv);
    tq_host_gauge_free(&g);
    if (st != TQ_SUCCESS) {
        tq_field_destroy(*A);
        tq_field_destroy(*Ainv);
        *A = *Ainv = NULL;
    }
    return st;
}
