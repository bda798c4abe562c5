/* TaskQCD: lattice QCD Dirac solvers on the StarPU task runtime.
 *
 * Public C API. Every function that can fail returns a tq_status; on failure the message
 * naming the problem is available from tq_last_error() (per thread). The library never
 * calls exit() and never leaves half-built objects behind: a failed create returns no
 * object and releases whatever it had allocated.
 *
 * Conventions at the API boundary (doc/conventions.md has the full list):
 *  - sites in lexicographic order of the global lattice, x fastest, then y, z, t;
 *  - site parity = (x + y + z + t) mod 2, even = 0;
 *  - a complex number is two doubles (re, im);
 *  - gauge links on the host: links[((site * 4 + mu) * 3 + row) * 3 + col] complex,
 *    mu = 0..3 for x, y, z, t (MILC's order);
 *  - color-spinor on the host: psi[(site * 4 + spin) * 3 + color] complex;
 *    staggered color-vector: chi[site * 3 + color] complex.
 */
#ifndef TASKQCD_H
#define TASKQCD_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TQ_VERSION_MAJOR 0
#define TQ_VERSION_MINOR 1
#define TQ_VERSION_PATCH 0

/* ---- errors ------------------------------------------------------------------------ */
typedef enum tq_status {
    TQ_SUCCESS = 0,
    TQ_ERR_INVALID_ARG = 1,     /* a parameter is out of range or inconsistent */
    TQ_ERR_NOT_INITIALIZED = 2, /* tq_init has not been called (or tq_finalize has) */
    TQ_ERR_ALREADY_INITIALIZED = 3,
    TQ_ERR_NOMEM = 4,           /* an allocation failed */
    TQ_ERR_RUNTIME = 5,         /* StarPU, MPI or CUDA reported a failure */
    TQ_ERR_IO = 6,              /* a file could not be opened, read or written */
    TQ_ERR_FORMAT = 7,          /* a file's contents do not follow its format */
    TQ_ERR_CHECKSUM = 8,        /* a file's checksum does not match its data */
    TQ_ERR_NOT_UNITARY = 9,     /* a gauge link is not in SU(3) within tolerance */
    TQ_ERR_UNSUPPORTED = 10,    /* valid request that this build cannot do */
    TQ_ERR_MISMATCH = 11,       /* fields do not match (lattice, kind, subset) */
    TQ_ERR_NOT_CONVERGED = 12,  /* a solver reached maxiter above its tolerance */
    TQ_ERR_BREAKDOWN = 13       /* a solver broke down (see tq_last_error) */
} tq_status;

/* The message of the last failure in this thread ("" if none). */
const char *tq_last_error(void);
/* A fixed short name for a status code, e.g. "TQ_ERR_CHECKSUM". */
const char *tq_status_name(tq_status s);

/* ---- runtime context ----------------------------------------------------------------- */
typedef struct tq_init_params {
    int ncpus;            /* CPU workers; -1: StarPU's default, less one core left to the application
                             thread where there are 4 or more (or STARPU_NCPU) */
    int ncuda;            /* CUDA workers (GPUs); -1: all available (or STARPU_NCUDA) */
    const char *sched;    /* StarPU scheduling policy ("dmda", "eager", ...); NULL: dmdas when
                             there are GPUs, StarPU's default (lws) otherwise (or STARPU_SCHED);
                             an unknown name here or in STARPU_SCHED: TQ_ERR_INVALID_ARG */
    int verbosity;        /* 0 quiet, 1 summary, 2 debug */
    int use_mpi;          /* -1 auto (when launched by mpirun), 0 off, 1 on */
    void *sched_policy;   /* an application's own scheduling policy: a struct
                             starpu_sched_policy * (StarPU's starpu_scheduler.h), which
                             StarPU uses instead of any named one (STARPU_SCHED too); NULL:
                             by name. Not with sched. It must wake the workers it gives a
                             task (starpu_wake_worker_relax_light): idle CPU workers sleep on
                             GPU nodes. examples/user_policy.c has one. */
    const char *task_graph;   /* write the task graph this process submits to this file at
                             tq_finalize (JSON, doc/design.md "Task-graph export"; FILE.RANK
                             under MPI); NULL: the environment's TQ_TASK_GRAPH, if set */
    const char *trace_dir;    /* a trace of the run into this folder (made if missing) at
                             tq_finalize: every task's worker and times (tasks.tsv), a Gantt
                             chart (gantt.svg), per-worker busy and idle time, per-codelet
                             times and bytes per bus (summary.txt), and the task graph
                             (graph.json, unless task_graph names another file); each with
                             .RANK under MPI (doc/design.md "Traces"). NULL: TQ_TRACE, if set */
} tq_init_params;

void tq_init_params_default(tq_init_params *p);
/* Reads --ncpus N --ncuda N --sched NAME --verbosity N --no-mpi --quiet --export-graph FILE
 * --trace DIR from argv into p, removing what it consumed (argc/argv updated); unknown
 * options are left for the caller. */
tq_status tq_init_params_from_args(tq_init_params *p, int *argc, char **argv);
tq_status tq_init(const tq_init_params *p);
tq_status tq_finalize(void);
int tq_is_initialized(void);

typedef struct tq_runtime_info {
    int ncpu_workers, ncuda_workers;
    int mpi_rank, mpi_size;     /* 0, 1 without MPI */
    int built_with_cuda, built_with_mpi;
    char sched[32];
    char starpu_version[32];
    int starpu_fxt;             /* StarPU records FxT traces (--trace also writes its Paje trace) */
} tq_runtime_info;
tq_status tq_get_runtime_info(tq_runtime_info *info);
/* Where data-parallel tasks (BLAS, stencils) may run: any worker (the scheduler decides),
 * CPU workers only, or CUDA workers only (for comparisons and benchmarks). Small
 * bookkeeping tasks, such as combining reduction partial sums, run on CPU workers. */
typedef enum tq_where { TQ_WHERE_ANY = 0, TQ_WHERE_CPU = 1, TQ_WHERE_CUDA = 2 } tq_where;
tq_status tq_set_placement(tq_where w);
tq_where tq_get_placement(void);
/* Block until every submitted task has finished. */
tq_status tq_wait_all(void);
/* Seconds on a monotonic clock (differences only); in a build on StarPU's SimGrid mode
 * (configure --with-simgrid) the simulated machine's time once tq_init has run. */
double tq_wall_time(void);
/* Every rank's verdict on a step each did alone (reading a file, checking its input):
 * collective, every rank of the running context calls it with its own status. Returns
 * TQ_SUCCESS when every rank succeeded; otherwise, on every rank, the status of the lowest
 * rank that failed, with that rank's message (tq_last_error, prefixed "rank N: "). So one
 * rank's failure stops all of them instead of leaving the others waiting in the next
 * collective step. Without MPI (or on one rank) it returns local unchanged. */
tq_status tq_status_agree(tq_status local);
/* v[0..n-1] summed over all ranks, in place, on every rank (unchanged on one rank): for
 * sums an application forms from its ranks' exported sites (a correlator's time slices). */
tq_status tq_allreduce_sum(double *v, int n);

/* ---- precision, compression ---------------------------------------------------------- */
typedef enum tq_precision { TQ_HALF = 2, TQ_SINGLE = 4, TQ_DOUBLE = 8 } tq_precision;
typedef enum tq_recon { TQ_RECON_8 = 8, TQ_RECON_12 = 12, TQ_RECON_18 = 18 } tq_recon;
const char *tq_precision_name(tq_precision p);
/* Parse "double"/"single"/"half" (also "d","s","h"); TQ_ERR_INVALID_ARG otherwise. */
tq_status tq_precision_parse(const char *s, tq_precision *out);

/* ---- lattice geometry ------------------------------------------------------------------ */
typedef struct tq_lattice tq_lattice;
typedef struct tq_lattice_params {
    int dims[4];      /* global extent in x, y, z, t (each even) */
    int procs[4];     /* MPI rank grid (x fastest); 0s: the grid of all running ranks with
                         the smallest faces (1 1 1 1 on one rank) */
    int block[4];     /* block extent, the same on every rank (a block lies in one rank);
                         0s: chosen from the worker mix. The same blocks give bitwise the same
                         results on any number of ranks. */
    int group_ranks;  /* 0: over every running rank. k > 0: the running ranks form groups of
                         k consecutive ranks (k divides their number; a split grid's
                         sub-grids), and the lattice lies over this rank's group alone: each
                         group solves its own systems on its own copy, no MPI between groups
                         for its data, its collectives stay inside the group; procs is then
                         the group's grid (0s: chosen as for all ranks). k = 1: this rank
                         alone. Collective over all ranks when 1 < k < their number. */
} tq_lattice_params;

tq_status tq_lattice_create(const tq_lattice_params *p, tq_lattice **out);
void tq_lattice_destroy(tq_lattice *lat);
typedef struct tq_lattice_info {
    int dims[4], procs[4], local[4], block[4], nblocks_dim[4];   /* nblocks_dim: on this rank */
    int nblocks;              /* blocks on this rank */
    int coords[4];            /* this rank's place in the rank grid */
    int nblocks_global;       /* blocks of the whole lattice */
    int64_t global_volume, local_volume, block_volume;
    int group_ranks, group;   /* the ranks of its group (group_ranks; the number running
                                 when it lies over all of them) and this rank's group */
} tq_lattice_info;
tq_status tq_lattice_get_info(const tq_lattice *lat, tq_lattice_info *info);
/* Block `block` of lat (numbered over the global lattice, x fastest): the rank holding it
 * and, for this rank's blocks, what runs the tasks that write it under the current
 * placement (tq_set_placement), e.g. "CUDA 0", or "any CPU worker" where no worker is
 * pinned; for another rank's block "rank R". owner may be NULL. */
tq_status tq_lattice_block_owner(const tq_lattice *lat, int block, int *rank, char *owner, size_t owner_len);
/* Peer mode for operators and solves on lat made now (doc/design.md): *ngpus GPUs of this
 * process whose faces and reductions' partial sums go from GPU to GPU through their memory,
 * ordered on the GPUs' streams; 0 where it does not apply (one GPU, CPU blocks, several
 * ranks, GPUs without peer access, more than 32 blocks, TQ_PEER=0 in the environment,
 * before tq_init). */
tq_status tq_lattice_peer_gpus(const tq_lattice *lat, int *ngpus);
/* Host arrays of nreal doubles per site, x fastest: tq_field_import/export take this rank's
 * local sites. scatter copies this rank's sites out of an array of the global lattice;
 * allgather assembles the global array from every rank's local one, on every rank
 * (collective). */
tq_status tq_lattice_scatter_sites(const tq_lattice *lat, const double *global, double *local, int nreal);
tq_status tq_lattice_allgather_sites(const tq_lattice *lat, const double *local, double *global, int nreal);
/* v[0..n-1] handed along the groups of ranks of lat (tq_lattice_params.group_ranks) in group
 * order, each adding its part with step: rank j of group 0 calls step on its own v, rank j
 * of group 1 receives that v and calls step on it, and so on; the last group's value then
 * reaches rank j of every group. For results that must not depend on how work was shared
 * out over the groups (a split grid's sources): each group adds its share to the running
 * value in the order one group alone would, so the bits are those of one group doing all
 * of it. n (this rank's reals, e.g. of its sites) is the same on rank j of every group.
 * Collective over all ranks; the status is agreed by all. A lattice over every rank: step. */
tq_status tq_lattice_groups_in_order(const tq_lattice *lat, double *v, int64_t n,
                                     tq_status (*step)(double *v, void *arg), void *arg);

/* ---- fields -------------------------------------------------------------------------- */
typedef enum tq_field_kind {
    TQ_FIELD_SPINOR = 0,      /* Wilson color-spinor: 4 spins x 3 colors */
    TQ_FIELD_STAGGERED = 1,   /* staggered color-vector: 3 colors */
    TQ_FIELD_GAUGE = 2,       /* 4 SU(3) links per site, compression 18/12/8 */
    TQ_FIELD_CLOVER = 3,      /* two 6x6 Hermitian blocks per site (72 reals) */
    TQ_FIELD_COARSE = 4       /* multigrid: ndof complex numbers per site (ndof a multiple of
                                 12), a coarse level's vectors or a level's null-vector basis */
} tq_field_kind;
typedef enum tq_subset { TQ_EVEN = 0, TQ_ODD = 1, TQ_FULL = 2 } tq_subset;

typedef struct tq_field tq_field;
typedef struct tq_field_params {
    tq_field_kind kind;
    tq_precision prec;
    tq_subset subset;         /* spinor/staggered: one parity or both; others: TQ_FULL */
    tq_recon recon;           /* gauge only; 0 means 18 */
    int ndof;                 /* coarse only: complex numbers per site; host order
                                 v[(site * ndof + d) * 2 + re/im] */
} tq_field_params;

/* The field's contents are undefined until written (tq_blas_zero, import, an operator). */
tq_status tq_field_create(tq_lattice *lat, const tq_field_params *p, tq_field **out);
void tq_field_destroy(tq_field *f);
tq_status tq_field_get_params(const tq_field *f, tq_field_params *p);
/* Reals per site as stored (24 spinor, 6 staggered, 4*recon gauge, 72 clover, 2 ndof
 * coarse). */
int tq_field_reals_per_site(const tq_field *f);
/* Bytes the field occupies in one memory (all blocks, both parities it holds). */
size_t tq_field_bytes(const tq_field *f);

/* Host arrays in the API order (see the top of this file), always double precision,
 * covering the whole local lattice; for a single-parity field only the sites of that
 * parity are read or written (the array still has local_volume sites). */
tq_status tq_field_import(tq_field *f, const double *host);
tq_status tq_field_export(const tq_field *f, double *host);

/* ---- BLAS-1 and reductions on color-spinor / color-vector fields ----------------------
 * All operands must share lattice, kind and subset; and precision, except tq_blas_copy,
 * which converts. Reductions accumulate in double and combine per-block partial sums in
 * block order, so results are bitwise reproducible for a decomposition and placement. */
typedef struct tq_complex { double re, im; } tq_complex;

tq_status tq_blas_zero(tq_field *x);
tq_status tq_blas_copy(tq_field *dst, const tq_field *src);       /* any precisions */
tq_status tq_blas_scale(double a, tq_field *x);                   /* x = a x */
tq_status tq_blas_axpy(double a, const tq_field *x, tq_field *y);  /* y = a x + y */
tq_status tq_blas_xpay(const tq_field *x, double a, tq_field *y);  /* y = x + a y */
tq_status tq_blas_axpby(double a, const tq_field *x, double b, tq_field *y);
tq_status tq_blas_caxpy(tq_complex a, const tq_field *x, tq_field *y);
tq_status tq_blas_caxpby(tq_complex a, const tq_field *x, tq_complex b, tq_field *y);
tq_status tq_blas_norm2(const tq_field *x, double *result);       /* sum |x|^2 */
tq_status tq_blas_rdot(const tq_field *x, const tq_field *y, double *result); /* Re<x,y> */
tq_status tq_blas_cdot(const tq_field *x, const tq_field *y, tq_complex *result); /* sum conj(x) y */
/* Fused kernels for Krylov solvers. Their reductions are computed from the updated values
 * in double before they are rounded to the field's storage precision. */
tq_status tq_blas_axpy_norm2(double a, const tq_field *x, tq_field *y, double *norm2_y);
/* CG: x += alpha p; r -= alpha Ap; returns |r|^2. */
tq_status tq_blas_cg_update(double alpha, const tq_field *p, const tq_field *Ap,
                            tq_field *x, tq_field *r, double *norm2_r);
/* CG: p = r + beta p. */
tq_status tq_blas_cg_direction(double beta, const tq_field *r, tq_field *p);
/* BiCGstab: x += alpha p + omega s; r = s - omega t; returns |r|^2 and <r0, r>. */
tq_status tq_blas_bicgstab_update(tq_complex alpha, tq_complex omega, const tq_field *p,
                                  const tq_field *s, const tq_field *t, const tq_field *r0,
                                  tq_field *x, tq_field *r, double *norm2_r,
                                  tq_complex *r0_dot_r);
/* BiCGstab: p = r + beta (p - omega v). */
tq_status tq_blas_bicgstab_direction(tq_complex beta, tq_complex omega, const tq_field *r,
                                     const tq_field *v, tq_field *p);
/* <x, y> and |x|^2 in one pass (BiCGstab's omega = <t,s>/<t,t>). */
tq_status tq_blas_cdot_norm2(const tq_field *x, const tq_field *y, tq_complex *dot,
                             double *norm2_x);

/* ---- host gauge fields, I/O and observables ------------------------------------------- */
typedef struct tq_host_gauge {
    int dims[4];
    double *links;            /* 4 * 18 doubles per site, API order */
} tq_host_gauge;

tq_status tq_host_gauge_alloc(tq_host_gauge *g, const int dims[4]);
void tq_host_gauge_free(tq_host_gauge *g);

typedef enum tq_gauge_format {
    TQ_FORMAT_AUTO = 0,       /* readers only: detect from the file's contents */
    TQ_FORMAT_MILC = 1,       /* MILC v5 binary (magic 20103) */
    TQ_FORMAT_SCIDAC = 2,     /* SciDAC LIME with checksum record */
    TQ_FORMAT_ILDG = 3,       /* ILDG LIME */
    TQ_FORMAT_NERSC = 4       /* NERSC archive (4D_SU3_GAUGE_3x3 or 4D_SU3_GAUGE) */
} tq_gauge_format;
const char *tq_gauge_format_name(tq_gauge_format f);
tq_status tq_gauge_format_parse(const char *s, tq_gauge_format *out);

typedef struct tq_gauge_file_info {
    tq_gauge_format format;
    int dims[4];
    int file_precision;       /* 4 or 8 bytes per real in the file */
    uint32_t checksum_a, checksum_b;   /* MILC or SciDAC checksums as stored */
    uint32_t nersc_checksum;
    int has_checksum;         /* whether the file carried one (verified if so) */
} tq_gauge_file_info;

/* Reads a gauge file into g (allocated by the call; freed by tq_host_gauge_free).
 * Verifies the format's checksum (and NERSC's recorded plaquette and link trace) and that
 * every link is in SU(3): to 1e-5 for single-precision files, 1e-12 for double. On any
 * failure g->links is NULL. info may be NULL. */
tq_status tq_gauge_read(const char *path, tq_gauge_format fmt, tq_host_gauge *g,
                        tq_gauge_file_info *info);
/* The file's format, lattice, precision and recorded checksums from its header (and its
 * size checked against them); the data are neither read nor verified. */
tq_status tq_gauge_read_info(const char *path, tq_gauge_format fmt, tq_gauge_file_info *info);
/* Reads only this rank's part of a gauge file: the local sites of lat (tq_lattice_get_info:
 * local extents at coords * local), into g (local dimensions, the layout tq_gauge_field_import
 * takes). Collective: every rank reads its sites at their offsets in the file, the
 * checksums (and NERSC's link trace and plaquette, for which each rank also reads the next
 * site in each direction) are combined over the ranks, and every rank returns the same
 * status; on one rank it reads the whole file as tq_gauge_read does. */
tq_status tq_gauge_read_local(const char *path, tq_gauge_format fmt, const tq_lattice *lat, tq_host_gauge *g,
                              tq_gauge_file_info *info);
/* Writes a gauge file of lat's lattice from every rank's part g (local dimensions):
 * collective; each rank writes its sites at their offsets in one file, which rank 0 created
 * under a temporary name and renames onto path once every rank's part is written; the
 * checksums are combined over the ranks, and every rank returns the same status. The file
 * is the one tq_gauge_write writes of the whole lattice (but for its time stamps). NERSC
 * records the plaquette before the data: its parts are gathered and rank 0 writes it. */
tq_status tq_gauge_write_local(const char *path, tq_gauge_format fmt, const tq_lattice *lat, const tq_host_gauge *g,
                               int file_precision);
/* Writes g with its format's checksum; file_precision 4 or 8 (MILC: 4 only). NERSC files
 * are written as 4D_SU3_GAUGE_3x3 (checksum over all 18 reals of each link). Atomic: the
 * data goes to a temporary file in path's directory, which is flushed to disk and renamed
 * onto path when whole, so a crash or a failed write never leaves a partial file under
 * path, and a file already there stays as it was unless the write succeeds. */
tq_status tq_gauge_write(const char *path, tq_gauge_format fmt, const tq_host_gauge *g,
                         int file_precision);

typedef struct tq_plaquette {
    double total, spatial, temporal;   /* normalised to 1 for unit links (Re Tr / 3) */
} tq_plaquette;
tq_status tq_host_gauge_plaquette(const tq_host_gauge *g, tq_plaquette *p);
/* Re Tr U / 3 averaged over all links (NERSC's link trace). */
tq_status tq_host_gauge_link_trace(const tq_host_gauge *g, double *trace);
/* Polyakov loop: Tr of the product of the time links along each spatial site's line, / 3,
 * averaged over the spatial sites (1 for unit links; gauge invariant). */
tq_status tq_host_gauge_polyakov(const tq_host_gauge *g, double *re, double *im);
/* Largest |U U^dag - 1| element and |det U - 1| over all links. */
tq_status tq_host_gauge_unitarity(const tq_host_gauge *g, double *max_deviation);
tq_status tq_host_gauge_reunitarize(tq_host_gauge *g);

tq_status tq_host_gauge_unit(tq_host_gauge *g);
/* Haar-random SU(3) links from a seed (deterministic). */
tq_status tq_host_gauge_random(tq_host_gauge *g, uint64_t seed);
/* Unit links plus noise of size epsilon, re-unitarised (paper 001 §VII). */
tq_status tq_host_gauge_weak(tq_host_gauge *g, uint64_t seed, double epsilon);
/* The sites of that weak field of the lattice global_dims that lie in the box of g->dims
 * sites starting at offset (e.g. a rank's local volume at coords[mu] * local[mu]): equal
 * to the global field's there, so each rank makes only its own part. */
tq_status tq_host_gauge_weak_part(tq_host_gauge *g, const int global_dims[4], const int offset[4], uint64_t seed,
                                  double epsilon);
/* nreal Gaussian reals (mean 0, variance 1) per site for the box of local sites starting
 * at offset of the lattice global_dims (x fastest, site by site), keyed by seed and the
 * global site: the same numbers at a site whatever the box (random sources on many ranks). */
tq_status tq_host_gaussian_sites(double *dst, int nreal, const int global_dims[4], const int local[4],
                                 const int offset[4], uint64_t seed);
/* U_mu(x) -> G(x) U_mu(x) G(x+mu)^dag with Haar-random G from seed; when transform is not
 * NULL it receives G (18 doubles per site, row-major complex). */
tq_status tq_host_gauge_transform_random(tq_host_gauge *g, uint64_t seed, double *transform);

/* ---- quenched generator (pure-gauge Wilson action) ------------------------------------- */
/* Heat-bath (Cabibbo-Marinari over SU(2) subgroups, Kennedy-Pendleton sampling) and
 * overrelaxation sweeps as task graphs on CPU workers and GPUs. The configuration depends
 * only on the start, beta, the seed and the sweeps done: not on blocks, workers or scheduler
 * (random numbers keyed by seed, global site, direction, sweep and subgroup).
 * The links lie on a lattice's blocks (tq_lattice_params: a rank grid, blocks of even
 * extents owned by GPUs or CPU workers), split in any direction; the links are the same
 * bits for any blocks and ranks, the measurements for one block decomposition on any number
 * of ranks. Under MPI import and export take either this rank's part
 * (tq_generator_local_dims) or the whole lattice on every rank (import reads its part;
 * export gathers, collective). */
typedef struct tq_generator tq_generator;
typedef struct tq_generator_params {
    double beta;          /* > 0 */
    uint64_t seed;
    int nslab;            /* blocks of whole time slices along t (each spanning its rank's
                             part in x, y, z): must divide the time extent and be a multiple
                             of the rank grid's t extent; 0: block (or the default) */
    int procs[4];         /* MPI rank grid (as tq_lattice_params; 0s: the smallest faces) */
    int block[4];         /* block extent (as tq_lattice_params; not with nslab); 0s and
                             nslab 0: blocks of whole time slices of the rank's part, one per
                             GPU when the placement (tq_set_placement) allows GPUs, otherwise
                             at least one per CPU worker (at most 16 in all) */
} tq_generator_params;
void tq_generator_params_default(tq_generator_params *p);   /* beta 6, seed 1, default blocks */
/* All dimensions even (the sweep is a checkerboard). Starts cold (unit links). */
tq_status tq_generator_create(const int dims[4], const tq_generator_params *p, tq_generator **out);
void tq_generator_destroy(tq_generator *g);
/* One heat-bath sweep, then n_overrelax overrelaxation sweeps (submitted; import, export
 * and tq_generator_refused wait for them). */
tq_status tq_generator_sweep(tq_generator *g, int n_overrelax);
tq_status tq_generator_import(tq_generator *g, const tq_host_gauge *h);   /* e.g. a hot start */
tq_status tq_generator_export(tq_generator *g, tq_host_gauge *h);
/* Links whose heat bath found no positive weight (left unchanged) so far: 0 normally. */
tq_status tq_generator_refused(tq_generator *g, uint64_t *count);
/* The average plaquette (as tq_host_gauge_plaquette) and the Polyakov loop (as
 * tq_host_gauge_polyakov, either output may be NULL) of the current links, computed by
 * tasks (one per block) where the links are; waits for those tasks. */
tq_status tq_generator_measure(tq_generator *g, tq_plaquette *plaquette, double *polyakov_re, double *polyakov_im);
/* Projects every link back to SU(3) (tq_host_gauge_reunitarize's projection), as tasks
 * (submitted, not waited for). */
tq_status tq_generator_reunitarize(tq_generator *g);
int tq_generator_slabs(const tq_generator *g);   /* its blocks over the whole lattice */
/* Its distribution: the rank grid and blocks (e.g. for tq_gauge_write_local of its parts);
 * owned by the generator. */
const tq_lattice *tq_generator_lattice(const tq_generator *g);
/* This rank's part of the lattice (the dimensions of the host field import and export take)
 * and its origin in the whole lattice (offset may be NULL): the whole lattice on one rank. */
tq_status tq_generator_local_dims(const tq_generator *g, int local[4], int offset[4]);
/* The state besides the links: the heat-bath sweeps done, which is the sweep word of the
 * random numbers (the next sweep draws those of sweep number tq_generator_sweeps). A
 * checkpoint is the exported links, stored exactly (double precision), with the dimensions,
 * beta, seed and this count: a generator created with the same dimensions, beta and seed,
 * given the links by tq_generator_import and the count by tq_generator_set_sweeps, goes on
 * bit for bit as the original would have (same placement kind: CPU and GPU arithmetic
 * differ in the last bits). The count may not exceed 2^23 (the random stream's sweep word);
 * the refusal counter (tq_generator_refused) is not part of the state. */
uint64_t tq_generator_sweeps(const tq_generator *g);   /* 0 for NULL */
tq_status tq_generator_set_sweeps(tq_generator *g, uint64_t sweeps);

/* ---- device-side gauge field ---------------------------------------------------------- */
/* Import a host gauge field into a TQ_FIELD_GAUGE field (compressing to its recon). */
tq_status tq_gauge_field_import(tq_field *f, const tq_host_gauge *g);
tq_status tq_gauge_field_export(const tq_field *f, tq_host_gauge *g);

/* ---- Wilson-type Dirac operators (doc/conventions.md) ----------------------------------
 *   D psi(x) = sum_mu [ (1 - gamma_mu) U_mu(x) psi(x+mu) + (1 + gamma_mu) U_mu(x-mu)^dag psi(x-mu) ]
 * in the DeGrand-Rossi basis, with the boundary factor bc[mu] on hops that cross the
 * lattice boundary in direction mu. Kappa normalisation: M = 1 - kappa D (Wilson);
 * the mass form (4 + m) - D/2 with kappa = 1 / (2 (4 + m)) is M / (2 kappa).
 * Wilson-clover: M = A - kappa D, A = 1 + kappa c_sw sum_{mu<nu} sigma_{mu nu} (i F_{mu nu})
 * (Hermitian, two 6x6 chiral blocks per site; doc/conventions.md).
 * Even-odd: D_pq maps parity q to parity p; the preconditioned operator on parity p is
 *   Wilson:            M_pc = 1 - kappa^2 D_pq D_qp
 *   clover symmetric:  M_pc = 1 - kappa^2 A_pp^-1 D_pq A_qq^-1 D_qp     (the default)
 *   clover asymmetric: M_pc = A_pp - kappa^2 D_pq A_qq^-1 D_qp
 * (the two forms coincide for Wilson). */
typedef enum tq_dslash_type { TQ_DSLASH_WILSON = 0, TQ_DSLASH_CLOVER = 1 } tq_dslash_type;
typedef enum tq_matpc { TQ_MATPC_SYMMETRIC = 0, TQ_MATPC_ASYMMETRIC = 1 } tq_matpc;
typedef struct tq_dirac_params {
    tq_dslash_type type;
    double kappa;            /* hopping parameter, > 0 */
    double csw;              /* clover coefficient (TQ_DSLASH_CLOVER) */
    double bc[4];            /* boundary factor per direction (+1 periodic, -1 antiperiodic);
                                all zero means {1, 1, 1, -1}: antiperiodic in time */
    tq_matpc matpc;          /* even-odd form of the clover operator */
} tq_dirac_params;
typedef struct tq_dirac tq_dirac;

/* The operator on a gauge field (kept by reference: destroy the operator first). Spinors
 * applied to it must have the gauge field's lattice and precision. */
tq_status tq_dirac_create(const tq_field *gauge, const tq_dirac_params *p, tq_dirac **out);
void tq_dirac_destroy(tq_dirac *d);
/* out = D in (dagger: D^dag) on the sites of parity `parity` (TQ_EVEN or TQ_ODD) of out,
 * reading parity 1 - parity of in. Fields may be single-parity or full. */
tq_status tq_dslash(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                    int dagger);
/* out = x + a D in on parity `parity` (x may be out itself). */
tq_status tq_dslash_xpay(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger, double a, const tq_field *x);
/* Full operator on full fields: out = M in (M^dag when dagger). */
tq_status tq_dirac_mat(const tq_dirac *d, tq_field *out, const tq_field *in, int dagger);
/* Even-odd preconditioned operator on parity `parity` (the parity of out and in):
 * out = M_pc in (M_pc^dag when dagger). */
tq_status tq_dirac_matpc(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                         int dagger);
/* out = M_pc^dag M_pc in. */
tq_status tq_dirac_matpc_dag_matpc(const tq_dirac *d, tq_field *out, const tq_field *in,
                                   tq_subset parity);
/* The hopping term of the even-odd operator, QUDA's "dslash": out = D in (dagger: D^dag)
 * for Wilson, out = A^-1 D in (dagger: A^-1 D^dag) for clover, with A^-1 of parity `parity`
 * applied in the same kernel as D. Fields as for tq_dslash. */
tq_status tq_dirac_dslash(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                          int dagger);
/* Clover operators: out = A in (inverse: A^-1 in) on parity `parity` (out may be in). */
tq_status tq_dirac_clover(const tq_dirac *d, tq_field *out, const tq_field *in, tq_subset parity,
                          int inverse);
/* Even-odd solves of M x = b on parity p: solve M_pc x_p = b_pc with b_pc from
 * tq_dirac_prepare (b full), then tq_dirac_reconstruct writes the full x (x_pc may be x). */
tq_status tq_dirac_prepare(const tq_dirac *d, tq_field *b_pc, const tq_field *b, tq_subset parity);
tq_status tq_dirac_reconstruct(const tq_dirac *d, tq_field *x, const tq_field *x_pc,
                               const tq_field *b, tq_subset parity);

/* ---- Krylov solvers (doc/solvers.md) ----------------------------------------------------
 * tq_solve solves M x = b for the full-lattice fields x and b (same lattice and precision
 * as the operator). Solve types (QUDA's names):
 *   TQ_SOLVE_DIRECT_PC  (default) M_pc x_p = b_pc on parity p = even, via tq_dirac_prepare,
 *                       then tq_dirac_reconstruct
 *   TQ_SOLVE_DIRECT     M x = b on the full lattice
 *   TQ_SOLVE_NORMOP_PC  M_pc^dag M_pc x_p = M_pc^dag b_pc
 *   TQ_SOLVE_NORMOP     M^dag M x = M^dag b
 * Inverters: CG works on a Hermitian positive operator, so with a direct solve type it runs
 * as CGNR (CG on the normal equations); CGNR and CGNE (M M^dag y = b, x = M^dag y) name the
 * normal-equation forms explicitly; BiCGstab and MR (minimal residual: x += alpha r with
 * alpha = <A r, r> / |A r|^2; for operators with a positive-definite Hermitian part, such as
 * M_pc below critical kappa; multigrid's smoother) work on the operator of the solve type,
 * and so does GCR: flexible, restarted every gcr_nkrylov directions, each new direction the
 * preconditioner applied to the residual, orthogonalised (modified Gram-Schmidt) against the
 * cycle's earlier A-images.
 * Stopping rule: the iterated residual of the system the inverter works on, relative to its
 * right-hand side, below tol, or maxiter iterations (TQ_ERR_NOT_CONVERGED). Breakdowns
 * (loss of positivity in CG, rho or omega vanishing in BiCGstab, NaN or Inf anywhere) return
 * TQ_ERR_BREAKDOWN with the iteration and the quantity in tq_last_error(). The result
 * reports the true residual |b - M x| / |b| of the full system, computed after the solve. */
typedef enum tq_inverter {
    TQ_INV_CG = 0, TQ_INV_BICGSTAB = 1, TQ_INV_CGNR = 2, TQ_INV_CGNE = 3, TQ_INV_MR = 4, TQ_INV_GCR = 5
} tq_inverter;
/* GCR's preconditioner slot: none, or a fixed number of MR iterations (in the sloppy
 * precision when there is one); multigrid will plug in here. */
typedef enum tq_precond { TQ_PRECOND_NONE = 0, TQ_PRECOND_MR = 1 } tq_precond;
typedef enum tq_solve_type {
    TQ_SOLVE_DIRECT_PC = 0, TQ_SOLVE_DIRECT = 1, TQ_SOLVE_NORMOP_PC = 2, TQ_SOLVE_NORMOP = 3
} tq_solve_type;
/* Mixed precision: the iteration runs on an operator in prec_sloppy / recon_sloppy; the
 * solution and the true residual are kept in the operator's precision by reliable updates
 * (paper 004, Algorithm 2: when |r| falls below reliable_delta times its largest value since
 * the last update) or by defect correction (Algorithm 1: the inner solve restarts each time
 * the residual fell by reliable_delta). */
typedef enum tq_mixed { TQ_MIXED_RELIABLE = 0, TQ_MIXED_DEFECT = 1 } tq_mixed;
typedef struct tq_solver_params {
    tq_inverter inverter;
    tq_solve_type solve_type;
    double tol;              /* relative residual, > 0 and < 1 */
    int maxiter;             /* > 0 */
    tq_precision prec_sloppy;   /* 0: the operator's precision (no mixed precision) */
    tq_recon recon_sloppy;      /* 0: the operator's gauge compression */
    double reliable_delta;      /* 0: 0.1 */
    tq_mixed mixed;
    int verbosity;           /* 0 quiet, 1 summary line, 2 residual every iteration */
    int gcr_nkrylov;         /* GCR: directions per restart cycle, 1..10 (0: 8) */
    tq_precond precond;      /* GCR's preconditioner */
    int precond_iters;       /* iterations of the MR preconditioner (0: 4) */
} tq_solver_params;
/* inverter CG, solve type direct-pc, tol 1e-10, maxiter 10000, no mixed precision
 * (reliable updates with delta 0.1 when prec_sloppy is set), verbosity 0 */
void tq_solver_params_default(tq_solver_params *p);
typedef struct tq_solver_result {
    int iterations;
    int reliable_updates;    /* mixed precision: updates (or defect-correction restarts) done */
    double residual;         /* iterated relative residual at the end */
    double true_residual;    /* |b - M x| / |b| on the full lattice */
    double seconds;          /* time to solution: from the source's preparation to the solution
                                (the operator's set-up and the true residual excluded) */
    double flops;            /* operator and BLAS flops of the solve, counted as QUDA does */
    double iter_seconds;     /* the inverter's iterations alone (what QUDA times as its solver:
                                work fields' set-up, preparation and reconstruction excluded) */
    double iter_flops;       /* the flops of those iterations (reliable updates included) */
} tq_solver_result;
tq_status tq_solve(const tq_dirac *d, tq_field *x, const tq_field *b, const tq_solver_params *p,
                   tq_solver_result *result);
/* n systems M x[i] = b[i] solved together: their iterations are submitted side by side, so
 * the scheduler fills every worker; results[i] for each. Returns the first error (with the
 * system's index in the message); systems without an error are solved regardless. */
tq_status tq_solve_many(const tq_dirac *d, int n, tq_field *const *x, const tq_field *const *b,
                        const tq_solver_params *p, tq_solver_result *results);
/* Multi-shift CG: (A + shifts[i]) x[i] = b for every i in one Krylov space, with A =
 * M_pc^dag M_pc (solve type normop-pc: b and x[i] even-parity fields) or M^dag M (normop:
 * full fields); shifts finite and >= 0. Each system stops when its own residual (a multiple
 * of the base one) is below tol and drops out; results[i].true_residual is recomputed
 * from x[i]. Uniform precision (no sloppy operator) in this version. */
tq_status tq_solve_multishift(const tq_dirac *d, int nshift, const double *shifts, tq_field *const *x,
                              const tq_field *b, const tq_solver_params *p, tq_solver_result *results);
/* ---- adaptive aggregation multigrid (paper 000) -------------------------------------------
 * Level 0 is the fine lattice; level l + 1 is made from level l by aggregates of block[l]
 * sites and nvec[l] null vectors (2 nvec[l] complex degrees of freedom per coarse site: the
 * two chiralities apart; nvec a multiple of 6). */
#define TQ_MG_MAX_LEVELS 4
#define TQ_MG_MAX_NVEC 64
typedef struct tq_mg_params {
    int levels;                               /* 2 .. TQ_MG_MAX_LEVELS */
    int block[TQ_MG_MAX_LEVELS - 1][4];       /* aggregate extents from level l to l + 1 */
    int nvec[TQ_MG_MAX_LEVELS - 1];           /* null vectors of level l (1 .. TQ_MG_MAX_NVEC) */
    int pre_steps[TQ_MG_MAX_LEVELS - 1];      /* MR smoother steps before the coarse correction */
    int post_steps[TQ_MG_MAX_LEVELS - 1];     /* and after it (default 0 before, 8 after) */
    double setup_tol[TQ_MG_MAX_LEVELS - 1];   /* level l's null-vector solves of F x = 0: relative
                                                 tolerance (default 5e-6) */
    int setup_iters[TQ_MG_MAX_LEVELS - 1];    /* and their iteration limit (default 200) */
    double coarse_tol;                        /* a coarse level's GCR: relative tolerance */
    int coarse_maxiter;                       /* and its iteration limit */
    tq_precision smoother_prec, nullvec_prec; /* storage of smoother and null vectors */
    int verbosity;                            /* 0 silent, 1 summary, 2 also each set-up stage */
    int coarsest_eo;                          /* 1: the coarsest level's solves on its even-odd
                                                 Schur complement (default); 0: on D_c itself */
    int smoother_eo;                          /* 1: every level's MR smoother on its even-odd Schur
                                                 complement (red-black, default); 0: on the level's
                                                 operator itself */
    tq_precision coarse_prec;                 /* the coarse levels' links, vectors, smoothers and
                                                 solves: TQ_SINGLE (paper 000, default), TQ_DOUBLE
                                                 or TQ_HALF (links half, a norm per 12 complex;
                                                 vectors single) */
    tq_where where[TQ_MG_MAX_LEVELS];         /* where level l's work runs: TQ_WHERE_ANY (default)
                                                 the blocks' owners as for the operator (GPUs where
                                                 there are), TQ_WHERE_CPU CPU workers, TQ_WHERE_CUDA
                                                 GPUs; level 0 must be ANY (it is the operator's) */
    tq_inverter setup_inverter;               /* the null-vector solves: TQ_INV_BICGSTAB (paper 000,
                                                 default) or TQ_INV_GCR */
    int solves_at_once;                       /* tq_multigrid_solve_many: systems solved side by side
                                                 (1 .. TQ_MG_MAX_SOLVES_AT_ONCE; default 4; fewer
                                                 where they would not fit a GPU's memory) */
} tq_mg_params;
#define TQ_MG_MAX_SOLVES_AT_ONCE 16
/* Paper 000's parameters: 3 levels, aggregates 4^4 then 2^4, 24 null vectors per level,
 * 8 MR steps (after the coarse correction; paper 000: 4 + 4), half-precision smoother and
 * null vectors, setup to 5e-6 in at most 200 iterations (paper 000: 500), coarse solves to
 * 0.25 in at most 10, the coarsest level solved and every level
 * smoothed even-odd, the coarse levels in single precision; BiCGstab for the null
 * vectors; 4 solves at once. */
void tq_mg_params_default(tq_mg_params *p);
/* The multigrid set-up for the operator d (Wilson or clover, double precision): per level l
 * below the coarsest, nvec[l] null vectors (random vectors v0, each with F e = F v0 solved
 * by setup_inverter to setup_tol[l] or setup_iters[l]; v = v0 - e, the error the solver leaves: near the null
 * space of F), all of a level's solves submitted together as independent task graphs; the
 * block-orthonormal basis and the Galerkin operator of level l + 1 (from the fine level in
 * stencil form on level 0); the cycles' work fields. With three or more levels the cycle is
 * a K-cycle: each coarse solve (GCR to coarse_tol or coarse_maxiter) is preconditioned by
 * the next level's cycle; the coarsest level is solved by plain GCR. One set-up serves any
 * number of solves with d (a propagator's sources). Built so far: 2 to TQ_MG_MAX_LEVELS
 * levels; the outer GCR in the operator's double precision, the fine level's cycle in
 * smoother_prec (a copy of the operator in it), the bases in nullvec_prec, the coarse
 * levels in coarse_prec; the blocks' owners run the multigrid tasks, GPUs
 * included, except the coarsest level's even-odd form (CPU workers: at least one is needed);
 * parameters that do not fit the
 * lattice TQ_ERR_INVALID_ARG naming the level and the mismatch. seed: the random start
 * vectors (same seed, same set-up). */
typedef struct tq_multigrid tq_multigrid;
tq_status tq_multigrid_create(const tq_dirac *d, const tq_mg_params *p, uint64_t seed, tq_multigrid **out);
void tq_multigrid_destroy(tq_multigrid *mg);
/* M x = b for full spinor fields x, b of the operator's lattice and precision: flexible GCR
 * (p's tol, maxiter and gcr_nkrylov; p's inverter must be GCR) preconditioned by the
 * multigrid cycle; result as tq_solve's (true residual of M, on the full lattice). With
 * p->prec_sloppy (and recon_sloppy) GCR iterates on a sloppy copy of the operator (made at
 * the first such solve, kept with it) with reliable updates (p->delta) in the operator's
 * precision; 0 or the operator's precision: GCR in that precision. */
tq_status tq_multigrid_solve(tq_multigrid *mg, tq_field *x, const tq_field *b, const tq_solver_params *p,
                             tq_solver_result *result);
/* Makes now what solves with p will need beyond the set-up (the outer GCR's sloppy copy of
 * the operator: a few tenths of a second at 32^4), so that the first solve does not pay for
 * it. Optional. */
tq_status tq_multigrid_prepare(tq_multigrid *mg, const tq_solver_params *p);
/* The n systems M x[i] = b[i] (a propagator's sources) with one set-up: up to solves_at_once
 * of them side by side, each on its own host thread with its own cycle work fields and
 * operator work copies (made at the first call, kept with the set-up), so that one system's
 * coarse solve, waiting for its scalars, overlaps another's tasks; on several ranks one
 * after another. Each result as tq_multigrid_solve's, its solution the same to the bit.
 * Returns the first failing system's status (its message names the system); the others
 * are solved all the same. */
tq_status tq_multigrid_solve_many(tq_multigrid *mg, int n, tq_field *const *x, const tq_field *const *b,
                                  const tq_solver_params *p, tq_solver_result *results);
/* Saves the set-up (its basis and coarse operator: what the null-vector solves and the
 * Galerkin product made) to path, with the lattice, the aggregates, the null vectors, the
 * operator's kind, kappa, c_sw and boundary factors and a fingerprint of its gauge field
 * (doc/solvers.md, "Saving a set-up"). Collective across ranks; rank 0 writes, into a
 * temporary file renamed onto path when whole (a failed save leaves nothing under path). */
tq_status tq_multigrid_save(const tq_multigrid *mg, const char *path);
/* The set-up for d and p read from path instead of made (no set-up solves): the file must
 * have been saved for the same lattice, levels, aggregates and null vectors, and for an
 * operator of the same kind, kappa, c_sw, boundary factors and gauge field
 * (TQ_ERR_MISMATCH naming the difference otherwise; TQ_ERR_IO, TQ_ERR_FORMAT for an
 * unreadable, truncated or damaged file). Solves then go as with the saved set-up, to the
 * bit on the same blocks. Any rank grid and block decomposition may read it. */
tq_status tq_multigrid_load(const tq_dirac *d, const tq_mg_params *p, const char *path, tq_multigrid **out);
/* Null vectors' set-up solves: iterations summed and the set-up's wall time (s). */
typedef struct tq_multigrid_info {
    int levels, nvec, coarse_dims[4];   /* nvec of level 0; coarse_dims: level 1's lattice */
    long setup_iterations;              /* every level's set-up solves */
    double setup_seconds;
    long coarse_iterations;   /* level 1's solves' iterations, summed over every solve so far */
    int level_dims[TQ_MG_MAX_LEVELS][4];        /* each level's lattice (0: the operator's) */
    char level_where[TQ_MG_MAX_LEVELS][40];     /* who runs its work on this rank: its blocks' owners
                                                   ("CUDA 0", "any CPU worker", ...), joined by '+' */
    long level_iterations[TQ_MG_MAX_LEVELS];    /* GCR iterations of level l's solves so far (0: the outer ones) */
} tq_multigrid_info;
tq_status tq_multigrid_get_info(const tq_multigrid *mg, tq_multigrid_info *info);

/* ---- improved staggered fermions (asqtad, HISQ; issue 36, in progress) -------------------
 * MILC's conventions (doc/conventions.md): M = 2m + D, D the hopping term of the fat
 * (one-hop) and Naik (three-hop) links with the staggered phases eta_mu(x) and the boundary
 * factors folded in; D is anti-Hermitian. Fields: TQ_FIELD_STAGGERED (3 colors per site) of
 * the operator's lattice and precision, on any rank grid (results bitwise the same for the
 * same blocks); a block extent in a split direction must be at least 3 (the Naik term's
 * reach). The operator's tasks run on each block's owner (a GPU where there is one), as
 * the Wilson-type operators' do. */
typedef struct tq_ks_op tq_staggered;
/* From thin links without phases (72 doubles per site, the API's layout, the whole
 * lattice on every rank: the paths around a rank's sites reach its neighbours'): asqtad
 * fat and long links with MILC's coefficients, tadpole factor u0 (> 0;
 * e.g. the fourth root of the plaquette), boundary factors bc (NULL: {1, 1, 1, -1},
 * antiperiodic in time), built by tasks on the blocks' owners. */
tq_status tq_staggered_create_asqtad(tq_lattice *lat, const double *thin, double u0, const double bc[4], tq_precision prec,
                                     tq_staggered **out);
/* HISQ from thin links without phases (as above): fat7 links projected onto U(3), then
 * their asqtad-like smearing with the Lepage term doubled and no tadpole factor, and the
 * Naik links of the projected links; eps the Naik epsilon of heavy quarks (|eps| < 1, 0
 * for light quarks: the one-link coefficient 1 + eps/8, the Naik one -(1 + eps)/24). */
tq_status tq_staggered_create_hisq(tq_lattice *lat, const double *thin, double eps, const double bc[4], tq_precision prec,
                                   tq_staggered **out);
/* From precomputed fat and long links, phases and boundary factors included (72 doubles
 * per site each, the API's layout): one rank only so far (TQ_ERR_UNSUPPORTED otherwise). */
tq_status tq_staggered_create(tq_lattice *lat, const double *fat, const double *lng, tq_precision prec,
                              tq_staggered **out);
void tq_staggered_destroy(tq_staggered *op);
/* out = D in on full fields (out and in distinct). */
tq_status tq_staggered_dslash(const tq_staggered *op, tq_field *out, const tq_field *in);
/* M x = b for mass m > 0 on full fields: CG on the even sites' Schur complement
 * (4m^2 - D_eo D_oe) x_e = 2m b_e - D_eo b_o to p->tol, x_o reconstructed (p->inverter must
 * be TQ_INV_CG). With p->prec_sloppy (other than the operator's precision) the iterations
 * run in that precision with reliable updates (p->reliable_delta) on the operator's. result
 * as tq_solve's: the true residual |b - M x| / |b| on the full lattice; flops counted as
 * QUDA does (1146 per site and D). */
tq_status tq_staggered_solve(const tq_staggered *op, double mass, tq_field *x, const tq_field *b,
                             const tq_solver_params *p, tq_solver_result *result);
/* M x[i] = b for n masses at once (multi-shift CG on the smallest mass's even-odd system,
 * each mass dropping out at its tolerance), b's odd sites zero (a source on even sites, as
 * MILC's multi-mass inverter takes): x[i] full fields, results[i] as tq_staggered_solve's.
 * A b with nonzero odd sites is refused. With p->prec_sloppy, as paper 002: the multi-shift
 * CG in the sloppy precision (to 1e-5 in single, 5e-3 in half, or tol if looser), then each
 * mass refined by mixed CG on its residual; results[i].iterations counts both. */
tq_status tq_staggered_solve_multishift(const tq_staggered *op, int n, const double *masses, tq_field *const *x,
                                        const tq_field *b, const tq_solver_params *p, tq_solver_result *results);

const char *tq_inverter_name(tq_inverter inv);
tq_status tq_inverter_parse(const char *s, tq_inverter *out);
const char *tq_solve_type_name(tq_solve_type t);
tq_status tq_solve_type_parse(const char *s, tq_solve_type *out);

#ifdef __cplusplus
}
#endif
#endif
