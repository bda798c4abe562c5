/* ILDG and SciDAC gauge files: LIME containers.
 *
 * A LIME record: a 144-byte header (big-endian uint32 magic 0x456789ab, uint16 version 1,
 * uint16 flags with MB = 0x8000 and ME = 0x4000 marking a message's first and last record,
 * uint64 data length, 128-byte NUL-padded type string), then the data padded with zeros to
 * a multiple of 8 bytes.
 *
 * Gauge data ('ildg-binary-data' or 'scidac-binary-data'): big-endian IEEE reals of 4 or 8
 * bytes, sites in lexicographic order (x fastest), per site mu = x, y, z, t, each a 3x3
 * complex matrix row-major. Metadata come from 'ildg-format' (precision 32/64, lx..lt),
 * 'scidac-private-file-xml' (dims) and 'scidac-private-record-xml' (precision F/D, colors,
 * typesize, datacount). 'scidac-checksum' holds suma/sumb (hex): per site the CRC-32 of its
 * bytes as stored, rotated by rank % 29 and rank % 31, xored together. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/gauge_io_internal.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LIME_MAGIC 0x456789abu
#define LIME_HEADER_BYTES 144
#define LIME_TYPE_BYTES 128
#define LIME_MB 0x8000u
#define LIME_ME 0x4000u
/* Metadata records larger than this are not XML we need; refuse rather than allocate. */
#define LIME_MAX_XML (1u << 20)

static int64_t pad8(int64_t n) { return (n + 7) & ~(int64_t)7; }

/* One record header. Returns TQ_SUCCESS, or TQ_ERR_FORMAT/IO; *end = 1 at a clean end of
 * file (no further record). */
typedef struct lime_rec {
    int64_t data_off, len;
    unsigned flags;
    char type[LIME_TYPE_BYTES + 1];
} lime_rec;

static tq_status lime_next(FILE *f, const char *path, int64_t pos, int64_t fsize, lime_rec *r,
                           int *end)
{
    *end = 0;
    if (pos >= fsize) { *end = 1; return TQ_SUCCESS; }
    if (fsize - pos < LIME_HEADER_BYTES)
        return tq_error(TQ_ERR_FORMAT, "'%s' is truncated: incomplete LIME record header at byte %lld",
                        path, (long long)pos);
    unsigned char h[LIME_HEADER_BYTES];
    TQ_CHECK(tq_io_seek(f, pos, path));
    TQ_CHECK(tq_io_read_exact(f, h, sizeof h, path, "LIME record header"));
    uint32_t magic = tq_load_be32(h);
    if (magic != LIME_MAGIC)
        return tq_error(TQ_ERR_FORMAT, "'%s': bad LIME magic 0x%08x at byte %lld (expected 0x%08x)",
                        path, magic, (long long)pos, LIME_MAGIC);
    unsigned version = ((unsigned)h[4] << 8) | h[5];
    if (version != 1)
        return tq_error(TQ_ERR_FORMAT, "'%s': unsupported LIME version %u at byte %lld", path, version, (long long)pos);
    r->flags = ((unsigned)h[6] << 8) | h[7];
    uint64_t len = tq_load_be64(h + 8);
    memcpy(r->type, h + 16, LIME_TYPE_BYTES);
    r->type[LIME_TYPE_BYTES] = '\0';
    r->data_off = pos + LIME_HEADER_BYTES;
    /* the data and their padding to 8 bytes must be there (c-lime always writes both);
     * unsigned, since a damaged length near 2^63 or 2^64 would overflow pad8 */
    uint64_t need = len <= UINT64_MAX - 7 ? (len + 7) & ~(uint64_t)7 : len;
    if (need > (uint64_t)(fsize - r->data_off))
        return tq_error(TQ_ERR_FORMAT, "'%s' is truncated: LIME record '%s' needs %llu bytes, %lld left",
                        path, r->type, (unsigned long long)need, (long long)(fsize - r->data_off));
    r->len = (int64_t)len;
    return TQ_SUCCESS;
}

tq_status tq_lime_detect(FILE *f, const char *path, tq_gauge_format *fmt)
{
    int64_t fsize = tq_io_file_size(f, path);
    if (fsize < 0) return TQ_ERR_IO;
    int64_t pos = 0;
    for (;;) {
        lime_rec r;
        int end;
        TQ_CHECK(lime_next(f, path, pos, fsize, &r, &end));
        if (end) break;
        if (strcmp(r.type, "ildg-binary-data") == 0) { *fmt = TQ_FORMAT_ILDG; return TQ_SUCCESS; }
        if (strcmp(r.type, "scidac-binary-data") == 0) { *fmt = TQ_FORMAT_SCIDAC; return TQ_SUCCESS; }
        pos = r.data_off + pad8(r.len);
    }
    return tq_error(TQ_ERR_FORMAT, "'%s': LIME file without an 'ildg-binary-data' or 'scidac-binary-data' record", path);
}

/* ---- minimal XML: the text of the first <tag>...</tag> (trimmed) ------------------------ */
static int xml_get(const char *xml, const char *tag, char *out, size_t n)
{
    char open[64], close[64];
    snprintf(open, sizeof open, "<%s", tag);
    snprintf(close, sizeof close, "</%s>", tag);
    size_t ol = strlen(open);
    for (const char *p = strstr(xml, open); p; p = strstr(p + 1, open)) {
        const char *q = p + ol;
        if (*q != '>' && !isspace((unsigned char)*q)) continue;  /* <lx> but not <lxy> */
        q = strchr(q, '>');
        if (!q) return 0;
        q++;
        const char *e = strstr(q, close);
        if (!e) return 0;
        while (q < e && isspace((unsigned char)*q)) q++;
        while (e > q && isspace((unsigned char)e[-1])) e--;
        size_t l = (size_t)(e - q);
        if (l >= n) return 0;
        memcpy(out, q, l);
        out[l] = '\0';
        return 1;
    }
    return 0;
}

static int parse_int(const char *s, long *v)
{
    char *end;
    errno = 0;
    *v = strtol(s, &end, 10);
    while (isspace((unsigned char)*end)) end++;
    return errno == 0 && end != s && *end == '\0';
}

static tq_status read_xml(FILE *f, const char *path, const lime_rec *r, char **out)
{
    if ((uint64_t)r->len > LIME_MAX_XML)
        return tq_error(TQ_ERR_FORMAT, "'%s': LIME record '%s' is %lld bytes, too large for metadata",
                        path, r->type, (long long)r->len);
    char *x = malloc((size_t)r->len + 1);
    if (!x) return tq_error(TQ_ERR_NOMEM, "reading '%s': out of memory", path);
    tq_status s = tq_io_seek(f, r->data_off, path);
    if (s == TQ_SUCCESS) s = tq_io_read_exact(f, x, (size_t)r->len, path, r->type);
    if (s != TQ_SUCCESS) { free(x); return s; }
    x[r->len] = '\0';  /* records often carry their own NUL too; strings stop at the first */
    *out = x;
    return TQ_SUCCESS;
}

/* Metadata gathered from the records; -1 / 0 where a record did not say. */
typedef struct lime_meta {
    int ildg_dims[4], have_ildg_format, ildg_prec;
    int scidac_dims[4], have_private_file;
    int record_prec, have_private_record;
    int have_checksum;
    uint32_t suma, sumb;
    int have_binary;
    int64_t bin_off, bin_len;
    char bin_type[LIME_TYPE_BYTES + 1];
} lime_meta;

static tq_status parse_ildg_format(const char *x, const char *path, lime_meta *m)
{
    static const char *tags[4] = {"lx", "ly", "lz", "lt"};
    char v[64];
    long l;
    if (xml_get(x, "field", v, sizeof v) && strcmp(v, "su3gauge") != 0)
        return tq_error(TQ_ERR_FORMAT, "'%s': ildg-format field is '%s', not su3gauge", path, v);
    if (!xml_get(x, "precision", v, sizeof v) || !parse_int(v, &l) || (l != 32 && l != 64))
        return tq_error(TQ_ERR_FORMAT, "'%s': ildg-format has no valid <precision> (32 or 64)", path);
    m->ildg_prec = (int)l / 8;
    for (int mu = 0; mu < 4; mu++) {
        if (!xml_get(x, tags[mu], v, sizeof v) || !parse_int(v, &l) || l <= 0 || l > (1 << 20))
            return tq_error(TQ_ERR_FORMAT, "'%s': ildg-format has no valid <%s>", path, tags[mu]);
        m->ildg_dims[mu] = (int)l;
    }
    m->have_ildg_format = 1;
    return TQ_SUCCESS;
}

static tq_status parse_private_file(const char *x, const char *path, lime_meta *m)
{
    char v[256];
    if (!xml_get(x, "dims", v, sizeof v))
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-file-xml has no <dims>", path);
    char *p = v, *end;
    for (int mu = 0; mu < 4; mu++) {
        errno = 0;
        long l = strtol(p, &end, 10);
        if (end == p || errno || l <= 0 || l > (1 << 20))
            return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-file-xml <dims> '%s' is not 4 extents", path, v);
        m->scidac_dims[mu] = (int)l;
        p = end;
    }
    while (isspace((unsigned char)*p)) p++;
    if (*p)
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-file-xml <dims> '%s' is not 4-dimensional", path, v);
    m->have_private_file = 1;
    return TQ_SUCCESS;
}

static tq_status parse_private_record(const char *x, const char *path, lime_meta *m)
{
    char v[64];
    long l;
    if (!xml_get(x, "precision", v, sizeof v) || (strcmp(v, "F") != 0 && strcmp(v, "D") != 0))
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-record-xml has no valid <precision> (F or D)", path);
    m->record_prec = v[0] == 'F' ? 4 : 8;
    if (xml_get(x, "colors", v, sizeof v) && (!parse_int(v, &l) || l != 3))
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-record-xml says %s colors, expected 3", path, v);
    if (xml_get(x, "datacount", v, sizeof v) && (!parse_int(v, &l) || l != 4))
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-record-xml datacount %s, expected 4 (links per site)", path, v);
    if (xml_get(x, "typesize", v, sizeof v) && (!parse_int(v, &l) || l != 18 * m->record_prec))
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-private-record-xml typesize %s, expected %d for a 3x3 complex matrix",
                        path, v, 18 * m->record_prec);
    m->have_private_record = 1;
    return TQ_SUCCESS;
}

static tq_status parse_checksum(const char *x, const char *path, lime_meta *m)
{
    char a[64], b[64];
    char *ea, *eb;
    if (!xml_get(x, "suma", a, sizeof a) || !xml_get(x, "sumb", b, sizeof b))
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-checksum record without <suma>/<sumb>", path);
    errno = 0;
    unsigned long va = strtoul(a, &ea, 16), vb = strtoul(b, &eb, 16);
    if (errno || ea == a || *ea || eb == b || *eb || va > 0xffffffffUL || vb > 0xffffffffUL)
        return tq_error(TQ_ERR_FORMAT, "'%s': scidac-checksum values '%s' '%s' are not 32-bit hex", path, a, b);
    m->suma = (uint32_t)va;
    m->sumb = (uint32_t)vb;
    m->have_checksum = 1;
    return TQ_SUCCESS;
}

static tq_status scan(FILE *f, const char *path, int64_t fsize, lime_meta *m)
{
    int64_t pos = 0;
    for (;;) {
        lime_rec r;
        int end;
        TQ_CHECK(lime_next(f, path, pos, fsize, &r, &end));
        if (end) break;
        tq_status (*parse)(const char *, const char *, lime_meta *) = NULL;
        if (strcmp(r.type, "ildg-format") == 0 && !m->have_ildg_format) parse = parse_ildg_format;
        else if (strcmp(r.type, "scidac-private-file-xml") == 0 && !m->have_private_file) parse = parse_private_file;
        else if (strcmp(r.type, "scidac-private-record-xml") == 0 && !m->have_private_record) parse = parse_private_record;
        else if (strcmp(r.type, "scidac-checksum") == 0 && !m->have_checksum && m->have_binary) parse = parse_checksum;
        else if ((strcmp(r.type, "ildg-binary-data") == 0 || strcmp(r.type, "scidac-binary-data") == 0)
                 && !m->have_binary) {
            /* the first binary record is the configuration; later ones are not ours */
            m->have_binary = 1;
            m->bin_off = r.data_off;
            m->bin_len = r.len;
            strcpy(m->bin_type, r.type);
        }
        if (parse) {
            char *x = NULL;
            TQ_CHECK(read_xml(f, path, &r, &x));
            tq_status s = parse(x, path, m);
            free(x);
            TQ_CHECK(s);
        }
        pos = r.data_off + pad8(r.len);
    }
    return TQ_SUCCESS;
}

typedef struct lime_reader {
    size_t site_bytes;
    int prec;
    const tq_io_box *box;   /* NULL: every site is its own */
    tq_scidac_sum sum;
    double *links;
} lime_reader;

/* One run of sites split over host threads: each sums its sites' checksums (xor: the
 * same in any order) and decodes them. */
typedef struct lime_run_part {
    lime_reader *r;
    const unsigned char *bytes;
    int64_t global_site, box_site;
    pthread_mutex_t lock;
} lime_run_part;

static void lime_run_sites(int64_t begin, int64_t end, void *arg)
{
    lime_run_part *p = arg;
    lime_reader *r = p->r;
    tq_scidac_sum sum = {0, 0};
    for (int64_t i = begin; i < end; i++)
        if (!r->box || tq_io_box_own_site(r->box, p->box_site + i))
            tq_scidac_sum_site(&sum, (uint64_t)(p->global_site + i), p->bytes + (size_t)i * r->site_bytes, r->site_bytes);
    tq_io_decode_reals(r->links + (p->box_site + begin) * 72, p->bytes + (size_t)begin * r->site_bytes,
                       (size_t)(end - begin) * 72, r->prec, 1);
    pthread_mutex_lock(&p->lock);
    r->sum.suma ^= sum.suma;
    r->sum.sumb ^= sum.sumb;
    pthread_mutex_unlock(&p->lock);
}

static tq_status lime_run(void *ctx, unsigned char *bytes, int64_t global_site, int64_t box_site, int64_t n)
{
    lime_run_part p = {(lime_reader *)ctx, bytes, global_site, box_site, PTHREAD_MUTEX_INITIALIZER};
    tq_host_parallel_for(n, lime_run_sites, &p);
    return TQ_SUCCESS;
}

tq_status tq_lime_read(FILE *f, const char *path, tq_gauge_format fmt, const tq_io_box *box, tq_host_gauge *g,
                       tq_gauge_file_info *info, tq_io_partial *partial)
{
    g->links = NULL;
    int64_t fsize = tq_io_file_size(f, path);
    if (fsize < 0) return TQ_ERR_IO;
    unsigned char head[4];
    TQ_CHECK(tq_io_read_exact(f, head, 4, path, "LIME magic"));
    if (tq_load_be32(head) != LIME_MAGIC)
        return tq_error(TQ_ERR_FORMAT, "'%s' is not a LIME (%s) file: magic 0x%08x, expected 0x%08x",
                        path, tq_gauge_format_name(fmt), tq_load_be32(head), LIME_MAGIC);

    lime_meta m;
    memset(&m, 0, sizeof m);
    TQ_CHECK(scan(f, path, fsize, &m));

    if (!m.have_binary)
        return tq_error(TQ_ERR_FORMAT, "'%s': no 'ildg-binary-data' or 'scidac-binary-data' record", path);
    if (fmt == TQ_FORMAT_ILDG && !m.have_ildg_format)
        return tq_error(TQ_ERR_FORMAT, "'%s': no 'ildg-format' record: not an ILDG file", path);
    if (fmt == TQ_FORMAT_SCIDAC && !m.have_private_file)
        return tq_error(TQ_ERR_FORMAT, "'%s': no 'scidac-private-file-xml' record: not a SciDAC file", path);

    int dims[4];
    if (m.have_ildg_format) memcpy(dims, m.ildg_dims, sizeof dims);
    else if (m.have_private_file) memcpy(dims, m.scidac_dims, sizeof dims);
    else return tq_error(TQ_ERR_FORMAT, "'%s': no record gives the lattice dimensions", path);
    if (m.have_ildg_format && m.have_private_file && memcmp(m.ildg_dims, m.scidac_dims, sizeof dims) != 0)
        return tq_error(TQ_ERR_FORMAT, "'%s': ildg-format says %dx%dx%dx%d, scidac-private-file-xml %dx%dx%dx%d",
                        path, m.ildg_dims[0], m.ildg_dims[1], m.ildg_dims[2], m.ildg_dims[3],
                        m.scidac_dims[0], m.scidac_dims[1], m.scidac_dims[2], m.scidac_dims[3]);
    TQ_CHECK(tq_io_check_dims(dims, path));
    int64_t vol = tq_volume4(dims);

    int prec = m.have_ildg_format ? m.ildg_prec : m.have_private_record ? m.record_prec : 0;
    if (m.have_ildg_format && m.have_private_record && m.ildg_prec != m.record_prec)
        return tq_error(TQ_ERR_FORMAT, "'%s': ildg-format says %d-bit reals, scidac-private-record-xml %d-bit",
                        path, 8 * m.ildg_prec, 8 * m.record_prec);
    if (!prec) {  /* no metadata on precision: the record length decides */
        if (m.bin_len == vol * 72 * 4) prec = 4;
        else if (m.bin_len == vol * 72 * 8) prec = 8;
        else prec = 8;  /* reported as a size mismatch below */
    }
    const size_t site_bytes = (size_t)72 * (size_t)prec;
    if (m.bin_len != vol * (int64_t)site_bytes)
        return tq_error(TQ_ERR_FORMAT, "'%s': '%s' record has %lld bytes, a %dx%dx%dx%d lattice at %d-byte precision needs %lld",
                        path, m.bin_type, (long long)m.bin_len, dims[0], dims[1], dims[2], dims[3], prec,
                        (long long)(vol * (int64_t)site_bytes));

    TQ_CHECK(tq_io_check_box(box, dims, path));
    info->format = fmt;
    memcpy(info->dims, dims, sizeof info->dims);
    info->file_precision = prec;
    info->has_checksum = m.have_checksum;
    info->checksum_a = m.have_checksum ? m.suma : 0;
    info->checksum_b = m.have_checksum ? m.sumb : 0;
    if (box == &tq_io_header_only) return TQ_SUCCESS;
    const tq_io_box whole = tq_io_box_whole(dims);
    const tq_io_box *b = box ? box : &whole;
    TQ_CHECK(tq_host_gauge_alloc(g, b->ext));
    lime_reader r = {site_bytes, prec, box, {0, 0}, g->links};
    tq_status s = tq_io_read_box(f, path, m.bin_off, site_bytes, b, m.bin_type, lime_run, &r);
    if (s == TQ_SUCCESS && partial) {
        *partial = (tq_io_partial){.format = fmt, .have_checksum = m.have_checksum, .want_a = m.suma, .want_b = m.sumb,
                                   .got_a = r.sum.suma, .got_b = r.sum.sumb};
    } else if (s == TQ_SUCCESS && m.have_checksum && (r.sum.suma != m.suma || r.sum.sumb != m.sumb))
        s = tq_error(TQ_ERR_CHECKSUM, "'%s': SciDAC checksum mismatch: file says %x %x, data give %x %x",
                     path, m.suma, m.sumb, r.sum.suma, r.sum.sumb);
    if (s != TQ_SUCCESS) tq_host_gauge_free(g);
    return s;
}

/* ---- writing ----------------------------------------------------------------------------- */
static tq_status write_header(FILE *f, const char *path, const char *type, uint64_t len,
                              unsigned flags)
{
    unsigned char h[LIME_HEADER_BYTES];
    memset(h, 0, sizeof h);
    tq_store_be32(h, LIME_MAGIC);
    h[4] = 0; h[5] = 1;
    h[6] = (unsigned char)(flags >> 8);
    h[7] = (unsigned char)flags;
    tq_store_be64(h + 8, len);
    strncpy((char *)h + 16, type, LIME_TYPE_BYTES - 1);
    return tq_io_write_exact(f, h, sizeof h, path);
}

static tq_status write_padding(FILE *f, const char *path, uint64_t len)
{
    static const unsigned char zeros[8];
    return tq_io_write_exact(f, zeros, (size_t)(pad8((int64_t)len) - (int64_t)len), path);
}

/* An XML record; the stored data include the terminating NUL, as QIO's writers do. */
static tq_status write_text(FILE *f, const char *path, const char *type, const char *text,
                            unsigned flags)
{
    size_t len = strlen(text) + 1;
    TQ_CHECK(write_header(f, path, type, len, flags));
    TQ_CHECK(tq_io_write_exact(f, text, len, path));
    return write_padding(f, path, len);
}

/* The records before the binary data: SciDAC's file and record messages (QIO's layout)
 * with the ILDG format record, or ILDG's format and logical file name records. */
static tq_status write_metadata_records(FILE *f, const char *path, tq_gauge_format fmt, const int d[4], int prec)
{
    char date[64] = "";
    time_t now = time(NULL);
    struct tm tmv;
    if (gmtime_r(&now, &tmv)) strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y UTC", &tmv);

    char ildg_format[512], private_file[256], private_record[512], lfn[320];
    snprintf(ildg_format, sizeof ildg_format,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?><ildgFormat xmlns=\"http://www.lqcd.org/ildg\" "
             "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
             "xsi:schemaLocation=\"http://www.lqcd.org/ildg/filefmt.xsd\"><version>1.0</version>"
             "<field>su3gauge</field><precision>%d</precision><lx>%d</lx><ly>%d</ly><lz>%d</lz>"
             "<lt>%d</lt></ildgFormat>", 8 * prec, d[0], d[1], d[2], d[3]);
    if (fmt != TQ_FORMAT_SCIDAC) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        snprintf(lfn, sizeof lfn, "lfn://taskqcd/%.256s", base);
        TQ_CHECK(write_text(f, path, "ildg-format", ildg_format, LIME_MB));
        return write_text(f, path, "ildg-data-lfn", lfn, 0);
    }
    snprintf(private_file, sizeof private_file,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?><scidacFile><version>1.1</version>"
             "<spacetime>4</spacetime><dims>%d %d %d %d </dims><volfmt>0</volfmt></scidacFile>",
             d[0], d[1], d[2], d[3]);
    snprintf(private_record, sizeof private_record,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?><scidacRecord><version>1.1</version>"
             "<date>%s</date><recordtype>0</recordtype><datatype>QDP_%c3_ColorMatrix</datatype>"
             "<precision>%c</precision><colors>3</colors><typesize>%d</typesize>"
             "<datacount>4</datacount></scidacRecord>", date, prec == 4 ? 'F' : 'D',
             prec == 4 ? 'F' : 'D', 18 * prec);
    /* QIO's layout: a file message, then the record message with the data and checksum */
    TQ_CHECK(write_text(f, path, "scidac-private-file-xml", private_file, LIME_MB));
    TQ_CHECK(write_text(f, path, "scidac-file-xml",
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><info>TaskQCD gauge configuration</info>", LIME_ME));
    TQ_CHECK(write_text(f, path, "scidac-private-record-xml", private_record, LIME_MB));
    TQ_CHECK(write_text(f, path, "scidac-record-xml",
                        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><info>written by TaskQCD</info>", 0));
    return write_text(f, path, "ildg-format", ildg_format, 0);
}

/* The binary-data record (links in big-endian, site order as the API's) and its padding;
 * *sum receives the SciDAC checksum of what was written. */
static tq_status write_binary_data(FILE *f, const char *path, tq_gauge_format fmt, const tq_host_gauge *g, int prec,
                                   tq_scidac_sum *sum)
{
    const int64_t vol = tq_volume4(g->dims);
    const size_t site_bytes = (size_t)72 * (size_t)prec;
    const uint64_t bin_len = (uint64_t)vol * site_bytes;
    unsigned char *buf = malloc(TQ_IO_CHUNK_SITES * site_bytes);
    if (!buf) return tq_error(TQ_ERR_NOMEM, "writing '%s': out of memory", path);
    tq_status s = write_header(f, path, fmt == TQ_FORMAT_SCIDAC ? "scidac-binary-data" : "ildg-binary-data",
                               bin_len, 0);
    for (int64_t s0 = 0; s0 < vol && s == TQ_SUCCESS; s0 += TQ_IO_CHUNK_SITES) {
        int64_t n = vol - s0 < TQ_IO_CHUNK_SITES ? vol - s0 : TQ_IO_CHUNK_SITES;
        tq_io_encode_reals(buf, g->links + s0 * 72, (size_t)n * 72, prec, 1);
        for (int64_t i = 0; i < n; i++)
            tq_scidac_sum_site(sum, (uint64_t)(s0 + i), buf + (size_t)i * site_bytes, site_bytes);
        s = tq_io_write_exact(f, buf, (size_t)n * site_bytes, path);
    }
    free(buf);
    if (s == TQ_SUCCESS) s = write_padding(f, path, bin_len);
    return s;
}

/* The scidac-checksum record after the binary data. */
static tq_status write_checksum_record(FILE *f, const char *path, tq_scidac_sum sum)
{
    /* ILDG has no checksum of its own; carrying SciDAC's lets readers verify the data */
    char cks[256];
    snprintf(cks, sizeof cks,
             "<?xml version=\"1.0\" encoding=\"UTF-8\"?><scidacChecksum><version>1.0</version>"
             "<suma>%x</suma><sumb>%x</sumb></scidacChecksum>", sum.suma, sum.sumb);
    return write_text(f, path, "scidac-checksum", cks, LIME_ME);
}

typedef struct lime_writer {
    const double *links;
    int prec;
    tq_scidac_sum sum;
} lime_writer;

static tq_status lime_encode_run(void *ctx, unsigned char *bytes, int64_t global_site, int64_t box_site, int64_t n)
{
    lime_writer *w = (lime_writer *)ctx;
    const size_t site_bytes = (size_t)72 * (size_t)w->prec;
    tq_io_encode_reals(bytes, w->links + box_site * 72, (size_t)n * 72, w->prec, 1);
    for (int64_t i = 0; i < n; i++)
        tq_scidac_sum_site(&w->sum, (uint64_t)(global_site + i), bytes + (size_t)i * site_bytes, site_bytes);
    return TQ_SUCCESS;
}

tq_status tq_lime_write_local(const char *path, tq_gauge_format fmt, const tq_io_box *box, const tq_host_gauge *g,
                              int file_precision)
{
    const int prec = file_precision;
    const uint64_t bin_len = (uint64_t)tq_volume4(box->dims) * 72 * (uint64_t)prec;
    tq_io_shared sf;
    TQ_CHECK(tq_io_shared_open(path, &sf));
    /* rank 0 writes the records before the data; every rank learns where the data start */
    tq_status s = TQ_SUCCESS;
    int64_t data_off = 0;
    if (sf.root) {
        s = write_metadata_records(sf.af.f, path, fmt, box->dims, prec);
        if (s == TQ_SUCCESS)
            s = write_header(sf.af.f, path, fmt == TQ_FORMAT_SCIDAC ? "scidac-binary-data" : "ildg-binary-data", bin_len, 0);
        if (s == TQ_SUCCESS && (data_off = (int64_t)ftello(sf.af.f)) < 0)
            s = tq_error(TQ_ERR_IO, "cannot write '%s': %s", path, strerror(errno));
    }
    s = tq_status_agree(s);
    if (s != TQ_SUCCESS) return tq_io_shared_close(&sf, s);
    tq_internal_bcast(&data_off, (int)sizeof data_off, 0);
    lime_writer w = {g->links, prec, {0, 0}};
    s = tq_io_write_box(&sf, data_off, (size_t)72 * (size_t)prec, box, lime_encode_run, &w);
    uint32_t sums[2] = {w.sum.suma, w.sum.sumb};   /* xors of every site's term */
    tq_internal_allreduce_u32(sums, 2, 1);
    if (sf.root && s == TQ_SUCCESS) {
        if (fseeko(sf.af.f, (off_t)(data_off + (int64_t)bin_len), SEEK_SET) != 0)
            s = tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
        if (s == TQ_SUCCESS) s = write_padding(sf.af.f, path, bin_len);
        if (s == TQ_SUCCESS) s = write_checksum_record(sf.af.f, path, (tq_scidac_sum){sums[0], sums[1]});
    }
    return tq_io_shared_close(&sf, s);
}

tq_status tq_lime_write(const char *path, tq_gauge_format fmt, const tq_host_gauge *g,
                        int file_precision)
{
    TQ_CHECK(tq_io_check_field(g, path));
    if (fmt != TQ_FORMAT_ILDG && fmt != TQ_FORMAT_SCIDAC)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': not a LIME format", path);
    if (file_precision != 4 && file_precision != 8)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': file precision must be 4 or 8, not %d", path, file_precision);
    tq_atomic_file af;
    TQ_CHECK(tq_io_create_atomic(path, &af));
    FILE *f = af.f;
    tq_scidac_sum sum = {0, 0};
    tq_status s = write_metadata_records(f, path, fmt, g->dims, file_precision);
    if (s == TQ_SUCCESS) s = write_binary_data(f, path, fmt, g, file_precision, &sum);
    if (s == TQ_SUCCESS) s = write_checksum_record(f, path, sum);
    return tq_io_finish_atomic(&af, s);
}
