/* The mixed-precision BLAS operations of the solvers' reliable updates (tq_blas_submit, as
 * src/solvers/ submits them; converting copies are in test_blas / test_blas_cuda):
 *   TQ_OP_ACCUMULATE             [xs, x]:           x += xs (xs left as it was)
 *   TQ_OP_RELIABLE_RESIDUAL      [b, Ax, r, p]:     r' = b - Ax; p += r' - r; r = r'; |r'|^2
 *   TQ_OP_RELIABLE_RESIDUAL_RHO  [b, Ax, r, p, r0]: the same and <r0, r'>
 *   TQ_OP_RELIABLE_RESIDUAL_RHO_QP [b, Ax, r, p, r0, q]: the same and <q, p'>
 * with x, b, Ax in the precise precision and xs, r, p, r0, q in the sloppy one, for every pair
 * (double-single, double-half, single-half), on CPU workers and on CUDA workers where there
 * are any. Each result is compared with a plain double-precision loop over the inputs as
 * stored (exported after import):
 *  - written fields within their storage rounding, relative to the site's largest
 *    component (1e-13 double, 1e-6 single, 5e-5 half: one half quantum is 3.1e-5);
 *  - read-only fields (xs in the accumulation too) unchanged bit for bit;
 *  - |r'|^2 (of the unrounded r') within 1e-12 relative, <r0, r'> within 1e-12 of
 *    sum |r0| |r'|, <q, p'> (of the unrounded p') within 1e-12 of sum |q| |p'|.
 * Two shapes: an even-parity field on one block (the reduction and its scalar program in
 * the one task) and a full field on 16 blocks (32 tasks and the combine task). */
#include "tq_test.h"
#include "solvers/solver_internal.h"

#include <stdint.h>

static uint64_t rng_state = 12345;
static double uniform(void)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (double)(rng_state >> 11) * (1.0 / 9007199254740992.0) * 2.0 - 1.0;
}

static double storage_tol(tq_precision p) { return p == TQ_DOUBLE ? 1e-13 : p == TQ_SINGLE ? 1e-6 : 5e-5; }

typedef struct shape {
    const char *name;
    tq_lattice *lat;
    tq_subset sub;
    int64_t V;
} shape;

/* The op on fields in precisions hi (operand 0's kind) and lo, placed on `where`. */
static void run_case(const shape *S, int op, tq_precision hi, tq_precision lo, tq_where where)
{
    const int nop = tq_blas_noperands(op);
    /* precision of each operand: ACCUMULATE [xs lo, x hi]; residuals [b hi, Ax hi, r, p, r0, q lo] */
    tq_precision prec[6];
    for (int i = 0; i < nop; i++)
        prec[i] = op == TQ_OP_ACCUMULATE ? (i == 0 ? lo : hi) : (i < 2 ? hi : lo);
    char what[160];
    snprintf(what, sizeof what, "%s %s/%s on %s (%s)",
             op == TQ_OP_ACCUMULATE ? "accumulate" : op == TQ_OP_RELIABLE_RESIDUAL ? "reliable residual"
             : op == TQ_OP_RELIABLE_RESIDUAL_RHO ? "reliable residual + rho" : "reliable residual + rho + <q, p>",
             tq_precision_name(hi), tq_precision_name(lo), where == TQ_WHERE_CPU ? "CPU" : "CUDA", S->name);
    const size_t n = (size_t)S->V * 24;
    tq_field *f[6] = {0};
    double *in[6] = {0}, *q[6] = {0}, *out[6] = {0};
    tq_scalars *sc = NULL;
    int ok = 1;
    for (int i = 0; i < nop && ok; i++) {
        tq_field_params fp = {TQ_FIELD_SPINOR, prec[i], S->sub, (tq_recon)0, 0};
        in[i] = malloc(n * sizeof(double));
        q[i] = malloc(n * sizeof(double));
        out[i] = malloc(n * sizeof(double));
        if (!in[i] || !q[i] || !out[i]) { fprintf(stderr, "out of memory\n"); exit(99); }
        /* sites outside the subset: 0 in every array, so the reference leaves them 0 */
        for (size_t j = 0; j < n; j++) {
            in[i][j] = uniform() * (1.0 + i);
            q[i][j] = out[i][j] = 0.0;
        }
        CHECK_OK(tq_field_create(S->lat, &fp, &f[i]));
        ok = f[i] && tq_field_import(f[i], in[i]) == TQ_SUCCESS && tq_field_export(f[i], q[i]) == TQ_SUCCESS;
    }
    CHECK(ok, "%s: set-up: %s", what, tq_last_error());
    if (ok) CHECK_OK(tq_scalars_create(&sc));
    double res[TQ_NSCALARS] = {0};
    if (ok && sc) {
        CHECK_OK(tq_set_placement(where));
        sc->snap_next = op == TQ_OP_ACCUMULATE ? -1 : 0;
        tq_status st = tq_blas_submit("test_blas_mixed", op, NULL, NULL, f, sc, 0, NULL, 0);
        CHECK(st == TQ_SUCCESS, "%s: %s", what, tq_last_error());
        if (st == TQ_SUCCESS && op != TQ_OP_ACCUMULATE) CHECK_OK(tq_scalars_read_snapshot(sc, 0, res));
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
        for (int i = 0; i < nop; i++) CHECK_OK(tq_field_export(f[i], out[i]));

        /* the reference from the stored inputs q */
        double *ref[6] = {0};
        for (int i = 0; i < nop; i++) {
            ref[i] = malloc(n * sizeof(double));
            if (!ref[i]) { fprintf(stderr, "out of memory\n"); exit(99); }
            memcpy(ref[i], q[i], n * sizeof(double));
        }
        double rr = 0.0, dre = 0.0, dim = 0.0, dscale = 0.0, qre = 0.0, qim = 0.0, qscale = 0.0;
        for (size_t j = 0; j < n; j++) {
            if (op == TQ_OP_ACCUMULATE) {
                ref[1][j] = q[1][j] + q[0][j];
                continue;
            }
            const double r1 = q[0][j] - q[1][j];
            ref[3][j] = q[3][j] + (r1 - q[2][j]);
            ref[2][j] = r1;
            rr += r1 * r1;
        }
        if (op == TQ_OP_RELIABLE_RESIDUAL_RHO || op == TQ_OP_RELIABLE_RESIDUAL_RHO_QP)
            for (size_t j = 0; j < n; j += 2) {
                const double ar = q[4][j], ai = q[4][j + 1], br = ref[2][j], bi = ref[2][j + 1];
                dre += ar * br + ai * bi;
                dim += ar * bi - ai * br;
                dscale += hypot(ar, ai) * hypot(br, bi);
            }
        if (op == TQ_OP_RELIABLE_RESIDUAL_RHO_QP)
            for (size_t j = 0; j < n; j += 2) {
                const double ar = q[5][j], ai = q[5][j + 1], br = ref[3][j], bi = ref[3][j + 1];
                qre += ar * br + ai * bi;
                qim += ar * bi - ai * br;
                qscale += hypot(ar, ai) * hypot(br, bi);
            }
        const unsigned wr = tq_blas_writes(op);
        for (int i = 0; i < nop; i++) {
            if (wr >> i & 1u) {
                const double e = tq_test_site_rel_err(out[i], ref[i], (size_t)S->V);
                CHECK(e <= storage_tol(prec[i]), "%s: operand %d: error %.3g of the site max (tol %.3g)", what, i, e,
                      storage_tol(prec[i]));
            } else {
                CHECK(memcmp(out[i], q[i], n * sizeof(double)) == 0, "%s: operand %d is only read but changed", what, i);
            }
        }
        if (op != TQ_OP_ACCUMULATE) CHECK(fabs(res[0] - rr) <= 1e-12 * rr, "%s: |r'|^2 %.17g vs %.17g", what, res[0], rr);
        if (op == TQ_OP_RELIABLE_RESIDUAL_RHO || op == TQ_OP_RELIABLE_RESIDUAL_RHO_QP)
            CHECK(fabs(res[1] - dre) <= 1e-12 * dscale && fabs(res[2] - dim) <= 1e-12 * dscale,
                  "%s: <r0, r'> (%.17g, %.17g) vs (%.17g, %.17g)", what, res[1], res[2], dre, dim);
        if (op == TQ_OP_RELIABLE_RESIDUAL_RHO_QP)
            CHECK(fabs(res[3] - qre) <= 1e-12 * qscale && fabs(res[4] - qim) <= 1e-12 * qscale,
                  "%s: <q, p'> (%.17g, %.17g) vs (%.17g, %.17g)", what, res[3], res[4], qre, qim);
        for (int i = 0; i < nop; i++) free(ref[i]);
    }
    tq_scalars_destroy(sc);
    for (int i = 0; i < nop; i++) {
        tq_field_destroy(f[i]);
        free(in[i]);
        free(q[i]);
        free(out[i]);
    }
}

int main(void)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 99;
    const int d[4] = {8, 8, 8, 12}, block[4] = {4, 4, 4, 6};
    shape S[2] = {{"even sites, one block", tq_test_lattice(d, d), TQ_EVEN, 0},
                  {"full field, 16 blocks", tq_test_lattice(d, block), TQ_FULL, 0}};
    if (!S[0].lat || !S[1].lat) return tq_test_finish("test_blas_mixed");
    for (int l = 0; l < 2; l++) S[l].V = (int64_t)d[0] * d[1] * d[2] * d[3];
    const tq_precision pairs[3][2] = {{TQ_DOUBLE, TQ_SINGLE}, {TQ_DOUBLE, TQ_HALF}, {TQ_SINGLE, TQ_HALF}};
    const int ops[4] = {TQ_OP_ACCUMULATE, TQ_OP_RELIABLE_RESIDUAL, TQ_OP_RELIABLE_RESIDUAL_RHO,
                        TQ_OP_RELIABLE_RESIDUAL_RHO_QP};
    const tq_where wheres[2] = {TQ_WHERE_CPU, TQ_WHERE_CUDA};
    const int nwhere = info.ncuda_workers > 0 ? 2 : 1;
    if (nwhere == 1) printf("no CUDA worker: the CUDA cases are skipped (CPU workers only)\n");
    for (int w = 0; w < nwhere; w++)
        for (int l = 0; l < 2; l++)
            for (int pr = 0; pr < 3; pr++)
                for (int o = 0; o < 4; o++) run_case(&S[l], ops[o], pairs[pr][0], pairs[pr][1], wheres[w]);

    /* precision rules: r in the precise precision is refused */
    tq_field *b = NULL, *ax = NULL, *r = NULL, *p = NULL;
    tq_field_params fd = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_EVEN, (tq_recon)0, 0}, fs = fd;
    fs.prec = TQ_SINGLE;
    tq_scalars *sc = NULL;
    CHECK_OK(tq_field_create(S[0].lat, &fd, &b));
    CHECK_OK(tq_field_create(S[0].lat, &fd, &ax));
    CHECK_OK(tq_field_create(S[0].lat, &fs, &r));
    CHECK_OK(tq_field_create(S[0].lat, &fd, &p));
    CHECK_OK(tq_scalars_create(&sc));
    if (b && ax && r && p && sc) {
        tq_field *f[4] = {b, ax, r, p};
        CHECK_ERR(tq_blas_submit("test_blas_mixed", TQ_OP_RELIABLE_RESIDUAL, NULL, NULL, f, sc, 0, NULL, 0),
                  TQ_ERR_MISMATCH);
    }
    tq_scalars_destroy(sc);
    tq_field_destroy(b);
    tq_field_destroy(ax);
    tq_field_destroy(r);
    tq_field_destroy(p);
    for (int l = 0; l < 2; l++) tq_lattice_destroy(S[l].lat);
    tq_finalize();
    return tq_test_finish("test_blas_mixed");
}
