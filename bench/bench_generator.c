/* Time per quenched-generator sweep (one heat-bath sweep and --or overrelaxation sweeps)
 * on the chosen workers, cold start; the first sweep (device allocation, warm-up) is
 * reported apart; then the time of a measurement (plaquette parts and Polyakov loop, as
 * tasks, result on the host) and of a reunitarisation (as tasks). Usage: bench_generator [--dim X Y Z T] [--beta B] [--sweeps N] [--or K]
 * [--where any|cpu|cuda] [--nslab S | --block X Y Z T] [runtime options] */
#include "taskqcd.h"
#include "config.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.verbosity = 0;
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "bench_generator: %s\n", tq_last_error()); return 2; }
    int dims[4] = {16, 16, 16, 16}, sweeps = 3, nor = 1;
    const char *where = "cuda";
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dim") && i + 4 < argc) for (int k = 0; k < 4; k++) dims[k] = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--beta") && i + 1 < argc) gp.beta = atof(argv[++i]);
        else if (!strcmp(argv[i], "--sweeps") && i + 1 < argc) sweeps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--or") && i + 1 < argc) nor = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--nslab") && i + 1 < argc) gp.nslab = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--block") && i + 4 < argc) for (int k = 0; k < 4; k++) gp.block[k] = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--where") && i + 1 < argc) where = argv[++i];
        else { fprintf(stderr, "bench_generator: unknown option %s\n", argv[i]); return 2; }
    }
    if (sweeps < 2) sweeps = 2;
    if (tq_init(&ip)) { fprintf(stderr, "bench_generator: %s\n", tq_last_error()); return 1; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    tq_set_placement(!strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);
    int rc = 0;
    tq_generator *g = NULL;
    if (tq_generator_create(dims, &gp, &g)) { rc = 1; goto done; }
    double first = 0, rest = 0;
    for (int s = 0; s < sweeps; s++) {
        double t0 = tq_cli_now();
        uint64_t refused;
        if (tq_generator_sweep(g, nor) || tq_generator_refused(g, &refused)) { rc = 1; goto done; }
        double t = tq_cli_now() - t0;
        if (s == 0) first = t; else rest += t;
    }
    tq_plaquette p;
    double pr, pi, t_meas = 0, t_reunit = 0;
    const int nrep = 3;
    /* once untimed: the first launch of a kernel also loads it */
    if (tq_generator_measure(g, &p, &pr, &pi) || tq_generator_reunitarize(g) || tq_wait_all()) { rc = 1; goto done; }
    for (int k = 0; k < nrep; k++) {
        double t0 = tq_cli_now();
        if (tq_generator_measure(g, &p, &pr, &pi)) { rc = 1; goto done; }
        t_meas += tq_cli_now() - t0;
        t0 = tq_cli_now();
        if (tq_generator_reunitarize(g) || tq_wait_all()) { rc = 1; goto done; }
        t_reunit += tq_cli_now() - t0;
    }
    /* nominal traffic, counted as QUDA counts stencils (every read once, no cache reuse):
     * a link update reads its 18 staple links and reads and writes itself, 144 bytes each */
    const double per_sweep = rest / (sweeps - 1);
    const double bytes = (1.0 + nor) * 4.0 * (double)dims[0] * dims[1] * dims[2] * dims[3] * 20.0 * 144.0;
    printf("generator %dx%dx%dx%d beta %.2f, %d blocks, where %s (%d CPU + %d CUDA workers): %.2f ms per sweep "
           "(1 heat bath + %d OR; first sweep %.2f ms; %.0f GB/s nominal), measurement %.2f ms, reunitarisation %.2f ms, "
           "plaquette %.6f after %d sweeps\n", dims[0], dims[1], dims[2], dims[3], gp.beta, tq_generator_slabs(g), where,
           ri.ncpu_workers, ri.ncuda_workers, per_sweep * 1e3, nor, first * 1e3, bytes / per_sweep * 1e-9,
           t_meas / nrep * 1e3, t_reunit / nrep * 1e3, p.total, sweeps);
done:
    if (rc) fprintf(stderr, "bench_generator: %s\n", tq_last_error());
    tq_generator_destroy(g);
    tq_finalize();
    return rc;
}
