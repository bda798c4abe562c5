/* Owner computes (src/core/placement.c): every task that writes a block's data runs on the
 * block's owner. On this CPU machine the CPU blocks are pinned to CPU workers in turn
 * (tq_internal_pin_cpu_owners; without pins CPU blocks have no owner): the Wilson and
 * clover operators, BLAS reductions and a CG and a BiCGstab solve over 4 blocks give the
 * same bits as without owners, and every pinned task ran on its owner (StarPU's worker id
 * seen by the task's callback). With a CUDA worker the GPU owns every block by default:
 * the same check runs there without pins. With owners the tasks go as a chain task per owner
 * (cut where a face or a partial sum moves to another owner), and each owner combines the
 * reductions into its own copy of the solver's scalars: the same bits, on 4 blocks of 3
 * owners (one owns two: the runs there would wait on each other in cycles, which the
 * chains break) and on 2 blocks of 2. Several systems of one tq_solve_many on a
 * one-block lattice each go to their own owner (three CPU workers each run a system's
 * tasks) and give the bits of the same systems solved one at a time without owners. The
 * generator's blocks are owned the same way (check_generator_owners). Applications that
 * follow a chain task still waiting for its data join it (check_joined_applications), also
 * with M_pc's intermediates by turns on two blocks (check_joins_by_turns). */
#include "tq_test.h"
#include "dirac_test_util.h"
#include "core/placement.h"
#include "tq_tasks.h"   /* tq_internal_chains_submitted */
#include "solvers/solver_internal.h"   /* tq_internal_solver_fused_iterations */
#include "core/field_internal.h"       /* tq_field_handle */

enum { NSPIN = 8 * 8 * 8 * 8 * 24 };

typedef struct results {
    double matpc[NSPIN], clover[NSPIN], cg[NSPIN], bicgstab[NSPIN];
    double norm2;
    int cg_iter, bicgstab_iter;
} results;

/* Everything the check compares, computed with the owners as they are now. */
static void run_all(const tq_host_gauge *hg, const double *src, results *r, const int block[4])
{
    const int dims[4] = {8, 8, 8, 8};
    for (int clover = 0; clover < 2; clover++) {
        const tq_dirac_params dp = wilson_or_clover(clover, 0.12, 1.0);
        setup S;
        if (setup_make_op(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_12, 0.12, &dp)) return;
        tq_field *in = spinor(&S, TQ_DOUBLE, TQ_EVEN, src), *out = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL);
        tq_field *b = spinor(&S, TQ_DOUBLE, TQ_FULL, src), *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
        CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 0));
        CHECK_OK(tq_field_export(out, clover ? r->clover : r->matpc));
        if (!clover) CHECK_OK(tq_blas_norm2(out, &r->norm2));
        tq_solver_params sp;
        tq_solver_params_default(&sp);
        sp.tol = 1e-9;
        sp.inverter = clover ? TQ_INV_BICGSTAB : TQ_INV_CG;
        sp.solve_type = clover ? TQ_SOLVE_DIRECT_PC : TQ_SOLVE_NORMOP_PC;
        tq_solver_result res;
        CHECK_OK(tq_solve(S.dirac, x, b, &sp, &res));
        CHECK_OK(tq_field_export(x, clover ? r->bicgstab : r->cg));
        *(clover ? &r->bicgstab_iter : &r->cg_iter) = res.iterations;
        tq_field_destroy(in); tq_field_destroy(out); tq_field_destroy(b); tq_field_destroy(x);
        setup_free(&S);
    }
}

/* Applications one after another join their owner's chain task while it waits
 * (tasks/submit.c): the host holds a handle of the gauge field, so the first M_pc's chain
 * waits for it, and the next ones (the same fields, the same modes) are appended to it.
 * Their result must be the bits of one application, and each must have joined. */
static void check_joined_applications(const tq_host_gauge *hg, const double *src)
{
    enum { NAPPLY = 6 };
    const int dims[4] = {8, 8, 8, 8};
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = 0.12;
    setup S;
    if (setup_make_op(&S, dims, dims, hg, TQ_DOUBLE, TQ_RECON_12, 0.12, &dp)) return;
    tq_field *in = spinor(&S, TQ_DOUBLE, TQ_EVEN, src), *out = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL);
    double *once = calloc(NSPIN, sizeof *once), *joined = calloc(NSPIN, sizeof *joined);   /* the host layout: every site */
    CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 0));
    CHECK_OK(tq_field_export(out, once));
    CHECK_OK(tq_blas_zero(out));
    tq_wait_all();
    starpu_data_handle_t gate = tq_field_handle(S.gauge, 0, 0);
    CHECK(starpu_data_acquire(gate, STARPU_RW) == 0, "acquiring a gauge handle failed");
    const long before = tq_internal_chains_extended();
    for (int k = 0; k < NAPPLY; k++) CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 0));
    const long joins = tq_internal_chains_extended() - before;
    starpu_data_release(gate);
    CHECK_OK(tq_field_export(out, joined));
    printf("%d M_pc applications behind a held gauge handle: %ld joined the first one's chain task\n", NAPPLY, joins);
    const char *chain = getenv("TQ_CHAIN"), *ext = getenv("TQ_CHAIN_EXTEND");
    const long expect = (chain && chain[0] == '0') || (ext && ext[0] == '0') ? 0 : NAPPLY - 1;   /* turned off: none */
    CHECK(joins == expect, "%ld of %d applications joined the waiting chain task (expected %ld)", joins, NAPPLY - 1, expect);
    CHECK(!memcmp(once, joined, NSPIN * sizeof *once), "M_pc applied in a joined chain task differs");
    free(once); free(joined);
    tq_field_destroy(in); tq_field_destroy(out);
    setup_free(&S);
}

/* The same on two blocks of one owner, with M_pc's intermediates by turns
 * (TQ_MATPC_TURNS=1, src/dirac/dirac_forms.c) and without: every application's chain tasks
 * hold the intermediate they do not use (tq_task_hold), so as many applications join the
 * waiting chain tasks by turns as with one intermediate, and the bits are one
 * application's. Returns the joins. */
static long joins_on_two_blocks(const tq_host_gauge *hg, const double *src, const char *turns, double *result)
{
    enum { NAPPLY = 6 };
    const int dims[4] = {8, 8, 8, 8}, block[4] = {8, 8, 8, 4};
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = 0.12;
    setenv("TQ_MATPC_TURNS", turns, 1);
    tq_internal_placement_system(0);   /* both blocks on one owner: one run per application */
    setup S;
    if (setup_make_op(&S, dims, block, hg, TQ_DOUBLE, TQ_RECON_12, 0.12, &dp)) return -1;
    tq_field *in = spinor(&S, TQ_DOUBLE, TQ_EVEN, src), *out = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL);
    tq_wait_all();
    starpu_data_handle_t gate[2] = {tq_field_handle(S.gauge, 0, 0), tq_field_handle(S.gauge, 1, 0)};
    for (int b = 0; b < 2; b++) CHECK(starpu_data_acquire(gate[b], STARPU_RW) == 0, "acquiring a gauge handle failed");
    const long before = tq_internal_chains_extended();
    for (int k = 0; k < NAPPLY; k++) CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 0));
    const long joins = tq_internal_chains_extended() - before;
    for (int b = 0; b < 2; b++) starpu_data_release(gate[b]);
    CHECK_OK(tq_field_export(out, result));
    unsetenv("TQ_MATPC_TURNS");
    tq_field_destroy(in); tq_field_destroy(out);
    setup_free(&S);
    tq_internal_placement_system(-1);
    return joins;
}

static void check_joins_by_turns(const tq_host_gauge *hg, const double *src)
{
    double *one = calloc(NSPIN, sizeof *one), *turns = calloc(NSPIN, sizeof *turns);
    const long j0 = joins_on_two_blocks(hg, src, "0", one), j1 = joins_on_two_blocks(hg, src, "1", turns);
    printf("M_pc on 2 blocks behind held gauge handles: %ld joins with one intermediate, %ld by turns\n", j0, j1);
    const char *chain = getenv("TQ_CHAIN"), *ext = getenv("TQ_CHAIN_EXTEND");
    const int off = (chain && chain[0] == '0') || (ext && ext[0] == '0');
    CHECK(off ? j0 == 0 && j1 == 0 : j0 > 0 && j1 == j0, "joins: %ld with one intermediate, %ld by turns", j0, j1);
    CHECK(!memcmp(one, turns, NSPIN * sizeof *one), "M_pc with intermediates by turns differs");
    free(one); free(turns);
}

enum { NSYS = 3 };

/* The spread of NSYS systems over NSYS pinned CPU owners (one block: without systems on
 * their own owners every task would go to block 0's owner). */
static void check_systems_spread(const tq_host_gauge *hg)
{
    const int dims[4] = {8, 8, 8, 8};
    setup S;
    if (setup_make(&S, dims, dims, hg, TQ_DOUBLE, TQ_RECON_12, 0.12)) return;
    tq_field *b[NSYS], *x[NSYS];
    double *host = malloc(NSPIN * sizeof *host), *ref = malloc((size_t)NSYS * NSPIN * sizeof *ref);
    for (int i = 0; i < NSYS; i++) {
        tq_test_fill(host, NSPIN, 100 + (uint64_t)i);
        b[i] = spinor(&S, TQ_DOUBLE, TQ_FULL, host);
        x[i] = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
    }
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.tol = 1e-9;
    sp.inverter = TQ_INV_BICGSTAB;
    tq_solver_result alone[NSYS], together[NSYS];
    for (int i = 0; i < NSYS; i++) {   /* one at a time, no owners */
        CHECK_OK(tq_solve(S.dirac, x[i], b[i], &sp, &alone[i]));
        CHECK_OK(tq_field_export(x[i], ref + (size_t)i * NSPIN));
        CHECK_OK(tq_blas_zero(x[i]));
    }
    enum { MAXW = 64 };
    long before[MAXW];
    for (int w = 0; w < MAXW; w++) before[w] = tq_internal_owner_ran_on(w);
    tq_internal_pin_cpu_owners(1);
    tq_internal_owner_checks(1);
    CHECK_OK(tq_solve_many(S.dirac, NSYS, x, (const tq_field *const *)b, &sp, together));
    tq_wait_all();
    tq_internal_owner_checks(0);
    tq_internal_pin_cpu_owners(0);
    int busy = 0;
    for (int w = 0; w < MAXW; w++) busy += tq_internal_owner_ran_on(w) > before[w];
    printf("%d systems together: owned tasks ran on %d workers\n", NSYS, busy);
    CHECK(busy == NSYS, "the %d systems' owned tasks ran on %d workers, not one each", NSYS, busy);
    for (int i = 0; i < NSYS; i++) {
        CHECK_OK(tq_field_export(x[i], host));
        CHECK(together[i].iterations == alone[i].iterations && alone[i].iterations > 0,
              "system %d: %d iterations together, %d alone", i, together[i].iterations, alone[i].iterations);
        CHECK(!memcmp(host, ref + (size_t)i * NSPIN, NSPIN * sizeof *host),
              "system %d: the solution differs together (owners) and alone", i);
        tq_field_destroy(b[i]); tq_field_destroy(x[i]);
    }
    free(host); free(ref);
    setup_free(&S);
}
/* The generator's blocks (a lattice's, cut in x, y and t: 8 blocks) pinned to 3 CPU workers
 * in turn: the same links and measurements as without owners, and every block task on its
 * owner. */
static void generator_run(tq_host_gauge *links, tq_plaquette *plaq, double *poly)
{
    const int dims[4] = {4, 4, 4, 8};
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    const int block[4] = {2, 2, 4, 4};
    memcpy(gp.block, block, sizeof gp.block);
    gp.seed = 7;
    tq_generator *g = NULL;
    CHECK_OK(tq_generator_create(dims, &gp, &g));
    if (!g) return;
    for (int k = 0; k < 2; k++) CHECK_OK(tq_generator_sweep(g, 1));
    CHECK_OK(tq_generator_reunitarize(g));
    CHECK_OK(tq_generator_measure(g, plaq, poly, poly + 1));
    CHECK_OK(tq_generator_export(g, links));
    tq_generator_destroy(g);
}

static void check_generator_owners(void)
{
    tq_host_gauge free_links, owned_links;
    CHECK_OK(tq_host_gauge_alloc(&free_links, (const int[4]){4, 4, 4, 8}));
    CHECK_OK(tq_host_gauge_alloc(&owned_links, (const int[4]){4, 4, 4, 8}));
    tq_plaquette p_free, p_owned;
    double poly_free[2], poly_owned[2];
    generator_run(&free_links, &p_free, poly_free);
    long on_before, else_before;
    tq_internal_owner_stats(&on_before, &else_before);
    tq_internal_pin_cpu_owners(1);
    tq_internal_owner_checks(1);
    generator_run(&owned_links, &p_owned, poly_owned);
    tq_wait_all();
    tq_internal_owner_checks(0);
    tq_internal_pin_cpu_owners(0);
    long on_owner, elsewhere;
    tq_internal_owner_stats(&on_owner, &elsewhere);
    printf("generator: %ld block tasks ran on their owner, %ld elsewhere; plaquette %.15f\n", on_owner - on_before,
           elsewhere - else_before, p_owned.total);
    CHECK(on_owner - on_before >= 2 * 2 * 8 * 8, "only %ld generator tasks ran with an owner", on_owner - on_before);
    CHECK(elsewhere == else_before, "%ld generator tasks ran elsewhere than on their block's owner", elsewhere - else_before);
    CHECK(!memcmp(free_links.links, owned_links.links, (size_t)4 * 4 * 4 * 8 * 72 * sizeof(double)),
          "the generator's links differ with owners");
    CHECK(p_free.total == p_owned.total && p_free.spatial == p_owned.spatial && p_owned.total < 1.0,
          "plaquette %.17g with owners, %.17g without", p_owned.total, p_free.total);
    CHECK(poly_free[0] == poly_owned[0] && poly_free[1] == poly_owned[1], "Polyakov loop differs with owners");
    double host_poly[2];
    CHECK_OK(tq_host_gauge_polyakov(&owned_links, &host_poly[0], &host_poly[1]));
    CHECK(fabs(host_poly[0] - poly_owned[0]) < 1e-13 && fabs(host_poly[1] - poly_owned[1]) < 1e-13 &&
              poly_owned[0] != 0.0,
          "Polyakov loop (%.17g, %.17g) as tasks, (%.17g, %.17g) from the links", poly_owned[0], poly_owned[1], host_poly[0],
          host_poly[1]);
    tq_host_gauge_free(&free_links);
    tq_host_gauge_free(&owned_links);
}

int main(void)
{
    /* every face between owners sent on as soon as it is packed (tq_task_prefetch), whatever
     * its size: the bits below must not change */
    setenv("TQ_FACE_PREFETCH", "1", 1);
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 3;   /* distinct owners for the 4 blocks, and one worker owning two */
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);

    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, (const int[4]){8, 8, 8, 8}));
    CHECK_OK(tq_host_gauge_random(&hg, 5));
    double *src = malloc(NSPIN * sizeof *src);
    tq_test_fill(src, NSPIN, 17);
    results *free_run = calloc(1, sizeof *free_run), *owned = calloc(1, sizeof *owned);

    /* 4 blocks on 3 owners (one owns two), then 2 blocks on 2: each against the reference,
     * no owners (CPU-only) or the GPU's own (with a CUDA worker) */
    const int four[4] = {4, 4, 8, 8}, two[4] = {8, 8, 8, 4};
    results *free2 = calloc(1, sizeof *free2), *owned2 = calloc(1, sizeof *owned2);
    const long fused_before = tq_internal_solver_fused_iterations();
    run_all(&hg, src, free_run, four);
    run_all(&hg, src, free2, two);

    if (ri.ncuda_workers == 0) tq_internal_pin_cpu_owners(1);
    tq_internal_owner_checks(1);
    const long chains_before = tq_internal_chains_submitted();
    run_all(&hg, src, owned, four);
    tq_wait_all();
    const long chains = tq_internal_chains_submitted() - chains_before;
    run_all(&hg, src, owned2, two);
    tq_wait_all();
    const long chains2 = tq_internal_chains_submitted() - chains_before - chains;
    tq_internal_owner_checks(0);
    tq_internal_pin_cpu_owners(0);
    /* on CPU workers the solves' reductions are fused into the operator on several blocks
     * too (partials per block's interior and exterior, combined in block order), so the
     * comparisons below cover that path */
    const long fused = tq_internal_solver_fused_iterations() - fused_before;
    printf("fused iterations in the solves: %ld\n", fused);
    if (ri.ncuda_workers == 0) CHECK(fused > 0, "no fused iteration on several CPU blocks");
    long on_owner = 0, elsewhere = 0;
    tq_internal_owner_stats(&on_owner, &elsewhere);
    printf("owned tasks: %ld ran on their owner, %ld elsewhere (%d CPU, %d CUDA workers)\n", on_owner, elsewhere,
           ri.ncpu_workers, ri.ncuda_workers);
    fflush(stdout);
    CHECK(on_owner > 100, "only %ld tasks ran with an owner", on_owner);
    CHECK(elsewhere == 0, "%ld tasks ran on another worker than their block's owner", elsewhere);
    /* owned blocks go as a chain task per owner between faces and reductions
     * (tasks/submit.c): the bits below are those of one task per kernel without owners */
    printf("owned runs: %ld chain tasks on 4 blocks, %ld on 2\n", chains, chains2);
    CHECK(chains > 0 && chains2 > 0, "no chain task with owned blocks");

    CHECK(!memcmp(free_run->matpc, owned->matpc, sizeof owned->matpc), "Wilson M_pc differs with owners");
    CHECK(!memcmp(free_run->clover, owned->clover, sizeof owned->clover), "clover M_pc differs with owners");
    CHECK(free_run->norm2 == owned->norm2 && owned->norm2 > 0, "norm2 %.17g with owners, %.17g without", owned->norm2,
          free_run->norm2);
    CHECK(free_run->cg_iter == owned->cg_iter && owned->cg_iter > 0, "CG iterations %d with owners, %d without",
          owned->cg_iter, free_run->cg_iter);
    CHECK(!memcmp(free_run->cg, owned->cg, sizeof owned->cg), "CG solution differs with owners");
    CHECK(free_run->bicgstab_iter == owned->bicgstab_iter && owned->bicgstab_iter > 0,
          "BiCGstab iterations %d with owners, %d without", owned->bicgstab_iter, free_run->bicgstab_iter);
    CHECK(!memcmp(free_run->bicgstab, owned->bicgstab, sizeof owned->bicgstab), "BiCGstab solution differs with owners");
    CHECK(!memcmp(free2, owned2, sizeof *owned2) && owned2->cg_iter > 0 && owned2->bicgstab_iter > 0,
          "2 blocks: results differ with owners (CG %d / %d, BiCGstab %d / %d iterations)", owned2->cg_iter,
          free2->cg_iter, owned2->bicgstab_iter, free2->bicgstab_iter);

    if (ri.ncuda_workers == 0) tq_internal_pin_cpu_owners(1);
    check_joined_applications(&hg, src);
    check_joins_by_turns(&hg, src);
    tq_internal_pin_cpu_owners(0);
    if (ri.ncuda_workers == 0) check_generator_owners();
    if (ri.ncuda_workers == 0) check_systems_spread(&hg);
    else printf("systems spread: not checked here (CPU owners are pinned only without a CUDA worker)\n");

    free(free_run); free(owned); free(free2); free(owned2); free(src);
    tq_host_gauge_free(&hg);
    tq_finalize();
    return tq_test_finish("test_owner");
}
