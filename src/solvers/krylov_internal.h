/* The Krylov frame (src/solvers/krylov.c) as its methods see it (cg.c, bicgstab.c, mr.c,
 * gcr.c): the step machine's state, the table through which the frame calls a method, and
 * the helpers an iteration is written with. The frame owns everything between iterations:
 * start, restarts, reliable updates and defect correction, the pipeline and its guard, the
 * stopping rules; a method owns its recurrence's tasks and scalars. */
#ifndef TQ_KRYLOV_INTERNAL_H
#define TQ_KRYLOV_INTERNAL_H

#include "solvers/solver_internal.h"

/* Scalar slots 0 .. 23 belong to the method; slot 0 is its |r|^2, the one the frame reads.
 * The frame's: |b|^2; the guard of queued iterations (1: go on, 0: converged, hold back the
 * queued iteration); the stopping value tol^2 |b|^2 the device compares with; tol^2. */
enum { SLOT_RR = 0, SLOT_B2 = 24, SLOT_GO = 25, SLOT_STOP2 = 26, SLOT_TOL2 = 27 };
/* Iterations queued at most (their snapshots rotate through 0 .. TQ_KRYLOV_QUEUE - 1), and
 * the snapshot a (re)start ends with. */
#define TQ_KRYLOV_QUEUE 4
enum { SNAP_RESTART = TQ_KRYLOV_QUEUE };
#define TQ_GCR_MAX 10

/* What the frame needs from a method. Hooks left NULL take the frame's common behaviour. */
typedef struct tq_krylov_method {
    const char *name;            /* progress lines: "CG" */
    const char *who;             /* error messages: "tq_solve (CG)" */
    int hermitian;               /* needs a Hermitian operator */
    int pipelines;               /* iteration k + 1 may be queued before k is read */
    int fused_form;              /* the sloppy operator's form (tq_linop_kind) whose kernels take
                                    the iteration's reductions; -1: never fused */
    /* The method's own work fields (sloppy precision sp), made after r, p and A p. */
    tq_status (*create_fields)(tq_krylov *k, const tq_field *b, tq_precision sp);
    /* A (re)start after p = r: its scalars, ending with the restart snapshot (NULL: |r|^2
     * and the guard). */
    tq_status (*restart)(tq_krylov *k);
    /* A reliable update's last task (fields: b, A x, r, p, r0, q), with its flops (NULL: r =
     * b - A x, p += r - r_iterated, |r|^2). */
    tq_status (*update_residual)(tq_krylov *k, tq_field *const *f);
    /* Queues one iteration's tasks and adds its BLAS flops. */
    tq_status (*submit_iteration)(tq_krylov *k);
    /* Breakdown tests on an iteration's snapshot (k->s) as soon as it is read. */
    tq_status (*read_iteration)(tq_krylov *k, int it);
    /* Breakdown tests once an iteration read neither converged nor restarted (NULL: none). */
    tq_status (*check_iteration)(tq_krylov *k, int it);
    /* The fused CG's x/p pass that a converged iteration held back (NULL: none held back). */
    tq_status (*held_back_pass)(tq_krylov *k, int guard, int set);
} tq_krylov_method;

extern const tq_krylov_method tq_krylov_cg_method, tq_krylov_bicgstab_method, tq_krylov_mr_method,
    tq_krylov_gcr_method;

struct tq_krylov {
    const tq_krylov_method *m;
    int mixed, defect;
    int fused;                 /* CG on M_pc^dag M_pc, BiCGstab on M_pc: reductions in the operator's kernels */
    int nkrylov, kcycle;       /* GCR: directions per cycle, index of the next one */
    tq_field *z[TQ_GCR_MAX], *az[TQ_GCR_MAX];   /* GCR: directions and their A-images */
    tq_field *pr;              /* GCR's MR preconditioner: its residual */
    /* GCR's preconditioner given by the caller (tq_krylov_set_preconditioner): z = K r */
    tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r);
    void *precond_ctx;
    const char *who;
    tq_solver_params p;
    double delta;
    tq_linop *op, *ops;        /* the system's operator, the sloppy one (may be op) */
    tq_field *x;               /* the system's solution (precise) */
    const tq_field *b;
    tq_field *rh;              /* mixed: A x, then (defect correction) the precise residual */
    tq_field *xs, *rs, *pv, *w1;   /* sloppy solution (x when not mixed), residual, direction, A p */
    tq_field *r0, *sv, *t;     /* BiCGstab: shadow residual, s, A s */
    tq_field *q;               /* fused BiCGstab: M_pc^dag r0 */
    tq_scalars *sc;
    double s[TQ_NSCALARS];     /* the last snapshot read */
    double b2, stop2, rr, rmax;
    double n_sloppy, n_precise;   /* reals per field (flop counts) */
    tq_krylov_out out;
    int done;
    tq_status st;
    /* Pipelining (CG, BiCGstab, MR): iteration k + 1 is queued before iteration k's
     * snapshot is read, so the GPU does not idle while the host decides; once an iteration
     * reaches the tolerance its last scalar program clears SLOT_GO, and the tasks of the
     * queued iteration (guarded by it) change nothing. */
    int pipelined;
    int xpass_in_update;       /* the fused CG: the reliable update being queued does the x/p
                                  pass a queued iteration may hold back (held_back_pass) */
    int xs_stale;              /* fused: the last reliable update accumulated x_sloppy into x
                                  and left it as it was: the next iteration's x pass is a _SET
                                  one (x_sloppy = ..., not +=) */
    int chained;             /* one block: each iteration's tasks go as one chain task (tasks/submit.c; TQ_CHAIN=0: off) */
    int chained_restarts;    /* so do the start's and each reliable update's (both operators on one block) */
    double t0;               /* start (progress lines) */
    /* A (re)start (the start, a reliable update, a defect-correction restart) is queued
     * like an iteration: the iterations after it are queued behind it, guarded, and its
     * snapshot is read at the next check; until the start's is read, b2 and stop2 are
     * unknown on the host. */
    int restart_pending, started;
    int sync_restarts;       /* read each restart at once (several systems: tq_krylov_sync_restarts) */
    double t_start_read;     /* when the host read the start's snapshot */
    long queued, consumed;   /* iterations submitted, snapshots read */
    /* per queued iteration (index: its number % TQ_KRYLOV_QUEUE): BLAS flops and operator
     * applications, counted when it is read (not if it was held back); whether its tasks
     * carry the guard */
    double queued_flops[TQ_KRYLOV_QUEUE];
    long queued_apps[TQ_KRYLOV_QUEUE];
    int queued_guarded[TQ_KRYLOV_QUEUE];
    int queued_set[TQ_KRYLOV_QUEUE];   /* its x pass is a _SET one (xs_stale) */
};

/* A field like f in precision prec. */
tq_status tq_krylov_field_in(const tq_field *f, tq_precision prec, tq_field **out);
/* BLAS op on fields a (and b) with the solve's scalars, under its pending guard and snapshot
 * (tq_blas_submit). */
tq_status tq_krylov_blas(tq_krylov *k, int op, tq_field *a, tq_field *b, const double *c, const signed char *slot,
                         int dst, const tq_scalar_instr *prog, int nprog);
/* The iteration being queued ends with its next reduction: that one writes its snapshot. */
void tq_krylov_last_reduction(tq_krylov *k);
/* M_pc (dagger 0) or M_pc^dag (dagger 1) of the sloppy operator with an epilogue in its
 * last kernel (kernels/solver_scalars.h): sums into scalar slot dst, then prog; AXPY_NORM2:
 * r += -scalar[slot - 1] y; CAXPYZ: out = w - scalar[slot - 1, slot] y. Takes the pending
 * snapshot and guard like a BLAS reduction. */
tq_status tq_krylov_fused_matpc(tq_krylov *k, tq_field *out, const tq_field *in, int dagger, int kind, int dst,
                                int slot, tq_field *r, const tq_field *w, tq_field *u, const tq_scalar_instr *prog,
                                int nprog);
/* Counts an iteration queued with fused reductions (tq_internal_solver_fused_iterations). */
void tq_krylov_count_fused_iteration(void);

#endif
