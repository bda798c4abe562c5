/* The multigrid reference (reference/mg_reference.h), the yardstick of the library's
 * transfer and coarse-operator codelets to come (issue 28), checked against its
 * definitions and the independent Wilson-clover reference on a random gauge field:
 *   - the stencil form of M = A - kappa D applies as ref_clover_mat does;
 *   - block orthonormalisation: R P = 1 (P^dag P = 1), and P R keeps every null vector;
 *   - the Galerkin coarse operator formed from the stencil's matrices equals R M P applied
 *     through the fine operator, on two levels;
 *   - gamma_5-hermiticity on the coarse level (chirality kept apart: Gamma_5 D_c Gamma_5 =
 *     D_c^dag);
 *   - linearly dependent null vectors are refused. */
#include "tq_test.h"
#include "../reference/mg_reference.h"

static void random_vector(double *v, int64_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (int64_t i = 0; i < n; i++) v[i] = wref_rng_gaussian(&s);
}

static double rel_diff(const double *a, const double *b, int64_t n)
{
    return sqrt(ref_vdiff2(a, b, n) / ref_vnorm2(b, n));
}

/* <x, y> over n complex numbers */
static void cdot(const double *x, const double *y, int64_t n, double *re, double *im)
{
    *re = ref_cdot_re(x, y, 2 * n);
    *im = ref_cdot_im(x, y, 2 * n);
}

/* Gamma_5 on a level's vector: -1 on chirality 1 */
static void gamma5_level(double *v, int64_t nsite, int ndof)
{
    for (int64_t s = 0; s < nsite; s++)
        for (int d = ndof / 2; d < ndof; d++) v[(s * ndof + d) * 2] *= -1, v[(s * ndof + d) * 2 + 1] *= -1;
}

/* R D P c against the coarse stencil's D_c c, for a random c */
static double galerkin_error(const mgref_stencil *fine, const mgref_stencil *coarse, const mgref_transfer *t,
                             uint64_t seed)
{
    const int64_t nf = fine->nsite * fine->ndof * 2, nc = coarse->nsite * coarse->ndof * 2;
    double *c = malloc(sizeof(double) * nc), *pc = malloc(sizeof(double) * nf), *dpc = malloc(sizeof(double) * nf);
    double *rdpc = malloc(sizeof(double) * nc), *dcc = malloc(sizeof(double) * nc);
    random_vector(c, nc, seed);
    mgref_prolong(pc, t, c);
    mgref_stencil_apply(dpc, fine, pc);
    mgref_restrict(rdpc, t, dpc);
    mgref_stencil_apply(dcc, coarse, c);
    const double e = rel_diff(dcc, rdpc, nc);
    free(c); free(pc); free(dpc); free(rdpc); free(dcc);
    return e;
}

int main(void)
{
    const int dims[4] = {4, 4, 4, 8}, agg[4] = {2, 2, 2, 2}, agg2[4] = {2, 2, 2, 2};
    const double bc[4] = {1, 1, 1, -1}, kappa = 0.12, csw = 1.0;
    const int nvec = 4, nvec2 = 3;
    const int64_t vol = ref_volume(dims), nf = vol * 24;
    double *links = malloc(sizeof(double) * (size_t)(vol * 72));
    ref_gauge_random_su3(links, dims, 11);

    /* the fine operator as a stencil */
    mgref_stencil fine;
    CHECK(mgref_wilson_clover_stencil(&fine, links, dims, bc, kappa, csw) == 0, "fine stencil: out of memory");
    double *v = malloc(sizeof(double) * nf), *w = malloc(sizeof(double) * nf), *w2 = malloc(sizeof(double) * nf);
    random_vector(v, nf, 3);
    ref_clover_mat(w, links, v, dims, bc, kappa, csw, 0);
    mgref_stencil_apply(w2, &fine, v);
    double e = rel_diff(w2, w, nf);
    printf("fine stencil against ref_clover_mat: %.2e\n", e);
    CHECK(e < 1e-13, "the stencil form of the clover matrix differs from ref_clover_mat by %.3g", e);

    /* the transfer from nvec random vectors */
    double *vecs = malloc(sizeof(double) * (size_t)(nf * nvec));
    random_vector(vecs, nf * nvec, 5);
    mgref_transfer t;
    CHECK(mgref_transfer_make(&t, dims, agg, 12, nvec, vecs) == 0, "orthonormalisation failed");
    const int64_t nc = t.ncoarse * 2 * nvec * 2;
    double *c = malloc(sizeof(double) * nc), *c2 = malloc(sizeof(double) * nc);
    random_vector(c, nc, 7);
    mgref_prolong(w, &t, c);
    mgref_restrict(c2, &t, w);
    e = rel_diff(c2, c, nc);
    printf("R P c - c: %.2e\n", e);
    CHECK(e < 1e-13, "R P is not 1 (%.3g): the basis is not orthonormal", e);
    double worst = 0;
    for (int k = 0; k < nvec; k++) {
        mgref_restrict(c2, &t, vecs + k * nf);
        mgref_prolong(w, &t, c2);
        const double ek = rel_diff(w, vecs + k * nf, nf);
        worst = ek > worst ? ek : worst;
    }
    printf("P R v_k - v_k (null vectors in the coarse space): %.2e\n", worst);
    CHECK(worst < 1e-13, "P R changes a null vector by %.3g", worst);
    /* a field outside the span: P R is a projection, not 1 */
    random_vector(v, nf, 9);
    mgref_restrict(c2, &t, v);
    mgref_prolong(w, &t, c2);
    CHECK(rel_diff(w, v, nf) > 0.5, "P R keeps a random field (%.3g): the coarse space is too large", rel_diff(w, v, nf));

    /* the coarse operator */
    mgref_stencil coarse;
    CHECK(mgref_coarsen(&coarse, &fine, &t) == 0, "coarse stencil: out of memory");
    e = galerkin_error(&fine, &coarse, &t, 13);
    printf("level 1: D_c c - R M P c: %.2e (coarse %dx%dx%dx%d, %d dof)\n", e, t.coarse[0], t.coarse[1], t.coarse[2],
           t.coarse[3], coarse.ndof);
    CHECK(e < 1e-12, "level 1 coarse operator differs from R M P by %.3g", e);
    /* the same through ref_clover_mat itself */
    mgref_prolong(w, &t, c);
    ref_clover_mat(w2, links, w, dims, bc, kappa, csw, 0);
    mgref_restrict(c2, &t, w2);
    double *dc = malloc(sizeof(double) * nc);
    mgref_stencil_apply(dc, &coarse, c);
    e = rel_diff(dc, c2, nc);
    CHECK(e < 1e-12, "coarse operator differs from R (ref_clover_mat) P by %.3g", e);

    /* gamma_5-hermiticity: <c1, G5 D_c c2> = conj <c2, G5 D_c c1> */
    double *c3 = malloc(sizeof(double) * nc), *g = malloc(sizeof(double) * nc);
    random_vector(c2, nc, 17);
    random_vector(c3, nc, 19);
    double a_re, a_im, b_re, b_im;
    mgref_stencil_apply(g, &coarse, c3);
    gamma5_level(g, coarse.nsite, coarse.ndof);
    cdot(c2, g, coarse.nsite * coarse.ndof, &a_re, &a_im);
    mgref_stencil_apply(g, &coarse, c2);
    gamma5_level(g, coarse.nsite, coarse.ndof);
    cdot(c3, g, coarse.nsite * coarse.ndof, &b_re, &b_im);
    e = hypot(a_re - b_re, a_im + b_im) / hypot(a_re, a_im);
    printf("gamma_5-hermiticity of D_c: %.2e\n", e);
    CHECK(e < 1e-12, "Gamma_5 D_c is not Hermitian (%.3g)", e);
    /* and D_c itself is not Hermitian (the check above could not pass by accident) */
    mgref_stencil_apply(g, &coarse, c3);
    cdot(c2, g, coarse.nsite * coarse.ndof, &a_re, &a_im);
    mgref_stencil_apply(g, &coarse, c2);
    cdot(c3, g, coarse.nsite * coarse.ndof, &b_re, &b_im);
    CHECK(hypot(a_re - b_re, a_im + b_im) / hypot(a_re, a_im) > 1e-3, "D_c came out Hermitian");

    /* a second level, from the coarse stencil */
    const int64_t nv2 = coarse.nsite * coarse.ndof * 2;
    double *vecs2 = malloc(sizeof(double) * (size_t)(nv2 * nvec2));
    random_vector(vecs2, nv2 * nvec2, 23);
    mgref_transfer t2;
    CHECK(mgref_transfer_make(&t2, coarse.dims, agg2, coarse.ndof, nvec2, vecs2) == 0, "level 2 orthonormalisation failed");
    mgref_stencil coarser;
    CHECK(mgref_coarsen(&coarser, &coarse, &t2) == 0, "level 2 stencil: out of memory");
    e = galerkin_error(&coarse, &coarser, &t2, 29);
    printf("level 2: D_cc c - R D_c P c: %.2e (coarse %dx%dx%dx%d, %d dof)\n", e, t2.coarse[0], t2.coarse[1],
           t2.coarse[2], t2.coarse[3], coarser.ndof);
    CHECK(e < 1e-12, "level 2 coarse operator differs from R D_c P by %.3g", e);

    /* dependent null vectors: the second twice the first */
    double *dep = malloc(sizeof(double) * (size_t)(nf * 2));
    random_vector(dep, nf, 31);
    for (int64_t i = 0; i < nf; i++) dep[nf + i] = 2 * dep[i];
    mgref_transfer bad;
    CHECK(mgref_transfer_make(&bad, dims, agg, 12, 2, dep) != 0, "dependent null vectors were orthonormalised");
    mgref_transfer_free(&bad);

    mgref_transfer_free(&t); mgref_transfer_free(&t2);
    mgref_stencil_free(&fine); mgref_stencil_free(&coarse); mgref_stencil_free(&coarser);
    free(links); free(v); free(w); free(w2); free(vecs); free(c); free(c2); free(c3); free(g); free(dc); free(vecs2);
    free(dep);
    return tq_test_finish("test_mg_reference");
}
