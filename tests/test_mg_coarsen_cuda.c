/* test_mg_coarsen with a GPU beside the CPU workers (skips where there is none). */
#define TQ_TEST_CUDA 1
#include "test_mg_coarsen.c"
