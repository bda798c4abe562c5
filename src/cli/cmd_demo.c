/* taskqcd demo: the default job of this stage of the project. Loads a gauge file (or
 * generates a weak-field configuration), prints its plaquette, moves it through a
 * compressed gauge field on StarPU handles and back, then times BLAS/reduction kernels on
 * every worker kind. Later stages replace it by a real solve. */
#include "cli.h"
#include "taskqcd.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void demo_usage(FILE *o)
{
    fprintf(o, "usage: taskqcd demo [--gauge FILE] [--dim X Y Z T] [--seed S] [--epsilon E]\n"
               "                    [--blas-dim X Y Z T] [--prec P] [--niter N] [runtime options]\n"
               "Without --gauge a weak-field SU(3) configuration (--dim, default 8 8 8 8) is generated.\n");
}

static void print_plaquette(const char *what, const tq_host_gauge *g)
{
    tq_plaquette p;
    double tr, dev;
    tq_host_gauge_plaquette(g, &p);
    tq_host_gauge_link_trace(g, &tr);
    tq_host_gauge_unitarity(g, &dev);
    printf("%s: plaquette %.12f (spatial %.12f, temporal %.12f; MILC convention x3: %.10f %.10f)\n",
           what, p.total, p.spatial, p.temporal, 3 * p.spatial, 3 * p.temporal);
    printf("%s: link trace %.8f, max unitarity deviation %.2e\n", what, tr, dev);
}

/* What the command line asks for. */
typedef struct demo_opts {
    const char *gauge_file;
    int dims[4], bdims[4];   /* the generated gauge field's; the BLAS fields' */
    unsigned long long seed;
    double eps;
    int niter;
    tq_precision prec;
} demo_opts;

/* Fills o from the command line (runtime options already removed). Returns -1 to go on,
 * otherwise the exit code (0 after --help, 2 for a usage error). */
static int parse_demo_args(int argc, char **argv, demo_opts *o)
{
    const demo_opts defaults = {NULL, {8, 8, 8, 8}, {16, 16, 16, 16}, 2026, 0.2, 20, TQ_SINGLE};
    *o = defaults;
    int i = 1;
    for (; i < argc; i++) {
        if (!strcmp(argv[i], "--gauge") && i + 1 < argc) o->gauge_file = argv[++i];
        else if (!strcmp(argv[i], "--dim")) { if (tq_cli_parse_dims(argc, argv, &i, o->dims)) goto bad; }
        else if (!strcmp(argv[i], "--blas-dim")) { if (tq_cli_parse_dims(argc, argv, &i, o->bdims)) goto bad; }
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) o->seed = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--epsilon") && i + 1 < argc) o->eps = atof(argv[++i]);
        else if (!strcmp(argv[i], "--niter") && i + 1 < argc) { if (tq_cli_parse_positive(argv[++i], &o->niter)) goto bad; }
        else if (!strcmp(argv[i], "--prec") && i + 1 < argc) { if (tq_precision_parse(argv[++i], &o->prec)) goto bad; }
        else if (!strcmp(argv[i], "--help")) { demo_usage(stdout); return 0; }
        else goto bad;
    }
    return -1;
bad:
    fprintf(stderr, "taskqcd demo: bad option or value at '%s'\n", i < argc ? argv[i] : argv[argc - 1]);
    demo_usage(stderr);
    return 2;
}

/* The gauge field: --gauge's file, or a weak-field configuration; says which. Returns 0,
 * or 1 after saying why not. */
static int demo_gauge(const demo_opts *o, tq_host_gauge *g)
{
    if (o->gauge_file) {
        tq_gauge_file_info fi;
        if (tq_gauge_read(o->gauge_file, TQ_FORMAT_AUTO, g, &fi)) { fprintf(stderr, "taskqcd demo: %s\n", tq_last_error()); return 1; }
        printf("read %s: %s, %dx%dx%dx%d, %s precision, checksum %s\n", o->gauge_file,
               tq_gauge_format_name(fi.format), g->dims[0], g->dims[1], g->dims[2], g->dims[3],
               fi.file_precision == 8 ? "double" : "single", fi.has_checksum ? "verified" : "absent");
    } else {
        const int *dims = o->dims;
        if (tq_host_gauge_alloc(g, dims) || tq_host_gauge_weak(g, o->seed, o->eps)) {
            fprintf(stderr, "taskqcd demo: %s\n", tq_last_error());
            tq_host_gauge_free(g);
            return 1;
        }
        printf("generated a weak-field SU(3) configuration %dx%dx%dx%d (seed %llu, epsilon %g)\n",
               dims[0], dims[1], dims[2], dims[3], o->seed, o->eps);
    }
    return 0;
}

/* g through a single-precision, recon-12 gauge field on StarPU handles and back, with the
 * plaquette of what comes back. Returns 0, or 1 after saying why not. */
static int gauge_round_trip(const tq_host_gauge *g)
{
    int rc = 0;
    tq_lattice *lat = NULL;
    tq_field *U = NULL;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, g->dims, sizeof lp.dims);
    tq_field_params fp = {TQ_FIELD_GAUGE, TQ_SINGLE, TQ_FULL, TQ_RECON_12, 0};
    tq_host_gauge back = {{0, 0, 0, 0}, NULL};
    if (tq_lattice_create(&lp, &lat) || tq_field_create(lat, &fp, &U) || tq_gauge_field_import(U, g) ||
        tq_host_gauge_alloc(&back, g->dims) || tq_gauge_field_export(U, &back)) {
        fprintf(stderr, "taskqcd demo: %s\n", tq_last_error());
        rc = 1;
    } else {
        tq_lattice_info li;
        tq_lattice_get_info(lat, &li);
        printf("gauge field on StarPU handles: %d block(s) of %dx%dx%dx%d, single precision, recon 12, %zu bytes\n",
               li.nblocks, li.block[0], li.block[1], li.block[2], li.block[3], tq_field_bytes(U));
        print_plaquette("after import/export (single, recon 12)", &back);
    }
    tq_field_destroy(U);
    tq_lattice_destroy(lat);
    tq_host_gauge_free(&back);
    return rc;
}

/* The BLAS table on the CPU workers, the CUDA workers (when there are any) and any worker.
 * Returns 0, or 1 on a failure. */
static int demo_blas(const demo_opts *o, const tq_runtime_info *ri)
{
    tq_lattice *blat = NULL;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, o->bdims, sizeof lp.dims);
    if (tq_lattice_create(&lp, &blat)) { fprintf(stderr, "taskqcd demo: %s\n", tq_last_error()); return 1; }
    printf("\nBLAS-1 and reductions on %dx%dx%dx%d color-spinor fields, %s precision, %d calls each:\n",
           o->bdims[0], o->bdims[1], o->bdims[2], o->bdims[3], tq_precision_name(o->prec), o->niter);
    tq_blas_benchmark_header(stdout, 0);
    tq_where ws[3] = {TQ_WHERE_CPU, TQ_WHERE_CUDA, TQ_WHERE_ANY};
    int rc = 0;
    for (int k = 0; k < 3 && !rc; k++) {
        if (ws[k] == TQ_WHERE_CUDA && ri->ncuda_workers == 0) {
            printf("  (no CUDA worker: GPU rows skipped)\n");
            continue;
        }
        rc = tq_blas_benchmark(blat, o->prec, o->niter, ws[k], "copy,axpy,norm2,cdot,cg_update", 0.0, stdout);
    }
    tq_lattice_destroy(blat);
    return rc;
}

int tq_cmd_demo(int argc, char **argv)
{
    tq_init_params p;
    tq_init_params_default(&p);
    if (tq_init_params_from_args(&p, &argc, argv)) { fprintf(stderr, "taskqcd demo: %s\n", tq_last_error()); return 2; }
    demo_opts o;
    int rc = parse_demo_args(argc, argv, &o);
    if (rc >= 0) return rc;
    tq_host_gauge g = {{0, 0, 0, 0}, NULL};
    if (demo_gauge(&o, &g)) return 1;
    print_plaquette("host", &g);

    const int init = tq_cli_init("taskqcd demo", &p);
    if (init) { tq_host_gauge_free(&g); return init; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    printf("StarPU %s: %d CPU worker(s), %d CUDA worker(s), scheduler %s\n", ri.starpu_version,
           ri.ncpu_workers, ri.ncuda_workers, ri.sched);
    rc = gauge_round_trip(&g) || demo_blas(&o, &ri);
    tq_host_gauge_free(&g);
    tq_finalize();
    return rc;
}
