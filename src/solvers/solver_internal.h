/* Internals of the solvers (src/solvers/): the linear operators the inverters are written
 * against and the Krylov step machines. May call src/core/, src/blas/, src/dirac/ and
 * tasks/. */
#ifndef TQ_SOLVER_INTERNAL_H
#define TQ_SOLVER_INTERNAL_H

#include "dirac/dirac_internal.h"

/* The linear operators the inverters see: the Dirac operator in one of its forms. */
typedef enum tq_linop_kind {
    TQ_LINOP_MAT,              /* M (full fields) */
    TQ_LINOP_MAT_DAG,          /* M^dag */
    TQ_LINOP_MAT_DAG_MAT,      /* M^dag M */
    TQ_LINOP_MAT_MAT_DAG,      /* M M^dag */
    TQ_LINOP_MATPC,            /* M_pc (single-parity fields of `parity`) */
    TQ_LINOP_MATPC_DAG,
    TQ_LINOP_MATPC_DAG_MATPC,
    TQ_LINOP_MATPC_MATPC_DAG,
    TQ_LINOP_COARSE,           /* a multigrid level's operator D_c (full coarse fields; d NULL) */
    TQ_LINOP_COARSE_PC,        /* its even-odd Schur complement 1 - Yhat_eo Yhat_oe (tmp: the other parity) */
    TQ_LINOP_KS_PC,            /* improved staggered: -D_pq D_qp on parity p (d NULL; tmp: parity q; the
                                  mass enters as the shift 4 m^2) */
} tq_linop_kind;

struct tq_mg_coarse_op;
typedef struct tq_linop {
    const tq_dirac *d;
    const struct tq_mg_coarse_op *coarse;   /* TQ_LINOP_COARSE */
    const struct tq_ks_op *ks;              /* TQ_LINOP_KS_PC */
    tq_linop_kind kind;
    tq_subset parity;          /* even-odd forms */
    tq_field *tmp;             /* work field of the composite forms (made by the solver) */
    double shift;              /* applies A + shift (multi-shift CG's base system) */
    double flops;              /* per application, counted as QUDA does */
    long long applications;
} tq_linop;

tq_status tq_linop_apply(tq_linop *op, tq_field *out, const tq_field *in);
/* Flops of one application of form kind of d, counted as QUDA does (per output site of one
 * parity: 1320 per hopping term, 504 per clover application, 48 per x + a y). */
double tq_linop_flops(const tq_dirac *d, tq_linop_kind kind);
int tq_linop_hermitian(const tq_linop *op);

/* z = steps MR steps on A z = r from z = 0, every coefficient computed on the device from
 * the reductions into sc's slots slot .. slot + 4 (no host wait); res and az are work fields
 * (res ends as neither r nor the residual). BLAS flops per real: tq_mr_steps_flops. */
tq_status tq_mr_steps(const char *who, tq_linop *A, tq_scalars *sc, int slot, int steps, tq_field *z,
                      const tq_field *r, tq_field *res, tq_field *az);
double tq_mr_steps_flops(int steps);

/* Inverters on linear operators, as step machines (the frame src/solvers/krylov.c, one file
 * per method: cg.c, bicgstab.c, mr.c, gcr.c): start queues x = 0, r = b, |b|^2 without
 * waiting; submit queues one iteration; check waits for the scalars of the oldest queued
 * (re)start or iteration and decides (converged, breakdown, reliable update, maxiter). op:
 * the system's operator; ops: the sloppy one (ops->d != op->d: mixed precision with p's
 * reliable-update or defect-correction scheme). b is not changed. */
typedef struct tq_krylov_out {
    int iterations, reliable_updates;
    double residual;      /* iterated (mixed: true after the last update) relative residual */
    double blas_flops;
    double flops;         /* operator and BLAS flops in all (set by the multigrid level
                             solves, src/solvers/mg_solve.c; 0 elsewhere) */
} tq_krylov_out;
typedef struct tq_krylov tq_krylov;
enum { TQ_KRYLOV_CG = 0, TQ_KRYLOV_BICGSTAB = 1, TQ_KRYLOV_MR = 2, TQ_KRYLOV_GCR = 3 };
tq_status tq_krylov_start(tq_krylov **k, int method, tq_linop *op, tq_linop *ops, tq_field *x, const tq_field *b,
                          const tq_solver_params *p);
tq_status tq_krylov_submit(tq_krylov *k);
tq_status tq_krylov_check(tq_krylov *k);
/* Whether tq_krylov_check would find what it reads already there: 1 yes, 0 not yet, -1
 * unknown (it may wait). */
int tq_krylov_ready(const tq_krylov *k);
/* Runs n started solves side by side until each is done (k[i] NULL: none): every one's
 * iteration is queued, then whichever has its scalars is checked and queued again first;
 * where none is known ready (no host mirror of the scalars: it cannot be told; always
 * across ranks, where every rank must take the steps in one order), the next in turn waits.
 * Each solve's own steps, and so its result, are the same in any order. step(ctx, i, done)
 * (may be NULL) is called before each step of solve i (done 0: placement of its tasks) and
 * once when it is done (done 1). Returns the first submission error; that solve stops. */
tq_status tq_krylov_run_together(tq_krylov *const *k, int n, void (*step)(void *ctx, int i, int done), void *ctx);
int tq_krylov_done(const tq_krylov *k);
/* GCR only: z = fn(ctx, z, r) as its preconditioner instead of p's (a multigrid cycle;
 * flexible GCR takes one that changes between iterations). Set before the first submit. */
void tq_krylov_set_preconditioner(tq_krylov *k, tq_status (*fn)(void *ctx, tq_field *z, const tq_field *r), void *ctx);
/* One iteration at a time (the caller works on the solve's fields between iterations). */
void tq_krylov_no_pipeline(tq_krylov *k);
/* Each (re)start read as soon as it is queued (the host waits), instead of at the next
 * check: several systems solved together. Queued restarts let the host run ahead of them
 * by up to four iterations per system, and with 12 systems a 12-source propagator took
 * 1.3-1.4 s instead of 0.85 s (H200). */
void tq_krylov_sync_restarts(tq_krylov *k);
tq_status tq_krylov_status(const tq_krylov *k);
const tq_krylov_out *tq_krylov_result(const tq_krylov *k);
/* When the iterations began: the start's tasks completed (tq_internal_now's clock). */
double tq_krylov_iter_start(const tq_krylov *k);
void tq_krylov_free(tq_krylov *k);
/* One solve of L x = b from x = 0 in L's precision alone (p's sloppy precision ignored),
 * start to end (precond: GCR's, or NULL); out (may be NULL) with the flops of L's
 * applications. */
tq_status tq_krylov_solve(tq_linop *L, int method, tq_field *x, const tq_field *b, const tq_solver_params *p,
                          tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r), void *ctx, tq_krylov_out *out);
/* The same in mixed precision: the iterations on Ls, an operator in p->prec_sloppy (the
 * sloppy copy of L's), with reliable updates (or defect correction, p->mixed) on L; the
 * preconditioner (may be NULL; GCR) works on sloppy fields. */
tq_status tq_krylov_solve_mixed(tq_linop *L, tq_linop *Ls, int method, tq_field *x, const tq_field *b,
                                const tq_solver_params *p, tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r),
                                void *ctx, tq_krylov_out *out);

/* Multi-shift CG (src/solvers/multishift_cg.c): (A + op->shift + delta[i]) x[i] = b for
 * delta[0] = 0 <= delta[i], A Hermitian positive; out[i] per system. */
tq_status tq_krylov_multishift(tq_linop *op, int n, const double *delta, tq_field *const *x, const tq_field *b,
                               const tq_solver_params *p, tq_krylov_out *out);
/* The base CG's scalars after tq_krylov_check: alpha and beta of the iteration just done. */
void tq_krylov_cg_coefficients(const tq_krylov *k, double *alpha, double *beta);
/* The base CG's current residual field (sloppy precision) and |r|^2 / |b|^2. */
tq_field *tq_krylov_residual(const tq_krylov *k);
double tq_krylov_relative_r2(const tq_krylov *k);

/* A spinor field like f (lattice, precision, subset). */
tq_status tq_field_like(const tq_field *f, tq_field **out);

/* CG iterations submitted so far (all solves) with the reductions fused into the operator
 * (solve type normop-pc on one block; TQ_SOLVER_FUSE=0 turns it off): lets tests check that
 * the fused path ran. */
long tq_internal_solver_fused_iterations(void);
/* Iterations queued while an earlier one of the same solve was not read yet (pipelining). */
long tq_internal_solver_queued_ahead(void);
/* Split epilogue reductions (the fused iteration on several blocks) submitted so far whose
 * partial sums went to the other GPUs through peer memory (tests: the path ran). */
long tq_internal_solver_peer_split_reductions(void);

#endif
