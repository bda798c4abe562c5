/* Internals of the Krylov solvers: solver scalars (StarPU handle the reductions write and
 * the BLAS tasks read, kernels/solver_scalars.h), the asynchronous BLAS submission, and the
 * linear operators the solvers are written against. */
#ifndef TQ_SOLVER_INTERNAL_H
#define TQ_SOLVER_INTERNAL_H

#include "field_internal.h"
#include "tq_tasks.h"

#define TQ_NSNAPSHOTS 5
typedef struct tq_scalars {
    starpu_data_handle_t h;           /* TQ_NSCALARS doubles */
    double buf[TQ_NSCALARS];
    starpu_data_handle_t *partials;   /* one per BLAS task of a reduction of several tasks */
    int npartials;
    /* Snapshots of the scalars: 0 to 3 at the end of iterations, in turn, so that the host
     * can read iteration k's while the queued iterations after it already update the
     * scalars; 4 at the end of a (re)start, read while the iterations after it are queued. */
    starpu_data_handle_t snap[TQ_NSNAPSHOTS];
    double snap_buf[TQ_NSNAPSHOTS][TQ_NSCALARS];
    struct tq_snapshot_mark { starpu_data_handle_t h; double t; } mark[TQ_NSNAPSHOTS];
    int guard;       /* != 0: tasks submitted from now on carry this guard (tq_blas_args,
                        tq_guard_shut); an inverse one (< 0) for BLAS tasks only: operator
                        applications take guards > 0 */
    int snap_next;   /* >= 0: the next reduction also writes snapshot snap_next */
    /* The snapshots' mirrors (kernels/solver_scalars.h; NULL: none, the host reads the
     * snapshots through StarPU), the sequence number each one's last writer publishes, and
     * per snapshot a count of its writers seen to end (the host's wait stops there). */
    tq_snapshot_mirror *mirror;
    int mirror_set;
    long long mirror_seq[TQ_NSNAPSHOTS];
    struct tq_snapshot_watch { starpu_data_handle_t h; long long ended; } watch[TQ_NSNAPSHOTS];
} tq_scalars;

tq_status tq_scalars_create(tq_scalars **out);
void tq_scalars_destroy(tq_scalars *sc);
/* Waits for the task that writes snapshot i, then copies it. */
tq_status tq_scalars_read_snapshot(tq_scalars *sc, int i, double *values);
/* Records the time (tq_internal_now) at which the task that writes snapshot i (submitted
 * before this call) completes, without waiting and without moving data; read it with
 * tq_scalars_mark_time (0 while that task has not completed). */
tq_status tq_scalars_mark(tq_scalars *sc, int i);
/* The snapshot the next reduction writes (snap_next, then -1 again; -1: none) and, in
 * *mirror, where that reduction's task publishes it. */
int tq_scalars_take_snapshot(tq_scalars *sc, tq_mirror_ref *mirror);

double tq_scalars_mark_time(const tq_scalars *sc, int i);
/* Host write of n values from slot on (set-up; waits for pending users). */
tq_status tq_scalars_write(tq_scalars *sc, int slot, int n, const double *values);

/* Submits BLAS op over fields f without waiting. Coefficient k is c[k], or c[k] times
 * scalar slot[k] - 1 when slot (may be NULL) has slot[k] > 0. A reduction's sums go to
 * scalar slots dst, dst + 1, ...; then the scalar program runs (only with a reduction).
 * A reduction of one task does all of it in that task; one of several tasks adds a combine
 * task. sc->guard and sc->snap_next apply (the latter is used up by a reduction). */
tq_status tq_blas_submit(const char *who, int op, const double *c, const signed char *slot, tq_field *const *f,
                         tq_scalars *sc, int dst, const tq_scalar_instr *prog, int nprog);

/* M_pc or M_pc^dag with an epilogue fused into its last kernel (src/dirac.c; the kinds in
 * kernels/solver_scalars.h), for CG on M_pc^dag M_pc: NORM2 after M_pc (dagger 0), AXPY_NORM2
 * on r after M_pc^dag (dagger 1); for BiCGstab on M_pc: CAXPYZ and BICGSTAB_T (dagger 0).
 * Only where tq_internal_dirac_can_fuse (one block on one process: the whole parity is one
 * kernel). scalars: the solve's scalars; snapshot: the
 * snapshot handle when args.snapshot. */
typedef struct tq_dirac_epilogue {
    tq_epilogue_args args;
    tq_field *r;                  /* AXPY_NORM2: the field updated */
    const tq_field *w;            /* CAXPYZ, BICGSTAB_T: the field read */
    const tq_field *u;            /* BICGSTAB_T: one more field read */
    starpu_data_handle_t scalars, snapshot;
} tq_dirac_epilogue;
int tq_internal_dirac_can_fuse(const tq_dirac *d);
/* The operator's intermediate field on parity p (M_pc's first kernels write it; tests). */
tq_field *tq_internal_dirac_work_field(const tq_dirac *d, int parity);
/* Chains (tasks/tq_tasks.h), where on: tasks submitted between begin and end go as one
 * chain task. end returns st, or TQ_ERR_RUNTIME naming who if st was a success and the
 * chain's submission failed. */
void tq_internal_chain_begin(int on);
tq_status tq_internal_chain_end(int on, tq_status st, const char *who);
tq_status tq_internal_dirac_matpc_epilogue(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                                           int dagger, const tq_dirac_epilogue *e);

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
} tq_linop_kind;

typedef struct tq_linop {
    const tq_dirac *d;
    tq_linop_kind kind;
    tq_subset parity;          /* even-odd forms */
    tq_field *tmp;             /* work field of the composite forms (made by the solver) */
    double shift;              /* applies A + shift (multi-shift CG's base system) */
    double flops;              /* per application, counted as QUDA does */
    long long applications;
} tq_linop;

tq_status tq_linop_apply(tq_linop *op, tq_field *out, const tq_field *in);
int tq_linop_hermitian(const tq_linop *op);

/* Inverters on linear operators, as step machines (src/solver_krylov.c): start queues x = 0,
 * r = b, |b|^2 without waiting; submit queues one iteration; check waits for the scalars of
 * the oldest queued (re)start or iteration and decides (converged, breakdown, reliable
 * update, maxiter). op: the system's operator; ops: the
 * sloppy one (ops->d != op->d: mixed precision with p's reliable-update or defect-correction
 * scheme). b is not changed. */
typedef struct tq_krylov_out {
    int iterations, reliable_updates;
    double residual;      /* iterated (mixed: true after the last update) relative residual */
    double blas_flops;
} tq_krylov_out;
typedef struct tq_krylov tq_krylov;
enum { TQ_KRYLOV_CG = 0, TQ_KRYLOV_BICGSTAB = 1, TQ_KRYLOV_MR = 2, TQ_KRYLOV_GCR = 3 };
tq_status tq_krylov_start(tq_krylov **k, int method, tq_linop *op, tq_linop *ops, tq_field *x, const tq_field *b,
                          const tq_solver_params *p);
tq_status tq_krylov_submit(tq_krylov *k);
tq_status tq_krylov_check(tq_krylov *k);
int tq_krylov_done(const tq_krylov *k);
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

/* Multi-shift CG (src/solver_multishift.c): (A + op->shift + delta[i]) x[i] = b for
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

#endif
