/* Operators and solvers across MPI ranks (run by test_mpi_dirac.sh under mpirun -np 1, 2
 * and 4): with the same global block extent, every result is bitwise the same on any number
 * of ranks and any rank grid. Each rank computes on its part of the lattice and writes its
 * sites at their global places in OUT (pwrite, no MPI in the test); the script compares the
 * files of the runs with cmp. On every run each rank also checks its sites of D psi against
 * the plain-loop reference (reference/wilson_reference.h), so that the runs cannot agree on
 * a wrong answer, and that the solves converged.
 *
 *   test_mpi_dirac OUT [--procs X Y Z T] [--block X Y Z T] [--poison] [tq_init options]
 *
 * OUT receives, as doubles in this order: D psi (double, recon 18) on both parities and both
 * daggers; M_pc psi_e (single, recon 12); M_pc psi_e (half, recon 12); clover M_pc psi_e
 * (double); the CG normal-equation
 * solution x of M x = psi (double) and the BiCGstab solution (double, single-precision
 * reliable updates), each followed by its iteration count and iterated residual. With
 * --poison it runs failing solves instead (run_poisoned) and writes nothing to OUT. */
#include "tq_test.h"
#include "../reference/wilson_reference.h"

#include <fcntl.h>
#include <unistd.h>

static const int dims[4] = {8, 8, 8, 16};
static int out_fd = -1;
static off_t out_at;   /* where the next global field starts in OUT */
static tq_lattice_info li;

/* Writes this rank's sites (nreal doubles each, local x fastest) of a global field at their
 * global places, then moves past the field. */
static void write_global(const double *local, int nreal)
{
    const int *L = li.local;
    const size_t row = (size_t)L[0] * (size_t)nreal * sizeof(double);
    for (int t = 0; t < L[3]; t++)
        for (int z = 0; z < L[2]; z++)
            for (int y = 0; y < L[1]; y++) {
                int64_t g = (((int64_t)(li.coords[3] * L[3] + t) * dims[2] + li.coords[2] * L[2] + z) * dims[1] +
                             li.coords[1] * L[1] + y) * dims[0] + (int64_t)li.coords[0] * L[0];
                int64_t l = (((int64_t)t * L[2] + z) * L[1] + y) * L[0];
                ssize_t n = pwrite(out_fd, local + l * nreal, row, out_at + (off_t)(g * nreal * (int64_t)sizeof(double)));
                CHECK(n == (ssize_t)row, "pwrite: %zd of %zu bytes", n, row);
            }
    out_at += (off_t)(ref_volume(dims) * nreal * (int64_t)sizeof(double));
}

/* Two scalars every rank holds: rank 0 writes them. */
static void write_scalars(double a, double b)
{
    double v[2] = {a, b};
    if (li.coords[0] + li.coords[1] + li.coords[2] + li.coords[3] == 0)
        CHECK(pwrite(out_fd, v, sizeof v, out_at) == (ssize_t)sizeof v, "pwrite of scalars");
    out_at += (off_t)sizeof v;
}

/* This rank's sites of a global host field. */
static void local_part(const double *global, double *local, int nreal)
{
    const int *L = li.local;
    for (int64_t s = 0; s < li.local_volume; s++) {
        int c[4];
        int64_t r = s;
        for (int mu = 0; mu < 4; mu++) { c[mu] = (int)(r % L[mu]) + li.coords[mu] * L[mu]; r /= L[mu]; }
        memcpy(local + s * nreal, global + wref_site(c, dims) * nreal, (size_t)nreal * sizeof(double));
    }
}

static tq_field *spinor(tq_lattice *lat, tq_precision prec, tq_subset sub)
{
    tq_field_params fp = {TQ_FIELD_SPINOR, prec, sub, (tq_recon)0, 0};
    tq_field *f = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &f));
    return f;
}

static tq_field *gauge(tq_lattice *lat, tq_precision prec, tq_recon recon, const tq_host_gauge *hg)
{
    tq_field_params gp = {TQ_FIELD_GAUGE, prec, TQ_FULL, recon, 0};
    tq_field *g = NULL;
    CHECK_OK(tq_field_create(lat, &gp, &g));
    if (g) CHECK_OK(tq_gauge_field_import(g, hg));
    return g;
}

static void run(tq_lattice *lat)
{
    const int64_t gvol = ref_volume(dims), lvol = li.local_volume;
    double *links = malloc((size_t)gvol * 72 * sizeof *links);
    double *psi = malloc((size_t)gvol * 24 * sizeof *psi);
    double *ref = malloc((size_t)gvol * 24 * sizeof *ref);
    double *lpsi = malloc((size_t)lvol * 24 * sizeof *lpsi);
    double *lout = malloc((size_t)lvol * 24 * sizeof *lout);
    double *lref = malloc((size_t)lvol * 24 * sizeof *lref);
    ref_gauge_random_su3(links, dims, 2026);
    ref_spinor_random(psi, gvol, 11);
    local_part(psi, lpsi, 24);
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, li.local));
    local_part(links, hg.links, 72);

    tq_field *g = gauge(lat, TQ_DOUBLE, TQ_RECON_18, &hg);
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = 0.12;
    tq_dirac *D = NULL;
    CHECK_OK(tq_dirac_create(g, &dp, &D));
    tq_field *in = spinor(lat, TQ_DOUBLE, TQ_FULL), *out = spinor(lat, TQ_DOUBLE, TQ_FULL);
    CHECK_OK(tq_field_import(in, lpsi));

    /* D psi on both parities, both daggers; the reference for dagger 0 */
    const double bc[4] = {1, 1, 1, -1};
    for (int dag = 0; dag < 2; dag++) {
        CHECK_OK(tq_dslash(D, out, in, TQ_EVEN, dag));
        CHECK_OK(tq_dslash(D, out, in, TQ_ODD, dag));
        CHECK_OK(tq_field_export(out, lout));
        write_global(lout, 24);
        if (dag == 0) {
            ref_wilson_dslash(ref, links, psi, dims, bc, 0, 2);
            local_part(ref, lref, 24);
            double e = tq_test_site_rel_err(lout, lref, (size_t)lvol);
            CHECK(e < 1e-14, "D psi on this rank's sites: relative error %.3g against the reference", e);
        }
    }

    /* M_pc in single precision, recon 12 */
    tq_field *gs = gauge(lat, TQ_SINGLE, TQ_RECON_12, &hg);
    tq_dirac *Ds = NULL;
    CHECK_OK(tq_dirac_create(gs, &dp, &Ds));
    tq_field *ins = spinor(lat, TQ_SINGLE, TQ_EVEN), *outs = spinor(lat, TQ_SINGLE, TQ_EVEN);
    CHECK_OK(tq_field_import(ins, lpsi));
    CHECK_OK(tq_dirac_matpc(Ds, outs, ins, TQ_EVEN, 0));
    memset(lout, 0, (size_t)lvol * 24 * sizeof *lout);   /* the odd sites stay 0 */
    CHECK_OK(tq_field_export(outs, lout));
    write_global(lout, 24);

    /* M_pc in half precision, recon 12: faces hold single precision half spinors
     * (tq_dslash_wilson_face_prec), in place the neighbours' sites are read as they are */
    tq_field *gh = gauge(lat, TQ_HALF, TQ_RECON_12, &hg);
    tq_dirac *Dh = NULL;
    CHECK_OK(tq_dirac_create(gh, &dp, &Dh));
    tq_field *inh = spinor(lat, TQ_HALF, TQ_EVEN), *outh = spinor(lat, TQ_HALF, TQ_EVEN);
    CHECK_OK(tq_field_import(inh, lpsi));
    CHECK_OK(tq_dirac_matpc(Dh, outh, inh, TQ_EVEN, 0));
    memset(lout, 0, (size_t)lvol * 24 * sizeof *lout);
    CHECK_OK(tq_field_export(outh, lout));
    write_global(lout, 24);
    tq_field_destroy(inh);
    tq_field_destroy(outh);
    tq_dirac_destroy(Dh);
    tq_field_destroy(gh);

    /* clover M_pc (double; the clover term built from links across rank boundaries) */
    tq_dirac_params cp = dp;
    cp.type = TQ_DSLASH_CLOVER;
    cp.csw = 1.1;
    tq_dirac *C = NULL;
    CHECK_OK(tq_dirac_create(g, &cp, &C));
    memset(lout, 0, (size_t)lvol * 24 * sizeof *lout);
    if (C) {
        tq_field *ine = spinor(lat, TQ_DOUBLE, TQ_EVEN), *oute = spinor(lat, TQ_DOUBLE, TQ_EVEN);
        CHECK_OK(tq_field_import(ine, lpsi));
        CHECK_OK(tq_dirac_matpc(C, oute, ine, TQ_EVEN, 0));
        CHECK_OK(tq_field_export(oute, lout));
        tq_field_destroy(ine);
        tq_field_destroy(oute);
    }
    write_global(lout, 24);

    /* solves: CG on the normal equations (double), BiCGstab with single reliable updates */
    for (int k = 0; k < 2; k++) {
        tq_solver_params sp;
        tq_solver_params_default(&sp);
        sp.tol = 1e-9;
        sp.maxiter = 2000;
        if (k == 0) { sp.inverter = TQ_INV_CG; sp.solve_type = TQ_SOLVE_NORMOP_PC; }
        else { sp.inverter = TQ_INV_BICGSTAB; sp.prec_sloppy = TQ_SINGLE; }
        tq_solver_result res;
        memset(&res, 0, sizeof res);
        CHECK_OK(tq_blas_zero(out));
        CHECK_OK(tq_solve(k == 0 ? D : C, out, in, &sp, &res));
        CHECK(res.true_residual < 1e-8, "%s: true residual %.3g", k == 0 ? "CG" : "BiCGstab", res.true_residual);
        CHECK_OK(tq_field_export(out, lout));
        write_global(lout, 24);
        write_scalars((double)res.iterations, res.residual);
        printf("%s: %d iterations, residual %.6g, true residual %.3g\n", k == 0 ? "CG normop-pc (Wilson)" : "BiCGstab mixed (clover)",
               res.iterations, res.residual, res.true_residual);
    }

    tq_field_destroy(ins);
    tq_field_destroy(outs);
    tq_dirac_destroy(Ds);
    tq_field_destroy(gs);
    tq_dirac_destroy(C);
    tq_field_destroy(in);
    tq_field_destroy(out);
    tq_dirac_destroy(D);
    tq_field_destroy(g);
    tq_host_gauge_free(&hg);
    free(links); free(psi); free(ref); free(lpsi); free(lout); free(lref);
}

/* A failure on one rank is every rank's: a NaN in the last rank's part of the source, a NaN
 * link in its part of the gauge field (the source is fine: the solve breaks down on the way)
 * and too few iterations must give every rank the same status after the same number of
 * iterations, and none may hang. Each rank prints one line per case; test_mpi_dirac.sh
 * checks that the ranks' lines are the same. */
static void run_poisoned(tq_lattice *lat, int rank, int nranks)
{
    const int64_t gvol = ref_volume(dims), lvol = li.local_volume;
    double *links = malloc((size_t)gvol * 72 * sizeof *links);
    double *psi = malloc((size_t)gvol * 24 * sizeof *psi);
    double *lpsi = malloc((size_t)lvol * 24 * sizeof *lpsi);
    ref_gauge_random_su3(links, dims, 2026);
    ref_spinor_random(psi, gvol, 11);
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, li.local));
    local_part(links, hg.links, 72);
    tq_host_gauge bad;   /* one link of the last rank's last site NaN */
    CHECK_OK(tq_host_gauge_alloc(&bad, li.local));
    memcpy(bad.links, hg.links, (size_t)lvol * 72 * sizeof *links);
    if (rank == nranks - 1) bad.links[(lvol - 1) * 72 + 5] = NAN;
    tq_field *g = gauge(lat, TQ_DOUBLE, TQ_RECON_18, &hg), *gb = gauge(lat, TQ_DOUBLE, TQ_RECON_18, &bad);
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = TQ_DSLASH_WILSON;
    dp.kappa = 0.12;
    tq_dirac *D = NULL, *Db = NULL;
    CHECK_OK(tq_dirac_create(g, &dp, &D));
    CHECK_OK(tq_dirac_create(gb, &dp, &Db));
    tq_field *in = spinor(lat, TQ_DOUBLE, TQ_FULL), *nan_in = spinor(lat, TQ_DOUBLE, TQ_FULL);
    tq_field *out = spinor(lat, TQ_DOUBLE, TQ_FULL);
    local_part(psi, lpsi, 24);
    CHECK_OK(tq_field_import(in, lpsi));
    if (rank == nranks - 1) lpsi[7] = NAN;
    CHECK_OK(tq_field_import(nan_in, lpsi));
    static const char *const what[3] = {"a NaN in the last rank's source", "a NaN link on the last rank",
                                        "maxiter 3"};
    static const tq_status want[3] = {TQ_ERR_BREAKDOWN, TQ_ERR_BREAKDOWN, TQ_ERR_NOT_CONVERGED};
    for (int c = 0; c < 3 && D && Db; c++)
        for (int k = 0; k < 2; k++) {
            tq_solver_params sp;
            tq_solver_params_default(&sp);
            sp.tol = 1e-9;
            sp.maxiter = c == 2 ? 3 : 2000;
            if (k == 0) { sp.inverter = TQ_INV_CG; sp.solve_type = TQ_SOLVE_NORMOP_PC; }
            else { sp.inverter = TQ_INV_BICGSTAB; sp.prec_sloppy = TQ_SINGLE; }
            tq_solver_result res;
            memset(&res, 0, sizeof res);
            CHECK_OK(tq_blas_zero(out));
            const tq_status st = tq_solve(c == 1 ? Db : D, out, c == 0 ? nan_in : in, &sp, &res);
            CHECK(st == want[c], "%s, %s: %s (%s), expected %s", k ? "BiCGstab" : "CG", what[c], tq_status_name(st),
                  tq_last_error(), tq_status_name(want[c]));
            printf("poisoned: %s with %s: %s after %d iterations\n", k ? "BiCGstab" : "CG", what[c], tq_status_name(st),
                   res.iterations);
        }
    tq_field_destroy(in);
    tq_field_destroy(nan_in);
    tq_field_destroy(out);
    tq_dirac_destroy(D);
    tq_dirac_destroy(Db);
    tq_field_destroy(g);
    tq_field_destroy(gb);
    tq_host_gauge_free(&hg);
    tq_host_gauge_free(&bad);
    free(links); free(psi); free(lpsi);
}

static int parse4(int *argc, char **argv, const char *name, int v[4])
{
    for (int i = 1; i < *argc; i++) {
        if (strcmp(argv[i], name)) continue;
        if (i + 4 >= *argc) return -1;
        for (int k = 0; k < 4; k++) v[k] = atoi(argv[i + 1 + k]);
        for (int j = i; j + 5 < *argc; j++) argv[j] = argv[j + 5];
        *argc -= 5;
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    lp.block[0] = lp.block[1] = lp.block[2] = lp.block[3] = 4;
    if (parse4(&argc, argv, "--procs", lp.procs) < 0 || parse4(&argc, argv, "--block", lp.block) < 0) {
        fprintf(stderr, "test_mpi_dirac: --procs and --block take four numbers\n");
        return 2;
    }
    int poison = 0;
    for (int i = 1; i < argc; i++)
        if (!strcmp(argv[i], "--poison")) {
            poison = 1;
            for (int j = i; j + 1 < argc; j++) argv[j] = argv[j + 1];
            argc--;
            break;
        }
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 1;
    ip.verbosity = 0;
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s\n", tq_last_error()); return 2; }
    if (argc != 2)
        return tq_test_skip("test_mpi_dirac", "usage: test_mpi_dirac OUT [--procs X Y Z T] [--block X Y Z T] (run by test_mpi_dirac.sh)");
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    char name[64];
    snprintf(name, sizeof name, "test_mpi_dirac (rank %d of %d)", ri.mpi_rank, ri.mpi_size);
    out_fd = open(argv[1], O_WRONLY | O_CREAT, 0644);
    CHECK(out_fd >= 0, "cannot open %s", argv[1]);
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    if (lat && out_fd >= 0) {
        tq_lattice_get_info(lat, &li);
        printf("%s: grid %dx%dx%dx%d, local %dx%dx%dx%d, %d of %d blocks\n", name, li.procs[0], li.procs[1], li.procs[2],
               li.procs[3], li.local[0], li.local[1], li.local[2], li.local[3], li.nblocks, li.nblocks_global);
        if (poison) run_poisoned(lat, ri.mpi_rank, ri.mpi_size);
        else run(lat);
    }
    tq_lattice_destroy(lat);
    if (out_fd >= 0) close(out_fd);
    tq_finalize();
    return tq_test_finish(name);
}
