/* Random vector field codelet (kernels/random_field_site.h): one block and parity of a
 * field filled with uniform random reals where its owner computes. Buffer: the block (W). */
#ifndef TQ_RANDOM_FIELD_H
#define TQ_RANDOM_FIELD_H

#include <starpu.h>
#include "kernels/random_field_site.h"

#ifdef __cplusplus
extern "C" {
#endif

extern struct starpu_codelet tq_cl_random_field;
void tq_random_field_cuda(void *buffers[], void *cl_arg);

#ifdef __cplusplus
}
#endif

#endif
