/* MILC v5 binary gauge files.
 *
 * Layout (96-byte header, then the sites):
 *   int32 magic 20103 (its byte order is the file's), int32 nx ny nz nt,
 *   char time_stamp[64], int32 order (0 = natural: lexicographic, x fastest),
 *   uint32 sum29, sum31 (the checksums), then per site 4 links (x, y, z, t), each a 3x3
 *   complex matrix of single-precision reals.
 * Checksum: the site data as 32-bit words (their values, whatever the byte order) at rank
 * r = site * 72 + k: sum29 ^= rotl(w, r % 29), sum31 ^= rotl(w, r % 31). */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/gauge_io_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MILC_MAGIC 20103u
#define MILC_HEADER_BYTES 96
#define MILC_WORDS_PER_SITE 72   /* 4 links x 18 floats */

typedef struct milc_reader {
    int big;
    const tq_io_box *box;   /* NULL: every site is its own */
    tq_milc_sum got;
    double *links;
} milc_reader;

static tq_status milc_run(void *ctx, unsigned char *bytes, int64_t global_site, int64_t box_site, int64_t n)
{
    milc_reader *r = (milc_reader *)ctx;
    uint32_t (*ld)(const unsigned char *) = r->big ? tq_load_be32 : tq_load_le32;
    uint32_t words[MILC_WORDS_PER_SITE];
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *p = bytes + (size_t)i * MILC_WORDS_PER_SITE * 4;
        if (!r->box || tq_io_box_own_site(r->box, box_site + i)) {
            for (int k = 0; k < MILC_WORDS_PER_SITE; k++) words[k] = ld(p + 4 * k);
            tq_milc_sum_words(&r->got, (uint64_t)(global_site + i) * MILC_WORDS_PER_SITE, words, MILC_WORDS_PER_SITE);
        }
        tq_io_decode_reals(r->links + (box_site + i) * 72, p, 72, 4, r->big);
    }
    return TQ_SUCCESS;
}

tq_status tq_milc_read(FILE *f, const char *path, const tq_io_box *box, tq_host_gauge *g, tq_gauge_file_info *info,
                       tq_io_partial *partial)
{
    g->links = NULL;
    int64_t fsize = tq_io_file_size(f, path);
    if (fsize < 0) return TQ_ERR_IO;

    unsigned char hdr[MILC_HEADER_BYTES];
    TQ_CHECK(tq_io_read_exact(f, hdr, sizeof hdr, path, "MILC header"));
    int big;
    if (tq_load_le32(hdr) == MILC_MAGIC) big = 0;
    else if (tq_load_be32(hdr) == MILC_MAGIC) big = 1;
    else return tq_error(TQ_ERR_FORMAT, "'%s' is not a MILC file: magic number %u, expected %u in either byte order",
                         path, tq_load_le32(hdr), MILC_MAGIC);
    uint32_t (*ld)(const unsigned char *) = big ? tq_load_be32 : tq_load_le32;

    int dims[4];
    for (int mu = 0; mu < 4; mu++) dims[mu] = (int32_t)ld(hdr + 4 + 4 * mu);
    TQ_CHECK(tq_io_check_dims(dims, path));
    TQ_CHECK(tq_io_check_box(box, dims, path));
    uint32_t order = ld(hdr + 84);
    if (order != 0)
        return tq_error(TQ_ERR_UNSUPPORTED, "'%s': MILC site order %u is not supported (only 0, natural order)",
                        path, order);
    tq_milc_sum want = { ld(hdr + 88), ld(hdr + 92) };

    int64_t vol = tq_volume4(dims);
    int64_t expect = MILC_HEADER_BYTES + vol * MILC_WORDS_PER_SITE * 4;
    if (fsize < expect)
        return tq_error(TQ_ERR_FORMAT, "'%s' is truncated: %lld bytes, a %dx%dx%dx%d MILC lattice needs %lld",
                        path, (long long)fsize, dims[0], dims[1], dims[2], dims[3], (long long)expect);
    if (fsize > expect)
        return tq_error(TQ_ERR_FORMAT, "'%s': %lld bytes, but the header's %dx%dx%dx%d lattice needs %lld (not a single-precision MILC v5 file?)",
                        path, (long long)fsize, dims[0], dims[1], dims[2], dims[3], (long long)expect);

    info->format = TQ_FORMAT_MILC;
    memcpy(info->dims, dims, sizeof info->dims);
    info->file_precision = 4;
    info->checksum_a = want.sum29;
    info->checksum_b = want.sum31;
    info->has_checksum = 1;
    if (box == &tq_io_header_only) return TQ_SUCCESS;
    const tq_io_box whole = tq_io_box_whole(dims);
    const tq_io_box *b = box ? box : &whole;
    TQ_CHECK(tq_host_gauge_alloc(g, b->ext));
    milc_reader r = {big, box, {0, 0}, g->links};
    tq_status s = tq_io_read_box(f, path, MILC_HEADER_BYTES, MILC_WORDS_PER_SITE * 4, b, "MILC site data", milc_run, &r);
    if (s == TQ_SUCCESS && partial) {
        *partial = (tq_io_partial){.format = TQ_FORMAT_MILC, .have_checksum = 1, .want_a = want.sum29,
                                   .want_b = want.sum31, .got_a = r.got.sum29, .got_b = r.got.sum31};
    } else if (s == TQ_SUCCESS && (r.got.sum29 != want.sum29 || r.got.sum31 != want.sum31))
        s = tq_error(TQ_ERR_CHECKSUM, "'%s': MILC checksum mismatch: file says %x %x, data give %x %x",
                     path, want.sum29, want.sum31, r.got.sum29, r.got.sum31);
    if (s != TQ_SUCCESS) tq_host_gauge_free(g);
    return s;
}

/* The header of a file of the given lattice and checksums (little-endian). */
static void milc_header(unsigned char *hdr, const int dims[4], tq_milc_sum sum)
{
    memset(hdr, 0, MILC_HEADER_BYTES);
    tq_store_le32(hdr, MILC_MAGIC);
    for (int mu = 0; mu < 4; mu++) tq_store_le32(hdr + 4 + 4 * mu, (uint32_t)dims[mu]);
    time_t now = time(NULL);
    struct tm tmv;
    if (gmtime_r(&now, &tmv)) strftime((char *)hdr + 20, 64, "%a %b %e %H:%M:%S %Y UTC", &tmv);
    tq_store_le32(hdr + 84, 0);
    tq_store_le32(hdr + 88, sum.sum29);
    tq_store_le32(hdr + 92, sum.sum31);
}

typedef struct milc_writer {
    const double *links;
    tq_milc_sum sum;
} milc_writer;

static tq_status milc_encode_run(void *ctx, unsigned char *bytes, int64_t global_site, int64_t box_site, int64_t n)
{
    milc_writer *w = (milc_writer *)ctx;
    uint32_t words[MILC_WORDS_PER_SITE];
    tq_io_encode_reals(bytes, w->links + box_site * 72, (size_t)n * 72, 4, 0);
    for (int64_t i = 0; i < n; i++) {
        for (int k = 0; k < MILC_WORDS_PER_SITE; k++) words[k] = tq_load_le32(bytes + (i * MILC_WORDS_PER_SITE + k) * 4);
        tq_milc_sum_words(&w->sum, (uint64_t)(global_site + i) * MILC_WORDS_PER_SITE, words, MILC_WORDS_PER_SITE);
    }
    return TQ_SUCCESS;
}

tq_status tq_milc_write_local(const char *path, const tq_io_box *box, const tq_host_gauge *g)
{
    tq_io_shared sf;
    TQ_CHECK(tq_io_shared_open(path, &sf));
    milc_writer w = {g->links, {0, 0}};
    tq_status s = tq_io_write_box(&sf, MILC_HEADER_BYTES, MILC_WORDS_PER_SITE * 4, box, milc_encode_run, &w);
    /* the checksums (in the header) are the xor of every rank's terms */
    uint32_t sums[2] = {w.sum.sum29, w.sum.sum31};
    tq_internal_allreduce_u32(sums, 2, 1);
    if (sf.root && s == TQ_SUCCESS) {
        unsigned char hdr[MILC_HEADER_BYTES];
        milc_header(hdr, box->dims, (tq_milc_sum){sums[0], sums[1]});
        s = tq_io_write_exact(sf.af.f, hdr, sizeof hdr, path);
    }
    return tq_io_shared_close(&sf, s);
}

/* Written little-endian whatever the host, so the same field gives the same bytes. */
tq_status tq_milc_write(const char *path, const tq_host_gauge *g, int file_precision)
{
    TQ_CHECK(tq_io_check_field(g, path));
    if (file_precision != 4)
        return tq_error(TQ_ERR_UNSUPPORTED, "writing '%s': MILC v5 files are single precision (file precision 4), not %d",
                        path, file_precision);
    int64_t vol = tq_volume4(g->dims);
    const size_t site_bytes = MILC_WORDS_PER_SITE * 4;

    /* The checksums go in the header: compute them first from the encoded data. */
    unsigned char site[MILC_WORDS_PER_SITE * 4];
    uint32_t words[MILC_WORDS_PER_SITE];
    tq_milc_sum sum = {0, 0};
    for (int64_t i = 0; i < vol; i++) {
        tq_io_encode_reals(site, g->links + i * 72, 72, 4, 0);
        for (int k = 0; k < MILC_WORDS_PER_SITE; k++) words[k] = tq_load_le32(site + 4 * k);
        tq_milc_sum_words(&sum, (uint64_t)i * MILC_WORDS_PER_SITE, words, MILC_WORDS_PER_SITE);
    }

    unsigned char hdr[MILC_HEADER_BYTES];
    milc_header(hdr, g->dims, sum);

    tq_atomic_file af;
    TQ_CHECK(tq_io_create_atomic(path, &af));
    FILE *f = af.f;
    unsigned char *buf = malloc(TQ_IO_CHUNK_SITES * site_bytes);
    if (!buf) return tq_io_finish_atomic(&af, tq_error(TQ_ERR_NOMEM, "writing '%s': out of memory", path));
    tq_status s = tq_io_write_exact(f, hdr, sizeof hdr, path);
    for (int64_t s0 = 0; s0 < vol && s == TQ_SUCCESS; s0 += TQ_IO_CHUNK_SITES) {
        int64_t n = vol - s0 < TQ_IO_CHUNK_SITES ? vol - s0 : TQ_IO_CHUNK_SITES;
        tq_io_encode_reals(buf, g->links + s0 * 72, (size_t)n * 72, 4, 0);
        s = tq_io_write_exact(f, buf, (size_t)n * site_bytes, path);
    }
    free(buf);
    return tq_io_finish_atomic(&af, s);
}
