/* The Wilson-clover operator against the plain-loop reference (tests/wilson_reference.h):
 * A and A^-1 applied by the clover codelets, M and M^dag in every precision and gauge
 * compression, the symmetric and asymmetric even-odd operators and their daggers, M_pc^dag
 * M_pc, the even-odd source preparation and solution reconstruction; identities that hold
 * whatever the implementation: gamma5-hermiticity, <chi, M_pc psi> = <M_pc^dag chi, psi>,
 * gauge covariance, the clover term vanishing on unit links (clover M = Wilson M), and
 * decomposition invariance; and the real configuration lat.sample.l8888.
 * The reference A^-1 is a dense 12x12 solve per site (independent of the library's 6x6
 * chiral blocks). Built twice: test_clover on CPU workers, test_clover_cuda on CUDA workers
 * (skips where there are none). */
#include "taskqcd.h"
#include "tq_test.h"
#include "../reference/wilson_reference.h"
#include "dirac_test_util.h"
#include "core/field_internal.h"   /* tq_internal_field_convert */
#include "dirac/dirac_internal.h"  /* tq_clover_build_prec */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_clover_cuda"
#define WHERE TQ_WHERE_CUDA
#else
#define TEST_NAME "test_clover"
#define WHERE TQ_WHERE_CPU
#endif

#define KAPPA 0.124
#define CSW 1.7

static const double BC[4] = {1, 1, 1, -1};

static tq_dirac_params clover_params(int asymmetric)
{
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_CLOVER;
    dp.kappa = KAPPA;
    dp.csw = CSW;
    dp.matpc = asymmetric ? TQ_MATPC_ASYMMETRIC : TQ_MATPC_SYMMETRIC;
    return dp;
}

/* Clover codelets add the stored clover field's rounding: in half, the 72 reals of a site
 * share one int16 scale. */
static double clover_tolerance(tq_precision p, tq_recon r)
{
    return p == TQ_DOUBLE ? fmax(tolerance(p, r), 1e-13) : p == TQ_SINGLE ? 4 * tolerance(p, r) : 3e-3;
}

/* ---- tests ----------------------------------------------------------------------------- */

/* A, A^-1 and M (M^dag) in every precision and compression against the reference. */
static void test_reference(const int dims[4], const int *block, const char *bname,
                           const tq_host_gauge *hg, const double *psi)
{
    const int64_t n = 24 * ref_volume(dims);
    double *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out), *tmp = malloc(n * sizeof *tmp);
    tq_dirac_params dp = clover_params(0);
    for (int ip = 0; ip < 3; ip++)
        for (int ir = 0; ir < 3; ir++) {
            setup S;
            if (setup_make_op(&S, dims, block, hg, precs[ip], recons[ir], KAPPA, &dp) != 0) { setup_free(&S); continue; }
            const double tol = clover_tolerance(precs[ip], recons[ir]);
            tq_field *fi = spinor(&S, precs[ip], TQ_FULL, psi), *fo = spinor(&S, precs[ip], TQ_FULL, NULL);
            if (fi && fo) {
                for (int dagger = 0; dagger < 2; dagger++) {
                    ref_clover_mat(ref, hg->links, psi, dims, BC, KAPPA, CSW, dagger);
                    CHECK_OK(tq_dirac_mat(S.dirac, fo, fi, dagger));
                    CHECK_OK(tq_field_export(fo, out));
                    double e = rel_err(out, ref, dims, 2);
                    CHECK(e <= tol, "clover M (%s, recon %d, blocks %s, dagger %d): error %.3g (tol %.1g)",
                          tq_precision_name(precs[ip]), (int)recons[ir], bname, dagger, e, tol);
                }
                /* QUDA's clover dslash, A^-1 D in one fused kernel (interior and exterior) */
                for (int parity = 0; parity < 2; parity++)
                    for (int dagger = 0; dagger < 2; dagger++) {
                        ref_wilson_dslash(tmp, hg->links, psi, dims, BC, dagger, parity);
                        ref_clover_solve(ref, hg->links, tmp, dims, KAPPA, CSW, parity);
                        CHECK_OK(tq_dirac_dslash(S.dirac, fo, fi, (tq_subset)parity, dagger));
                        CHECK_OK(tq_field_export(fo, out));
                        double e = rel_err(out, ref, dims, parity);
                        CHECK(e <= tol, "A^-1 D (%s, recon %d, blocks %s, parity %d, dagger %d): error %.3g (tol %.1g)",
                              tq_precision_name(precs[ip]), (int)recons[ir], bname, parity, dagger, e, tol);
                    }
                if (ir == 0)
                    for (int parity = 0; parity < 2; parity++) {
                        ref_clover_apply(ref, hg->links, psi, dims, KAPPA, CSW, parity);
                        CHECK_OK(tq_blas_zero(fo));
                        CHECK_OK(tq_dirac_clover(S.dirac, fo, fi, (tq_subset)parity, 0));
                        CHECK_OK(tq_field_export(fo, out));
                        double e = rel_err(out, ref, dims, parity);
                        CHECK(e <= tol, "A (%s, parity %d): error %.3g", tq_precision_name(precs[ip]), parity, e);
                        ref_clover_solve(ref, hg->links, psi, dims, KAPPA, CSW, parity);
                        CHECK_OK(tq_dirac_clover(S.dirac, fo, fi, (tq_subset)parity, 1));
                        CHECK_OK(tq_field_export(fo, out));
                        e = rel_err(out, ref, dims, parity);
                        CHECK(e <= tol, "A^-1 (%s, parity %d): error %.3g", tq_precision_name(precs[ip]), parity, e);
                        /* in place: A (A^-1 psi) = psi */
                        CHECK_OK(tq_dirac_clover(S.dirac, fo, fo, (tq_subset)parity, 0));
                        CHECK_OK(tq_field_export(fo, tmp));
                        e = rel_err(tmp, psi, dims, parity);
                        CHECK(e <= 2 * tol, "A A^-1 psi != psi (%s, parity %d): %.3g", tq_precision_name(precs[ip]), parity, e);
                    }
            }
            tq_field_destroy(fi);
            tq_field_destroy(fo);
            setup_free(&S);
        }
    free(ref); free(out); free(tmp);
}

/* M_pc (both forms, both daggers, both parities), M_pc^dag M_pc, and the even-odd
 * source/solution pair, in double (and M_pc in single and half) against the reference. */
static void test_evenodd(const int dims[4], const int *block, const tq_host_gauge *hg, const double *psi)
{
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    double *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out), *tmp = malloc(n * sizeof *tmp);
    for (int asym = 0; asym < 2; asym++) {
        tq_dirac_params dp = clover_params(asym);
        const char *form = asym ? "asymmetric" : "symmetric";
        for (int ip = 0; ip < 3; ip++) {
            setup S;
            if (setup_make_op(&S, dims, block, hg, precs[ip], TQ_RECON_12, KAPPA, &dp) != 0) { setup_free(&S); continue; }
            const double tol = clover_tolerance(precs[ip], TQ_RECON_12);
            for (int parity = 0; parity < 2; parity++) {
                tq_field *pi = spinor(&S, precs[ip], (tq_subset)parity, psi);
                tq_field *po = spinor(&S, precs[ip], (tq_subset)parity, NULL);
                for (int dagger = 0; dagger < 2 && pi && po; dagger++) {
                    ref_clover_matpc(ref, hg->links, psi, dims, BC, KAPPA, CSW, parity, dagger, asym);
                    CHECK_OK(tq_dirac_matpc(S.dirac, po, pi, (tq_subset)parity, dagger));
                    memset(out, 0, n * sizeof *out);
                    CHECK_OK(tq_field_export(po, out));
                    double e = rel_err(out, ref, dims, parity);
                    CHECK(e <= tol, "clover M_pc %s (%s) parity %d dagger %d: error %.3g", form,
                          tq_precision_name(precs[ip]), parity, dagger, e);
                }
                if (precs[ip] == TQ_DOUBLE && pi && po) {
                    /* M_pc^dag M_pc */
                    ref_clover_matpc(tmp, hg->links, psi, dims, BC, KAPPA, CSW, parity, 0, asym);
                    ref_clover_matpc(ref, hg->links, tmp, dims, BC, KAPPA, CSW, parity, 1, asym);
                    CHECK_OK(tq_dirac_matpc_dag_matpc(S.dirac, po, pi, (tq_subset)parity));
                    CHECK_OK(tq_field_export(po, out));
                    double e = rel_err(out, ref, dims, parity);
                    CHECK(e <= 1e-13, "clover M_pc^dag M_pc %s parity %d: error %.3g", form, parity, e);
                    /* <chi, M_pc psi> = <M_pc^dag chi, psi> */
                    double *chi = malloc(n * sizeof *chi);
                    ref_spinor_random(chi, vol, 77);
                    ref_zero_parity(chi, dims, 1 - parity);
                    tq_field *ci = spinor(&S, TQ_DOUBLE, (tq_subset)parity, chi);
                    tq_field *co = spinor(&S, TQ_DOUBLE, (tq_subset)parity, NULL);
                    tq_complex l, r;
                    CHECK_OK(tq_dirac_matpc(S.dirac, po, pi, (tq_subset)parity, 0));
                    CHECK_OK(tq_blas_cdot(ci, po, &l));
                    CHECK_OK(tq_dirac_matpc(S.dirac, co, ci, (tq_subset)parity, 1));
                    CHECK_OK(tq_blas_cdot(co, pi, &r));
                    double scale = fabs(l.re) + fabs(l.im);
                    CHECK(fabs(l.re - r.re) <= 1e-13 * scale && fabs(l.im - r.im) <= 1e-13 * scale,
                          "%s: <chi, M_pc psi> = %.15g%+.15gi, <M_pc^dag chi, psi> = %.15g%+.15gi", form, l.re, l.im, r.re, r.im);
                    tq_field_destroy(ci);
                    tq_field_destroy(co);
                    free(chi);
                    /* even-odd pair: b = M x; then M_pc x_p = prepare(b) and reconstruct(x_p, b) = x */
                    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, psi), *b = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
                    tq_field *bpc = spinor(&S, TQ_DOUBLE, (tq_subset)parity, NULL);
                    tq_field *xr = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
                    CHECK_OK(tq_dirac_mat(S.dirac, b, x, 0));
                    CHECK_OK(tq_dirac_prepare(S.dirac, bpc, b, (tq_subset)parity));
                    CHECK_OK(tq_dirac_matpc(S.dirac, po, pi, (tq_subset)parity, 0));
                    double *h1 = malloc(n * sizeof *h1);
                    memset(h1, 0, n * sizeof *h1);
                    memset(out, 0, n * sizeof *out);
                    CHECK_OK(tq_field_export(po, out));
                    CHECK_OK(tq_field_export(bpc, h1));
                    e = rel_err(h1, out, dims, parity);
                    CHECK(e <= 1e-13, "%s: prepare(M x) != M_pc x_p (parity %d): %.3g", form, parity, e);
                    CHECK_OK(tq_dirac_reconstruct(S.dirac, xr, pi, b, (tq_subset)parity));
                    CHECK_OK(tq_field_export(xr, h1));
                    e = rel_err(h1, psi, dims, 2);
                    CHECK(e <= 1e-13, "%s: reconstruct(x_p, M x) != x (parity %d): %.3g", form, parity, e);
                    free(h1);
                    tq_field_destroy(x); tq_field_destroy(b); tq_field_destroy(bpc); tq_field_destroy(xr);
                }
                tq_field_destroy(pi);
                tq_field_destroy(po);
            }
            setup_free(&S);
        }
    }
    free(ref); free(out); free(tmp);
}

/* Library clover M of host psi into host out (double, full fields). */
static void lib_mat(const setup *S, const double *psi, int dagger, double *out)
{
    tq_field *fi = spinor(S, TQ_DOUBLE, TQ_FULL, psi), *fo = spinor(S, TQ_DOUBLE, TQ_FULL, NULL);
    if (fi && fo) {
        CHECK_OK(tq_dirac_mat(S->dirac, fo, fi, dagger));
        CHECK_OK(tq_field_export(fo, out));
    }
    tq_field_destroy(fi);
    tq_field_destroy(fo);
}

/* gamma5 M gamma5 = M^dag; M[U^G] (G psi) = G M[U] psi; clover M = Wilson M on unit links;
 * the same bits on another block decomposition. */
static void test_identities(const int dims[4], const int *block, const tq_host_gauge *hg,
                            const double *psi, const char *what)
{
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *g = malloc(n * sizeof *g);
    double *G = malloc(18 * vol * sizeof *G);
    tq_dirac_params dp = clover_params(0);
    setup S;
    if (setup_make_op(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_18, KAPPA, &dp) == 0) {
        ref_gamma_mul_field(4, psi, g, vol);
        lib_mat(&S, g, 0, a);
        ref_gamma_mul_field(4, a, g, vol);
        lib_mat(&S, psi, 1, b);
        double e = rel_err(g, b, dims, 2);
        CHECK(e <= 1e-14, "%s: gamma5 M gamma5 != M^dag: %.3g", what, e);

        /* gauge covariance */
        tq_host_gauge ht;
        CHECK_OK(tq_host_gauge_alloc(&ht, dims));
        memcpy(ht.links, hg->links, 72 * vol * sizeof(double));
        CHECK_OK(tq_host_gauge_transform_random(&ht, 4243, G));
        setup T;
        if (setup_make_op(&T, dims, block, &ht, TQ_DOUBLE, TQ_RECON_18, KAPPA, &dp) == 0) {
            lib_mat(&S, psi, 0, a);
            ref_gauge_transform_spinor(g, a, G, vol);
            ref_gauge_transform_spinor(a, psi, G, vol);
            lib_mat(&T, a, 0, b);
            e = rel_err(b, g, dims, 2);
            CHECK(e <= 1e-13, "%s: clover gauge covariance: %.3g", what, e);
        }
        setup_free(&T);
        tq_host_gauge_free(&ht);

        /* one block: the same bits (clover tasks are site-local; the hopping term is
         * decomposition-invariant in double) */
        setup W;
        const int whole[4] = {dims[0], dims[1], dims[2], dims[3]};
        if (setup_make_op(&W, dims, whole, hg, TQ_DOUBLE, TQ_RECON_18, KAPPA, &dp) == 0) {
            lib_mat(&S, psi, 0, a);
            lib_mat(&W, psi, 0, b);
            CHECK(memcmp(a, b, n * sizeof *a) == 0, "%s: clover M differs between block decompositions", what);
        }
        setup_free(&W);
    }
    setup_free(&S);
    free(a); free(b); free(g); free(G);
}

static void test_unit_links(const int dims[4], const int *block, const double *psi)
{
    const int64_t n = 24 * ref_volume(dims);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    tq_host_gauge hu;
    CHECK_OK(tq_host_gauge_alloc(&hu, dims));
    CHECK_OK(tq_host_gauge_unit(&hu));
    tq_dirac_params dp = clover_params(0);
    setup C, W;
    if (setup_make_op(&C, dims, block, &hu, TQ_DOUBLE, TQ_RECON_18, KAPPA, &dp) == 0 &&
        setup_make(&W, dims, block, &hu, TQ_DOUBLE, TQ_RECON_18, KAPPA) == 0) {
        lib_mat(&C, psi, 0, a);
        lib_mat(&W, psi, 0, b);
        double e = rel_err(a, b, dims, 2);
        CHECK(e <= 1e-15, "unit links: clover M != Wilson M: %.3g", e);
        setup_free(&W);
    }
    setup_free(&C);
    tq_host_gauge_free(&hu);
    free(a); free(b);
}

/* A constant abelian field in the (0, 1) plane: U_0(x) = diag(e^{i phi x_1}, e^{-i phi x_1}, 1)
 * with phi = pi/2, other links 1. Every (0, 1) plaquette is diag(e^{-+i phi}, 1), so i F_01 =
 * diag(+-1, 0) and, as sigma_01 has eigenvalues +-1 in each chiral block, A has the
 * eigenvalues 1 +- kappa c_sw: singular when c_sw = 1 / kappa. */
/* A sloppy operator's clover terms: the double ones converted by tasks
 * (tq_internal_field_convert) against the terms built in single and half from the links:
 * single bitwise (both round the same double values); half to its quantum (the build
 * quantizes values first rounded to float, the conversion the double values). */
static void test_sloppy_convert(const int dims[4], const int *block, const tq_host_gauge *hg)
{
    setup S;
    if (setup_make(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_12, KAPPA) != 0) { setup_free(&S); return; }
    const int64_t n = ref_volume(dims) * 72;
    double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b), *ref = malloc((size_t)n * sizeof *ref);
    tq_field *A = NULL, *Ai = NULL;
    CHECK_OK(tq_clover_build(S.gauge, KAPPA, CSW, &A, &Ai));
    for (int p = 1; p < 3 && A && Ai && a && b && ref; p++) {
        const tq_precision prec = p == 1 ? TQ_SINGLE : TQ_HALF;
        tq_field *B = NULL, *Bi = NULL, *C = NULL;
        CHECK_OK(tq_clover_build_prec(S.gauge, prec, KAPPA, CSW, &B, &Bi));
        tq_field_params cp = {TQ_FIELD_CLOVER, prec, TQ_FULL, (tq_recon)0, 0};
        CHECK_OK(tq_field_create(S.lat, &cp, &C));
        for (int inv = 0; inv < 2 && B && Bi && C; inv++) {
            CHECK_OK(tq_internal_field_convert(C, inv ? Ai : A));
            CHECK_OK(tq_field_export(C, a));
            CHECK_OK(tq_field_export(inv ? Bi : B, b));
            CHECK_OK(tq_field_export(inv ? Ai : A, ref));
            double dmax = 0, vmax = 0;
            for (int64_t k = 0; k < n; k++) {
                dmax = fmax(dmax, fabs(a[k] - b[k]));
                vmax = fmax(vmax, fabs(ref[k]));
            }
            if (prec == TQ_SINGLE)
                CHECK(dmax == 0, "clover%s converted to single: %.3g from the single build (bitwise expected)", inv ? " inverse" : "", dmax);
            else
                CHECK(dmax <= 1.01 * vmax / 32767, "clover%s converted to half: %.3g from the half build (quantum %.3g)",
                      inv ? " inverse" : "", dmax, vmax / 32767);
        }
        tq_field_destroy(C);
        tq_field_destroy(B);
        tq_field_destroy(Bi);
    }
    tq_field_destroy(A);
    tq_field_destroy(Ai);
    free(a); free(b); free(ref);
    setup_free(&S);
}

static void test_singular_clover(const int dims[4])
{
    tq_host_gauge ha;
    CHECK_OK(tq_host_gauge_alloc(&ha, dims));
    CHECK_OK(tq_host_gauge_unit(&ha));
    const double phi = acos(-1.0) / 2;
    for (int64_t s = 0; s < ref_volume(dims); s++) {
        const int x1 = (int)((s / dims[0]) % dims[1]);
        double *u = ha.links + s * 72;   /* direction 0 */
        u[0] = cos(phi * x1); u[1] = sin(phi * x1);
        u[8] = cos(phi * x1); u[9] = -sin(phi * x1);
    }
    setup S;
    if (setup_make(&S, dims, NULL, &ha, TQ_DOUBLE, TQ_RECON_18, KAPPA) == 0) {
        tq_dirac_params dp = clover_params(0);
        tq_dirac *d = NULL;
        dp.csw = 1.0 / KAPPA;
        CHECK_ERR(tq_dirac_create(S.gauge, &dp, &d), TQ_ERR_INVALID_ARG);
        CHECK(d == NULL, "no operator left behind by a singular clover term");
        CHECK(strstr(tq_last_error(), "singular at site") != NULL, "error names the singular site: %s", tq_last_error());
        dp.csw = 0.5 / KAPPA;   /* eigenvalues 1/2 and 3/2: fine */
        CHECK_OK(tq_dirac_create(S.gauge, &dp, &d));
        tq_dirac_destroy(d);
    }
    setup_free(&S);
    tq_host_gauge_free(&ha);
}

static void test_errors(const int dims[4], const tq_host_gauge *hg)
{
    setup S;
    if (setup_make(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_18, 0.1) != 0) { setup_free(&S); return; }
    tq_dirac_params dp = clover_params(0);
    tq_dirac *d = NULL;
    dp.csw = NAN;
    CHECK_ERR(tq_dirac_create(S.gauge, &dp, &d), TQ_ERR_INVALID_ARG);
    dp.csw = CSW;
    dp.matpc = (tq_matpc)5;
    CHECK_ERR(tq_dirac_create(S.gauge, &dp, &d), TQ_ERR_INVALID_ARG);
    CHECK(d == NULL, "no operator left behind after errors");
    tq_field *even = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL), *full = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
    /* the Wilson operator has no clover term */
    CHECK_ERR(tq_dirac_clover(S.dirac, even, even, TQ_EVEN, 0), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_dirac_prepare(S.dirac, even, even, TQ_EVEN), TQ_ERR_INVALID_ARG);   /* b not full */
    CHECK_ERR(tq_dirac_reconstruct(S.dirac, even, even, full, TQ_EVEN), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_dirac_reconstruct(S.dirac, full, even, full, TQ_EVEN), TQ_ERR_INVALID_ARG); /* x is b */
    CHECK_ERR(tq_dirac_dslash(NULL, even, full, TQ_EVEN, 0), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_dirac_dslash(S.dirac, even, even, TQ_EVEN, 0), TQ_ERR_MISMATCH);   /* in lacks parity odd */
    CHECK_ERR(tq_dirac_dslash(S.dirac, full, full, TQ_FULL, 0), TQ_ERR_INVALID_ARG);   /* parity must be one */
    tq_field_destroy(even);
    tq_field_destroy(full);
    setup_free(&S);
}

int main(void)
{
    int start = dirac_test_start(TEST_NAME, WHERE);
    if (start) return start;
    const int dims[4] = {4, 4, 4, 8};
    const int64_t vol = ref_volume(dims);
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, dims));
    /* a weak field (unit + noise, re-unitarised): a random SU(3) field makes F_{mu nu} O(1)
     * and A far from 1, which is not where clover operators are used */
    CHECK_OK(tq_host_gauge_weak(&hg, 4321, 0.3));
    double *psi = malloc(24 * vol * sizeof *psi);
    ref_spinor_random(psi, vol, 6);

    static const int split_some[4] = {2, 4, 2, 4}, whole[4] = {4, 4, 4, 8};
    test_reference(dims, whole, "one", &hg, psi);
    test_reference(dims, split_some, "2x4x2x4", &hg, psi);
    test_evenodd(dims, split_some, &hg, psi);
    test_identities(dims, split_some, &hg, psi, "weak field");
    test_unit_links(dims, split_some, psi);
    test_sloppy_convert(dims, split_some, &hg);
    test_errors(dims, &hg);
    test_singular_clover(dims);
    tq_host_gauge_free(&hg);
    free(psi);

    char buf[1024];
    const char *path = tq_test_milc_file("lat.sample.l8888", buf, sizeof buf);
    if (!path) {
        printf("lat.sample.l8888 not found: real-configuration part skipped\n");
    } else {
        tq_host_gauge h8;
        CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &h8, NULL));
        CHECK_OK(tq_host_gauge_reunitarize(&h8));
        const int d8[4] = {8, 8, 8, 8};
        double *p8 = malloc(24 * 4096 * sizeof *p8);
        ref_spinor_random(p8, 4096, 12);
        static const int b8[4] = {4, 8, 4, 4};
        test_reference(d8, b8, "4x8x4x4", &h8, p8);
        test_evenodd(d8, b8, &h8, p8);
        test_identities(d8, b8, &h8, p8, "lat.sample.l8888");
        tq_host_gauge_free(&h8);
        free(p8);
    }
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    CHECK_OK(tq_finalize());
    return tq_test_finish(TEST_NAME);
}
