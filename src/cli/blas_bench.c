/* Timing of BLAS-1 and reduction kernels through the task path, with the effective
 * bandwidth (bytes of every field read or written once per call, as QUDA counts BLAS
 * traffic). Used by `taskqcd blas`, `taskqcd demo` and bench/bench_blas. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"
#include "taskqcd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


typedef struct bench_op {
    const char *name;
    int fields_moved;   /* vectors read + written per call */
} bench_op;

static const bench_op bench_ops[] = {
    {"copy", 2}, {"axpy", 3}, {"xpay", 3}, {"caxpy", 3}, {"norm2", 1}, {"rdot", 2},
    {"cdot", 2}, {"axpy_norm2", 3}, {"cg_update", 6},
};
#define NOPS ((int)(sizeof bench_ops / sizeof bench_ops[0]))

static tq_status run_op(const char *name, tq_field *const *v, double *sink)
{
    tq_complex a = {0.5, -0.25};
    tq_complex d;
    if (!strcmp(name, "copy")) return tq_blas_copy(v[1], v[0]);
    if (!strcmp(name, "axpy")) return tq_blas_axpy(1e-3, v[0], v[1]);
    if (!strcmp(name, "xpay")) return tq_blas_xpay(v[0], 0.999, v[1]);
    if (!strcmp(name, "caxpy")) return tq_blas_caxpy(a, v[0], v[1]);
    if (!strcmp(name, "norm2")) return tq_blas_norm2(v[0], sink);
    if (!strcmp(name, "rdot")) return tq_blas_rdot(v[0], v[1], sink);
    if (!strcmp(name, "cdot")) { tq_status s = tq_blas_cdot(v[0], v[1], &d); *sink += d.re; return s; }
    if (!strcmp(name, "axpy_norm2")) return tq_blas_axpy_norm2(1e-3, v[0], v[1], sink);
    if (!strcmp(name, "cg_update")) return tq_blas_cg_update(1e-3, v[0], v[1], v[2], v[3], sink);
    return TQ_ERR_INVALID_ARG;
}

static const char *where_name(tq_where w)
{
    return w == TQ_WHERE_CPU ? "cpu" : w == TQ_WHERE_CUDA ? "cuda" : "any";
}

/* Times the selected ops (comma list or "all") with placement w; one row per op. */
int tq_blas_benchmark(tq_lattice *lat, tq_precision prec, int niter, tq_where w,
                      const char *ops, double ceiling_gbs, FILE *out)
{
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    if (tq_set_placement(w)) {
        fprintf(out, "  %-12s %-5s skipped: %s\n", "-", where_name(w), tq_last_error());
        return 0;
    }
    tq_field_params fp = {TQ_FIELD_SPINOR, prec, TQ_FULL, 0, 0};
    tq_field *v[4] = {NULL, NULL, NULL, NULL};
    int rc = 0;
    for (int i = 0; i < 4 && !rc; i++)
        if (tq_field_create(lat, &fp, &v[i]) || tq_blas_zero(v[i])) rc = 1;
    /* The fields hold zeros: the kernels' memory traffic and arithmetic do not depend on
     * the values, and zeros need no host-side set-up at large volumes. */
    if (rc) {
        fprintf(stderr, "taskqcd blas: %s\n", tq_last_error());
        goto done;
    }
    double site_bytes = (double)tq_field_bytes(v[0]) / (double)li.local_volume;
    for (int k = 0; k < NOPS; k++) {
        if (strcmp(ops, "all") && !tq_cli_list_has(ops, bench_ops[k].name)) continue;
        double sink = 0;
        /* warm-up: allocates device copies and calibrates the perf models */
        for (int i = 0; i < 3; i++) run_op(bench_ops[k].name, v, &sink);
        tq_wait_all();
        double t0 = tq_cli_now();
        tq_status s = TQ_SUCCESS;
        for (int i = 0; i < niter && s == TQ_SUCCESS; i++) s = run_op(bench_ops[k].name, v, &sink);
        tq_wait_all();
        double t = (tq_cli_now() - t0) / niter;
        if (s) { fprintf(stderr, "taskqcd blas: %s\n", tq_last_error()); rc = 1; break; }
        double gbs = bench_ops[k].fields_moved * site_bytes * (double)li.local_volume / t * 1e-9;
        fprintf(out, "  %-12s %-5s %-6s %12lld %12.1f %10.1f", bench_ops[k].name, where_name(w),
                tq_precision_name(prec), (long long)li.local_volume, t * 1e6, gbs);
        if (ceiling_gbs > 0) fprintf(out, " %7.1f%%", 100.0 * gbs / ceiling_gbs);
        fputc('\n', out);
    }
done:
    for (int i = 0; i < 4; i++) tq_field_destroy(v[i]);
    tq_set_placement(TQ_WHERE_ANY);
    return rc;
}

int tq_blas_benchmark_known_ops(const char *ops)
{
    if (!strcmp(ops, "all")) return 1;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", ops);
    for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (int k = 0; k < NOPS; k++) found |= !strcmp(tok, bench_ops[k].name);
        if (!found) return 0;
    }
    return 1;
}

void tq_blas_benchmark_header(FILE *out, int with_ceiling)
{
    fprintf(out, "  %-12s %-5s %-6s %12s %12s %10s%s\n", "op", "where", "prec", "sites",
            "us/call", "GB/s", with_ceiling ? "  of copy" : "");
}

