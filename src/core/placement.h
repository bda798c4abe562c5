/* Placement (src/core/placement.c): the options every task submission of the library
 * carries down to tasks/. */
#ifndef TQ_PLACEMENT_H
#define TQ_PLACEMENT_H

#include "tq_tasks.h"

/* The options of a submission now: the placement of tq_set_placement, no priority shift,
 * no owner (tasks that are not a block's: combining partial sums, scalar programs). */
tq_task_options tq_internal_task_options(void);
/* The options of a task that writes block `block` of lat: the same, run by the block's
 * owner (a GPU when GPUs are allowed; none for CPU blocks unless pinned for tests). */
tq_task_options tq_internal_block_options(const tq_lattice *lat, int block);
/* The same on CPU workers whatever the placement (codelets with no CUDA implementation,
 * work too large for a GPU kernel): the block's owner if that is a CPU worker. */
tq_task_options tq_internal_block_options_cpu(const tq_lattice *lat, int block);
/* The worker in whose memory the host reads (write 0) or writes a block whose task options are o, local index `index` and handle h (tq_host_access): its
 * owner o.worker; with no owner, for a read the GPU that holds the only valid copy, for a
 * write a GPU when o.where allows GPUs only; else -1, main memory. */
int tq_internal_access_worker(tq_task_options o, int index, starpu_data_handle_t h, int write);
/* 1 when every task writing this rank's blocks of lat runs on one and the same worker (one
 * block, blocks with the same owner, or a placement that leaves one worker): their tasks
 * then run one after another anyway, and chains (tasks/tq_tasks.h) lose no parallelism. */
int tq_internal_blocks_share_worker(const tq_lattice *lat);
/* 1 when every one of this rank's blocks of lat has an owner (a worker that runs every task
 * writing it): chains then go per owner (tasks/tq_tasks.h). */
int tq_internal_blocks_owned(const tq_lattice *lat);
/* Whether work on lat's blocks may be recorded into chains: one of the two above. */
int tq_internal_lattice_can_chain(const tq_lattice *lat);
/* Chains (tasks/tq_tasks.h), where on: tasks submitted between begin and end go as one
 * chain task. end returns st, or TQ_ERR_RUNTIME naming who if st was a success and the
 * chain's submission failed. */
void tq_internal_chain_begin(int on);
tq_status tq_internal_chain_end(int on, tq_status st, const char *who);
/* The options of a task that combines the blocks' partial sums of a reduction over lat
 * (and runs a solver's scalar program): block 0's owner runs it, so its arithmetic (and
 * its bits) is the same in every run, and the scalars stay where the blocks' tasks read
 * them. */
tq_task_options tq_internal_reduction_options(const tq_lattice *lat);
/* Several systems of one solve (tq_solve_many) side by side: how many owners to spread
 * them over, one system on one owner (all its blocks there, read in place), or 0 where
 * each system's blocks should go to their owners as usual (fewer systems than owners, one
 * owner, or a system that would not fit in one GPU's memory: system_bytes its own fields,
 * shared_bytes what all systems read, the operators' links and clover terms).
 * TQ_SYSTEM_OWNERS=0 in the environment: 0 always (for comparisons). */
int tq_internal_system_slots(const tq_lattice *lat, int nsystems, double system_bytes, double shared_bytes);
/* How many systems of system_bytes each fit at once in the GPUs lat's work runs on, beside
 * shared_bytes that all of them read: at least 1, INT_MAX where no GPU computes. Solves
 * submitted side by side go in groups of this many (StarPU waits for memory that never frees
 * when in-flight tasks hold all of a GPU's memory). */
int tq_internal_systems_fitting(const tq_lattice *lat, double system_bytes, double shared_bytes);
/* The submitting thread's tasks from now on: every block to owner `slot` of those
 * tq_internal_system_slots counted (slot mod their number), or -1: blocks to their owners. */
void tq_internal_placement_system(int slot);
int tq_internal_placement_system_slot(void);   /* the submitting thread's, or -1 */
/* Peer mode (core/stencil.h: faces, src/blas/blas.c: partial sums, each written by one GPU
 * straight into another's memory and ordered on their streams): the number n of GPUs of
 * lat's blocks when it applies, else 0. It applies when lat is one process's, has at most
 * TQ_PEER_MAX_BLOCKS blocks, every block is owned by a CUDA worker, those are 2 to
 * TQ_PEER_MAX workers each on its own GPU, every two of the GPUs can reach each other's
 * memory, and the environment does not turn it off (TQ_PEER=0 or TQ_FACE_SETS=1; change
 * TQ_PEER only while no operator exists). Faces and partial sums go this way together or
 * not at all: a GPU whose
 * stream waits for another's must never also wait for StarPU to move data between them
 * (doc/design.md). dev[k] and worker[k] (TQ_PEER_MAX each, may be NULL): the GPUs and
 * their workers, in the order of the blocks. */
int tq_internal_peer_gpus(const tq_lattice *lat, int *dev, int *worker);
/* lat's blocks placed on w (CPU or CUDA workers) whatever the process's placement, or (ANY)
 * as the process's: multigrid levels placed apart. Set before any task touches lat's data;
 * errors (who names the caller) for an unknown placement or one without such workers. */
tq_status tq_internal_lattice_set_placement(tq_lattice *lat, tq_where w, const char *who);
/* Tests: CPU blocks owned by CPU workers in turn (1) instead of by none (0). */
void tq_internal_pin_cpu_owners(int on);
/* Back to TQ_WHERE_ANY (tq_init). */
void tq_internal_placement_reset(void);

#endif
