/* Reading a gauge file by parts (tq_gauge_read_local), run by test_mpi_dirac.sh under
 * mpirun -np 1, 2 and 4 with several rank grids: each rank reads only its sites of MILC,
 * SciDAC, ILDG and NERSC files (single and double precision) and must get exactly its part
 * of what the whole-file reader returns (and tq_gauge_read_info the same description), with the checksums (NERSC: also the link trace and
 * plaquette) verified across the ranks. A byte changed in the last rank's part, and a file of
 * another lattice, give every rank the same error. Writing by parts (tq_gauge_write_local):
 * the file read back whole holds what the whole-lattice writer's does, with its checksums,
 * and no temporary file stays; a part of the wrong size on one rank fails on every rank and
 * leaves no file.
 *
 *   test_mpi_gauge_io DIR [--procs X Y Z T] [tq_init options]   (DIR: a scratch directory) */
#include "tq_test.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

static const int dims[4] = {4, 4, 6, 8};

/* Flips one bit of byte `at` of path (rank 0 only; the others wait for it). */
static void flip_byte(const char *path, long at, int rank)
{
    tq_status s = TQ_SUCCESS;
    if (rank == 0) {
        FILE *f = fopen(path, "r+b");
        int c = f && fseek(f, at, SEEK_SET) == 0 ? fgetc(f) : EOF;
        if (c == EOF || fseek(f, at, SEEK_SET) != 0 || fputc(c ^ 0x10, f) == EOF) s = TQ_ERR_IO;
        if (f) fclose(f);
    }
    CHECK(tq_status_agree(s) == TQ_SUCCESS, "cannot change a byte of %s", path);
}

int main(int argc, char **argv)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 1;
    ip.ncuda = 0;
    if (tq_init_params_from_args(&ip, &argc, argv)) { fprintf(stderr, "%s\n", tq_last_error()); return 1; }
    tq_lattice_params lp = {.dims = {dims[0], dims[1], dims[2], dims[3]}};
    if (argc < 2) return tq_test_skip("test_mpi_gauge_io", "needs a scratch directory (run by test_mpi_dirac.sh)");
    if (argc == 7 && !strcmp(argv[2], "--procs"))
        for (int mu = 0; mu < 4; mu++) lp.procs[mu] = atoi(argv[3 + mu]);
    else if (argc != 2) { fprintf(stderr, "usage: test_mpi_gauge_io DIR [--procs X Y Z T]\n"); return 1; }
    const char *dir = argv[1];
    if (tq_init(&ip) != TQ_SUCCESS) { fprintf(stderr, "tq_init: %s\n", tq_last_error()); return 1; }
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    const int rank = ri.mpi_rank;
    tq_lattice *lat = NULL;
    CHECK_OK(tq_lattice_create(&lp, &lat));
    tq_lattice_info li;
    CHECK_OK(tq_lattice_get_info(lat, &li));

    /* the same random field on every rank; rank 0 writes it in every format */
    tq_host_gauge whole, part;
    CHECK_OK(tq_host_gauge_alloc(&whole, dims));
    CHECK_OK(tq_host_gauge_random(&whole, 11));
    CHECK_OK(tq_host_gauge_alloc(&part, li.local));
    const struct { const char *name; tq_gauge_format fmt; int prec; } files[] = {
        {"g.milc", TQ_FORMAT_MILC, 4}, {"g.scidac", TQ_FORMAT_SCIDAC, 8}, {"g.ildg", TQ_FORMAT_ILDG, 4},
        {"g.nersc", TQ_FORMAT_NERSC, 8}, {"g4.nersc", TQ_FORMAT_NERSC, 4}};
    char path[4096];
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        tq_status w = rank == 0 ? tq_gauge_write(path, files[i].fmt, &whole, files[i].prec) : TQ_SUCCESS;
        CHECK(tq_status_agree(w) == TQ_SUCCESS, "writing %s: %s", path, tq_last_error());
        /* what the whole-file reader gives, this rank's part of it */
        tq_host_gauge ref, got;
        tq_gauge_file_info ref_info, info;
        CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &ref, &ref_info));
        CHECK_OK(tq_lattice_scatter_sites(lat, ref.links, part.links, 72));
        tq_gauge_file_info head;
        CHECK_OK(tq_gauge_read_info(path, TQ_FORMAT_AUTO, &head));
        CHECK(!memcmp(&head, &ref_info, sizeof head), "%s: the header alone describes it otherwise", files[i].name);
        tq_status s = tq_gauge_read_local(path, TQ_FORMAT_AUTO, lat, &got, &info);
        CHECK(s == TQ_SUCCESS, "rank %d: reading its part of %s: %s", rank, files[i].name, tq_last_error());
        if (s == TQ_SUCCESS) {
            CHECK(!memcmp(got.dims, li.local, sizeof got.dims), "%s: the part has the wrong dimensions", files[i].name);
            CHECK(!memcmp(got.links, part.links, (size_t)li.local_volume * 72 * sizeof(double)),
                  "rank %d: its part of %s differs from the whole-file reader's", rank, files[i].name);
            CHECK(info.format == ref_info.format && info.file_precision == ref_info.file_precision &&
                  info.checksum_a == ref_info.checksum_a && info.checksum_b == ref_info.checksum_b &&
                  info.nersc_checksum == ref_info.nersc_checksum, "%s: the file's description differs", files[i].name);
        }
        tq_host_gauge_free(&got);
        tq_host_gauge_free(&ref);
    }

    /* writing by parts: each rank its sites, read back whole */
    CHECK_OK(tq_lattice_scatter_sites(lat, whole.links, part.links, 72));
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        char wpath[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[i].name);
        snprintf(wpath, sizeof wpath, "%s/w%s", dir, files[i].name);
        tq_status s = tq_gauge_write_local(wpath, files[i].fmt, lat, &part, files[i].prec);
        CHECK(s == TQ_SUCCESS, "rank %d: writing its part of %s: %s", rank, files[i].name, tq_last_error());
        tq_host_gauge ref, got;
        tq_gauge_file_info ref_info, info;
        CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &ref, &ref_info));
        CHECK_OK(tq_gauge_read(wpath, TQ_FORMAT_AUTO, &got, &info));
        if (ref.links && got.links)
            CHECK(!memcmp(ref.links, got.links, (size_t)72 * 4 * 4 * 6 * 8 * sizeof(double)),
                  "%s written by parts reads back otherwise than written whole", files[i].name);
        CHECK(info.format == ref_info.format && info.file_precision == ref_info.file_precision &&
              info.checksum_a == ref_info.checksum_a && info.checksum_b == ref_info.checksum_b &&
              info.nersc_checksum == ref_info.nersc_checksum && info.has_checksum == ref_info.has_checksum,
              "%s written by parts: other checksums (%x %x vs %x %x)", files[i].name, info.checksum_a, info.checksum_b,
              ref_info.checksum_a, ref_info.checksum_b);
        tq_host_gauge_free(&ref);
        tq_host_gauge_free(&got);
    }
    /* a part of the wrong size on the last rank: every rank fails, no file is left */
    tq_host_gauge small;
    const int sdims[4] = {li.local[0], li.local[1], li.local[2], 2};
    CHECK_OK(tq_host_gauge_alloc(&small, sdims));
    CHECK_OK(tq_host_gauge_unit(&small));
    snprintf(path, sizeof path, "%s/bad.scidac", dir);
    tq_status ws = tq_gauge_write_local(path, TQ_FORMAT_SCIDAC, lat, rank == ri.mpi_size - 1 && li.local[3] != 2 ? &small : &part, 8);
    if (li.local[3] != 2)
        CHECK(ws == TQ_ERR_MISMATCH && access(path, F_OK) != 0, "rank %d: a wrong part gave %d (%s), file %s", rank,
              (int)ws, tq_last_error(), access(path, F_OK) ? "absent" : "present");
    tq_host_gauge_free(&small);
    tq_status_agree(TQ_SUCCESS);   /* every rank is past its writes */
    DIR *dd = opendir(dir);
    for (struct dirent *e; dd && (e = readdir(dd));)
        CHECK(!strstr(e->d_name, ".tmp-"), "a temporary file stayed: %s", e->d_name);
    if (dd) closedir(dd);

    /* a byte of the last site (the last rank's part) changed: every rank fails the same way */
    const long site_bytes[] = {72 * 4, 72 * 8};
    snprintf(path, sizeof path, "%s/g.milc", dir);
    flip_byte(path, 96 + ((long)dims[0] * dims[1] * dims[2] * dims[3] - 1) * site_bytes[0] + 5, rank);
    tq_host_gauge got;
    tq_status s = tq_gauge_read_local(path, TQ_FORMAT_AUTO, lat, &got, NULL);
    CHECK(s == TQ_ERR_CHECKSUM && got.links == NULL, "rank %d: a changed MILC file gave %d (%s)", rank, (int)s, tq_last_error());
    snprintf(path, sizeof path, "%s/g.nersc", dir);
    FILE *f = fopen(path, "rb");
    long size = 0;
    if (f) { fseek(f, 0, SEEK_END); size = ftell(f); fclose(f); }
    flip_byte(path, size - site_bytes[1] / 2 - 3, rank);   /* a low-order byte of a real of the last site */
    s = tq_gauge_read_local(path, TQ_FORMAT_AUTO, lat, &got, NULL);
    CHECK(s == TQ_ERR_CHECKSUM && strstr(tq_last_error(), "NERSC"), "rank %d: a changed NERSC file gave %d (%s)", rank,
          (int)s, tq_last_error());
    /* a file of another lattice */
    tq_host_gauge other;
    const int odims[4] = {4, 4, 4, 8};
    CHECK_OK(tq_host_gauge_alloc(&other, odims));
    CHECK_OK(tq_host_gauge_unit(&other));
    snprintf(path, sizeof path, "%s/other.scidac", dir);
    CHECK(tq_status_agree(rank == 0 ? tq_gauge_write(path, TQ_FORMAT_SCIDAC, &other, 8) : TQ_SUCCESS) == TQ_SUCCESS,
          "writing %s", path);
    s = tq_gauge_read_local(path, TQ_FORMAT_AUTO, lat, &got, NULL);
    CHECK(s == TQ_ERR_MISMATCH && strstr(tq_last_error(), "4x4x4x8") && strstr(tq_last_error(), "4x4x6x8"),
          "rank %d: a file of another lattice gave %d (%s)", rank, (int)s, tq_last_error());
    /* a file that is not there */
    snprintf(path, sizeof path, "%s/missing", dir);
    s = tq_gauge_read_local(path, TQ_FORMAT_AUTO, lat, &got, NULL);
    CHECK(s == TQ_ERR_IO, "rank %d: a missing file gave %d", rank, (int)s);

    tq_host_gauge_free(&other);
    tq_host_gauge_free(&whole);
    tq_host_gauge_free(&part);
    tq_lattice_destroy(lat);
    tq_finalize();
    return tq_test_finish("test_mpi_gauge_io");
}
