/* Multigrid solves (issue 28): flexible GCR on M preconditioned by the set-up's cycle
 * (tq_multigrid_solve), and a propagator's sources side by side, each on its own host
 * thread and slot (tq_multigrid_solve_many). May call: src/core, src/blas, src/dirac and
 * the solvers' frame. */
#include "solvers/mg_multigrid.h"
#include "solvers/solver_internal.h"
#include "core/placement.h"           /* how many fit a GPU */

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* |b - M x| / |b| with M the operator's full matrix (work field w). */
static tq_status true_residual(const tq_dirac *d, const tq_field *x, const tq_field *b, tq_field *w, double *res)
{
    double b2 = 0, r2 = 0;
    TQ_CHECK(tq_dirac_mat(d, w, x, 0));
    TQ_CHECK(tq_blas_xpay(b, -1.0, w));
    TQ_CHECK(tq_blas_norm2(w, &r2));
    TQ_CHECK(tq_blas_norm2(b, &b2));
    *res = b2 > 0 ? sqrt(r2 / b2) : sqrt(r2);
    return TQ_SUCCESS;
}

/* The outer GCR's preconditioner: slot ctx's cycle, in its precision (smoother_prec; r and z
 * converted where the outer GCR's sloppy fields have another). */
static tq_status outer_precond(void *ctx, tq_field *z, const tq_field *r)
{
    mg_slot *S = ctx;
    if (!S->rs || S->rs->p.prec == r->p.prec) return tq_mg_two_level_apply(S->cycle[0], z, r);
    TQ_CHECK(tq_blas_copy(S->rs, r));
    TQ_CHECK(tq_mg_two_level_apply(S->cycle[0], S->zs, S->rs));
    return tq_blas_copy(z, S->zs);
}

/* The outer GCR's sloppy operator in prec and recon for slot S (*out NULL: none, prec is
 * the operator's): the cycle's own where it has them, else the set-up's copy, made once for
 * every slot at the first solve asking for it (a slot past the first gets a work copy
 * sharing its links, as its other operators). */
static tq_status outer_sloppy(tq_multigrid *mg, mg_slot *S, tq_precision prec, tq_recon recon, const tq_dirac **out)
{
    *out = NULL;
    const tq_field *g = tq_internal_dirac_gauge(mg->d);
    if (!prec) return TQ_SUCCESS;
    if (!recon) recon = g->p.recon;
    if (prec == g->p.prec && recon == g->p.recon) return TQ_SUCCESS;
    const tq_field *f = tq_internal_dirac_gauge(S->fine_d);
    if (f->p.prec == prec && f->p.recon == recon) {
        *out = S->fine_d;
        return TQ_SUCCESS;
    }
    pthread_mutex_lock(&mg->lock);
    int i = 0;
    for (; i < MG_MAX_SLOPPY && mg->outer_sloppy[i]; i++) {
        const tq_field *h = tq_internal_dirac_gauge(mg->outer_sloppy[i]);
        if (h->p.prec == prec && h->p.recon == recon) break;
    }
    tq_status st = i < MG_MAX_SLOPPY ? TQ_SUCCESS
                 : tq_error(TQ_ERR_UNSUPPORTED, "tq_multigrid_solve: more than %d sloppy precisions for one set-up",
                            MG_MAX_SLOPPY);
    if (st == TQ_SUCCESS && !mg->outer_sloppy[i]) {
        /* shared by every slot: made over the blocks' owners, whatever this thread's GPU */
        const int placed = tq_internal_placement_system_slot();
        tq_internal_placement_system(-1);
        st = tq_internal_dirac_sloppy(mg->d, prec, recon, &mg->outer_sloppy[i]);
        tq_internal_placement_system(placed);
    }
    pthread_mutex_unlock(&mg->lock);
    TQ_CHECK(st);
    if (!S->copies) {
        *out = mg->outer_sloppy[i];
        return TQ_SUCCESS;
    }
    if (!S->sloppy[i]) TQ_CHECK(tq_internal_dirac_work(mg->outer_sloppy[i], &S->sloppy[i]));
    *out = S->sloppy[i];
    return TQ_SUCCESS;
}

/* Checks one system's arguments. */
static tq_status check_system(const char *who, const tq_multigrid *mg, const tq_field *x, const tq_field *b,
                              const tq_solver_params *p)
{
    if (!x || !b || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    if (p->inverter != TQ_INV_GCR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: the outer solver is flexible GCR (inverter gcr), not %s", who,
                        tq_inverter_name(p->inverter));
    const tq_field *f[2] = {x, b};
    for (int i = 0; i < 2; i++)
        if (f[i]->lat != mg->lat || f[i]->p.kind != TQ_FIELD_SPINOR || f[i]->p.subset != TQ_FULL ||
            f[i]->p.prec != TQ_DOUBLE)
            return tq_error(TQ_ERR_MISMATCH, "%s: x and b must be full double-precision spinor fields of the operator's "
                            "lattice", who);
    if (x == b) return tq_error(TQ_ERR_INVALID_ARG, "%s: x and b are the same field", who);
    return TQ_SUCCESS;
}

/* One solve on slot S. alone: no other solve runs beside (every task may be waited for);
 * else only this solve's are. */
static tq_status slot_solve(tq_multigrid *mg, mg_slot *S, int alone, tq_field *x, const tq_field *b,
                            const tq_solver_params *p, tq_solver_result *result)
{
    const char *who = "tq_multigrid_solve";
    memset(result, 0, sizeof *result);
    tq_solver_params q = *p;
    q.precond = TQ_PRECOND_NONE;   /* the cycle is the preconditioner */
    const double t0 = tq_internal_now();
    long coarse0[MG_MAX_TRANSFERS];
    double flops0 = 0;
    for (int l = 0; l + 1 < mg->p.levels; l++) coarse0[l] = S->cycle[l]->coarse_iterations, flops0 += S->cycle[l]->flops;
    const tq_dirac *ds = NULL;
    TQ_CHECK(outer_sloppy(mg, S, q.prec_sloppy, q.recon_sloppy, &ds));
    if (ds && !S->rs) {
        /* a double cycle under a sloppy outer GCR: its fields converted (outer_precond) */
        const tq_field_params dp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
        tq_field *rs = NULL, *zs = NULL;
        tq_status st = tq_field_create(mg->lat, &dp, &rs);
        if (st == TQ_SUCCESS) st = tq_field_create(mg->lat, &dp, &zs);
        if (st != TQ_SUCCESS) {
            tq_field_destroy(rs);
            return st;
        }
        S->rs = rs;
        S->zs = zs;
    }
    tq_krylov_out out;
    memset(&out, 0, sizeof out);
    tq_status st = tq_mg_fine_solve(S->outer_d, ds, x, b, &q, outer_precond, S, &out);
    if (st != TQ_SUCCESS && st != TQ_ERR_NOT_CONVERGED) return st;
    const tq_status solve_st = st;
    pthread_mutex_lock(&mg->lock);
    mg->outer_iterations += out.iterations;
    pthread_mutex_unlock(&mg->lock);
    if (alone) TQ_CHECK(tq_wait_all());
    else {   /* x written: its norm waits for the solve's last task */
        double x2;
        TQ_CHECK(tq_blas_norm2(x, &x2));
    }
    result->seconds = result->iter_seconds = tq_internal_now() - t0;
    result->iterations = out.iterations;
    result->residual = out.residual;
    /* the outer GCR's, and every level's cycles: smoothers, coarse solves and transfers */
    double flops = 0;
    for (int l = 0; l + 1 < mg->p.levels; l++) flops += S->cycle[l]->flops;
    result->flops = result->iter_flops = out.flops + (flops - flops0);
    TQ_CHECK(true_residual(S->outer_d, x, b, S->w, &result->true_residual));
    if (mg->p.verbosity >= 1 && tq_internal_mpi_rank() == 0) {
        char per_level[160];
        size_t used = 0;
        per_level[0] = 0;
        for (int l = 0; l + 1 < mg->p.levels && used < sizeof per_level; l++) {
            const int k = snprintf(per_level + used, sizeof per_level - used, "%s%ld on level %d", l ? ", " : "",
                                   S->cycle[l]->coarse_iterations - coarse0[l], l + 1);
            if (k < 0) break;
            used += (size_t)k;
        }
        fprintf(stderr, "taskqcd: multigrid GCR: %d iterations (GCR iterations %s), residual %.3e, true residual "
                "%.3e, %.3f s\n", out.iterations, per_level, result->residual, result->true_residual, result->seconds);
    }
    if (solve_st != TQ_SUCCESS)
        return tq_error(solve_st, "%s: not converged in %d iterations (residual %.3e)", who, out.iterations, out.residual);
    return TQ_SUCCESS;
}

tq_status tq_multigrid_prepare(tq_multigrid *mg, const tq_solver_params *p)
{
    if (!mg || !p) return tq_error(TQ_ERR_INVALID_ARG, "tq_multigrid_prepare: NULL argument");
    const tq_dirac *ds = NULL;
    return outer_sloppy(mg, &mg->slot[0], p->prec_sloppy, p->recon_sloppy, &ds);
}

tq_status tq_multigrid_solve(tq_multigrid *mg, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             tq_solver_result *result)
{
    const char *who = "tq_multigrid_solve";
    if (!mg || !result) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument", who);
    memset(result, 0, sizeof *result);
    TQ_CHECK(check_system(who, mg, x, b, p));
    return slot_solve(mg, &mg->slot[0], 1, x, b, p, result);
}

/* ---- several systems side by side ---------------------------------------------------------
 * One host thread per slot takes the next system not yet taken and solves it: while one
 * system's coarse solve waits for its scalars on the host, another's tasks run. Each system's
 * arithmetic is its own, so the solutions are those of tq_multigrid_solve, to the bit. */
typedef struct {
    tq_multigrid *mg;
    int n, next;
    tq_field *const *x;
    const tq_field *const *b;
    const tq_solver_params *p;
    tq_solver_result *results;
    tq_status *status;
    char (*message)[256];
    pthread_mutex_t lock;
} mg_many;

typedef struct {
    mg_many *m;
    mg_slot *S;
    int gpu;   /* the GPU slot this thread's tasks go to (tq_internal_placement_system), or -1 */
} mg_worker;

static void *solve_worker(void *arg)
{
    mg_worker *w = arg;
    mg_many *m = w->m;
    tq_internal_placement_system(w->gpu);
    for (;;) {
        pthread_mutex_lock(&m->lock);
        const int i = m->next < m->n ? m->next++ : -1;
        pthread_mutex_unlock(&m->lock);
        if (i < 0) break;
        m->status[i] = slot_solve(m->mg, w->S, 0, m->x[i], m->b[i], m->p, &m->results[i]);
        if (m->status[i] != TQ_SUCCESS) snprintf(m->message[i], sizeof m->message[i], "%s", tq_last_error());
    }
    tq_task_thread_finish();   /* this thread's chain buffers */
    tq_internal_placement_system(-1);
    return NULL;
}

tq_status tq_multigrid_solve_many(tq_multigrid *mg, int n, tq_field *const *x, const tq_field *const *b,
                                  const tq_solver_params *p, tq_solver_result *results)
{
    const char *who = "tq_multigrid_solve_many";
    if (!mg || !x || !b || !p || !results || n <= 0)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL argument or n <= 0", who);
    for (int i = 0; i < n; i++) {
        memset(&results[i], 0, sizeof results[i]);
        TQ_CHECK(check_system(who, mg, x[i], b[i], p));
        for (int j = 0; j < i; j++)
            if (x[j] == x[i]) return tq_error(TQ_ERR_INVALID_ARG, "%s: systems %d and %d share their solution field", who, j, i);
    }
    /* side by side: as many as asked and as fit the GPUs (a slot holds the outer GCR's
     * 2 nkrylov + 5 fields and the cycle's); one rank only (a solve's collectives would
     * interleave differently on different ranks) */
    int slots = mg->p.solves_at_once < n ? mg->p.solves_at_once : n;
    const int nkrylov = p->gcr_nkrylov > 0 ? p->gcr_nkrylov : 8;
    const int fit = tq_internal_systems_fitting(mg->lat, (2.0 * nkrylov + 12) * (double)tq_field_bytes(b[0]), 0);
    if (slots > fit) slots = fit;
    if (slots > MG_MAX_SLOTS) slots = MG_MAX_SLOTS;
    if (tq_lattice_nprocs(mg->lat) > 1 || slots < 1) slots = 1;
    if (slots == 1) {   /* one after another; the first failure's message kept */
        tq_status first = TQ_SUCCESS;
        char message[256] = "";
        for (int i = 0; i < n; i++) {
            const tq_status st = slot_solve(mg, &mg->slot[0], 1, x[i], b[i], p, &results[i]);
            if (st != TQ_SUCCESS && first == TQ_SUCCESS)
                first = st, snprintf(message, sizeof message, "%s (system %d)", tq_last_error(), i);
        }
        return first == TQ_SUCCESS ? first : tq_error(first, "%s", message);
    }
    /* with several GPUs each system's levels on one of them, the slots in turn: a level
     * split over GPUs waits on the other GPU at every hop and reduction, and the coarse
     * levels are small (2 x H200, 32^4 light mass, four solves side by side: 0.411 s per
     * solve over both GPUs against 0.369 on one). Slot 0 keeps the set-up's operators,
     * made over the blocks' owners; slots 1 .. are made on their GPUs. */
    if (!mg->slots_mode)
        mg->slots_mode = tq_internal_system_slots(mg->lat, slots, (2.0 * nkrylov + 12) * (double)tq_field_bytes(b[0]), 0) >= 2
                       ? 2 : 1;
    const int first = mg->slots_mode == 2;
    if (slots > MG_MAX_SLOTS - first) slots = MG_MAX_SLOTS - first;
    while (mg->nslots < first + slots) {   /* made once, kept for the next calls */
        if (first) tq_internal_placement_system(mg->nslots - 1);
        const tq_status st = tq_mg_slot_build(mg, &mg->slot[mg->nslots], 1);
        tq_internal_placement_system(-1);
        if (st != TQ_SUCCESS) {
            tq_mg_slot_destroy(&mg->slot[mg->nslots]);
            return st;
        }
        mg->nslots++;
    }
    mg_many m = {.mg = mg, .n = n, .x = x, .b = b, .p = p, .results = results};
    m.status = calloc((size_t)n, sizeof *m.status);
    m.message = calloc((size_t)n, sizeof *m.message);
    mg_worker w[MG_MAX_SLOTS];
    pthread_t th[MG_MAX_SLOTS];
    int started = 0;
    tq_status st = m.status && m.message ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    if (st == TQ_SUCCESS) pthread_mutex_init(&m.lock, NULL);
    for (int k = 0; k < slots && st == TQ_SUCCESS; k++) {
        w[k] = (mg_worker){&m, &mg->slot[first + k], first ? k : -1};
        if (pthread_create(&th[k], NULL, solve_worker, &w[k])) {
            if (started == 0) st = tq_error(TQ_ERR_RUNTIME, "%s: cannot start a solving thread", who);
            break;   /* those started take every system */
        }
        started++;
    }
    for (int k = 0; k < started; k++) pthread_join(th[k], NULL);
    if (m.status && m.message) pthread_mutex_destroy(&m.lock);
    for (int i = 0; i < n && st == TQ_SUCCESS; i++)
        if (m.status[i] != TQ_SUCCESS) st = tq_error(m.status[i], "%s (system %d)", m.message[i], i);
    free(m.status);
    free(m.message);
    return st;
}

