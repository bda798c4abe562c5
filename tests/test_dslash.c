/* The Wilson hopping term and the operators built on it against the plain-loop reference
 * (tests/wilson_reference.h), for every precision and gauge compression and several block
 * decompositions, plus identities that hold whatever the implementation: gamma5-
 * hermiticity, <chi, D psi> = <D^dag chi, psi>, gauge covariance, the free field on plane
 * waves, decomposition invariance, and the real configuration lat.sample.l8888.
 * Built twice: test_dslash runs the codelets on CPU workers; test_dslash_cuda (TQ_TEST_CUDA)
 * on CUDA workers, and skips where there are none. */
#include "taskqcd.h"
#include "tq_test.h"
#include "../reference/wilson_reference.h"
#include "dirac_test_util.h"
#include "core/stencil.h"           /* tq_internal_force_bands, tq_internal_stencil_banded */
#include "dirac/dirac_internal.h"   /* tq_internal_force_faces */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_dslash_cuda"
#define WHERE TQ_WHERE_CUDA
#else
#define TEST_NAME "test_dslash"
#define WHERE TQ_WHERE_CPU
#endif

/* Library dslash (out parity p) of host spinor `in` into host array `out` (other parity 0). */
static void lib_dslash(const setup *S, tq_precision prec, const double *in, int parity, int dagger,
                       double *out)
{
    tq_field *fi = spinor(S, prec, TQ_FULL, in), *fo = spinor(S, prec, TQ_FULL, NULL);
    if (fi && fo) {
        CHECK_OK(tq_blas_zero(fo));
        CHECK_OK(tq_dslash(S->dirac, fo, fi, (tq_subset)parity, dagger));
        CHECK_OK(tq_field_export(fo, out));
    }
    tq_field_destroy(fi);
    tq_field_destroy(fo);
}

/* Every precision, compression, parity and dagger against the reference. */
static void test_reference(const int dims[4], const int *block, const char *bname,
                           const tq_host_gauge *hg, const double *psi)
{
    const int64_t n = 24 * ref_volume(dims);
    double *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out);
    double bc[4] = {1, 1, 1, -1};
    for (int ip = 0; ip < 3; ip++)
        for (int ir = 0; ir < 3; ir++) {
            setup S;
            if (setup_make(&S, dims, block, hg, precs[ip], recons[ir], 0.1) == 0) {
                double worst = 0.0;
                for (int parity = 0; parity < 2; parity++)
                    for (int dagger = 0; dagger < 2; dagger++) {
                        ref_wilson_dslash(ref, hg->links, psi, dims, bc, dagger, parity);
                        lib_dslash(&S, precs[ip], psi, parity, dagger, out);
                        double e = rel_err(out, ref, dims, 2);
                        worst = fmax(worst, e);
                        CHECK(e <= tolerance(precs[ip], recons[ir]),
                              "dslash %s recon %d blocks %s parity %d dagger %d: error %.3g (tol %.1g)",
                              tq_precision_name(precs[ip]), (int)recons[ir], bname, parity, dagger, e,
                              tolerance(precs[ip], recons[ir]));
                    }
                printf("  dslash vs reference  %-6s recon %2d  blocks %-10s  max rel. error %.3g\n",
                       tq_precision_name(precs[ip]), (int)recons[ir], bname, worst);
            }
            setup_free(&S);
        }
    free(ref);
    free(out);
}

/* M, M_pc and M_pc^dag M_pc (double) against the reference built from it. */
static void test_operators(const int dims[4], const int *block, const tq_host_gauge *hg,
                           const double *psi, double kappa)
{
    const int64_t n = 24 * ref_volume(dims);
    double *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out), *tmp = malloc(n * sizeof *tmp);
    double *tmp2 = malloc(n * sizeof *tmp2);
    double bc[4] = {1, 1, 1, -1};
    setup S;
    if (setup_make(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_18, kappa) == 0) {
        tq_field *fi = spinor(&S, TQ_DOUBLE, TQ_FULL, psi), *fo = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
        for (int dagger = 0; dagger < 2; dagger++) {
            ref_wilson_mat(ref, hg->links, psi, dims, bc, kappa, dagger);
            CHECK_OK(tq_dirac_mat(S.dirac, fo, fi, dagger));
            CHECK_OK(tq_field_export(fo, out));
            double e = rel_err(out, ref, dims, 2);
            CHECK(e <= 1e-14, "M (dagger %d) vs reference: error %.3g", dagger, e);
        }
        for (int parity = 0; parity < 2; parity++) {
            tq_field *pi = spinor(&S, TQ_DOUBLE, (tq_subset)parity, psi);
            tq_field *po = spinor(&S, TQ_DOUBLE, (tq_subset)parity, NULL);
            for (int dagger = 0; dagger < 2; dagger++) {
                /* M_pc = 1 - kappa^2 D_pq D_qp */
                ref_wilson_dslash(tmp, hg->links, psi, dims, bc, dagger, 1 - parity);
                ref_wilson_dslash(ref, hg->links, tmp, dims, bc, dagger, parity);
                for (int64_t k = 0; k < n; k++) ref[k] = psi[k] - kappa * kappa * ref[k];
                for (int64_t s = 0; s < n / 24; s++)
                    if (ref_site_parity(s, dims) != parity) memset(ref + 24 * s, 0, 24 * sizeof(double));
                memset(out, 0, n * sizeof *out);
                CHECK_OK(tq_dirac_matpc(S.dirac, po, pi, (tq_subset)parity, dagger));
                CHECK_OK(tq_field_export(po, out));
                double e = rel_err(out, ref, dims, parity);
                CHECK(e <= 1e-14, "M_pc parity %d dagger %d vs reference: error %.3g", parity, dagger, e);
            }
            /* M_pc^dag M_pc */
            ref_wilson_dslash(tmp, hg->links, psi, dims, bc, 0, 1 - parity);
            ref_wilson_dslash(tmp2, hg->links, tmp, dims, bc, 0, parity);
            for (int64_t k = 0; k < n; k++) tmp2[k] = psi[k] - kappa * kappa * tmp2[k];
            for (int64_t s = 0; s < n / 24; s++)
                if (ref_site_parity(s, dims) != parity) memset(tmp2 + 24 * s, 0, 24 * sizeof(double));
            ref_wilson_dslash(tmp, hg->links, tmp2, dims, bc, 1, 1 - parity);
            ref_wilson_dslash(ref, hg->links, tmp, dims, bc, 1, parity);
            for (int64_t k = 0; k < n; k++) ref[k] = tmp2[k] - kappa * kappa * ref[k];
            CHECK_OK(tq_dirac_matpc_dag_matpc(S.dirac, po, pi, (tq_subset)parity));
            CHECK_OK(tq_field_export(po, out));
            double e = rel_err(out, ref, dims, parity);
            CHECK(e <= 1e-14, "M_pc^dag M_pc parity %d vs reference: error %.3g", parity, e);
            /* and it is Hermitian positive: <psi, A psi> real and > 0 */
            tq_complex c;
            CHECK_OK(tq_blas_cdot(pi, po, &c));
            CHECK(c.re > 0 && fabs(c.im) <= 1e-12 * c.re, "<psi, M_pc^dag M_pc psi> = %g + %g i", c.re, c.im);
            tq_field_destroy(pi);
            tq_field_destroy(po);
        }
        tq_field_destroy(fi);
        tq_field_destroy(fo);
    }
    setup_free(&S);
    free(ref); free(out); free(tmp); free(tmp2);
}

/* Results on several block decompositions: the same bits in every precision (half too: its
 * faces hold single precision, tq_dslash_wilson_face_prec); within the tolerance on GPUs. */
static void test_decomposition(const int dims[4], const tq_host_gauge *hg, const double *psi)
{
    static const int blocks[4][4] = {{0, 0, 0, 0}, {4, 4, 4, 8}, {2, 2, 4, 4}, {2, 2, 2, 2}};
    const int64_t n = 24 * ref_volume(dims);
    for (int ip = 0; ip < 3; ip++) {
        double *first = malloc(n * sizeof *first), *out = malloc(n * sizeof *out);
        for (int b = 0; b < 4; b++) {
            setup S;
            if (setup_make(&S, dims, b ? blocks[b] : NULL, hg, precs[ip], TQ_RECON_12, 0.1) == 0) {
                tq_field *fi = spinor(&S, precs[ip], TQ_FULL, psi), *fo = spinor(&S, precs[ip], TQ_FULL, NULL);
                CHECK_OK(tq_dirac_mat(S.dirac, fo, fi, 0));
                CHECK_OK(tq_field_export(fo, b ? out : first));
                if (b) {
#ifndef TQ_TEST_CUDA
                    CHECK(memcmp(out, first, n * sizeof *out) == 0,
                          "M %s: blocks %dx%dx%dx%d differ from the default decomposition (error %.3g)",
                          tq_precision_name(precs[ip]), blocks[b][0], blocks[b][1], blocks[b][2], blocks[b][3],
                          rel_err(out, first, dims, 2));
#else
                    double e = rel_err(out, first, dims, 2);
                    CHECK(e <= tolerance(precs[ip], TQ_RECON_12), "M %s: blocks %dx%dx%dx%d vs default: %.3g",
                          tq_precision_name(precs[ip]), blocks[b][0], blocks[b][1], blocks[b][2], blocks[b][3], e);
#endif
                }
                tq_field_destroy(fi);
                tq_field_destroy(fo);
            }
            setup_free(&S);
        }
        free(first);
        free(out);
    }
}

/* M_pc's second hop in bands (core/stencil.h, TQ_STENCIL_BANDS: the deep sites and the rim)
 * against one interior task: the same bits, through faces, for every precision, dagger,
 * Wilson and clover, on blocks split in t only (a band is whole t planes) and in z and t
 * (the rim also has sites inside the t planes), each split extent 6 (the deep band two
 * planes), with the deep band as one task and as two (TQ_DEEP_EARLY=1). STEPS
 * applications in a row (each one's output the next one's input): on a GPU the chain runs
 * the bands, exteriors and the next application's packs on several streams, and a missing
 * wait between them would show as other bits. The bands must have been used. */
#ifdef TQ_TEST_CUDA
enum { BAND_STEPS = 8, BAND_XY = 16 };
#else
enum { BAND_STEPS = 2, BAND_XY = 4 };
#endif
static void test_bands(void)
{
    const int dims[4] = {BAND_XY, BAND_XY, 12, 12};
    static const int blocks[2][4] = {{BAND_XY, BAND_XY, 12, 6}, {BAND_XY, BAND_XY, 6, 6}};
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, dims));
    CHECK_OK(tq_host_gauge_random(&hg, 99));
    double *psi = malloc(n * sizeof *psi), *out[3];
    for (int v = 0; v < 3; v++) out[v] = calloc(n, sizeof(double));   /* odd sites stay 0 */
    ref_spinor_random(psi, vol, 17);
    double *poison = malloc(n * sizeof *poison);
    for (int64_t i = 0; i < n; i++) poison[i] = 7.0;
    tq_internal_force_faces(1);
    int cases = 0, same = 0;
    for (int bl = 0; bl < 2; bl++)
        for (int clover = 0; clover < 2; clover++)
            for (int ip = 0; ip < 3; ip++) {
                const tq_dirac_params dp = wilson_or_clover(clover, 0.12, 1.1);
                setup S;
                if (setup_make_op(&S, dims, blocks[bl], &hg, precs[ip], TQ_RECON_12, dp.kappa, &dp) != 0) {
                    setup_free(&S);
                    continue;
                }
                tq_field *fi = spinor(&S, precs[ip], TQ_EVEN, psi);
                for (int dagger = 0; dagger < 2; dagger++) {
                    long used = 0;
                    /* one interior; the bands (the deep one in one task here); the deep band
                     * in two tasks, its first t plane, then the rest */
                    for (int v = 0; v < 3; v++) {
                        const int bands = v > 0;
                        if (v == 2) setenv("TQ_DEEP_EARLY", "1", 1);
                        /* the outputs set to 7 everywhere first: a site left out keeps it */
                        tq_field *fo = spinor(&S, precs[ip], TQ_EVEN, poison), *f2 = spinor(&S, precs[ip], TQ_EVEN, poison);
                        tq_internal_force_bands(bands);
                        const long before = tq_internal_stencil_banded();
                        CHECK_OK(tq_dirac_matpc(S.dirac, fo, fi, TQ_EVEN, dagger));
                        for (int k = 1; k < BAND_STEPS; k++)
                            CHECK_OK(tq_dirac_matpc(S.dirac, k % 2 ? f2 : fo, k % 2 ? fo : f2, TQ_EVEN, dagger));
                        CHECK_OK(tq_field_export(BAND_STEPS % 2 ? fo : f2, out[v]));
                        if (bands) used += tq_internal_stencil_banded() - before;
                        unsetenv("TQ_DEEP_EARLY");
                        tq_field_destroy(fo);
                        tq_field_destroy(f2);
                    }
                    cases++;
                    const int eq = memcmp(out[0], out[1], n * sizeof(double)) == 0 &&
                                   memcmp(out[0], out[2], n * sizeof(double)) == 0;
                    same += eq;
                    CHECK(used > 0, "bands: blocks %dx%dx%dx%d: the interiors were not split", blocks[bl][0],
                          blocks[bl][1], blocks[bl][2], blocks[bl][3]);
                    CHECK(eq, "bands: %s %s dagger %d, blocks %dx%dx%dx%d: M_pc differs from one interior (error %.3g)",
                          clover ? "clover" : "Wilson", tq_precision_name(precs[ip]), dagger, blocks[bl][0],
                          blocks[bl][1], blocks[bl][2], blocks[bl][3],
                          fmax(rel_err(out[1], out[0], dims, 0), rel_err(out[2], out[0], dims, 0)));
                }
                tq_field_destroy(fi);
                setup_free(&S);
            }
    printf("  M_pc with the second hop's interior in bands (the deep one in one and in two tasks): %d of %d cases the "
           "same bits as one interior\n", same, cases);
    tq_internal_force_bands(-1);
    tq_internal_force_faces(-1);
    free(psi); free(poison); free(out[0]); free(out[1]); free(out[2]);
    tq_host_gauge_free(&hg);
}

/* gamma5 D gamma5 = D^dag and <chi, D psi> = <D^dag chi, psi>, through the library. */
static void test_hermiticity(const int dims[4], const int *block, const tq_host_gauge *hg,
                             const double *psi, const char *what)
{
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    double *chi = malloc(n * sizeof *chi), *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
    double *g = malloc(n * sizeof *g);
    ref_spinor_random(chi, vol, 99);
    setup S;
    if (setup_make(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_18, 0.1) == 0) {
        for (int parity = 0; parity < 2; parity++) {
            /* gamma5 D gamma5 psi vs D^dag psi */
            ref_gamma_mul_field(4, psi, g, vol);
            lib_dslash(&S, TQ_DOUBLE, g, parity, 0, a);
            ref_gamma_mul_field(4, a, g, vol);
            lib_dslash(&S, TQ_DOUBLE, psi, parity, 1, b);
            double e = rel_err(g, b, dims, parity);
            CHECK(e <= 1e-14, "%s: gamma5 D gamma5 != D^dag (parity %d): %.3g", what, parity, e);
            /* <chi_p, D_pq psi_q> = <D^dag_qp chi_p, psi_q> */
            lib_dslash(&S, TQ_DOUBLE, psi, parity, 0, a);
            lib_dslash(&S, TQ_DOUBLE, chi, 1 - parity, 1, b);
            for (int64_t s = 0; s < vol; s++)
                if (ref_site_parity(s, dims) != parity) memset(chi + 24 * s, 0, 24 * sizeof(double));
            double l_re = ref_cdot_re(chi, a, n), l_im = ref_cdot_im(chi, a, n);
            double r_re = ref_cdot_re(b, psi, n), r_im = ref_cdot_im(b, psi, n);
            double scale = sqrt(ref_vnorm2(chi, n) * ref_vnorm2(a, n));
            CHECK(fabs(l_re - r_re) <= 1e-13 * scale && fabs(l_im - r_im) <= 1e-13 * scale,
                  "%s: <chi, D psi> = %.15g %+.15gi, <D^dag chi, psi> = %.15g %+.15gi", what, l_re, l_im, r_re, r_im);
            ref_spinor_random(chi, vol, 99);
        }
    }
    setup_free(&S);
    free(chi); free(a); free(b); free(g);
}

/* D[U^G] (G psi) = G D[U] psi for a random gauge transformation G. */
static void test_covariance(const int dims[4], const int *block, const tq_host_gauge *hg,
                            const double *psi)
{
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    double *G = malloc(18 * vol * sizeof *G), *gpsi = malloc(n * sizeof *gpsi);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *ga = malloc(n * sizeof *ga);
    tq_host_gauge ht;
    CHECK_OK(tq_host_gauge_alloc(&ht, dims));
    memcpy(ht.links, hg->links, 72 * vol * sizeof(double));
    CHECK_OK(tq_host_gauge_transform_random(&ht, 4242, G));
    ref_gauge_transform_spinor(gpsi, psi, G, vol);
    setup S, T;
    if (setup_make(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_18, 0.1) == 0 &&
        setup_make(&T, dims, block, &ht, TQ_DOUBLE, TQ_RECON_18, 0.1) == 0) {
        for (int parity = 0; parity < 2; parity++) {
            lib_dslash(&S, TQ_DOUBLE, psi, parity, 0, a);
            ref_gauge_transform_spinor(ga, a, G, vol);
            lib_dslash(&T, TQ_DOUBLE, gpsi, parity, 0, b);
            double e = rel_err(b, ga, dims, parity);
            CHECK(e <= 1e-13, "gauge covariance (parity %d): %.3g", parity, e);
        }
        setup_free(&T);
    }
    setup_free(&S);
    tq_host_gauge_free(&ht);
    free(G); free(gpsi); free(a); free(b); free(ga);
}

/* Unit links, plane wave psi(x) = exp(i p.x) u: D psi = exp(i p.x) sum_mu (2 cos p_mu -
 * 2 i sin p_mu gamma_mu) u, with p_t shifted by pi / T for the antiperiodic time direction. */
static void test_free_field(const int dims[4], const int *block)
{
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    double *psi = malloc(n * sizeof *psi), *ref = malloc(n * sizeof *ref), *out = malloc(n * sizeof *out);
    tq_host_gauge hu;
    CHECK_OK(tq_host_gauge_alloc(&hu, dims));
    CHECK_OK(tq_host_gauge_unit(&hu));
    double u[24];
    ref_spinor_random(u, 1, 7);
    const int mom[2][4] = {{1, 0, 2, 1}, {0, 1, 1, 3}};
    setup S;
    if (setup_make(&S, dims, block, &hu, TQ_DOUBLE, TQ_RECON_12, 0.1) == 0) {
        for (int m = 0; m < 2; m++) {
            double p[4];
            for (int mu = 0; mu < 4; mu++) p[mu] = 2 * M_PI * mom[m][mu] / dims[mu] + (mu == 3 ? M_PI / dims[3] : 0.0);
            /* Dp u = sum_mu 2 cos p_mu u - 2 i sin p_mu gamma_mu u */
            double Du[24] = {0}, gu[24];
            for (int mu = 0; mu < 4; mu++) {
                ref_gamma_mul(mu, u, gu);
                for (int k = 0; k < 12; k++) {
                    Du[2 * k] += 2 * cos(p[mu]) * u[2 * k] + 2 * sin(p[mu]) * gu[2 * k + 1];
                    Du[2 * k + 1] += 2 * cos(p[mu]) * u[2 * k + 1] - 2 * sin(p[mu]) * gu[2 * k];
                }
            }
            for (int64_t s = 0; s < vol; s++) {
                int64_t r = s;
                int x[4];
                for (int mu = 0; mu < 4; mu++) { x[mu] = (int)(r % dims[mu]); r /= dims[mu]; }
                double ph = p[0] * x[0] + p[1] * x[1] + p[2] * x[2] + p[3] * x[3], c = cos(ph), sn = sin(ph);
                for (int k = 0; k < 12; k++) {
                    psi[24 * s + 2 * k] = c * u[2 * k] - sn * u[2 * k + 1];
                    psi[24 * s + 2 * k + 1] = c * u[2 * k + 1] + sn * u[2 * k];
                    ref[24 * s + 2 * k] = c * Du[2 * k] - sn * Du[2 * k + 1];
                    ref[24 * s + 2 * k + 1] = c * Du[2 * k + 1] + sn * Du[2 * k];
                }
            }
            for (int parity = 0; parity < 2; parity++) {
                lib_dslash(&S, TQ_DOUBLE, psi, parity, 0, out);
                double e = rel_err(out, ref, dims, parity);
                CHECK(e <= 1e-13, "free field, momentum %d, parity %d: error %.3g", m, parity, e);
            }
        }
    }
    setup_free(&S);
    tq_host_gauge_free(&hu);
    free(psi); free(ref); free(out);
}

static void test_errors(const int dims[4], const tq_host_gauge *hg)
{
    setup S;
    if (setup_make(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_18, 0.1) != 0) { setup_free(&S); return; }
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    tq_dirac *d = NULL;
    dp.kappa = -0.1;
    CHECK_ERR(tq_dirac_create(S.gauge, &dp, &d), TQ_ERR_INVALID_ARG);
    dp.kappa = 0.1;
    dp.bc[3] = 0.5;
    CHECK_ERR(tq_dirac_create(S.gauge, &dp, &d), TQ_ERR_INVALID_ARG);
    dp.bc[3] = 0.0;
    dp.type = (tq_dslash_type)7;
    CHECK_ERR(tq_dirac_create(S.gauge, &dp, &d), TQ_ERR_INVALID_ARG);
    CHECK(d == NULL, "no operator left behind after errors");
    tq_field *even = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL), *odd = spinor(&S, TQ_DOUBLE, TQ_ODD, NULL);
    tq_field *single = spinor(&S, TQ_SINGLE, TQ_ODD, NULL);
    CHECK_ERR(tq_dslash(S.dirac, even, even, TQ_EVEN, 0), TQ_ERR_MISMATCH);   /* in lacks odd sites */
    CHECK_ERR(tq_dslash(S.dirac, odd, even, TQ_EVEN, 0), TQ_ERR_MISMATCH);    /* out lacks even */
    CHECK_ERR(tq_dslash(S.dirac, even, single, TQ_EVEN, 0), TQ_ERR_MISMATCH); /* precision */
    CHECK_ERR(tq_dslash(S.dirac, even, odd, TQ_FULL, 0), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_dirac_mat(S.dirac, even, odd, 0), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_dirac_matpc(S.dirac, even, even, TQ_EVEN, 0), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_dslash(NULL, even, odd, TQ_EVEN, 0), TQ_ERR_INVALID_ARG);
    tq_field_destroy(even);
    tq_field_destroy(odd);
    tq_field_destroy(single);
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
    CHECK_OK(tq_host_gauge_random(&hg, 1234));
    double *psi = malloc(24 * vol * sizeof *psi);
    ref_spinor_random(psi, vol, 5);

    static const int split_all[4] = {2, 2, 2, 2}, split_some[4] = {2, 4, 2, 4}, whole[4] = {4, 4, 4, 8};
    test_reference(dims, whole, "one", &hg, psi);
    test_reference(dims, split_all, "2x2x2x2", &hg, psi);
    test_reference(dims, split_some, "2x4x2x4", &hg, psi);
    test_operators(dims, split_some, &hg, psi, 0.124);
    test_decomposition(dims, &hg, psi);
    test_hermiticity(dims, split_all, &hg, psi, "random field");
    test_covariance(dims, split_some, &hg, psi);
    test_free_field(dims, split_all);
    test_free_field(dims, whole);
    test_errors(dims, &hg);
    test_bands();
    tq_host_gauge_free(&hg);
    free(psi);

    /* the real configuration, when ../shared/data is there */
    char buf[1024];
    const char *path = tq_test_milc_file("lat.sample.l8888", buf, sizeof buf);
    if (!path) {
        printf("lat.sample.l8888 not found: real-configuration part skipped\n");
    } else {
        tq_host_gauge h8;
        CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &h8, NULL));
        /* the file holds single-precision links (unitary to ~1e-7): project them onto SU(3)
         * in double so that recon 12 and 8 rebuild the same matrices as the reference uses */
        CHECK_OK(tq_host_gauge_reunitarize(&h8));
        const int d8[4] = {8, 8, 8, 8};
        double *p8 = malloc(24 * 4096 * sizeof *p8);
        ref_spinor_random(p8, 4096, 11);
        static const int b8[4] = {4, 8, 4, 4};
        test_reference(d8, b8, "4x8x4x4", &h8, p8);
        test_hermiticity(d8, b8, &h8, p8, "lat.sample.l8888");
        test_covariance(d8, b8, &h8, p8);
        test_operators(d8, b8, &h8, p8, 0.12);
        tq_host_gauge_free(&h8);
        free(p8);
    }
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    CHECK_OK(tq_finalize());
    return tq_test_finish(TEST_NAME);
}
