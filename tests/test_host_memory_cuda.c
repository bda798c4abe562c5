/* Fields placed on GPUs go in and out of the host without StarPU buffers in main memory.
 *
 * StarPU accounts main memory from hwloc; in the GPU machine's sandbox hwloc reports a few
 * GB of 128, and a 32^4 propagator (`--where cuda`, one GPU: no owners) that exported its 12
 * solutions through StarPU buffers in main memory filled that and waited for ever in the
 * next export (doc/design.md, "Distribution"). Here main memory is limited to 48 MB
 * (STARPU_LIMIT_CPU_MEM) and NFIELDS full double spinor fields of 16^4 (12.6 MB each) are
 * imported, exported, combined by a BLAS task on the GPU and exported again: every export
 * must give the imported bits (and the BLAS result the host's), and the whole must end
 * (a SIGALRM after LIMIT_S seconds fails the test instead of a hang). Skips without a CUDA
 * worker. */
#include "tq_test.h"

#include <signal.h>
#include <unistd.h>

enum { NFIELDS = 8, LIMIT_S = 240 };

static void waited_too_long(int sig)
{
    (void)sig;
    static const char msg[] = "FAIL test_host_memory_cuda: still running after 240 s (waiting for main memory?)\n";
    if (write(STDERR_FILENO, msg, sizeof msg - 1) < 0) _exit(1);
    _exit(1);
}

int main(void)
{
    setenv("STARPU_LIMIT_CPU_MEM", "48", 0);   /* MB; before StarPU starts */
    signal(SIGALRM, waited_too_long);
    alarm(LIMIT_S);
    const int rc = tq_test_init_gpus("test_host_memory_cuda", 1);
    if (rc) return rc == 77 ? 77 : 1;
    CHECK_OK(tq_set_placement(TQ_WHERE_CUDA));
    const int dims[4] = {16, 16, 16, 16};
    tq_lattice *lat = tq_test_lattice(dims, NULL);
    if (!lat) return tq_test_finish("test_host_memory_cuda");
    const int64_t n = (int64_t)16 * 16 * 16 * 16 * 24;
    const tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
    tq_field *f[NFIELDS] = {0};
    double *in[NFIELDS] = {0}, *out = malloc((size_t)n * sizeof *out);
    for (int i = 0; i < NFIELDS; i++) {
        in[i] = malloc((size_t)n * sizeof *in[i]);
        tq_test_fill(in[i], n, 1000 + (uint64_t)i);
        CHECK_OK(tq_field_create(lat, &fp, &f[i]));
        CHECK_OK(tq_field_import(f[i], in[i]));
    }
    int same = 1;
    for (int i = 0; i < NFIELDS; i++) {
        CHECK_OK(tq_field_export(f[i], out));
        same &= memcmp(out, in[i], (size_t)n * sizeof *out) == 0;
    }
    CHECK(same, "every field exported as imported, bit for bit (%d fields of %.1f MB, main memory limited to 48 MB)",
          NFIELDS, (double)n * 8 / 1e6);
    /* f[0] += 0.5 f[1] on the GPU: the export after a GPU task gives the host's sum */
    CHECK_OK(tq_blas_axpy(0.5, f[1], f[0]));
    CHECK_OK(tq_field_export(f[0], out));
    double worst = 0;
    for (int64_t k = 0; k < n; k++) {
        const double e = fabs(out[k] - (in[0][k] + 0.5 * in[1][k]));
        if (!(e <= worst)) worst = e;
    }
    CHECK(worst < 1e-15, "axpy on the GPU, exported: largest error %.3g", worst);
    for (int i = 0; i < NFIELDS; i++) {
        tq_field_destroy(f[i]);
        free(in[i]);
    }
    free(out);
    tq_lattice_destroy(lat);
    tq_finalize();
    alarm(0);
    return tq_test_finish("test_host_memory_cuda");
}
