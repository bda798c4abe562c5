/* Wilson hopping-term codelets (pack, interior, exterior): CPU implementations, codelet
 * definitions and perf models. The per-site arithmetic is kernels/dslash_wilson_site.h.
 *
 * Buffers (variable count, modes given per task by tasks/dirac_tasks.c):
 * Pack and exterior tasks take a tq_dslash_wilson_face_args: their faces between GPUs
 * (peer faces, face_sync.h) are not buffers but pointers there, and a GPU's stream waits
 * and signals around the kernel as it says.
 *   pack:      in (R), gauge of the packed parity (R), faces (W): per split mu, lower, upper
 *   interior:  in (R), gauge of the output parity (R), gauge of the input parity (R),
 *              out (W), [x (R) when xpay with x not out], [clover of the output parity (R)
 *              when a->clover], [with an epilogue (a->epi.kind): the field w (R) when
 *              the epilogue reads one other than x, the field u (R) when it reads
 *              one more, reduction scratch (SCRATCH), solver
 *              scalars (RW; R when split), snapshot (W) when a->epi.snapshot or the partial
 *              (W) when tq_epilogue_partial, the entries (W) when a->epi.entries; out is
 *              read-write for TQ_EPI_AXPY_NORM2; without an epilogue but guarded (epi.guard > 0): the
 *              solver scalars (R), and nothing done when the guard is shut]
 *              [direct (a->direct): per split mu, in of the block below (R), its gauge of the
 *              input parity (R), in of the block above (R)]
 *   exterior:  in (R), gauge of the output parity (R), gauge of the input parity (R),
 *              out (RW), [x (R)], [clover (R)], faces (R): per split mu, the one from below,
 *              the one from above, [with a split epilogue: [w (R)] [u (R)] as in the
 *              interior, reduction scratch (SCRATCH), solver scalars (R), partial (W)];
 *              after an interior in place with entries (a->epi.entries) only: reduction
 *              scratch, solver scalars (R), partial (W), entries (R); with pack_ahead
 *              (no epilogue) it also writes the next hop's faces, which are not buffers
 * The interior task does the sites off the split faces, the exterior task the sites on
 * them, each site whole (kernels/dslash_wilson_site.h); in place the interior does every
 * site. */
#include "config.h"
#include "tq_codelets.h"

#include <string.h>

#define BUFFER_PTR(i) STARPU_VECTOR_GET_PTR(buffers[i])

/* The CPU loops take precision, compression and dagger as compile-time constants through
 * TQ_DSLASH_WILSON_DISPATCH (one instantiation each) so the per-site loops unroll as on the GPU. */

int tq_dslash_reduce_blocks_limit = 0;

/* The faces from buffer `first` on, per split mu lower then upper; a peer face (sync->ptr
 * set: only between GPUs, face_sync.h) is not a buffer. */
static int face_pointers(void *buffers[], int first, const tq_dslash_wilson_face_args *fa, void *face[4][2])
{
    int k = first;
    for (int mu = 0; mu < 4; mu++) {
        face[mu][0] = face[mu][1] = NULL;
        if (!fa->a.split[mu]) continue;
        for (int side = 0; side < 2; side++)
            face[mu][side] = fa->sync.ptr[mu][side] ? fa->sync.ptr[mu][side] : (void *)STARPU_VECTOR_GET_PTR(buffers[k++]);
    }
    return k;   /* the buffer after the faces */
}

static void dslash_wilson_pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_dslash_wilson_face_args *fa = (const tq_dslash_wilson_face_args *)cl_arg;
    const tq_dslash_wilson_args *a = &fa->a;
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *g = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    void *face[4][2];
    face_pointers(buffers, 2, fa, face);
    const int64_t n = tq_face_total(a);
#define PACK(P, R, D)                                                                        \
    for (int64_t e = 0; e < n; e++) {                                                     \
        if (P == 8) tq_dslash_wilson_pack_entry(a, in, g, face, e, P, R, D);                        \
        else tq_dslash_wilson_pack_entry_f(a, in, g, face, e, P, R, D);                             \
    }
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, PACK);
#undef PACK
}

/* A split epilogue's partial: the task's sums, the rest of the TQ_BLAS_MAX_RESULTS zero (the
 * combine adds every entry). */
static void write_partial(double *partial, const double *sum)
{
    for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) partial[r] = r < TQ_EPI_MAX_RESULTS ? sum[r] : 0.0;
}

/* The interior task with a reduction epilogue (kernels/solver_scalars.h): sites in order,
 * each site's contribution (summed in the site's type) added to a double total. */
static void interior_epilogue_cpu(void *buffers[], const tq_dslash_wilson_args *a, const void *in, const void *gp,
                                  const void *gq, const void *x, const void *k, void *out)
{
    const int e = tq_dslash_wilson_buf_scratch(a);
    const void *w = !tq_epilogue_reads_w(a->epi.kind) ? NULL : a->epi.w_is_x ? x
                  : (const void *)STARPU_VECTOR_GET_PTR(buffers[tq_dslash_wilson_buf_epilogue(a)]);
    const void *u = tq_epilogue_reads_u(a->epi.kind) ? (const void *)STARPU_VECTOR_GET_PTR(buffers[tq_dslash_wilson_buf_u(a)]) : NULL;
    double *scal = (double *)STARPU_VECTOR_GET_PTR(buffers[e + 1]);
    if (!tq_epilogue_frozen(&a->epi, scal)) {
        const double c[2] = {tq_epilogue_coefficient(&a->epi, scal), tq_epilogue_coefficient_im(&a->epi, scal)};
        const float cf[2] = {(float)c[0], (float)c[1]};
        double sum[TQ_EPI_MAX_RESULTS] = {0};
        /* entries: every site in place; a face site's results go to its exterior entry */
        void *ent = a->epi.entries ? (void *)STARPU_VECTOR_GET_PTR(buffers[e + 3]) : NULL;
        const int64_t nent = a->epi.entries ? tq_face_total(a) : 0;
        const int nres = tq_epilogue_nresults(a->epi.kind);
#define INTERIOR_EPI(P, R, D)                                                                      \
        for (int64_t s = 0; s < a->cb; s++) {                                                   \
            const tq_epi_fields ef = {w, u, out, s, 0};                                            \
            const int face = ent && tq_on_split_face(a, s);                                        \
            if (P == 8) {                                                                          \
                double r[TQ_EPI_MAX_RESULTS] = {0};                                                \
                tq_dslash_wilson_interior_site(a, in, gp, gq, x, k, out, s, P, R, D, a->clover, a->direct, a->epi.kind, c, &ef, r); \
                if (face) tq_face_entries_store(a, s, nres, r, (double *)ent, nent);               \
                else for (int i = 0; i < TQ_EPI_MAX_RESULTS; i++) sum[i] += r[i];                  \
            } else {                                                                               \
                float r[TQ_EPI_MAX_RESULTS] = {0};                                                 \
                tq_dslash_wilson_interior_site_f(a, in, gp, gq, x, k, out, s, P, R, D, a->clover, a->direct, a->epi.kind, cf, &ef, r); \
                if (face) tq_face_entries_store_f(a, s, nres, r, (float *)ent, nent);              \
                else for (int i = 0; i < TQ_EPI_MAX_RESULTS; i++) sum[i] += (double)r[i];          \
            }                                                                                      \
        }
        TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, INTERIOR_EPI);
#undef INTERIOR_EPI
        if (a->epi.split) {   /* the combine task finishes */
            if (tq_epilogue_partial(&a->epi)) write_partial((double *)STARPU_VECTOR_GET_PTR(buffers[e + 2]), sum);
            return;
        }
        tq_scalars_finish(scal, a->epi.guard, a->epi.dst, tq_epilogue_nresults(a->epi.kind), sum, a->epi.prog,
                          a->epi.nprog);
    }
    if (a->epi.snapshot) tq_snapshot_write_cpu((void *)STARPU_VECTOR_GET_PTR(buffers[e + 2]), a->epi.mirror, scal);
}

static void dslash_wilson_interior_cpu(void *buffers[], void *cl_arg)
{
    const tq_dslash_wilson_args *a = (const tq_dslash_wilson_args *)cl_arg;
    tq_dslash_wilson_args direct;
    TQ_DSLASH_WILSON_DIRECT_ARGS(a, direct, BUFFER_PTR);
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *gp = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const void *gq = (const void *)STARPU_VECTOR_GET_PTR(buffers[2]);
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[3]);
    /* in-place xpay (x is out) passes out once, read-write */
    const void *x = !a->xpay ? NULL : a->x_separate ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4]) : out;
    const void *k = a->clover ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4 + a->x_separate]) : NULL;
    if (a->epi.kind != TQ_EPI_NONE) {
        interior_epilogue_cpu(buffers, a, in, gp, gq, x, k, out);
        return;
    }
    if (a->epi.guard > 0 && tq_epilogue_frozen(&a->epi, (const double *)STARPU_VECTOR_GET_PTR(buffers[tq_dslash_wilson_buf_guard(a)])))
        return;
    const tq_site_ranges r = tq_interior_ranges(a);
#define INTERIOR(P, R, D)                                                                          \
    for (int64_t i = 0; i < r.n[0] + r.n[1]; i++) {                                              \
        const int64_t s = i < r.n[0] ? r.lo[0] + i : r.lo[1] + (i - r.n[0]);                      \
        if (P == 8) tq_dslash_wilson_interior_site(a, in, gp, gq, x, k, out, s, P, R, D, a->clover, a->direct, TQ_EPI_NONE, NULL, NULL, NULL); \
        else tq_dslash_wilson_interior_site_f(a, in, gp, gq, x, k, out, s, P, R, D, a->clover, a->direct, TQ_EPI_NONE, NULL, NULL, NULL); \
    }
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, INTERIOR);
#undef INTERIOR
}

/* A split epilogue's exterior part after an interior in place (a->epi.entries): buffers
 * scratch, scalars (R), partial (W), the interior's entries (R). The face sites' results
 * summed in entry order as the exterior loop below sums them: its partial, bitwise. */
static void exterior_entries_cpu(void *buffers[], const tq_dslash_wilson_args *a)
{
    const double *scal = (const double *)STARPU_VECTOR_GET_PTR(buffers[1]);
    if (tq_epilogue_frozen(&a->epi, scal)) return;
    const void *ent = (const void *)STARPU_VECTOR_GET_PTR(buffers[3]);
    const int64_t n = tq_face_total(a);
    const int nres = tq_epilogue_nresults(a->epi.kind);
    double sum[TQ_EPI_MAX_RESULTS] = {0};
    for (int64_t e = 0; e < n; e++)   /* a corner's repeat holds zeros */
        for (int i = 0; i < nres; i++)
            sum[i] += a->L_in.prec == 8 ? ((const double *)ent)[i * n + e] : (double)((const float *)ent)[i * n + e];
    write_partial((double *)STARPU_VECTOR_GET_PTR(buffers[2]), sum);
}

static void dslash_wilson_exterior_cpu(void *buffers[], void *cl_arg)
{
    const tq_dslash_wilson_face_args *fa = (const tq_dslash_wilson_face_args *)cl_arg;
    const tq_dslash_wilson_args *a = &fa->a;
    if (a->epi.kind != TQ_EPI_NONE && a->epi.entries) {
        exterior_entries_cpu(buffers, a);
        return;
    }
    const void *in = (const void *)STARPU_VECTOR_GET_PTR(buffers[0]);
    const void *gp = (const void *)STARPU_VECTOR_GET_PTR(buffers[1]);
    const void *gq = (const void *)STARPU_VECTOR_GET_PTR(buffers[2]);
    void *out = (void *)STARPU_VECTOR_GET_PTR(buffers[3]);
    const int with_x = a->xpay && a->x_separate;
    const void *x = !a->xpay ? NULL : with_x ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4]) : out;
    const void *k = a->clover ? (const void *)STARPU_VECTOR_GET_PTR(buffers[4 + with_x]) : NULL;
    void *face[4][2];
    int b = face_pointers(buffers, 4 + with_x + (a->clover ? 1 : 0), fa, face);
    const void *const (*from)[2] = (const void *const (*)[2])face;
    const int64_t n = tq_face_total(a);
    if (a->epi.kind != TQ_EPI_NONE) {
        /* a split epilogue: after the faces [w] [u], the reduction scratch (the CUDA
         * kernel's), the solver scalars (R), the partial (W); entries in order as in the
         * interior */
        const void *w = !tq_epilogue_reads_w(a->epi.kind) ? NULL : a->epi.w_is_x ? x : (const void *)STARPU_VECTOR_GET_PTR(buffers[b++]);
        const void *u = tq_epilogue_reads_u(a->epi.kind) ? (const void *)STARPU_VECTOR_GET_PTR(buffers[b++]) : NULL;
        b++;   /* the scratch */
        const double *scal = (const double *)STARPU_VECTOR_GET_PTR(buffers[b]);
        if (tq_epilogue_frozen(&a->epi, scal)) return;
        const double c[2] = {tq_epilogue_coefficient(&a->epi, scal), tq_epilogue_coefficient_im(&a->epi, scal)};
        const float cf[2] = {(float)c[0], (float)c[1]};
        const tq_epi_fields ef = {w, u, out, 0, 0};
        double sum[TQ_EPI_MAX_RESULTS] = {0};
#define EXTERIOR_EPI(P, R, D)                                                                      \
        for (int64_t e = 0; e < n; e++) {                                                       \
            if (P == 8) {                                                                          \
                double r[TQ_EPI_MAX_RESULTS] = {0};                                                \
                tq_dslash_wilson_exterior_entry(a, in, gp, gq, x, k, from, out, e, P, R, D, a->clover, a->epi.kind, c, &ef, r, NULL); \
                for (int i = 0; i < TQ_EPI_MAX_RESULTS; i++) sum[i] += r[i];                       \
            } else {                                                                               \
                float r[TQ_EPI_MAX_RESULTS] = {0};                                                 \
                tq_dslash_wilson_exterior_entry_f(a, in, gp, gq, x, k, from, out, e, P, R, D, a->clover, a->epi.kind, cf, &ef, r, NULL); \
                for (int i = 0; i < TQ_EPI_MAX_RESULTS; i++) sum[i] += (double)r[i];               \
            }                                                                                      \
        }
        TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, EXTERIOR_EPI);
#undef EXTERIOR_EPI
        if (tq_epilogue_partial(&a->epi)) write_partial((double *)STARPU_VECTOR_GET_PTR(buffers[b + 1]), sum);
        return;
    }
    /* packing ahead (only peer faces, between GPUs, ask for it): as the CUDA codelet */
    void *const (*ahead)[2] = fa->pack_ahead ? (void *const (*)[2])fa->ahead.ptr : NULL;
#define EXTERIOR(P, R, D)                                                                    \
    for (int64_t e = 0; e < n; e++) {                                                     \
        if (P == 8) tq_dslash_wilson_exterior_entry(a, in, gp, gq, x, k, from, out, e, P, R, D, a->clover, TQ_EPI_NONE, NULL, NULL, NULL, ahead); \
        else tq_dslash_wilson_exterior_entry_f(a, in, gp, gq, x, k, from, out, e, P, R, D, a->clover, TQ_EPI_NONE, NULL, NULL, NULL, ahead);      \
    }
    TQ_DSLASH_WILSON_DISPATCH(a->L_in.prec, a->recon, a->dagger, EXTERIOR);
#undef EXTERIOR
}

static struct starpu_perfmodel pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_dslash_wilson_pack_v1", .footprint = tq_footprint_bytes};
/* The interior's footprint: its data's sizes, and for a band its band and t planes (a band's
 * task has the whole interior's buffers but only part of its work); without bands the
 * footprint it always had, so that earlier calibrations stay valid. */
static uint32_t interior_footprint(struct starpu_task *task)
{
    uint32_t crc = tq_footprint_bytes(task);
    const tq_dslash_wilson_args *a = (const tq_dslash_wilson_args *)task->cl_arg;
    if (a && a->band) {
        const int32_t band[3] = {a->band, a->band_t[0], a->band_t[1]};
        crc = starpu_hash_crc32c_be_n(band, sizeof band, crc);
    }
    return crc;
}

static struct starpu_perfmodel interior_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_dslash_wilson_interior_v1", .footprint = interior_footprint};
static struct starpu_perfmodel exterior_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_dslash_wilson_exterior_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_dslash_wilson_pack = {
    .cpu_funcs = {dslash_wilson_pack_cpu},
    .cpu_funcs_name = {"dslash_wilson_pack_cpu"},
    TQ_CUDA_IMPL(tq_dslash_wilson_pack_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &pack_model,
    .name = "tq_dslash_wilson_pack",
};

struct starpu_codelet tq_cl_dslash_wilson_interior = {
    .cpu_funcs = {dslash_wilson_interior_cpu},
    .cpu_funcs_name = {"dslash_wilson_interior_cpu"},
    TQ_CUDA_IMPL(tq_dslash_wilson_interior_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &interior_model,
    .name = "tq_dslash_wilson_interior",
};

struct starpu_codelet tq_cl_dslash_wilson_exterior = {
    .cpu_funcs = {dslash_wilson_exterior_cpu},
    .cpu_funcs_name = {"dslash_wilson_exterior_cpu"},
    TQ_CUDA_IMPL(tq_dslash_wilson_exterior_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &exterior_model,
    .name = "tq_dslash_wilson_exterior",
};
