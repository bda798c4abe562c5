#include "tq_test.h"
int main(void) { return tq_test_skip("test_blas", "not written yet"); }
