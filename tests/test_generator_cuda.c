/* test_generator on CUDA workers (skips where there are none). */
#define TQ_TEST_CUDA 1
#include "test_generator.c"
