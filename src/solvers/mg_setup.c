/* Multigrid for users (issue 28): the set-up of tq_multigrid_create (per level: null vectors
 * from independent solves submitted together, the transfer, the Galerkin coarse operator of
 * the next level; the cycles). The fine level's solves, smoother and residuals apply
 * the Wilson-clover operator itself (tq_dirac_mat: 12 complex per site and 8 links read per
 * application, where the stencil form reads 9 dense 12x12 blocks, 20 KiB a site); the
 * stencil form is made for the first Galerkin product only and freed after it. Each coarse
 * level l makes level l + 1 the same way from its own operator, and with three or more
 * levels the cycles nest as a K-cycle: level l's coarse solve is flexible GCR on level l + 1
 * preconditioned by level l + 1's cycle; the coarsest level is solved by plain GCR (the
 * solves themselves: src/solvers/mg_solve_sources.c); saving and loading a set-up. The
 * outer solve on the fine level on double fields (iterating in the solve's prec_sloppy
 * where given: mg_solve_sources.c), its cycle and set-up solves in smoother_prec
 * (the set-up's with reliable updates), the coarse levels in coarse_prec (links and
 * vectors; half links with single vectors). May call: src/core, src/blas, src/dirac and the
 * solvers' frame. */
#include "solvers/mg_multigrid.h"
#include "solvers/solver_internal.h"
#include "io/gauge_io_internal.h"   /* atomic file writes, exact reads */
#include "core/placement.h"           /* levels placed apart */
#include "core/rng.h"                 /* the start vectors' stream */
#include "dirac/dirac_internal.h"       /* the fine smoother's lower-precision operator */

#include <errno.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tq_mg_slot_destroy(mg_slot *S)
{
    for (int l = 0; l < MG_MAX_TRANSFERS; l++) tq_mg_two_level_destroy(S->cycle[l]);
    tq_field_destroy(S->w);
    tq_field_destroy(S->rs);
    tq_field_destroy(S->zs);
    for (int i = 0; i < MG_MAX_SLOPPY; i++) tq_dirac_destroy(S->sloppy[i]);
    if (S->copies) {
        for (int l = 0; l < TQ_MG_MAX_LEVELS; l++) tq_mg_coarse_op_destroy((tq_mg_coarse_op *)S->op[l]);
        if (S->fine_d != S->outer_d) tq_dirac_destroy((tq_dirac *)S->fine_d);
        tq_dirac_destroy((tq_dirac *)S->outer_d);
    }
    memset(S, 0, sizeof *S);
}

void tq_multigrid_destroy(tq_multigrid *mg)
{
    if (!mg) return;
    for (int i = MG_MAX_SLOTS - 1; i >= 0; i--) tq_mg_slot_destroy(&mg->slot[i]);
    pthread_mutex_destroy(&mg->lock);
    tq_dirac_destroy(mg->smooth_d);
    for (int i = 0; i < MG_MAX_SLOPPY; i++) tq_dirac_destroy(mg->outer_sloppy[i]);
    for (int l = 0; l < TQ_MG_MAX_LEVELS; l++) tq_mg_coarse_op_destroy(mg->op[l]);
    /* the coarsest first: transfer l + 1's basis lives on transfer l's coarse lattice */
    for (int l = MG_MAX_TRANSFERS - 1; l >= 0; l--) tq_mg_transfer_destroy(mg->t[l]);
    free(mg);
}

/* The coarse levels' links while the set-up makes them, and the levels' vectors: half
 * precision means half links (converted once made: finish_setup) with single vectors (a
 * hop reads the links, n^2 complex per matrix, and a vector n; single vectors keep the
 * kernel a thread per row and matrix). */
static tq_precision coarse_made_prec(const tq_mg_params *p) { return p->coarse_prec == TQ_HALF ? TQ_SINGLE : p->coarse_prec; }

/* Complex degrees of freedom per site of level l's vectors. */
static int level_ndof(const tq_multigrid *mg, int l) { return l == 0 ? 12 : 2 * mg->p.nvec[l - 1]; }

/* f = start vector k of level l: uniform random reals in (-1, 1) keyed by the seed, the
 * level, k and the global site, made where f's blocks live (tq_internal_field_random), so
 * the same on every device, rank grid and block decomposition. They were Gaussian numbers
 * made on the host and imported until 2026-11-30: 48 of them took 2.3 s of a 7.6 s 32^4
 * set-up on an H200, the GPU idle meanwhile. */
static tq_status random_vector(tq_field *f, uint64_t seed, int l, int k)
{
    const uint64_t key = seed * 0x9e3779b97f4a7c15ull + 0x6a09e667f3bcc909ull * (uint64_t)(k + 1) +
                         0xbb67ae8584caa73bull * (uint64_t)l;
    return tq_internal_field_random(f, key, TQ_RNG_STREAM_UNIFORM_SITES);
}

/* v = F u on level l (d's M on level 0, the coarse operator above). */
static tq_status level_apply(const tq_multigrid *mg, int l, tq_field *v, const tq_field *u)
{
    return l == 0 ? tq_dirac_mat(mg->d, v, u, 0) : tq_mg_coarse_apply(mg->op[l], v, u);
}

/* The null vectors of level l: v_k = v0_k - e_k with F e_k = F v0_k solved loosely
 * (setup_inverter to setup_tol[l] or setup_iters[l]: what the solver leaves of v0 is the error it
 * reduces least, near F's null space), all nvec[l] solves side by side. */
static tq_status null_vectors(tq_multigrid *mg, int l, uint64_t seed, tq_field **v, tq_field **e)
{
    const int nvec = mg->p.nvec[l];
    tq_status *status = calloc((size_t)nvec, sizeof *status);
    tq_krylov_out *out = calloc((size_t)nvec, sizeof *out);
    tq_status st = status && out ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "tq_multigrid_create: out of memory");
    /* v_k holds F v0_k (the right-hand side) first */
    for (int k = 0; k < nvec && st == TQ_SUCCESS; k++) {
        st = random_vector(e[k], seed, l, k);
        if (st == TQ_SUCCESS) st = level_apply(mg, l, v[k], e[k]);
    }
    tq_solver_params sp;
    tq_solver_params_default(&sp);
    sp.inverter = mg->p.setup_inverter;
    sp.tol = mg->p.setup_tol[l];
    sp.maxiter = mg->p.setup_iters[l];
    /* on the fine level, iterations in the smoother's precision with reliable updates (as
     * paper 000's set-up in half), on the even-odd system (the default solve type): its
     * iterations are fused and chained on a GPU, and the full e is reconstructed from the
     * odd sites' */
    if (l == 0 && mg->p.smoother_prec != TQ_DOUBLE) sp.prec_sloppy = mg->p.smoother_prec;
    if (st == TQ_SUCCESS)
        st = l == 0 ? tq_mg_fine_solve_many(mg->d, nvec, e, (const tq_field *const *)v, &sp, status, out)
                    : tq_mg_level_solve_many(mg->op[l], nvec, e, (const tq_field *const *)v, &sp, status, out);
    for (int k = 0; k < nvec && st == TQ_SUCCESS; k++) {
        if (status[k] != TQ_SUCCESS && status[k] != TQ_ERR_NOT_CONVERGED)
            st = tq_error(status[k], "tq_multigrid_create: level %d null vector %d's set-up solve failed", l, k);
        mg->setup_iterations += out[k].iterations;
    }
    /* v_k = v0_k - e_k */
    for (int k = 0; k < nvec && st == TQ_SUCCESS; k++) {
        st = random_vector(v[k], seed, l, k);
        if (st == TQ_SUCCESS) st = tq_blas_axpy(-1.0, e[k], v[k]);
    }
    free(status);
    free(out);
    return st;
}

static tq_status check_params(const char *who, const tq_dirac *d, const tq_mg_params *p, tq_multigrid *mg)
{
    const tq_field *g = tq_internal_dirac_gauge(d);
    int coarse_block[TQ_MG_MAX_LEVELS][4];
    TQ_CHECK(tq_mg_geometry(who, p, g->lat, mg->dims, coarse_block));
    const tq_precision pr[2] = {p->smoother_prec, p->nullvec_prec};
    for (int i = 0; i < 2; i++)
        if (pr[i] != TQ_DOUBLE && pr[i] != TQ_SINGLE && pr[i] != TQ_HALF)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: %s precision %d: double, single or half", who,
                            i ? "null-vector" : "smoother", (int)pr[i]);
    if (starpu_cpu_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: no CPU worker: the multigrid codelets run on CPU workers so far", who);
    if (g->p.prec != TQ_DOUBLE)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: the operator is in %s; multigrid works on a double-precision operator "
                        "so far", who, tq_precision_name(g->p.prec));
    for (int l = 0; l + 1 < p->levels; l++)
        if (p->nvec[l] % 6)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: %d null vectors on level %d: a multiple of 6 (two chiralities of "
                            "complex rows of 12)", who, p->nvec[l], l);
    return TQ_SUCCESS;
}

/* Progress of a long set-up (verbosity 2): the stage done and the time since t0. */
static void setup_progress(const tq_multigrid *mg, const char *stage, double t0)
{
    if (mg->p.verbosity >= 2 && tq_internal_mpi_rank() == 0)
        fprintf(stderr, "taskqcd: multigrid set-up: %s done, %.3f s\n", stage, tq_internal_now() - t0);
}

/* Each level's transfer to the next and the next level's operator, empty (to be made, or
 * read from a file). */
static tq_status create_levels(const char *who, tq_multigrid *mg)
{
    tq_lattice *lat = mg->lat;
    for (int l = 0; l + 1 < mg->p.levels; l++) {
        const int nvec = mg->p.nvec[l];
        TQ_CHECK(tq_mg_transfer_create(who, lat, level_ndof(mg, l), mg->p.block[l], nvec, mg->p.nullvec_prec, &mg->t[l]));
        lat = mg->t[l]->coarse;
        char what[96];
        snprintf(what, sizeof what, "%s: level %d", who, l + 1);
        TQ_CHECK(tq_internal_lattice_set_placement(lat, mg->p.where[l + 1], what));
        TQ_CHECK(tq_mg_coarse_op_create(who, lat, 2 * nvec, coarse_made_prec(&mg->p), coarse_made_prec(&mg->p), &mg->op[l + 1]));
    }
    return TQ_SUCCESS;
}

/* Slot S's cycles (the coarsest first: each preconditions the coarse solve of the one
 * above) and work fields; copies: on work copies of the operators (a slot past the first). */
tq_status tq_mg_slot_build(tq_multigrid *mg, mg_slot *S, int copies)
{
    const tq_mg_params *p = &mg->p;
    tq_solver_params cp;
    tq_solver_params_default(&cp);
    cp.inverter = TQ_INV_GCR;
    cp.tol = p->coarse_tol;
    cp.maxiter = p->coarse_maxiter;
    S->copies = copies;
    const tq_dirac *fine = mg->smooth_d ? mg->smooth_d : mg->d;
    if (copies) {
        TQ_CHECK(tq_internal_dirac_work(mg->d, (tq_dirac **)&S->outer_d));
        if (mg->smooth_d) TQ_CHECK(tq_internal_dirac_work(mg->smooth_d, (tq_dirac **)&S->fine_d));
        else S->fine_d = S->outer_d;
        for (int l = 1; l < p->levels; l++) TQ_CHECK(tq_mg_coarse_op_work(mg->op[l], (tq_mg_coarse_op **)&S->op[l]));
    } else {
        S->outer_d = mg->d;
        S->fine_d = fine;
        for (int l = 1; l < p->levels; l++) S->op[l] = mg->op[l];
    }
    /* the fine level's cycle in smoother_prec: the outer GCR's vectors converted in and out
     * (outer_precond) */
    if (mg->smooth_d) {
        const tq_field_params sp = {TQ_FIELD_SPINOR, p->smoother_prec, TQ_FULL, (tq_recon)0, 0};
        TQ_CHECK(tq_field_create(mg->lat, &sp, &S->rs));
        TQ_CHECK(tq_field_create(mg->lat, &sp, &S->zs));
    }
    for (int l = p->levels - 2; l >= 0; l--) {
        if (l == 0)
            TQ_CHECK(tq_mg_two_level_create_dirac(S->fine_d, mg->t[0], S->op[1], p->pre_steps[0], p->post_steps[0], &cp,
                                                  &S->cycle[0]));
        else
            TQ_CHECK(tq_mg_two_level_create(S->op[l], mg->t[l], S->op[l + 1], p->pre_steps[l], p->post_steps[l], &cp,
                                            &S->cycle[l]));
        if (l + 2 < p->levels)
            TQ_CHECK(tq_mg_two_level_set_coarse_preconditioner(S->cycle[l], tq_mg_two_level_apply, S->cycle[l + 1]));
        else if (p->coarsest_eo)
            TQ_CHECK(tq_mg_two_level_set_coarse_eo(S->cycle[l]));
        if (p->smoother_eo) TQ_CHECK(tq_mg_two_level_set_smoother_eo(S->cycle[l]));
    }
    const tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0};
    return tq_field_create(mg->lat, &fp, &S->w);
}

/* The fine level's cycle operator and slot 0 on a set-up's transfers and coarse operators
 * (made, or read from a file), once every task before has run. */
static tq_status finish_setup(tq_multigrid *mg)
{
    const tq_mg_params *p = &mg->p;
    if (p->coarse_prec == TQ_HALF)
        for (int l = 1; l < p->levels; l++) {
            /* the even-odd links the cycles will use, made from single links first */
            if (l + 1 < p->levels ? p->smoother_eo : p->coarsest_eo) TQ_CHECK(tq_mg_coarse_op_prepare_eo(mg->op[l]));
            TQ_CHECK(tq_mg_coarse_op_store_half(mg->op[l]));
        }
    if (p->smoother_prec != TQ_DOUBLE) {
        const tq_field *g = tq_internal_dirac_gauge(mg->d);
        TQ_CHECK(tq_internal_dirac_sloppy(mg->d, p->smoother_prec, g->p.recon, &mg->smooth_d));
    }
    TQ_CHECK(tq_mg_slot_build(mg, &mg->slot[0], 0));
    mg->nslots = 1;
    return tq_wait_all();
}

/* The dimensions of every level after the first, for messages ("4x4x4x4, 2x2x2x2"). */
static const char *coarse_lattices(const tq_multigrid *mg, char *buf, size_t size)
{
    size_t used = 0;
    buf[0] = 0;
    for (int l = 1; l < mg->p.levels && used < size; l++) {
        const int *c = mg->dims[l];
        const int n = snprintf(buf + used, size - used, "%s%dx%dx%dx%d", l > 1 ? ", " : "", c[0], c[1], c[2], c[3]);
        if (n < 0) break;
        used += (size_t)n;
    }
    return buf;
}

/* Level l's null vectors, its transfer's basis and level l + 1's operator (the Galerkin
 * product R F P: from the fine level in stencil form, made for it alone, on level 0; from
 * level l's own operator above). */
static tq_status setup_level(const char *who, tq_multigrid *mg, int l, uint64_t seed, double t0)
{
    const int nvec = mg->p.nvec[l];
    tq_lattice *lat = mg->t[l]->fine;
    tq_field **v = calloc((size_t)(2 * nvec), sizeof *v);
    tq_status st = v ? TQ_SUCCESS : tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    const tq_field_params fp = l == 0 ? (tq_field_params){TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, (tq_recon)0, 0}
                                      : (tq_field_params){TQ_FIELD_COARSE, mg->op[l]->vec_prec, TQ_FULL, (tq_recon)0,
                                                          level_ndof(mg, l)};
    for (int k = 0; k < 2 * nvec && st == TQ_SUCCESS; k++) st = tq_field_create(lat, &fp, &v[k]);
    const long before = mg->setup_iterations;
    if (st == TQ_SUCCESS) st = null_vectors(mg, l, seed, v, v + nvec);
    char stage[96];
    snprintf(stage, sizeof stage, "level %d null vectors (%ld %s iterations)", l, mg->setup_iterations - before,
             tq_inverter_name(mg->p.setup_inverter));
    setup_progress(mg, stage, t0);
    if (st == TQ_SUCCESS) st = tq_mg_transfer_set_basis(mg->t[l], v);
    snprintf(stage, sizeof stage, "level %d block orthonormalised basis", l);
    setup_progress(mg, stage, t0);
    for (int k = 0; v && k < 2 * nvec; k++) tq_field_destroy(v[k]);
    free(v);
    tq_mg_coarse_op *fine = l > 0 ? mg->op[l] : NULL;
    if (l == 0 && st == TQ_SUCCESS) {
        st = tq_mg_fine_op_create(who, mg->d, TQ_DOUBLE, TQ_DOUBLE, &fine);
        if (st == TQ_SUCCESS) st = tq_wait_all();
        setup_progress(mg, "the fine operator's stencil form", t0);
    }
    if (st == TQ_SUCCESS) st = tq_mg_coarsen(fine, mg->t[l], mg->op[l + 1]);
    snprintf(stage, sizeof stage, "level %d Galerkin operator", l + 1);
    setup_progress(mg, stage, t0);
    if (l == 0) tq_mg_coarse_op_destroy(fine);
    return st;
}

tq_status tq_multigrid_create(const tq_dirac *d, const tq_mg_params *p, uint64_t seed, tq_multigrid **out)
{
    const char *who = "tq_multigrid_create";
    if (!out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL result pointer", who);
    *out = NULL;
    if (!d || !p) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator or parameters", who);
    tq_multigrid *mg = calloc(1, sizeof *mg);
    if (!mg) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    pthread_mutex_init(&mg->lock, NULL);
    mg->p = *p;
    mg->d = d;
    mg->lat = tq_internal_dirac_gauge(d)->lat;
    tq_status st = check_params(who, d, p, mg);
    const double t0 = tq_internal_now();
    if (st == TQ_SUCCESS) st = create_levels(who, mg);
    for (int l = 0; l + 1 < p->levels && st == TQ_SUCCESS; l++)
        st = setup_level(who, mg, l, seed, t0);
    if (st == TQ_SUCCESS) st = finish_setup(mg);
    if (st != TQ_SUCCESS) {
        tq_multigrid_destroy(mg);
        return st;
    }
    mg->setup_seconds = tq_internal_now() - t0;
    char lattices[160];
    if (p->verbosity >= 1 && tq_internal_mpi_rank() == 0)
        fprintf(stderr, "taskqcd: multigrid set-up: %d levels, coarse lattices %s, %d null vectors on level 0 (%ld %s "
                "iterations in all), %.3f s\n", p->levels, coarse_lattices(mg, lattices, sizeof lattices), p->nvec[0],
                mg->setup_iterations, tq_inverter_name(p->setup_inverter), mg->setup_seconds);
    *out = mg;
    return TQ_SUCCESS;
}

/* The distinct owners of this rank's blocks of lat, joined by '+'; a worker's name without
 * StarPU's device description ("CUDA 0.0 (NVIDIA H100 ...)" -> "CUDA 0.0"), which would not
 * fit the info field. */
static void level_where(const tq_lattice *lat, char *out, size_t size)
{
    out[0] = 0;
    size_t used = 0;
    for (int b = 0; b < lat->nblocks; b++) {
        if (!tq_block_is_local(lat, b)) continue;
        int rank;
        char name[64];
        if (tq_lattice_block_owner(lat, b, &rank, name, sizeof name) != TQ_SUCCESS) continue;
        char *description = strstr(name, " (");
        if (description) *description = 0;
        const size_t n = strlen(name);
        int seen = 0;
        for (const char *p = out; !seen && (p = strstr(p, name)); p += n)
            seen = (p == out || p[-1] == '+') && (p[n] == 0 || p[n] == '+');
        if (seen || used + n + 2 > size) continue;
        used += (size_t)snprintf(out + used, size - used, "%s%s", used ? "+" : "", name);
    }
}

tq_status tq_multigrid_get_info(const tq_multigrid *mg, tq_multigrid_info *info)
{
    if (!mg || !info) return tq_error(TQ_ERR_INVALID_ARG, "tq_multigrid_get_info: NULL argument");
    memset(info, 0, sizeof *info);
    info->levels = mg->p.levels;
    info->nvec = mg->p.nvec[0];
    memcpy(info->coarse_dims, mg->dims[1], sizeof info->coarse_dims);
    info->setup_iterations = mg->setup_iterations;
    info->setup_seconds = mg->setup_seconds;
    for (int l = 0; l < mg->p.levels; l++) {
        memcpy(info->level_dims[l], mg->dims[l], sizeof info->level_dims[l]);
        level_where(l == 0 ? mg->lat : mg->t[l - 1]->coarse, info->level_where[l], sizeof info->level_where[l]);
        info->level_iterations[l] = l > 0 ? 0 : mg->outer_iterations;
        for (int i = 0; l > 0 && i < mg->nslots; i++) info->level_iterations[l] += mg->slot[i].cycle[l - 1]->coarse_iterations;
    }
    info->coarse_iterations = info->level_iterations[1];
    return TQ_SUCCESS;
}

/* ---- saving and loading a set-up ------------------------------------------------------------
 * The file: a fixed header (mg_file_header, native byte order, recorded and checked), then
 * per level l below the coarsest the basis of its transfer and level l + 1's operator links,
 * as doubles in the global host order of their lattices (tq_lattice_allgather_sites), then
 * nothing. The header records what the set-up was made for (lattice, levels, aggregates and
 * null vectors per level, the operator's kind, kappa, c_sw and boundary factors, and a
 * fingerprint of its gauge field) and a checksum of the data. Version 1 (two levels only) is
 * not read: its set-ups are made again in seconds. Version 2's checksum was FNV-1a over every
 * byte, one multiply per byte in one chain: 7-15 s for the 4.8 GB of a 32^4 basis of 24
 * vectors, most of a set-up's saving and reading; version 3's (data_checksum) folds chunks of
 * 64-bit words hashed on host threads. Version 2 files are still read. */
#define MG_FILE_MAGIC "TQMGSET1"
enum { MG_FILE_VERSION = 3, MG_FILE_BYTE_ORDER = 0x01020304 };
typedef struct mg_file_header {
    char magic[8];
    uint32_t version, byte_order;
    int32_t dims[4];
    int32_t levels, dslash_type, coarse_prec, nullvec_prec;
    int32_t block[MG_MAX_TRANSFERS][4], nvec[MG_MAX_TRANSFERS];   /* unused levels: 0 */
    double kappa, csw, bc[4];
    double gauge_fingerprint;
    uint64_t basis_reals[MG_MAX_TRANSFERS], link_reals[MG_MAX_TRANSFERS];   /* doubles of each part */
    uint64_t checksum;                                                      /* of the data: data_checksum */
} mg_file_header;

static uint64_t fnv1a(uint64_t h, const void *data, size_t n)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

/* Version 3's checksum of n doubles, folded into sum: the array in chunks of CHECK_CHUNK
 * words, each chunk's words through FNV-1a 64 (a multiply per word) on host threads, then
 * the chunk hashes' bytes in order through FNV-1a (version 2: fnv1a over every byte). */
enum { CHECK_CHUNK = 4096 };
typedef struct {
    const double *a;
    int64_t nwords;
    uint64_t *hash;
} chunk_hashes;

static void hash_chunks(int64_t begin, int64_t end, void *arg)
{
    const chunk_hashes *c = arg;
    for (int64_t k = begin; k < end; k++) {
        const int64_t lo = k * CHECK_CHUNK, hi = lo + CHECK_CHUNK < c->nwords ? lo + CHECK_CHUNK : c->nwords;
        uint64_t h = 0xcbf29ce484222325ull;
        for (int64_t i = lo; i < hi; i++) {
            uint64_t w;   /* the double's bytes as a word (memcpy: no aliasing of a double as an integer) */
            memcpy(&w, &c->a[i], sizeof w);
            h = (h ^ w) * 0x100000001b3ull;
        }
        c->hash[k] = h;
    }
}

static tq_status data_checksum(uint64_t *sum, const double *a, int64_t n, uint32_t version)
{
    if (version == 2) {
        *sum = fnv1a(*sum, a, sizeof(double) * (size_t)n);
        return TQ_SUCCESS;
    }
    const int64_t nchunks = (n + CHECK_CHUNK - 1) / CHECK_CHUNK;
    chunk_hashes c = {a, n, malloc(sizeof(uint64_t) * (size_t)(nchunks ? nchunks : 1))};
    if (!c.hash) return tq_error(TQ_ERR_NOMEM, "multigrid set-up file: out of memory");
    tq_host_parallel_for(nchunks, hash_chunks, &c);
    *sum = fnv1a(*sum, c.hash, sizeof(uint64_t) * (size_t)nchunks);
    free(c.hash);
    return TQ_SUCCESS;
}

/* A number that changes with any link of the operator's gauge field: its reals weighted by
 * a fixed function of their global position, summed over every rank (the same to rounding
 * on any rank grid). */
static tq_status gauge_fingerprint(const tq_dirac *d, double *out)
{
    const tq_field *g = tq_internal_dirac_gauge(d);
    tq_lattice_info li;
    TQ_CHECK(tq_lattice_get_info(g->lat, &li));
    tq_host_gauge h;
    TQ_CHECK(tq_host_gauge_alloc(&h, li.local));
    tq_status st = tq_gauge_field_export(g, &h);
    double sum = 0;
    for (int64_t s = 0; st == TQ_SUCCESS && s < li.local_volume; s++) {
        int x[4];
        int64_t r = s, global = 0;
        for (int mu = 0; mu < 4; mu++) {
            x[mu] = (int)(r % li.local[mu]) + li.coords[mu] * li.local[mu];
            r /= li.local[mu];
        }
        for (int mu = 3; mu >= 0; mu--) global = global * li.dims[mu] + x[mu];
        for (int k = 0; k < 72; k++) {
            const uint64_t key = (uint64_t)global * 72u + (uint64_t)k;
            sum += h.links[s * 72 + k] * (double)((key * 0x9e3779b97f4a7c15ull) >> 44) / 1048576.0;
        }
    }
    tq_host_gauge_free(&h);
    if (st == TQ_SUCCESS) tq_lattice_allreduce_sum(g->lat, &sum, 1);
    *out = sum;
    return st;
}

/* The header of mg's set-up (data sizes and checksum left to the caller). */
static tq_status file_header(const tq_multigrid *mg, mg_file_header *h)
{
    memset(h, 0, sizeof *h);
    memcpy(h->magic, MG_FILE_MAGIC, 8);
    h->version = MG_FILE_VERSION;
    h->byte_order = MG_FILE_BYTE_ORDER;
    tq_lattice_info li;
    TQ_CHECK(tq_lattice_get_info(mg->lat, &li));
    const tq_dirac_params *dp = tq_internal_dirac_params(mg->d);
    for (int mu = 0; mu < 4; mu++) {
        h->dims[mu] = li.dims[mu];
        h->bc[mu] = dp->bc[mu];
    }
    h->levels = mg->p.levels;
    h->coarse_prec = (int32_t)mg->p.coarse_prec;
    h->nullvec_prec = (int32_t)mg->p.nullvec_prec;
    for (int l = 0; l + 1 < mg->p.levels; l++) {
        h->nvec[l] = mg->p.nvec[l];
        memcpy(h->block[l], mg->p.block[l], sizeof h->block[l]);
    }
    h->dslash_type = (int32_t)dp->type;
    h->kappa = dp->kappa;
    h->csw = dp->type == TQ_DSLASH_CLOVER ? dp->csw : 0.0;
    return gauge_fingerprint(mg->d, &h->gauge_fingerprint);
}

/* f's sites of the whole lattice on every rank: a new array of 2 ndof reals per site. */
static tq_status gather_field(const tq_field *f, double **global, int64_t *nreals)
{
    tq_lattice_info li;
    TQ_CHECK(tq_lattice_get_info(f->lat, &li));
    const int nreal = 2 * f->p.ndof;
    double *local = malloc(sizeof(double) * (size_t)(li.local_volume * nreal));
    *global = malloc(sizeof(double) * (size_t)(li.global_volume * nreal));
    tq_status st = local && *global ? tq_field_export(f, local) : tq_error(TQ_ERR_NOMEM, "tq_multigrid_save: out of memory");
    if (st == TQ_SUCCESS) st = tq_lattice_allgather_sites(f->lat, local, *global, nreal);
    free(local);
    *nreals = li.global_volume * nreal;
    return st;
}

tq_status tq_multigrid_save(const tq_multigrid *mg, const char *path)
{
    const char *who = "tq_multigrid_save";
    if (!mg || !path || !path[0]) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL set-up or path", who);
    const int nt = mg->p.levels - 1;
    mg_file_header h;
    double *basis[MG_MAX_TRANSFERS] = {NULL}, *links[MG_MAX_TRANSFERS] = {NULL};
    int64_t nb[MG_MAX_TRANSFERS] = {0}, nl[MG_MAX_TRANSFERS] = {0};
    tq_status st = file_header(mg, &h);
    /* TQ_MG_FILE_VERSION=2: the former checksum (tests read such files) */
    const char *env = getenv("TQ_MG_FILE_VERSION");
    if (env && !strcmp(env, "2")) h.version = 2;
    for (int l = 0; l < nt && st == TQ_SUCCESS; l++) {
        st = gather_field(mg->t[l]->basis, &basis[l], &nb[l]);
        if (st == TQ_SUCCESS) st = gather_field(mg->op[l + 1]->links, &links[l], &nl[l]);
    }
    /* every rank holds the whole data; rank 0 of the lattice's group writes (of each group, for
     * a lattice over a group of ranks: the same bits) */
    if (st == TQ_SUCCESS && mg->lat->rank == 0) {
        uint64_t sum = 0xcbf29ce484222325ull;
        for (int l = 0; l < nt && st == TQ_SUCCESS; l++) {
            h.basis_reals[l] = (uint64_t)nb[l];
            h.link_reals[l] = (uint64_t)nl[l];
            st = data_checksum(&sum, basis[l], nb[l], h.version);
            if (st == TQ_SUCCESS) st = data_checksum(&sum, links[l], nl[l], h.version);
        }
        h.checksum = sum;
        tq_atomic_file af;
        if (st == TQ_SUCCESS) st = tq_io_create_atomic(path, &af);
        if (st == TQ_SUCCESS) {
            tq_status w = tq_io_write_exact(af.f, &h, sizeof h, path);
            for (int l = 0; l < nt && w == TQ_SUCCESS; l++) {
                w = tq_io_write_exact(af.f, basis[l], sizeof(double) * (size_t)nb[l], path);
                if (w == TQ_SUCCESS) w = tq_io_write_exact(af.f, links[l], sizeof(double) * (size_t)nl[l], path);
            }
            st = tq_io_finish_atomic(&af, w);
        }
    }
    for (int l = 0; l < nt; l++) {
        free(basis[l]);
        free(links[l]);
    }
    return tq_lattice_status_agree(mg->lat, st);
}

/* The saved header against what d and p ask for: the first difference, named. */
static tq_status check_header(const char *path, const mg_file_header *f, const mg_file_header *want)
{
    if (memcmp(f->magic, MG_FILE_MAGIC, 8) != 0)
        return tq_error(TQ_ERR_FORMAT, "'%s' is not a TaskQCD multigrid set-up (no %s at its start)", path, MG_FILE_MAGIC);
    if (f->byte_order != MG_FILE_BYTE_ORDER)
        return tq_error(TQ_ERR_FORMAT, "'%s' was written on a machine of the other byte order", path);
    if (f->version != MG_FILE_VERSION && f->version != 2)
        return tq_error(TQ_ERR_FORMAT, "'%s': set-up file version %u (this library reads 2 and %d)", path, f->version,
                        MG_FILE_VERSION);
    if (memcmp(f->dims, want->dims, sizeof f->dims) != 0)
        return tq_error(TQ_ERR_MISMATCH, "'%s' is a set-up of a %dx%dx%dx%d lattice, the operator's is %dx%dx%dx%d", path,
                        f->dims[0], f->dims[1], f->dims[2], f->dims[3], want->dims[0], want->dims[1], want->dims[2],
                        want->dims[3]);
    if (f->levels != want->levels)
        return tq_error(TQ_ERR_MISMATCH, "'%s' is a set-up of %d levels; the parameters ask for %d", path, f->levels,
                        want->levels);
    if (f->coarse_prec != want->coarse_prec || f->nullvec_prec != want->nullvec_prec)
        return tq_error(TQ_ERR_MISMATCH, "'%s' has its coarse levels in %s and null vectors in %s; the parameters ask for "
                        "%s and %s", path, tq_precision_name((tq_precision)f->coarse_prec),
                        tq_precision_name((tq_precision)f->nullvec_prec), tq_precision_name((tq_precision)want->coarse_prec),
                        tq_precision_name((tq_precision)want->nullvec_prec));
    for (int l = 0; l + 1 < want->levels; l++)
        if (f->nvec[l] != want->nvec[l] || memcmp(f->block[l], want->block[l], sizeof f->block[l]) != 0)
            return tq_error(TQ_ERR_MISMATCH, "'%s' has on level %d %d null vectors and aggregates %dx%dx%dx%d; the "
                            "parameters ask for %d and %dx%dx%dx%d", path, l, f->nvec[l], f->block[l][0], f->block[l][1],
                            f->block[l][2], f->block[l][3], want->nvec[l], want->block[l][0], want->block[l][1],
                            want->block[l][2], want->block[l][3]);
    if (f->dslash_type != want->dslash_type || f->kappa != want->kappa || f->csw != want->csw ||
        memcmp(f->bc, want->bc, sizeof f->bc) != 0)
        return tq_error(TQ_ERR_MISMATCH, "'%s' was made for another operator (%s, kappa %.17g, c_sw %.17g; this one: %s, "
                        "kappa %.17g, c_sw %.17g, or other boundary factors)", path,
                        f->dslash_type == TQ_DSLASH_CLOVER ? "clover" : "Wilson", f->kappa, f->csw,
                        want->dslash_type == TQ_DSLASH_CLOVER ? "clover" : "Wilson", want->kappa, want->csw);
    if (!(fabs(f->gauge_fingerprint - want->gauge_fingerprint) <= 1e-9 * (fabs(want->gauge_fingerprint) + 1.0)))
        return tq_error(TQ_ERR_MISMATCH, "'%s' was made on another gauge field (fingerprint %.17g, this one's %.17g)", path,
                        f->gauge_fingerprint, want->gauge_fingerprint);
    return TQ_SUCCESS;
}

/* Reads path's data (every rank the whole of it: per transfer l, nb[l] reals of basis and
 * nl[l] of links) after checking its header against want. */
static tq_status read_setup(const char *path, const mg_file_header *want, const int64_t *nb, const int64_t *nl,
                            double *const *basis, double *const *links)
{
    FILE *f = fopen(path, "rb");
    if (!f) return tq_error(TQ_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    mg_file_header h;
    memset(&h, 0, sizeof h);
    /* the magic first: a short file of another kind is named as such, not as truncated */
    tq_status st = tq_io_read_exact(f, h.magic, sizeof h.magic, path, "set-up header");
    if (st == TQ_SUCCESS && memcmp(h.magic, MG_FILE_MAGIC, 8) == 0)
        st = tq_io_read_exact(f, (char *)&h + sizeof h.magic, sizeof h - sizeof h.magic, path, "set-up header");
    if (st == TQ_SUCCESS) st = check_header(path, &h, want);
    const int nt = want->levels - 1;
    for (int l = 0; l < nt && st == TQ_SUCCESS; l++)
        if (h.basis_reals[l] != (uint64_t)nb[l] || h.link_reals[l] != (uint64_t)nl[l])
            st = tq_error(TQ_ERR_FORMAT, "'%s' holds %llu + %llu reals for level %d; its header's set-up needs %lld + %lld",
                          path, (unsigned long long)h.basis_reals[l], (unsigned long long)h.link_reals[l], l,
                          (long long)nb[l], (long long)nl[l]);
    uint64_t sum = 0xcbf29ce484222325ull;
    for (int l = 0; l < nt && st == TQ_SUCCESS; l++) {
        st = tq_io_read_exact(f, basis[l], sizeof(double) * (size_t)nb[l], path, "basis");
        if (st == TQ_SUCCESS) st = tq_io_read_exact(f, links[l], sizeof(double) * (size_t)nl[l], path, "coarse operator");
        if (st == TQ_SUCCESS) st = data_checksum(&sum, basis[l], nb[l], h.version);
        if (st == TQ_SUCCESS) st = data_checksum(&sum, links[l], nl[l], h.version);
    }
    if (st == TQ_SUCCESS && fgetc(f) != EOF) st = tq_error(TQ_ERR_FORMAT, "'%s' has data after the set-up", path);
    if (st == TQ_SUCCESS && sum != h.checksum)
        st = tq_error(TQ_ERR_FORMAT, "'%s': the checksum does not match its data (a damaged file)", path);
    fclose(f);
    return st;
}

/* Imports this rank's part of the global array into f. */
static tq_status scatter_into(tq_field *f, const double *global)
{
    tq_lattice_info li;
    TQ_CHECK(tq_lattice_get_info(f->lat, &li));
    double *local = malloc(sizeof(double) * (size_t)(li.local_volume * 2 * f->p.ndof));
    if (!local) return tq_error(TQ_ERR_NOMEM, "tq_multigrid_load: out of memory");
    tq_status st = tq_lattice_scatter_sites(f->lat, global, local, 2 * f->p.ndof);
    if (st == TQ_SUCCESS) st = tq_field_import(f, local);
    free(local);
    return st;
}

tq_status tq_multigrid_load(const tq_dirac *d, const tq_mg_params *p, const char *path, tq_multigrid **out)
{
    const char *who = "tq_multigrid_load";
    if (!out) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL result pointer", who);
    *out = NULL;
    if (!d || !p || !path) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL operator, parameters or path", who);
    tq_multigrid *mg = calloc(1, sizeof *mg);
    if (!mg) return tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    pthread_mutex_init(&mg->lock, NULL);
    mg->p = *p;
    mg->d = d;
    mg->lat = tq_internal_dirac_gauge(d)->lat;
    const double t0 = tq_internal_now();
    tq_status st = check_params(who, d, p, mg);
    if (st == TQ_SUCCESS) st = create_levels(who, mg);
    mg_file_header want;
    if (st == TQ_SUCCESS) st = file_header(mg, &want);
    const int nt = p->levels - 1;
    double *basis[MG_MAX_TRANSFERS] = {NULL}, *links[MG_MAX_TRANSFERS] = {NULL};
    int64_t nb[MG_MAX_TRANSFERS] = {0}, nl[MG_MAX_TRANSFERS] = {0};
    for (int l = 0; l < nt && st == TQ_SUCCESS; l++) {
        tq_lattice_info fi, ci;
        tq_lattice_get_info(mg->t[l]->fine, &fi);
        tq_lattice_get_info(mg->t[l]->coarse, &ci);
        nb[l] = fi.global_volume * 2 * mg->t[l]->basis->p.ndof;
        nl[l] = ci.global_volume * 2 * mg->op[l + 1]->links->p.ndof;
        basis[l] = malloc(sizeof(double) * (size_t)nb[l]);
        links[l] = malloc(sizeof(double) * (size_t)nl[l]);
        if (!basis[l] || !links[l]) st = tq_error(TQ_ERR_NOMEM, "%s: out of memory", who);
    }
    if (st == TQ_SUCCESS) st = read_setup(path, &want, nb, nl, basis, links);
    st = tq_lattice_status_agree(mg->lat, st);
    for (int l = 0; l < nt && st == TQ_SUCCESS; l++) {
        st = scatter_into(mg->t[l]->basis, basis[l]);
        if (st == TQ_SUCCESS) st = scatter_into(mg->op[l + 1]->links, links[l]);
    }
    for (int l = 0; l < nt; l++) {
        free(basis[l]);
        free(links[l]);
    }
    if (st == TQ_SUCCESS) st = finish_setup(mg);
    if (st != TQ_SUCCESS) {
        tq_multigrid_destroy(mg);
        return st;
    }
    mg->setup_seconds = tq_internal_now() - t0;
    char lattices[160];
    if (p->verbosity >= 1 && tq_internal_mpi_rank() == 0)
        fprintf(stderr, "taskqcd: multigrid set-up read from '%s': %d levels, coarse lattices %s, %d null vectors on "
                "level 0, %.3f s\n", path, p->levels, coarse_lattices(mg, lattices, sizeof lattices), p->nvec[0],
                mg->setup_seconds);
    *out = mg;
    return TQ_SUCCESS;
}
