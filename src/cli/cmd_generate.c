/* taskqcd generate: quenched SU(3) configurations (pure-gauge Wilson action) by heat-bath
 * and overrelaxation sweeps (tq_generator), with a progress line per measured sweep and the
 * result written through the gauge-file writers. */
#include "cli.h"
#include "taskqcd.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void generate_usage(FILE *o)
{
    fprintf(o,
        "usage: taskqcd generate [--dim X Y Z T] [--beta B] [--sweeps N] [--or K] [--seed S]\n"
        "         [--start cold|hot] [--out FILE [--format scidac|ildg|milc|nersc] [--precision 4|8]]\n"
        "         [--measure-every M] [--reunit-every R] [--nslab S] [--where auto|cpu|cuda|any]\n"
        "         [runtime options]\n"
        "Pure-gauge Wilson action (SU(3)): each sweep is one Cabibbo-Marinari heat-bath sweep\n"
        "(Kennedy-Pendleton SU(2) sampling) followed by K overrelaxation sweeps, on a checkerboard,\n"
        "as tasks on every worker. Prints the average plaquette (normalised to 1; spatial and\n"
        "temporal parts) and the Polyakov loop every M sweeps with the time per sweep (measurements\n"
        "included), reunitarises every R sweeps (both as tasks, where the links are),\n"
        "and writes the last configuration to FILE. The result depends only on the dimensions,\n"
        "beta, the seed, the start and the sweeps (not on slabs, workers or scheduler).\n"
        "Defaults: 8 8 8 8, beta 6.0, 20 sweeps, 4 overrelaxation sweeps, seed 1, cold start,\n"
        "measure every sweep, reunitarise every 10, SciDAC in double precision, on the GPUs\n"
        "when there are any, otherwise on the CPU workers (--where auto; any mixes both kinds,\n"
        "and the configuration then depends on which kind ran which task); one slab on GPUs,\n"
        "one per CPU worker otherwise. Slabs are whole time slices (S divides T); a slab's tasks\n"
        "read its links and the time slices next to it (link halos).\n");
}

static int usage_error(const char *msg, const char *arg)
{
    fprintf(stderr, "taskqcd generate: %s%s%s\n", msg, arg ? " " : "", arg ? arg : "");
    generate_usage(stderr);
    return 2;
}

/* What the command line asks for. */
typedef struct generate_opts {
    int dims[4], sweeps, nor, measure, reunit, prec, hot;
    const char *out, *where;
    tq_gauge_format fmt;
    tq_generator_params gp;
} generate_opts;

/* The options with a value v. Returns 0, or the exit code of a usage error. */
static int parse_generate_option(generate_opts *o, const char *a, const char *v)
{
    char *end = NULL;
    if (!strcmp(a, "--beta")) { o->gp.beta = strtod(v, &end); if (*end || !(o->gp.beta > 0)) return usage_error("bad --beta", v); }
    else if (!strcmp(a, "--sweeps")) { o->sweeps = (int)strtol(v, &end, 10); if (*end || o->sweeps < 0) return usage_error("bad --sweeps", v); }
    else if (!strcmp(a, "--or")) { o->nor = (int)strtol(v, &end, 10); if (*end || o->nor < 0) return usage_error("bad --or", v); }
    else if (!strcmp(a, "--seed")) { o->gp.seed = strtoull(v, &end, 0); if (*end || v[0] == '-') return usage_error("bad --seed", v); }
    else if (!strcmp(a, "--measure-every")) { if (tq_cli_parse_positive(v, &o->measure)) return usage_error("bad --measure-every", v); }
    else if (!strcmp(a, "--reunit-every")) { if (tq_cli_parse_positive(v, &o->reunit)) return usage_error("bad --reunit-every", v); }
    else if (!strcmp(a, "--nslab")) { if (tq_cli_parse_positive(v, &o->gp.nslab)) return usage_error("bad --nslab", v); }
    else if (!strcmp(a, "--out")) o->out = v;
    else if (!strcmp(a, "--format")) { if (tq_gauge_format_parse(v, &o->fmt) || o->fmt == TQ_FORMAT_AUTO) return usage_error("bad --format", v); }
    else if (!strcmp(a, "--precision")) { o->prec = atoi(v); if (o->prec != 4 && o->prec != 8) return usage_error("bad --precision (4 or 8)", v); }
    else if (!strcmp(a, "--start")) {
        if (!strcmp(v, "hot")) o->hot = 1;
        else if (strcmp(v, "cold")) return usage_error("bad --start (cold or hot)", v);
    } else if (!strcmp(a, "--where")) {
        if (strcmp(v, "auto") && strcmp(v, "any") && strcmp(v, "cpu") && strcmp(v, "cuda")) return usage_error("bad --where", v);
        o->where = v;
    } else return usage_error("unknown option", a);
    return 0;
}

/* Fills o from the command line (runtime options already removed) and checks that the
 * output can be written. Returns -1 to go on, otherwise the exit code (0 after --help). */
static int parse_generate_args(int argc, char **argv, generate_opts *o, const char *me)
{
    const generate_opts defaults = {.dims = {8, 8, 8, 8}, .sweeps = 20, .nor = 4, .measure = 1, .reunit = 10,
                                    .where = "auto", .fmt = TQ_FORMAT_SCIDAC};
    *o = defaults;
    tq_generator_params_default(&o->gp);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--help")) { generate_usage(stdout); return 0; }
        if (!strcmp(a, "--dim")) {
            if (tq_cli_parse_dims(argc, argv, &i, o->dims)) return usage_error("--dim needs four positive extents", NULL);
            continue;
        }
        if (!v) return usage_error("unexpected or incomplete argument", a);
        i++;
        int rc = parse_generate_option(o, a, v);
        if (rc) return rc;
    }
    for (int mu = 0; mu < 4; mu++)
        if (o->dims[mu] % 2) { fprintf(stderr, "%s: dimension %d is %d: the checkerboard sweep needs even extents\n", me, mu, o->dims[mu]); return 2; }
    if (!o->prec) o->prec = o->fmt == TQ_FORMAT_MILC ? 4 : 8;
    /* the output must be writable before any work starts */
    if (o->out) {
        FILE *t = fopen(o->out, "ab");
        if (!t) { fprintf(stderr, "%s: cannot write %s\n", me, o->out); perror(o->out); return 1; }
        long pos = ftell(t);
        fclose(t);
        if (pos == 0) remove(o->out);
    }
    return -1;
}

/* The sweeps, with a progress line per measured sweep (verbosity >= 1); *p: the last
 * measured plaquette. Returns 0, or 1 with the library's error message set. */
static int run_sweeps(tq_generator *g, const generate_opts *o, int verbosity, tq_plaquette *p)
{
    double t_last = tq_cli_now();
    int since = 0;
    for (int s = 1; s <= o->sweeps; s++) {
        if (tq_generator_sweep(g, o->nor)) return 1;
        since++;
        const int meas = s % o->measure == 0 || s == o->sweeps;
        if (s % o->reunit == 0 && tq_generator_reunitarize(g)) return 1;
        if (!meas) continue;
        double pr, pi;
        if (tq_generator_measure(g, p, &pr, &pi)) return 1;
        const double t = tq_cli_now();
        if (verbosity >= 1) {
            printf("  sweep %5d: plaquette %.10f (spatial %.10f, temporal %.10f), Polyakov loop (%+.6f, %+.6f), "
                   "%.4f s per sweep\n", s, p->total, p->spatial, p->temporal, pr, pi, (t - t_last) / since);
            fflush(stdout);
        }
        t_last = t;
        since = 0;
    }
    return 0;
}

int tq_cmd_generate(int argc, char **argv)
{
    const char *me = "taskqcd generate";
    tq_init_params ip;
    tq_init_params_default(&ip);
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 2; }
    generate_opts o;
    int rc = parse_generate_args(argc, argv, &o, me);
    if (rc >= 0) return rc;
    if (tq_init(&ip)) { fprintf(stderr, "%s: %s\n", me, tq_last_error()); return 1; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    /* auto: one kind of worker, so the configuration does not depend on which kind ran which
     * task (CPU and GPU arithmetic differ in the last bits) */
    const char *where = !strcmp(o.where, "auto") ? (ri.ncuda_workers > 0 ? "cuda" : "cpu") : o.where;
    tq_set_placement(!strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);
    const int *dims = o.dims;
    tq_generator *g = NULL;
    tq_host_gauge h = {{0}, NULL};
    rc = 1;
    if (tq_generator_create(dims, &o.gp, &g) || tq_host_gauge_alloc(&h, dims)) goto done;
    if (o.hot && (tq_host_gauge_random(&h, o.gp.seed) || tq_generator_import(g, &h))) goto done;
    if (ip.verbosity >= 1)
        printf("taskqcd generate: %dx%dx%dx%d, beta %g, %s start, seed %llu, %d sweeps of 1 heat bath + %d overrelaxation, "
               "%d slabs, where %s, %d CPU + %d CUDA workers\n", dims[0], dims[1], dims[2], dims[3], o.gp.beta,
               o.hot ? "hot" : "cold", (unsigned long long)o.gp.seed, o.sweeps, o.nor, tq_generator_slabs(g), where,
               ri.ncpu_workers, ri.ncuda_workers);
    const double t0 = tq_cli_now();
    tq_plaquette p = {1, 1, 1};
    if (run_sweeps(g, &o, ip.verbosity, &p)) goto done;
    uint64_t refused = 0;
    if (tq_generator_refused(g, &refused)) goto done;
    if (refused) fprintf(stderr, "%s: warning: %llu link updates found no positive weight (left unchanged)\n", me,
                         (unsigned long long)refused);
    if (o.out && (tq_generator_export(g, &h) || tq_gauge_write(o.out, o.fmt, &h, o.prec))) goto done;
    if (ip.verbosity >= 1)
        printf("  %d sweeps in %.3f s; plaquette %.16g%s%s\n", o.sweeps, tq_cli_now() - t0, p.total, o.out ? ", written to " : "",
               o.out ? o.out : "");
    rc = 0;
done:
    if (rc) fprintf(stderr, "%s: %s\n", me, tq_last_error());
    tq_host_gauge_free(&h);
    tq_generator_destroy(g);
    tq_finalize();
    return rc;
}
