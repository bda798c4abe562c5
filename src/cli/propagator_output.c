/* taskqcd propagator's output: the table and the JSON object (src/cli/propagator.h). */
#include "cli/propagator.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* s as the inside of a JSON string (file names may hold quotes or backslashes) */
static void print_json_chars(const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", (unsigned char)*s);
        else putchar(*s);
    }
}


/* The table's first lines: the problem, the gauge field and the set-up time. */
void tq_cli_prop_header(const prop_opts *o, const prop_run *r, const char *gauge_desc)
{
    const tq_solver_params *sp = &o->sp;
    const int *dims = o->dims;
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    printf("taskqcd propagator: %s, kappa %g, %dx%dx%dx%d, %s recon %d, %s %s, tol %.0e",
           o->dp.type == TQ_DSLASH_CLOVER ? "clover" : "wilson", o->dp.kappa, dims[0], dims[1], dims[2], dims[3],
           tq_precision_name(o->prec), (int)o->recon, tq_inverter_name(sp->inverter), tq_solve_type_name(sp->solve_type),
           sp->tol);
    if (o->multigrid) printf(", multigrid preconditioner");
    if (sp->prec_sloppy)
        printf(", sloppy %s (%s)", tq_precision_name(sp->prec_sloppy),
               sp->mixed == TQ_MIXED_DEFECT ? "defect correction" : "reliable updates");
    printf(", %d sources in batches of %d, where %s, %d CPU + %d CUDA workers\n", o->nsrc, o->batch, o->where,
           ri.ncpu_workers, ri.ncuda_workers);
    printf("  gauge field: %s\n  set-up (gauge import, operator): %.3f s\n", gauge_desc, r->t_setup);
    if (o->nsplit > 1)
        printf("  split grid: %d groups of %d rank(s), each with its own copy of the lattice and %d or %d of the sources\n",
               o->nsplit, r->li.group_ranks, o->nsrc / o->nsplit, (o->nsrc + o->nsplit - 1) / o->nsplit);
    if (r->mg) {
        tq_multigrid_info mi;
        tq_multigrid_get_info(r->mg, &mi);
        char made[160];
        if (o->mg.load) snprintf(made, sizeof made, "read from %s", o->mg.load);
        else snprintf(made, sizeof made, "%ld %s iterations", mi.setup_iterations, tq_inverter_name(r->mgp.setup_inverter));
        printf("  multigrid set-up: %d levels (%s), smoother %s, null vectors %s, coarse levels %s, %.3f s\n", mi.levels,
               made, tq_precision_name(r->mgp.smoother_prec), tq_precision_name(r->mgp.nullvec_prec),
               tq_precision_name(r->mgp.coarse_prec), r->t_mg_setup);
        for (int l = 0; l + 1 < mi.levels; l++) {
            const int *a = r->mgp.block[l], *c = mi.level_dims[l + 1];
            printf("    level %d: aggregates %dx%dx%dx%d, %d null vectors, MR %d + %d steps -> level %d lattice "
                   "%dx%dx%dx%d, run by %s\n", l, a[0], a[1], a[2], a[3], r->mgp.nvec[l], r->mgp.pre_steps[l],
                   r->mgp.post_steps[l], l + 1, c[0], c[1], c[2], c[3], mi.level_where[l + 1]);
        }
    }
}

void tq_cli_prop_solve_lines(const prop_run *r, int s0, int n)
{
    const tq_solver_result *res = r->res;
    for (int s = s0; s < s0 + n; s++)
        printf("  solve %2d (spin %d, color %d): %5d iterations (%d reliable updates), true residual %.3e, %.3f s, "
               "%.1f GFLOPS; iterations %.3f s, %.1f GFLOPS%s\n",
               s, s / 3, s % 3, res[s].iterations, res[s].reliable_updates, res[s].true_residual, res[s].seconds,
               res[s].seconds > 0 ? res[s].flops / res[s].seconds * 1e-9 : 0.0, res[s].iter_seconds,
               res[s].iter_seconds > 0 ? res[s].iter_flops / res[s].iter_seconds * 1e-9 : 0.0,
               r->converged[s] ? "" : "  NOT CONVERGED");
}

/* v in printf format fmt, or null when it is not finite (JSON has no NaN or Inf). */
static void print_json_number(const char *fmt, double v)
{
    if (isfinite(v)) printf(fmt, v);
    else printf("null");
}

/* The solves of the JSON object, one per line. */
static void print_json_solves(const prop_opts *o, const prop_run *r)
{
    const tq_solver_result *res = r->res;
    for (int s = 0; s < o->nsrc; s++) {
        printf("%s{\"source\": %d, \"converged\": %s, \"iterations\": %d, \"reliable_updates\": %d, \"true_residual\": ",
               s ? ",\n   " : "", s, r->converged[s] ? "true" : "false", res[s].iterations, res[s].reliable_updates);
        print_json_number("%.6e", res[s].true_residual);
        printf(", \"seconds\": %.6f, \"gflops\": %.3f, \"iter_seconds\": %.6f, \"iter_gflops\": %.3f}", res[s].seconds,
               res[s].seconds > 0 ? res[s].flops / res[s].seconds * 1e-9 : 0.0, res[s].iter_seconds,
               res[s].iter_seconds > 0 ? res[s].iter_flops / res[s].iter_seconds * 1e-9 : 0.0);
    }
}

/* The whole result as one JSON object; "valid": false (and a null correlator and effective
 * mass) when a solve failed. */
void tq_cli_prop_json(const prop_opts *o, const prop_run *r, const char *gauge_desc)
{
    const tq_solver_params *sp = &o->sp;
    const tq_solver_result *res = r->res;
    const int *dims = o->dims;
    const int valid = r->st == TQ_SUCCESS;
    double flops = 0;
    for (int s = 0; s < o->nsrc; s++) flops += res[s].flops;
    printf("{\"gauge\": \"");
    print_json_chars(gauge_desc);
    printf("\", \"dims\": [%d, %d, %d, %d], \"dslash_type\": \"%s\", \"kappa\": %.17g, \"csw\": %.17g, \"prec\": \"%s\", "
           "\"prec_sloppy\": \"%s\", \"inverter\": \"%s\", \"multigrid\": %s, \"solve_type\": \"%s\", \"tol\": %.3g, \"batch\": %d, "
           "\"wall_seconds\": %.6f, \"gflops\": %.3f, \"valid\": %s, \"failed_solves\": %d,\n \"solves\": [",
           dims[0], dims[1], dims[2], dims[3], o->dp.type == TQ_DSLASH_CLOVER ? "clover" : "wilson", o->dp.kappa, o->dp.csw,
           tq_precision_name(o->prec), sp->prec_sloppy ? tq_precision_name(sp->prec_sloppy) : tq_precision_name(o->prec),
           tq_inverter_name(sp->inverter), o->multigrid ? "true" : "false", tq_solve_type_name(sp->solve_type), sp->tol,
           o->batch, r->wall, flops / r->wall * 1e-9, valid ? "true" : "false", r->nfailed);
    print_json_solves(o, r);
    printf("],\n \"multigrid_levels\": ");   /* each level's lattice and its solves' GCR iterations */
    if (r->mg) {
        tq_multigrid_info mi;
        tq_multigrid_get_info(r->mg, &mi);
        printf("[");
        for (int l = 0; l < mi.levels; l++) {
            const int *c = mi.level_dims[l];
            printf("%s{\"dims\": [%d, %d, %d, %d], \"gcr_iterations\": %ld, \"run_by\": \"", l ? ", " : "", c[0], c[1],
                   c[2], c[3], mi.level_iterations[l]);
            print_json_chars(mi.level_where[l]);
            printf("\"}");
        }
        printf("]");
    } else {
        printf("null");
    }
    if (!valid) {
        printf(",\n \"correlator\": null,\n \"effective_mass\": null}\n");
        return;
    }
    printf(",\n \"correlator\": [");
    for (int t = 0; t < dims[3]; t++) printf("%s%.17g", t ? ", " : "", r->corr[t]);
    printf("],\n \"effective_mass\": [");
    for (int t = 0; t + 1 < dims[3]; t++) {
        printf("%s", t ? ", " : "");
        print_json_number("%.10g", log(r->corr[t] / r->corr[t + 1]));
    }
    printf("]}\n");
}

/* What failed, for the messages that withhold the correlator. */
const char *tq_cli_prop_failure(const prop_opts *o, const prop_run *r, char *buf, size_t len)
{
    if (r->nfailed) snprintf(buf, len, "%d of %d solves did not converge", r->nfailed, o->nsrc);
    else snprintf(buf, len, "the warm-up solves did not converge");
    return buf;
}

/* The table's last lines: the totals, then the correlator and its effective mass, or why
 * there are none. */
void tq_cli_prop_summary(const prop_opts *o, const prop_run *r)
{
    double flops = 0;
    int iters = 0;
    for (int s = 0; s < o->nsrc; s++) { flops += r->res[s].flops; iters += r->res[s].iterations; }
    printf("  all solves: %d iterations, %.3f s, %.1f GFLOPS (wall clock of the solves)\n", iters, r->wall,
           flops / r->wall * 1e-9);
    if (r->st != TQ_SUCCESS) {
        char why[96];
        printf("  NO RESULT: %s; no pion correlator\n", tq_cli_prop_failure(o, r, why, sizeof why));
        return;
    }
    printf("  pion correlator (sum over space and the %d sources):\n      t  C(t)                    m_eff(t) = log C(t)/C(t+1)\n",
           o->nsrc);
    for (int t = 0; t < o->dims[3]; t++) {
        printf("  %5d  %.16e", t, r->corr[t]);
        if (t + 1 < o->dims[3]) printf("  %+.8f", log(r->corr[t] / r->corr[t + 1]));
        printf("\n");
    }
}

/* Where the job's wall clock went (the last lines of the table): what a user waits for
 * besides the solves. */
void tq_cli_prop_clock(const prop_clock *c, double total)
{
    const double other = total - c->init - c->gauge - c->problem - c->solves - c->correlator - c->finalize;
    printf("  wall clock %.2f s: StarPU start %.2f, gauge field %.2f, set-up and sources %.2f (operator %.2f), "
           "solves %.2f, correlator %.2f, shutdown %.2f, rest %.2f\n",
           total, c->init, c->gauge, c->problem, c->setup, c->solves, c->correlator, c->finalize, other);
}
