/* Subcommands of the `taskqcd` tool. Each takes argv with argv[0] = the subcommand name and
 * returns the process exit code: 0 success, 1 failure, 2 usage error. */
#ifndef TQ_CLI_H
#define TQ_CLI_H

int tq_cmd_info(int argc, char **argv);
int tq_cmd_gauge(int argc, char **argv);
int tq_cmd_blas(int argc, char **argv);
int tq_cmd_demo(int argc, char **argv);
int tq_cmd_dslash(int argc, char **argv);
int tq_cmd_propagator(int argc, char **argv);
int tq_cmd_generate(int argc, char **argv);
/* The propagator's usage text (src/cli/propagator_usage.c). */
#include <stdio.h>
void tq_cli_propagator_usage(FILE *o);

/* Parse "X Y Z T" after --dim; returns 0 on success. */
int tq_cli_parse_dims(int argc, char **argv, int *i, int dims[4]);

/* BLAS timing (src/cli/blas_bench.c): one table row per op in the comma list (or "all"),
 * with placement w; ceiling_gbs > 0 adds a percentage column. Returns 0 on success. */
#include "taskqcd.h"
#include <stdio.h>
int tq_blas_benchmark(tq_lattice *lat, tq_precision prec, int niter, tq_where w,
                      const char *ops, double ceiling_gbs, FILE *out);
void tq_blas_benchmark_header(FILE *out, int with_ceiling);
/* 1 if every name in the comma list is a benchmarked op (or the list is "all"). */
int tq_blas_benchmark_known_ops(const char *ops);
/* 1 if the comma-separated list contains name exactly. */
int tq_cli_list_has(const char *list, const char *name);
/* Monotonic wall-clock time in seconds. */
double tq_cli_now(void);
/* tq_init for a command: 0, or after printing "me: message" the command's exit status, 2
 * for a bad runtime option (an unknown scheduler, also through STARPU_SCHED), else 1. */
int tq_cli_init(const char *me, const tq_init_params *p);
/* Under mpirun a step can fail on some ranks only (a gauge file one rank cannot read): after
 * tq_cli_init every rank passes its exit code for the step (0: done; else it has printed its
 * reason and tq_last_error() holds it) and gets the lowest failing rank's, so all ranks leave
 * together instead of some waiting forever for the others. A rank whose step worked prints
 * "me: rank N: reason". One rank: rc unchanged. */
int tq_cli_agree(const char *me, int rc);
/* With --where cuda every task goes to a GPU: unless --ncpus (or STARPU_NCPU) says
 * otherwise, only TQ_CLI_GPU_ONLY_NCPUS CPU workers then start. */
#define TQ_CLI_GPU_ONLY_NCPUS 4
void tq_cli_workers_for_placement(tq_init_params *ip, const char *where);
/* Parses a positive int (whole string); returns 0 on success. */
int tq_cli_parse_positive(const char *s, int *out);

/* One application of a Wilson-type operator on vol sites (src/cli/dslash_cost.c): hops
 * single-parity hopping terms (1320 flops per output site), clovers clover applications
 * (+504) and xpays x + a y updates (+48), each over half the sites. Bytes: QUDA's model (per
 * output site and hop 8 links as stored, 8 neighbour spinors, 1 output spinor) and the
 * minimal traffic (8 links, 1 input and 1 output spinor); a clover site or an xpay adds its
 * bytes to both. */
typedef struct tq_cli_dslash_cost {
    double flops, bytes_quda, bytes_min;
    double spinor_bytes, link_bytes, clover_bytes;   /* one site of each, as stored */
} tq_cli_dslash_cost;
void tq_cli_dslash_cost_of(int64_t vol, tq_precision prec, int recon, double hops, double clovers, double xpays,
                           tq_cli_dslash_cost *c);

/* The propagator's default gauge field (src/cli/gauge_cache.c): a quenched configuration
 * (cold start, sweeps of 1 heat bath + nor overrelaxation) read from cache_dir when it was
 * made before, otherwise generated (after tq_init, on one kind of worker) and cached there
 * (cache_dir NULL: not cached). desc receives a one-line description. Returns 0, or 1 with
 * the library's error message set. */
typedef struct tq_cli_quenched {
    int dims[4];
    double beta;
    unsigned long long seed;
    int sweeps, nor;
    const char *cache_dir;
} tq_cli_quenched;
int tq_cli_quenched_gauge(const tq_cli_quenched *q, int verbosity, tq_host_gauge *out, char *desc, size_t desc_len);
/* $TASKQCD_CACHE, else $XDG_CACHE_HOME/taskqcd, else $HOME/.cache/taskqcd (in buf); NULL
 * when none is set. */
const char *tq_cli_default_cache_dir(char *buf, size_t len);

/* The propagator's multigrid options (src/cli/mg_options.c). */
typedef struct tq_cli_mg {
    tq_mg_params p;
    unsigned long long seed;            /* --mg-seed */
    const char *save, *load;            /* --mg-save FILE, --mg-load FILE */
    int given;                          /* any --mg-* option */
    int smoother_prec_given, nullvec_prec_given, coarse_prec_given;
} tq_cli_mg;
void tq_cli_mg_defaults(tq_cli_mg *o);
/* The option at argv[*i] if it is a --mg-* one: -1 when it is none of them, else 1 for a
 * bad value and 0 (*i on its last value). */
int tq_cli_mg_option(tq_cli_mg *o, int argc, char **argv, int *i);
/* The set-up's parameters: o's, with the precisions not given on the command line chosen
 * by where the fine level runs: half on GPUs (paper 000), double on CPU workers. */
void tq_cli_mg_precisions(const tq_cli_mg *o, int fine_on_gpus, tq_mg_params *p);

/* taskqcd propagator --dslash-type asqtad|hisq (src/cli/cmd_propagator_ks.c): what the command
 * line asks for; the gauge field is the command's (whole lattice, host layout). */
#define TQ_CLI_MAX_MASSES 16
typedef struct tq_cli_ks {
    int dims[4], block[4], procs[4];
    tq_precision prec;
    tq_solver_params sp;        /* CG: tol, maxiter, verbosity */
    int nsrc;                   /* color point sources at the origin: 1 to 3 */
    int nmass;
    double masses[TQ_CLI_MAX_MASSES];
    int hisq;                   /* 0: asqtad, 1: HISQ */
    double u0;                  /* asqtad's tadpole factor; <= 0: the plaquette's fourth root */
    double eps;                 /* HISQ's Naik epsilon */
    const char *where;          /* the placement, for the header */
    int nsplit;                 /* --split-grid: ranks each solving a share of the sources on
                                   its own copy of the lattice (1: none) */
} tq_cli_ks;
/* A split grid's share of nsrc sources for rank `rank` of nsplit (src/cli/propagator_split.c):
 * an equal run of them, the first ranks one more where they do not divide. */
void tq_cli_split_range(int nsrc, int nsplit, int rank, int *first, int *count);
/* Parses "m1,m2,..." (each > 0, at most TQ_CLI_MAX_MASSES); 0 on success. */
int tq_cli_parse_masses(const char *s, double *masses, int *n);
/* Runs it and prints the table; returns the exit code (1: a solve failed, no correlator). */
int tq_cli_ks_propagator(const tq_cli_ks *k, const tq_host_gauge *hg, const char *gauge_desc, const char *me);

#endif
