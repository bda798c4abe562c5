/* The propagator's multigrid options (the --mg-* of --inv-multigrid): their defaults and
 * their parsing (src/cli/cmd_propagator.c prints their help). */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

void tq_cli_mg_defaults(tq_cli_mg *o)
{
    memset(o, 0, sizeof *o);
    /* two levels by default (more with --mg-levels); the library's aggregates, null vectors,
     * set-up (BiCGstab to 5e-6 or 200 iterations: on a 32^4 configuration at light mass 16
     * GCR iterations per vector left 10x more outer iterations) and steps */
    tq_mg_params_default(&o->p);
    o->p.levels = 2;
    /* coarse GCR to 0.1 or 20 iterations: the fastest at light mass (doc/performance.md) */
    o->p.coarse_tol = 0.1;
    o->p.coarse_maxiter = 20;
    o->p.verbosity = 0;
    o->seed = 1;
}

void tq_cli_mg_precisions(const tq_cli_mg *o, int fine_on_gpus, tq_mg_params *p)
{
    /* paper 000's half-precision smoother and bases where GPUs run the fine level; on CPU
     * workers the half and single kernels are not faster than double (issue 37) */
    const tq_precision dflt = fine_on_gpus ? TQ_HALF : TQ_DOUBLE;
    *p = o->p;
    if (!o->smoother_prec_given) p->smoother_prec = dflt;
    if (!o->nullvec_prec_given) p->nullvec_prec = dflt;
    /* half coarse links on GPUs: the coarse hops read half the bytes (32^4 two levels, one
     * H100: 0.455 s per solve against 0.500 with single links, the same iterations) */
    int coarse_on_cpus = 0;
    for (int l = 1; l < p->levels && l < TQ_MG_MAX_LEVELS; l++) coarse_on_cpus |= p->where[l] == TQ_WHERE_CPU;
    if (!o->coarse_prec_given && fine_on_gpus && !coarse_on_cpus) p->coarse_prec = TQ_HALF;
}

/* Whether s is a number in C's syntax (a value, not the next option). */
static int is_number(const char *s)
{
    char *e;
    if (!s || !s[0] || s[0] == '-') return 0;
    (void)strtod(s, &e);
    return !*e;
}

/* --mg-setup-tol [L] T and --mg-setup-iters [L] N: level L's null-vector solves, or every
 * level's where L is left out (two numbers follow when it is given). */
static int setup_option(tq_mg_params *m, const char *a, int argc, char **argv, int *i)
{
    const int per_level = *i + 2 < argc && is_number(argv[*i + 2]);
    char *e;
    long l = -1;
    if (per_level) {
        l = strtol(argv[*i + 1], &e, 10);
        if (*e || l < 0 || l >= TQ_MG_MAX_LEVELS - 1) return 1;
    }
    const char *s = argv[*i + 1 + per_level];
    int bad;
    for (int k = 0; k < TQ_MG_MAX_LEVELS - 1; k++) {
        if (l >= 0 && k != l) continue;
        if (!strcmp(a, "--mg-setup-tol")) {
            m->setup_tol[k] = strtod(s, &e);
            bad = *e || !(m->setup_tol[k] > 0 && m->setup_tol[k] < 1);
        } else {
            const long n = strtol(s, &e, 10);
            bad = *e || n < 1 || n > 1 << 20;
            m->setup_iters[k] = (int)n;
        }
        if (bad) return 1;
    }
    *i += 1 + per_level;
    return 0;
}

/* A multigrid option: --mg-levels N, --mg-setup-tol [L] T, ... and the per-level ones
 * (--mg-nvec L N, --mg-smoother-steps L N, --mg-pre-steps L N, --mg-post-steps L N,
 * --mg-block-size L X Y Z T), whose values follow argv[*i].
 * Returns -1 when a is none of them, else 1 for a bad value and 0 (*i on the last value). */
int tq_cli_mg_option(tq_cli_mg *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i];
    static const char *const known[] = {"--mg-levels", "--mg-setup-tol", "--mg-setup-iters", "--mg-coarse-tol",
                                        "--mg-coarse-maxiter", "--mg-seed", "--mg-verbosity", "--mg-nvec",
                                        "--mg-smoother-steps", "--mg-block-size", "--mg-save", "--mg-load",
                                        "--mg-coarsest-eo", "--mg-smoother-eo", "--mg-where", "--mg-coarse-prec",
                                        "--mg-smoother-prec", "--mg-nullvec-prec", "--mg-solves-at-once",
                                        "--mg-setup-inv", "--mg-pre-steps", "--mg-post-steps"};
    int is_known = 0;   /* an unknown --mg-... is an unknown option, whatever follows it */
    for (size_t k = 0; k < sizeof known / sizeof known[0]; k++) is_known |= !strcmp(a, known[k]);
    if (!is_known) return -1;
    tq_mg_params *m = &o->p;
    if (!strcmp(a, "--mg-setup-tol") || !strcmp(a, "--mg-setup-iters")) {
        if (*i + 1 >= argc) return 1;
        o->given = 1;
        return setup_option(m, a, argc, argv, i);
    }
    int nval = !strcmp(a, "--mg-block-size") ? 5
               : !strcmp(a, "--mg-nvec") || !strcmp(a, "--mg-smoother-steps") || !strcmp(a, "--mg-where") ||
                       !strcmp(a, "--mg-pre-steps") || !strcmp(a, "--mg-post-steps") ? 2 : 1;
    if (*i + nval >= argc) return 1;
    char *e;
    long v[5];
    const char *s = argv[*i + 1];
    int bad = 0;
    if (!strcmp(a, "--mg-save")) { o->save = s; bad = !s[0]; }
    else if (!strcmp(a, "--mg-load")) { o->load = s; bad = !s[0]; }
    else if (!strcmp(a, "--mg-coarse-tol")) { m->coarse_tol = strtod(s, &e); bad = *e || !(m->coarse_tol > 0 && m->coarse_tol < 1); }
    else if (!strcmp(a, "--mg-seed")) { o->seed = strtoull(s, &e, 0); bad = *e || s[0] == '-'; }
    else if (!strcmp(a, "--mg-coarse-prec")) { bad = tq_precision_parse(s, &m->coarse_prec) != TQ_SUCCESS; o->coarse_prec_given = 1; }
    else if (!strcmp(a, "--mg-setup-inv"))
        bad = tq_inverter_parse(s, &m->setup_inverter) != TQ_SUCCESS ||
              (m->setup_inverter != TQ_INV_BICGSTAB && m->setup_inverter != TQ_INV_GCR);
    else if (!strcmp(a, "--mg-smoother-prec")) { bad = tq_precision_parse(s, &m->smoother_prec) != TQ_SUCCESS; o->smoother_prec_given = 1; }
    else if (!strcmp(a, "--mg-nullvec-prec")) { bad = tq_precision_parse(s, &m->nullvec_prec) != TQ_SUCCESS; o->nullvec_prec_given = 1; }
    else if (!strcmp(a, "--mg-where")) {   /* L any|cpu|cuda */
        const long l = strtol(s, &e, 10);
        const char *w = argv[*i + 2];
        bad = *e || !s[0] || l < 1 || l >= TQ_MG_MAX_LEVELS;
        if (!bad && !strcmp(w, "any")) m->where[l] = TQ_WHERE_ANY;
        else if (!bad && !strcmp(w, "cpu")) m->where[l] = TQ_WHERE_CPU;
        else if (!bad && !strcmp(w, "cuda")) m->where[l] = TQ_WHERE_CUDA;
        else bad = 1;
    }
    else {
        for (int k = 0; k < nval && !bad; k++) {
            v[k] = strtol(argv[*i + 1 + k], &e, 10);
            bad = *e || argv[*i + 1 + k][0] == 0 || v[k] < 0 || v[k] > 1 << 20;
        }
        const int level_ok = nval == 1 || (v[0] >= 0 && v[0] < TQ_MG_MAX_LEVELS - 1);
        if (bad || !level_ok) bad = 1;
        else if (!strcmp(a, "--mg-levels")) m->levels = (int)v[0];
        else if (!strcmp(a, "--mg-coarse-maxiter")) m->coarse_maxiter = (int)v[0];
        else if (!strcmp(a, "--mg-verbosity")) m->verbosity = (int)v[0];
        else if (!strcmp(a, "--mg-solves-at-once")) {
            m->solves_at_once = (int)v[0];
            bad = v[0] < 1 || v[0] > TQ_MG_MAX_SOLVES_AT_ONCE;
        }
        else if (!strcmp(a, "--mg-coarsest-eo")) { m->coarsest_eo = (int)v[0]; bad = v[0] > 1; }
        else if (!strcmp(a, "--mg-smoother-eo")) { m->smoother_eo = (int)v[0]; bad = v[0] > 1; }
        else if (!strcmp(a, "--mg-nvec")) m->nvec[v[0]] = (int)v[1];
        else if (!strcmp(a, "--mg-smoother-steps")) m->pre_steps[v[0]] = m->post_steps[v[0]] = (int)v[1];
        else if (!strcmp(a, "--mg-pre-steps")) m->pre_steps[v[0]] = (int)v[1];
        else if (!strcmp(a, "--mg-post-steps")) m->post_steps[v[0]] = (int)v[1];
        else if (!strcmp(a, "--mg-block-size")) for (int mu = 0; mu < 4; mu++) m->block[v[0]][mu] = (int)v[1 + mu];
        else return -1;
    }
    *i += nval;
    o->given = 1;
    return bad;
}
