/* Insert functions for the Wilson hopping term (dslash): pack, interior and exterior
 * (codelets/dslash_wilson.c). */
#include "tq_tasks.h"

#include <errno.h>

int tq_task_dslash_wilson_pack(const tq_task_options *opt, const tq_dslash_wilson_face_args *a, starpu_data_handle_t in,
                               starpu_data_handle_t g, const starpu_data_handle_t *faces, int nfaces)
{
    struct starpu_data_descr d[2 + 8];
    d[0].handle = in; d[0].mode = STARPU_R;
    d[1].handle = g; d[1].mode = STARPU_R;
    int n = 2;
    for (int i = 0; i < nfaces; i++)   /* NULL: a peer face (a->sync), not a buffer */
        if (faces[i]) { d[n].handle = faces[i]; d[n++].mode = STARPU_W; }
    /* faces gate other blocks' exterior work */
    return tq_task_submit_descr(opt, &tq_cl_dslash_wilson_pack, a, sizeof *a, d, n, STARPU_MAX_PRIO);
}

int tq_task_dslash_wilson_interior(const tq_task_options *opt, const tq_dslash_wilson_args *a, starpu_data_handle_t in,
                            starpu_data_handle_t gp, starpu_data_handle_t gq,
                            starpu_data_handle_t out, starpu_data_handle_t x, starpu_data_handle_t K,
                            const tq_epilogue_handles *e, const starpu_data_handle_t *nbr, int nnbr)
{
    struct starpu_data_descr d[12 + 12];   /* operands, epilogue and entries; 3 neighbours per split mu */
    const int epi = a->epi.kind != TQ_EPI_NONE;
    if (epi && a->epi.split && !e->scratch) return -EINVAL;   /* its kernels count in their own scratch */
    /* in place, a partial needs the entries (the face sites' part), and only it has them */
    if (epi && a->direct && tq_epilogue_partial(&a->epi) != (a->epi.entries != 0)) return -EINVAL;
    if (epi && a->epi.entries && (!a->direct || !e->entries)) return -EINVAL;
    const int split = a->split[0] || a->split[1] || a->split[2] || a->split[3];
    if (a->band && (epi || a->direct || !split)) return -EINVAL;   /* a band only of a plain split interior */
    if (a->band_t[0] < 0 || a->band_t[1] > a->B[3] || (a->band_t[1] > a->band_t[0] && a->band != TQ_BAND_DEEP))
        return -EINVAL;
    d[0].handle = in; d[0].mode = STARPU_R;
    d[1].handle = gp; d[1].mode = STARPU_R;
    d[2].handle = gq; d[2].mode = STARPU_R;
    d[3].handle = out;
    d[3].mode = (x && x == out) || a->epi.kind == TQ_EPI_AXPY_NORM2 ? STARPU_RW : STARPU_W;
    int n = 4;
    if (x && x != out) { d[n].handle = x; d[n++].mode = STARPU_R; }
    if (a->clover) { d[n].handle = K; d[n++].mode = STARPU_R; }
    if (epi) {
        if (tq_epilogue_reads_w(a->epi.kind) && !a->epi.w_is_x) { d[n].handle = e->w; d[n++].mode = STARPU_R; }
        if (tq_epilogue_reads_u(a->epi.kind)) { d[n].handle = e->u; d[n++].mode = STARPU_R; }
        d[n].handle = e->scratch ? e->scratch : tq_codelets_scratch(); d[n++].mode = e->scratch ? STARPU_RW : STARPU_SCRATCH;
        d[n].handle = e->scalars; d[n++].mode = a->epi.split ? STARPU_R : STARPU_RW;
        if (tq_epilogue_partial(&a->epi)) { d[n].handle = e->partial; d[n++].mode = STARPU_W; }
        else if (a->epi.snapshot) { d[n].handle = e->snapshot; d[n++].mode = STARPU_W; }
        if (a->epi.entries) { d[n].handle = e->entries; d[n++].mode = STARPU_W; }
    } else if (a->epi.guard > 0) {
        d[n].handle = e->scalars; d[n++].mode = STARPU_R;
    }
    for (int i = 0; i < nnbr && i < 12; i++) { d[n].handle = nbr[i]; d[n++].mode = STARPU_R; }
    /* a split block's interior skips the sites on its split faces (unless it reads the
     * neighbours in place): the exterior writes those, side by side with it */
    tq_task_options o = *opt;
    o.part = a->band == TQ_BAND_DEEP ? TQ_PART_DEEP : a->band == TQ_BAND_RIM ? TQ_PART_RIM
           : !a->direct && split ? TQ_PART_INSIDE : TQ_PART_ALL;
    /* the deep band's neighbours are all inside: it needs none of an exterior's sites */
    o.read_part = a->band == TQ_BAND_DEEP ? TQ_PART_INSIDE : TQ_PART_ALL;
    /* an epilogue's reduction gates the solver's next step */
    return tq_task_submit_descr(&o, &tq_cl_dslash_wilson_interior, a, sizeof *a, d, n, epi ? STARPU_MAX_PRIO : STARPU_DEFAULT_PRIO);
}

int tq_task_dslash_wilson_exterior(const tq_task_options *opt, const tq_dslash_wilson_face_args *fa, starpu_data_handle_t in,
                            starpu_data_handle_t gp, starpu_data_handle_t gq,
                            starpu_data_handle_t out, starpu_data_handle_t x, starpu_data_handle_t K,
                            const starpu_data_handle_t *faces, int nfaces, const tq_epilogue_handles *e)
{
    struct starpu_data_descr d[6 + 8 + 5];
    const int epi = fa->a.epi.kind != TQ_EPI_NONE;
    if (epi && (!fa->a.epi.split || !e->scratch)) return -EINVAL;   /* only a split epilogue, with its own scratch */
    tq_task_options o = *opt;
    o.part = TQ_PART_FACES;   /* the sites the interior skips */
    if (epi && fa->a.epi.entries) {   /* after an interior in place: its face sites' sums */
        if (!e->entries || nfaces || !tq_epilogue_partial(&fa->a.epi)) return -EINVAL;
        d[0].handle = e->scratch; d[0].mode = STARPU_RW;
        d[1].handle = e->scalars; d[1].mode = STARPU_R;
        d[2].handle = e->partial; d[2].mode = STARPU_W;
        d[3].handle = e->entries; d[3].mode = STARPU_R;
        return tq_task_submit_descr(&o, &tq_cl_dslash_wilson_exterior, fa, sizeof *fa, d, 4, STARPU_MAX_PRIO);
    }
    d[0].handle = in; d[0].mode = STARPU_R;
    d[1].handle = gp; d[1].mode = STARPU_R;
    d[2].handle = gq; d[2].mode = STARPU_R;
    d[3].handle = out; d[3].mode = STARPU_RW;   /* the interior task wrote the other sites */
    int n = 4;
    if (x && x != out) { d[n].handle = x; d[n++].mode = STARPU_R; }
    if (fa->a.clover) { d[n].handle = K; d[n++].mode = STARPU_R; }
    for (int i = 0; i < nfaces; i++)   /* NULL: a peer face */
        if (faces[i]) { d[n].handle = faces[i]; d[n++].mode = STARPU_R; }
    if (epi) {   /* a split epilogue */
        if (tq_epilogue_reads_w(fa->a.epi.kind) && !fa->a.epi.w_is_x) { d[n].handle = e->w; d[n++].mode = STARPU_R; }
        if (tq_epilogue_reads_u(fa->a.epi.kind)) { d[n].handle = e->u; d[n++].mode = STARPU_R; }
        d[n].handle = e->scratch ? e->scratch : tq_codelets_scratch(); d[n++].mode = e->scratch ? STARPU_RW : STARPU_SCRATCH;
        d[n].handle = e->scalars; d[n++].mode = STARPU_R;
        if (tq_epilogue_partial(&fa->a.epi)) { d[n].handle = e->partial; d[n++].mode = STARPU_W; }
    }
    return tq_task_submit_descr(&o, &tq_cl_dslash_wilson_exterior, fa, sizeof *fa, d, n, STARPU_MAX_PRIO);
}

void tq_task_dslash_reduce_blocks_limit(int nblocks) { tq_dslash_reduce_blocks_limit = nblocks > 0 ? nblocks : 0; }
