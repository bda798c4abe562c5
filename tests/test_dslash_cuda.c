/* The dslash tests on CUDA workers (skipped where there are none). */
#define TQ_TEST_CUDA 1
#include "test_dslash.c"
