/* Improved staggered hopping-term codelets (CUDA versions in codelets/staggered_cuda.cu;
 * per-site arithmetic in kernels/staggered_site.h): per block and output parity, pack,
 * interior and exterior, as the stencil layer (src/core/stencil.h) submits them. Buffers:
 *   pack:      in (R, the parity the neighbours hop to), faces (W) x nfaces less the peer
 *              faces (tq_ks_face_args: written where its sync says)
 *   interior:  in of the other parity (R), links of the output's parity (R), out (W)
 *   exterior:  the same with out (RW), then the faces read (R) x nfaces less the peer faces
 *   build:     the thin links of the whole lattice in the host API layout (R), the links
 *              field's block and parity (W) (kernels/staggered_links_site.h)
 *   hisq_w:    the thin links of the whole lattice (R), HISQ's first-level links of a range
 *              of sites in the same layout (W) */
#include "config.h"
#include "tq_codelets.h"

#define PTR(i) ((void *)STARPU_VECTOR_GET_PTR(buffers[i]))

/* (Peer faces, face_sync.h, are only ever GPU memory: on CPU workers every face is a
 * buffer of the task; tq_ks_face_pointers maps them all the same.) */
static void ks_pack_cpu(void *buffers[], void *cl_arg)
{
    const tq_ks_face_args *fa = (const tq_ks_face_args *)cl_arg;
    void *faces[8] = {NULL};
    tq_ks_face_pointers(fa, buffers, 1, faces);
    for (int64_t s = 0; s < fa->a.cb; s++) tq_ks_pack_site(&fa->a, PTR(0), faces, s);
}

/* The sites of one kind (exterior 0: no hop across a split direction; 1: some), each
 * computed whole by tq_ks_site in double whatever the storage precision (the reference's
 * order: bitwise the reference in double), one instantiation per precision so that the
 * per-site loads resolve their branches. */
#define KS_SITES(P, FACES)                                                                        \
    do {                                                                                        \
        for (int64_t s = 0; s < a->cb; s++) {                                                   \
            int x[4];                                                                           \
            tq_block_coords(a->B, a->parity, s, x);                                             \
            if (tq_ks_on_face(a, x) == (FACES)) tq_ks_site(a, in, links, from, out, s, x, P, FACES); \
        }                                                                                       \
    } while (0)

static void ks_interior_cpu(void *buffers[], void *cl_arg)
{
    const tq_ks_args *a = (const tq_ks_args *)cl_arg;
    const void *in = PTR(0), *links = PTR(1), *const *from = NULL;
    void *out = PTR(2);
    if (a->L_in.prec == 8) KS_SITES(8, 0);
    else if (a->L_in.prec == 4) KS_SITES(4, 0);
    else KS_SITES(2, 0);
}

static void ks_exterior_cpu(void *buffers[], void *cl_arg)
{
    const tq_ks_face_args *fa = (const tq_ks_face_args *)cl_arg;
    const tq_ks_args *a = &fa->a;
    void *faces[8] = {NULL};
    tq_ks_face_pointers(fa, buffers, 3, faces);
    const void *in = PTR(0), *links = PTR(1), *const *from = (const void *const *)faces;
    void *out = PTR(2);
    if (a->L_in.prec == 8) KS_SITES(8, 1);
    else if (a->L_in.prec == 4) KS_SITES(4, 1);
    else KS_SITES(2, 1);
}

static void ks_build_cpu(void *buffers[], void *cl_arg)
{
    const tq_ks_build_args *a = (const tq_ks_build_args *)cl_arg;
    for (int64_t s = 0; s < a->cb; s++) tq_ks_build_site(a, (const double *)PTR(0), PTR(1), s);
}

static void ks_hisq_w_cpu(void *buffers[], void *cl_arg)
{
    const tq_ks_smear_args *a = (const tq_ks_smear_args *)cl_arg;
    for (int64_t i = 0; i < a->count; i++) tq_ks_hisq_w_site(a, (const double *)PTR(0), (double *)PTR(1), i);
}

static struct starpu_perfmodel ks_pack_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_ks_pack_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel ks_interior_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_ks_interior_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel ks_exterior_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_ks_exterior_v1", .footprint = tq_footprint_bytes};

static struct starpu_perfmodel ks_build_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_ks_build_v1", .footprint = tq_footprint_bytes};
static struct starpu_perfmodel ks_hisq_w_model = {.type = STARPU_HISTORY_BASED, .symbol = "tq_ks_hisq_w_v1", .footprint = tq_footprint_bytes};

struct starpu_codelet tq_cl_ks_build = {
    .cpu_funcs = {ks_build_cpu}, .cpu_funcs_name = {"ks_build_cpu"}, TQ_CUDA_IMPL(tq_ks_build_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &ks_build_model, .name = "tq_ks_build",
};
struct starpu_codelet tq_cl_ks_hisq_w = {
    .cpu_funcs = {ks_hisq_w_cpu}, .cpu_funcs_name = {"ks_hisq_w_cpu"}, TQ_CUDA_IMPL(tq_ks_hisq_w_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &ks_hisq_w_model, .name = "tq_ks_hisq_w",
};
struct starpu_codelet tq_cl_ks_pack = {
    .cpu_funcs = {ks_pack_cpu}, .cpu_funcs_name = {"ks_pack_cpu"}, TQ_CUDA_IMPL(tq_ks_pack_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &ks_pack_model, .name = "tq_ks_pack",
};
struct starpu_codelet tq_cl_ks_interior = {
    .cpu_funcs = {ks_interior_cpu}, .cpu_funcs_name = {"ks_interior_cpu"}, TQ_CUDA_IMPL(tq_ks_interior_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &ks_interior_model, .name = "tq_ks_interior",
};
struct starpu_codelet tq_cl_ks_exterior = {
    .cpu_funcs = {ks_exterior_cpu}, .cpu_funcs_name = {"ks_exterior_cpu"}, TQ_CUDA_IMPL(tq_ks_exterior_cuda) .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &ks_exterior_model, .name = "tq_ks_exterior",
};
