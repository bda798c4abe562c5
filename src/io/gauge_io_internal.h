/* Internal declarations shared by the gauge-file readers and writers (gauge_io*.c).
 * Host side only: nothing here may depend on StarPU. Not installed. */
#ifndef TQ_GAUGE_IO_INTERNAL_H
#define TQ_GAUGE_IO_INTERNAL_H

#include "core/tq_internal.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Reals per site in the API layout (4 links x 3x3 complex). */
#define TQ_IO_REALS_PER_SITE 72

/* ---- byte order ------------------------------------------------------------------------ */
static inline uint32_t tq_bswap32(uint32_t x)
{
    return (x >> 24) | ((x >> 8) & 0xff00u) | ((x << 8) & 0xff0000u) | (x << 24);
}
static inline uint64_t tq_bswap64(uint64_t x)
{
    return ((uint64_t)tq_bswap32((uint32_t)x) << 32) | tq_bswap32((uint32_t)(x >> 32));
}
/* Rotate left; r = 0 returns w (MILC and QIO's (w << r) | (w >> (32 - r)) gives w there on
 * the machines that wrote the files, although the C expression is undefined for r = 0). */
static inline uint32_t tq_rotl32(uint32_t w, unsigned r)
{
    r &= 31u;
    return r ? (w << r) | (w >> (32u - r)) : w;
}

/* Big-endian / little-endian loads and stores of unaligned bytes. */
uint32_t tq_load_be32(const unsigned char *p);
uint32_t tq_load_le32(const unsigned char *p);
uint64_t tq_load_be64(const unsigned char *p);
void tq_store_be32(unsigned char *p, uint32_t v);
void tq_store_le32(unsigned char *p, uint32_t v);
void tq_store_be64(unsigned char *p, uint64_t v);

/* n reals stored in the file as IEEE floats of prec bytes (4 or 8) in the given byte order
 * <-> doubles. */
void tq_io_decode_reals(double *dst, const unsigned char *src, size_t n, int prec, int big_endian);
void tq_io_encode_reals(unsigned char *dst, const double *src, size_t n, int prec, int big_endian);

/* ---- checksums ----------------------------------------------------------------------- */
/* zlib's CRC-32 (polynomial 0xEDB88320), crc = 0 to start. */
uint32_t tq_crc32(uint32_t crc, const void *buf, size_t len);

/* SciDAC (QIO DML) checksum: per site crc32 of its bytes as stored, rotated by the site's
 * global lexicographic rank mod 29 / 31 and xored into suma / sumb. */
typedef struct tq_scidac_sum { uint32_t suma, sumb; } tq_scidac_sum;
void tq_scidac_sum_site(tq_scidac_sum *s, uint64_t rank, const unsigned char *site, size_t bytes);

/* MILC v5 checksum over 32-bit words (their values in the host's order) at consecutive ranks
 * starting at first_rank = site * words_per_site. */
typedef struct tq_milc_sum { uint32_t sum29, sum31; } tq_milc_sum;
void tq_milc_sum_words(tq_milc_sum *s, uint64_t first_rank, const uint32_t *words, size_t n);

/* NERSC checksum: the 32-bit words of the data as stored (values in the host's order after
 * conversion from the file's byte order), summed mod 2^32. data holds n reals of prec bytes
 * in the given byte order. */
uint32_t tq_nersc_sum_reals(uint32_t sum, const unsigned char *data, size_t n, int prec,
                            int big_endian);

/* ---- files --------------------------------------------------------------------------- */
/* Size of an open file in bytes (the position is left at the start); -1 with tq_error set. */
int64_t tq_io_file_size(FILE *f, const char *path);
/* Reads exactly n bytes at the current position: TQ_ERR_FORMAT at end of file ("truncated"),
 * TQ_ERR_IO on a read error; the message names path and what. */
tq_status tq_io_read_exact(FILE *f, void *buf, size_t n, const char *path, const char *what);
tq_status tq_io_seek(FILE *f, int64_t off, const char *path);
tq_status tq_io_write_exact(FILE *f, const void *buf, size_t n, const char *path);
/* A file written under a temporary name in path's directory and renamed onto path once it
 * is whole and on disk: a crash or an error never leaves a truncated file under path, and a
 * file already there stays as it was until the new one replaces it. */
typedef struct tq_atomic_file {
    FILE *f;            /* write here */
    const char *path;   /* the final name */
    char *tmp;          /* the temporary name (owned) */
} tq_atomic_file;
tq_status tq_io_create_atomic(const char *path, tq_atomic_file *af);
/* Ends the write: with s == TQ_SUCCESS flushes, syncs and renames the file onto its final
 * name; otherwise (or if that fails) removes the temporary file. Returns s or the error. */
tq_status tq_io_finish_atomic(tq_atomic_file *af, tq_status s);
/* Validates a field handed to a writer. */
tq_status tq_io_check_field(const tq_host_gauge *g, const char *path);
/* Reject absurd extents before they become allocation sizes. */
tq_status tq_io_check_dims(const int dims[4], const char *path);
/* Sites per I/O chunk, so buffers stay bounded for large lattices (75 MB of double links),
 * and large enough that a chunk's checksums and conversion split over host threads. */
#define TQ_IO_CHUNK_SITES 65536

/* Third row of an SU(3) matrix from the first two: r3 = conj(r1 x r2) (18 doubles, row-major
 * complex; reads rows 0, 1 and writes row 2). */
void tq_su3_reconstruct_row3(double *u);

/* ---- parts of the lattice ---------------------------------------------------------------
 * A box: the sites origin + y (0 <= y[mu] < ext[mu], coordinates periodic in dims) of the
 * lattice, in the box's own lexicographic order (x fastest). A reader given a box keeps its
 * sites only: one rank's part of a lattice spread over ranks, or its part and the next site
 * in each direction (NERSC's plaquette); the sites with y[mu] < own[mu] in every direction
 * are the box's own: each rank's checksums count its own sites, and the combined sums are
 * the whole file's. */
typedef struct tq_io_box {
    int dims[4];            /* the lattice the caller expects the file to hold */
    int origin[4], ext[4];  /* the box */
    int own[4];             /* its own sites' extents (<= ext) */
} tq_io_box;
/* What a reader given a box found, to be combined over the ranks and then compared with what
 * the file says (tq_io_partial_verify): got_* are sums over this rank's own sites. */
typedef struct tq_io_partial {
    tq_gauge_format format;
    int have_checksum, have_trace, have_plaq;
    uint32_t want_a, want_b, got_a, got_b;   /* MILC sum29, sum31; SciDAC suma, sumb; NERSC a only */
    double want_trace, want_plaq;            /* NERSC: the header's (normalised) */
    double got_trace, got_plaq;              /* Re Tr sums: links, plaquettes */
} tq_io_partial;
/* Given as the box, a reader checks the header (and the file's size) and fills info only. */
extern const tq_io_box tq_io_header_only;
/* The whole lattice as a box. */
tq_io_box tq_io_box_whole(const int dims[4]);
/* With a box: the file's dims must be the box's lattice (TQ_ERR_MISMATCH naming both). */
tq_status tq_io_check_box(const tq_io_box *box, const int dims[4], const char *path);
/* Whether box site i (its index in the box's order) is one of its own. */
int tq_io_box_own_site(const tq_io_box *b, int64_t i);
/* Reads the box's sites of a file whose sites (site_bytes each, lexicographic) start at
 * data_off, as runs of sites consecutive in the file and in the box, at most
 * TQ_IO_CHUNK_SITES at a time: fn(ctx, bytes, global index of the first, box index of the
 * first, n). what names the data in messages. */
typedef tq_status (*tq_io_run_fn)(void *ctx, unsigned char *bytes, int64_t global_site, int64_t box_site,
                                  int64_t n);
tq_status tq_io_read_box(FILE *f, const char *path, int64_t data_off, size_t site_bytes, const tq_io_box *b,
                         const char *what, tq_io_run_fn fn, void *ctx);
/* A file every rank writes its part of: rank 0 creates it under a temporary name
 * (tq_io_create_atomic: af, the header and trailer go through af.f) and every rank opens
 * that name for its data (fd, pwrite). Collective; close renames it onto path when every
 * rank's writes succeeded, else removes it; the same status on every rank. */
typedef struct tq_io_shared {
    const char *path;
    int root;               /* rank 0 */
    tq_atomic_file af;      /* rank 0 */
    int fd;
    char tmp[4096];
} tq_io_shared;
tq_status tq_io_shared_open(const char *path, tq_io_shared *sf);
tq_status tq_io_shared_close(tq_io_shared *sf, tq_status s);
/* Writes the box's sites at data_off + site * site_bytes: fn(ctx, bytes, global first, box
 * first, n) fills bytes with the run's n sites (and adds their checksum terms). */
tq_status tq_io_write_box(tq_io_shared *sf, int64_t data_off, size_t site_bytes, const tq_io_box *b, tq_io_run_fn fn,
                          void *ctx);
/* Writers of one rank's part (box: its sites, g: their links in box order); collective. */
tq_status tq_milc_write_local(const char *path, const tq_io_box *box, const tq_host_gauge *g);
tq_status tq_lime_write_local(const char *path, tq_gauge_format fmt, const tq_io_box *box, const tq_host_gauge *g,
                              int file_precision);
/* Combines the ranks' partial sums (collective) and compares them with the file's values:
 * the same status on every rank. */
tq_status tq_io_partial_verify(tq_io_partial *p, const char *path, const int dims[4]);

/* ---- per-format readers and writers ------------------------------------------------------
 * Readers take the open file positioned at its start and fill g (allocated with
 * tq_host_gauge_alloc) and info (never NULL here; format, dims, file_precision, checksums).
 * On failure they free whatever they allocated and leave g->links NULL. The dispatcher
 * checks unitarity afterwards. Writers create path; on failure they remove it.
 * With a box (NULL: the whole lattice) a reader checks that the file holds box->dims, fills
 * g with the box's sites (g->dims = box->ext) and leaves the checks of the sums to the
 * caller, in *partial. */
tq_status tq_milc_read(FILE *f, const char *path, const tq_io_box *box, tq_host_gauge *g, tq_gauge_file_info *info,
                       tq_io_partial *partial);
tq_status tq_milc_write(const char *path, const tq_host_gauge *g, int file_precision);

/* For LIME files: whether the binary record is 'ildg-binary-data' (ILDG) or
 * 'scidac-binary-data' (SciDAC). f positioned at the start; left anywhere. */
tq_status tq_lime_detect(FILE *f, const char *path, tq_gauge_format *fmt);
/* fmt is TQ_FORMAT_ILDG or TQ_FORMAT_SCIDAC: the format the caller asked for; either binary
 * record is accepted, a scidac-checksum record is verified when present. */
tq_status tq_lime_read(FILE *f, const char *path, tq_gauge_format fmt, const tq_io_box *box, tq_host_gauge *g,
                       tq_gauge_file_info *info, tq_io_partial *partial);
tq_status tq_lime_write(const char *path, tq_gauge_format fmt, const tq_host_gauge *g,
                        int file_precision);

/* With a box whose ext is own + 1 in every direction, the partial plaquette sum covers the
 * own sites' plaquettes (with ext == own it is left 0: the caller wants none). */
tq_status tq_nersc_read(FILE *f, const char *path, const tq_io_box *box, tq_host_gauge *g, tq_gauge_file_info *info,
                        tq_io_partial *partial);
/* rows 3: 4D_SU3_GAUGE_3x3 (what tq_gauge_write writes); rows 2: 4D_SU3_GAUGE (two rows,
 * MILC's archive convention; the checksum then covers the two rows stored). Big-endian. */
tq_status tq_nersc_write_rows(const char *path, const tq_host_gauge *g, int file_precision,
                              int rows);

#endif
