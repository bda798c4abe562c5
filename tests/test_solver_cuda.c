/* test_solver on CUDA workers (skips without a GPU). */
#define TQ_TEST_CUDA 1
#include "test_solver.c"
