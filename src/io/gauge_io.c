/* Gauge-configuration files: format names, auto-detection, dispatch to the per-format
 * readers and writers, and the byte-order, checksum and file helpers they share. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/gauge_io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

/* ---- byte order ------------------------------------------------------------------------ */
uint32_t tq_load_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}
uint32_t tq_load_le32(const unsigned char *p)
{
    return ((uint32_t)p[3] << 24) | ((uint32_t)p[2] << 16) | ((uint32_t)p[1] << 8) | p[0];
}
uint64_t tq_load_be64(const unsigned char *p)
{
    return ((uint64_t)tq_load_be32(p) << 32) | tq_load_be32(p + 4);
}
void tq_store_be32(unsigned char *p, uint32_t v)
{
    p[0] = (unsigned char)(v >> 24); p[1] = (unsigned char)(v >> 16);
    p[2] = (unsigned char)(v >> 8);  p[3] = (unsigned char)v;
}
void tq_store_le32(unsigned char *p, uint32_t v)
{
    p[3] = (unsigned char)(v >> 24); p[2] = (unsigned char)(v >> 16);
    p[1] = (unsigned char)(v >> 8);  p[0] = (unsigned char)v;
}
void tq_store_be64(unsigned char *p, uint64_t v)
{
    tq_store_be32(p, (uint32_t)(v >> 32));
    tq_store_be32(p + 4, (uint32_t)v);
}

static uint32_t load32(const unsigned char *p, int big_endian)
{
    return big_endian ? tq_load_be32(p) : tq_load_le32(p);
}
static uint64_t load64(const unsigned char *p, int big_endian)
{
    if (big_endian) return tq_load_be64(p);
    return ((uint64_t)tq_load_le32(p + 4) << 32) | tq_load_le32(p);
}

void tq_io_decode_reals(double *dst, const unsigned char *src, size_t n, int prec, int big_endian)
{
    if (prec == 4) {
        for (size_t i = 0; i < n; i++) {
            uint32_t w = load32(src + 4 * i, big_endian);
            float v;
            memcpy(&v, &w, 4);
            dst[i] = v;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t w = load64(src + 8 * i, big_endian);
            double v;
            memcpy(&v, &w, 8);
            dst[i] = v;
        }
    }
}

void tq_io_encode_reals(unsigned char *dst, const double *src, size_t n, int prec, int big_endian)
{
    if (prec == 4) {
        for (size_t i = 0; i < n; i++) {
            float v = (float)src[i];
            uint32_t w;
            memcpy(&w, &v, 4);
            if (big_endian) tq_store_be32(dst + 4 * i, w); else tq_store_le32(dst + 4 * i, w);
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            uint64_t w;
            memcpy(&w, &src[i], 8);
            if (big_endian) {
                tq_store_be64(dst + 8 * i, w);
            } else {
                tq_store_le32(dst + 8 * i, (uint32_t)w);
                tq_store_le32(dst + 8 * i + 4, (uint32_t)(w >> 32));
            }
        }
    }
}

/* ---- checksums ----------------------------------------------------------------------- */
/* CRC-32 (IEEE, reflected) eight bytes at a step: crc_table[k][n] is the CRC of byte n
 * followed by k zero bytes, so the eight table reads of a step are independent (a byte
 * at a time read 600 MB of a 32^4 file at about 0.5 GB/s). */
static uint32_t crc_table[8][256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_init(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t c = n;
        for (int k = 0; k < 8; k++) c = (c & 1u) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
        crc_table[0][n] = c;
    }
    for (int k = 1; k < 8; k++)
        for (uint32_t n = 0; n < 256; n++)
            crc_table[k][n] = (crc_table[k - 1][n] >> 8) ^ crc_table[0][crc_table[k - 1][n] & 0xffu];
}

uint32_t tq_crc32(uint32_t crc, const void *buf, size_t len)
{
    pthread_once(&crc_once, crc_init);  /* readers may run in several threads */
    const unsigned char *p = buf;
    crc = ~crc;
    for (; len >= 8; p += 8, len -= 8) {
        const uint32_t lo = crc ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        const uint32_t hi = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
        crc = crc_table[7][lo & 0xffu] ^ crc_table[6][(lo >> 8) & 0xffu] ^ crc_table[5][(lo >> 16) & 0xffu] ^
              crc_table[4][lo >> 24] ^ crc_table[3][hi & 0xffu] ^ crc_table[2][(hi >> 8) & 0xffu] ^
              crc_table[1][(hi >> 16) & 0xffu] ^ crc_table[0][hi >> 24];
    }
    for (; len > 0; p++, len--) crc = crc_table[0][(crc ^ *p) & 0xffu] ^ (crc >> 8);
    return ~crc;
}

void tq_scidac_sum_site(tq_scidac_sum *s, uint64_t rank, const unsigned char *site, size_t bytes)
{
    uint32_t c = tq_crc32(0, site, bytes);
    s->suma ^= tq_rotl32(c, (unsigned)(rank % 29));
    s->sumb ^= tq_rotl32(c, (unsigned)(rank % 31));
}

void tq_milc_sum_words(tq_milc_sum *s, uint64_t first_rank, const uint32_t *words, size_t n)
{
    unsigned r29 = (unsigned)(first_rank % 29), r31 = (unsigned)(first_rank % 31);
    for (size_t k = 0; k < n; k++) {
        s->sum29 ^= tq_rotl32(words[k], r29);
        s->sum31 ^= tq_rotl32(words[k], r31);
        if (++r29 == 29) r29 = 0;
        if (++r31 == 31) r31 = 0;
    }
}

uint32_t tq_nersc_sum_reals(uint32_t sum, const unsigned char *data, size_t n, int prec,
                            int big_endian)
{
    /* A double contributes its two 32-bit halves; their sum does not depend on which half
     * is taken first, so the convention is fixed by the values alone. */
    size_t words = n * (size_t)(prec / 4);
    for (size_t i = 0; i < words; i++) sum += load32(data + 4 * i, big_endian);
    return sum;
}

/* ---- files --------------------------------------------------------------------------- */
int64_t tq_io_file_size(FILE *f, const char *path)
{
    if (fseeko(f, 0, SEEK_END) != 0) {
        tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
        return -1;
    }
    off_t size = ftello(f);
    if (size < 0 || fseeko(f, 0, SEEK_SET) != 0) {
        tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
        return -1;
    }
    return (int64_t)size;
}

tq_status tq_io_read_exact(FILE *f, void *buf, size_t n, const char *path, const char *what)
{
    if (n == 0) return TQ_SUCCESS;
    size_t got = fread(buf, 1, n, f);
    if (got == n) return TQ_SUCCESS;
    if (ferror(f))
        return tq_error(TQ_ERR_IO, "cannot read %s from '%s': %s", what, path, strerror(errno));
    return tq_error(TQ_ERR_FORMAT, "'%s' is truncated: end of file inside the %s", path, what);
}

tq_status tq_io_seek(FILE *f, int64_t off, const char *path)
{
    if (fseeko(f, (off_t)off, SEEK_SET) != 0)
        return tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
    return TQ_SUCCESS;
}

tq_status tq_io_write_exact(FILE *f, const void *buf, size_t n, const char *path)
{
    if (n && fwrite(buf, 1, n, f) != n)
        return tq_error(TQ_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    return TQ_SUCCESS;
}

tq_status tq_io_create_atomic(const char *path, tq_atomic_file *af)
{
    static long counter;
    af->f = NULL;
    af->path = path;
    af->tmp = malloc(strlen(path) + 64);
    if (!af->tmp) return tq_error(TQ_ERR_NOMEM, "writing '%s': out of memory", path);
    /* a hidden name beside the target (rename is atomic only within one file system);
     * O_EXCL with a fresh name per try, and mode 0666 so the umask applies as to fopen */
    const char *slash = strrchr(path, '/');
    const int dirlen = slash ? (int)(slash - path + 1) : 0;
    int fd = -1;
    for (int tries = 0; fd < 0 && tries < 100; tries++) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        const long n = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
        sprintf(af->tmp, "%.*s.%s.tmp-%ld-%ld-%ld", dirlen, path, path + dirlen, (long)getpid(), n, (long)ts.tv_nsec);
        fd = open(af->tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0 || !(af->f = fdopen(fd, "wb"))) {
        tq_status s = tq_error(TQ_ERR_IO, "cannot create '%s' (as '%s'): %s", path, af->tmp, strerror(errno));
        if (fd >= 0) { close(fd); unlink(af->tmp); }
        free(af->tmp);
        af->tmp = NULL;
        return s;
    }
    return TQ_SUCCESS;
}

tq_status tq_io_finish_atomic(tq_atomic_file *af, tq_status s)
{
    if (s == TQ_SUCCESS && (fflush(af->f) != 0 || fsync(fileno(af->f)) != 0))
        s = tq_error(TQ_ERR_IO, "cannot write '%s': %s", af->path, strerror(errno));
    if (fclose(af->f) != 0 && s == TQ_SUCCESS)
        s = tq_error(TQ_ERR_IO, "cannot write '%s': %s", af->path, strerror(errno));
    if (s == TQ_SUCCESS && rename(af->tmp, af->path) != 0)
        s = tq_error(TQ_ERR_IO, "cannot rename '%s' to '%s': %s", af->tmp, af->path, strerror(errno));
    if (s != TQ_SUCCESS) unlink(af->tmp);
    free(af->tmp);
    af->tmp = NULL;
    af->f = NULL;
    return s;
}

tq_status tq_io_check_field(const tq_host_gauge *g, const char *path)
{
    if (!path) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_write: NULL path");
    if (!g || !g->links)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': the gauge field is NULL or not allocated", path);
    for (int mu = 0; mu < 4; mu++)
        if (g->dims[mu] <= 0)
            return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': dimension %d is %d", path, mu, g->dims[mu]);
    return TQ_SUCCESS;
}

tq_status tq_io_check_dims(const int dims[4], const char *path)
{
    int64_t vol = 1;
    for (int mu = 0; mu < 4; mu++) {
        if (dims[mu] <= 0 || dims[mu] > (1 << 20))
            return tq_error(TQ_ERR_FORMAT, "'%s': lattice dimension %d is %d", path, mu + 1, dims[mu]);
        vol *= dims[mu];
        if (vol > ((int64_t)1 << 40))
            return tq_error(TQ_ERR_FORMAT, "'%s': lattice volume is too large", path);
    }
    return TQ_SUCCESS;
}

void tq_su3_reconstruct_row3(double *u)
{
    const double *a = u, *b = u + 6;
    double *c = u + 12;
    for (int k = 0; k < 3; k++) {
        int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        /* (a x b)_k = a_k1 b_k2 - a_k2 b_k1, then complex conjugate */
        double re = a[2 * k1] * b[2 * k2] - a[2 * k1 + 1] * b[2 * k2 + 1]
                  - (a[2 * k2] * b[2 * k1] - a[2 * k2 + 1] * b[2 * k1 + 1]);
        double im = a[2 * k1] * b[2 * k2 + 1] + a[2 * k1 + 1] * b[2 * k2]
                  - (a[2 * k2] * b[2 * k1 + 1] + a[2 * k2 + 1] * b[2 * k1]);
        c[2 * k] = re;
        c[2 * k + 1] = -im;
    }
}

/* ---- format names ---------------------------------------------------------------------- */
const char *tq_gauge_format_name(tq_gauge_format f)
{
    switch (f) {
    case TQ_FORMAT_AUTO: return "auto";
    case TQ_FORMAT_MILC: return "milc";
    case TQ_FORMAT_SCIDAC: return "scidac";
    case TQ_FORMAT_ILDG: return "ildg";
    case TQ_FORMAT_NERSC: return "nersc";
    }
    return "unknown";
}

tq_status tq_gauge_format_parse(const char *s, tq_gauge_format *out)
{
    static const struct { const char *name; tq_gauge_format f; } names[] = {
        {"auto", TQ_FORMAT_AUTO}, {"milc", TQ_FORMAT_MILC}, {"scidac", TQ_FORMAT_SCIDAC},
        {"ildg", TQ_FORMAT_ILDG}, {"nersc", TQ_FORMAT_NERSC},
    };
    if (!s || !out) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_format_parse: NULL argument");
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        const char *a = names[i].name, *b = s;
        while (*a && *b && (*b == *a || *b == *a - 'a' + 'A')) { a++; b++; }
        if (!*a && !*b) { *out = names[i].f; return TQ_SUCCESS; }
    }
    return tq_error(TQ_ERR_INVALID_ARG, "unknown gauge file format '%s' (milc, scidac, ildg, nersc, auto)", s);
}

/* ---- detection and dispatch -------------------------------------------------------------- */
#define MILC_MAGIC 20103u
#define LIME_MAGIC 0x456789abu

static tq_status detect(FILE *f, const char *path, tq_gauge_format *fmt)
{
    unsigned char head[12];
    size_t got = fread(head, 1, sizeof head, f);
    if (ferror(f)) return tq_error(TQ_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
    if (got >= 4 && (tq_load_le32(head) == MILC_MAGIC || tq_load_be32(head) == MILC_MAGIC)) {
        *fmt = TQ_FORMAT_MILC;
    } else if (got >= 4 && tq_load_be32(head) == LIME_MAGIC) {
        if (fseeko(f, 0, SEEK_SET) != 0)
            return tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
        TQ_CHECK(tq_lime_detect(f, path, fmt));
    } else if (got >= 12 && memcmp(head, "BEGIN_HEADER", 12) == 0) {
        *fmt = TQ_FORMAT_NERSC;
    } else {
        return tq_error(TQ_ERR_FORMAT, "'%s' is not a recognised gauge file (no MILC, LIME or NERSC magic)", path);
    }
    if (fseeko(f, 0, SEEK_SET) != 0)
        return tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
    return TQ_SUCCESS;
}

/* The format's reader. box: NULL for the whole lattice, &tq_io_header_only for the header
 * only, or a rank's box (partial then collects what its checksums need). */
static tq_status read_format(FILE *f, const char *path, tq_gauge_format fmt, const tq_io_box *box, tq_host_gauge *g,
                             tq_gauge_file_info *info, tq_io_partial *partial, const char *who)
{
    info->format = fmt;
    switch (fmt) {
    case TQ_FORMAT_MILC: return tq_milc_read(f, path, box, g, info, partial);
    case TQ_FORMAT_SCIDAC:
    case TQ_FORMAT_ILDG: return tq_lime_read(f, path, fmt, box, g, info, partial);
    case TQ_FORMAT_NERSC: return tq_nersc_read(f, path, box, g, info, partial);
    default: return tq_error(TQ_ERR_INVALID_ARG, "%s: unknown format", who);
    }
}

/* Links are judged by the precision the file declares. A double file whose links are only
 * as unitary as single precision allows most likely holds single-precision links written
 * out as doubles; it is refused all the same (nothing says which digits are meant), but
 * the message says so, since the remedy is to reunitarise (doc/conventions.md). */
static tq_status check_unitary(const tq_host_gauge *g, const char *path, int file_precision)
{
    const double tol_single = 1e-5, tol = file_precision == 8 ? 1e-12 : tol_single;
    double dev = 0;
    tq_status s = tq_host_gauge_unitarity(g, &dev);
    if (s == TQ_SUCCESS && !(dev <= tol))
        s = tq_error(TQ_ERR_NOT_UNITARY, "'%s': a link is not in SU(3): deviation %.3g > %.1g%s", path, dev, tol,
                     dev <= tol_single ? " (within single precision: single-precision links written as doubles "
                     "without reunitarising?)" : "");
    return s;
}

tq_status tq_gauge_read(const char *path, tq_gauge_format fmt, tq_host_gauge *g,
                        tq_gauge_file_info *info)
{
    if (g) g->links = NULL;
    if (!path || !g) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_read: NULL argument");
    if (fmt < TQ_FORMAT_AUTO || fmt > TQ_FORMAT_NERSC)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_read: unknown format %d", (int)fmt);

    FILE *f = fopen(path, "rb");
    if (!f) return tq_error(TQ_ERR_IO, "cannot open '%s': %s", path, strerror(errno));

    tq_gauge_file_info local;
    memset(&local, 0, sizeof local);
    tq_status s = TQ_SUCCESS;
    if (fmt == TQ_FORMAT_AUTO) s = detect(f, path, &fmt);
    if (s == TQ_SUCCESS) s = read_format(f, path, fmt, NULL, g, &local, NULL, "tq_gauge_read");
    fclose(f);  /* read-only: nothing to flush */
    if (s != TQ_SUCCESS) {
        tq_host_gauge_free(g);
        return s;
    }

    s = check_unitary(g, path, local.file_precision);
    if (s != TQ_SUCCESS) {
        tq_host_gauge_free(g);
        return s;
    }
    if (info) *info = local;
    return TQ_SUCCESS;
}

tq_status tq_gauge_read_info(const char *path, tq_gauge_format fmt, tq_gauge_file_info *info)
{
    if (!path || !info) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_read_info: NULL argument");
    if (fmt < TQ_FORMAT_AUTO || fmt > TQ_FORMAT_NERSC)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_read_info: unknown format %d", (int)fmt);
    FILE *f = fopen(path, "rb");
    if (!f) return tq_error(TQ_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    tq_gauge_file_info local;
    memset(&local, 0, sizeof local);
    tq_host_gauge none = {{0}, NULL};
    tq_status s = fmt == TQ_FORMAT_AUTO ? detect(f, path, &fmt) : TQ_SUCCESS;
    if (s == TQ_SUCCESS) s = read_format(f, path, fmt, &tq_io_header_only, &none, &local, NULL, "tq_gauge_read_info");
    fclose(f);
    if (s == TQ_SUCCESS) *info = local;
    return s;
}

/* Keeps a box's own sites: g (box->ext) becomes box->own. */
static tq_status shrink_to_own(tq_host_gauge *g, const tq_io_box *b, const char *path)
{
    if (!memcmp(b->ext, b->own, sizeof b->own)) return TQ_SUCCESS;
    tq_host_gauge own;
    if (tq_host_gauge_alloc(&own, b->own)) return tq_error(TQ_ERR_NOMEM, "reading '%s': out of memory", path);
    const int *e = b->ext, *o = b->own;
    for (int t = 0; t < o[3]; t++)
        for (int z = 0; z < o[2]; z++)
            for (int y = 0; y < o[1]; y++)
                memcpy(own.links + ((((int64_t)t * o[2] + z) * o[1] + y) * o[0]) * 72,
                       g->links + ((((int64_t)t * e[2] + z) * e[1] + y) * e[0]) * 72, (size_t)o[0] * 72 * sizeof(double));
    tq_host_gauge_free(g);
    *g = own;
    return TQ_SUCCESS;
}

tq_status tq_gauge_read_local(const char *path, tq_gauge_format fmt, const tq_lattice *lat, tq_host_gauge *g,
                              tq_gauge_file_info *info)
{
    if (g) g->links = NULL;
    if (!path || !g || !lat) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_read_local: NULL argument");
    if (fmt < TQ_FORMAT_AUTO || fmt > TQ_FORMAT_NERSC)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_read_local: unknown format %d", (int)fmt);
    tq_lattice_info li;
    TQ_CHECK(tq_lattice_get_info(lat, &li));
    if (li.group_ranks < tq_internal_mpi_size())   /* its parts are read collectively by every rank */
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_gauge_read_local: the lattice lies over a group of ranks (%d of %d); read "
                        "the whole file with tq_gauge_read", li.group_ranks, tq_internal_mpi_size());
    tq_io_box box;
    memcpy(box.dims, li.dims, sizeof box.dims);
    for (int mu = 0; mu < 4; mu++) {
        box.origin[mu] = li.coords[mu] * li.local[mu];
        box.ext[mu] = box.own[mu] = li.local[mu];
    }
    /* every step that can fail on one rank only ends with the ranks agreeing, so none is
     * left in a collective the others skipped */
    tq_gauge_file_info local;
    memset(&local, 0, sizeof local);
    tq_io_partial partial;
    memset(&partial, 0, sizeof partial);
    tq_status s = TQ_SUCCESS;
    FILE *f = fopen(path, "rb");
    if (!f) s = tq_error(TQ_ERR_IO, "cannot open '%s': %s", path, strerror(errno));
    if (s == TQ_SUCCESS && fmt == TQ_FORMAT_AUTO) s = detect(f, path, &fmt);
    /* NERSC's recorded plaquette needs the next site in each direction too */
    if (s == TQ_SUCCESS && fmt == TQ_FORMAT_NERSC)
        for (int mu = 0; mu < 4; mu++) box.ext[mu] = box.own[mu] + 1;
    if (s == TQ_SUCCESS) s = read_format(f, path, fmt, &box, g, &local, &partial, "tq_gauge_read_local");
    if (f) fclose(f);
    s = tq_status_agree(s);
    if (s == TQ_SUCCESS) s = tq_io_partial_verify(&partial, path, li.dims);
    if (s == TQ_SUCCESS) s = shrink_to_own(g, &box, path);
    if (s == TQ_SUCCESS) s = check_unitary(g, path, local.file_precision);
    s = tq_status_agree(s);
    if (s != TQ_SUCCESS) {
        tq_host_gauge_free(g);
        return s;
    }
    if (info) *info = local;
    return TQ_SUCCESS;
}

tq_status tq_gauge_write_local(const char *path, tq_gauge_format fmt, const tq_lattice *lat, const tq_host_gauge *g,
                               int file_precision)
{
    if (!lat) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_write_local: NULL lattice");
    tq_lattice_info li;
    TQ_CHECK(tq_lattice_get_info(lat, &li));
    if (li.group_ranks < tq_internal_mpi_size())
        return tq_error(TQ_ERR_UNSUPPORTED, "tq_gauge_write_local: the lattice lies over a group of ranks (%d of %d); write "
                        "the whole field from one rank with tq_gauge_write", li.group_ranks, tq_internal_mpi_size());
    /* the arguments are the same on every rank but the field: each rank checks its own, and
     * all agree before anything is created */
    tq_status s = tq_io_check_field(g, path);
    if (s == TQ_SUCCESS && memcmp(g->dims, li.local, sizeof li.local))
        s = tq_error(TQ_ERR_MISMATCH, "writing '%s': the field is %dx%dx%dx%d, this rank's part of the lattice %dx%dx%dx%d",
                     path, g->dims[0], g->dims[1], g->dims[2], g->dims[3], li.local[0], li.local[1], li.local[2], li.local[3]);
    if (s == TQ_SUCCESS && file_precision != 4 && file_precision != 8)
        s = tq_error(TQ_ERR_INVALID_ARG, "writing '%s': file precision must be 4 or 8 bytes, not %d", path, file_precision);
    if (s == TQ_SUCCESS && fmt == TQ_FORMAT_MILC && file_precision != 4)
        s = tq_error(TQ_ERR_UNSUPPORTED, "writing '%s': MILC v5 files are single precision (file precision 4), not %d",
                     path, file_precision);
    if (s == TQ_SUCCESS && (fmt < TQ_FORMAT_MILC || fmt > TQ_FORMAT_NERSC))
        s = tq_error(TQ_ERR_INVALID_ARG, "writing '%s': %s", path, fmt == TQ_FORMAT_AUTO ? "a format must be given (auto is "
                     "for reading)" : "unknown format");
    TQ_CHECK(tq_status_agree(s));
    if (li.local_volume == li.global_volume) return tq_status_agree(tq_gauge_write(path, fmt, g, file_precision));
    tq_io_box box;
    memcpy(box.dims, li.dims, sizeof box.dims);
    for (int mu = 0; mu < 4; mu++) {
        box.origin[mu] = li.coords[mu] * li.local[mu];
        box.ext[mu] = box.own[mu] = li.local[mu];
    }
    if (fmt == TQ_FORMAT_MILC) return tq_milc_write_local(path, &box, g);
    if (fmt != TQ_FORMAT_NERSC) return tq_lime_write_local(path, fmt, &box, g, file_precision);
    /* NERSC's header (before the data) records the plaquette, which needs the neighbours'
     * links: gathered on every rank, rank 0 writes */
    tq_host_gauge whole;
    s = tq_status_agree(tq_host_gauge_alloc(&whole, li.dims));   /* before the collective gather */
    if (s == TQ_SUCCESS) s = tq_status_agree(tq_lattice_allgather_sites(lat, g->links, whole.links, 72));
    if (s == TQ_SUCCESS) s = tq_status_agree(tq_internal_mpi_rank() == 0 ? tq_gauge_write(path, fmt, &whole, file_precision)
                                                                           : TQ_SUCCESS);
    tq_host_gauge_free(&whole);
    return s;
}

tq_status tq_gauge_write(const char *path, tq_gauge_format fmt, const tq_host_gauge *g,
                         int file_precision)
{
    TQ_CHECK(tq_io_check_field(g, path));
    if (file_precision != 4 && file_precision != 8)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': file precision must be 4 or 8 bytes, not %d",
                        path, file_precision);
    switch (fmt) {
    case TQ_FORMAT_MILC: return tq_milc_write(path, g, file_precision);
    case TQ_FORMAT_SCIDAC:
    case TQ_FORMAT_ILDG: return tq_lime_write(path, fmt, g, file_precision);
    case TQ_FORMAT_NERSC: return tq_nersc_write_rows(path, g, file_precision, 3);
    case TQ_FORMAT_AUTO:
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': a format must be given (auto is for reading)", path);
    }
    return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': unknown format %d", path, (int)fmt);
}
