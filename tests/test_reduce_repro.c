/* Bitwise reproducibility of reductions across StarPU scheduling policies.
 *
 * taskqcd.h promises that reductions "accumulate in double and combine per-block partial
 * sums in block order, so results are bitwise reproducible for a decomposition and
 * placement". On an 8x8x8x8 lattice in 4x4x4x4 blocks (16 blocks, both parities: 32 tasks
 * per reduction) this runs norm2, rdot, cdot, axpy_norm2, cg_update, bicgstab_update and
 * cdot_norm2 (fused ones from freshly imported inputs), in double, single and half, under
 * the schedulers eager, dmda, lws, random, ws and prio, with 2 CPU workers and eager with
 * 1, restarting the runtime (tq_finalize, tq_init) in between; every result, and the
 * fields the fused ops write, must be the same bit for bit (memcmp). Each configuration also
 * runs twice in a row. Placement is CPU only: a task on a GPU sums its block in another
 * order. When CUDA workers run, the same is repeated with placement CUDA only.
 * A different decomposition (8 blocks of 8x8x4x2, and one block) must agree within rounding.
 *
 * If the runtime cannot be restarted in one process, the program runs itself again
 * (argv[0] --child SCHED NCPUS PLACEMENT) per configuration, with STARPU_SCHED set, and
 * compares the printed %a values (TQ_TEST_REPRO_CHILD=1 forces that mode). */
#include "tq_test.h"
#include "../reference/blas_reference.h"

#include <stdint.h>
#include <unistd.h>

#define MAXVAL 512

typedef struct results {
    int n;
    double v[MAXVAL];
    char sched[32];
    int ncuda;
} results;

static void push(results *r, double x)
{
    if (r->n < MAXVAL) r->v[r->n] = x;
    r->n++;
}

/* FNV-1a of a field's exported contents, folded into a double's bits (exact compare). */
static void push_hash(results *r, const double *h, size_t n)
{
    uint64_t x = 1469598103934665603ULL;
    const unsigned char *b = (const unsigned char *)h;
    for (size_t i = 0; i < n * sizeof(double); i++) { x ^= b[i]; x *= 1099511628211ULL; }
    double d;
    x &= 0x000FFFFFFFFFFFFFULL;          /* a finite double (exponent 0: subnormal or 0) */
    memcpy(&d, &x, sizeof d);
    push(r, d);
}

static const char *const op_labels[] = {"norm2", "rdot", "cdot.re", "cdot.im", "axpy_norm2", "hash(y)",
                                        "cg_update", "hash(x)", "hash(r)", "bicgstab |r|^2", "bicgstab re",
                                        "bicgstab im", "hash(x)", "hash(r)", "cdot_norm2 re", "cdot_norm2 im",
                                        "cdot_norm2 |x|^2"};
#define NLABELS ((int)(sizeof op_labels / sizeof op_labels[0]))

/* All reductions on one lattice, for each precision, appended to r. */
static int compute(const int block[4], results *r)
{
    const int dims[4] = {8, 8, 8, 8};
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    if (block) memcpy(lp.block, block, sizeof lp.block);
    tq_lattice *lat = NULL;
    if (tq_lattice_create(&lp, &lat) != TQ_SUCCESS) {
        fprintf(stderr, "lattice: %s\n", tq_last_error());
        return -1;
    }
    const int64_t V = 8 * 8 * 8 * 8, n = V * 24;
    double *h[6];
    for (int i = 0; i < 6; i++) {
        h[i] = malloc((size_t)n * sizeof(double));
        if (!h[i]) exit(99);
        ref_fill_random(h[i], V, 24, 4242, i);
    }
    double *out = malloc((size_t)n * sizeof(double));
    if (!out) exit(99);
    const tq_precision precs[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
    int rc = 0;
    for (int p = 0; p < 3 && !rc; p++) {
        tq_field_params fp = {TQ_FIELD_SPINOR, precs[p], TQ_FULL, (tq_recon)0, 0};
        tq_field *f[6] = {0};
        for (int i = 0; i < 6; i++)
            if (tq_field_create(lat, &fp, &f[i]) != TQ_SUCCESS) rc = -1;
#define RUN(call) do { if (!rc && (call) != TQ_SUCCESS) { fprintf(stderr, "%s: %s\n", #call, tq_last_error()); rc = -1; } } while (0)
#define IMPORT(k) do { for (int i_ = 0; i_ < (k); i_++) RUN(tq_field_import(f[i_], h[i_])); } while (0)
        double d = 0, e = 0;
        tq_complex z = {0, 0};
        IMPORT(2);
        RUN(tq_blas_norm2(f[0], &d)); push(r, d);
        RUN(tq_blas_rdot(f[0], f[1], &d)); push(r, d);
        RUN(tq_blas_cdot(f[0], f[1], &z)); push(r, z.re); push(r, z.im);
        RUN(tq_blas_axpy_norm2(-0.37, f[0], f[1], &d)); push(r, d);
        RUN(tq_field_export(f[1], out)); push_hash(r, out, (size_t)n);
        IMPORT(4);
        RUN(tq_blas_cg_update(0.61, f[0], f[1], f[2], f[3], &d)); push(r, d);
        RUN(tq_field_export(f[2], out)); push_hash(r, out, (size_t)n);
        RUN(tq_field_export(f[3], out)); push_hash(r, out, (size_t)n);
        IMPORT(6);
        tq_complex alpha = {0.45, 0.2}, omega = {-0.7, 0.35};
        RUN(tq_blas_bicgstab_update(alpha, omega, f[0], f[1], f[2], f[3], f[4], f[5], &d, &z));
        push(r, d); push(r, z.re); push(r, z.im);
        RUN(tq_field_export(f[4], out)); push_hash(r, out, (size_t)n);
        RUN(tq_field_export(f[5], out)); push_hash(r, out, (size_t)n);
        IMPORT(2);
        RUN(tq_blas_cdot_norm2(f[0], f[1], &z, &e)); push(r, z.re); push(r, z.im); push(r, e);
#undef IMPORT
#undef RUN
        for (int i = 0; i < 6; i++) tq_field_destroy(f[i]);
    }
    tq_wait_all();
    for (int i = 0; i < 6; i++) free(h[i]);
    free(out);
    tq_lattice_destroy(lat);
    return rc;
}

static const int block16[4] = {4, 4, 4, 4};

/* One configuration in this process: start the runtime, compute twice, stop it.
 * Returns 0, -1 on failure, 1 if the runtime cannot be started again. */
static int run_config(const char *sched, int ncpus, tq_where where, results *r, results *again)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.verbosity = 0;
    ip.sched = sched;
    ip.ncpus = ncpus;
    if (where == TQ_WHERE_CPU) ip.ncuda = -1;
    tq_status st = tq_init(&ip);
    if (st != TQ_SUCCESS) {
        fprintf(stderr, "tq_init(%s): %s\n", sched, tq_last_error());
        return 1;
    }
    tq_runtime_info info;
    CHECK_OK(tq_get_runtime_info(&info));
    snprintf(r->sched, sizeof r->sched, "%s", info.sched);
    r->ncuda = info.ncuda_workers;
    int rc = 0;
    if (tq_set_placement(where) != TQ_SUCCESS) rc = -1;
    r->n = again->n = 0;
    if (!rc) rc = compute(block16, r);
    if (!rc) rc = compute(block16, again);
    CHECK_OK(tq_finalize());
    return rc;
}

/* --child SCHED NCPUS WHERE: print the results as %a, one per line. */
static int child(const char *sched, int ncpus, int where)
{
    results r, again;
    memset(&r, 0, sizeof r);
    memset(&again, 0, sizeof again);
    int rc = run_config(sched, ncpus, (tq_where)where, &r, &again);
    if (rc) return 2;
    printf("sched %s\nncuda %d\n", r.sched, r.ncuda);
    for (int i = 0; i < r.n; i++) printf("%a %a\n", r.v[i], again.v[i]);
    return 0;
}

/* Runs the same configuration in a new process (STARPU_SCHED set as well). */
static int run_child(const char *self, const char *sched, int ncpus, tq_where where, results *r, results *again)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "STARPU_SCHED=%s '%s' --child %s %d %d", sched, self, sched, ncpus, (int)where);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    r->n = again->n = 0;
    char line[256];
    while (fgets(line, sizeof line, p)) {
        double a, b;
        if (!strncmp(line, "sched ", 6)) {
            snprintf(r->sched, sizeof r->sched, "%.31s", line + 6);
            r->sched[strcspn(r->sched, "\n")] = '\0';
        } else if (!strncmp(line, "ncuda ", 6)) {
            r->ncuda = atoi(line + 6);
        } else if (sscanf(line, "%la %la", &a, &b) == 2) {
            push(r, a);
            push(again, b);
        }
    }
    int st = pclose(p);
    return st == 0 ? 0 : -1;
}

static const char *where_name(tq_where w) { return w == TQ_WHERE_CUDA ? "CUDA" : "CPU"; }

static void compare_bitwise(const results *a, const char *an, const results *b, const char *bn)
{
    CHECK(a->n == b->n, "%s: %d results, %s: %d", an, a->n, bn, b->n);
    int ndiff = 0;
    for (int i = 0; i < a->n && i < b->n; i++)
        if (memcmp(&a->v[i], &b->v[i], sizeof(double))) {
            if (ndiff++ < 6)
                fprintf(stderr, "  result %d (%s, %s): %a (%s) vs %a (%s)\n", i, op_labels[i % NLABELS],
                        i / NLABELS == 0 ? "double" : i / NLABELS == 1 ? "single" : "half", a->v[i], an, b->v[i], bn);
        }
    CHECK(ndiff == 0, "%s vs %s: %d of %d results differ in their bits", an, bn, ndiff, a->n);
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--child")) return child(argv[2], atoi(argv[3]), atoi(argv[4]));
    /* the test chooses the policy; an inherited STARPU_SCHED would override it */
    unsetenv("STARPU_SCHED");

    struct { const char *sched; int ncpus; int required; } cfg[] = {
        {"eager", 2, 1}, {"dmda", 2, 1}, {"lws", 2, 0}, {"random", 2, 0}, {"ws", 2, 0}, {"prio", 2, 0},
        {"eager", 1, 1},
    };
    const int ncfg = (int)(sizeof cfg / sizeof cfg[0]);
    static results res[16], again[16];
    /* TQ_TEST_REPRO_CHILD=1: use the child processes even when a restart works */
    const char *force = getenv("TQ_TEST_REPRO_CHILD");
    int use_child = force && *force && strcmp(force, "0"), ncuda = 0;

    for (int pass = 0; pass < 2; pass++) {
        tq_where where = pass ? TQ_WHERE_CUDA : TQ_WHERE_CPU;
        if (where == TQ_WHERE_CUDA && ncuda == 0) {
            printf("no CUDA worker: placement CUDA not tested\n");
            break;
        }
        int base = -1;
        for (int c = 0; c < ncfg; c++) {
            char label[64];
            snprintf(label, sizeof label, "%s/%d cpu/%s", cfg[c].sched, cfg[c].ncpus, where_name(where));
            int rc = use_child ? 1 : run_config(cfg[c].sched, cfg[c].ncpus, where, &res[c], &again[c]);
            if (rc == 1 && !use_child && c > 0) {
                printf("the runtime cannot be restarted in this process: running a child per configuration\n");
                use_child = 1;
            }
            if (use_child) rc = run_child(argv[0], cfg[c].sched, cfg[c].ncpus, where, &res[c], &again[c]);
            CHECK(rc == 0, "%s: computation failed", label);
            if (rc) continue;
            if (pass == 0 && c == 0) ncuda = res[c].ncuda;
            int got = !strcmp(res[c].sched, cfg[c].sched);
            printf("%-22s scheduler %-8s %d results%s\n", label, res[c].sched, res[c].n,
                   got ? "" : " (policy not available: StarPU used another)");
            if (cfg[c].required) CHECK(got, "%s: StarPU ran scheduler '%s'", label, res[c].sched);
            compare_bitwise(&res[c], label, &again[c], "the same, run again");
            if (base < 0) base = c;
            else {
                char bl[64];
                snprintf(bl, sizeof bl, "%s/%d cpu", cfg[base].sched, cfg[base].ncpus);
                compare_bitwise(&res[c], label, &res[base], bl);
            }
        }
        if (base >= 0 && pass == 0) {
            /* other decompositions: equal within rounding, and (tested) not necessarily bitwise */
            const int block8[4] = {8, 8, 4, 2}, block1[4] = {8, 8, 8, 8};
            const int *blocks[2] = {block8, block1};
            const char *names[2] = {"8 blocks of 8x8x4x2", "1 block"};
            tq_init_params ip;
            tq_init_params_default(&ip);
            ip.verbosity = 0;
            ip.sched = "eager";
            if (tq_init(&ip) != TQ_SUCCESS) {
                CHECK(use_child, "tq_init for the decomposition check: %s", tq_last_error());
                if (use_child) printf("(decomposition check skipped: no restart in process)\n");
            } else {
                CHECK_OK(tq_set_placement(TQ_WHERE_CPU));
                for (int b = 0; b < 2; b++) {
                    results r;
                    memset(&r, 0, sizeof r);
                    CHECK(compute(blocks[b], &r) == 0, "decomposition %s failed", names[b]);
                    CHECK(r.n == res[base].n, "decomposition %s: %d results", names[b], r.n);
                    int nbit = 0;
                    double worst = 0;
                    for (int i = 0; i < r.n && i < res[base].n; i++) {
                        const char *lab = op_labels[i % NLABELS];
                        if (!strncmp(lab, "hash", 4)) {
                            /* fields: the same per-site arithmetic whatever the blocks */
                            CHECK(!memcmp(&r.v[i], &res[base].v[i], sizeof(double)), "decomposition %s: %s differs", names[b], lab);
                            continue;
                        }
                        /* dot products may cancel: judge them against |x|^2 (|<x,y>| <= |x||y|,
                         * and x and y have the same distribution) */
                        double s = fmax(fabs(res[base].v[i]), res[base].v[(i / NLABELS) * NLABELS]);
                        double e = fabs(r.v[i] - res[base].v[i]) / s;
                        if (!(e <= worst)) worst = e;
                        nbit += memcmp(&r.v[i], &res[base].v[i], sizeof(double)) != 0;
                    }
                    CHECK(worst <= 1e-12, "decomposition %s: relative difference %.3g", names[b], worst);
                    printf("decomposition %-20s max relative difference %.3g, %d of %d results differ in their bits\n",
                           names[b], worst, nbit, r.n);
                }
                CHECK_OK(tq_finalize());
            }
        }
    }
    return tq_test_finish("test_reduce_repro");
}
