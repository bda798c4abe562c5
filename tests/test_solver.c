/* Krylov solvers (tq_solve) on the Wilson and clover operators: every inverter with every
 * solve type it accepts reaches the tolerance, with the true residual |b - M x| / |b|
 * recomputed here from the plain-loop reference operator (tests/wilson_reference.h), not
 * taken from the library; single precision to its own tolerance; error handling: bad
 * parameters, maxiter exhausted, a NaN source, and a singular system (the free Wilson
 * operator at kappa = 1/8 with periodic boundaries and its zero mode as the source), which
 * must return the documented errors, not hang or report success. Mixed precision: double
 * outer with single and half sloppy operators (reliable updates and defect correction) reach
 * 1e-10, and reliable updates cost at most about 30 % more iterations than pure double (the
 * table is printed). Several systems solved together (tq_solve_many) give the solutions
 * of one-by-one solves. Built twice: test_solver on CPU workers, test_solver_cuda on CUDA
 * workers. Quick (tq_test_quick, the sanitizer run): on the real configuration
 * (lat.sample.l8888) GCR alone. */
#include "taskqcd.h"
#include "tq_test.h"
#include "../reference/wilson_reference.h"
#include "dirac_test_util.h"
#include "solvers/solver_internal.h"   /* tq_internal_solver_fused_iterations, _queued_ahead */
#include "core/placement.h"           /* tq_internal_blocks_share_worker */
#include "dirac/dirac_internal.h"     /* tq_internal_dirac_can_fuse, tq_internal_force_faces */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef TQ_TEST_CUDA
#define TEST_NAME "test_solver_cuda"
#define WHERE TQ_WHERE_CUDA
#else
#define TEST_NAME "test_solver"
#define WHERE TQ_WHERE_CPU
#endif

#define KAPPA 0.12
#define CSW 1.5

/* |b - M x| / |b| with the reference operator (x exported from the library). */
static double reference_residual(const setup *S, const tq_host_gauge *hg, const tq_dirac_params *dp,
                                 const tq_field *x, const double *b)
{
    const int64_t n = 24 * ref_volume(S->dims);
    double *hx = malloc(n * sizeof *hx), *mx = malloc(n * sizeof *mx);
    CHECK_OK(tq_field_export(x, hx));
    if (dp->type == TQ_DSLASH_CLOVER) ref_clover_mat(mx, hg->links, hx, S->dims, S->bc, dp->kappa, dp->csw, 0);
    else ref_wilson_mat(mx, hg->links, hx, S->dims, S->bc, dp->kappa, 0);
    double r2 = ref_vdiff2(b, mx, n), b2 = ref_vnorm2(b, n);
    free(hx);
    free(mx);
    return sqrt(r2 / b2);
}

static void solve_case(const setup *S, const tq_host_gauge *hg, const tq_dirac_params *dp, tq_precision prec,
                       tq_inverter inv, tq_solve_type type, const double *b, const char *what)
{
    tq_field *x = spinor(S, prec, TQ_FULL, NULL), *fb = spinor(S, prec, TQ_FULL, b);
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.inverter = inv;
    sp.solve_type = type;
    sp.tol = prec == TQ_DOUBLE ? 1e-10 : 1e-5;
    sp.maxiter = 2000;
    tq_solver_result res;
    tq_status st = tq_solve(S->dirac, x, fb, &sp, &res);
    CHECK(st == TQ_SUCCESS, "%s %s %s %s: tq_solve failed: %s", what, tq_precision_name(prec), tq_inverter_name(inv),
          tq_solve_type_name(type), tq_last_error());
    if (st == TQ_SUCCESS) {
        /* normal equations: |r_NR| < tol |M^dag b| bounds the true residual by about
         * cond(M) tol; these operators are well conditioned (kappa 0.12) */
        double allowed = 20 * sp.tol + (prec == TQ_DOUBLE ? 0 : 1e-6);
        double rr = reference_residual(S, hg, dp, x, b);
        printf("  %-6s %-6s %-8s %-9s %4d iterations, iterated %.2e, true %.2e (library %.2e), %.1f MFLOP\n", what,
               tq_precision_name(prec), tq_inverter_name(inv), tq_solve_type_name(type), res.iterations, res.residual,
               rr, res.true_residual, res.flops * 1e-6);
        CHECK(res.residual <= sp.tol, "%s %s: iterated residual %.3g above tol", what, tq_inverter_name(inv), res.residual);
        CHECK(rr <= allowed, "%s %s %s %s: true residual %.3g > %.3g", what, tq_precision_name(prec),
              tq_inverter_name(inv), tq_solve_type_name(type), rr, allowed);
        CHECK(fabs(rr - res.true_residual) <= 0.05 * rr + (prec == TQ_DOUBLE ? 1e-13 : 1e-6),
              "%s: library true residual %.3g vs reference %.3g", what, res.true_residual, rr);
        CHECK(res.iterations > 0 && res.flops > 0 && res.seconds > 0, "%s: counts reported", what);
    }
    tq_field_destroy(x);
    tq_field_destroy(fb);
}

static void test_operator(const int dims[4], const int *block, const tq_host_gauge *hg, const tq_dirac_params *dp,
                          const double *b, const char *what)
{
    static const struct { tq_inverter inv; tq_solve_type type; } cases[] = {
        {TQ_INV_CG, TQ_SOLVE_DIRECT_PC}, {TQ_INV_CG, TQ_SOLVE_NORMOP_PC}, {TQ_INV_CG, TQ_SOLVE_DIRECT},
        {TQ_INV_CG, TQ_SOLVE_NORMOP}, {TQ_INV_BICGSTAB, TQ_SOLVE_DIRECT_PC}, {TQ_INV_BICGSTAB, TQ_SOLVE_DIRECT},
        {TQ_INV_BICGSTAB, TQ_SOLVE_NORMOP_PC}, {TQ_INV_CGNR, TQ_SOLVE_DIRECT_PC}, {TQ_INV_CGNE, TQ_SOLVE_DIRECT_PC},
        {TQ_INV_CGNE, TQ_SOLVE_DIRECT}, {TQ_INV_MR, TQ_SOLVE_DIRECT_PC}, {TQ_INV_MR, TQ_SOLVE_DIRECT},
    };
    for (int pi = 0; pi < 2; pi++) {
        tq_precision prec = pi == 0 ? TQ_DOUBLE : TQ_SINGLE;
        setup S;
        if (setup_make_op(&S, dims, block, hg, prec, TQ_RECON_12, dp->kappa, dp) == 0) {
            for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
                if (prec == TQ_SINGLE && c != 0 && c != 4 && c != 10) continue;   /* single: CG, BiCGstab, MR, direct-pc */
                solve_case(&S, hg, dp, prec, cases[c].inv, cases[c].type, b, what);
            }
        }
        setup_free(&S);
    }
}

/* Mixed precision against pure double on one operator: iterations and true residuals. */
static void test_mixed(const int dims[4], const tq_host_gauge *hg, const tq_dirac_params *dp, const double *b,
                       const char *what)
{
    setup S;
    if (setup_make_op(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_18, dp->kappa, dp) != 0) { setup_free(&S); return; }
    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
    printf("  mixed precision, %s (tol 1e-10, delta 0.1): inverter, sloppy precision/recon, scheme: iterations "
           "(reliable updates), true residual\n", what);
    for (int inv = 0; inv < 3; inv++) {
        int base = 0;
        for (int c = 0; c < 5; c++) {
            static const struct { tq_precision prec; tq_recon recon; tq_mixed m; } mc[5] = {
                {0, 0, TQ_MIXED_RELIABLE}, {TQ_SINGLE, TQ_RECON_12, TQ_MIXED_RELIABLE}, {TQ_HALF, TQ_RECON_12, TQ_MIXED_RELIABLE},
                {TQ_SINGLE, TQ_RECON_8, TQ_MIXED_RELIABLE}, {TQ_SINGLE, TQ_RECON_12, TQ_MIXED_DEFECT}};
            tq_solver_params sp;
            tq_solver_params_default(&sp);
            sp.inverter = inv == 2 ? TQ_INV_MR : inv ? TQ_INV_BICGSTAB : TQ_INV_CG;
            sp.prec_sloppy = mc[c].prec;
            sp.recon_sloppy = mc[c].recon;
            sp.mixed = mc[c].m;
            sp.maxiter = 3000;
            tq_solver_result res;
            tq_status st = tq_solve(S.dirac, x, fb, &sp, &res);
            const char *pn = mc[c].prec ? tq_precision_name(mc[c].prec) : "double";
            CHECK(st == TQ_SUCCESS, "%s mixed %s %s recon %d: %s", what, tq_inverter_name(sp.inverter), pn,
                  (int)mc[c].recon, tq_last_error());
            if (st != TQ_SUCCESS) continue;
            double rr = reference_residual(&S, hg, dp, x, b);
            printf("    %-8s %-6s %2d %-8s %4d (%2d) %.2e\n", tq_inverter_name(sp.inverter), pn, mc[c].recon ? (int)mc[c].recon : 18,
                   mc[c].m == TQ_MIXED_DEFECT ? "defect" : "reliable", res.iterations, res.reliable_updates, rr);
            CHECK(rr <= 3e-9, "%s mixed %s %s: true residual %.3g", what, tq_inverter_name(sp.inverter), pn, rr);
            if (c == 0) base = res.iterations;
            else if (mc[c].m == TQ_MIXED_RELIABLE && mc[c].prec == TQ_SINGLE)
                CHECK(res.iterations <= 1.3 * base + 2, "%s %s reliable single: %d iterations vs %d in double", what,
                      tq_inverter_name(sp.inverter), res.iterations, base);
            if (c > 0) CHECK(res.reliable_updates > 0, "%s: mixed solve made no reliable update", what);
        }
    }
    tq_field_destroy(x);
    tq_field_destroy(fb);
    setup_free(&S);
}

/* CG on M_pc^dag M_pc (normop-pc) and BiCGstab on M_pc (direct-pc) with their reductions
 * fused into the operator's last kernels (the default: on one block one kernel, on several
 * blocks each block's interior and exterior task write partial sums that a combine task
 * adds) against the separate BLAS reductions
 * (TQ_SOLVER_FUSE=0): the fused path must actually run (the library's counter), reach the
 * tolerance with the true residual checked here, and follow the unfused iteration closely:
 * the same iterations (+-1) and the same solution to 1e-8 in double; sloppy single and half
 * with reliable updates within 10 % of the unfused iterations (on several blocks with
 * TQ_SPLIT_FUSE=0, which turns their fusion off, the fused path must not run). block: the
 * block extent. */
static void test_fused(const int dims[4], const int block[4], const tq_host_gauge *hg, const tq_dirac_params *dp,
                       const double *b, const char *what)
{
    setup S;
    if (setup_make_op(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_18, dp->kappa, dp) != 0) { setup_free(&S); return; }
    const int64_t n = 24 * ref_volume(dims);
    double *h[2] = {malloc(n * sizeof(double)), malloc(n * sizeof(double))};
    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
    printf("  CG normop-pc and BiCGstab direct-pc with fused operator reductions vs separate ones, %s: "
           "iterations (reliable updates), true residual\n", what);
    static const tq_precision sloppy[3] = {0, TQ_SINGLE, TQ_HALF};
    const int can_fuse = tq_internal_dirac_can_fuse(S.dirac);
    for (int c = 0; c < 6; c++) {
        const int bicg = c >= 3;
        tq_solver_params sp;
        tq_solver_params_default(&sp);
        sp.inverter = bicg ? TQ_INV_BICGSTAB : TQ_INV_CG;
        sp.solve_type = bicg ? TQ_SOLVE_DIRECT_PC : TQ_SOLVE_NORMOP_PC;
        sp.prec_sloppy = sloppy[c % 3];
        sp.maxiter = 3000;
        tq_solver_result r[2];
        double rr[2] = {0, 0};
        for (int fused = 0; fused < 2; fused++) {
            setenv("TQ_SOLVER_FUSE", fused ? "1" : "0", 1);
            const long before = tq_internal_solver_fused_iterations();
            tq_status st = tq_solve(S.dirac, x, fb, &sp, &r[fused]);
            const long ran = tq_internal_solver_fused_iterations() - before;
            CHECK(st == TQ_SUCCESS, "%s fused %d sloppy %d: %s", what, fused, c, tq_last_error());
            if (st != TQ_SUCCESS) { r[fused].iterations = 0; continue; }
            CHECK(fused && can_fuse ? ran >= r[fused].iterations : ran == 0, "%s: %ld fused iterations ran in a "
                  "solve of %d iterations (fusion %s)", what, ran, r[fused].iterations, fused && can_fuse ? "on" : "off");
            CHECK_OK(tq_field_export(x, h[fused]));
            rr[fused] = reference_residual(&S, hg, dp, x, b);
            CHECK(rr[fused] <= 3e-9, "%s fused %d sloppy %d: true residual %.3g", what, fused, c, rr[fused]);
        }
        unsetenv("TQ_SOLVER_FUSE");
        const char *pn = c % 3 ? tq_precision_name(sloppy[c % 3]) : "double";
        printf("    %-8s %-6s fused %4d (%d) %.2e, separate %4d (%d) %.2e\n", tq_inverter_name(sp.inverter), pn,
               r[1].iterations, r[1].reliable_updates, rr[1], r[0].iterations, r[0].reliable_updates, rr[0]);
        if (c % 3 == 0) {
            const double e = sqrt(ref_vdiff2(h[0], h[1], n) / ref_vnorm2(h[0], n));
            CHECK(abs(r[1].iterations - r[0].iterations) <= 1 && e <= 1e-8, "%s double: fused %d iterations vs %d, "
                  "solutions differ by %.3g", what, r[1].iterations, r[0].iterations, e);
        } else {
            CHECK(abs(r[1].iterations - r[0].iterations) <= 2 + r[0].iterations / 10, "%s %s: fused %d iterations vs %d",
                  what, pn, r[1].iterations, r[0].iterations);
        }
    }
    tq_field_destroy(x);
    tq_field_destroy(fb);
    free(h[0]); free(h[1]);
    setup_free(&S);
}

#ifdef TQ_TEST_CUDA
/* Several sites per thread in the reduction kernels: their grid limited to 2 thread blocks
 * (tq_internal_reduction_grid_limit) on 2 blocks of 8^3x8 (2048 sites a parity: 16 thread
 * blocks otherwise), so that each thread strides over 8 sites, some on the split faces,
 * which the interior kernel through faces leaves to the exterior task. Through faces and in
 * place the solves must give the same bits and iterations: BiCGstab with single and half
 * reliable updates (kernels that stage their epilogue's fields in shared memory), CG on the
 * normal equations with single. A skipped face site's staged copy once stayed in flight and
 * landed over the next site's (NaN scalars in the 48^4 solve on two H200). */
static void test_strided(const tq_dirac_params *dp, const char *what)
{
    const int dims[4] = {8, 8, 8, 16}, block[4] = {8, 8, 8, 8};
    const int64_t vol = ref_volume(dims), n = 24 * vol;
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, dims));
    CHECK_OK(tq_host_gauge_weak(&hg, 5, 0.3));
    double *b = malloc(n * sizeof *b), *sol[2][3] = {{0}};
    ref_spinor_random(b, vol, 3);
    int iters[2][3] = {{0}};
    tq_internal_reduction_grid_limit(2);
    printf("  several sites per thread (2 thread blocks), %s, 2 blocks of 8^3x8: in place and through faces\n", what);
    for (int faces = 0; faces < 2; faces++) {
        tq_internal_force_faces(faces);
        setup S;
        if (setup_make_op(&S, dims, block, &hg, TQ_DOUBLE, TQ_RECON_18, dp->kappa, dp) != 0) { setup_free(&S); break; }
        tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
        for (int c = 0; c < 3; c++) {
            tq_solver_params sp;
            tq_solver_params_default(&sp);
            sp.maxiter = 3000;
            sp.inverter = c < 2 ? TQ_INV_BICGSTAB : TQ_INV_CG;
            sp.solve_type = c < 2 ? TQ_SOLVE_DIRECT_PC : TQ_SOLVE_NORMOP_PC;
            sp.prec_sloppy = c == 1 ? TQ_HALF : TQ_SINGLE;
            tq_solver_result r;
            const long before = tq_internal_solver_fused_iterations();
            tq_status st = tq_solve(S.dirac, x, fb, &sp, &r);
            CHECK(st == TQ_SUCCESS, "%s %s case %d: %s", what, faces ? "faces" : "in place", c, tq_last_error());
            if (st != TQ_SUCCESS) continue;
            /* TQ_SPLIT_FUSE=0 turns the fused iteration off on several blocks */
            const long fused = tq_internal_solver_fused_iterations() - before;
            CHECK(!tq_internal_dirac_can_fuse(S.dirac) || fused >= r.iterations,
                  "%s case %d: the fused iteration did not run", what, c);
            sol[faces][c] = malloc(n * sizeof(double));
            CHECK_OK(tq_field_export(x, sol[faces][c]));
            iters[faces][c] = r.iterations;
            const double rr = reference_residual(&S, &hg, dp, x, b);
            CHECK(rr <= 3e-9, "%s %s case %d: true residual %.3g", what, faces ? "faces" : "in place", c, rr);
        }
        tq_field_destroy(x);
        tq_field_destroy(fb);
        setup_free(&S);
    }
    for (int c = 0; c < 3; c++) {
        if (!sol[0][c] || !sol[1][c]) continue;
        const int same = memcmp(sol[0][c], sol[1][c], n * sizeof(double)) == 0;
        printf("    %-8s %-6s in place %4d iterations, faces %4d: %s\n", c < 2 ? "BiCGstab" : "CG",
               c == 1 ? "half" : "single", iters[0][c], iters[1][c], same ? "the same bits" : "DIFFERENT");
        CHECK(same && iters[0][c] == iters[1][c], "%s case %d: through faces %d iterations, in place %d, solutions %s",
              what, c, iters[1][c], iters[0][c], same ? "the same" : "differ");
    }
    tq_internal_force_faces(-1);
    tq_internal_reduction_grid_limit(0);
    for (int f = 0; f < 2; f++)
        for (int c = 0; c < 3; c++) free(sol[f][c]);
    free(b);
    tq_host_gauge_free(&hg);
}
#endif

/* What test_chain and test_mirror compare two ways: the operator on one block or on split
 * blocks, the source, a solution field and the two solutions exported. */
typedef struct same_bits {
    setup S;
    int64_t n;
    double *h[2];
    tq_field *x, *fb;
} same_bits;

static int same_bits_open(same_bits *T, const int dims[4], const int *block, const tq_host_gauge *hg,
                          const tq_dirac_params *dp, const double *b)
{
    if (setup_make_op(&T->S, dims, block, hg, TQ_DOUBLE, TQ_RECON_18, dp->kappa, dp) != 0) {
        setup_free(&T->S);
        return -1;
    }
    T->n = 24 * ref_volume(dims);
    T->h[0] = malloc(T->n * sizeof(double));
    T->h[1] = malloc(T->n * sizeof(double));
    T->x = spinor(&T->S, TQ_DOUBLE, TQ_FULL, NULL);
    T->fb = spinor(&T->S, TQ_DOUBLE, TQ_FULL, b);
    return 0;
}

static void same_bits_close(same_bits *T)
{
    tq_field_destroy(T->x);
    tq_field_destroy(T->fb);
    free(T->h[0]);
    free(T->h[1]);
    setup_free(&T->S);
}

/* The solves test_chain and test_mirror compare, c = 0..5: fused BiCGstab, fused CG (normal
 * equations), BiCGstab with half reliable updates, CG with separate BLAS (TQ_SOLVER_FUSE,
 * set here; the caller unsets it), MR, GCR with an MR preconditioner. */
static void solver_case(int c, tq_solver_params *sp)
{
    tq_solver_params_default(sp);
    sp->maxiter = 3000;
    const char *fuse = "1";
    switch (c) {
    case 0: sp->inverter = TQ_INV_BICGSTAB; sp->solve_type = TQ_SOLVE_DIRECT_PC; break;
    case 1: sp->inverter = TQ_INV_CG; sp->solve_type = TQ_SOLVE_NORMOP_PC; break;
    case 2: sp->inverter = TQ_INV_BICGSTAB; sp->solve_type = TQ_SOLVE_DIRECT_PC; sp->prec_sloppy = TQ_HALF; break;
    case 3: sp->inverter = TQ_INV_CG; sp->solve_type = TQ_SOLVE_NORMOP_PC; fuse = "0"; break;
    case 4: sp->inverter = TQ_INV_MR; sp->solve_type = TQ_SOLVE_DIRECT_PC; break;
    default: sp->inverter = TQ_INV_GCR; sp->solve_type = TQ_SOLVE_DIRECT_PC; sp->precond = TQ_PRECOND_MR; break;
    }
    setenv("TQ_SOLVER_FUSE", fuse, 1);
}

/* Each iteration's tasks as one chain task (one block: the default) against one task each
 * (TQ_CHAIN=0): the chain runs the same kernels in the same order, so the solutions
 * are identical to the bit, with the same iterations and reliable updates; the chain
 * path must actually run (the library's counter: at least one chain per iteration), and
 * not at all on several blocks, where the blocks' tasks run side by side. */
static void test_chain(const int dims[4], const int *split, const tq_host_gauge *hg, const tq_dirac_params *dp,
                       const double *b, const char *what)
{
    printf("  iterations as one chain task vs one task each, %s: inverter, solve type, sloppy: "
           "iterations (reliable updates), chain tasks\n", what);
    for (int blocks = 0; blocks < 2; blocks++) {
        same_bits T;
        if (same_bits_open(&T, dims, blocks ? split : dims, hg, dp, b)) return;
        const int64_t n = T.n;
        double **h = T.h;
        tq_field *x = T.x, *fb = T.fb;
        for (int c = 0; c < (blocks ? 1 : 6); c++) {
            tq_solver_params sp;
            solver_case(c, &sp);
            tq_solver_result r[2];
            long chains[2];
            for (int chained = 0; chained < 2; chained++) {
                setenv("TQ_CHAIN", chained ? "1" : "0", 1);
                const long before = tq_internal_chains_submitted();
                tq_status st = tq_solve(T.S.dirac, x, fb, &sp, &r[chained]);
                chains[chained] = tq_internal_chains_submitted() - before;
                CHECK(st == TQ_SUCCESS, "%s case %d chained %d: %s", what, c, chained, tq_last_error());
                if (st != TQ_SUCCESS) { memset(&r[chained], 0, sizeof r[chained]); continue; }
                CHECK_OK(tq_field_export(x, h[chained]));
                CHECK(r[chained].true_residual <= 3e-9, "%s case %d chained %d: true residual %.3g", what, c, chained,
                      r[chained].true_residual);
            }
            unsetenv("TQ_CHAIN");
            unsetenv("TQ_SOLVER_FUSE");
            printf("    %s %-8s %-10s %-6s %4d (%d) chained, %4d (%d) one task each; %ld chain tasks\n",
                   blocks ? "2 blocks" : "1 block ", tq_inverter_name(sp.inverter), c == 1 || c == 3 ? "normop-pc" : "direct-pc",
                   c == 2 ? "half" : "double", r[1].iterations, r[1].reliable_updates, r[0].iterations,
                   r[0].reliable_updates, chains[1]);
            const double e = sqrt(ref_vdiff2(h[0], h[1], n) / ref_vnorm2(h[0], n));
            CHECK(e == 0.0 && r[0].iterations == r[1].iterations && r[0].reliable_updates == r[1].reliable_updates,
                  "%s case %d: chained and unchained solutions differ by %.3g (%d vs %d iterations)", what, c, e,
                  r[1].iterations, r[0].iterations);
            CHECK(chains[0] == 0, "%s case %d: %ld chain tasks with TQ_CHAIN=0", what, c, chains[0]);
            /* several blocks chain where they all run on one worker (one GPU) or each has an
             * owner (a chain per owner), not where the scheduler spreads them over workers */
            if (blocks && (tq_internal_blocks_share_worker(T.S.lat) || tq_internal_blocks_owned(T.S.lat)))
                CHECK(chains[1] > 0, "%s: no chain task on several blocks of one worker or with owners", what);
            else if (blocks) CHECK(chains[1] == 0, "%s: %ld chain tasks on blocks without owners", what, chains[1]);
            else CHECK(chains[1] >= (r[1].iterations + 1) / 2, "%s case %d: %ld chain tasks for %d iterations (two per "
                       "chain at most)", what, c, chains[1], r[1].iterations);
        }
        same_bits_close(&T);
    }
}

/* Snapshot mirrors (src/blas/blas.c): the host reads each iteration's scalars from a copy in host
 * memory that the task writing them also writes, or through StarPU. Both are the same
 * values, so the solutions must be identical to the bit, with the same iterations; with
 * mirrors every read must come from one (a task that wrote its snapshot but not its mirror
 * would show up as a read through StarPU), without them none. One block (reductions ending
 * in the operator's and the BLAS kernels) and two (the combine task). */
static void test_mirror(const int dims[4], const int *split, const tq_host_gauge *hg, const tq_dirac_params *dp,
                        const double *b, const char *what)
{
    printf("  snapshots read through mirrors vs through StarPU, %s: inverter, solve type, sloppy: iterations, "
           "reads (mirrored / through StarPU)\n", what);
    for (int blocks = 0; blocks < 2; blocks++) {
        same_bits T;
        if (same_bits_open(&T, dims, blocks ? split : dims, hg, dp, b)) return;
        const int64_t n = T.n;
        double **h = T.h;
        tq_field *x = T.x, *fb = T.fb;
        for (int c = 0; c < (blocks ? 2 : 6); c++) {
            tq_solver_params sp;
            solver_case(c, &sp);
            if (c == 1) sp.prec_sloppy = TQ_SINGLE;   /* reliable updates in CG too */
            tq_solver_result r[2];
            long mirrored[2], through[2];
            for (int on = 0; on < 2; on++) {
                tq_internal_snapshot_mirrors(on);
                long m0, t0, m1, t1;
                tq_internal_snapshot_reads(&m0, &t0);
                tq_status st = tq_solve(T.S.dirac, x, fb, &sp, &r[on]);
                tq_internal_snapshot_reads(&m1, &t1);
                mirrored[on] = m1 - m0;
                through[on] = t1 - t0;
                CHECK(st == TQ_SUCCESS, "%s case %d mirrors %d: %s", what, c, on, tq_last_error());
                if (st != TQ_SUCCESS) { memset(&r[on], 0, sizeof r[on]); continue; }
                CHECK_OK(tq_field_export(x, h[on]));
                CHECK(r[on].true_residual <= 3e-9, "%s case %d mirrors %d: true residual %.3g", what, c, on,
                      r[on].true_residual);
            }
            tq_internal_snapshot_mirrors(-1);
            unsetenv("TQ_SOLVER_FUSE");
            printf("    %s %-8s %-10s %-6s %4d (%d) with mirrors, reads %ld / %ld; %4d (%d) without, reads %ld / %ld\n",
                   blocks ? "2 blocks" : "1 block ", tq_inverter_name(sp.inverter), c == 1 || c == 3 ? "normop-pc" : "direct-pc",
                   sp.prec_sloppy ? tq_precision_name(sp.prec_sloppy) : "double", r[1].iterations, r[1].reliable_updates,
                   mirrored[1], through[1], r[0].iterations, r[0].reliable_updates, mirrored[0], through[0]);
            const double e = sqrt(ref_vdiff2(h[0], h[1], n) / ref_vnorm2(h[0], n));
            CHECK(e == 0.0 && r[0].iterations == r[1].iterations && r[0].reliable_updates == r[1].reliable_updates,
                  "%s case %d: solutions with and without mirrors differ by %.3g (%d vs %d iterations)", what, c, e,
                  r[1].iterations, r[0].iterations);
            CHECK(mirrored[1] >= r[1].iterations && through[1] == 0, "%s case %d: with mirrors %ld reads mirrored, %ld "
                  "through StarPU, for %d iterations", what, c, mirrored[1], through[1], r[1].iterations);
            CHECK(mirrored[0] == 0 && through[0] >= r[0].iterations, "%s case %d: without mirrors %ld reads mirrored, "
                  "%ld through StarPU", what, c, mirrored[0], through[0]);
        }
        same_bits_close(&T);
    }
}

/* Pipelined iterations (the next one queued before the host reads this one's residual; the
 * default) against one at a time (TQ_SOLVER_PIPELINE=0). Where every reliable update is
 * triggered by the tolerance (uniform precision; a tiny delta) both do the same arithmetic:
 * identical solutions. A tiny delta (below the tolerance) with defect correction takes the path where the
 * iterated residual reaches the tolerance, the queued iteration is held back, the true
 * residual is above the tolerance and the iterations go on. With the default delta the
 * pipelined update comes one iteration later: both converge in about as many iterations. */
static void test_pipeline(const int dims[4], const tq_host_gauge *hg, const tq_dirac_params *dp, const double *b,
                          const char *what)
{
    setup S;
    if (setup_make_op(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_18, dp->kappa, dp) != 0) { setup_free(&S); return; }
    const int64_t n = 24 * ref_volume(dims);
    double *h1 = malloc(n * sizeof *h1), *h2 = malloc(n * sizeof *h2);
    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
    printf("  pipelined vs one iteration at a time, %s: inverter, mode: iterations (reliable updates) each\n", what);
    for (int inv = 0; inv < 5; inv++)
        for (int mode = 0; mode < 3; mode++) {
            tq_solver_params sp;
            tq_solver_params_default(&sp);
            sp.inverter = inv >= 3 ? TQ_INV_GCR : inv == 2 ? TQ_INV_MR : inv ? TQ_INV_BICGSTAB : TQ_INV_CG;
            if (inv >= 3) sp.solve_type = TQ_SOLVE_DIRECT_PC;
            if (inv == 4) sp.precond = TQ_PRECOND_MR;   /* GCR, 8 directions a cycle: restarts too */
            sp.maxiter = 3000;
            if (mode > 0) sp.prec_sloppy = TQ_SINGLE;
            if (mode == 1) { sp.mixed = TQ_MIXED_DEFECT; sp.reliable_delta = 1e-12; }
            tq_solver_result r[2];
            long ahead[2];
            for (int pipe = 0; pipe < 2; pipe++) {
                setenv("TQ_SOLVER_PIPELINE", pipe ? "1" : "0", 1);
                const long before = tq_internal_solver_queued_ahead();
                CHECK_OK(tq_solve(S.dirac, x, fb, &sp, &r[pipe]));
                ahead[pipe] = tq_internal_solver_queued_ahead() - before;
                CHECK_OK(tq_field_export(x, pipe ? h1 : h2));
                CHECK(r[pipe].true_residual <= 3e-9, "%s %s mode %d pipeline %d: true residual %.3g", what,
                      tq_inverter_name(sp.inverter), mode, pipe, r[pipe].true_residual);
            }
            unsetenv("TQ_SOLVER_PIPELINE");
            const char *mn = mode == 0 ? "double" : mode == 1 ? "single defect delta 1e-12" : "single reliable";
            printf("    %-8s %-25s %4d (%d) pipelined (%ld queued ahead), %4d (%d) one at a time\n",
                   inv == 4 ? "GCR+MR" : tq_inverter_name(sp.inverter), mn, r[1].iterations, r[1].reliable_updates,
                   ahead[1], r[0].iterations, r[0].reliable_updates);
            /* every iteration but the first after a (re)start is queued ahead of the host */
            CHECK(ahead[0] == 0 && ahead[1] >= r[1].iterations / 2, "%s %s %s: %ld iterations queued ahead pipelined "
                  "(of %d), %ld one at a time", what, tq_inverter_name(sp.inverter), mn, ahead[1], r[1].iterations,
                  ahead[0]);
            if (mode < 2) {
                double e = sqrt(ref_vdiff2(h1, h2, n) / ref_vnorm2(h2, n));
                CHECK(e == 0.0 && r[0].iterations == r[1].iterations && r[0].reliable_updates == r[1].reliable_updates,
                      "%s %s %s: pipelined and one-at-a-time solutions differ by %.3g (%d vs %d iterations)", what,
                      tq_inverter_name(sp.inverter), mn, e, r[1].iterations, r[0].iterations);
            } else {
                CHECK(abs(r[1].iterations - r[0].iterations) <= 2 + r[0].iterations / 10, "%s %s %s: %d iterations "
                      "pipelined vs %d", what, tq_inverter_name(sp.inverter), mn, r[1].iterations, r[0].iterations);
            }
        }
    tq_field_destroy(x);
    tq_field_destroy(fb);
    free(h1); free(h2);
    setup_free(&S);
}

/* Three systems together give the one-by-one solutions (same arithmetic: each system has
 * its own operator work fields, reductions are in a fixed order). */
static void test_many(const int dims[4], const tq_host_gauge *hg, const tq_dirac_params *dp, const char *what)
{
    setup S;
    if (setup_make_op(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_12, dp->kappa, dp) != 0) { setup_free(&S); return; }
    const int64_t n = 24 * ref_volume(dims);
    double *hb = malloc(n * sizeof *hb), *h1 = malloc(n * sizeof *h1), *h2 = malloc(n * sizeof *h2);
    tq_field *x[3], *b[3], *xi = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
    for (int i = 0; i < 3; i++) {
        ref_spinor_random(hb, ref_volume(dims), 100 + i);
        b[i] = spinor(&S, TQ_DOUBLE, TQ_FULL, hb);
        x[i] = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
    }
    for (int inv = 0; inv < 2; inv++) {
        tq_solver_params sp;
        tq_solver_params_default(&sp);
        sp.inverter = inv ? TQ_INV_BICGSTAB : TQ_INV_CG;
        sp.prec_sloppy = TQ_SINGLE;
        tq_solver_result res[3], one, plain[3];
        /* without snapshot mirrors the systems are checked in a fixed turn; with them
         * whichever is ready first (src/solvers/solver.c): the same solutions, bit for bit */
        double *hp = malloc(3 * n * sizeof *hp);
        tq_internal_snapshot_mirrors(0);
        CHECK_OK(tq_solve_many(S.dirac, 3, x, (const tq_field *const *)b, &sp, plain));
        for (int i = 0; i < 3 && hp; i++) CHECK_OK(tq_field_export(x[i], hp + i * n));
        tq_internal_snapshot_mirrors(1);
        CHECK_OK(tq_solve_many(S.dirac, 3, x, (const tq_field *const *)b, &sp, res));
        tq_internal_snapshot_mirrors(-1);
        for (int i = 0; i < 3 && hp; i++) {
            CHECK_OK(tq_field_export(x[i], h1));
            CHECK(ref_vdiff2(h1, hp + i * n, n) == 0.0 && res[i].iterations == plain[i].iterations,
                  "%s %s system %d: ready-first and fixed-turn checks differ (%d vs %d iterations)", what,
                  tq_inverter_name(sp.inverter), i, res[i].iterations, plain[i].iterations);
        }
        free(hp);
        for (int i = 0; i < 3; i++) {
            CHECK_OK(tq_solve(S.dirac, xi, b[i], &sp, &one));
            CHECK_OK(tq_field_export(x[i], h1));
            CHECK_OK(tq_field_export(xi, h2));
            double e = sqrt(ref_vdiff2(h1, h2, n) / ref_vnorm2(h2, n));
            CHECK(e <= 1e-14 && res[i].iterations == one.iterations, "%s %s system %d: together vs alone differ by %.3g "
                  "(%d vs %d iterations)", what, tq_inverter_name(sp.inverter), i, e, res[i].iterations, one.iterations);
            CHECK(res[i].true_residual <= 3e-9, "%s system %d: true residual %.3g", what, i, res[i].true_residual);
        }
    }
    /* systems stopped by maxiter: the error is the first system's, with its own residual
     * (each system's reason is kept when it stops; the others stop after it) */
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.maxiter = 3;
    tq_solver_result r3[3];
    CHECK_ERR(tq_solve_many(S.dirac, 3, x, (const tq_field *const *)b, &sp, r3), TQ_ERR_NOT_CONVERGED);
    char want[64];
    snprintf(want, sizeof want, "relative residual %.3e", r3[0].residual);
    CHECK(strstr(tq_last_error(), "system 1 of 3") && strstr(tq_last_error(), want) && r3[0].residual != r3[2].residual,
          "%s: three systems stopped by maxiter: the error '%s' should be system 1's, with its '%s' (system 3: %.3e)",
          what, tq_last_error(), want, r3[2].residual);
    /* errors: a shared solution field */
    tq_field *xx[2] = {x[0], x[0]};
    tq_solver_params_default(&sp);
    tq_solver_result r2[2];
    CHECK_ERR(tq_solve_many(S.dirac, 2, xx, (const tq_field *const *)b, &sp, r2), TQ_ERR_INVALID_ARG);
    for (int i = 0; i < 3; i++) { tq_field_destroy(x[i]); tq_field_destroy(b[i]); }
    tq_field_destroy(xi);
    free(hb); free(h1); free(h2);
    setup_free(&S);
}

/* GCR: plain, with restarts (2 directions per cycle), with the MR preconditioner, and with
 * half-precision reliable updates; the true residual from the reference operator. */
static void test_gcr(const int dims[4], const tq_host_gauge *hg, const tq_dirac_params *dp, const double *b,
                     const char *what)
{
    setup S;
    if (setup_make_op(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_12, dp->kappa, dp) != 0) { setup_free(&S); return; }
    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
    static const struct { int nk; tq_precond pc; int pit; tq_precision sloppy; tq_solve_type type; } gc[] = {
        {0, TQ_PRECOND_NONE, 0, 0, TQ_SOLVE_DIRECT_PC}, {2, TQ_PRECOND_NONE, 0, 0, TQ_SOLVE_DIRECT_PC},
        {8, TQ_PRECOND_MR, 4, 0, TQ_SOLVE_DIRECT_PC}, {8, TQ_PRECOND_MR, 2, TQ_HALF, TQ_SOLVE_DIRECT_PC},
        {10, TQ_PRECOND_MR, 4, TQ_SINGLE, TQ_SOLVE_DIRECT},
    };
    for (size_t c = 0; c < sizeof gc / sizeof gc[0]; c++) {
        tq_solver_params sp;
        tq_solver_params_default(&sp);
        sp.inverter = TQ_INV_GCR;
        sp.solve_type = gc[c].type;
        sp.gcr_nkrylov = gc[c].nk;
        sp.precond = gc[c].pc;
        sp.precond_iters = gc[c].pit;
        sp.prec_sloppy = gc[c].sloppy;
        sp.maxiter = 2000;
        tq_solver_result res;
        /* double: the update in one pass (TQ_OP_GCR_UPDATE, the default) against the
         * separate passes (TQ_SOLVER_FUSE=0): the same iterations and solution */
        const int64_t nr = 24 * ref_volume(dims);
        double *hsep = gc[c].sloppy ? NULL : malloc(nr * sizeof *hsep), *hone = hsep ? malloc(nr * sizeof *hone) : NULL;
        int sep_it = -1;
        if (hsep && hone) {
            setenv("TQ_SOLVER_FUSE", "0", 1);
            if (tq_solve(S.dirac, x, fb, &sp, &res) == TQ_SUCCESS && tq_field_export(x, hsep) == TQ_SUCCESS)
                sep_it = res.iterations;
            unsetenv("TQ_SOLVER_FUSE");
            CHECK(sep_it >= 0, "%s GCR case %d with separate update passes: %s", what, (int)c, tq_last_error());
        }
        tq_status st = tq_solve(S.dirac, x, fb, &sp, &res);
        CHECK(st == TQ_SUCCESS, "%s GCR case %d: %s", what, (int)c, tq_last_error());
        if (st == TQ_SUCCESS && sep_it >= 0 && tq_field_export(x, hone) == TQ_SUCCESS) {
            const double e = sqrt(ref_vdiff2(hone, hsep, nr) / ref_vnorm2(hsep, nr));
            CHECK(abs(res.iterations - sep_it) <= 1 && e <= 1e-8, "%s GCR case %d: one-pass update %d iterations, "
                  "separate passes %d, solutions differ by %.3g", what, (int)c, res.iterations, sep_it, e);
        }
        free(hsep);
        free(hone);
        if (st != TQ_SUCCESS) continue;
        double rr = reference_residual(&S, hg, dp, x, b);
        printf("  GCR %-6s %-9s nkrylov %2d, precond %s x%d, sloppy %-6s %4d iterations (%2d reliable updates), true %.2e\n",
               what, tq_solve_type_name(sp.solve_type), gc[c].nk ? gc[c].nk : 8, gc[c].pc ? "MR" : "none", gc[c].pit,
               gc[c].sloppy ? tq_precision_name(gc[c].sloppy) : "-", res.iterations, res.reliable_updates, rr);
        CHECK(rr <= 3e-9, "%s GCR case %d: true residual %.3g", what, (int)c, rr);
    }
    tq_solver_params sp;
    tq_solver_result res;
    tq_solver_params_default(&sp);
    sp.inverter = TQ_INV_GCR;
    sp.gcr_nkrylov = 11;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    sp.gcr_nkrylov = 4;
    sp.precond = (tq_precond)7;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    tq_field_destroy(x);
    tq_field_destroy(fb);
    setup_free(&S);
}

/* Multi-shift CG on M_pc^dag M_pc + sigma_i: each solution against a one-shift solve and
 * against the reference operator's residual. */
static void test_multishift(const int dims[4], const tq_host_gauge *hg, const tq_dirac_params *dp, const double *b,
                            const char *what)
{
    setup S;
    if (setup_make_op(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_12, dp->kappa, dp) != 0) { setup_free(&S); return; }
    const int64_t n = 24 * ref_volume(dims);
    enum { NS = 4 };
    const double shifts[NS] = {0.3, 0.0, 0.02, 1.5};   /* unsorted on purpose: the smallest is the base */
    tq_field *x[NS], *xi = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_EVEN, b);
    for (int i = 0; i < NS; i++) x[i] = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL);
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.solve_type = TQ_SOLVE_NORMOP_PC;
    tq_solver_result res[NS], one;
    CHECK_OK(tq_solve_multishift(S.dirac, NS, shifts, x, fb, &sp, res));
    double *h1 = malloc(n * sizeof *h1), *h2 = malloc(n * sizeof *h2), *t1 = malloc(n * sizeof *t1),
           *t2 = malloc(n * sizeof *t2), *hb = malloc(n * sizeof *hb);
    CHECK_OK(tq_field_export(fb, hb));   /* b on the even sites (the odd ones are not read) */
    for (int i = 0; i < NS; i++) {
        CHECK_OK(tq_solve_multishift(S.dirac, 1, &shifts[i], &xi, fb, &sp, &one));
        memset(h1, 0, n * sizeof *h1);
        memset(h2, 0, n * sizeof *h2);
        CHECK_OK(tq_field_export(x[i], h1));
        CHECK_OK(tq_field_export(xi, h2));
        double e = sqrt(ref_vdiff2(h1, h2, n) / ref_vnorm2(h2, n));
        /* reference residual b - (M_pc^dag M_pc + sigma) x on the even sites */
        ref_clover_matpc(t1, hg->links, h1, dims, S.bc, dp->kappa, dp->csw, 0, 0, dp->matpc == TQ_MATPC_ASYMMETRIC);
        ref_clover_matpc(t2, hg->links, t1, dims, S.bc, dp->kappa, dp->csw, 0, 1, dp->matpc == TQ_MATPC_ASYMMETRIC);
        double r2 = 0, b2 = 0;
        for (int64_t s = 0; s < ref_volume(dims); s++) {
            if (ref_site_parity(s, dims)) continue;
            for (int k = 0; k < 24; k++) {
                double r = hb[24 * s + k] - t2[24 * s + k] - shifts[i] * h1[24 * s + k];
                r2 += r * r;
                b2 += hb[24 * s + k] * hb[24 * s + k];
            }
        }
        double rr = sqrt(r2 / b2);
        printf("  multi-shift %-6s shift %-5g %4d iterations (alone %4d), true residual %.2e (library %.2e), "
               "differs from the one-shift solve by %.2e\n", what, shifts[i], res[i].iterations, one.iterations, rr,
               res[i].true_residual, e);
        CHECK(rr <= 1e-9, "%s multi-shift shift %g: true residual %.3g", what, shifts[i], rr);
        CHECK(fabs(rr - res[i].true_residual) <= 0.05 * rr + 1e-13, "%s shift %g: library residual %.3g vs %.3g", what,
              shifts[i], res[i].true_residual, rr);
        CHECK(e <= 1e-8, "%s multi-shift shift %g: differs from the one-shift solve by %.3g", what, shifts[i], e);
        CHECK(res[i].iterations <= one.iterations + 2, "%s shift %g: %d iterations in the multi-shift solve, %d alone (it "
              "should drop out as soon as it converges)", what, shifts[i], res[i].iterations, one.iterations);
    }
    /* errors */
    double bad[2] = {0.1, -0.5};
    CHECK_ERR(tq_solve_multishift(S.dirac, 2, bad, x, fb, &sp, res), TQ_ERR_INVALID_ARG);
    sp.solve_type = TQ_SOLVE_DIRECT_PC;
    CHECK_ERR(tq_solve_multishift(S.dirac, 2, shifts, x, fb, &sp, res), TQ_ERR_INVALID_ARG);
    sp.solve_type = TQ_SOLVE_NORMOP;   /* full fields needed */
    CHECK_ERR(tq_solve_multishift(S.dirac, 2, shifts, x, fb, &sp, res), TQ_ERR_MISMATCH);
    for (int i = 0; i < NS; i++) tq_field_destroy(x[i]);
    tq_field_destroy(xi);
    tq_field_destroy(fb);
    free(h1); free(h2); free(t1); free(t2); free(hb);
    setup_free(&S);
}

/* A zero source: x = 0 after no iteration, for every inverter, with and without a sloppy
 * operator, alone, beside a nonzero source (tq_solve_many) and in a multi-shift solve. The
 * start's result is read only after the first iteration is queued, so that iteration must
 * be held back on the device (guard) rather than divide 0 by 0 into x. */
static void test_zero_source(const int dims[4], const tq_host_gauge *hg, const tq_dirac_params *dp, const double *b)
{
    setup S;
    if (setup_make_op(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_18, dp->kappa, dp) != 0) { setup_free(&S); return; }
    const int64_t n = 24 * ref_volume(dims);
    double *ones = malloc(n * sizeof *ones), *hx = malloc(n * sizeof *hx), *hz = calloc(n, sizeof *hz);
    for (int64_t k = 0; k < n; k++) ones[k] = 1.0;
    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *zero = spinor(&S, TQ_DOUBLE, TQ_FULL, hz);
    tq_field *x2 = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
    static const tq_inverter invs[] = {TQ_INV_CG, TQ_INV_BICGSTAB, TQ_INV_MR, TQ_INV_GCR, TQ_INV_CGNE};
    for (size_t i = 0; i < sizeof invs / sizeof invs[0]; i++)
        for (int sloppy = 0; sloppy < 2; sloppy++) {
            tq_solver_params sp;
            tq_solver_params_default(&sp);
            sp.inverter = invs[i];
            sp.solve_type = TQ_SOLVE_DIRECT_PC;
            if (sloppy) sp.prec_sloppy = TQ_HALF;
            tq_solver_result res;
            CHECK_OK(tq_field_import(x, ones));
            tq_status st = tq_solve(S.dirac, x, zero, &sp, &res);
            CHECK(st == TQ_SUCCESS, "zero source, %s%s: %s (%s)", tq_inverter_name(invs[i]), sloppy ? " sloppy half" : "",
                  tq_status_name(st), tq_last_error());
            CHECK_OK(tq_field_export(x, hx));
            int64_t bad = 0;
            for (int64_t k = 0; k < n; k++) bad += hx[k] != 0.0;
            CHECK(bad == 0 && res.iterations == 0 && res.residual == 0.0,
                  "zero source, %s%s: %lld nonzero (or NaN) values in x, %d iterations, residual %.3g",
                  tq_inverter_name(invs[i]), sloppy ? " sloppy half" : "", (long long)bad, res.iterations, res.residual);
        }
    /* beside a nonzero source */
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.inverter = TQ_INV_BICGSTAB;
    tq_field *xs[2] = {x, x2};
    const tq_field *bs[2] = {zero, fb};
    tq_solver_result two[2];
    CHECK_OK(tq_field_import(x, ones));
    CHECK_OK(tq_solve_many(S.dirac, 2, xs, bs, &sp, two));
    CHECK_OK(tq_field_export(x, hx));
    int64_t bad = 0;
    for (int64_t k = 0; k < n; k++) bad += hx[k] != 0.0;
    CHECK(bad == 0 && two[0].iterations == 0, "zero source beside another: %lld nonzero values, %d iterations", (long long)bad,
          two[0].iterations);
    CHECK(two[1].iterations > 0 && two[1].true_residual <= 1e-9, "the other source: %d iterations, true residual %.3g",
          two[1].iterations, two[1].true_residual);
    /* multi-shift (even-odd normal equations) */
    tq_field *xe[2] = {spinor(&S, TQ_DOUBLE, TQ_EVEN, ones), spinor(&S, TQ_DOUBLE, TQ_EVEN, ones)};
    tq_field *ze = spinor(&S, TQ_DOUBLE, TQ_EVEN, hz);
    const double shifts[2] = {0.0, 0.1};
    tq_solver_result ms[2];
    sp.solve_type = TQ_SOLVE_NORMOP_PC;
    sp.inverter = TQ_INV_CG;
    CHECK_OK(tq_solve_multishift(S.dirac, 2, shifts, xe, ze, &sp, ms));
    for (int i = 0; i < 2; i++) {
        memset(hx, 0, n * sizeof *hx);
        CHECK_OK(tq_field_export(xe[i], hx));
        bad = 0;
        for (int64_t k = 0; k < n; k++) bad += hx[k] != 0.0;
        CHECK(bad == 0 && ms[i].iterations == 0, "zero source, multi-shift %d: %lld nonzero values, %d iterations", i,
              (long long)bad, ms[i].iterations);
        tq_field_destroy(xe[i]);
    }
    printf("  zero source: x = 0 after 0 iterations for every inverter (also sloppy, beside another system, multi-shift)\n");
    tq_field_destroy(ze);
    tq_field_destroy(x);
    tq_field_destroy(x2);
    tq_field_destroy(zero);
    tq_field_destroy(fb);
    free(ones);
    free(hx);
    free(hz);
    setup_free(&S);
}

static void test_errors(const int dims[4], const tq_host_gauge *hg, const double *b)
{
    setup S;
    if (setup_make(&S, dims, NULL, hg, TQ_DOUBLE, TQ_RECON_18, KAPPA) != 0) { setup_free(&S); return; }
    tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
    tq_field *even = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL), *xs = spinor(&S, TQ_SINGLE, TQ_FULL, NULL);
    tq_solver_params sp;
    tq_solver_result res;
    tq_solver_params_default(&sp);
    sp.tol = 0;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    sp.tol = 1e-8;
    sp.maxiter = 0;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    sp.maxiter = 100;
    sp.inverter = (tq_inverter)9;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    sp.inverter = TQ_INV_CGNE;
    sp.solve_type = TQ_SOLVE_NORMOP_PC;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    tq_solver_params_default(&sp);
    sp.prec_sloppy = (tq_precision)3;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    tq_solver_params_default(&sp);
    sp.reliable_delta = 1.5;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    tq_solver_params_default(&sp);
    CHECK_ERR(tq_solve(S.dirac, x, x, &sp, &res), TQ_ERR_INVALID_ARG);       /* x is b */
    CHECK_ERR(tq_solve(S.dirac, even, fb, &sp, &res), TQ_ERR_INVALID_ARG);   /* not full */
    CHECK_ERR(tq_solve(S.dirac, xs, fb, &sp, &res), TQ_ERR_MISMATCH);        /* precision */
    CHECK_ERR(tq_solve(NULL, x, fb, &sp, &res), TQ_ERR_INVALID_ARG);
    /* maxiter exhausted: not converged, with the iterations and residual reported */
    sp.maxiter = 3;
    CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_NOT_CONVERGED);
    CHECK(res.iterations == 3 && res.residual > sp.tol && res.true_residual > 0, "not converged: %d iterations, residual %.3g",
          res.iterations, res.residual);
    CHECK(strstr(tq_last_error(), "no convergence in 3 iterations") != NULL, "message names maxiter: %s", tq_last_error());
    /* a poisoned source */
    const int64_t n = 24 * ref_volume(dims);
    double *bad = malloc(n * sizeof *bad);
    memcpy(bad, b, n * sizeof *bad);
    bad[17] = NAN;
    CHECK_OK(tq_field_import(fb, bad));
    for (int inv = 0; inv < 3; inv++) {
        tq_solver_params_default(&sp);
        sp.inverter = inv == 2 ? TQ_INV_MR : inv ? TQ_INV_BICGSTAB : TQ_INV_CG;
        CHECK_ERR(tq_solve(S.dirac, x, fb, &sp, &res), TQ_ERR_BREAKDOWN);
        CHECK(strstr(tq_last_error(), "NaN") != NULL, "NaN source named: %s", tq_last_error());
    }
    free(bad);
    tq_field_destroy(x);
    tq_field_destroy(fb);
    tq_field_destroy(even);
    tq_field_destroy(xs);
    setup_free(&S);
}

/* The free Wilson operator with periodic boundaries has the zero mode psi = const at
 * kappa = 1/8 (D psi = 8 psi). With that source, M x = b has no solution (M is normal, so
 * its range is orthogonal to its null space): BiCGstab's <r0, M p> vanishes at once. */
static void test_singular(const int dims[4])
{
    tq_host_gauge hu;
    CHECK_OK(tq_host_gauge_alloc(&hu, dims));
    CHECK_OK(tq_host_gauge_unit(&hu));
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = 0.125;
    dp.bc[0] = dp.bc[1] = dp.bc[2] = dp.bc[3] = 1.0;
    setup S;
    const int64_t n = 24 * ref_volume(dims);
    double *b = malloc(n * sizeof *b);
    for (int64_t k = 0; k < n; k++) b[k] = (k % 24 == 0) ? 1.0 : 0.0;
    if (setup_make_op(&S, dims, NULL, &hu, TQ_DOUBLE, TQ_RECON_18, 0.125, &dp) == 0) {
        tq_field *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL), *fb = spinor(&S, TQ_DOUBLE, TQ_FULL, b);
        tq_solver_params sp;
        tq_solver_result res;
        tq_solver_params_default(&sp);
        sp.inverter = TQ_INV_BICGSTAB;
        sp.solve_type = TQ_SOLVE_DIRECT;
        sp.maxiter = 50;
        tq_status st = tq_solve(S.dirac, x, fb, &sp, &res);
        CHECK(st == TQ_ERR_BREAKDOWN || st == TQ_ERR_NOT_CONVERGED, "singular system: got %s (%s)", tq_status_name(st),
              tq_last_error());
        CHECK(st != TQ_SUCCESS, "singular system reported as converged");
        printf("  singular system, BiCGstab: %s (%s)\n", tq_status_name(st), tq_last_error());
        /* CG on the normal equations of the same system */
        sp.inverter = TQ_INV_CG;
        st = tq_solve(S.dirac, x, fb, &sp, &res);
        CHECK(st == TQ_ERR_BREAKDOWN || st == TQ_ERR_NOT_CONVERGED, "singular system, CG: got %s (%s)", tq_status_name(st),
              tq_last_error());
        printf("  singular system, CG:       %s (%s)\n", tq_status_name(st), tq_last_error());
        tq_field_destroy(x);
        tq_field_destroy(fb);
    }
    setup_free(&S);
    free(b);
    tq_host_gauge_free(&hu);
}

int main(void)
{
    int start = dirac_test_start(TEST_NAME, WHERE);
    if (start) return start;
    const int dims[4] = {4, 4, 4, 8};
    const int64_t vol = ref_volume(dims);
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, dims));
    CHECK_OK(tq_host_gauge_weak(&hg, 99, 0.3));
    double *b = malloc(24 * vol * sizeof *b);
    ref_spinor_random(b, vol, 7);

    tq_dirac_params wil, clo;
    memset(&wil, 0, sizeof wil);
    wil.type = TQ_DSLASH_WILSON;
    wil.kappa = KAPPA;
    clo = wil;
    clo.type = TQ_DSLASH_CLOVER;
    clo.csw = CSW;
    static const int split[4] = {2, 4, 4, 4};
    static const int edges[4] = {2, 4, 2, 4};   /* cut in x, z and t: sites on two and three faces */
    test_operator(dims, NULL, &hg, &wil, b, "wilson");
    test_operator(dims, split, &hg, &clo, b, "clover");
    clo.matpc = TQ_MATPC_ASYMMETRIC;
    test_operator(dims, NULL, &hg, &clo, b, "clover-asym");
    test_fused(dims, dims, &hg, &clo, b, "clover-asym");
    test_mixed(dims, &hg, &wil, b, "wilson");
    test_fused(dims, dims, &hg, &wil, b, "wilson");
    test_fused(dims, edges, &hg, &wil, b, "wilson, 8 blocks");
    clo.matpc = TQ_MATPC_SYMMETRIC;
    test_fused(dims, dims, &hg, &clo, b, "clover");
    test_fused(dims, edges, &hg, &clo, b, "clover, 8 blocks");
    test_mixed(dims, &hg, &clo, b, "clover");
#ifdef TQ_TEST_CUDA
    test_strided(&clo, "clover");
#endif
    test_many(dims, &hg, &clo, "clover");
    test_pipeline(dims, &hg, &clo, b, "clover");
    test_chain(dims, split, &hg, &clo, b, "clover");
    test_mirror(dims, split, &hg, &clo, b, "clover");
    test_multishift(dims, &hg, &clo, b, "clover");
    test_gcr(dims, &hg, &wil, b, "wilson");
    test_gcr(dims, &hg, &clo, b, "clover");
    test_errors(dims, &hg, b);
    test_zero_source(dims, &hg, &clo, b);
    test_singular(dims);

    char buf[1024];
    const char *path = tq_test_milc_file("lat.sample.l8888", buf, sizeof buf);
    if (path) {
        tq_host_gauge hm;
        if (tq_gauge_read(path, TQ_FORMAT_AUTO, &hm, NULL) == TQ_SUCCESS) {
            tq_host_gauge_reunitarize(&hm);
            const int64_t vm = ref_volume(hm.dims);
            double *bm = malloc(24 * vm * sizeof *bm);
            ref_spinor_random(bm, vm, 11);
            tq_dirac_params dm = clo;
            dm.matpc = TQ_MATPC_SYMMETRIC;
            dm.kappa = 0.124;
            if (tq_test_quick()) {   /* the solvers' code ran above: here it is only the field that differs */
                printf("  quick: the real configuration's CG, BiCGstab, MR and mixed-precision solves left out\n");
            } else {
                test_operator(hm.dims, NULL, &hm, &dm, bm, "l8888");
                test_mixed(hm.dims, &hm, &dm, bm, "l8888");
            }
            test_gcr(hm.dims, &hm, &dm, bm, "l8888");
            free(bm);
            tq_host_gauge_free(&hm);
        } else {
            CHECK(0, "reading %s: %s", path, tq_last_error());
        }
    } else {
        printf("  lat.sample.l8888 not found: real-configuration solves skipped\n");
    }
    tq_host_gauge_free(&hg);
    free(b);
    tq_set_placement(TQ_WHERE_ANY);
    tq_finalize();
    return tq_test_finish(TEST_NAME);
}
