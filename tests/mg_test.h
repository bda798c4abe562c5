/* What the multigrid tests share: uniform random numbers (splitmix64; each test seeds
 * mg_rng_state) and a reference stencil's matrices in the library's host order of a coarse
 * operator's links. */
#ifndef TQ_MG_TEST_H
#define TQ_MG_TEST_H

#include "../reference/mg_reference.h"

static uint64_t mg_rng_state = 0x9e3779b97f4a7c15ull;

/* Uniform in [-1, 1). */
static inline double urand(void)
{
    uint64_t z = (mg_rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * 0x1.0p-52 - 1.0;
}

/* h[site][m][i][j][2] with m = 0 X, 1 + 2 mu Yf_mu, 2 + 2 mu Yb_mu (s->nsite 9 ndof^2
 * complex). */
static inline void mg_links_to_host(const mgref_stencil *s, double *h)
{
    const int64_t m = mgref_mat_reals(s->ndof);
    for (int64_t x = 0; x < s->nsite; x++) {
        memcpy(h + (x * 9) * m, s->x + x * m, sizeof(double) * (size_t)m);
        for (int mu = 0; mu < 4; mu++) {
            memcpy(h + (x * 9 + 1 + 2 * mu) * m, s->yf + (x * 4 + mu) * m, sizeof(double) * (size_t)m);
            memcpy(h + (x * 9 + 2 + 2 * mu) * m, s->yb + (x * 4 + mu) * m, sizeof(double) * (size_t)m);
        }
    }
}

/* A double-precision gauge field of lat from g (recon 18) and the Wilson (csw 0) or clover
 * operator on it, antiperiodic in t; returns 0, or -1 with *gauge and *d as far as made. */
static inline int mg_test_dirac(tq_lattice *lat, const tq_host_gauge *g, double kappa, double csw, tq_field **gauge,
                                tq_dirac **d)
{
    tq_field_params gp = {TQ_FIELD_GAUGE, TQ_DOUBLE, TQ_FULL, TQ_RECON_18, 0};
    CHECK_OK(tq_field_create(lat, &gp, gauge));
    if (!*gauge) return -1;
    CHECK_OK(tq_gauge_field_import(*gauge, g));
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = csw != 0.0 ? TQ_DSLASH_CLOVER : TQ_DSLASH_WILSON;
    dp.kappa = kappa;
    dp.csw = csw;
    CHECK_OK(tq_dirac_create(*gauge, &dp, d));
    return *d ? 0 : -1;
}

/* A full double spinor field of lat, with h's values (NULL: none). */
static inline tq_field *spinor(tq_lattice *lat, const double *h)
{
    const tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &f));
    if (f && h) CHECK_OK(tq_field_import(f, h));
    return f;
}

/* |b - M x| / |b| on the host (hb: b's values; w, h: work field and buffer of n reals). */
static inline double residual_of(const tq_dirac *d, tq_field *x, const double *hb, tq_field *w, double *h, int64_t n)
{
    CHECK_OK(tq_dirac_mat(d, w, x, 0));
    CHECK_OK(tq_field_export(w, h));
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) num += (hb[i] - h[i]) * (hb[i] - h[i]), den += hb[i] * hb[i];
    return sqrt(num / den);
}

#endif
