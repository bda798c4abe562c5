/* Adaptive aggregation multigrid (issue 28), the parts built so far: its parameters and the
 * geometry of its levels. The transfer operators and the coarse operator will follow the
 * plain-loop reference in reference/mg_reference.h. May call: src/core. */
#ifndef TQ_MG_INTERNAL_H
#define TQ_MG_INTERNAL_H

#include "core/field_internal.h"
#include "core/stencil.h"
#include "solvers/solver_internal.h"
#include "tasks/tq_tasks.h"

/* The lattice of each level: its global and per-block extents (coarse[l][0..3] and
 * coarse_block[l][0..3] for l = 0 .. levels - 1; level 0 is lat's). Checks p against lat:
 * aggregates divide each level's block extents (an aggregate never straddles a block, so
 * no rank either), every coarse block extent stays even (even-odd ordering of every
 * level), at most 6 x (sites of an aggregate) null vectors on the fine level (nvec
 * vectors of one chirality need that many degrees of freedom per aggregate; nvec of the
 * level below on coarse ones), steps and tolerances in range. Errors name the level and
 * the mismatch. */
tq_status tq_mg_geometry(const char *who, const tq_mg_params *p, const tq_lattice *lat, int coarse[][4],
                         int coarse_block[][4]);

/* The options of block b's multigrid tasks whose codelets have CPU implementations only
 * (the fine operator's stencil form; the orthonormalisation of a half-precision basis): its
 * owner's, but a block owned by a GPU has them run by any CPU worker. */
tq_task_options tq_mg_block_options(const tq_lattice *lat, int b);
/* The options of the tasks whose codelets run on GPUs too (restriction, prolongation, the
 * coarse operator, the Galerkin product, the basis copies and orthonormalisation): the
 * block's owner's (TQ_MG_CPU=1 in the environment:
 * tq_mg_block_options, for comparisons). */
tq_task_options tq_mg_cycle_options(const tq_lattice *lat, int b);
/* Whether the cycle's tasks run on their blocks' owners (not under TQ_MG_CPU=1): only then
 * may a coarse operator's faces between GPUs be peer faces. */
int tq_mg_cycle_on_owners(void);

/* ---- transfer between a level and the next (src/solvers/mg_transfer.c) ----------------
 * The coarse lattice: fine extents / agg, the same rank grid and the same block grid (coarse
 * block b is the aggregates of fine block b, owned by the same rank and worker). The basis:
 * nvec null vectors orthonormalised per aggregate and chirality, a coarse-kind field of
 * 12 rows nvec complex per fine site on the fine lattice (kernels/mg_transfer_site.h). The
 * tasks run on CPU workers until their CUDA codelets exist. */
typedef struct tq_mg_transfer {
    tq_lattice *fine, *coarse;   /* coarse: made and owned here */
    int agg[4], nvec, fine_ndof; /* fine_ndof: 12 (Wilson spinors) or a coarse level's ndof */
    tq_precision prec;           /* of the basis */
    tq_field *basis;
} tq_mg_transfer;

/* A transfer for vectors of fine_ndof complex per site (12: spinor fields, else coarse
 * fields of that ndof), aggregates agg, nvec null vectors (a multiple of 6), the basis
 * stored in prec. Errors name the mismatch. */
tq_status tq_mg_transfer_create(const char *who, tq_lattice *fine, int fine_ndof, const int agg[4], int nvec,
                                tq_precision prec, tq_mg_transfer **out);
void tq_mg_transfer_destroy(tq_mg_transfer *t);
/* The basis from nvec full fine vectors (spinor or coarse fields of fine_ndof), block-
 * orthonormalised; TQ_ERR_BREAKDOWN when a vector is (numerically) dependent on the ones
 * before it on some aggregate and chirality. */
tq_status tq_mg_transfer_set_basis(tq_mg_transfer *t, tq_field *const *vectors);
/* coarse = R fine (= P^dag fine); fine = P coarse. Full fields of the transfer's lattices. */
tq_status tq_mg_restrict(const tq_mg_transfer *t, const tq_field *fine, tq_field *coarse);
tq_status tq_mg_prolong(const tq_mg_transfer *t, const tq_field *coarse, tq_field *fine);
/* Field parameters of a vector of the coarse lattice. */
tq_field_params tq_mg_coarse_params(const tq_mg_transfer *t, tq_precision prec);
/* The per-block arguments of the transfer's tasks (extents, nvec, rows, the basis layout),
 * and block b's two parity handles of field f. */
tq_mg_transfer_args tq_mg_transfer_block_args(const tq_mg_transfer *t);
void tq_mg_field_pair(const tq_field *f, int b, starpu_data_handle_t h[2]);

/* ---- the coarse operator (src/solvers/mg_coarse_op.c) -----------------------------------
 * D_c v(x) = X(x) v(x) + sum_mu [Yf_mu(x) v(x + mu) + Yb_mu(x) v(x - mu)] on a lattice of
 * n complex per site (reference/mg_reference.h's stencil form), its links a coarse field of
 * 9 n^2 complex per site (kernels/coarse_op_site.h), applied per parity through the
 * stencil layer: faces of one layer of n complex per site between blocks, owners and ranks. */
typedef struct tq_mg_coarse_op {
    tq_lattice *lat;
    int n;
    tq_precision vec_prec;     /* of the vectors it applies to (and of its faces) */
    tq_field *links;
    tq_field *hat;             /* the even-odd form's links (tq_mg_coarse_op_prepare_eo), or NULL */
    tq_stencil stencil;
    int shares_links;          /* a work copy: links and hat are its parent's */
} tq_mg_coarse_op;

tq_status tq_mg_coarse_op_create(const char *who, tq_lattice *lat, int n, tq_precision link_prec, tq_precision vec_prec,
                                 tq_mg_coarse_op **out);
void tq_mg_coarse_op_destroy(tq_mg_coarse_op *op);
/* A copy of op for a solve beside op's own (several systems' cycles at once): op's links and
 * even-odd form (make it first), its own faces, so that applications from two submitting
 * threads never share a buffer. Destroy the copy before op. */
tq_status tq_mg_coarse_op_work(const tq_mg_coarse_op *op, tq_mg_coarse_op **out);
/* out = D_c in: full coarse fields of n complex per site in vec_prec, out != in. */
tq_status tq_mg_coarse_apply(const tq_mg_coarse_op *op, tq_field *out, const tq_field *in);

/* The even-odd form. With D_c = X + H (X the local term, H the hops between parities), the
 * Schur complement on the even sites preconditioned by X_ee^-1 is
 *     S = 1 - Yhat_eo Yhat_oe,   Yhat = X^-1 H (per site: X(x)^-1 Y_m(x)),
 * and D_c x = b becomes S x_e = X_ee^-1 (b_e - H_eo X_oo^-1 b_o), x_o = X_oo^-1 (b_o - H_oe
 * x_e) (tq_mg_level_solve_eo). prepare_eo makes op->hat once (matrix 0: X^-1, matrix m:
 * X^-1 Y_m; a CPU task per block and parity, after the links are written); then, on
 * single-parity fields (tq_field_parity_view for parts of full ones): out = Yhat in, from
 * in's parity to the other (out's), and out = X^-1 in on one parity. */
tq_status tq_mg_coarse_op_prepare_eo(tq_mg_coarse_op *op);
/* op's links (and its even-odd form's, when made) stored in half precision from now on, a
 * norm per 12 complex of a row (field_layout.h), converted from their present precision:
 * a hop then reads about half the bytes of single links (coarse hops are bound by the
 * links' bandwidth). The vectors keep their precision. Made before: the even-odd form
 * (its kernel builds from single or double links) and the Galerkin products of the levels
 * below (they read op's links). */
tq_status tq_mg_coarse_op_store_half(tq_mg_coarse_op *op);
tq_status tq_mg_coarse_hop_hat(const tq_mg_coarse_op *op, tq_field *out, const tq_field *in);
tq_status tq_mg_coarse_xinv(const tq_mg_coarse_op *op, tq_field *out, const tq_field *in);
/* Around a solve or smoother on S, for full fields b and x: bh = X_ee^-1 b_e - Yhat_eo yo
 * with yo = X_oo^-1 b_o (kept for the reconstruction; w: even work field); then x_e = xe
 * (NULL: x's even part holds it already) and x_o = yo - Yhat_oe x_e. */
tq_status tq_mg_coarse_eo_prepare(const tq_mg_coarse_op *op, tq_field *bh, tq_field *yo, tq_field *w, const tq_field *b);
tq_status tq_mg_coarse_eo_reconstruct(const tq_mg_coarse_op *op, tq_field *x, const tq_field *xe, const tq_field *yo);
/* Flops of one application of S (two hopping terms on half the sites each, the xpay), and of
 * the preparation and reconstruction together. */
double tq_mg_coarse_pc_flops(const tq_mg_coarse_op *op);
double tq_mg_coarse_eo_edge_flops(const tq_mg_coarse_op *op);

/* The fine level in stencil form: M = A - kappa D of d (Wilson or clover, its boundary
 * conditions) as the links of an operator with 12 complex per site on d's lattice
 * (kernels/mg_fine_op_site.h), links stored in link_prec, applied to vectors in vec_prec
 * (coarse-kind fields of 12 complex per site). Tasks per block; the links are ready when
 * they are next read. */
tq_status tq_mg_fine_op_create(const char *who, const tq_dirac *d, tq_precision link_prec, tq_precision vec_prec,
                               tq_mg_coarse_op **out);

/* ---- the Galerkin product (src/solvers/mg_coarsen.c) ------------------------------------
 * coarse's links = R D P for the stencil-form operator fine on t's fine lattice (fine->n ==
 * t->fine_ndof) and t's basis; coarse on t's coarse lattice with n = 2 nvec. One task per
 * block after the basis's boundary layers moved through the stencil layer's faces
 * (kernels/mg_coarsen_site.h); waits for them. Bitwise reference/mg_reference.h's
 * mgref_coarsen with a double basis and double links, and the same for every block
 * decomposition. */
tq_status tq_mg_coarsen(const tq_mg_coarse_op *fine, const tq_mg_transfer *t, tq_mg_coarse_op *coarse);

/* ---- solves on a level (src/solvers/mg_solve.c) ------------------------------------------
 * tq_mg_linop: the level's operator as the Krylov frame applies it: D_c of op, or (d not
 * NULL) d's M on full spinor fields.
 * D_c x = b from x = 0 with p's inverter (GCR, with or without its MR preconditioner,
 * BiCGstab or MR), tolerance and iteration limit, on full coarse fields of op's lattice in
 * op->vec_prec; out (may be NULL): iterations and the iterated relative residual. */
void tq_mg_linop(const tq_mg_coarse_op *op, const tq_dirac *d, tq_linop *L);
struct tq_krylov_out;
tq_status tq_mg_coarse_solve(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             struct tq_krylov_out *out);
/* The same on the even-odd Schur complement (op->hat made: tq_mg_coarse_op_prepare_eo):
 * the right-hand side prepared, S x_e = b^_e solved from x_e = 0 with p's inverter to p's
 * tolerance relative to |b^_e|, x_o reconstructed; x and b as for tq_mg_coarse_solve. out's
 * iterations and residual are the Schur system's. */
tq_status tq_mg_level_solve_eo(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                               struct tq_krylov_out *out);
/* The same with GCR preconditioned by precond(ctx, z, r): z = K r (e.g. a multigrid cycle). */
tq_status tq_mg_level_solve(const tq_mg_coarse_op *op, tq_field *x, const tq_field *b, const tq_solver_params *p,
                            tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r), void *ctx,
                            struct tq_krylov_out *out);

/* The same on the fine level as the Wilson-clover operator itself: M of d (tq_dirac_mat) on
 * full spinor fields in d's precision (the smoother, the null vectors' set-up solves and the
 * outer solve; the stencil form of the fine level serves only the Galerkin product). With
 * ds (a sloppy copy of d; NULL or d: none) the iterations run on ds with reliable updates on
 * d, and precond gets fields in ds's precision. */
tq_status tq_mg_fine_solve(const tq_dirac *d, const tq_dirac *ds, tq_field *x, const tq_field *b,
                           const tq_solver_params *p, tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r),
                           void *ctx, struct tq_krylov_out *out);
tq_status tq_mg_fine_solve_many(const tq_dirac *d, int n, tq_field *const *x, const tq_field *const *b,
                                const tq_solver_params *p, tq_status *status, struct tq_krylov_out *out);

/* n solves D_c x[i] = b[i] from x = 0 side by side (tq_krylov_run_together: independent
 * task graphs submitted together), without preconditioner; status[i] and out[i] per solve.
 * Returns the first error of setting them up or submitting (status[i]: each one's own,
 * TQ_ERR_NOT_CONVERGED included). */
tq_status tq_mg_level_solve_many(const tq_mg_coarse_op *op, int n, tq_field *const *x, const tq_field *const *b,
                                 const tq_solver_params *p, tq_status *status, struct tq_krylov_out *out);

/* ---- a two-level cycle (src/solvers/mg_cycle.c) --------------------------------------------
 * K r for the fine level's operator: pre MR steps on F z = r (their coefficients computed on
 * the device: no host wait), the coarse correction
 * z += P C^-1 R (r - F z) with C^-1 a coarse solve to coarse_p's tolerance (or its iteration
 * limit), post MR steps on the new residual; a preconditioner for tq_mg_level_solve's GCR.
 * With more levels the coarse solve is flexible GCR preconditioned by the next level's cycle
 * (tq_mg_two_level_set_coarse_preconditioner): a K-cycle. Work fields are made at create. */
typedef struct tq_mg_two_level {
    const tq_mg_coarse_op *fine, *coarse;
    const tq_dirac *fine_d;            /* non-NULL: the fine level is d's M on spinor fields (fine unused) */
    const tq_mg_transfer *t;
    int pre, post;
    tq_solver_params coarse_p;
    tq_field *rr, *az, *e, *rc, *ec;   /* fine: residual, F z, a correction; coarse: rhs, solution */
    tq_field *sres;                    /* the smoother's residual */
    tq_linop fine_op;                  /* F, as the smoother applies it */
    tq_scalars *sc;                    /* the smoother's coefficients, on the device */
    tq_status (*coarse_precond)(void *ctx, tq_field *z, const tq_field *r);   /* NULL: plain GCR */
    void *coarse_ctx;
    int coarse_eo;                     /* without a preconditioner: the even-odd solve (tq_mg_level_solve_eo) */
    int smoother_eo;                   /* the smoother's MR steps on the fine level's even-odd Schur complement */
    tq_linop pc_op;                    /* that complement: M_pc (fine_d) or S of the coarse form */
    tq_field *eb, *ex, *eres, *eaz;    /* its right-hand side, solution and MR work fields (even parity) */
    tq_field *yo, *ew, *etmp;          /* coarse form: X_oo^-1 b_o, an even and an odd work field */
    long coarse_iterations;            /* summed over applications */
    double flops;                      /* of its applications so far, counted as QUDA does */
} tq_mg_two_level;
tq_status tq_mg_two_level_create(const tq_mg_coarse_op *fine, const tq_mg_transfer *t, const tq_mg_coarse_op *coarse,
                                 int pre, int post, const tq_solver_params *coarse_p, tq_mg_two_level **out);
/* The same with the fine level as d's M on full spinor fields (t's fine lattice d's, 12
 * complex per site). */
tq_status tq_mg_two_level_create_dirac(const tq_dirac *d, const tq_mg_transfer *t, const tq_mg_coarse_op *coarse,
                                       int pre, int post, const tq_solver_params *coarse_p, tq_mg_two_level **out);
/* The coarse solve of m's cycle preconditioned by precond(ctx, z, r) (the next level's
 * cycle, tq_mg_two_level_apply; NULL: none). coarse_p's inverter must be GCR. */
tq_status tq_mg_two_level_set_coarse_preconditioner(tq_mg_two_level *m,
                                                    tq_status (*precond)(void *ctx, tq_field *z, const tq_field *r),
                                                    void *ctx);
/* The coarse solve of m's cycle (one without a preconditioner) on the even-odd Schur
 * complement of the coarse operator, whose even-odd form this makes (collective). */
tq_status tq_mg_two_level_set_coarse_eo(tq_mg_two_level *m);
/* m's smoother as MR steps on the even-odd Schur complement of its fine level (red-black
 * smoothing: the right-hand side prepared, the steps on the even sites, the odd ones
 * reconstructed): M_pc of the Dirac operator (tq_dirac_prepare / _reconstruct), or S of a
 * coarse level, whose even-odd form this makes. Makes the even-parity work fields. */
tq_status tq_mg_two_level_set_smoother_eo(tq_mg_two_level *m);
void tq_mg_two_level_destroy(tq_mg_two_level *m);
tq_status tq_mg_two_level_apply(void *m, tq_field *z, const tq_field *r);

#endif
