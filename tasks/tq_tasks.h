/* Insert functions: each submits one codelet on given handles with the right access
 * modes, arguments and priority. src/ algorithms call only these; tasks/ calls only
 * codelets/ and StarPU, never src/: what the caller decides (where a task may run, a
 * priority shift, later the block's owner) comes down in a tq_task_options argument. */
#ifndef TQ_TASKS_H
#define TQ_TASKS_H

#include "tq_codelets.h"
#include "taskqcd.h"

/* What the caller decides about a task (src/core/placement.c makes them). */
typedef struct tq_task_options {
    tq_where where;   /* the kinds of workers that may run it (TQ_WHERE_ANY: every kind) */
    int priority;     /* added to the insert function's own priority (0: as it chooses) */
    int worker;       /* the StarPU worker that must run it (its block's owner), or -1 */
    int rank;         /* the MPI rank that runs it (its block's rank), or -1: every rank
                         (of `ranks`) runs it on its own copy (combining reductions, scalar
                         programs) */
    uint64_t ranks;   /* the ranks of its data, a bit per rank (a lattice over a group of
                         ranks: the group's); 0: every rank */
    int part;         /* the sites of the buffers it writes: 0 all, else tq_task_part bits
                         (set by the insert functions): in a chain on a GPU, two tasks
                         writing disjoint parts of one buffer run side by side */
    int read_part;    /* the sites of the buffers it only reads, likewise (0 all): a task
                         reading a part another writes none of need not wait for it */
} tq_task_options;

/* Parts of a block's sites (tq_task_options.part, read_part; bits, 0 meaning all): a split
 * block's interior task writes the sites off its split faces, its exterior task those on
 * them; an interior in two bands (kernels/dslash_wilson_site.h, tq_interior_band) writes
 * the deep sites, reading only the inside of its input, and then the rim. */
typedef enum {
    TQ_PART_ALL = 0, TQ_PART_DEEP = 1, TQ_PART_RIM = 2, TQ_PART_INSIDE = 3, TQ_PART_FACES = 4
} tq_task_part;

/* Ranks: every rank submits every task, in the same order, with the same options, and
 * tq_task_submit_descr runs a task only on opt->rank (all ranks for -1). Before it, the
 * task's inputs go by StarPU-MPI from a rank that holds their latest value to each rank
 * that runs it but does not: each handle remembers the ranks holding its latest value
 * (the ranks that last wrote it, and those it was sent to since). Set by tq_init. */
void tq_task_set_ranks(int rank, int nranks);
/* A write outside tasks (a host import on the block's rank): every rank records that
 * `rank` alone now holds h's latest value. */
void tq_task_data_written_on(starpu_data_handle_t h, int rank);
/* Every rank records that it holds h's latest value, so no transfer ever brings it
 * (peer partial sums across ranks, src/blas/peer_partials.c: each rank's tasks read only
 * its own copy; the others' sums reach it through CUDA IPC). Every rank must call it. */
void tq_task_data_on_every_rank(starpu_data_handle_t h);
/* Transfers posted by this rank so far (sends and receives), for tests. */
long tq_internal_transfers_posted(void);

/* Submits one task of codelet cl on buffers d[0..n-1] (handles and modes) with a copy of
 * arg and the priority (shifted by opt->priority), where opt->where allows. Returns 0 or a
 * StarPU error. */
int tq_task_submit_descr(const tq_task_options *opt, struct starpu_codelet *cl, const void *arg, size_t asize,
                         const struct starpu_data_descr *d, int n, int priority);

/* Posts now the StarPU-MPI transfers that bring h's latest value to the rank(s) of a task
 * with options opt submitted later, instead of at that task's submission (a face is sent
 * as soon as it is packed, not after the sender's interior work recorded in between; on
 * the receiver, a recorded task reading h starts a new chain run). Every rank must call it
 * for the same handles in the same order. Returns 0 or a StarPU error. */
int tq_task_transfer(const tq_task_options *opt, starpu_data_handle_t h);

/* Moves h's latest value into the memory of opt->worker as soon as the task writing it
 * (submitted before) has run, for a task of that worker submitted before this call that
 * reads h but waits on other work (a block's exterior waits for its interior; without
 * this its faces would cross only then, on its critical path). Nothing where opt has no
 * owner (unless it allows GPUs only and there is one) or another rank runs the reader.
 * While a chain is recorded and a recorded task writes h, the move follows the submission
 * of that task's chain task. Returns 0 or a StarPU error. */
int tq_task_prefetch(const tq_task_options *opt, starpu_data_handle_t h);

/* Chains: between tq_task_chain_begin() and tq_task_chain_end() the tasks this thread
 * submits are recorded, and tq_task_chain_end() submits them as chain tasks
 * (codelets/chain.h), each running several recorded tasks in order on one worker; nested
 * pairs join the outer chain. The recorded tasks are split into runs of one owner
 * (opt->where and opt->worker) each: a run ends after a task whose output another owner
 * reads or overwrites and begins at a task that reads or overwrites another owner's output
 * (a face, a reduction's partial sums or scalars), so no chain task waits in its middle for
 * another owner's. The runs go in an order that keeps every two conflicting tasks in their
 * recorded order (the results are those of one task per kernel, bitwise). Use it around
 * work that is only task submission: nothing in between may access the data from the host.
 * Returns 0 or the StarPU error of the submission (the recorded tasks are dropped then).
 * TQ_CHAIN=0 in the environment turns chains off (every task alone), for comparisons;
 * TQ_CHAIN_TRACE=1 prints each submission's runs on stderr. A task that may go to CPU and
 * CUDA workers alike (no owner, opt->where TQ_WHERE_ANY, both kinds running) never joins a
 * chain: the scheduler places it by its own model. Across ranks, what was recorded goes
 * to StarPU before a face or partial sum moves between ranks. */
void tq_task_chain_begin(void);
int tq_task_chain_end(void);
/* Tasks recorded from now on (on: 1) may run on a GPU beside the earlier work of their
 * chain task they do not conflict with, each on the stream of its latest conflicting
 * predecessor or a free one (codelets/chain.h, TQ_CHAIN_OP_OVERLAP), instead of the
 * worker's stream; for independent work in a row (the next M_pc application with its
 * intermediate by turns). Returns the previous setting. */
int tq_task_overlap(int on);
/* While a chain is recorded: the chain tasks of opt's owner (opt->where, opt->worker) made
 * from this recording also hold h (as written: its value is lost), where no entry of
 * theirs uses it. A later run of that owner joins a chain task that still waits only if
 * the task holds every buffer of the run (tasks/submit.c), and a held one only if the run
 * writes it first; work that takes two work buffers by turns (M_pc's intermediate) holds
 * the other one, so that the next turn can join. Returns 0 or
 * -ENOMEM; nothing outside a recording, for a task without an owner (opt->worker < 0) or
 * of another rank. */
int tq_task_hold(const tq_task_options *opt, starpu_data_handle_t h);
/* Code that registers an asynchronous access to a handle outside the task functions here
 * (starpu_data_acquire_*_cb, starpu_data_unregister_submit) calls this first: a chain task
 * that still waits for its dependencies takes later runs of its owner (tasks/submit.c), and
 * must not take one past such an access. Blocking acquires need not call it. */
void tq_task_note_access(starpu_data_handle_t h, enum starpu_data_access_mode mode);
/* Frees the calling thread's chain-recording buffers (each submitting thread has its own):
 * a thread that submitted tasks calls it before it ends, outside any chain. */
void tq_task_thread_finish(void);
/* From now on every task of `worker` goes to StarPU as a chain task that also holds the
 * worker's sequencer handle (read-write), so StarPU runs them in the order they were
 * recorded (peer faces, core/stencil.h: a GPU's stream may wait for another GPU's earlier
 * work; nothing recorded later may get ahead of it there). Returns 0 or a StarPU error.
 * tq_task_sequencers_release at shutdown, once no task runs. */
int tq_task_sequence_worker(int worker);
void tq_task_sequencers_release(void);
/* The task log (tasks/task_log.c): on when TQ_TASK_LOG names a file (looked at once per
 * tq_init); attach makes a task record its codelet, worker and times when it has run;
 * transfer records a face that moved between ranks (posted at tq_task_log_now's time);
 * finish, at tq_finalize, writes the file (FILE.RANK on several ranks). */
int tq_task_log_on(void);
/* A trace folder (NULL: none): the log goes to DIR/tasks.tsv, and tq_task_log_finish also
 * writes DIR/summary.txt and DIR/gantt.svg (.RANK under MPI). Call before any task. */
void tq_task_log_set_trace(const char *dir);
void tq_task_log_attach(struct starpu_task *task);
double tq_task_log_now(void);
void tq_task_log_transfer(const char *what, int peer, double posted);
void tq_task_log_finish(void);
/* The task graph (tasks/task_graph.c): on when tq_task_graph_set_path or TQ_TASK_GRAPH names
 * a file (looked at once per tq_init); add records a task tq_task_submit_descr runs on this
 * rank, with its accesses; finish, at tq_finalize, writes the file (FILE.RANK on several
 * ranks) and forgets the graph. */
void tq_task_graph_set_path(const char *path);
int tq_task_graph_on(void);
void tq_task_graph_add(const struct starpu_codelet *cl, const void *arg, size_t asize, int worker, tq_where where,
                       int priority, const struct starpu_data_descr *d, int n);
void tq_task_graph_finish(void);
/* This rank and the number of ranks (tq_task_set_ranks). */
void tq_task_get_ranks(int *rank, int *n);
/* Chain tasks submitted so far (two or more tasks as one), for tests. */
long tq_internal_chains_submitted(void);
/* Runs appended to a chain task that still waited (TQ_CHAIN_EXTEND=0: none). */
long tq_internal_chains_extended(void);
/* Tasks tq_task_submit_descr ran on this rank so far (each kernel, chained or not). */
long tq_internal_tasks_submitted(void);
/* Owner checks, for tests: while on, every task submitted with an owner (opt->worker >= 0)
 * records, when it has run, whether the worker that ran it was its owner. */
void tq_internal_owner_checks(int on);
void tq_internal_owner_stats(long *ran_on_owner, long *ran_elsewhere);
/* Of those, the tasks worker `worker` ran as their owner. */
long tq_internal_owner_ran_on(int worker);

/* One BLAS task over the operand handles of a block (a->op decides how many); for
 * reductions that are not fused, partial receives TQ_BLAS_MAX_RESULTS doubles, and scratch
 * is the reduction's scratch (NULL: the worker's, tq_codelets_scratch); scalars: the
 * solver scalars (a->use_scalars: coefficients, guard, fused reduction); snapshot: the
 * buffer a->snapshot asks for. Returns 0 or a StarPU error. */
int tq_task_blas(const tq_task_options *opt, const tq_blas_args *a, const starpu_data_handle_t *operands,
                 starpu_data_handle_t partial, starpu_data_handle_t scratch, starpu_data_handle_t scalars,
                 starpu_data_handle_t snapshot);

/* Sums partials[0..n-1] in order into result (a vector of TQ_BLAS_MAX_RESULTS doubles). */
int tq_task_reduce_combine(const tq_task_options *opt, const starpu_data_handle_t *partials, int n,
                           starpu_data_handle_t result);

/* Sums a->n partials into solver-scalar slots and runs a->prog (tq_cl_scalar_combine);
 * snapshot: copy of the scalars afterwards when a->snapshot. */
int tq_task_scalar_combine(const tq_task_options *opt, const tq_scalar_combine_args *a, const starpu_data_handle_t *partials,
                           starpu_data_handle_t scalars, starpu_data_handle_t snapshot);

/* Tests: the most thread blocks of the dslash reduction kernels (tq_dslash_reduce_blocks_limit;
 * 0: the default). */
void tq_task_dslash_reduce_blocks_limit(int nblocks);
/* Wilson hopping term of one block (codelets/dslash_wilson.c documents buffers and faces). faces:
 * per split direction mu in order, two handles (pack: the lower and upper face it writes;
 * exterior: the face from the block below and the one from above). x: NULL, a field to add
 * (a->xpay), or out itself (in-place x + a D in). K: the clover field's handle of the
 * block and output parity when a->clover (out = a K D in (+ x)), otherwise ignored. A NULL
 * face is a peer face, written or read where a->sync.ptr says (face_sync.h). */
int tq_task_dslash_wilson_pack(const tq_task_options *opt, const tq_dslash_wilson_face_args *a, starpu_data_handle_t in,
                               starpu_data_handle_t g, const starpu_data_handle_t *faces, int nfaces);
/* What a hopping task's epilogue (kernels/solver_scalars.h) reads and writes: the field w
 * (unless a->epi.w_is_x), the field u when it reads one more (tq_epilogue_reads_u), the
 * solver scalars, and the snapshot (when a->epi.snapshot) or, for a split epilogue
 * (a->epi.split), the task's partial. */
typedef struct tq_epilogue_handles {
    starpu_data_handle_t w, u, scalars, snapshot, partial;
    starpu_data_handle_t scratch;   /* a split epilogue's own reduction scratch (read-write, its
                                       counter zero: tq_scalars_epilogue_scratch); NULL: the
                                       worker's (tq_codelets_scratch) */
    starpu_data_handle_t entries;   /* epi.entries: the block's face sites' results by
                                       exterior entry (tq_scalars_epilogue_entries) */
} tq_epilogue_handles;
/* The interior task; with an epilogue (a->epi.kind) also e's handles: w, u, the solver
 * scalars (RW; R for a split epilogue) and the snapshot or the partial (W), and the
 * entries (W) with a->epi.entries (a split epilogue in place, a->direct); out is then r
 * for TQ_EPI_AXPY_NORM2 (read-write). Without an epilogue but with a->epi.guard > 0 the
 * solver scalars e->scalars (R): the task does nothing when its guard is shut. With
 * a->direct, the nnbr (3 per split direction, at most 12) neighbour handles nbr after all
 * those (R). a->band (a split block through faces, no epilogue): only that band's sites,
 * writing part TQ_PART_DEEP (reading only TQ_PART_INSIDE) or TQ_PART_RIM. */
int tq_task_dslash_wilson_interior(const tq_task_options *opt, const tq_dslash_wilson_args *a, starpu_data_handle_t in,
                            starpu_data_handle_t gp, starpu_data_handle_t gq,
                            starpu_data_handle_t out, starpu_data_handle_t x, starpu_data_handle_t K,
                            const tq_epilogue_handles *e, const starpu_data_handle_t *nbr, int nnbr);
/* The exterior task; with a split epilogue (a->a.epi.kind, a->a.epi.split) also, after the
 * faces, e's w and u, a reduction scratch, the solver scalars (R) and the partial (W).
 * After an interior in place with entries (a->a.epi.entries; no faces): only e's scratch,
 * scalars (R), partial (W) and entries (R), the sum of the face sites' results the
 * interior stored. */
int tq_task_dslash_wilson_exterior(const tq_task_options *opt, const tq_dslash_wilson_face_args *a, starpu_data_handle_t in,
                            starpu_data_handle_t gp, starpu_data_handle_t gq,
                            starpu_data_handle_t out, starpu_data_handle_t x, starpu_data_handle_t K,
                            const starpu_data_handle_t *faces, int nfaces, const tq_epilogue_handles *e);
/* Clover term of one block and parity: out = K in (a->in_place: in is out), or
 * out = x + a K in (a->xpay; x another handle than out); with a->guard > 0 the solver
 * scalars (R) too, and nothing done when the guard is shut. */
int tq_task_clover(const tq_task_options *opt, const tq_clover_args *a, starpu_data_handle_t K, starpu_data_handle_t in,
                   starpu_data_handle_t out, starpu_data_handle_t x, starpu_data_handle_t scalars);
/* Clover term A and A^-1 of one block and parity (handles A, Ainv) from the local links in
 * the host API layout; status receives TQ_CLOVER_BUILD_OK or the first singular site. */
/* dst = src in dst's precision: one block and parity of a field (a sloppy operator's links). */
int tq_task_field_convert(const tq_task_options *opt, const tq_field_convert_args *a, starpu_data_handle_t src,
                          starpu_data_handle_t dst);
/* dst = uniform random reals (codelets/random_field.h): one block and parity of a field. */
struct tq_random_field_args;
int tq_task_random_field(const tq_task_options *opt, const struct tq_random_field_args *a, starpu_data_handle_t dst);
int tq_task_clover_build(const tq_task_options *opt, const tq_clover_build_args *a, starpu_data_handle_t links, starpu_data_handle_t A,
                         starpu_data_handle_t Ainv, starpu_data_handle_t status);

/* Multigrid transfer of one block (codelets/mg_transfer.c): each field given as its two
 * parity handles of the block. out = R in (fine -> coarse) or P in (coarse -> fine);
 * basis_put copies vector a->k into the basis; orthonormalise leaves in status (an int64
 * handle) the number of vectors found dependent. */
int tq_task_mg_restrict(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const fine[2],
                        starpu_data_handle_t const basis[2], starpu_data_handle_t const coarse[2]);
int tq_task_mg_prolong(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const coarse[2],
                       starpu_data_handle_t const basis[2], starpu_data_handle_t const fine[2]);
int tq_task_mg_basis_put(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const vec[2],
                         starpu_data_handle_t const basis[2]);
int tq_task_mg_orthonormalise(const tq_task_options *opt, const tq_mg_transfer_args *a, starpu_data_handle_t const basis[2],
                              starpu_data_handle_t status);

/* The multigrid Galerkin product on one block (codelets/mg_coarsen.c): pack of the basis's
 * boundary layers into faces (a->nfaces handles), and the coarse links of the block from
 * its basis, fine links and the faces read (from, a->nfaces handles; NULL when none);
 * status: the block's int64 (0, or -1: no workspace). */
int tq_task_mg_coarsen_pack(const tq_task_options *opt, const tq_mg_coarsen_args *a, starpu_data_handle_t const basis[2],
                            starpu_data_handle_t *faces);
int tq_task_mg_coarsen(const tq_task_options *opt, const tq_mg_coarsen_args *a, starpu_data_handle_t const basis[2],
                       starpu_data_handle_t const flinks[2], starpu_data_handle_t const clinks[2], starpu_data_handle_t status,
                       starpu_data_handle_t *from);
/* The Wilson-clover matrix as a stencil-form operator on one block (codelets/mg_fine_op.c):
 * X and Yf of parity a->parity (clover: NULL for Wilson), the upper layers' Yf into faces
 * (a->nfaces handles), every Yb from the Yf below (from: a->nfaces handles, NULL when none). */
int tq_task_mg_fine_local(const tq_task_options *opt, const tq_mg_fine_args *a, starpu_data_handle_t gauge,
                          starpu_data_handle_t clover, starpu_data_handle_t links);
int tq_task_mg_fine_pack(const tq_task_options *opt, const tq_mg_fine_args *a, starpu_data_handle_t const links[2],
                         starpu_data_handle_t *faces);
int tq_task_mg_fine_back(const tq_task_options *opt, const tq_mg_fine_args *a, starpu_data_handle_t const links[2],
                         starpu_data_handle_t *from);
/* The multigrid coarse operator on one block (codelets/coarse_op.c): pack of in's face
 * sites into faces[0 .. fa->a.nfaces - 1]; the interior and exterior of out (parity
 * a->parity) from in_same (the same parity, for the local term), in (the other parity),
 * the links, and for the exterior the faces read. A NULL face is a peer face, written or
 * read where fa->sync.ptr says (face_sync.h). */
int tq_task_coarse_pack(const tq_task_options *opt, const tq_coarse_face_args *fa, starpu_data_handle_t in,
                        starpu_data_handle_t *faces);
int tq_task_coarse_interior(const tq_task_options *opt, const tq_coarse_args *a, starpu_data_handle_t in_same,
                            starpu_data_handle_t in, starpu_data_handle_t links, starpu_data_handle_t out);
/* The even-odd form's links of one block and parity from its links (a->parity). */
int tq_task_coarse_hat(const tq_task_options *opt, const tq_coarse_args *a, starpu_data_handle_t links,
                       starpu_data_handle_t hat);
int tq_task_coarse_exterior(const tq_task_options *opt, const tq_coarse_face_args *fa, starpu_data_handle_t in_same,
                            starpu_data_handle_t in, starpu_data_handle_t links, starpu_data_handle_t out,
                            starpu_data_handle_t *from);

/* The improved staggered hopping term on one block (codelets/staggered.c): pack of in's
 * sites in the three layers at each split boundary into faces[0 .. fa->a.nfaces - 1]; the
 * interior and exterior of out (parity a->parity) from in (the other parity), the links of
 * out's parity, and for the exterior the faces read. A NULL face is a peer face, written or
 * read where fa->sync.ptr says (face_sync.h). */
int tq_task_ks_pack(const tq_task_options *opt, const tq_ks_face_args *fa, starpu_data_handle_t in, starpu_data_handle_t *faces);
int tq_task_ks_interior(const tq_task_options *opt, const tq_ks_args *a, starpu_data_handle_t in,
                        starpu_data_handle_t links, starpu_data_handle_t out);
int tq_task_ks_exterior(const tq_task_options *opt, const tq_ks_face_args *fa, starpu_data_handle_t in,
                        starpu_data_handle_t links, starpu_data_handle_t out, starpu_data_handle_t *from);
/* The asqtad links of one block and parity (out) from the whole lattice's thin links in the
 * host API layout (thin). */
int tq_task_ks_build(const tq_task_options *opt, const tq_ks_build_args *a, starpu_data_handle_t thin,
                     starpu_data_handle_t out);
/* HISQ's first level of the sites a->first .. a->first + a->count - 1 of the thin links
 * into w (a range of a whole-lattice array in the same layout). */
int tq_task_ks_hisq_w(const tq_task_options *opt, const tq_ks_smear_args *a, starpu_data_handle_t thin,
                      starpu_data_handle_t w);

/* One block's handles for the generator's tasks: its 8 link fields (f = 2 mu + parity); per
 * field, direction d and side the face next to it (side 0: the block below's upper layer, 1:
 * the block above's lower layer; NULL where the block grid does not cut d); per field and
 * direction nu the upper nu face of the block at +mu -nu, mu the sub-step's (the staples'
 * edges). Each task takes the ones its codelet reads (codelets/heatbath.c). */
typedef struct tq_generator_handles {
    starpu_data_handle_t own[8];
    starpu_data_handle_t face[8][4][2];
    starpu_data_handle_t edge[8][4];
} tq_generator_handles;

/* One quenched-generator sub-step on field 2 a->mu + a->parity of block h; refused the
 * block's refusal counter (codelets/heatbath.c). */
int tq_task_heatbath(const tq_task_options *opt, const tq_heatbath_args *a, const tq_generator_handles *h,
                     starpu_data_handle_t refused);
/* One block's field (parity a->parity) into its faces: per cut direction its lower and
 * upper one (the stencil layer's order). */
int tq_task_gauge_face_pack(const tq_task_options *opt, const tq_heatbath_args *a, starpu_data_handle_t field,
                            const starpu_data_handle_t *faces, int nfaces);
/* The generator's observables (codelets/gauge_measure.c): block h's plaquette sums into
 * result and its Polyakov lines into line; the lines below times this block's lines into
 * line; the lines' trace sums into result; and the reunitarisation of one block of one
 * field. */
int tq_task_gauge_measure(const tq_task_options *opt, const tq_heatbath_args *a, const tq_generator_handles *h,
                          starpu_data_handle_t result, starpu_data_handle_t line);
int tq_task_gauge_line_mul(const tq_task_options *opt, starpu_data_handle_t below, starpu_data_handle_t line);
int tq_task_gauge_line_trace(const tq_task_options *opt, starpu_data_handle_t line, starpu_data_handle_t result);
int tq_task_gauge_reunitarize(const tq_task_options *opt, starpu_data_handle_t links);

#endif
