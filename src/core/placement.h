/* Placement (src/core/placement.c): the options every task submission of the library
 * carries down to tasks/. */
#ifndef TQ_PLACEMENT_H
#define TQ_PLACEMENT_H

#include "tq_tasks.h"

/* The options of a submission now: the placement of tq_set_placement, no priority shift. */
tq_task_options tq_internal_task_options(void);
/* Back to TQ_WHERE_ANY (tq_init). */
void tq_internal_placement_reset(void);

#endif
