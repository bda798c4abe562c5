#include "tq_test.h"
int main(void) { return tq_test_skip("test_lattice", "not written yet"); }
