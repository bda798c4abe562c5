/* Helpers shared by the Dirac-operator tests (test_dslash, test_clover and their CUDA
 * builds): tolerances, error measure, and the lattice + gauge + operator set-up. */
#ifndef TQ_DIRAC_TEST_UTIL_H
#define TQ_DIRAC_TEST_UTIL_H

#include "taskqcd.h"
#include "tq_test.h"
#include "../reference/wilson_reference.h"

static const tq_precision precs[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
static const tq_recon recons[3] = {TQ_RECON_18, TQ_RECON_12, TQ_RECON_8};

/* Largest error relative to the largest reference value (over the sites of `parity`, 2 =
 * all). Tolerances: double arithmetic in another order; single: float arithmetic and float
 * storage (recon 8 adds its reconstruction, worse where |c1| or |a1| is small); half:
 * int16 spinors and links (1/32767 of the site max) through eight hops. */
static inline double tolerance(tq_precision p, tq_recon r)
{
    if (p == TQ_DOUBLE) return r == TQ_RECON_8 ? 1e-12 : 1e-14;
    if (p == TQ_SINGLE) return r == TQ_RECON_8 ? 2e-5 : 2e-6;
    return 2e-3;
}

static inline double rel_err(const double *a, const double *ref, const int dims[4], int parity)
{
    double num = 0.0, den = 0.0;
    int64_t vol = ref_volume(dims);
    for (int64_t s = 0; s < vol; s++) {
        if (parity != 2 && ref_site_parity(s, dims) != parity) continue;
        for (int k = 0; k < 24; k++) {
            num = fmax(num, fabs(a[24 * s + k] - ref[24 * s + k]));
            den = fmax(den, fabs(ref[24 * s + k]));
        }
    }
    return den > 0 ? num / den : num;
}

typedef struct setup {
    int dims[4];
    tq_lattice *lat;
    tq_field *gauge;
    tq_dirac *dirac;
    double bc[4];
} setup;

/* The Wilson (clover 0) or clover operator's parameters. */
static inline tq_dirac_params wilson_or_clover(int clover, double kappa, double csw)
{
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = clover ? TQ_DSLASH_CLOVER : TQ_DSLASH_WILSON;
    dp.kappa = kappa;
    dp.csw = csw;
    return dp;
}

/* Lattice, gauge field (imported from hg) and the operator dp (NULL: Wilson with kappa). */
static inline int setup_make_op(setup *S, const int dims[4], const int *block, const tq_host_gauge *hg,
                         tq_precision prec, tq_recon recon, double kappa, const tq_dirac_params *op)
{
    memset(S, 0, sizeof *S);
    memcpy(S->dims, dims, sizeof S->dims);
    S->bc[0] = S->bc[1] = S->bc[2] = 1.0;
    S->bc[3] = -1.0;
    S->lat = tq_test_lattice(dims, block);
    if (!S->lat) return -1;
    tq_field_params gp = {TQ_FIELD_GAUGE, prec, TQ_FULL, recon, 0};
    CHECK_OK(tq_field_create(S->lat, &gp, &S->gauge));
    if (!S->gauge) return -1;
    CHECK_OK(tq_gauge_field_import(S->gauge, hg));
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = kappa;
    if (op) dp = *op;
    CHECK_OK(tq_dirac_create(S->gauge, &dp, &S->dirac));
    return S->dirac ? 0 : -1;
}

static inline int setup_make(setup *S, const int dims[4], const int *block, const tq_host_gauge *hg,
                      tq_precision prec, tq_recon recon, double kappa)
{
    return setup_make_op(S, dims, block, hg, prec, recon, kappa, NULL);
}

static inline void setup_free(setup *S)
{
    tq_dirac_destroy(S->dirac);
    tq_field_destroy(S->gauge);
    tq_lattice_destroy(S->lat);
}

static inline tq_field *spinor(const setup *S, tq_precision prec, tq_subset sub, const double *host)
{
    tq_field_params fp = {TQ_FIELD_SPINOR, prec, sub, (tq_recon)0, 0};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(S->lat, &fp, &f));
    if (f && host) CHECK_OK(tq_field_import(f, host));
    return f;
}

/* Starts the runtime and places the tasks (CPU or CUDA workers). Returns 0 to go on, else
 * main's exit code: 1 when the runtime fails, 77 (skip) for CUDA placement without a GPU. */
static inline int dirac_test_start(const char *name, tq_where where)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 1;
    if (where == TQ_WHERE_CUDA && info.ncuda_workers == 0) {
        tq_finalize();
        return tq_test_skip(name, "no CUDA worker (run it on the GPU machine: bench/device-run.sh)");
    }
    CHECK_OK(tq_set_placement(where));
    return 0;
}

#endif
