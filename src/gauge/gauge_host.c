/* Host gauge fields in the API layout: allocation and observables computed with plain loops
 * in double precision (also the reference for task-based versions). */
#include "core/tq_internal.h"
#include "kernels/su3.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

tq_status tq_host_gauge_alloc(tq_host_gauge *g, const int dims[4])
{
    if (!g || !dims) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_alloc: NULL argument");
    for (int mu = 0; mu < 4; mu++)
        if (dims[mu] <= 0)
            return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_alloc: dimension %d is %d (must be > 0)", mu, dims[mu]);
    int64_t vol = tq_volume4(dims);
    double *links = calloc((size_t)vol * 72, sizeof(double));
    if (!links) return tq_error(TQ_ERR_NOMEM, "tq_host_gauge_alloc: cannot allocate %lld sites", (long long)vol);
    memcpy(g->dims, dims, sizeof g->dims);
    g->links = links;
    return TQ_SUCCESS;
}

void tq_host_gauge_free(tq_host_gauge *g)
{
    if (!g) return;
    free(g->links);
    g->links = NULL;
}

static int64_t neighbour(const int dims[4], int64_t site, int mu)
{
    int x[4];
    int64_t s = site;
    for (int d = 0; d < 4; d++) { x[d] = (int)(s % dims[d]); s /= dims[d]; }
    x[mu] = (x[mu] + 1) % dims[mu];
    return ((int64_t)(x[3] * dims[2] + x[2]) * dims[1] + x[1]) * dims[0] + x[0];
}

tq_status tq_host_gauge_plaquette(const tq_host_gauge *g, tq_plaquette *p)
{
    if (!g || !g->links || !p) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_plaquette: NULL argument");
    int64_t vol = tq_volume4(g->dims);
    double ss = 0, st = 0;
    double ab[18], cd[18];
    for (int64_t s = 0; s < vol; s++)
        for (int mu = 0; mu < 4; mu++)
            for (int nu = mu + 1; nu < 4; nu++) {
                /* U_mu(x) U_nu(x+mu) and U_nu(x) U_mu(x+nu): plaquette = Re Tr(ab (cd)^dag) */
                const double *umu = g->links + (s * 4 + mu) * 18;
                const double *unu = g->links + (s * 4 + nu) * 18;
                const double *unu_xmu = g->links + (neighbour(g->dims, s, mu) * 4 + nu) * 18;
                const double *umu_xnu = g->links + (neighbour(g->dims, s, nu) * 4 + mu) * 18;
                tq_su3_mul(ab, umu, unu_xmu);
                tq_su3_mul(cd, unu, umu_xnu);
                double v = tq_su3_re_trace_mul_adj(ab, cd);
                if (nu == 3) st += v; else ss += v;
            }
    p->spatial = ss / (3.0 * 3.0 * (double)vol);
    p->temporal = st / (3.0 * 3.0 * (double)vol);
    p->total = 0.5 * (p->spatial + p->temporal);
    return TQ_SUCCESS;
}

tq_status tq_host_gauge_link_trace(const tq_host_gauge *g, double *trace)
{
    if (!g || !g->links || !trace) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_link_trace: NULL argument");
    int64_t n = tq_volume4(g->dims) * 4;
    double t = 0;
    for (int64_t l = 0; l < n; l++) {
        const double *u = g->links + l * 18;
        t += u[0] + u[8] + u[16];
    }
    *trace = t / (3.0 * (double)n);
    return TQ_SUCCESS;
}

tq_status tq_host_gauge_polyakov(const tq_host_gauge *g, double *re, double *im)
{
    if (!g || !g->links || !re || !im) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_polyakov: NULL argument");
    for (int mu = 0; mu < 4; mu++)
        if (g->dims[mu] <= 0) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_polyakov: dimension %d is %d", mu, g->dims[mu]);
    const int64_t vs = (int64_t)g->dims[0] * g->dims[1] * g->dims[2];
    double sr = 0, si = 0;
    for (int64_t x = 0; x < vs; x++) {
        double P[18], t[18];
        memcpy(P, g->links + (x * 4 + 3) * 18, sizeof P);
        for (int64_t tt = 1; tt < g->dims[3]; tt++) {
            tq_su3_mul(t, P, g->links + ((tt * vs + x) * 4 + 3) * 18);
            memcpy(P, t, sizeof P);
        }
        sr += P[0] + P[8] + P[16];
        si += P[1] + P[9] + P[17];
    }
    *re = sr / (3.0 * (double)vs);
    *im = si / (3.0 * (double)vs);
    return TQ_SUCCESS;
}

/* Largest deviation of links [begin, end), NaN if any is NaN (a NaN link is not SU(3)). */
typedef struct unitarity_scan {
    const double *links;
    pthread_mutex_t lock;
    double worst;
} unitarity_scan;

static double worse(double a, double b) { return isnan(a) || isnan(b) ? NAN : a > b ? a : b; }

static void unitarity_part(int64_t begin, int64_t end, void *arg)
{
    unitarity_scan *u = arg;
    double w = 0;
    for (int64_t l = begin; l < end; l++) w = worse(w, tq_su3_unitarity_deviation(u->links + l * 18));
    pthread_mutex_lock(&u->lock);
    u->worst = worse(u->worst, w);   /* the largest of all: the same whatever the order */
    pthread_mutex_unlock(&u->lock);
}

tq_status tq_host_gauge_unitarity(const tq_host_gauge *g, double *max_deviation)
{
    if (!g || !g->links || !max_deviation) return tq_error(TQ_ERR_INVALID_ARG, "tq_host_gauge_unitarity: NULL argument");
    /* on host threads: a 32^4 file's 4M links took a second on one */
    unitarity_scan u = {g->links, PTHREAD_MUTEX_INITIALIZER, 0};
    tq_host_parallel_for(tq_volume4(g->dims) * 4, unitarity_part, &u);
    *max_deviation = u.worst;
    return TQ_SUCCESS;
}
