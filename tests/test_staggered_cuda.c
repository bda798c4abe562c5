/* test_staggered with the blocks on a GPU (skips where there is none). */
#define TQ_TEST_CUDA 1
#include "test_staggered.c"
