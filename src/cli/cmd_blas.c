/* taskqcd blas: times BLAS-1 and reduction kernels (src/cli/blas_bench.c). */
#include "cli.h"
#include "taskqcd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void blas_usage(FILE *o)
{
    fprintf(o, "usage: taskqcd blas [--dim X Y Z T] [--prec double|single|half] [--niter N]\n"
               "                    [--op LIST|all] [--where any|cpu|cuda|all] [runtime options]\n"
               "Times BLAS-1 kernels on color-spinor fields through the task path.\n");
}

int tq_cmd_blas(int argc, char **argv)
{
    tq_init_params p;
    tq_init_params_default(&p);
    if (tq_init_params_from_args(&p, &argc, argv)) {
        fprintf(stderr, "taskqcd blas: %s\n", tq_last_error());
        return 2;
    }
    int dims[4] = {16, 16, 16, 16};
    int niter = 20;
    const char *ops = "all", *where = "all";
    tq_precision prec = TQ_SINGLE;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dim")) {
            if (tq_cli_parse_dims(argc, argv, &i, dims)) { fprintf(stderr, "taskqcd blas: --dim needs 4 positive integers\n"); return 2; }
        } else if (!strcmp(argv[i], "--prec") && i + 1 < argc) {
            if (tq_precision_parse(argv[++i], &prec)) { fprintf(stderr, "taskqcd blas: %s\n", tq_last_error()); return 2; }
        } else if (!strcmp(argv[i], "--niter") && i + 1 < argc) {
            if (tq_cli_parse_positive(argv[++i], &niter)) { fprintf(stderr, "taskqcd blas: --niter must be a positive integer\n"); return 2; }
        } else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
            ops = argv[++i];
        } else if (!strcmp(argv[i], "--where") && i + 1 < argc) {
            where = argv[++i];
        } else if (!strcmp(argv[i], "--help")) {
            blas_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "taskqcd blas: unknown option '%s'\n", argv[i]);
            blas_usage(stderr);
            return 2;
        }
    }
    if (strcmp(where, "all") && strcmp(where, "cpu") && strcmp(where, "cuda") && strcmp(where, "any")) {
        fprintf(stderr, "taskqcd blas: --where must be cpu, cuda, any or all (not '%s')\n", where);
        return 2;
    }
    if (!tq_blas_benchmark_known_ops(ops)) {
        fprintf(stderr, "taskqcd blas: unknown op in '%s' (copy, axpy, xpay, caxpy, norm2, rdot, cdot, axpy_norm2, cg_update, all)\n", ops);
        return 2;
    }
    const int init = tq_cli_init("taskqcd blas", &p);
    if (init) return init;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof dims);
    tq_lattice *lat;
    int rc = 0;
    if (tq_lattice_create(&lp, &lat)) {
        fprintf(stderr, "taskqcd blas: %s\n", tq_last_error());
        tq_finalize();
        return 1;
    }
    tq_blas_benchmark_header(stdout, 0);
    tq_where ws[3] = {TQ_WHERE_CPU, TQ_WHERE_CUDA, TQ_WHERE_ANY};
    for (int k = 0; k < 3 && !rc; k++) {
        const char *n = ws[k] == TQ_WHERE_CPU ? "cpu" : ws[k] == TQ_WHERE_CUDA ? "cuda" : "any";
        if (strcmp(where, "all") && strcmp(where, n)) continue;
        rc = tq_blas_benchmark(lat, prec, niter, ws[k], ops, 0.0, stdout);
    }
    tq_lattice_destroy(lat);
    tq_finalize();
    return rc;
}
