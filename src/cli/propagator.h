/* taskqcd propagator's private types, shared by its command (cmd_propagator.c), its output
 * (propagator_output.c) and its split grid (propagator_split.c). */
#ifndef TQ_CLI_PROPAGATOR_H
#define TQ_CLI_PROPAGATOR_H

#include "cli/cli.h"
#include "taskqcd.h"

/* What the command line asks for. */
typedef struct prop_opts {
    int dims[4], block[4], procs[4];
    tq_dirac_params dp;
    tq_solver_params sp;
    tq_precision prec;
    tq_recon recon;
    int nsrc, batch, json, warmup;
    const char *gauge_file, *where;
    char cache_buf[4096];
    tq_cli_quenched q;       /* the generated configuration (without --gauge and --weak-field) */
    double weak;             /* > 0: --weak-field's epsilon */
    int generator_option;    /* an option of the generated configuration was given */
    int by_parts;            /* under mpirun: each rank reads only its sites of --gauge */
    int weak_parts;          /* under mpirun: each rank makes only its sites of --weak-field's */
    int multigrid;           /* --inv-multigrid */
    int inv_given, solve_type_given, sloppy_given;
    tq_cli_mg mg;            /* the --mg-* options */
    int staggered;           /* --dslash-type asqtad (1) or hisq (2) */
    int wilson_given;        /* --kappa, --csw, --matpc, --recon or --dslash-type wilson|clover */
    int ks_given;            /* --mass, --masses, --u0 or --naik-epsilon */
    int u0_given, eps_given;
    int nsrc_given;
    int split[4];            /* --split-grid: sub-grids per direction (0s: none) */
    int nsplit;              /* their number (1: no split grid); each a group of ranks */
    tq_cli_ks ks;            /* the staggered run (filled from these options by settle_options) */
} prop_opts;

/* What one run made: the lattice, operator and fields, the solves' results and the pion
 * correlator. */
typedef struct prop_run {
    tq_lattice *lat;
    tq_field *gauge, *x[12], *b[12];
    tq_dirac *d;
    tq_multigrid *mg;        /* --inv-multigrid: the set-up all sources share */
    tq_mg_params mgp;        /* its parameters (the command line's, precisions settled) */
    double *host, *corr;     /* a spinor on the host (this rank's sites); C(t) */
    tq_lattice_info li;      /* the distribution: grid of ranks, this rank's place */
    int src0, nmine;         /* this rank's sources: src0 .. src0 + nmine - 1 (a split grid:
                                its share; else all) */
    tq_solver_result res[12];
    int converged[12];       /* per timed solve (every source's, after a split grid's gather) */
    int nfailed;             /* timed solves that did not converge */
    tq_status st;            /* the first failure of the solves (warm-up included), or TQ_SUCCESS */
    double t_setup, wall;    /* seconds: making the operator; the timed solves */
    double t_mg_setup;       /* the multigrid set-up */
} prop_run;

/* Seconds of the job's phases (tq_cli_prop_clock). */
typedef struct prop_clock {
    double init, gauge, problem, setup, solves, correlator, finalize;
} prop_clock;

/* The table's first lines: the problem, the gauge field and the set-up times. */
void tq_cli_prop_header(const prop_opts *o, const prop_run *r, const char *gauge_desc);
/* The whole result as one JSON object; "valid": false (and a null correlator and effective
 * mass) when a solve failed. */
void tq_cli_prop_json(const prop_opts *o, const prop_run *r, const char *gauge_desc);
/* One table line per solve of s0 .. s0 + n - 1. */
void tq_cli_prop_solve_lines(const prop_run *r, int s0, int n);
/* The table's last lines: the totals, then the correlator and its effective mass, or why
 * there are none. */
void tq_cli_prop_summary(const prop_opts *o, const prop_run *r);
/* What failed, for the messages that withhold the correlator. */
const char *tq_cli_prop_failure(const prop_opts *o, const prop_run *r, char *buf, size_t len);
/* Where the job's wall clock went (the last lines of the table). */
void tq_cli_prop_clock(const prop_clock *c, double total);

/* --split-grid (propagator_split.c): checks it against the rank count (o->nsplit set);
 * returns 0, or 2 after saying why not (every rank says the same). */
int tq_cli_split_check(prop_opts *o, const char *me);
/* This rank's share of the sources (r->src0, r->nmine; r->li known): a split grid's
 * sub-grid solves an equal run of them (the first ones one more where they do not divide);
 * else all. */
void tq_cli_split_share(const prop_opts *o, prop_run *r);
/* After a split grid's solves: every source's result, convergence and the longest rank's
 * wall clock on every rank (collective). Returns 0, or 1 after saying why not. */
int tq_cli_split_gather(const prop_opts *o, prop_run *r, const char *me);

#endif
