/* Minimal test harness: each test program runs checks, prints one line per failure and a
 * summary, and exits 0 (pass), 1 (fail) or 77 (skip, Automake's convention). */
#ifndef TQ_TEST_H
#define TQ_TEST_H

#include "taskqcd.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int tq_test_checks, tq_test_failures;

#define CHECK(cond, ...) do { \
    tq_test_checks++; \
    if (!(cond)) { \
        tq_test_failures++; \
        fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
    } } while (0)

/* A call that must succeed; on failure print the library's message. */
#define CHECK_OK(call) do { \
    tq_status tq_test_s_ = (call); \
    tq_test_checks++; \
    if (tq_test_s_ != TQ_SUCCESS) { \
        tq_test_failures++; \
        fprintf(stderr, "FAIL %s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #call, \
                tq_status_name(tq_test_s_), tq_last_error()); \
    } } while (0)

/* A call that must fail with the given code and leave a message. */
#define CHECK_ERR(call, code) do { \
    tq_status tq_test_s_ = (call); \
    tq_test_checks++; \
    if (tq_test_s_ != (code) || tq_last_error()[0] == '\0') { \
        tq_test_failures++; \
        fprintf(stderr, "FAIL %s:%d: %s returned %s (expected %s), message '%s'\n", \
                __FILE__, __LINE__, #call, tq_status_name(tq_test_s_), #code, tq_last_error()); \
    } } while (0)

#define CHECK_CLOSE(a, b, tol, what) do { \
    double tq_a_ = (a), tq_b_ = (b); \
    double tq_d_ = fabs(tq_a_ - tq_b_); \
    CHECK(tq_d_ <= (tol) * fmax(1.0, fabs(tq_b_)), "%s: %.17g vs %.17g (diff %.3g, tol %.3g)", \
          what, tq_a_, tq_b_, tq_d_, (double)(tol)); \
} while (0)

static inline int tq_test_finish(const char *name)
{
    printf("%s: %d checks, %d failed\n", name, tq_test_checks, tq_test_failures);
    return tq_test_failures ? 1 : 0;
}

static inline int tq_test_skip(const char *name, const char *why)
{
    printf("%s: SKIP: %s\n", name, why);
    return 77;
}

/* n uniform numbers in [-0.5, 0.5) from a 64-bit LCG seeded with seed (host data of tests). */
static inline void tq_test_fill(double *h, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ULL + 1442695040888963407ULL;
        h[i] = (double)(s >> 11) / 9007199254740992.0 - 0.5;
    }
}

/* Largest |out - ref| over nsites color-spinor sites (24 reals each), relative to each
 * site's largest |ref| (infinite where ref is 0 and out is not): a field's error in units of
 * its storage rounding, which is relative to the site (half precision's per-site norm). */
static inline double tq_test_site_rel_err(const double *out, const double *ref, size_t nsites)
{
    double worst = 0.0;
    for (size_t s = 0; s < nsites; s++) {
        double m = 0.0, e = 0.0;
        for (int k = 0; k < 24; k++) {
            m = fmax(m, fabs(ref[s * 24 + k]));
            e = fmax(e, fabs(out[s * 24 + k] - ref[s * 24 + k]));
        }
        if (m > 0.0) worst = fmax(worst, e / m);
        else if (e > 0.0) worst = INFINITY;
    }
    return worst;
}

/* Path of a file in ../shared/data/milc, or NULL when the shared data are absent. */
static inline const char *tq_test_milc_file(const char *name, char *buf, size_t n)
{
    const char *dir = getenv("TQ_SHARED_DATA");
    if (!dir) dir = "../shared/data";
    snprintf(buf, n, "%s/milc/%s", dir, name);
    FILE *f = fopen(buf, "rb");
    if (!f) return NULL;
    fclose(f);
    return buf;
}

/* Non-zero where TQ_TEST_QUICK is set (scripts/run-sanitizers sets it): the longest tests then
 * leave out the parts that run code they already ran at other parameters, and print what
 * they left out; everything else, every check of the parts they run, stays. */
static inline int tq_test_quick(void)
{
    const char *q = getenv("TQ_TEST_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

/* A lattice with the given dims and block (NULL: automatic); NULL and a failed check on error. */
static inline tq_lattice *tq_test_lattice(const int dims[4], const int *block)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    if (block) memcpy(lp.block, block, sizeof lp.block);
    tq_lattice *lat = NULL;
    tq_status s = tq_lattice_create(&lp, &lat);
    CHECK(s == TQ_SUCCESS, "lattice %dx%dx%dx%d: %s", dims[0], dims[1], dims[2], dims[3], tq_last_error());
    return lat;
}

/* Starts the runtime on ncpus CPU workers alone, without MPI (the CPU-only tests of one
 * process); 0 on success. */
static inline int tq_test_init_cpus(int ncpus)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = ncpus;
    ip.ncuda = 0;
    ip.use_mpi = 0;
    if (tq_init(&ip) != TQ_SUCCESS) {
        fprintf(stderr, "tq_init: %s\n", tq_last_error());
        return -1;
    }
    return 0;
}

/* Starts the runtime with ncpus CPU workers and the GPUs beside them, for the _cuda variants
 * of tests (compiled with TQ_TEST_CUDA): 0 with at least one CUDA worker, 77 (after
 * printing the skip line and stopping the runtime) without one, -1 on failure. */
static inline int tq_test_init_gpus(const char *name, int ncpus)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = ncpus;
    ip.use_mpi = 0;
    ip.verbosity = 0;
    if (tq_init(&ip) != TQ_SUCCESS) {
        fprintf(stderr, "tq_init: %s\n", tq_last_error());
        return -1;
    }
    tq_runtime_info ri;
    if (tq_get_runtime_info(&ri) != TQ_SUCCESS || ri.ncuda_workers == 0) {
        printf("%s: SKIP: no CUDA worker (run on the GPU machine)\n", name);
        tq_finalize();
        return 77;
    }
    return 0;
}

/* Starts the runtime of an MPI test (one CPU worker a rank, runtime options from the command
 * line) and fills ri: 0 when it runs on exactly nranks ranks of an MPI build; otherwise the
 * exit code (1 on failure; 77, after the skip line and stopping the runtime, elsewhere: the
 * test's script runs it under mpirun). */
static inline int tq_test_mpi_start(const char *name, int nranks, int *argc, char **argv, tq_runtime_info *ri)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 1;
    if (tq_init_params_from_args(&ip, argc, argv)) { fprintf(stderr, "%s\n", tq_last_error()); return 1; }
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }
    tq_get_runtime_info(ri);
    if (!ri->built_with_mpi || ri->mpi_size != nranks) {
        tq_finalize();
        char why[96];
        snprintf(why, sizeof why, "needs a build with MPI and exactly %d ranks (run by test_mpi.sh)", nranks);
        return tq_test_skip(name, why);
    }
    return 0;
}

/* Starts the runtime quietly with default parameters and prints what it got; 0 on success. */
static inline int tq_test_init_quiet(tq_runtime_info *info)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.verbosity = 0;
    if (tq_init(&ip) != TQ_SUCCESS) {
        fprintf(stderr, "tq_init: %s\n", tq_last_error());
        return -1;
    }
    CHECK_OK(tq_get_runtime_info(info));
    printf("StarPU %s: %d CPU, %d CUDA worker(s), scheduler %s, built %s CUDA\n", info->starpu_version,
           info->ncpu_workers, info->ncuda_workers, info->sched, info->built_with_cuda ? "with" : "without");
    return 0;
}

#endif
