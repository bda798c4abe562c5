/* GPU time of each chain entry, for the performance models (TQ_ENTRY_TIMES=1; CUDA builds).
 *
 * Why: StarPU times a task on the host, launch and synchronisation included (10-20 us per
 * task on an H200), while a chain runs its entries' kernels back to back on the GPU, so
 * models calibrated from tasks alone price what a chain does not pay. SimGrid's predictions
 * of the default path (chains on every owner) need each codelet's GPU time instead
 * (bench/simgrid-calibrate.sh). With TQ_ENTRY_TIMES=1 a chain runs its entries one after
 * the other on the worker's stream, each behind a short spin kernel, so that the entry's
 * kernels are all queued before its start event fires, and records each entry's time
 * between two events into the entry codelet's history model, under the footprint a task of
 * that codelet alone would have. Measuring only: the chain's results do not change. */
#ifndef TQ_ENTRY_TIMES_H
#define TQ_ENTRY_TIMES_H

#include <starpu.h>
#include "chain.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Whether TQ_ENTRY_TIMES=1 (read once). */
int tq_entry_times_on(void);
/* Before entry op of the running chain task (its buffer map: map): the spin kernel and
 * the start event on the worker's stream. */
void tq_entry_times_begin(void);
/* After it: the end event; the entry is remembered with its handles and argument. */
void tq_entry_times_end(const tq_chain_op *op, const int16_t *map, void *arg);
/* At the chain's end: waits for the worker's stream and records every remembered entry's
 * time into its codelet's model. */
void tq_entry_times_flush(void);

#ifdef __cplusplus
}
#endif

#endif
