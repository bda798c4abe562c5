/* Where tasks run: the process-wide placement (tq_set_placement) and the options every
 * task submission of the library carries down to tasks/ (tq_task_options), so that the
 * insert functions never reach back up for it. Owners of blocks (which worker or rank
 * computes a block) will be decided here too. */
#include "core/tq_internal.h"
#include "core/placement.h"

#include <starpu.h>

static tq_where placement = TQ_WHERE_ANY;

void tq_internal_placement_reset(void) { placement = TQ_WHERE_ANY; }

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
    return (tq_task_options){.where = placement, .priority = 0};
}
