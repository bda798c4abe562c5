/* The library's improved staggered hopping term (src/dirac/staggered.c,
 * codelets/staggered.c) against the plain-loop reference/staggered_reference.h on asqtad
 * links built from random SU(3) links (antiperiodic in time): bitwise in double, to
 * rounding in single and half, and bitwise the same on one block and on decompositions
 * whose faces cross every direction (blocks of extent 4: every site within the Naik
 * term's three layers of a face); CG on the even-odd system solves M x = b (M = 2m + D) to
 * a true residual checked with the reference's M, on one block and on 16; multi-shift CG
 * over three masses reaches the same residual for each and agrees with the single-mass
 * solves; the asqtad and HISQ links built by the library's tasks from thin links give the
 * reference's operator to rounding, bitwise the same on one block and on 16, on random
 * links and on MILC's 8^4 sample configuration (with its plaquette's u0); the public API's
 * solves and mixed-precision solves (CG with reliable updates, the multi-shift refined per
 * mass) reach the reference's true residual; clear errors for lattices, fields and
 * arguments the operator and the solves refuse.
 * test_staggered_cuda (this file with TQ_TEST_CUDA): the same with the blocks on a GPU
 * (their owner; the test checks that CUDA workers ran the tasks), where double agrees with
 * the reference to rounding (the GPU contracts products into fused multiply-adds) and the
 * decompositions are still bitwise the same; with two GPUs the faces between them are peer
 * faces (written GPU to GPU, core/stencil.h), checked to have been used. */
#include "tq_test.h"
#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_staggered_cuda"
#define DOUBLE_TOL 1e-13
#else
#define TEST_NAME "test_staggered"
#define DOUBLE_TOL 0.0
#endif
#include "../reference/staggered_reference.h"
#include "dirac/staggered.h"
#include "solvers/staggered_solve.h"

static const double BC[4] = {1, 1, 1, -1};

#ifdef TQ_TEST_CUDA
/* Tasks CUDA workers ran since the last call (StarPU's per-worker profiling counters,
 * reset by each read). */
static long cuda_tasks_run(void)
{
    long n = 0;
    for (unsigned w = 0; w < starpu_worker_get_count(); w++) {
        struct starpu_profiling_worker_info info;
        if (starpu_profiling_worker_get_info((int)w, &info) == 0 && starpu_worker_get_type((int)w) == STARPU_CUDA_WORKER)
            n += info.executed_tasks;
    }
    return n;
}

static void check_ran_on_gpu(const char *what)
{
    const long n = cuda_tasks_run();
    CHECK(n > 0, "%s: no task ran on a CUDA worker", what);
    printf("  %s: %ld tasks on CUDA workers\n", what, n);
}
#else
static void check_ran_on_gpu(const char *what) { (void)what; }
#endif

/* Operators apply() made whose faces between GPUs were peer faces (core/stencil.h). */
static int peer_ops;

/* D in on `block` in precision prec, exported into got; 0 on success. */
static int apply(const int dims[4], const int block[4], tq_precision prec, const double *fat, const double *lng,
                 const double *in, double *got)
{
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) return -1;
    tq_ks_op *op = NULL;
    tq_field *x = NULL, *y = NULL;
    tq_field_params fp = {TQ_FIELD_STAGGERED, prec, TQ_FULL, (tq_recon)0, 0};
    CHECK_OK(tq_ks_op_create(lat, fat, lng, prec, &op));
    if (op && op->stencil.peer) peer_ops++;
    CHECK_OK(tq_field_create(lat, &fp, &x));
    CHECK_OK(tq_field_create(lat, &fp, &y));
    const int ok = op && x && y;
    if (ok) {
        CHECK_OK(tq_field_import(x, in));
        CHECK_OK(tq_ks_dslash(op, y, x));
        CHECK_OK(tq_ks_dslash(op, y, x));   /* again: the second set of faces */
        CHECK_OK(tq_field_export(y, got));
    }
    tq_field_destroy(x);
    tq_field_destroy(y);
    tq_ks_op_destroy(op);
    tq_lattice_destroy(lat);
    return ok ? 0 : -1;
}

static void check_operator(const int dims[4], const int blocks[][4], int nblocks)
{
    const int64_t vol = ref_volume(dims);
    double *u = malloc(sizeof(double) * 72 * (size_t)vol), *fat = malloc(sizeof(double) * 72 * (size_t)vol),
           *lng = malloc(sizeof(double) * 72 * (size_t)vol), *in = malloc(sizeof(double) * 6 * (size_t)vol),
           *want = malloc(sizeof(double) * 6 * (size_t)vol), *first = malloc(sizeof(double) * 6 * (size_t)vol),
           *got = malloc(sizeof(double) * 6 * (size_t)vol);
    if (!u || !fat || !lng || !in || !want || !first || !got) { CHECK(0, "out of memory"); goto out; }
    ref_gauge_random_su3(u, dims, 3);
    ref_ks_fat_long(fat, lng, u, dims, 0.9, BC);
    uint64_t st = 0x9e3779b97f4a7c15ull;
    for (int64_t i = 0; i < 6 * vol; i++) in[i] = wref_rng_gaussian(&st);
    ref_ks_dslash(want, fat, lng, in, dims);
    for (int pi = 0; pi < 3; pi++) {
        const tq_precision prec = pi == 2 ? TQ_HALF : pi ? TQ_SINGLE : TQ_DOUBLE;
        for (int b = 0; b < nblocks; b++) {
            char what[160];
            snprintf(what, sizeof what, "%dx%dx%dx%d, blocks %dx%dx%dx%d, %s", dims[0], dims[1], dims[2], dims[3],
                     blocks[b][0], blocks[b][1], blocks[b][2], blocks[b][3], tq_precision_name(prec));
            if (apply(dims, blocks[b], prec, fat, lng, in, b ? got : first)) continue;
            const double *r = b ? got : first;
            double worst = 0, scale = 0;
            for (int64_t i = 0; i < 6 * vol; i++) worst = fmax(worst, fabs(r[i] - want[i])), scale = fmax(scale, fabs(want[i]));
            /* half: 16-bit links (bounded by their largest entry) and vectors */
            const double tol = prec == TQ_DOUBLE ? DOUBLE_TOL : prec == TQ_SINGLE ? 1e-6 : 2e-4;
            CHECK(worst <= tol * scale, "%s: differs from the reference by %.3g (scale %.3g)", what, worst, scale);
            if (b) CHECK(!memcmp(got, first, sizeof(double) * 6 * (size_t)vol), "%s: not bitwise the same as one block", what);
            printf("  %-48s max |D v - reference| / max %.2g\n", what, worst / scale);
        }
    }
out:
    free(u);
    free(fat);
    free(lng);
    free(in);
    free(want);
    free(first);
    free(got);
}

static void check_errors(void)
{
    const int dims[4] = {4, 4, 4, 8}, small[4] = {4, 4, 4, 4};
    const int64_t vol = ref_volume(dims);
    double *fat = calloc((size_t)(72 * vol), sizeof(double)), *lng = calloc((size_t)(72 * vol), sizeof(double));
    tq_lattice *lat = tq_test_lattice(dims, NULL), *other = tq_test_lattice(small, NULL);
    const int thin[4] = {4, 4, 4, 2};
    tq_lattice *split2 = tq_test_lattice(dims, thin);
    if (!fat || !lng || !lat || !other || !split2) goto out;
    tq_ks_op *op = NULL;
    CHECK_ERR(tq_ks_op_create(NULL, fat, lng, TQ_DOUBLE, &op), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_ks_op_create(lat, NULL, lng, TQ_DOUBLE, &op), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_ks_op_create(lat, fat, lng, (tq_precision)3, &op), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_ks_op_create(split2, fat, lng, TQ_DOUBLE, &op), TQ_ERR_INVALID_ARG);
    CHECK(strstr(tq_last_error(), "Naik") != NULL, "blocks of extent 2: '%s'", tq_last_error());
    printf("  refused, blocks 4x4x4x2          %s\n", tq_last_error());
    CHECK(op == NULL, "a refused operator was returned");
    CHECK_OK(tq_ks_op_create(lat, fat, lng, TQ_DOUBLE, &op));
    if (op) {
        tq_field *a = NULL, *b = NULL, *c = NULL, *e = NULL;
        tq_field_params fp = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
        CHECK_OK(tq_field_create(lat, &fp, &a));
        CHECK_OK(tq_field_create(lat, &fp, &b));
        CHECK_OK(tq_field_create(other, &fp, &c));
        fp.prec = TQ_SINGLE;
        CHECK_OK(tq_field_create(lat, &fp, &e));
        CHECK_ERR(tq_ks_dslash(op, a, a), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_ks_dslash(op, a, e), TQ_ERR_MISMATCH);
        printf("  refused, single into double      %s\n", tq_last_error());
        CHECK(tq_ks_dslash(op, c, a) != TQ_SUCCESS, "a field of another lattice was accepted");
        CHECK_ERR(tq_ks_dslash(NULL, a, b), TQ_ERR_INVALID_ARG);
        tq_field_destroy(a);
        tq_field_destroy(b);
        tq_field_destroy(c);
        tq_field_destroy(e);
        tq_ks_op_destroy(op);
    }
out:
    free(fat);
    free(lng);
    tq_lattice_destroy(split2);
    tq_lattice_destroy(other);
    tq_lattice_destroy(lat);
}

/* M x = b by tq_ks_solve on `block`; x exported into got; 0 on success. */
static int solve(const int dims[4], const int block[4], const double *fat, const double *lng, const double *b_host,
                 double mass, double *got, int *iterations)
{
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) return -1;
    tq_ks_op *op = NULL;
    tq_field *x = NULL, *b = NULL;
    tq_field_params fp = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    CHECK_OK(tq_ks_op_create(lat, fat, lng, TQ_DOUBLE, &op));
    CHECK_OK(tq_field_create(lat, &fp, &x));
    CHECK_OK(tq_field_create(lat, &fp, &b));
    int ok = op && x && b;
    if (ok) {
        tq_solver_params p;
        tq_solver_params_default(&p);
        p.inverter = TQ_INV_CG;
        p.tol = 1e-10;
        p.maxiter = 2000;
        tq_krylov_out out;
        CHECK_OK(tq_field_import(b, b_host));
        CHECK_OK(tq_ks_solve(op, mass, x, b, &p, &out));
        CHECK_OK(tq_field_export(x, got));
        *iterations = out.iterations;
        /* bad input: the solve refuses it before it queues anything */
        CHECK_ERR(tq_ks_solve(op, -0.1, x, b, &p, &out), TQ_ERR_INVALID_ARG);
        CHECK(strstr(tq_last_error(), "mass") != NULL, "negative mass: '%s'", tq_last_error());
        CHECK_ERR(tq_ks_solve(op, mass, x, x, &p, &out), TQ_ERR_INVALID_ARG);
        p.inverter = TQ_INV_BICGSTAB;
        CHECK_ERR(tq_ks_solve(op, mass, x, b, &p, &out), TQ_ERR_INVALID_ARG);
    }
    tq_field_destroy(x);
    tq_field_destroy(b);
    tq_ks_op_destroy(op);
    tq_lattice_destroy(lat);
    return ok ? 0 : -1;
}

static void check_solve(void)
{
    const int dims[4] = {8, 8, 8, 8}, blocks[2][4] = {{8, 8, 8, 8}, {4, 4, 4, 4}};
    const double mass = 0.1;
    const int64_t vol = ref_volume(dims);
    double *u = malloc(sizeof(double) * 72 * (size_t)vol), *fat = malloc(sizeof(double) * 72 * (size_t)vol),
           *lng = malloc(sizeof(double) * 72 * (size_t)vol), *b = malloc(sizeof(double) * 6 * (size_t)vol),
           *x = malloc(sizeof(double) * 6 * (size_t)vol), *x0 = malloc(sizeof(double) * 6 * (size_t)vol),
           *mx = malloc(sizeof(double) * 6 * (size_t)vol);
    if (!u || !fat || !lng || !b || !x || !x0 || !mx) { CHECK(0, "out of memory"); goto out; }
    ref_gauge_random_su3(u, dims, 17);
    ref_ks_fat_long(fat, lng, u, dims, 0.9, BC);
    uint64_t st = 0x2545f4914f6cdd1dull;
    for (int64_t i = 0; i < 6 * vol; i++) b[i] = wref_rng_gaussian(&st);
    for (int k = 0; k < 2; k++) {
        int its = 0;
        if (solve(dims, blocks[k], fat, lng, b, mass, k ? x : x0, &its)) continue;
        ref_ks_mat(mx, fat, lng, k ? x : x0, mass, dims);
        const double res = sqrt(ref_vdiff2(mx, b, 6 * vol) / ref_vnorm2(b, 6 * vol));
        CHECK(res < 1e-8 && its > 0 && its < 2000, "blocks %d^4: true residual %.3g after %d CG iterations", blocks[k][0],
              res, its);
        if (k) {
            const double dx = sqrt(ref_vdiff2(x, x0, 6 * vol) / ref_vnorm2(x0, 6 * vol));
            CHECK(dx < 1e-9, "the solution on 16 blocks differs from one block's by %.3g", dx);
        }
        printf("  M x = b, m %.2f, 8^4, blocks %d^4: %d CG iterations, true residual |b - M x| / |b| %.2g\n", mass,
               blocks[k][0], its, res);
    }
out:
    free(u);
    free(fat);
    free(lng);
    free(b);
    free(x);
    free(x0);
    free(mx);
}

/* Multi-shift CG for three masses on an even-site source: each (4m^2 - D_eo D_oe) x_i = b
 * to a true residual of 1e-8 (the reference's D), and x_i equal to the single-mass solve's
 * even part / 2m. */
static void check_multishift(void)
{
    const int dims[4] = {8, 8, 8, 8};
    enum { NM = 3 };
    const double masses[NM] = {0.1, 0.05, 0.2};
    const int64_t vol = ref_volume(dims);
    const size_t nv = 6 * (size_t)vol;
    double *u = malloc(sizeof(double) * 72 * (size_t)vol), *fat = malloc(sizeof(double) * 72 * (size_t)vol),
           *lng = malloc(sizeof(double) * 72 * (size_t)vol), *b = calloc(nv, sizeof(double)), *y = calloc(nv, sizeof(double)),
           *t = malloc(sizeof(double) * nv), *dd = malloc(sizeof(double) * nv), *xf = malloc(sizeof(double) * nv);
    tq_lattice *lat = tq_test_lattice(dims, NULL);
    tq_ks_op *op = NULL;
    tq_field *x[NM] = {NULL, NULL, NULL}, *be = NULL, *bf = NULL, *xfull = NULL;
    if (!u || !fat || !lng || !b || !y || !t || !dd || !xf || !lat) { CHECK(0, "out of memory"); goto out; }
    ref_gauge_random_su3(u, dims, 23);
    ref_ks_fat_long(fat, lng, u, dims, 0.9, BC);
    uint64_t st = 0x6a09e667f3bcc908ull;
    for (int64_t s = 0; s < vol; s++)
        if (!ref_site_parity(s, dims))
            for (int i = 0; i < 6; i++) b[6 * s + i] = wref_rng_gaussian(&st);
    CHECK_OK(tq_ks_op_create(lat, fat, lng, TQ_DOUBLE, &op));
    tq_field_params ep = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_EVEN, (tq_recon)0, 0};
    tq_field_params fp = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    for (int i = 0; i < NM; i++) CHECK_OK(tq_field_create(lat, &ep, &x[i]));
    CHECK_OK(tq_field_create(lat, &ep, &be));
    CHECK_OK(tq_field_create(lat, &fp, &bf));
    CHECK_OK(tq_field_create(lat, &fp, &xfull));
    if (!op || !x[0] || !x[1] || !x[2] || !be || !bf || !xfull) goto out;
    CHECK_OK(tq_field_import(be, b));
    CHECK_OK(tq_field_import(bf, b));
    tq_solver_params p;
    tq_solver_params_default(&p);
    p.inverter = TQ_INV_CG;
    p.tol = 1e-10;
    p.maxiter = 2000;
    tq_krylov_out out[NM];
    CHECK_OK(tq_ks_solve_multishift(op, NM, masses, x, be, &p, out));
    const double b2 = ref_vnorm2(b, 6 * vol);
    for (int i = 0; i < NM; i++) {
        memset(y, 0, sizeof(double) * nv);
        CHECK_OK(tq_field_export(x[i], y));
        ref_ks_dslash(t, fat, lng, y, dims);
        ref_ks_dslash(dd, fat, lng, t, dims);
        for (size_t k = 0; k < nv; k++) dd[k] = 4 * masses[i] * masses[i] * y[k] - dd[k];
        const double res = sqrt(ref_vdiff2(dd, b, 6 * vol) / b2);
        CHECK(res < 1e-8, "mass %.2f: true residual %.3g of the multi-shift solution", masses[i], res);
        /* the single-mass solve of M x = b (b on even sites): x_e = 2m x_i */
        int its = 0;
        tq_krylov_out o1;
        CHECK_OK(tq_ks_solve(op, masses[i], xfull, bf, &p, &o1));
        its = o1.iterations;
        CHECK_OK(tq_field_export(xfull, xf));
        double d2 = 0, n2 = 0;
        for (int64_t s = 0; s < vol; s++)
            if (!ref_site_parity(s, dims))
                for (int k = 0; k < 6; k++) {
                    const double e = xf[6 * s + k] - 2 * masses[i] * y[6 * s + k];
                    d2 += e * e;
                    n2 += xf[6 * s + k] * xf[6 * s + k];
                }
        CHECK(sqrt(d2 / n2) < 1e-8, "mass %.2f: the multi-shift solution differs from the single-mass one by %.3g",
              masses[i], sqrt(d2 / n2));
        printf("  multi-shift CG, m %.2f: %d iterations (alone: %d), true residual %.2g, against the single solve %.2g\n",
               masses[i], out[i].iterations, its, res, sqrt(d2 / n2));
    }
    /* bad input */
    const double neg[2] = {0.1, -0.2};
    CHECK_ERR(tq_ks_solve_multishift(op, 0, masses, x, be, &p, out), TQ_ERR_INVALID_ARG);
    printf("  refused, no mass                 %s\n", tq_last_error());
    CHECK_ERR(tq_ks_solve_multishift(op, 2, neg, x, be, &p, out), TQ_ERR_INVALID_ARG);
    printf("  refused, negative mass           %s\n", tq_last_error());
    tq_field *wrong[1] = {xfull};
    CHECK_ERR(tq_ks_solve_multishift(op, 1, masses, wrong, be, &p, out), TQ_ERR_MISMATCH);
out:
    for (int i = 0; i < NM; i++) tq_field_destroy(x[i]);
    tq_field_destroy(be);
    tq_field_destroy(bf);
    tq_field_destroy(xfull);
    tq_ks_op_destroy(op);
    tq_lattice_destroy(lat);
    free(u);
    free(fat);
    free(lng);
    free(b);
    free(y);
    free(t);
    free(dd);
    free(xf);
}

/* D in with the links built by tq_ks_op_create_asqtad (hisq 0: par is u0) or
 * tq_ks_op_create_hisq (hisq 1: par is the Naik epsilon) on `block` from thin links u. */
static int apply_built(const int dims[4], const int block[4], const double *u, int hisq, double par, const double *in,
                       double *got)
{
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) return -1;
    tq_ks_op *op = NULL;
    tq_field *x = NULL, *y = NULL;
    tq_field_params fp = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    CHECK_OK(hisq ? tq_ks_op_create_hisq(lat, u, par, BC, TQ_DOUBLE, &op) : tq_ks_op_create_asqtad(lat, u, par, BC, TQ_DOUBLE, &op));
    CHECK_OK(tq_field_create(lat, &fp, &x));
    CHECK_OK(tq_field_create(lat, &fp, &y));
    const int ok = op && x && y;
    if (ok) {
        CHECK_OK(tq_field_import(x, in));
        CHECK_OK(tq_ks_dslash(op, y, x));
        CHECK_OK(tq_field_export(y, got));
    }
    if (!block) {   /* bad tadpole factors, Naik epsilons */
        tq_ks_op *bad = NULL;
        CHECK_ERR(tq_ks_op_create_asqtad(lat, u, 0.0, BC, TQ_DOUBLE, &bad), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_ks_op_create_hisq(lat, u, 1.5, BC, TQ_DOUBLE, &bad), TQ_ERR_INVALID_ARG);
        CHECK_ERR(tq_ks_op_create_asqtad(lat, NULL, 0.9, BC, TQ_DOUBLE, &bad), TQ_ERR_INVALID_ARG);
        CHECK(bad == NULL, "a refused operator was returned");
        if (!hisq) printf("  refused, u0 0                    %s\n", tq_last_error());
    }
    tq_field_destroy(x);
    tq_field_destroy(y);
    tq_ks_op_destroy(op);
    tq_lattice_destroy(lat);
    return ok ? 0 : -1;
}

/* The built links' operator against the reference's on thin links u (dims 8^4): asqtad with
 * u0 (hisq 0) or HISQ with Naik epsilon par (hisq 1). The library's U(3) projection is a
 * closed form, the reference's an iteration: HISQ agrees to rounding amplified by the fat7
 * links' conditioning (tol). */
static void compare_built(const char *what, const double *u, int hisq, double par, double tol)
{
    const int dims[4] = {8, 8, 8, 8}, split[4] = {4, 4, 4, 4};
    const int64_t vol = ref_volume(dims);
    const size_t nl = 72 * (size_t)vol, nv = 6 * (size_t)vol;
    double *fat = malloc(sizeof(double) * nl), *lng = malloc(sizeof(double) * nl), *in = malloc(sizeof(double) * nv),
           *want = malloc(sizeof(double) * nv), *one = malloc(sizeof(double) * nv), *many = malloc(sizeof(double) * nv);
    if (!fat || !lng || !in || !want || !one || !many) { CHECK(0, "out of memory"); goto out; }
    if (hisq) ref_hisq_fat_long(fat, lng, u, dims, par, BC);
    else ref_ks_fat_long(fat, lng, u, dims, par, BC);
    uint64_t st = 0xbb67ae8584caa73bull;
    for (size_t i = 0; i < nv; i++) in[i] = wref_rng_gaussian(&st);
    ref_ks_dslash(want, fat, lng, in, dims);
    if (apply_built(dims, NULL, u, hisq, par, in, one) || apply_built(dims, split, u, hisq, par, in, many)) goto out;
    double worst = 0, scale = 0;
    for (size_t i = 0; i < nv; i++) worst = fmax(worst, fabs(one[i] - want[i])), scale = fmax(scale, fabs(want[i]));
    CHECK(worst <= tol * scale, "%s: D with the built links differs from the reference's by %.3g (scale %.3g)", what,
          worst, scale);
    CHECK(!memcmp(one, many, sizeof(double) * nv), "%s: links built on 16 blocks: D not bitwise the same as on one", what);
    printf("  %s links built by tasks, %s (%s %.6f): max |D v - reference| / max %.2g; 16 blocks bitwise the same\n",
           hisq ? "HISQ" : "asqtad", what, hisq ? "eps" : "u0", par, worst / scale);
out:
    free(fat);
    free(lng);
    free(in);
    free(want);
    free(one);
    free(many);
}

/* Thin links 1 + r X projected onto U(3) (X Gaussian): rough, but with fat7 links as well
 * conditioned as a thermalised field's (Haar-random links make them nearly singular). */
static void rough_links(double *u, const int dims[4], double r, uint64_t seed)
{
    uint64_t st = seed;
    for (int64_t k = 0; k < 4 * ref_volume(dims); k++) {
        double M[18];
        for (int i = 0; i < 18; i++) M[i] = r * wref_rng_gaussian(&st) + ((i == 0 || i == 8 || i == 16) ? 1.0 : 0.0);
        sref_u3_project(u + 18 * k, M);
    }
}

static void check_build(void)
{
    const int dims[4] = {8, 8, 8, 8};
    double *u = malloc(sizeof(double) * 72 * (size_t)ref_volume(dims));
    if (!u) { CHECK(0, "out of memory"); return; }
    ref_gauge_random_su3(u, dims, 29);
    compare_built("random SU(3) links", u, 0, 0.9, 1e-13);
    rough_links(u, dims, 0.4, 43);
    compare_built("rough U(3) links", u, 1, 0.0, 1e-12);
    if (tq_test_quick()) {   /* the same builds again, another Naik coefficient or field */
        printf("  quick: the HISQ build with epsilon -0.2 and the MILC configuration's builds left out\n");
        free(u);
        return;
    }
    compare_built("rough U(3) links", u, 1, -0.2, 1e-12);
    free(u);
    char buf[4096];
    const char *path = tq_test_milc_file("lat.sample.l8888", buf, sizeof buf);
    if (!path) {
        printf("  note: lat.sample.l8888 not found (TQ_SHARED_DATA); the MILC configuration's part skipped\n");
        return;
    }
    tq_host_gauge g;
    memset(&g, 0, sizeof g);
    CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &g, NULL));
    if (g.links && g.dims[0] == 8 && g.dims[1] == 8 && g.dims[2] == 8 && g.dims[3] == 8) {
        tq_plaquette pl;
        CHECK_OK(tq_host_gauge_plaquette(&g, &pl));
        compare_built("MILC lat.sample.l8888", g.links, 0, pow(pl.total, 0.25), 1e-13);   /* u0 = <Re Tr U_p / 3>^(1/4) */
        compare_built("MILC lat.sample.l8888", g.links, 1, 0.0, 1e-12);
    }
    tq_host_gauge_free(&g);
}

/* The public API's test problem: an 8^4 asqtad operator (tq_staggered_create_asqtad, u0
 * 0.9) on random thin links, the reference's links to check against, a full source field
 * bf, a full solution field xf and NM more (xs, a multi-mass solve's), and host arrays of
 * one field each: b (the source), x, y, mx. */
enum { NM_API = 2 };
typedef struct api_fixture {
    int dims[4];
    size_t nv;
    double *u, *fat, *lng, *b, *x, *y, *mx;
    tq_lattice *lat;
    tq_staggered *op;
    tq_field *bf, *xf, *xs[NM_API];
} api_fixture;

static void fixture_close(api_fixture *f)
{
    for (int i = 0; i < NM_API; i++) tq_field_destroy(f->xs[i]);
    tq_field_destroy(f->xf);
    tq_field_destroy(f->bf);
    tq_staggered_destroy(f->op);
    tq_lattice_destroy(f->lat);
    free(f->u);
    free(f->fat);
    free(f->lng);
    free(f->b);
    free(f->x);
    free(f->y);
    free(f->mx);
}

/* 0 when everything was made (b zero: the caller fills it and imports it into bf). */
static int fixture_open(api_fixture *f, uint64_t seed)
{
    memset(f, 0, sizeof *f);
    for (int mu = 0; mu < 4; mu++) f->dims[mu] = 8;
    const size_t vol = (size_t)ref_volume(f->dims), nl = 72 * vol;
    f->nv = 6 * vol;
    f->u = malloc(sizeof(double) * nl), f->fat = malloc(sizeof(double) * nl), f->lng = malloc(sizeof(double) * nl);
    f->b = calloc(f->nv, sizeof(double)), f->x = malloc(sizeof(double) * f->nv), f->y = malloc(sizeof(double) * f->nv);
    f->mx = malloc(sizeof(double) * f->nv);
    f->lat = tq_test_lattice(f->dims, NULL);
    if (!f->u || !f->fat || !f->lng || !f->b || !f->x || !f->y || !f->mx || !f->lat) { CHECK(0, "out of memory"); return -1; }
    ref_gauge_random_su3(f->u, f->dims, seed);
    ref_ks_fat_long(f->fat, f->lng, f->u, f->dims, 0.9, BC);
    CHECK_OK(tq_staggered_create_asqtad(f->lat, f->u, 0.9, NULL, TQ_DOUBLE, &f->op));
    const tq_field_params fp = {TQ_FIELD_STAGGERED, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    CHECK_OK(tq_field_create(f->lat, &fp, &f->bf));
    CHECK_OK(tq_field_create(f->lat, &fp, &f->xf));
    for (int i = 0; i < NM_API; i++) CHECK_OK(tq_field_create(f->lat, &fp, &f->xs[i]));
    return f->op && f->bf && f->xf && f->xs[0] && f->xs[1] ? 0 : -1;
}

/* |b - M x| / |b| of the host solution x for mass m, with the reference's M. */
static double fixture_residual(api_fixture *f, const double *x, double m)
{
    ref_ks_mat(f->mx, f->fat, f->lng, x, m, f->dims);
    return sqrt(ref_vdiff2(f->mx, f->b, f->nv) / ref_vnorm2(f->b, f->nv));
}

static tq_solver_params cg_params(tq_precision sloppy)
{
    tq_solver_params p;
    tq_solver_params_default(&p);
    p.inverter = TQ_INV_CG;
    p.tol = 1e-10;
    p.maxiter = 4000;
    p.prec_sloppy = sloppy;
    return p;
}

/* The public API: the single-mass solve's and the multi-mass solve's full solutions solve
 * M x = b (the reference's M) and agree with each other; a source with odd sites is
 * refused by the multi-mass solve, a bad tadpole factor by the constructor. */
static void check_public_api(void)
{
    const double masses[NM_API] = {0.2, 0.1};
    api_fixture f;
    if (fixture_open(&f, 31)) goto out;
    f.b[0] = 1.0;   /* a point source at the origin (an even site), color 0 */
    CHECK_OK(tq_field_import(f.bf, f.b));
    const tq_solver_params p = cg_params((tq_precision)0);
    tq_solver_result r1, rm[NM_API];
    CHECK_OK(tq_staggered_solve(f.op, masses[1], f.xf, f.bf, &p, &r1));
    CHECK_OK(tq_staggered_solve_multishift(f.op, NM_API, masses, f.xs, f.bf, &p, rm));
    CHECK_OK(tq_field_export(f.xf, f.x));
    for (int i = 0; i < NM_API; i++) {
        CHECK_OK(tq_field_export(f.xs[i], f.y));
        const double res = fixture_residual(&f, f.y, masses[i]);
        CHECK(res < 1e-8 && fabs(res - rm[i].true_residual) < 1e-9, "public multi-mass solve, m %.2f: true residual %.3g "
              "(reported %.3g)", masses[i], res, rm[i].true_residual);
        printf("  tq_staggered_solve_multishift, m %.2f: %d iterations, true residual %.2g (reference M)\n", masses[i],
               rm[i].iterations, res);
    }
    const double d = sqrt(ref_vdiff2(f.y, f.x, f.nv) / ref_vnorm2(f.x, f.nv));
    CHECK(d < 1e-8, "public solves, m %.2f: the multi-mass solution differs from the single-mass one by %.3g", masses[1], d);
    CHECK(r1.true_residual < 1e-8 && r1.iterations > 0 && r1.flops > 0, "tq_staggered_solve: true residual %.3g, %d "
          "iterations, %.3g flops", r1.true_residual, r1.iterations, r1.flops);
    printf("  tq_staggered_solve, m %.2f: %d iterations, true residual %.2g; multi-mass solution within %.2g\n", masses[1],
           r1.iterations, r1.true_residual, d);
    /* bad input */
    f.b[6 * 1] = 1.0;   /* site 1 (x = 1) is odd */
    CHECK_OK(tq_field_import(f.bf, f.b));
    CHECK_ERR(tq_staggered_solve_multishift(f.op, NM_API, masses, f.xs, f.bf, &p, rm), TQ_ERR_INVALID_ARG);
    printf("  refused, odd source               %s\n", tq_last_error());
    tq_staggered *bad = NULL;
    CHECK_ERR(tq_staggered_create_asqtad(f.lat, f.u, -1.0, NULL, TQ_DOUBLE, &bad), TQ_ERR_INVALID_ARG);
    CHECK(bad == NULL, "a refused operator was returned");
out:
    fixture_close(&f);
}

/* Mixed precision: CG in single and in half with reliable updates on the double operator,
 * and the multi-shift solve in single refined per mass (paper 002), each to the double
 * solve's true residual (the reference's M) and solution. */
static void check_mixed(void)
{
    const double masses[NM_API] = {0.1, 0.3};
    api_fixture f;
    if (fixture_open(&f, 37)) goto out;
    uint64_t st = 0x3c6ef372fe94f82bull;
    for (int64_t s = 0; s < ref_volume(f.dims); s++)   /* a source on even sites (the multi-mass solve's) */
        if (!ref_site_parity(s, f.dims))
            for (int i = 0; i < 6; i++) f.b[6 * s + i] = wref_rng_gaussian(&st);
    CHECK_OK(tq_field_import(f.bf, f.b));
    tq_solver_result r0, r;
    tq_solver_params p = cg_params((tq_precision)0);
    CHECK_OK(tq_staggered_solve(f.op, masses[0], f.xf, f.bf, &p, &r0));
    CHECK_OK(tq_field_export(f.xf, f.x));   /* the double solve's solution */
    for (int k = 0; k < 2; k++) {
        p = cg_params(k ? TQ_HALF : TQ_SINGLE);
        CHECK_OK(tq_staggered_solve(f.op, masses[0], f.xf, f.bf, &p, &r));
        CHECK_OK(tq_field_export(f.xf, f.y));
        const double res = fixture_residual(&f, f.y, masses[0]), d = sqrt(ref_vdiff2(f.y, f.x, f.nv) / ref_vnorm2(f.x, f.nv));
        CHECK(res < 1e-9 && d < 1e-8, "CG with %s sloppy: true residual %.3g, %.3g from the double solve",
              tq_precision_name(p.prec_sloppy), res, d);
        printf("  CG, %s sloppy with reliable updates: %d iterations (double alone %d), true residual %.2g, %.2g from the "
               "double solve\n", tq_precision_name(p.prec_sloppy), r.iterations, r0.iterations, res, d);
    }
    p = cg_params(TQ_SINGLE);
    tq_solver_result rm[NM_API];
    CHECK_OK(tq_staggered_solve_multishift(f.op, NM_API, masses, f.xs, f.bf, &p, rm));
    for (int i = 0; i < NM_API; i++) {
        CHECK_OK(tq_field_export(f.xs[i], f.y));
        const double res = fixture_residual(&f, f.y, masses[i]);
        CHECK(res < 1e-9, "multi-shift in single refined, m %.2f: true residual %.3g", masses[i], res);
        if (i == 0) {
            const double d = sqrt(ref_vdiff2(f.y, f.x, f.nv) / ref_vnorm2(f.x, f.nv));
            CHECK(d < 1e-8, "multi-shift in single refined, m %.2f: %.3g from the double solve", masses[i], d);
        }
        printf("  multi-shift CG in single, refined, m %.2f: %d iterations in all, true residual %.2g\n", masses[i],
               rm[i].iterations, res);
    }
out:
    fixture_close(&f);
}

int main(void)
{
#ifdef TQ_TEST_CUDA
    const int init = tq_test_init_gpus(TEST_NAME, 2);
    if (init) return init < 0 ? 1 : init;
    starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
    cuda_tasks_run();
#else
    if (tq_test_init_cpus(2)) return 1;
#endif
    const int d[4] = {4, 4, 4, 8};
    const int blocks[2][4] = {{4, 4, 4, 8}, {4, 4, 4, 4}};
    check_operator(d, blocks, 2);
    const int d2[4] = {8, 8, 8, 8};
    const int blocks2[3][4] = {{8, 8, 8, 8}, {4, 8, 4, 8}, {4, 4, 4, 4}};
    check_operator(d2, blocks2, 3);
    check_ran_on_gpu("the operator");
#ifdef TQ_TEST_CUDA
    /* with two GPUs the split decompositions' faces between them go GPU to GPU (peer
     * faces), and those results were bitwise one block's above */
    if (starpu_cuda_worker_get_count() >= 2) {
        CHECK(peer_ops > 0, "%u GPUs: no staggered operator used peer faces", starpu_cuda_worker_get_count());
        printf("  %d operators with peer faces between %u GPUs\n", peer_ops, starpu_cuda_worker_get_count());
    }
#endif
    check_build();
    check_ran_on_gpu("the link build and its operator");
    check_solve();
    check_multishift();
    check_public_api();
    check_mixed();
    check_ran_on_gpu("the solves");
    printf("errors:\n");
    check_errors();
    tq_finalize();
    return tq_test_finish(TEST_NAME);
}
