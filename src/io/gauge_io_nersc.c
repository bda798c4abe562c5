/* NERSC archive gauge files.
 *
 * An ASCII header of "KEY = VALUE" lines between BEGIN_HEADER and END_HEADER, then the
 * binary data: sites in lexicographic order (x fastest), per site mu = x, y, z, t, each link
 * a 3x3 complex matrix row-major (DATATYPE 4D_SU3_GAUGE_3x3) or its first two rows
 * (4D_SU3_GAUGE; the third is conj(row1 x row2)). FLOATING_POINT gives the reals' size and
 * byte order (IEEE32 and IEEE64 without a suffix are big-endian, the archive's original
 * meaning).
 * CHECKSUM (hex): the data as stored, read as 32-bit words in the host's order after
 * conversion from the file's byte order, summed mod 2^32 -- over the rows stored, so a
 * two-row file's checksum covers two rows (this is MILC's nersc_cksum, and what Grid and
 * Chroma compute for it). LINK_TRACE = <Re Tr U / 3> over all links; PLAQUETTE = <Re Tr P / 3>
 * over sites and all 6 planes; both are verified on reading. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/gauge_io_internal.h"
#include "kernels/su3.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NERSC_MAX_HEADER 65536
/* The header's values are printed decimals (often 6 significant digits) of sums computed in
 * the writer's arithmetic: compare loosely. */
#define NERSC_PLAQ_TOL 1e-5
#define NERSC_TRACE_TOL 1e-5

typedef struct nersc_hdr {
    int dims[4];
    int have_dims[4];
    int rows;             /* 2 or 3 */
    int prec, big;
    int have_checksum, have_trace, have_plaq;
    uint32_t checksum;
    double trace, plaq;
    int64_t data_off;
} nersc_hdr;

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1])) e--;
    *e = '\0';
    return s;
}

/* Strips optional surrounding quotes (some writers quote values). */
static char *unquote(char *v)
{
    size_t l = strlen(v);
    if (l >= 2 && (v[0] == '"' || v[0] == '\'') && v[l - 1] == v[0]) {
        v[l - 1] = '\0';
        return v + 1;
    }
    return v;
}

static tq_status parse_line(char *line, const char *path, nersc_hdr *h)
{
    char *eq = strchr(line, '=');
    if (!eq) return TQ_SUCCESS;  /* tolerate blank or free-text lines */
    *eq = '\0';
    char *key = trim(line), *val = unquote(trim(eq + 1));
    char *end;
    if (strncmp(key, "DIMENSION_", 10) == 0 && key[10] >= '1' && key[10] <= '4' && key[11] == '\0') {
        int mu = key[10] - '1';
        errno = 0;
        long l = strtol(val, &end, 10);
        if (errno || end == val || *trim(end) || l <= 0 || l > (1 << 20))
            return tq_error(TQ_ERR_FORMAT, "'%s': bad NERSC header value %s = '%s'", path, key, val);
        h->dims[mu] = (int)l;
        h->have_dims[mu] = 1;
    } else if (strcmp(key, "DATATYPE") == 0) {
        if (strcmp(val, "4D_SU3_GAUGE_3x3") == 0) h->rows = 3;
        else if (strcmp(val, "4D_SU3_GAUGE") == 0) h->rows = 2;
        else return tq_error(TQ_ERR_UNSUPPORTED, "'%s': NERSC DATATYPE '%s' is not supported (4D_SU3_GAUGE_3x3, 4D_SU3_GAUGE)", path, val);
    } else if (strcmp(key, "FLOATING_POINT") == 0) {
        if (strcmp(val, "IEEE32BIG") == 0 || strcmp(val, "IEEE32") == 0) { h->prec = 4; h->big = 1; }
        else if (strcmp(val, "IEEE32LITTLE") == 0) { h->prec = 4; h->big = 0; }
        else if (strcmp(val, "IEEE64BIG") == 0 || strcmp(val, "IEEE64") == 0) { h->prec = 8; h->big = 1; }
        else if (strcmp(val, "IEEE64LITTLE") == 0) { h->prec = 8; h->big = 0; }
        else return tq_error(TQ_ERR_UNSUPPORTED, "'%s': NERSC FLOATING_POINT '%s' is not supported", path, val);
    } else if (strcmp(key, "CHECKSUM") == 0) {
        errno = 0;
        unsigned long v = strtoul(val, &end, 16);
        if (errno || end == val || *trim(end) || v > 0xffffffffUL)
            return tq_error(TQ_ERR_FORMAT, "'%s': NERSC CHECKSUM '%s' is not 32-bit hex", path, val);
        h->checksum = (uint32_t)v;
        h->have_checksum = 1;
    } else if (strcmp(key, "LINK_TRACE") == 0 || strcmp(key, "PLAQUETTE") == 0) {
        errno = 0;
        double v = strtod(val, &end);
        if (errno || end == val || *trim(end) || !isfinite(v))
            return tq_error(TQ_ERR_FORMAT, "'%s': bad NERSC header value %s = '%s'", path, key, val);
        if (key[0] == 'L') { h->trace = v; h->have_trace = 1; }
        else { h->plaq = v; h->have_plaq = 1; }
    }
    /* other keys (BOUNDARY_*, ENSEMBLE_*, CREATOR...) are informative */
    return TQ_SUCCESS;
}

static tq_status read_header(FILE *f, const char *path, nersc_hdr *h)
{
    memset(h, 0, sizeof *h);
    char line[1024];
    int64_t used = 0;
    int first = 1;
    for (;;) {
        if (!fgets(line, sizeof line, f)) {
            if (ferror(f)) return tq_error(TQ_ERR_IO, "cannot read '%s': %s", path, strerror(errno));
            return tq_error(TQ_ERR_FORMAT, "'%s' is truncated: no END_HEADER in the NERSC header", path);
        }
        size_t l = strlen(line);
        used += (int64_t)l;
        if (used > NERSC_MAX_HEADER || (l == sizeof line - 1 && line[l - 1] != '\n'))
            return tq_error(TQ_ERR_FORMAT, "'%s': NERSC header too long or with an overlong line", path);
        char *t = trim(line);
        if (first) {
            if (strcmp(t, "BEGIN_HEADER") != 0)
                return tq_error(TQ_ERR_FORMAT, "'%s' is not a NERSC file: it does not start with BEGIN_HEADER", path);
            first = 0;
            continue;
        }
        if (strcmp(t, "END_HEADER") == 0) break;
        TQ_CHECK(parse_line(t, path, h));
    }
    off_t off = ftello(f);
    if (off < 0) return tq_error(TQ_ERR_IO, "cannot seek in '%s': %s", path, strerror(errno));
    h->data_off = (int64_t)off;
    for (int mu = 0; mu < 4; mu++)
        if (!h->have_dims[mu])
            return tq_error(TQ_ERR_FORMAT, "'%s': NERSC header has no DIMENSION_%d", path, mu + 1);
    if (!h->rows) return tq_error(TQ_ERR_FORMAT, "'%s': NERSC header has no DATATYPE", path);
    if (!h->prec) return tq_error(TQ_ERR_FORMAT, "'%s': NERSC header has no FLOATING_POINT", path);
    return TQ_SUCCESS;
}

typedef struct nersc_reader {
    const nersc_hdr *h;
    size_t link_reals;
    const tq_io_box *box;   /* NULL: every site is its own */
    uint32_t sum;
    double trace;           /* Re Tr of the own sites' links */
    double *links;
} nersc_reader;

static tq_status nersc_run(void *ctx, unsigned char *bytes, int64_t global_site, int64_t box_site, int64_t n)
{
    (void)global_site;   /* NERSC's checksum is a plain sum: no site index */
    nersc_reader *r = (nersc_reader *)ctx;
    const size_t link_bytes = r->link_reals * (size_t)r->h->prec;
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *site = bytes + (size_t)i * 4 * link_bytes;
        const int own = !r->box || tq_io_box_own_site(r->box, box_site + i);
        if (own) r->sum = tq_nersc_sum_reals(r->sum, site, 4 * r->link_reals, r->h->prec, r->h->big);
        for (int l = 0; l < 4; l++) {
            double *u = r->links + ((box_site + i) * 4 + l) * 18;
            tq_io_decode_reals(u, site + (size_t)l * link_bytes, r->link_reals, r->h->prec, r->h->big);
            if (r->h->rows == 2) tq_su3_reconstruct_row3(u);
            if (own) r->trace += u[0] + u[8] + u[16];
        }
    }
    return TQ_SUCCESS;
}

/* Re Tr of the plaquettes of a box's own sites, whose ext is own + 1 (the next site in each
 * direction read too). */
static double box_plaquette_sum(const tq_io_box *b, const double *links)
{
    const int *e = b->ext, *o = b->own;
    double sum = 0, ab[18], cd[18];
    int y[4];
    for (y[3] = 0; y[3] < o[3]; y[3]++)
    for (y[2] = 0; y[2] < o[2]; y[2]++)
    for (y[1] = 0; y[1] < o[1]; y[1]++)
    for (y[0] = 0; y[0] < o[0]; y[0]++) {
        const int64_t s = (((int64_t)y[3] * e[2] + y[2]) * e[1] + y[1]) * e[0] + y[0];
        int64_t step[4] = {1, e[0], (int64_t)e[0] * e[1], (int64_t)e[0] * e[1] * e[2]};
        for (int mu = 0; mu < 4; mu++)
            for (int nu = mu + 1; nu < 4; nu++) {
                tq_su3_mul(ab, links + (s * 4 + mu) * 18, links + ((s + step[mu]) * 4 + nu) * 18);
                tq_su3_mul(cd, links + (s * 4 + nu) * 18, links + ((s + step[nu]) * 4 + mu) * 18);
                sum += tq_su3_re_trace_mul_adj(ab, cd);
            }
    }
    return sum;
}

tq_status tq_nersc_read(FILE *f, const char *path, const tq_io_box *box, tq_host_gauge *g, tq_gauge_file_info *info,
                        tq_io_partial *partial)
{
    g->links = NULL;
    int64_t fsize = tq_io_file_size(f, path);
    if (fsize < 0) return TQ_ERR_IO;
    nersc_hdr h;
    TQ_CHECK(read_header(f, path, &h));
    TQ_CHECK(tq_io_check_dims(h.dims, path));
    TQ_CHECK(tq_io_check_box(box, h.dims, path));

    int64_t vol = tq_volume4(h.dims);
    const size_t link_reals = (size_t)h.rows * 6;
    const size_t site_bytes = 4 * link_reals * (size_t)h.prec;
    int64_t expect = vol * (int64_t)site_bytes;
    if (fsize - h.data_off < expect)
        return tq_error(TQ_ERR_FORMAT, "'%s' is truncated: %lld data bytes, a %dx%dx%dx%d lattice needs %lld",
                        path, (long long)(fsize - h.data_off), h.dims[0], h.dims[1], h.dims[2], h.dims[3],
                        (long long)expect);
    if (fsize - h.data_off > expect)
        return tq_error(TQ_ERR_FORMAT, "'%s': %lld data bytes, but the header's %dx%dx%dx%d lattice needs %lld",
                        path, (long long)(fsize - h.data_off), h.dims[0], h.dims[1], h.dims[2], h.dims[3],
                        (long long)expect);

    info->format = TQ_FORMAT_NERSC;
    memcpy(info->dims, h.dims, sizeof info->dims);
    info->file_precision = h.prec;
    info->nersc_checksum = h.checksum;
    info->has_checksum = h.have_checksum;
    if (box == &tq_io_header_only) return TQ_SUCCESS;
    const tq_io_box whole = tq_io_box_whole(h.dims);
    const tq_io_box *b = box ? box : &whole;
    TQ_CHECK(tq_host_gauge_alloc(g, b->ext));
    nersc_reader r = {&h, link_reals, box, 0, 0.0, g->links};
    tq_status s = tq_io_read_box(f, path, h.data_off, site_bytes, b, "NERSC data", nersc_run, &r);
    if (s == TQ_SUCCESS && partial) {
        int halo = 1;
        for (int mu = 0; mu < 4; mu++) halo &= b->ext[mu] == b->own[mu] + 1;
        *partial = (tq_io_partial){.format = TQ_FORMAT_NERSC, .have_checksum = h.have_checksum,
                                   .have_trace = h.have_trace, .have_plaq = h.have_plaq && halo,
                                   .want_a = h.checksum, .want_trace = h.trace, .want_plaq = h.plaq,
                                   .got_a = r.sum, .got_trace = r.trace,
                                   .got_plaq = h.have_plaq && halo ? box_plaquette_sum(b, g->links) : 0.0};
    } else {
        if (s == TQ_SUCCESS && h.have_checksum && r.sum != h.checksum)
            s = tq_error(TQ_ERR_CHECKSUM, "'%s': NERSC checksum mismatch: header says %x, data give %x",
                         path, h.checksum, r.sum);
        if (s == TQ_SUCCESS && h.have_trace) {
            double tr = 0;
            s = tq_host_gauge_link_trace(g, &tr);
            if (s == TQ_SUCCESS && !(fabs(tr - h.trace) <= NERSC_TRACE_TOL))
                s = tq_error(TQ_ERR_CHECKSUM, "'%s': NERSC LINK_TRACE mismatch: header says %.10g, data give %.10g",
                             path, h.trace, tr);
        }
        if (s == TQ_SUCCESS && h.have_plaq) {
            tq_plaquette p;
            s = tq_host_gauge_plaquette(g, &p);
            if (s == TQ_SUCCESS && !(fabs(p.total - h.plaq) <= NERSC_PLAQ_TOL))
                s = tq_error(TQ_ERR_CHECKSUM, "'%s': NERSC PLAQUETTE mismatch: header says %.10g, data give %.10g",
                             path, h.plaq, p.total);
        }
    }
    if (s != TQ_SUCCESS) tq_host_gauge_free(g);
    return s;
}

tq_status tq_nersc_write_rows(const char *path, const tq_host_gauge *g, int file_precision,
                              int rows)
{
    TQ_CHECK(tq_io_check_field(g, path));
    if (file_precision != 4 && file_precision != 8)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': file precision must be 4 or 8, not %d", path, file_precision);
    if (rows != 2 && rows != 3)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': NERSC rows must be 2 or 3, not %d", path, rows);
    const int prec = file_precision;
    const int64_t nlinks = tq_volume4(g->dims) * 4;
    const size_t link_reals = (size_t)rows * 6;
    const size_t link_bytes = link_reals * (size_t)prec;

    /* The header carries the checksum: one pass to compute it, one to write. */
    unsigned char one[18 * 8];
    uint32_t sum = 0;
    for (int64_t l = 0; l < nlinks; l++) {
        tq_io_encode_reals(one, g->links + l * 18, link_reals, prec, 1);
        sum = tq_nersc_sum_reals(sum, one, link_reals, prec, 1);
    }
    tq_plaquette p;
    double tr;
    TQ_CHECK(tq_host_gauge_plaquette(g, &p));
    TQ_CHECK(tq_host_gauge_link_trace(g, &tr));

    char date[64] = "unknown";
    time_t now = time(NULL);
    struct tm tmv;
    if (gmtime_r(&now, &tmv)) strftime(date, sizeof date, "%a %b %e %H:%M:%S %Y UTC", &tmv);
    char hdr[2048];
    int hl = snprintf(hdr, sizeof hdr,
        "BEGIN_HEADER\n"
        "HDR_VERSION = 1.0\n"
        "DATATYPE = %s\n"
        "STORAGE_FORMAT = 1.0\n"
        "DIMENSION_1 = %d\nDIMENSION_2 = %d\nDIMENSION_3 = %d\nDIMENSION_4 = %d\n"
        "LINK_TRACE = %.15g\n"
        "PLAQUETTE = %.15g\n"
        "BOUNDARY_1 = PERIODIC\nBOUNDARY_2 = PERIODIC\nBOUNDARY_3 = PERIODIC\nBOUNDARY_4 = PERIODIC\n"
        "CHECKSUM = %x\n"
        "ENSEMBLE_ID = taskqcd\n"
        "ENSEMBLE_LABEL = taskqcd\n"
        "SEQUENCE_NUMBER = 1\n"
        "CREATOR = TaskQCD\n"
        "CREATION_DATE = %s\n"
        "FLOATING_POINT = %s\n"
        "END_HEADER\n",
        rows == 3 ? "4D_SU3_GAUGE_3x3" : "4D_SU3_GAUGE",
        g->dims[0], g->dims[1], g->dims[2], g->dims[3], tr, p.total, sum, date,
        prec == 4 ? "IEEE32BIG" : "IEEE64BIG");
    if (hl < 0 || (size_t)hl >= sizeof hdr)
        return tq_error(TQ_ERR_INVALID_ARG, "writing '%s': NERSC header too long", path);

    tq_atomic_file af;
    TQ_CHECK(tq_io_create_atomic(path, &af));
    FILE *f = af.f;
    unsigned char *buf = malloc(TQ_IO_CHUNK_SITES * 4 * link_bytes);
    if (!buf) return tq_io_finish_atomic(&af, tq_error(TQ_ERR_NOMEM, "writing '%s': out of memory", path));
    tq_status s = tq_io_write_exact(f, hdr, (size_t)hl, path);
    const int64_t chunk = TQ_IO_CHUNK_SITES * 4;
    for (int64_t l0 = 0; l0 < nlinks && s == TQ_SUCCESS; l0 += chunk) {
        int64_t n = nlinks - l0 < chunk ? nlinks - l0 : chunk;
        for (int64_t l = 0; l < n; l++)
            tq_io_encode_reals(buf + (size_t)l * link_bytes, g->links + (l0 + l) * 18, link_reals, prec, 1);
        s = tq_io_write_exact(f, buf, (size_t)n * link_bytes, path);
    }
    free(buf);
    return tq_io_finish_atomic(&af, s);
}
