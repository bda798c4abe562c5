/* The generic stencil layer: what every nearest-neighbour operator on a lattice's blocks
 * shares (the Wilson and clover hopping term now; the improved staggered operator, three
 * sites deep, and the multigrid coarse operator later). A stencil holds, per block and per
 * split direction (one the block grid cuts: rank boundaries included), a lower and an upper
 * face buffer of `depth` layers of one parity's sites; it knows each block's neighbours,
 * and it submits one application in the order faces need: every block's pack task first
 * (they gate the neighbours), then per block its interior task and, reading the faces of
 * the blocks next to it, its exterior task. An operator supplies the per-block insert calls
 * (tq_stencil_ops); in place (tq_stencil_mode) the interior task reads the neighbour
 * blocks' data where it is (the operator names the handles) and there is no pack or
 * exterior task, or the exterior task does so where the operator keeps the two parts.
 * Applications use two sets of faces in turn, so that packing the next application's
 * faces need not wait until every neighbour has read this one's: no owner's chain task
 * then holds another's pack back (tasks/submit.c), and a block's next pack, which follows
 * its own exterior, can share that exterior's chain task. */
#ifndef TQ_STENCIL_H
#define TQ_STENCIL_H

#include "core/field_internal.h"
#include "core/peer.h"

/* Peer faces (tq_stencil_use_peer_faces): per face (faces[]'s index), its buffer in the
 * reader's GPU memory (NULL: a StarPU handle carries it), the counter the reader waits on
 * (in its memory) and the one the writer waits on before packing it again (in the
 * writer's), and the units' memory behind them (core/peer.h). */
typedef struct tq_stencil_peer {
    void **buf;
    uint32_t **ready, **consumed;
    tq_peer_memory mem;
    int counted;   /* in its lattice's peer_stencils */
    unsigned char *all_peer;   /* per block: every face it writes is a peer face (decided from
                                  the blocks' units alone, the same on every rank) */
} tq_stencil_peer;

typedef struct tq_stencil {
    const tq_lattice *lat;
    int depth;                     /* layers of sites in a face */
    int prec, reals;               /* a face site: reals reals of prec bytes */
    int split[4];                  /* directions the block grid cuts */
    int nsplit, nfaces;            /* nfaces = 2 nsplit per block */
    starpu_data_handle_t *faces;   /* two sets, [set][b * nfaces + 2 k + side]: k-th split direction,
                                      side 0: the block's lower face (read by the block below),
                                      1: upper */
    unsigned *turn;                /* applications so far: they use the two sets in turn */
    unsigned *packed;              /* per block, n + 1 when application n's faces were packed
                                      ahead (TQ_STENCIL_PACK_NEXT), else 0 */
    tq_stencil_peer *peer;         /* NULL: every face is a StarPU handle */
} tq_stencil;

/* Faces of `depth` layers of one parity's sites, each site `reals` reals stored in
 * precision prec (bytes per real 8, 4 or 2; the face layout of kernels/field_layout.h). */
tq_status tq_stencil_create(const tq_lattice *lat, int depth, int prec, int reals, tq_stencil *st);
void tq_stencil_destroy(tq_stencil *st);   /* unregisters once pending tasks end */

/* Peer faces, for operators whose pack and exterior codelets follow face_sync.h (Wilson,
 * clover): a face between blocks owned by two peer units (core/peer.h: two GPUs of this
 * process that reach each other's memory, or the GPUs of two ranks of one node, through
 * CUDA IPC) is written by the pack kernel straight into the reader's GPU and ordered
 * by counters on the two streams (face_sync.h), not by StarPU: an exterior waits on its
 * GPU for the face, not for StarPU to see the pack task end and let the exterior go (35-150
 * us per crossing on four H200s, doc/design.md). Each GPU's tasks then go to StarPU in the
 * order they were recorded (tq_task_sequence_worker): a stream wait only ever waits for
 * work recorded before it, so no GPU waits on one that waits on it. Returns 1 when some
 * face is a peer face, 0 when peer mode does not apply (tq_internal_peer_units), or a
 * negative error. Across ranks collective (every rank calls it for the same stencil).
 * Applications must be submitted by one thread at a time. */
int tq_stencil_use_peer_faces(tq_stencil *st);

/* Sites of one parity in one layer of block b's face perpendicular to mu. */
int64_t tq_stencil_face_sites(const tq_stencil *st, int mu);
/* The block `step` (-1 below, +1 above, periodic) from block b in mu. */
int tq_stencil_neighbour(const tq_stencil *st, int b, int mu, int step);
/* Whether block b's lower (side 0) or upper (side 1) face in mu is the lattice's boundary
 * (where the boundary condition's phase applies). */
int tq_stencil_at_boundary(const tq_stencil *st, int b, int mu, int side);

/* The per-block insert calls of one application (0 or a StarPU error). */
typedef struct tq_stencil_ops {
    /* block b's faces (nfaces handles, written) from its data; sync (NULL: none) the peer
     * faces' order, whose handles are NULL */
    int (*pack)(void *ctx, int b, starpu_data_handle_t *faces, const tq_face_sync *sync);
    /* the in-place neighbours' handles for direction mu: below and above are the blocks
     * next to b; returns how many it wrote to out (direct only) */
    int (*neighbours)(void *ctx, int b, int mu, int below, int above, starpu_data_handle_t *out);
    /* block b's interior (in place: every site, nbr the neighbours' handles) */
    int (*interior)(void *ctx, int b, starpu_data_handle_t *nbr, int nnbr);
    /* block b's exterior from the faces it reads (nfaces handles: per split direction the
     * block below's upper face, then the block above's lower face; sync as for pack);
     * TQ_STENCIL_IN_PLACE_PARTS: no faces (from NULL, nfrom 0), the part of the face sites
     * that the interior kept apart. ahead (NULL but with TQ_STENCIL_PACK_NEXT): the exterior
     * also packs block b's faces of the next application, all peer faces, in the order
     * ahead gives (as pack's sync) */
    int (*exterior)(void *ctx, int b, starpu_data_handle_t *from, int nfrom, const tq_face_sync *sync,
                    const tq_face_sync *ahead);
    /* TQ_STENCIL_PACK_NEXT, TQ_STENCIL_PACKED, TQ_STENCIL_BANDS (0: none) */
    unsigned ahead;
    /* block b's interior in one band (TQ_BAND_DEEP or TQ_BAND_RIM of
     * kernels/dslash_wilson_site.h), the deep one's sites in t planes [t0, t1) (equal: all
     * of them); NULL: the operator has no bands */
    int (*interior_band)(void *ctx, int b, int band, int t0, int t1);
} tq_stencil_ops;
/* Packing ahead (peer faces only): the caller's next application of this stencil reads what
 * this one writes, with the same pack (M_pc's second hop: its input is the first hop's
 * output, the same dagger and links), so this application's exteriors, which compute the
 * face sites, may pack the next one's faces themselves: the pack is then off the critical
 * path between GPUs (doc/design.md). The next application says TQ_STENCIL_PACKED and
 * submits no pack for the blocks whose faces were so packed (those whose faces are all
 * peer faces; the same blocks on every rank). TQ_PACK_AHEAD=0: never, for comparisons. */
#define TQ_STENCIL_PACK_NEXT 1u
#define TQ_STENCIL_PACKED 2u
/* An interior in bands (with peer faces, every split extent at least 6; through faces
 * only): the deep sites, whose neighbours are all off the split faces, then the rim. The
 * input of M_pc's second hop is the first hop's output: its deep band needs only the
 * first hop's interior, so on a GPU it runs beside the first hop's exterior, which waits
 * for the other GPUs' faces; the rim and the exterior need that exterior
 * (codelets/chain.c; doc/design.md). The same bits: the sites are only partitioned.
 * TQ_BANDS=0: one interior task; TQ_DEEP_EARLY=N: the deep band as two tasks, N t planes
 * and then, after the rim and the exterior, the rest (stencil.c, deep_planes). */
#define TQ_STENCIL_BANDS 4u
/* Bands (tests): 1 wherever TQ_STENCIL_BANDS asks, peer faces or not; 0 never; -1 as the
 * environment says. And the interiors submitted in bands so far. */
void tq_internal_force_bands(int on);
long tq_internal_stencil_banded(void);
/* Exterior tasks submitted so far that pack ahead (the tests check that it happens). */
long tq_internal_stencil_packs_ahead(void);
#define TQ_STENCIL_MAX_NEIGHBOURS 16   /* in-place handles per direction and block, at most */

/* How an application reaches the neighbour blocks (in place: only blocks of one worker
 * on one rank). */
typedef enum tq_stencil_mode {
    TQ_STENCIL_FACES = 0,        /* pack, interior, exterior from the faces */
    TQ_STENCIL_IN_PLACE = 1,     /* one interior task per block, every site */
    TQ_STENCIL_IN_PLACE_PARTS = 2   /* in place, the face sites' part (a reduction's) kept
                                       apart by the interior and finished by an exterior task
                                       without faces: the two parts as through faces */
} tq_stencil_mode;

/* Submits one application; who names the caller in the error. */
tq_status tq_stencil_submit(const tq_stencil *st, tq_stencil_mode mode, const tq_stencil_ops *ops, void *ctx,
                            const char *who);

#endif
