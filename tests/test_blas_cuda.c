/* Every CUDA BLAS codelet against the CPU codelet on the same data.
 *
 * For each op, precision (double, single, half), field kind (spinor, staggered) and subset
 * (full, one parity), on several lattices: import random inputs, run the op on CPU workers
 * only (tq_set_placement(TQ_WHERE_CPU)), export every operand; import the same inputs
 * again, run on CUDA workers only, export, and compare:
 *  - written fields, component by component relative to the site's largest |component|
 *    (half precision's per-site norm makes that the natural scale): within 1e-14 (double),
 *    1e-6 (single), 1e-4 (half: a value next to a rounding boundary may round to the other
 *    int16 when nvcc fuses a multiply-add, one quantum = 3.1e-5);
 *  - fields the op only reads: unchanged, bit for bit;
 *  - reductions: CPU and CUDA sum in different orders, so within 1e-12 of a scale bounding
 *    the rounding (the norm; sum |x||y| for a dot product); and the CUDA result must be
 *    bitwise the same when the op runs again (the kernels reduce in a fixed order);
 *  - the CUDA result against the double-precision host reference (tests/blas_reference.h)
 *    with the storage rounding bounds of test_blas.
 * Lattices: a small one with many blocks, one whose per-parity block size is not a multiple
 * of the CUDA block size (tail handling), and a staggered 16x16x32x66 lattice in one block,
 * large enough that the reduction kernels' grid-stride loops take two steps (norm2, cdot,
 * cg_update, bicgstab_update and caxpby, double and half only; TQ_TEST_QUICK=1 leaves it out). Skips (exit 77) when no CUDA worker runs. */
#include "tq_test.h"
#include "core/field_internal.h"   /* tq_internal_field_random */
#include <starpu.h>
#include "../reference/blas_reference.h"

#include <stdint.h>

#define SENTINEL 12345.678
#define NOPS_ALL (RO_NUM + 3)   /* the ops, then copies to double, single, half */

static const tq_precision precs[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
static int prec_index(tq_precision p) { return p == TQ_DOUBLE ? 0 : p == TQ_SINGLE ? 1 : 2; }

/* CPU vs CUDA, relative to the site max */
static double cmp_tol(tq_precision p) { return p == TQ_DOUBLE ? 1e-14 : p == TQ_SINGLE ? 1e-6 : 1e-4; }
#define REDUCE_TOL reduce_tol(prec)

typedef struct lat_setup {
    const char *name;
    tq_lattice *lat;
    int64_t V;
    unsigned char *in[3];
    int staggered_only;
} lat_setup;

/* Largest errors seen, per op (copies to another precision: RO_NUM + target precision) and
 * (source) precision: written fields CPU vs CUDA (relative to site max), reductions CPU vs CUDA
 * (relative to scale), CUDA vs reference (in units of the allowed error). */
static double worst_field[NOPS_ALL][3], worst_red[NOPS_ALL][3], worst_ref[NOPS_ALL][3];
static int seen[NOPS_ALL][3];
static int ncases;
static tq_where cuda_where = TQ_WHERE_CUDA;

static const char *kind_str(tq_field_kind k) { return k == TQ_FIELD_SPINOR ? "spinor" : "staggered"; }
static const char *sub_str(tq_subset s) { return s == TQ_FULL ? "full" : s == TQ_EVEN ? "even" : "odd"; }

static double site_max(const double *h, int64_t s, int nreal)
{
    double m = 0.0;
    for (int k = 0; k < nreal; k++) m = fmax(m, fabs(h[s * nreal + k]));
    return m;
}

static void upd(double *w, double v) { if (!(v <= *w)) *w = v; }

/* max over the subset of |a - b| / (site max of b, or of the inputs if larger) */
static double rel_diff(const ref_geom *g, const double *a, const double *b, double *const *inputs, int nin)
{
    double worst = 0.0;
    for (int64_t s = 0; s < g->nsites; s++) {
        if (!g->in[s]) continue;
        double m = site_max(b, s, g->nreal);
        for (int i = 0; i < nin; i++) m = fmax(m, site_max(inputs[i], s, g->nreal));
        for (int k = 0; k < g->nreal; k++) {
            double e = fabs(a[s * g->nreal + k] - b[s * g->nreal + k]);
            upd(&worst, m > 0 ? e / m : (e > 0 || e != e ? INFINITY : 0.0));
        }
    }
    return worst;
}

/* out vs the reference in units of q * (site max of ref) + arith * (site max of inputs) */
static double ref_ratio(const ref_geom *g, const double *out, const double *ref, double *const *inputs,
                        int nin, double q, double arith)
{
    double worst = 0.0;
    for (int64_t s = 0; s < g->nsites; s++) {
        if (!g->in[s]) continue;
        double om = site_max(ref, s, g->nreal), im = om;
        for (int i = 0; i < nin; i++) im = fmax(im, site_max(inputs[i], s, g->nreal));
        double bound = q * om + arith * im;
        for (int k = 0; k < g->nreal; k++) {
            double e = fabs(out[s * g->nreal + k] - ref[s * g->nreal + k]);
            upd(&worst, bound > 0 ? e / bound : (e > 0 || e != e ? INFINITY : 0.0));
        }
    }
    return worst;
}

static int import_all(tq_field *const *f, double *const *hin, int nop)
{
    for (int i = 0; i < nop; i++)
        if (tq_field_import(f[i], hin[i]) != TQ_SUCCESS) return -1;
    return 0;
}

static int export_all(tq_field *const *f, double *const *h, int nop, int64_t n)
{
    for (int i = 0; i < nop; i++) {
        for (int64_t j = 0; j < n; j++) h[i][j] = SENTINEL;
        if (tq_field_export(f[i], h[i]) != TQ_SUCCESS) return -1;
    }
    return 0;
}

/* op (or a copy when op >= RO_NUM: source precision prec, target precision pd) on CPU, then
 * on CUDA, from the same inputs. */
static void run_case(const lat_setup *L, tq_field_kind kind, tq_subset sub, tq_precision prec,
                     int op, tq_precision pd, int slot, uint64_t seed)
{
    const int nreal = kind == TQ_FIELD_SPINOR ? 24 : 6;
    const int64_t n = L->V * nreal;
    const int is_copy = op == RO_COPY;
    const ref_opdef *d = &ref_ops[op];
    const int pi = prec_index(prec);
    const tq_precision pout = is_copy ? pd : prec;   /* precision of the written fields */
    ref_geom g = {L->V, nreal, L->in[sub]};
    char what[200];
    if (is_copy)
        snprintf(what, sizeof what, "copy %s->%s on %s %s %s", tq_precision_name(prec), tq_precision_name(pd),
                 L->name, kind_str(kind), sub_str(sub));
    else
        snprintf(what, sizeof what, "%s on %s %s %s %s", d->name, L->name, kind_str(kind), sub_str(sub),
                 tq_precision_name(prec));
    ncases++;
    seen[slot][pi] = 1;

    tq_field *f[6] = {0};
    double *hin[6] = {0}, *hq[6] = {0}, *hcpu[6] = {0}, *hgpu[6] = {0}, *href[6] = {0};
    int ok = 1;
    for (int i = 0; i < d->nop && ok; i++) {
        tq_field_params fp = {kind, (is_copy && i == 1) ? pd : prec, sub, (tq_recon)0, 0};
        hin[i] = malloc((size_t)n * sizeof(double));
        hq[i] = malloc((size_t)n * sizeof(double));
        hcpu[i] = malloc((size_t)n * sizeof(double));
        hgpu[i] = malloc((size_t)n * sizeof(double));
        href[i] = malloc((size_t)n * sizeof(double));
        if (!hin[i] || !hq[i] || !hcpu[i] || !hgpu[i] || !href[i]) { fprintf(stderr, "out of memory\n"); exit(99); }
        ref_fill_random(hin[i], L->V, nreal, seed, i);
        tq_status st = tq_field_create(L->lat, &fp, &f[i]);
        CHECK(st == TQ_SUCCESS, "%s: create operand %d: %s", what, i, tq_last_error());
        if (st != TQ_SUCCESS) ok = 0;
    }
    double rc[3] = {NAN, NAN, NAN}, rg[3] = {NAN, NAN, NAN}, rg2[3] = {NAN, NAN, NAN};
    if (ok) {
        /* CPU */
        CHECK_OK(tq_set_placement(TQ_WHERE_CPU));
        CHECK(import_all(f, hin, d->nop) == 0, "%s: import: %s", what, tq_last_error());
        CHECK(export_all(f, hq, d->nop, n) == 0, "%s: export: %s", what, tq_last_error());
        tq_status st = ref_run_lib(op, f, rc);
        CHECK(st == TQ_SUCCESS, "%s on CPU: %s: %s", what, tq_status_name(st), tq_last_error());
        CHECK(export_all(f, hcpu, d->nop, n) == 0, "%s: export: %s", what, tq_last_error());
        /* CUDA, same inputs */
        CHECK_OK(tq_set_placement(cuda_where));
        CHECK(import_all(f, hin, d->nop) == 0, "%s: import: %s", what, tq_last_error());
        st = ref_run_lib(op, f, rg);
        CHECK(st == TQ_SUCCESS, "%s on CUDA: %s: %s", what, tq_status_name(st), tq_last_error());
        CHECK(export_all(f, hgpu, d->nop, n) == 0, "%s: export: %s", what, tq_last_error());
        if (d->nres) {
            /* again: bitwise the same */
            CHECK(import_all(f, hin, d->nop) == 0, "%s: import: %s", what, tq_last_error());
            st = ref_run_lib(op, f, rg2);
            CHECK(st == TQ_SUCCESS, "%s on CUDA (again): %s", what, tq_last_error());
            CHECK(memcmp(rg, rg2, (size_t)d->nres * sizeof(double)) == 0,
                  "%s: CUDA reductions not reproducible: %a vs %a", what, rg[0], rg2[0]);
        }
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));

        /* fields */
        for (int i = 0; i < d->nop; i++) memcpy(href[i], hq[i], (size_t)n * sizeof(double));
        double rref[3] = {0, 0, 0};
        ref_run_ref(op, &g, href, rref);
        for (int i = 0; i < d->nop; i++) {
            if (d->wr >> i & 1u) {
                double e = rel_diff(&g, hgpu[i], hcpu[i], hq, d->nop);
                CHECK(e <= cmp_tol(pout), "%s: operand %d CUDA vs CPU: max relative error %.3g (tol %.3g)",
                      what, i, e, cmp_tol(pout));
                upd(&worst_field[slot][pi], e);
                double r = ref_ratio(&g, hgpu[i], href[i], hq, d->nop, quantum(pout), arith_tol(pout));
                CHECK(r <= 1.0, "%s: operand %d CUDA vs reference: %.3g of the allowed error", what, i, r);
                upd(&worst_ref[slot][pi], r);
            } else {
                CHECK(memcmp(hgpu[i], hq[i], (size_t)n * sizeof(double)) == 0,
                      "%s: operand %d is read-only but CUDA changed it", what, i);
            }
            int bad = 0;
            for (int64_t s = 0; s < L->V; s++)
                if (!g.in[s] && hgpu[i][s * nreal] != SENTINEL) bad++;
            CHECK(bad == 0, "%s: operand %d: %d sites outside the subset written", what, i, bad);
        }
        /* reductions */
        if (d->nres) {
            double dummy[3], scale[3] = {0, 0, 0};
            ref_reduce_after(op, &g, hcpu, dummy, scale);
            for (int r = 0; r < d->nres; r++) {
                double e = fabs(rg[r] - rc[r]);
                double rel = scale[r] > 0 ? e / scale[r] : (e > 0 || e != e ? INFINITY : 0.0);
                CHECK(rel <= REDUCE_TOL, "%s: result %d: CUDA %.17g, CPU %.17g (relative %.3g)", what, r, rg[r], rc[r], rel);
                upd(&worst_red[slot][pi], rel);
                /* against the reference; a fused reduction may also be of the written
                 * operand as stored (see test_blas.c) */
                double alt[3], ascale[3];
                ref_reduce_after(op, &g, hgpu, alt, ascale);
                double er = fabs(rg[r] - rref[r]), ea = fabs(rg[r] - alt[r]);
                CHECK(er <= REDUCE_TOL * scale[r] || (d->fused && prec != TQ_DOUBLE && ea <= REDUCE_TOL * ascale[r]),
                      "%s: result %d: CUDA %.17g, reference %.17g", what, r, rg[r], rref[r]);
            }
        }
    }
    for (int i = 0; i < d->nop; i++) {
        tq_field_destroy(f[i]);
        free(hin[i]); free(hq[i]); free(hcpu[i]); free(hgpu[i]); free(href[i]);
    }
}

static int lat_setup_make(lat_setup *L, const char *name, const int dims[4], const int block[4], int staggered_only)
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    if (block) memcpy(lp.block, block, sizeof lp.block);
    L->name = name;
    L->staggered_only = staggered_only;
    L->lat = NULL;
    tq_status st = tq_lattice_create(&lp, &L->lat);
    CHECK(st == TQ_SUCCESS, "lattice %s: %s", name, tq_last_error());
    if (st != TQ_SUCCESS) return -1;
    tq_lattice_info info;
    CHECK_OK(tq_lattice_get_info(L->lat, &info));
    printf("lattice %s: %dx%dx%dx%d, block %dx%dx%dx%d, %d block(s), %lld sites per block and parity\n", name,
           dims[0], dims[1], dims[2], dims[3], info.block[0], info.block[1], info.block[2], info.block[3],
           info.nblocks, (long long)(info.block_volume / 2));
    L->V = (int64_t)dims[0] * dims[1] * dims[2] * dims[3];
    for (int sub = 0; sub < 3; sub++)
        if (!(L->in[sub] = malloc((size_t)L->V))) exit(99);
    for (int64_t s = 0; s < L->V; s++) {
        int64_t r = s;
        int par = 0;
        for (int mu = 0; mu < 4; mu++) { par += (int)(r % dims[mu]); r /= dims[mu]; }
        L->in[TQ_EVEN][s] = (par & 1) == 0;
        L->in[TQ_ODD][s] = (par & 1) == 1;
        L->in[TQ_FULL][s] = 1;
    }
    return 0;
}

/* the ops run on the large lattice: the reductions, and a few others */
static int large_op(int op)
{
    return op == RO_NORM2 || op == RO_CDOT || op == RO_CG_UPDATE || op == RO_BICGSTAB_UPDATE || op == RO_CAXPBY;
}

static void lat_setup_free(lat_setup *L)
{
    tq_lattice_destroy(L->lat);
    for (int sub = 0; sub < 3; sub++) free(L->in[sub]);
}

/* StarPU's accounting of main memory: bytes in use (0 where it has no total). */
static long long main_ram_in_use(void)
{
    const starpu_ssize_t total = starpu_memory_get_total(STARPU_MAIN_RAM);
    return total > 0 ? (long long)(total - starpu_memory_get_available(STARPU_MAIN_RAM)) : 0;
}

/* Import and export of fields whose blocks GPUs own go straight to and from the GPUs:
 * the values come back bit for bit (double) or to the precision's rounding, and StarPU
 * allocates nothing for them in main memory (its accounting there may allow far less than
 * the host has: 8 GB of 128 on the GPU machine; once full, the multigrid set-up's imports
 * waited for ever). A first round (double) is not held to that: whatever the first import
 * makes once for the process is not a field's. */
static void check_host_transfer(void)
{
    const int dims[4] = {8, 8, 8, 16}, block[4] = {8, 8, 8, 8};
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) { CHECK(0, "lattice for the transfer check: %s", tq_last_error()); return; }
    const int64_t n = (int64_t)8 * 8 * 8 * 16 * 24;
    double *in = malloc(sizeof(double) * (size_t)n), *out = malloc(sizeof(double) * (size_t)n);
    double *again = malloc(sizeof(double) * (size_t)n);
    if (!in || !out || !again) exit(99);
    tq_test_fill(in, n, 77);
    CHECK_OK(tq_set_placement(TQ_WHERE_CUDA));
    printf("StarPU's main memory: %lld bytes\n", (long long)starpu_memory_get_total(STARPU_MAIN_RAM));
    for (int round = 0; round < 4; round++) {
        const tq_precision prec = precs[round ? round - 1 : 0];
        const char *pname = tq_precision_name(prec);
        long long used[4];
        used[0] = main_ram_in_use();
        tq_field_params fp = {TQ_FIELD_SPINOR, prec, TQ_FULL, (tq_recon)0, 0};
        tq_field *f = NULL;
        CHECK_OK(tq_field_create(lat, &fp, &f));
        if (!f) continue;
        used[1] = main_ram_in_use();
        CHECK_OK(tq_field_import(f, in));
        used[2] = main_ram_in_use();
        for (int64_t j = 0; j < n; j++) out[j] = SENTINEL;
        CHECK_OK(tq_field_export(f, out));
        double worst = 0;
        for (int64_t j = 0; j < n; j++) worst = fmax(worst, fabs(out[j] - in[j]));
        CHECK(worst <= (prec == TQ_DOUBLE ? 0 : prec == TQ_SINGLE ? 1e-6 : 1e-3) * 4,
              "%s spinor: import then export through the GPU differs by %g", pname, worst);
        /* the same bits again: the GPU holds what was imported */
        CHECK_OK(tq_field_import(f, out));
        CHECK_OK(tq_field_export(f, again));
        CHECK(memcmp(again, out, sizeof(double) * (size_t)n) == 0, "%s spinor: a second round trip changed the values", pname);
        used[3] = main_ram_in_use();   /* while the field exists (its buffers go with it) */
        printf("import/export through the GPU, %s%s: largest difference %.3g; StarPU's main memory in use %lld, "
               "%lld created, %lld imported, %lld exported\n", pname, round ? "" : " (first round)", worst, used[0], used[1],
               used[2], used[3]);
        if (round)
            CHECK(used[3] <= used[0], "%s spinor: StarPU's main memory in use grew by %lld bytes through its imports and exports",
                  pname, used[3] - used[0]);
        tq_field_destroy(f);
    }
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
    free(in);
    free(out);
    free(again);
    tq_lattice_destroy(lat);
}

/* Random fields (tq_internal_field_random) made on CUDA workers and on CPU workers: the
 * same bits in double and single precision (the values are exact in double), half within
 * one quantum (nvcc's float quantization against the host's). */
static void check_random_field_devices(void)
{
    const int dims[4] = {8, 8, 8, 16}, block[4] = {8, 8, 8, 8};
    tq_lattice *lat = tq_test_lattice(dims, block);
    if (!lat) { CHECK(0, "lattice for the random field check: %s", tq_last_error()); return; }
    const int64_t n = (int64_t)8 * 8 * 8 * 16 * 24;
    double *on_cpu = calloc((size_t)n, sizeof(double)), *on_gpu = calloc((size_t)n, sizeof(double));
    if (!on_cpu || !on_gpu) exit(99);
    for (int p = 0; p < 3; p++) {
        tq_field_params fp = {TQ_FIELD_SPINOR, precs[p], p == 1 ? TQ_ODD : TQ_FULL, (tq_recon)0, 0};
        tq_field *f = NULL;
        CHECK_OK(tq_field_create(lat, &fp, &f));
        if (!f) continue;
        CHECK_OK(tq_set_placement(TQ_WHERE_CPU));
        CHECK_OK(tq_internal_field_random(f, 5, 0x500));
        CHECK_OK(tq_field_export(f, on_cpu));
        CHECK_OK(tq_set_placement(cuda_where));
        CHECK_OK(tq_internal_field_random(f, 5, 0x500));
        CHECK_OK(tq_field_export(f, on_gpu));
        CHECK_OK(tq_set_placement(TQ_WHERE_ANY));
        double worst = 0;
        for (int64_t j = 0; j < n; j++) worst = fmax(worst, fabs(on_gpu[j] - on_cpu[j]));
        CHECK(precs[p] == TQ_HALF ? worst <= 3.1e-5 : !memcmp(on_cpu, on_gpu, sizeof(double) * (size_t)n),
              "random %s spinor made on the GPU and on CPU workers: largest difference %.3g", tq_precision_name(precs[p]),
              worst);
        printf("random %s spinor, GPU against CPU workers: largest difference %.3g\n", tq_precision_name(precs[p]), worst);
        tq_field_destroy(f);
    }
    free(on_cpu);
    free(on_gpu);
    tq_lattice_destroy(lat);
}

int main(void)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 99;
    /* TQ_TEST_CUDA_AS_CPU=1: run the "CUDA" side on CPU workers too, to check this test
     * itself on a machine without a GPU */
    const char *fake = getenv("TQ_TEST_CUDA_AS_CPU");
    if (fake && *fake && strcmp(fake, "0")) {
        cuda_where = TQ_WHERE_CPU;
        printf("TQ_TEST_CUDA_AS_CPU: comparing CPU with CPU\n");
    } else if (info.ncuda_workers == 0 || info.ncpu_workers == 0) {
        const char *why = !info.built_with_cuda ? "TaskQCD was built without CUDA"
                          : info.ncpu_workers == 0 ? "no CPU worker to compare with"
                          : "no CUDA worker runs (no GPU visible, or STARPU_NCUDA=0)";
        tq_finalize();
        return tq_test_skip("test_blas_cuda", why);
    }
    /* TQ_WHERE_CUDA must be accepted now */
    CHECK_OK(tq_set_placement(cuda_where));
    CHECK(tq_get_placement() == cuda_where, "placement not recorded");
    CHECK_OK(tq_set_placement(TQ_WHERE_ANY));

    if (cuda_where == TQ_WHERE_CUDA) check_host_transfer();
    check_random_field_devices();

    const char *quick = getenv("TQ_TEST_QUICK");
    int nlat = (quick && *quick && strcmp(quick, "0")) ? 2 : 3;
    const int d1[4] = {8, 8, 8, 16}, b1[4] = {4, 4, 4, 8};
    const int d2[4] = {6, 6, 6, 10};
    /* 270336 sites per parity: more than TQ_REDUCE_MAX_BLOCKS x TQ_REDUCE_THREADS = 262144 */
    const int d3[4] = {16, 16, 32, 66};
    lat_setup L[3];
    if (lat_setup_make(&L[0], "8x8x8x16/16-blocks", d1, b1, 0) || lat_setup_make(&L[1], "6x6x6x10", d2, NULL, 0) ||
        (nlat > 2 && lat_setup_make(&L[2], "16x16x32x66-staggered", d3, d3, 1)))
        return tq_test_finish("test_blas_cuda");

    uint64_t seed = 1000;
    for (int l = 0; l < nlat; l++)
        for (int k = L[l].staggered_only ? 1 : 0; k < 2; k++) {
            tq_field_kind kind = k ? TQ_FIELD_STAGGERED : TQ_FIELD_SPINOR;
            for (int sub = 0; sub < 2; sub++) {
                /* the large lattice: one subset is enough */
                if (L[l].staggered_only && sub) continue;
                tq_subset s = sub == 0 ? TQ_FULL : (l & 1) ? TQ_EVEN : TQ_ODD;
                for (int p = 0; p < 3; p++) {
                    if (L[l].staggered_only && precs[p] == TQ_SINGLE) continue;
                    for (int op = 0; op < RO_NUM; op++)
                        if (L[l].staggered_only && !large_op(op)) {
                            continue;
                        } else if (op == RO_COPY) {
                            /* to every precision: same-precision copy in its slot, others after */
                            for (int p2 = 0; p2 < 3; p2++) {
                                int slot = p2 == p ? RO_COPY : RO_NUM + p2;
                                run_case(&L[l], kind, s, precs[p], op, precs[p2], slot, seed++);
                            }
                        } else {
                            run_case(&L[l], kind, s, precs[p], op, precs[p], op, seed++);
                        }
                }
            }
        }

    printf("%-22s %-38s %-38s %s\n", "op", "fields CUDA vs CPU (max rel. error)", "reductions CUDA vs CPU (rel. error)",
           "CUDA vs reference (of allowed)");
    printf("%-22s %12s %12s %12s %12s %12s %12s %8s %8s %8s\n", "", "double", "single", "half", "double", "single",
           "half", "double", "single", "half");
    for (int slot = 0; slot < NOPS_ALL; slot++) {
        char name[48];
        const ref_opdef *d = &ref_ops[slot < RO_NUM ? slot : RO_COPY];
        if (slot < RO_NUM) snprintf(name, sizeof name, "%s", slot == RO_COPY ? "copy (same prec.)" : d->name);
        else snprintf(name, sizeof name, "copy to %s", tq_precision_name(precs[slot - RO_NUM]));
        printf("%-22s", name);
        for (int p = 0; p < 3; p++)
            if (seen[slot][p] && d->wr) printf(" %12.3g", worst_field[slot][p]); else printf(" %12s", "-");
        for (int p = 0; p < 3; p++)
            if (seen[slot][p] && d->nres) printf(" %12.3g", worst_red[slot][p]); else printf(" %12s", "-");
        for (int p = 0; p < 3; p++)
            if (seen[slot][p] && d->wr) printf(" %8.3g", worst_ref[slot][p]); else printf(" %8s", "-");
        printf("\n");
    }
    printf("(copy to X: columns are the source precision; tolerances: fields 1e-14/1e-6/1e-4 of the site max, "
           "reductions %.0e (half %.1e), reference <= 1)\n%d cases\n", reduce_tol(TQ_DOUBLE), reduce_tol(TQ_HALF), ncases);

    for (int l = nlat - 1; l >= 0; l--) lat_setup_free(&L[l]);
    CHECK_OK(tq_finalize());
    return tq_test_finish("test_blas_cuda");
}
