/* taskqcd propagator --split-grid X Y Z T: the ranks split into X Y Z T sub-grids (groups
 * of consecutive ranks), each solving its share of the sources on its own copy of the
 * whole lattice (a lattice over a group of ranks, tq_lattice_params.group_ranks), as
 * QUDA's split grid does for many right-hand sides: no faces and no reductions between
 * groups inside a solve. The correlator adds the groups' sources in source order
 * (tq_lattice_groups_in_order), so it has one group's bits (those of the same grid and
 * blocks without the split). */
#include "cli/propagator.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int tq_cli_split_check(prop_opts *o, const char *me)
{
    o->nsplit = 1;
    if (!o->split[0]) return 0;
    const int *g = o->split, n = g[0] * g[1] * g[2] * g[3];
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    if (n == 1) return 0;   /* one sub-grid: the lattice over every rank, as without it */
    if (ri.mpi_size % n) {
        fprintf(stderr, "%s: --split-grid %d %d %d %d makes %d sub-grids, which do not split the %d running rank(s) into "
                "equal groups\n", me, g[0], g[1], g[2], g[3], n, ri.mpi_size);
        return 2;
    }
    o->nsplit = n;   /* --gridsize, if given, is then a sub-grid's (tq_lattice_create checks it) */
    return 0;
}

void tq_cli_split_range(int nsrc, int nsplit, int rank, int *first, int *count)
{
    const int base = nsrc / nsplit, extra = nsrc % nsplit;
    *count = base + (rank < extra);
    *first = rank * base + (rank < extra ? rank : extra);
}

void tq_cli_split_share(const prop_opts *o, prop_run *r)
{
    r->src0 = 0;
    r->nmine = o->nsrc;
    if (o->nsplit <= 1) return;
    tq_cli_split_range(o->nsrc, o->nsplit, r->li.group, &r->src0, &r->nmine);
}

/* A solve's result as reals, in this order (the gather adds every rank's, zeros elsewhere:
 * exact, so each value arrives with its own bits). */
enum { RESULT_REALS = 9 };

static void pack(const prop_run *r, int s, double *v)
{
    const tq_solver_result *x = &r->res[s];
    const double w[RESULT_REALS] = {x->iterations, x->reliable_updates, x->residual, x->true_residual, x->seconds,
                                    x->flops, x->iter_seconds, x->iter_flops, r->converged[s]};
    memcpy(v, w, sizeof w);
}

static void unpack(prop_run *r, int s, const double *v)
{
    tq_solver_result *x = &r->res[s];
    x->iterations = (int)v[0];
    x->reliable_updates = (int)v[1];
    x->residual = v[2];
    x->true_residual = v[3];
    x->seconds = v[4];
    x->flops = v[5];
    x->iter_seconds = v[6];
    x->iter_flops = v[7];
    r->converged[s] = v[8] != 0;
}

int tq_cli_split_gather(const prop_opts *o, prop_run *r, const char *me)
{
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    const int n = o->nsrc * RESULT_REALS + ri.mpi_size;
    double *all = calloc((size_t)n, sizeof *all);
    int bad = !all;
    if (bad) fprintf(stderr, "%s: out of memory gathering the solves\n", me);
    if (tq_cli_agree(me, bad)) {
        free(all);
        return 1;
    }
    /* a group's ranks all hold its results: its first rank gives them */
    const int first_of_group = r->li.coords[0] + r->li.coords[1] + r->li.coords[2] + r->li.coords[3] == 0;
    for (int s = r->src0; s < r->src0 + r->nmine && first_of_group; s++) pack(r, s, all + s * RESULT_REALS);
    all[o->nsrc * RESULT_REALS + ri.mpi_rank] = r->wall;
    if (tq_allreduce_sum(all, n) != TQ_SUCCESS) {   /* cannot fail once every rank has the array */
        fprintf(stderr, "%s: %s\n", me, tq_last_error());
        free(all);
        return 1;
    }
    for (int s = 0; s < o->nsrc; s++) unpack(r, s, all + s * RESULT_REALS);
    r->wall = 0;   /* the solves took as long as the slowest rank's */
    for (int k = 0; k < ri.mpi_size; k++)
        if (all[o->nsrc * RESULT_REALS + k] > r->wall) r->wall = all[o->nsrc * RESULT_REALS + k];
    free(all);
    /* a rank whose solves failed: all withhold the correlator, with its message */
    r->st = tq_status_agree(r->st);
    return 0;
}
