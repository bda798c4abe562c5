/* Where tasks run: the process-wide placement (tq_set_placement), the owner of each block
 * (the worker that runs every task writing the block's data: owner computes, so a block
 * stays in one memory instead of moving between GPUs with every task), and the options
 * every task submission of the library carries down to tasks/ (tq_task_options), so that
 * the insert functions never reach back up for them. */
#include "core/tq_internal.h"
#include "core/placement.h"
#include "core/field_internal.h"

#include <limits.h>
#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static tq_where placement = TQ_WHERE_ANY;
/* The submitting thread's system slot (tq_internal_placement_system): -1, blocks go to
 * their owners in turn; k >= 0, every block to owner k (one system on one owner). */
static _Thread_local int system_slot = -1;

/* The workers blocks may be given to, found once per runtime (tq_init resets them). */
enum { MAX_OWNERS = 64 };
static struct {
    int known, ncuda, ncpu, pin_cpu, off;
    int cuda[MAX_OWNERS], cpu[MAX_OWNERS];
} owners;

void tq_internal_placement_reset(void)
{
    placement = TQ_WHERE_ANY;
    owners.known = 0;
}

void tq_internal_pin_cpu_owners(int on) { owners.pin_cpu = on; }

static void find_owners(void)
{
    if (owners.known) return;
    owners.ncuda = (int)starpu_worker_get_ids_by_type(STARPU_CUDA_WORKER, owners.cuda, MAX_OWNERS);
    owners.ncpu = (int)starpu_worker_get_ids_by_type(STARPU_CPU_WORKER, owners.cpu, MAX_OWNERS);
    /* TQ_OWNERS=0 leaves blocks to the scheduler, as before owner computes: only for
     * experiments (the simulated stalls in doc/design.md). Not bitwise: a reduction's
     * combine may then run on a CPU or a GPU, which round its scalar program differently */
    const char *env = getenv("TQ_OWNERS");
    owners.off = env && !strcmp(env, "0");
    owners.known = 1;
}

/* The placement of lat's blocks: its own, else the process's (no lattice: the process's). */
static tq_where placement_of(const tq_lattice *lat)
{
    return lat && lat->where != TQ_WHERE_ANY ? lat->where : placement;
}

/* Block b's owner under placement pl: with GPUs allowed, the GPUs in turn (one
 * block per GPU by default, tq_lattice); CPU workers share one memory, so CPU blocks have
 * no owner (any CPU worker may take them) unless tests pin them (tq_internal_pin_cpu_owners).
 * Where the placement leaves one GPU and nothing else, no owner either (the scheduler has
 * no choice to make, and a worker set costs StarPU's policies a check per task), except
 * for data distributed over ranks (nranks > 1): peer mode between ranks (core/peer.h)
 * orders each rank's GPU tasks by its owner's sequencer. */
static int block_owner(tq_where pl, int b, int nranks)
{
    if (!tq_is_initialized()) return -1;
    find_owners();
    if (owners.off) return -1;
    const int k = system_slot >= 0 ? system_slot : b;
    const int gpus = pl != TQ_WHERE_CPU && owners.ncuda > 0;
    const int cpus_too = pl == TQ_WHERE_ANY && owners.ncpu > 0;
    /* a lattice placed on GPUs against the process's placement keeps owners (its level's
     * tasks must not stray to CPU workers, which the process's placement allows) */
    const int lattice_own = pl != placement;
    if (gpus && (owners.ncuda > 1 || cpus_too || lattice_own || nranks > 1))
        return owners.cuda[k % owners.ncuda];
    if (!gpus && pl != TQ_WHERE_CUDA && owners.pin_cpu && owners.ncpu > 0) return owners.cpu[k % owners.ncpu];
    return -1;
}

/* The owners blocks go to in turn under placement pl, for data over nranks ranks (0: no
 * owners). */
static int owner_count(tq_where pl, int nranks)
{
    if (!tq_is_initialized()) return 0;
    find_owners();
    if (owners.off) return 0;
    const int gpus = pl != TQ_WHERE_CPU && owners.ncuda > 0;
    const int cpus_too = pl == TQ_WHERE_ANY && owners.ncpu > 0;
    if (gpus) return owners.ncuda > 1 || cpus_too || pl != placement || nranks > 1 ? owners.ncuda : 0;
    return pl != TQ_WHERE_CUDA && owners.pin_cpu ? owners.ncpu : 0;
}

void tq_internal_placement_system(int slot) { system_slot = slot; }
int tq_internal_placement_system_slot(void) { return system_slot; }

int tq_internal_system_slots(const tq_lattice *lat, int nsystems, double system_bytes, double shared_bytes)
{
    const tq_where pl = placement_of(lat);
    const int nown = owner_count(pl, tq_lattice_nprocs(lat));
    if (nsystems < 2 || nown < 2) return 0;
    const char *env = getenv("TQ_SYSTEM_OWNERS");   /* 0: every system over the blocks' owners */
    if (env && env[0] == '0') return 0;
    /* a system split over more owners than it has systems beside it gains nothing: with as
     * many systems as owners (or blocks too few to give each owner one), each its own */
    if (nsystems < nown && lat->nlocal_blocks >= nown) return 0;
    const int slots = nsystems < nown ? nsystems : nown;
    if (pl != TQ_WHERE_CPU && owners.ncuda > 0) {
        /* the systems one GPU would hold, and a copy of what they share, must fit in it */
        const int per_owner = (nsystems + slots - 1) / slots;
        for (int i = 0; i < slots; i++) {
            const starpu_ssize_t total = starpu_memory_get_total(starpu_worker_get_memory_node(owners.cuda[i]));
            if (total > 0 && per_owner * system_bytes + shared_bytes > 0.8 * (double)total) return 0;
        }
    }
    return slots;
}

int tq_internal_systems_fitting(const tq_lattice *lat, double system_bytes, double shared_bytes)
{
    /* TQ_SYSTEMS_AT_ONCE=N: at most N (tests show that grouping leaves the results' bits) */
    const char *env = getenv("TQ_SYSTEMS_AT_ONCE");
    const int cap = env && atoi(env) > 0 ? atoi(env) : INT_MAX;
    if (!tq_is_initialized() || system_bytes <= 0) return cap;
    find_owners();
    const tq_where pl = placement_of(lat);
    if (pl == TQ_WHERE_CPU || owners.ncuda == 0) return cap;
    /* the GPUs lat's blocks go to share each system (one GPU where there are no owners) */
    const int ngpus = owners.off || owner_count(pl, tq_lattice_nprocs(lat)) == 0 ? 1 : owners.ncuda;
    double smallest = 0;
    for (int i = 0; i < ngpus; i++) {
        const starpu_ssize_t total = starpu_memory_get_total(starpu_worker_get_memory_node(owners.cuda[i]));
        if (total > 0 && (smallest == 0 || (double)total < smallest)) smallest = (double)total;
    }
    if (smallest == 0) return cap;
    /* half of the memory: StarPU's caches, the operators' work fields and what the caller
     * keeps beside (a multigrid set-up's bases) have the rest */
    const double room = 0.5 * smallest - shared_bytes / ngpus;
    const double fit = room / (system_bytes / ngpus);
    return fit < 1 ? 1 : fit >= cap ? cap : (int)fit;
}

tq_status tq_set_placement(tq_where w)
{
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_set_placement: call tq_init first");
    if (w != TQ_WHERE_ANY && w != TQ_WHERE_CPU && w != TQ_WHERE_CUDA)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_set_placement: unknown placement %d", (int)w);
    if (w == TQ_WHERE_CUDA && starpu_cuda_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_set_placement: no CUDA worker is running");
    if (w == TQ_WHERE_CPU && starpu_cpu_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_set_placement: no CPU worker is running");
    placement = w;
    return TQ_SUCCESS;
}

tq_where tq_get_placement(void) { return placement; }

tq_task_options tq_internal_task_options(void)
{
    return (tq_task_options){.where = placement, .priority = 0, .worker = -1, .rank = -1};
}

tq_task_options tq_internal_reduction_options(const tq_lattice *lat)
{
    /* every rank combines all blocks' partial sums itself, in block order */
    const tq_where pl = placement_of(lat);
    return (tq_task_options){.where = pl, .priority = 0, .worker = block_owner(pl, 0, tq_lattice_nprocs(lat)), .rank = -1,
                             .ranks = tq_lattice_rank_set(lat)};
}

int tq_internal_blocks_share_worker(const tq_lattice *lat)
{
    if (lat->nlocal_blocks == 1) return 1;
    if (!tq_is_initialized()) return 0;
    find_owners();
    const tq_where pl = placement_of(lat);
    const int nranks = tq_lattice_nprocs(lat), w0 = block_owner(pl, 0, nranks);
    for (int i = 1; i < lat->nlocal_blocks; i++)
        if (block_owner(pl, i, nranks) != w0) return 0;
    if (w0 >= 0) return 1;
    /* no owner: the placement leaves the scheduler one worker, or several to share out */
    const int n = (pl != TQ_WHERE_CPU ? owners.ncuda : 0) + (pl != TQ_WHERE_CUDA ? owners.ncpu : 0);
    return n == 1;
}

int tq_internal_blocks_owned(const tq_lattice *lat)
{
    if (!tq_is_initialized()) return 0;
    find_owners();
    for (int i = 0; i < lat->nlocal_blocks; i++)
        if (block_owner(placement_of(lat), i, tq_lattice_nprocs(lat)) < 0) return 0;
    return 1;
}

int tq_internal_lattice_can_chain(const tq_lattice *lat)
{
    return tq_internal_blocks_share_worker(lat) || tq_internal_blocks_owned(lat);
}

void tq_internal_chain_begin(int on)
{
    if (on) tq_task_chain_begin();
}

tq_status tq_internal_chain_end(int on, tq_status st, const char *who)
{
    if (!on) return st;
    const int ret = tq_task_chain_end();
    return ret && st == TQ_SUCCESS ? tq_error(TQ_ERR_RUNTIME, "%s: submitting a chain of tasks failed (%d)", who, ret) : st;
}

int tq_internal_peer_gpus(const tq_lattice *lat, int *dev, int *worker)
{
#ifndef TQ_HAVE_CUDA
    (void)lat; (void)dev; (void)worker;
    return 0;
#else
    const char *env;
    if (((env = getenv("TQ_PEER")) && env[0] == '0') || ((env = getenv("TQ_FACE_SETS")) && env[0] == '1'))
        return 0;
    if (tq_lattice_nprocs(lat) != 1 || lat->nblocks > TQ_PEER_MAX_BLOCKS)
        return 0;
    int d[TQ_PEER_MAX], w[TQ_PEER_MAX], n = 0;
    for (int b = 0; b < lat->nblocks; b++) {
        const int wb = tq_internal_block_options(lat, b).worker;
        if (wb < 0 || starpu_worker_get_type(wb) != STARPU_CUDA_WORKER) return 0;
        int k = 0;
        while (k < n && w[k] != wb) k++;
        if (k < n) continue;
        if (n == TQ_PEER_MAX) return 0;
        w[n] = wb;
        d[n] = starpu_worker_get_devid(wb);
        for (int j = 0; j < n; j++)
            if (d[j] == d[n]) return 0;   /* two workers on one GPU */
        n++;
    }
    if (n < 2) return 0;
    for (int k = 0; k < n; k++)
        for (int j = 0; j < n; j++)
            if (j != k && !tq_cuda_peer_enable(d[k], d[j])) return 0;
    for (int k = 0; k < n; k++) {
        if (dev) dev[k] = d[k];
        if (worker) worker[k] = w[k];
    }
    return n;
#endif
}

tq_status tq_lattice_peer_gpus(const tq_lattice *lat, int *ngpus)
{
    if (!lat || !ngpus) return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_peer_gpus: NULL argument");
    *ngpus = tq_is_initialized() ? tq_internal_peer_gpus(lat, NULL, NULL) : 0;   /* no workers yet: none */
    return TQ_SUCCESS;
}

/* Block local_index of rank `rank` (among all ranks) of data over nranks ranks (mine: this
 * process's block) under placement pl: inside a rank, the same owners for every
 * decomposition (its first block on the first GPU, ...). Data of one rank (nranks 1: one
 * process's, or a lattice of a group of one) has no rank: the process runs the task on its
 * own copy, so none ever moves between ranks. */
static tq_task_options part_options(tq_where pl, int local_index, int rank, int nranks, int mine)
{
    return (tq_task_options){.where = pl, .priority = 0, .worker = mine ? block_owner(pl, local_index, nranks) : -1,
                             .rank = nranks > 1 ? rank : -1};
}

tq_task_options tq_internal_block_options(const tq_lattice *lat, int block)
{
    tq_task_options o = part_options(placement_of(lat), tq_block_local_index(lat, block), tq_block_global_rank(lat, block),
                                     tq_lattice_nprocs(lat), tq_block_is_local(lat, block));
    o.ranks = tq_lattice_rank_set(lat);
    return o;
}

tq_task_options tq_internal_block_options_cpu(const tq_lattice *lat, int block)
{
    tq_task_options o = tq_internal_block_options(lat, block);
    if (o.worker >= 0 && starpu_worker_get_type(o.worker) != STARPU_CPU_WORKER) o.worker = -1;
    o.where = TQ_WHERE_CPU;
    return o;
}

/* Why not main memory whenever a block has no owner (one GPU and nothing else): StarPU
 * accounts main memory from hwloc, which in the GPU machine's sandbox reports a few GB of
 * 128; the 12 solutions of a 32^4 propagator exported through main memory filled that, and
 * the next export waited for ever for memory StarPU could not free. */
int tq_internal_access_worker(tq_task_options o, int index, starpu_data_handle_t h, int write)
{
    if (o.worker >= 0 || !tq_is_initialized()) return o.worker;
    find_owners();
    if (owners.ncuda == 0) return -1;
    if (write)
        return o.where == TQ_WHERE_CUDA ? owners.cuda[index % owners.ncuda] : -1;
    if (starpu_data_is_on_node(h, STARPU_MAIN_RAM)) return -1;
    for (int i = 0; i < owners.ncuda; i++)
        if (starpu_data_is_on_node(h, starpu_worker_get_memory_node(owners.cuda[i]))) return owners.cuda[i];
    return -1;
}

tq_status tq_internal_lattice_set_placement(tq_lattice *lat, tq_where w, const char *who)
{
    if (w != TQ_WHERE_ANY && w != TQ_WHERE_CPU && w != TQ_WHERE_CUDA)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown placement %d", who, (int)w);
    if (w == TQ_WHERE_CUDA && starpu_cuda_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: placed on CUDA workers, but none is running", who);
    if (w == TQ_WHERE_CPU && starpu_cpu_worker_get_count() == 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "%s: placed on CPU workers, but none is running", who);
    lat->where = w;
    return TQ_SUCCESS;
}

tq_status tq_lattice_block_owner(const tq_lattice *lat, int block, int *rank, char *owner, size_t owner_len)
{
    if (!lat || !rank || (owner && owner_len == 0))
        return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_block_owner: NULL argument");
    if (block < 0 || block >= lat->nblocks)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_lattice_block_owner: block %d outside 0..%d", block, lat->nblocks - 1);
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_lattice_block_owner: call tq_init first");
    *rank = tq_block_global_rank(lat, block);
    if (!owner) return TQ_SUCCESS;
    if (!tq_block_is_local(lat, block)) {
        snprintf(owner, owner_len, "rank %d", *rank);   /* among all ranks */
        return TQ_SUCCESS;
    }
    const int w = tq_internal_block_options(lat, block).worker;
    if (w >= 0) starpu_worker_get_name(w, owner, owner_len);
    else snprintf(owner, owner_len, "%s", placement_of(lat) == TQ_WHERE_CPU ? "any CPU worker"
                                        : placement_of(lat) == TQ_WHERE_CUDA ? "any CUDA worker" : "any worker");
    return TQ_SUCCESS;
}
