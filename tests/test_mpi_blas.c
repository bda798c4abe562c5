/* Reductions across MPI ranks (StarPU-MPI + MPI_Allreduce), run by test_mpi.sh under
 * `mpirun -np 2`: a 4x4x4x8 lattice split over a 1x1x1x2 process grid, fields filled from
 * a closed-form function of the global site and component, so every rank can compute the
 * global norm2, rdot and cdot with plain loops over the whole lattice. Each rank checks the
 * library's results against those sums (double: 1e-13 relative) and that all ranks got the
 * identical bits. Run without MPI it skips. */
#include "tq_test.h"

#include <mpi.h>
#include <stdint.h>

static double value(int64_t global_site, int k, int which)
{
    return sin(0.37 * (double)global_site + 1.3 * k + 0.71 * which) + 0.25 * cos(0.11 * (double)(global_site * 24 + k));
}

int main(int argc, char **argv)
{
    tq_runtime_info ri;
    const int start = tq_test_mpi_start("test_mpi_blas", 2, &argc, argv, &ri);
    if (start) return start;
    const int dims[4] = {4, 4, 4, 8};
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    lp.procs[0] = lp.procs[1] = lp.procs[2] = 1;
    lp.procs[3] = 2;
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    if (!lat) { tq_finalize(); return tq_test_finish("test_mpi_blas"); }
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    CHECK(li.local[3] == 4 && li.local_volume == 256, "local lattice %dx%dx%dx%d", li.local[0], li.local[1], li.local[2], li.local[3]);

    /* this rank's slab in t (x-fastest rank order, as the lattice documents) */
    const int t0 = ri.mpi_rank * li.local[3];
    double *hx = malloc((size_t)li.local_volume * 24 * sizeof *hx);
    double *hy = malloc((size_t)li.local_volume * 24 * sizeof *hy);
    for (int64_t s = 0; s < li.local_volume; s++) {
        int x = (int)(s % 4), y = (int)(s / 4 % 4), z = (int)(s / 16 % 4), t = (int)(s / 64);
        int64_t g = x + 4 * (y + 4 * (z + 4 * (int64_t)(t + t0)));
        for (int k = 0; k < 24; k++) { hx[s * 24 + k] = value(g, k, 0); hy[s * 24 + k] = value(g, k, 1); }
    }
    double n2 = 0, rd = 0, cre = 0, cim = 0;
    for (int64_t g = 0; g < 4 * 4 * 4 * 8; g++)
        for (int k = 0; k < 24; k += 2) {
            double xr = value(g, k, 0), xi = value(g, k + 1, 0), yr = value(g, k, 1), yi = value(g, k + 1, 1);
            n2 += xr * xr + xi * xi;
            rd += xr * yr + xi * yi;
            cre += xr * yr + xi * yi;
            cim += xr * yi - xi * yr;
        }

    tq_field_params fp = {TQ_FIELD_SPINOR, TQ_DOUBLE, TQ_FULL, 0, 0};
    tq_field *fx = NULL, *fy = NULL;
    CHECK_OK(tq_field_create(lat, &fp, &fx));
    CHECK_OK(tq_field_create(lat, &fp, &fy));
    if (fx && fy) {
        CHECK_OK(tq_field_import(fx, hx));
        CHECK_OK(tq_field_import(fy, hy));
        double got[4] = {0, 0, 0, 0};
        tq_complex c = {0, 0};
        CHECK_OK(tq_blas_norm2(fx, &got[0]));
        CHECK_OK(tq_blas_rdot(fx, fy, &got[1]));
        CHECK_OK(tq_blas_cdot(fx, fy, &c));
        got[2] = c.re;
        got[3] = c.im;
        CHECK_CLOSE(got[0], n2, 1e-13, "norm2 over both ranks");
        CHECK_CLOSE(got[1], rd, 1e-13, "rdot over both ranks");
        CHECK_CLOSE(got[2], cre, 1e-13, "cdot re over both ranks");
        CHECK_CLOSE(got[3], cim, 1e-13, "cdot im over both ranks");
        /* every rank must hold the same bits */
        double other[4];
        MPI_Allreduce(got, other, 4, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        CHECK(memcmp(got, other, sizeof got) == 0, "ranks disagree on the reduced values");
        /* a rank-local result would be about half of the global one */
        CHECK(fabs(got[0] - n2) < 0.25 * n2, "norm2 %.6g is not the global sum %.6g", got[0], n2);
    }
    tq_field_destroy(fx);
    tq_field_destroy(fy);
    tq_lattice_destroy(lat);
    free(hx);
    free(hy);
    tq_finalize();
    char name[64];
    snprintf(name, sizeof name, "test_mpi_blas (rank %d)", ri.mpi_rank);
    return tq_test_finish(name);
}
