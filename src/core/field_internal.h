/* Lattice and field internals shared by the library's host code (src/). */
#ifndef TQ_FIELD_INTERNAL_H
#define TQ_FIELD_INTERNAL_H

#include "core/tq_internal.h"
#include "core/placement.h"
#include "kernels/field_layout.h"

#include <starpu.h>

/* Blocks are numbered over the whole lattice (x fastest); nb: the global block grid, nbl:
 * the blocks of one rank per direction. Every rank knows every block and submits every
 * block's tasks (tasks/ runs a task only on the rank that owns what it writes). */
struct tq_lattice {
    int dims[4], procs[4], coords[4], rank;   /* rank: in its grid (its group's, when over a group) */
    int group_ranks, group, rank_base;   /* its group of ranks (all of them: one group, base 0) */
    int comm;            /* its collectives' communicator (tq_internal_group_comm; 0: all ranks) */
    int local[4], block[4], nb[4], nbl[4];
    int nblocks, nlocal_blocks;   /* global; this rank's */
    int64_t local_volume, block_volume, block_cb;   /* block_cb: sites of one parity */
    int nfields;                                    /* live fields (destroy order check) */
    int peer_stencils;   /* its stencils in peer mode (core/stencil.h): the same on every rank */
    tq_where where;      /* its blocks' placement; TQ_WHERE_ANY: the process's (tq_set_placement) */
};

struct tq_field {
    tq_lattice *lat;
    tq_field_params p;
    int nparity;               /* 1 (single-parity spinor) or 2 */
    int parity[2];             /* the parities held, in handle order */
    tq_layout layout;          /* per block and parity; stride = block_cb * rows */
    int rows;                  /* coarse fields: a site's ndof complex are ndof / 12 rows of
                                  24 reals, row j of site s stored as site j block_cb + s of
                                  a 24-real layout (BLAS kernels see spinor-sized sites);
                                  other fields: 1 */
    starpu_data_handle_t *h;   /* h[b * nparity + i] */
};

static inline starpu_data_handle_t tq_field_handle(const tq_field *f, int block, int i)
{
    return f->h[block * f->nparity + i];
}

/* Where row j (reals 24 j .. 24 j + 23) of site s of one block and parity is stored: the
 * site index in the field's layout. */
static inline int64_t tq_field_row(const tq_field *f, int64_t s, int j)
{
    return (int64_t)j * f->lat->block_cb + s;
}

/* Block b's coordinates in the global block grid. */
static inline void tq_block_grid_coords(const tq_lattice *lat, int b, int bc[4])
{
    for (int mu = 0; mu < 4; mu++) { bc[mu] = b % lat->nb[mu]; b /= lat->nb[mu]; }
}

/* The ranks lat is distributed over (1: one process's lattice, or a group of one): its
 * data and its collectives involve other ranks only when this is more than 1. */
static inline int tq_lattice_nprocs(const tq_lattice *lat)
{
    return lat->procs[0] * lat->procs[1] * lat->procs[2] * lat->procs[3];
}

/* Collectives over the ranks lat is distributed over (its group's communicator): none
 * for one rank's lattice (a group of one is this rank's alone; other ranks may be doing
 * other work). */
static inline tq_status tq_lattice_status_agree(const tq_lattice *lat, tq_status st)
{
    return tq_lattice_nprocs(lat) > 1 ? tq_internal_status_agree_on(lat->comm, st) : st;
}
static inline void tq_lattice_allreduce_sum(const tq_lattice *lat, double *v, int n)
{
    if (tq_lattice_nprocs(lat) > 1) tq_internal_allreduce_sum_on(lat->comm, v, n);
}
static inline uint64_t tq_lattice_allreduce_min_u64(const tq_lattice *lat, uint64_t v)
{
    return tq_lattice_nprocs(lat) > 1 ? tq_internal_allreduce_min_u64_on(lat->comm, v) : v;
}

/* The rank that owns block b (its local volume holds the block). */
static inline int tq_block_rank(const tq_lattice *lat, int b)
{
    int bc[4], r = 0;
    tq_block_grid_coords(lat, b, bc);
    for (int mu = 3; mu >= 0; mu--) r = r * lat->procs[mu] + bc[mu] / lat->nbl[mu];
    return r;
}

static inline int tq_block_is_local(const tq_lattice *lat, int b) { return tq_block_rank(lat, b) == lat->rank; }

/* The same rank's number among all running ranks (tasks/ and MPI name ranks so). */
static inline int tq_block_global_rank(const tq_lattice *lat, int b) { return lat->rank_base + tq_block_rank(lat, b); }

/* The ranks of lat's group, a bit per rank (0: every rank: one group of all of them) —
 * those that run its tasks that are every rank's (tq_task_options.ranks). */
static inline uint64_t tq_lattice_rank_set(const tq_lattice *lat)
{
    if (lat->rank_base == 0 && lat->group == 0 && lat->group_ranks >= tq_internal_mpi_size()) return 0;
    const uint64_t ones = lat->group_ranks >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << lat->group_ranks) - 1;
    return ones << lat->rank_base;
}

/* Block b's number among its rank's blocks (x fastest): owners inside a rank go by it. */
static inline int tq_block_local_index(const tq_lattice *lat, int b)
{
    int bc[4], i = 0;
    tq_block_grid_coords(lat, b, bc);
    for (int mu = 3; mu >= 0; mu--) i = i * lat->nbl[mu] + bc[mu] % lat->nbl[mu];
    return i;
}

/* Local site (x fastest, this rank's coordinates) -> global block, parity and index within
 * the block's parity subset. */
static inline void tq_lattice_locate(const tq_lattice *lat, const int x[4], int *block,
                                     int *parity, int64_t *cb)
{
    int xb[4], xi[4];
    for (int mu = 0; mu < 4; mu++) {
        int g = lat->coords[mu] * lat->local[mu] + x[mu];
        xb[mu] = g / lat->block[mu];
        xi[mu] = g % lat->block[mu];
    }
    *block = ((xb[3] * lat->nb[2] + xb[2]) * lat->nb[1] + xb[1]) * lat->nb[0] + xb[0];
    /* Block extents are even, so a block's origin has even coordinate sum and the
     * parity inside it is the global parity. */
    *parity = (x[0] + x[1] + x[2] + x[3]) & 1;
    int64_t lex = (((int64_t)xi[3] * lat->block[2] + xi[2]) * lat->block[1] + xi[1]) * lat->block[0] + xi[0];
    *cb = lex / 2;
}

/* Checks kind/subset/lattice agreement of BLAS operands (a spinor field and a coarse field of
 * 12 complex per site agree: the same buffers site for site). */
tq_status tq_field_check_compatible(const char *who, const tq_field *a, const tq_field *b,
                                    int same_precision);
int tq_field_kind_is_vector(tq_field_kind k);
/* Parity p's half of full vector field f as a single-parity field sharing f's handles (not
 * registered again): the BLAS and the parity operators take it as any field of subset p.
 * Released by tq_field_view_release only, never tq_field_destroy; valid while f lives. */
tq_status tq_field_parity_view(const tq_field *f, int p, tq_field **out);

/* A buffer (vector handle h) read or written by the host where its owner computes: begin
 * acquires it in the memory of `worker` (its GPU's for a CUDA worker; main memory for a CPU
 * worker or none) and sets a->host: the buffer itself in main memory, else the process's
 * staging buffer (page-locked, kept between accesses) holding, when
 * reading, a copy of the GPU's; one access holds it at a time, from begin to end. end copies
 * a written staging to the GPU and releases h. A GPU-owned buffer so gets no StarPU buffer
 * in main memory, whose accounting there may allow far less than the host has (5-8 GB of
 * 128 on the GPU machine) and, once full, stalls every transfer. */
typedef struct tq_host_access {
    starpu_data_handle_t h;
    unsigned node;
    int device, write;   /* device: the GPU, or -1 (main memory) */
    void *buf, *host;
    size_t bytes;
} tq_host_access;
tq_status tq_host_access_begin(tq_host_access *a, starpu_data_handle_t h, int worker, int write);
tq_status tq_host_access_end(tq_host_access *a);
void tq_field_view_release(tq_field *v);
/* dst = src in dst's precision: fields of one lattice, kind, sites and (gauge) compression,
 * on the blocks' owners (tasks: no trip through the host; a sloppy operator's links and
 * clover terms). Every real rounded as an export to the host and an import from it would
 * round it: gauge links of 18 and 12 reals bitwise as that trip; recon 8's parameters are
 * copied, not rebuilt from the links. */
tq_status tq_internal_field_convert(tq_field *dst, const tq_field *src);
/* f = uniform random reals in (-1, 1) (codelets/random_field.h), made by tasks on the blocks'
 * owners: each real a function of seed, stream and the global site only, the same bits on
 * every device, decomposition and rank grid. Vector fields (spinor, coarse). */
tq_status tq_internal_field_random(tq_field *f, uint64_t seed, uint32_t stream);
/* One site's four links: the host's 4 x 18 reals <-> the stored recon x 4 (18, 12 or 8
 * reals per link; src/core/gauge_field.c). */
void tq_gauge_pack_site(int recon, const double *links72, double *stored);
void tq_gauge_unpack_site(int recon, const double *stored, double *links72);

#endif
