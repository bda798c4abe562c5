/* The multigrid Galerkin product of the library (src/solvers/mg_coarsen.c,
 * codelets/mg_coarsen.c) against reference/mg_reference.h's mgref_coarsen: bitwise in
 * double, for random stencil operators of 12 and 24 complex per site and the Wilson-clover
 * matrix of a weak gauge field, on one block and on decompositions that split x and t (the
 * basis's boundary layers through faces); the library's own R D P c equals D_c c; GCR and
 * BiCGstab solve the Wilson-clover coarse operator (tq_mg_coarse_solve); the fine level in
 * stencil form (tq_mg_fine_op_create) equals the reference's matrices and applies as
 * tq_dirac_mat does; clear errors for mismatched operators and solver parameters.
 * test_mg_coarsen_cuda (this file with TQ_TEST_CUDA): the same with the Galerkin product,
 * the transfer and the coarse operator on a GPU (the blocks' owner), where double agrees
 * with the reference to rounding (fused multiply-adds) and the decompositions bitwise. */
#include "tq_test.h"
#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_mg_coarsen_cuda"
#define DOUBLE_TOL 1e-13
#else
#define TEST_NAME "test_mg_coarsen"
#define DOUBLE_TOL 0.0
#endif
#include "solvers/mg_internal.h"
#include "solvers/solver_internal.h"   /* tq_krylov_out, tq_field_like */
#include "mg_test.h"

static double max_abs_diff(const double *a, const double *b, int64_t n, double *scale)
{
    double d = 0, s = 0;
    for (int64_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i])), s = fmax(s, fabs(b[i]));
    if (scale) *scale = s;
    return d;
}

/* The even-odd form's links (tq_mg_coarse_op_prepare_eo) on the host: at every site X hat_0 =
 * 1 and X hat_m = Y_m (m = 1 .. 8) to rounding. */
static void check_hat(tq_mg_coarse_op *op)
{
    const int n = op->n;
    const int64_t per_site = 2 * 9 * (int64_t)n * n, nr = op->lat->local_volume * per_site;
    double *L = malloc(sizeof(double) * (size_t)nr), *H = malloc(sizeof(double) * (size_t)nr);
    if (!L || !H) { CHECK(0, "out of memory"); free(L); free(H); return; }
    CHECK_OK(tq_field_export(op->links, L));
    CHECK_OK(tq_field_export(op->hat, H));
    double worst = 0, scale = 0;
    for (int64_t s = 0; s < op->lat->local_volume; s++) {
        const double *X = L + s * per_site;
        for (int m = 0; m < 9; m++) {
            const double *Y = L + s * per_site + 2 * (int64_t)m * n * n, *Hm = H + s * per_site + 2 * (int64_t)m * n * n;
            for (int i = 0; i < n; i++)
                for (int j = 0; j < n; j++) {
                    double re = 0, im = 0;
                    for (int k = 0; k < n; k++) {
                        const double *u = X + 2 * (i * n + k), *v = Hm + 2 * (k * n + j);
                        re += u[0] * v[0] - u[1] * v[1];
                        im += u[0] * v[1] + u[1] * v[0];
                    }
                    const double want_re = m ? Y[2 * (i * n + j)] : (i == j), want_im = m ? Y[2 * (i * n + j) + 1] : 0;
                    worst = fmax(worst, fmax(fabs(re - want_re), fabs(im - want_im)));
                    scale = fmax(scale, fabs(want_re));
                }
        }
    }
    printf("    even-odd links: max |X hat_m - Y_m| = %.2g (largest entry %.2g)\n", worst, scale);
    CHECK(worst < 1e-12 * scale, "even-odd links: X hat_m differs from Y_m by %g", worst);
    free(L);
    free(H);
}

/* The even-odd links of large coarse sites (n 72, 84, 96: 36, 42, 48 null vectors) from
 * random links whose X is diagonally dominant: X hat_m = Y_m at every site (check_hat). On
 * GPUs the sites whose matrices fit a thread block's shared memory are made there (84 on
 * H100 and H200), the others on CPU workers. */
static void check_hat_sizes(void)
{
    static const int dims[4] = {2, 2, 2, 4};
    static const int sizes[3] = {72, 84, 96};
    for (int k = 0; k < 3; k++) {
        const int n = sizes[k];
        tq_lattice *lat = tq_test_lattice(dims, NULL);
        tq_mg_coarse_op *op = NULL;
        if (lat) CHECK_OK(tq_mg_coarse_op_create("test", lat, n, TQ_DOUBLE, TQ_DOUBLE, &op));
        if (!op) { tq_lattice_destroy(lat); continue; }
        const int64_t per_site = 2 * 9 * (int64_t)n * n, nr = lat->local_volume * per_site;
        double *L = malloc(sizeof(double) * (size_t)nr);
        if (!L) { CHECK(0, "out of memory"); tq_mg_coarse_op_destroy(op); tq_lattice_destroy(lat); continue; }
        for (int64_t i = 0; i < nr; i++) L[i] = 0.5 * urand();
        for (int64_t s = 0; s < lat->local_volume; s++)
            for (int i = 0; i < n; i++) L[s * per_site + 2 * (i * n + i)] += n + 1;   /* X dominated by its diagonal */
        CHECK_OK(tq_field_import(op->links, L));
        printf("  even-odd links of %d complex per site (%s)\n", n,
               tq_coarse_hat_fits_gpus(n) ? "fits a GPU thread block" : "on CPU workers");
        CHECK_OK(tq_mg_coarse_op_prepare_eo(op));
        if (op->hat) check_hat(op);
        free(L);
        tq_mg_coarse_op_destroy(op);
        tq_lattice_destroy(lat);
    }
}

/* D_c x = c by GCR and BiCGstab on the coarse level (tq_mg_coarse_solve), and by GCR on the
 * even-odd Schur complement (tq_mg_level_solve_eo, in fewer iterations than on D_c): the
 * true residual |c - D_c x| / |c| below 1e-9. hc: c on the host; dx, h: work (ncr reals). */
static void check_coarse_solves(tq_mg_coarse_op *op, const tq_field *c, tq_field *dx, const double *hc, double *h,
                                int64_t ncr)
{
    const tq_inverter inv[3] = {TQ_INV_GCR, TQ_INV_BICGSTAB, TQ_INV_GCR};
    tq_field *x = NULL;
    CHECK_OK(tq_field_like(c, &x));
    CHECK_OK(tq_mg_coarse_op_prepare_eo(op));
    if (op->hat) check_hat(op);
    int full_gcr = 0;
    for (int i = 0; x && i < 3; i++) {
        tq_solver_params p;
        tq_solver_params_default(&p);
        p.inverter = inv[i];
        p.tol = 1e-10;
        p.maxiter = 2000;
        tq_krylov_out out;
        memset(&out, 0, sizeof out);
        if (i < 2) CHECK_OK(tq_mg_coarse_solve(op, x, c, &p, &out));
        else CHECK_OK(tq_mg_level_solve_eo(op, x, c, &p, &out));
        if (i == 0) full_gcr = out.iterations;
        CHECK_OK(tq_mg_coarse_apply(op, dx, x));
        CHECK_OK(tq_field_export(dx, h));
        double num = 0, den = 0;
        for (int64_t j = 0; j < ncr; j++) num += (hc[j] - h[j]) * (hc[j] - h[j]), den += hc[j] * hc[j];
        const double res = sqrt(num / den);
        CHECK(res < 1e-9, "coarse %s%s solve: true residual %.3g after %d iterations", tq_inverter_name(inv[i]),
              i == 2 ? " even-odd" : "", res, out.iterations);
        printf("    coarse %-8s%s solve: %3d iterations, true residual %.2g\n", tq_inverter_name(inv[i]),
               i == 2 ? " (even-odd)" : "", out.iterations, res);
        if (i == 2)
            CHECK(out.iterations < full_gcr, "even-odd GCR took %d iterations, GCR on D_c %d", out.iterations, full_gcr);
    }
    tq_solver_params p;
    tq_solver_params_default(&p);
    if (x) CHECK_ERR(tq_mg_coarse_solve(op, x, c, &p, NULL), TQ_ERR_INVALID_ARG);   /* CG: D_c is not Hermitian */
    p.inverter = TQ_INV_GCR;
    if (x) CHECK_ERR(tq_mg_coarse_solve(op, x, x, &p, NULL), TQ_ERR_INVALID_ARG);
    tq_field_destroy(x);
}

/* The library's coarse links of fine operator f (host order) for the basis made from vecs,
 * on `block`; also its basis ([site][k nf + d][2]) and the largest |R D P c - D_c c| over
 * max |D_c c| for a random c. Returns 0 on success. */
static int library_coarsen(const mgref_stencil *f, const int block[4], const int agg[4], int nvec, const double *vecs,
                           double *clinks, double *basis, double *rdp_err, int solves)
{
    const int nf = f->ndof, nc = 2 * nvec;
    tq_lattice *lat = tq_test_lattice(f->dims, block);
    if (!lat) return -1;
    tq_mg_transfer *t = NULL;
    tq_mg_coarse_op *fop = NULL, *cop = NULL;
    tq_field *v[TQ_MG_MAX_NVEC] = {NULL};
    tq_field *c = NULL, *dc = NULL, *pc = NULL, *dpc = NULL, *rdpc = NULL;
    double *flinks = malloc(sizeof(double) * (size_t)(f->nsite * 9 * mgref_mat_reals(nf)));
    int ok = flinks != NULL;
    CHECK_OK(tq_mg_transfer_create("test", lat, nf, agg, nvec, TQ_DOUBLE, &t));
    CHECK_OK(tq_mg_coarse_op_create("test", lat, nf, TQ_DOUBLE, TQ_DOUBLE, &fop));
    ok = ok && t && fop;
    if (ok) CHECK_OK(tq_mg_coarse_op_create("test", t->coarse, nc, TQ_DOUBLE, TQ_DOUBLE, &cop));
    ok = ok && cop;
    tq_field_params fp = {nf == 12 ? TQ_FIELD_SPINOR : TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, nf == 12 ? 0 : nf};
    tq_field_params ffp = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, nf};   /* what the fine stencil applies to */
    for (int k = 0; ok && k < nvec; k++) {
        CHECK_OK(tq_field_create(lat, &fp, &v[k]));
        ok = v[k] && !tq_field_import(v[k], vecs + (int64_t)k * f->nsite * nf * 2);
    }
    if (ok) {
        mg_links_to_host(f, flinks);
        CHECK_OK(tq_field_import(fop->links, flinks));
        CHECK_OK(tq_mg_transfer_set_basis(t, v));
        CHECK_OK(tq_mg_coarsen(fop, t, cop));
        CHECK_OK(tq_field_export(cop->links, clinks));
        CHECK_OK(tq_field_export(t->basis, basis));
        /* R D P c against D_c c, every step by the library */
        const tq_field_params cp = tq_mg_coarse_params(t, TQ_DOUBLE);
        CHECK_OK(tq_field_create(t->coarse, &cp, &c));
        CHECK_OK(tq_field_create(t->coarse, &cp, &dc));
        CHECK_OK(tq_field_create(t->coarse, &cp, &rdpc));
        CHECK_OK(tq_field_create(lat, &ffp, &pc));
        CHECK_OK(tq_field_create(lat, &ffp, &dpc));
        const int64_t ncr = t->coarse->local_volume * nc * 2;
        double *hc = malloc(sizeof(double) * (size_t)ncr), *h1 = malloc(sizeof(double) * (size_t)ncr),
               *h2 = malloc(sizeof(double) * (size_t)ncr);
        ok = hc && h1 && h2 && c && dc && rdpc && pc && dpc;
        /* the transfer takes the fine level's vector kind: coarse kind of nf (nf > 12), else a
         * spinor; the fine stencil applies to coarse kind: for nf 12 go through a spinor */
        tq_field *pcs = NULL, *dpcs = NULL;
        if (ok && nf == 12) {
            CHECK_OK(tq_field_create(lat, &fp, &pcs));
            CHECK_OK(tq_field_create(lat, &fp, &dpcs));
            ok = pcs && dpcs;
        }
        double *hf = ok && nf == 12 ? malloc(sizeof(double) * (size_t)(f->nsite * 24)) : NULL;
        if (ok && nf == 12 && !hf) ok = 0;
        if (ok) {
            for (int64_t i = 0; i < ncr; i++) hc[i] = urand();
            CHECK_OK(tq_field_import(c, hc));
            CHECK_OK(tq_mg_coarse_apply(cop, dc, c));
            if (nf == 12) {
                CHECK_OK(tq_mg_prolong(t, c, pcs));
                CHECK_OK(tq_field_export(pcs, hf));
                CHECK_OK(tq_field_import(pc, hf));
                CHECK_OK(tq_mg_coarse_apply(fop, dpc, pc));
                CHECK_OK(tq_field_export(dpc, hf));
                CHECK_OK(tq_field_import(dpcs, hf));
                CHECK_OK(tq_mg_restrict(t, dpcs, rdpc));
            } else {
                CHECK_OK(tq_mg_prolong(t, c, pc));
                CHECK_OK(tq_mg_coarse_apply(fop, dpc, pc));
                CHECK_OK(tq_mg_restrict(t, dpc, rdpc));
            }
            CHECK_OK(tq_field_export(dc, h1));
            CHECK_OK(tq_field_export(rdpc, h2));
            double scale;
            *rdp_err = max_abs_diff(h2, h1, ncr, &scale) / scale;
            if (solves) check_coarse_solves(cop, c, dc, hc, h1, ncr);
        }
        free(hf);
        tq_field_destroy(pcs);
        tq_field_destroy(dpcs);
        free(hc);
        free(h1);
        free(h2);
    }
    for (int k = 0; k < nvec; k++) tq_field_destroy(v[k]);
    tq_field_destroy(c);
    tq_field_destroy(dc);
    tq_field_destroy(pc);
    tq_field_destroy(dpc);
    tq_field_destroy(rdpc);
    tq_mg_coarse_op_destroy(cop);
    tq_mg_coarse_op_destroy(fop);
    tq_mg_transfer_destroy(t);
    tq_lattice_destroy(lat);
    free(flinks);
    return ok ? 0 : -1;
}

/* Coarsens f on each decomposition: bitwise mgref_coarsen with the library's basis, and
 * bitwise the first decomposition's links. */
static void check_coarsen(const char *name, const mgref_stencil *f, const int agg[4], int nvec, const int blocks[][4],
                          int nblocks, int solves)
{
    const int nf = f->ndof, nc = 2 * nvec;
    const int64_t nvr = f->nsite * nf * 2;
    mgref_transfer tr;
    memset(&tr, 0, sizeof tr);
    double *vecs = malloc(sizeof(double) * (size_t)(nvr * nvec));
    double *basis = malloc(sizeof(double) * (size_t)(nvr * nvec));
    int64_t ncs = f->nsite;
    for (int mu = 0; mu < 4; mu++) ncs /= agg[mu];
    const int64_t nl = ncs * 9 * mgref_mat_reals(nc);
    double *first = malloc(sizeof(double) * (size_t)nl), *got = malloc(sizeof(double) * (size_t)nl);
    double *want = malloc(sizeof(double) * (size_t)nl);
    if (!vecs || !basis || !first || !got || !want) { CHECK(0, "out of memory"); goto out; }
    for (int64_t i = 0; i < nvr * nvec; i++) vecs[i] = urand();
    for (int b = 0; b < nblocks; b++) {
        double rdp = 1;
        double *links = b ? got : first;
        if (library_coarsen(f, blocks[b], agg, nvec, vecs, links, basis, &rdp, solves && b == nblocks - 1)) continue;
        /* the reference on the library's basis (host [site][k nf + d] -> [k][site][d]) */
        if (mgref_transfer_make(&tr, f->dims, agg, nf, nvec, vecs)) { CHECK(0, "reference basis"); break; }
        for (int k = 0; k < nvec; k++)
            for (int64_t s = 0; s < f->nsite; s++)
                memcpy(tr.basis + ((int64_t)k * f->nsite + s) * nf * 2, basis + (s * nvec + k) * nf * 2, sizeof(double) * (size_t)nf * 2);
        mgref_stencil c;
        if (mgref_coarsen(&c, f, &tr)) { CHECK(0, "out of memory"); mgref_transfer_free(&tr); break; }
        mg_links_to_host(&c, want);
        mgref_stencil_free(&c);
        mgref_transfer_free(&tr);
        double scale;
        const double worst = max_abs_diff(links, want, nl, &scale);
        char what[160];
        snprintf(what, sizeof what, "%s, blocks %dx%dx%dx%d", name, blocks[b][0], blocks[b][1], blocks[b][2], blocks[b][3]);
        CHECK(worst <= DOUBLE_TOL * scale, "%s: coarse links differ from the reference by %.3g", what, worst);
        if (b) CHECK(!memcmp(got, first, sizeof(double) * (size_t)nl), "%s: not bitwise the links of one block", what);
        CHECK(rdp < 1e-13, "%s: R D P c differs from D_c c by %.3g", what, rdp);
        printf("  %-56s links - reference %.2g (of %.2g), |R D P c - D_c c| %.2g\n", what, worst, scale, rdp);
    }
out:
    free(vecs);
    free(basis);
    free(first);
    free(got);
    free(want);
}

static void random_stencil(mgref_stencil *s, const int dims[4], int n)
{
    if (mgref_stencil_alloc(s, dims, n)) return;
    const int64_t m = mgref_mat_reals(n);
    for (int64_t i = 0; i < s->nsite * m; i++) s->x[i] = urand();
    for (int64_t i = 0; i < s->nsite * 4 * m; i++) s->yf[i] = urand(), s->yb[i] = urand();
}

/* The fine level in stencil form (tq_mg_fine_op_create) against mgref_wilson_clover_stencil
 * (Wilson: bitwise; clover: to rounding, the clover terms being built apart), and its
 * application against the library's tq_dirac_mat on a random spinor. */
static void check_fine_op(const int dims[4], const int block[4], int clover)
{
    const double kappa = 0.124, csw = clover ? 1.1 : 0.0, bc[4] = {1, 1, 1, -1};
    tq_host_gauge g;
    mgref_stencil ref;
    memset(&ref, 0, sizeof ref);
    tq_lattice *lat = tq_test_lattice(dims, block);
    tq_field *gauge = NULL, *v = NULL, *mv = NULL, *vc = NULL, *yc = NULL;
    tq_dirac *d = NULL;
    tq_mg_coarse_op *op = NULL;
    const int64_t vol = (int64_t)dims[0] * dims[1] * dims[2] * dims[3], nl = vol * 9 * mgref_mat_reals(12);
    double *want = malloc(sizeof(double) * (size_t)nl), *got = malloc(sizeof(double) * (size_t)nl);
    double *hv = malloc(sizeof(double) * (size_t)(vol * 24)), *h1 = malloc(sizeof(double) * (size_t)(vol * 24)),
           *h2 = malloc(sizeof(double) * (size_t)(vol * 24));
    CHECK_OK(tq_host_gauge_alloc(&g, dims));
    if (!lat || !g.links || !want || !got || !hv || !h1 || !h2) { CHECK(0, "set-up failed"); goto out; }
    CHECK_OK(tq_host_gauge_weak(&g, 3, 0.3));
    if (mgref_wilson_clover_stencil(&ref, g.links, dims, bc, kappa, csw)) { CHECK(0, "out of memory"); goto out; }
    mg_links_to_host(&ref, want);
    if (mg_test_dirac(lat, &g, kappa, csw, &gauge, &d)) goto out;
    CHECK_OK(tq_mg_fine_op_create("test", d, TQ_DOUBLE, TQ_DOUBLE, &op));
    if (!op) goto out;
    CHECK_OK(tq_field_export(op->links, got));
    double scale;
    const double worst = max_abs_diff(got, want, nl, &scale);
    char what[128];
    snprintf(what, sizeof what, "%s, blocks %dx%dx%dx%d", clover ? "clover" : "Wilson", block[0], block[1], block[2], block[3]);
    if (clover) CHECK(worst <= 1e-14 * scale, "%s: fine links differ from the reference by %.3g", what, worst);
    else CHECK(worst == 0, "%s: fine links differ from the reference by %.3g", what, worst);
    /* M v by the Dirac operator and by the stencil form */
    tq_field_params sp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    tq_field_params cp = {TQ_FIELD_COARSE, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 12};
    CHECK_OK(tq_field_create(lat, &sp, &v));
    CHECK_OK(tq_field_create(lat, &sp, &mv));
    CHECK_OK(tq_field_create(lat, &cp, &vc));
    CHECK_OK(tq_field_create(lat, &cp, &yc));
    if (!v || !mv || !vc || !yc) goto out;
    for (int64_t i = 0; i < vol * 24; i++) hv[i] = urand();
    CHECK_OK(tq_field_import(v, hv));
    CHECK_OK(tq_field_import(vc, hv));
    CHECK_OK(tq_dirac_mat(d, mv, v, 0));
    CHECK_OK(tq_mg_coarse_apply(op, yc, vc));
    CHECK_OK(tq_field_export(mv, h1));
    CHECK_OK(tq_field_export(yc, h2));
    const double eapp = max_abs_diff(h2, h1, vol * 24, &scale) / scale;
    CHECK(eapp < 1e-14, "%s: the stencil form's M v differs from tq_dirac_mat's by %.3g", what, eapp);
    printf("  fine level in stencil form, %-32s links - reference %.2g, M v - tq_dirac_mat %.2g\n", what, worst, eapp);
out:
    tq_field_destroy(v);
    tq_field_destroy(mv);
    tq_field_destroy(vc);
    tq_field_destroy(yc);
    tq_mg_coarse_op_destroy(op);
    tq_dirac_destroy(d);
    tq_field_destroy(gauge);
    tq_lattice_destroy(lat);
    mgref_stencil_free(&ref);
    tq_host_gauge_free(&g);
    free(want);
    free(got);
    free(hv);
    free(h1);
    free(h2);
}

static void check_errors(void)
{
    const int dims[4] = {4, 4, 4, 4}, agg[4] = {2, 2, 2, 2};
    tq_lattice *lat = tq_test_lattice(dims, dims), *other = tq_test_lattice(dims, dims);
    tq_mg_transfer *t = NULL;
    tq_mg_coarse_op *fop = NULL, *wide = NULL, *elsewhere = NULL, *cop = NULL, *cwrong = NULL;
    if (!lat || !other) goto out;
    CHECK_OK(tq_mg_transfer_create("test", lat, 12, agg, 6, TQ_DOUBLE, &t));
    CHECK_OK(tq_mg_coarse_op_create("test", lat, 12, TQ_DOUBLE, TQ_DOUBLE, &fop));
    CHECK_OK(tq_mg_coarse_op_create("test", lat, 24, TQ_DOUBLE, TQ_DOUBLE, &wide));
    CHECK_OK(tq_mg_coarse_op_create("test", other, 12, TQ_DOUBLE, TQ_DOUBLE, &elsewhere));
    if (!t || !fop || !wide || !elsewhere) goto out;
    CHECK_OK(tq_mg_coarse_op_create("test", t->coarse, 12, TQ_DOUBLE, TQ_DOUBLE, &cop));
    CHECK_OK(tq_mg_coarse_op_create("test", t->coarse, 24, TQ_DOUBLE, TQ_DOUBLE, &cwrong));
    if (!cop || !cwrong) goto out;
    CHECK_ERR(tq_mg_coarsen(NULL, t, cop), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_mg_coarsen(wide, t, cop), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_mg_coarsen(elsewhere, t, cop), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_mg_coarsen(fop, t, cwrong), TQ_ERR_MISMATCH);
    CHECK_ERR(tq_mg_coarsen(fop, t, fop), TQ_ERR_MISMATCH);
    printf("  %s\n", tq_last_error());
out:
    tq_mg_coarse_op_destroy(cop);
    tq_mg_coarse_op_destroy(cwrong);
    tq_mg_coarse_op_destroy(fop);
    tq_mg_coarse_op_destroy(wide);
    tq_mg_coarse_op_destroy(elsewhere);
    tq_mg_transfer_destroy(t);
    tq_lattice_destroy(other);
    tq_lattice_destroy(lat);
}

int main(void)
{
    mg_rng_state = 0x9e3779b97f4a7c15ull;
#ifdef TQ_TEST_CUDA
    const int init = tq_test_init_gpus(TEST_NAME, 2);
    if (init) return init < 0 ? 1 : init;
#else
    if (tq_test_init_cpus(2)) return 1;
#endif
    const int agg[4] = {2, 2, 2, 2};
    /* fine 8x4x4x8 (coarse 4x2x2x4): one block, split in x, split in x and t */
    const int d[4] = {8, 4, 4, 8};
    const int blocks[3][4] = {{8, 4, 4, 8}, {4, 4, 4, 8}, {4, 4, 4, 4}};
    mgref_stencil s;
    memset(&s, 0, sizeof s);
    random_stencil(&s, d, 12);
    if (s.x) check_coarsen("random, 12 complex, nvec 6", &s, agg, 6, blocks, 3, 0);
    mgref_stencil_free(&s);
    /* the Wilson-clover matrix of a weak field, antiperiodic in t */
    tq_host_gauge g;
    CHECK_OK(tq_host_gauge_alloc(&g, d));
    if (g.links) {
        CHECK_OK(tq_host_gauge_weak(&g, 3, 0.3));
        const double bc[4] = {1, 1, 1, -1};
        if (!mgref_wilson_clover_stencil(&s, g.links, d, bc, 0.124, 1.1))
            check_coarsen("Wilson-clover, nvec 12", &s, agg, 12, blocks, 3, 1);
        mgref_stencil_free(&s);
        tq_host_gauge_free(&g);
    }
    /* a coarse level's operator coarsened again: 24 complex per site */
    const int d2[4] = {4, 4, 4, 8}, blocks2[2][4] = {{4, 4, 4, 8}, {4, 4, 4, 4}};
    random_stencil(&s, d2, 24);
    if (s.x) check_coarsen("random, 24 complex, nvec 6", &s, agg, 6, blocks2, 2, 0);
    mgref_stencil_free(&s);
    const int fb[2][4] = {{8, 4, 4, 8}, {4, 4, 4, 4}};
    for (int cl = 0; cl < 2; cl++)
        for (int b = 0; b < 2; b++) check_fine_op(d, fb[b], cl);
    check_hat_sizes();
    printf("errors:\n");
    check_errors();
    tq_finalize();
    return tq_test_finish(TEST_NAME);
}
