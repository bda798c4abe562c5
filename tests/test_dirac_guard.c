/* A solver's guarded operator application (src/dirac/dirac_forms.c, matpc_tasks): M_pc or M_pc^dag
 * with a reduction fused into its last kernel, behind a guard (a solver scalar that the
 * stopping test clears; the iterations a pipelined solver queued past convergence carry
 * it). With the guard shut no kernel of the application writes anything: not out, not the
 * field the epilogue updates, not the operator's intermediate fields (the kernels before
 * the last read the guard too), not the scalar slots of the reduction. With the guard open
 * the result is the plain operator's (tq_dirac_matpc, y = M_pc in or M_pc^dag in):
 *   NORM2 (dagger 0):       out = y, |y|^2
 *   CAXPYZ (dagger 0):      out = w - y
 *   BICGSTAB_T (dagger 0):  out = y, <y, w>, |y|^2, <u, w>, <u, y>
 *   AXPY_NORM2 (dagger 1):  r = r - y, |r|^2
 * for the Wilson operator and the clover operator (symmetric and asymmetric even-odd), in
 * double and single precision, on CPU workers and on CUDA workers where there are any. */
#include "tq_test.h"
#include "../reference/wilson_reference.h"
#include "dirac_test_util.h"
#include "solvers/solver_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { GUARD_SLOT = 3, DST_SLOT = 10, SENTINEL = 42 };

typedef struct host_fields {
    int64_t n;
    double *in, *w, *u, *r, *out, *tmp[2], *y, *got, *before[4];
} host_fields;

static int same_bits(const double *a, const double *b, int64_t n)
{
    return memcmp(a, b, (size_t)n * sizeof(double)) == 0;
}

static tq_status export_to(tq_field *f, double *h, int64_t n)
{
    memset(h, 0, (size_t)n * sizeof(double));   /* sites outside the field's parity stay 0 */
    return tq_field_export(f, h);
}

/* conj(a) b summed over the even sites (a and b exported: other sites are 0). */
static void cdot(const double *a, const double *b, int64_t n, double *re, double *im)
{
    *re = *im = 0.0;
    for (int64_t k = 0; k < n; k += 2) {
        *re += a[k] * b[k] + a[k + 1] * b[k + 1];
        *im += a[k] * b[k + 1] - a[k + 1] * b[k];
    }
}

static void run_case(setup *S, host_fields *H, tq_precision prec, int kind, tq_where where, const char *opname)
{
    const int dagger = kind == TQ_EPI_AXPY_NORM2;
    const char *kn = kind == TQ_EPI_NORM2 ? "norm2" : kind == TQ_EPI_CAXPYZ ? "caxpyz"
                   : kind == TQ_EPI_BICGSTAB_T ? "bicgstab-t" : "axpy-norm2";
    char what[160];
    snprintf(what, sizeof what, "%s %s %s on %s", opname, tq_precision_name(prec), kn,
             where == TQ_WHERE_CPU ? "CPU" : "CUDA");
    const int64_t n = H->n;
    tq_field *in = spinor(S, prec, TQ_EVEN, H->in), *out = spinor(S, prec, TQ_EVEN, H->out);
    tq_field *w = spinor(S, prec, TQ_EVEN, H->w), *u = spinor(S, prec, TQ_EVEN, H->u);
    tq_field *r = spinor(S, prec, TQ_EVEN, H->r), *y = spinor(S, prec, TQ_EVEN, NULL);
    tq_field *tmp[2] = {tq_internal_dirac_work_field(S->dirac, 0), tq_internal_dirac_work_field(S->dirac, 1)};
    tq_scalars *sc = NULL;
    CHECK_OK(tq_scalars_create(&sc));
    if (!in || !out || !w || !u || !r || !y || !sc) goto done;
    for (int p = 0; p < 2; p++) CHECK_OK(tq_field_import(tmp[p], H->tmp[p]));

    tq_dirac_epilogue e;
    memset(&e, 0, sizeof e);
    e.args.kind = (signed char)kind;
    e.args.c = -1.0;
    e.args.slot = 0;   /* the coefficient is c itself */
    e.args.guard = GUARD_SLOT + 1;
    e.args.dst = DST_SLOT;
    e.args.snapshot = 1;
    e.scalars = sc->h;
    e.snapshot = sc->snap[0];
    e.w = kind == TQ_EPI_CAXPYZ || kind == TQ_EPI_BICGSTAB_T ? w : NULL;
    e.u = kind == TQ_EPI_BICGSTAB_T ? u : NULL;
    e.r = dagger ? r : NULL;
    const int nres = tq_epilogue_nresults(kind);
    double s[TQ_NSCALARS], sentinel[TQ_EPI_MAX_RESULTS];
    for (int i = 0; i < TQ_EPI_MAX_RESULTS; i++) sentinel[i] = SENTINEL;
    tq_field *watched[4] = {out, r, tmp[0], tmp[1]};
    /* the fields are read where the application runs first: a write-only buffer is a fresh
     * allocation on a GPU that holds no copy yet, so a kernel that writes nothing would
     * leave undefined values there; a copy present already keeps the markers */
    CHECK_OK(tq_set_placement(where));
    for (int i = 0; i < 4; i++) {
        double norm;
        CHECK_OK(tq_blas_norm2(watched[i], &norm));
    }
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    for (int i = 0; i < 4; i++) CHECK_OK(export_to(watched[i], H->before[i], n));

    /* the guard shut: nothing written */
    const double shut = 0.0, open = 1.0;
    CHECK_OK(tq_scalars_write(sc, GUARD_SLOT, 1, &shut));
    CHECK_OK(tq_scalars_write(sc, DST_SLOT, TQ_EPI_MAX_RESULTS, sentinel));
    CHECK_OK(tq_set_placement(where));
    tq_status st = tq_internal_dirac_matpc_epilogue(S->dirac, out, in, TQ_EVEN, dagger, &e);
    CHECK(st == TQ_SUCCESS, "%s (guard shut): %s", what, tq_last_error());
    if (st == TQ_SUCCESS) CHECK_OK(tq_scalars_read_snapshot(sc, 0, s));
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    if (st != TQ_SUCCESS) goto done;
    static const char *names[4] = {"out", "r", "the work field on even sites", "the work field on odd sites"};
    for (int i = 0; i < 4; i++) {
        CHECK_OK(export_to(watched[i], H->got, n));
        CHECK(same_bits(H->got, H->before[i], n), "%s: guard shut, but %s was written", what, names[i]);
    }
    for (int i = 0; i < nres; i++)
        CHECK(s[DST_SLOT + i] == SENTINEL, "%s: guard shut, but result slot %d holds %.6g", what, i, s[DST_SLOT + i]);

    /* the guard open: the plain operator's result */
    CHECK_OK(tq_scalars_write(sc, GUARD_SLOT, 1, &open));
    CHECK_OK(tq_set_placement(where));
    st = tq_internal_dirac_matpc_epilogue(S->dirac, out, in, TQ_EVEN, dagger, &e);
    CHECK(st == TQ_SUCCESS, "%s (guard open): %s", what, tq_last_error());
    if (st == TQ_SUCCESS) CHECK_OK(tq_scalars_read_snapshot(sc, 0, s));
    if (st == TQ_SUCCESS) CHECK_OK(tq_dirac_matpc(S->dirac, y, in, TQ_EVEN, dagger));
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    if (st != TQ_SUCCESS) goto done;
    CHECK_OK(export_to(y, H->y, n));
    CHECK_OK(export_to(dagger ? r : out, H->got, n));
    /* what the application must have produced, from y, w and r as stored */
    double *want = malloc((size_t)n * sizeof(double)), *w_h = malloc((size_t)n * sizeof(double));
    double *u_h = malloc((size_t)n * sizeof(double));
    if (!want || !w_h || !u_h) { fprintf(stderr, "out of memory\n"); exit(99); }
    CHECK_OK(export_to(w, w_h, n));
    CHECK_OK(export_to(u, u_h, n));
    for (int64_t k = 0; k < n; k++)
        want[k] = kind == TQ_EPI_CAXPYZ ? w_h[k] - H->y[k] : dagger ? H->before[1][k] - H->y[k] : H->y[k];
    const double tol = prec == TQ_DOUBLE ? 1e-12 : 1e-5, stol = prec == TQ_DOUBLE ? 1e-11 : 1e-4;
    const double e_out = rel_err(H->got, want, S->dims, 0);
    CHECK(e_out <= tol, "%s: guard open: %s differs from the plain operator's by %.3g (relative)", what,
          dagger ? "r" : "out", e_out);
    double ref[TQ_EPI_MAX_RESULTS] = {0}, scale = 0.0;
    if (kind == TQ_EPI_NORM2 || dagger) {
        double im;
        cdot(dagger ? want : H->y, dagger ? want : H->y, n, &ref[0], &im);
        scale = ref[0];
    } else if (kind == TQ_EPI_BICGSTAB_T) {
        double yy, ww, uu, im;
        cdot(H->y, w_h, n, &ref[0], &ref[1]);
        cdot(H->y, H->y, n, &ref[2], &im);
        cdot(u_h, w_h, n, &ref[3], &ref[4]);
        cdot(u_h, H->y, n, &ref[5], &ref[6]);
        cdot(H->y, H->y, n, &yy, &im);
        cdot(w_h, w_h, n, &ww, &im);
        cdot(u_h, u_h, n, &uu, &im);
        scale = fmax(yy, fmax(ww, uu));   /* |<a, b>| <= max(|a|^2, |b|^2) */
    }
    for (int i = 0; i < nres; i++)
        CHECK(fabs(s[DST_SLOT + i] - ref[i]) <= stol * scale, "%s: guard open: result %d is %.12g, summed here %.12g",
              what, i, s[DST_SLOT + i], ref[i]);
    free(want);
    free(w_h);
    free(u_h);
done:
    tq_scalars_destroy(sc);
    tq_field_destroy(in);
    tq_field_destroy(out);
    tq_field_destroy(w);
    tq_field_destroy(u);
    tq_field_destroy(r);
    tq_field_destroy(y);
}

int main(void)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 99;
    const int dims[4] = {4, 4, 4, 8};
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, dims));
    CHECK_OK(tq_host_gauge_weak(&hg, 5, 0.3));
    host_fields H;
    H.n = n;
    double **all[12] = {&H.in, &H.w, &H.u, &H.r, &H.out, &H.tmp[0], &H.tmp[1], &H.y, &H.got,
                        &H.before[0], &H.before[1], &H.before[2]};
    for (int i = 0; i < 12; i++) {
        *all[i] = malloc((size_t)n * sizeof(double));
        if (!*all[i]) { fprintf(stderr, "out of memory\n"); return 99; }
        ref_spinor_random(*all[i], vol, 20 + i);
    }
    H.before[3] = malloc((size_t)n * sizeof(double));
    if (!H.before[3]) { fprintf(stderr, "out of memory\n"); return 99; }

    const tq_where wheres[2] = {TQ_WHERE_CPU, TQ_WHERE_CUDA};
    const int nwhere = info.ncuda_workers > 0 ? 2 : 1;
    if (nwhere == 1) printf("no CUDA worker: the CUDA cases are skipped (CPU workers only)\n");
    static const int kinds[4] = {TQ_EPI_NORM2, TQ_EPI_CAXPYZ, TQ_EPI_BICGSTAB_T, TQ_EPI_AXPY_NORM2};
    static const tq_precision ps[2] = {TQ_DOUBLE, TQ_SINGLE};
    for (int o = 0; o < 3; o++) {
        tq_dirac_params dp;
        memset(&dp, 0, sizeof dp);
        dp.type = o ? TQ_DSLASH_CLOVER : TQ_DSLASH_WILSON;
        dp.kappa = 0.12;
        dp.csw = o ? 1.5 : 0.0;
        dp.matpc = o == 2 ? TQ_MATPC_ASYMMETRIC : TQ_MATPC_SYMMETRIC;
        const char *opname = o == 0 ? "wilson" : o == 1 ? "clover" : "clover-asym";
        for (int pi = 0; pi < 2; pi++) {
            setup S;
            if (setup_make_op(&S, dims, dims, &hg, ps[pi], TQ_RECON_18, dp.kappa, &dp) == 0)
                for (int wi = 0; wi < nwhere; wi++)
                    for (int k = 0; k < 4; k++) run_case(&S, &H, ps[pi], kinds[k], wheres[wi], opname);
            setup_free(&S);
        }
    }
    for (int i = 0; i < 12; i++) free(*all[i]);
    free(H.before[3]);
    tq_host_gauge_free(&hg);
    tq_finalize();
    return tq_test_finish("test_dirac_guard");
}
