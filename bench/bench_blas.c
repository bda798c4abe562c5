/* BLAS benchmark: effective bandwidth of the BLAS-1 and reduction codelets on large
 * color-spinor fields, next to the device-to-device copy bandwidth measured in the same run
 * (the ceiling). Bytes are counted as QUDA does for BLAS: every field read or written once
 * per call (axpy: x read, y read and written = 3 fields).
 *
 * usage: bench_blas [--dim X Y Z T] [--niter N] [--prec LIST] [--where cuda|cpu|any]
 * default: 64 64 128 128 (2^26 sites), 20 calls, double,single,half, cuda. */
#include "config.h"
#include "taskqcd.h"
#include "cli/cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef TQ_HAVE_CUDA
#include <cuda_runtime.h>
#endif


/* Device-to-device cudaMemcpy of 2 GiB, best of 10: bytes read + written per second. */
static double device_copy_bandwidth(void)
{
#ifdef TQ_HAVE_CUDA
    size_t n = (size_t)2 << 30;
    void *a = NULL, *b = NULL;
    if (cudaMalloc(&a, n) != cudaSuccess || cudaMalloc(&b, n) != cudaSuccess) {
        cudaFree(a);
        return 0.0;
    }
    cudaMemset(a, 1, n);
    cudaEvent_t e0, e1;
    cudaEventCreate(&e0);
    cudaEventCreate(&e1);
    float best = 1e30f;
    for (int i = 0; i < 10; i++) {
        cudaEventRecord(e0, 0);
        cudaMemcpyAsync(b, a, n, cudaMemcpyDeviceToDevice, 0);
        cudaEventRecord(e1, 0);
        cudaEventSynchronize(e1);
        float ms;
        cudaEventElapsedTime(&ms, e0, e1);
        if (ms < best) best = ms;
    }
    cudaEventDestroy(e0);
    cudaEventDestroy(e1);
    cudaFree(a);
    cudaFree(b);
    return 2.0 * (double)n / (best * 1e-3) * 1e-9;
#else
    return 0.0;
#endif
}

int main(int argc, char **argv)
{
    tq_init_params p;
    tq_init_params_default(&p);
    if (tq_init_params_from_args(&p, &argc, argv)) { fprintf(stderr, "bench_blas: %s\n", tq_last_error()); return 2; }
    int dims[4] = {64, 64, 128, 128};
    int niter = 20;
    const char *precs = "double,single,half", *where = "cuda";
    const char *ops = "copy,axpy,norm2,rdot,cdot,axpy_norm2,cg_update";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dim")) {
            if (tq_cli_parse_dims(argc, argv, &i, dims)) { fprintf(stderr, "bench_blas: --dim needs 4 positive integers\n"); return 2; }
        } else if (!strcmp(argv[i], "--niter") && i + 1 < argc) {
            if (tq_cli_parse_positive(argv[++i], &niter)) { fprintf(stderr, "bench_blas: --niter needs a positive integer\n"); return 2; }
        }
        else if (!strcmp(argv[i], "--prec") && i + 1 < argc) precs = argv[++i];
        else if (!strcmp(argv[i], "--where") && i + 1 < argc) where = argv[++i];
        else if (!strcmp(argv[i], "--op") && i + 1 < argc) ops = argv[++i];
        else { fprintf(stderr, "bench_blas: unknown option '%s'\n", argv[i]); return 2; }
    }
    if (tq_init(&p)) { fprintf(stderr, "bench_blas: %s\n", tq_last_error()); return 1; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    tq_where w = !strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "any") ? TQ_WHERE_ANY : TQ_WHERE_CUDA;
    if (w == TQ_WHERE_CUDA && ri.ncuda_workers == 0) {
        printf("bench_blas: no CUDA worker; nothing to measure on the GPU (use --where cpu)\n");
        tq_finalize();
        return 0;
    }
    double ceiling = ri.ncuda_workers ? device_copy_bandwidth() : 0.0;
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof dims);
    tq_lattice *lat;
    if (tq_lattice_create(&lp, &lat)) { fprintf(stderr, "bench_blas: %s\n", tq_last_error()); tq_finalize(); return 1; }
    printf("bench_blas: %dx%dx%dx%d = %lld sites, %d calls per op, StarPU %s, %d CPU + %d CUDA workers, placement %s\n",
           dims[0], dims[1], dims[2], dims[3], (long long)dims[0] * dims[1] * dims[2] * dims[3], niter,
           ri.starpu_version, ri.ncpu_workers, ri.ncuda_workers, where);
    if (ceiling > 0) printf("device-to-device copy bandwidth (cudaMemcpy, 2 GiB, best of 10): %.1f GB/s\n", ceiling);
    tq_blas_benchmark_header(stdout, ceiling > 0);
    int rc = 0;
    const char *names[3] = {"double", "single", "half"};
    tq_precision pr[3] = {TQ_DOUBLE, TQ_SINGLE, TQ_HALF};
    for (int k = 0; k < 3 && !rc; k++)
        if (strstr(precs, names[k])) rc = tq_blas_benchmark(lat, pr[k], niter, w, ops, ceiling, stdout);
    tq_lattice_destroy(lat);
    tq_finalize();
    return rc;
}
