/* Mutation fuzzer for the gauge-file readers (tq_gauge_read).
 *
 * Per target (a format and file precision), a small valid file is written by TaskQCD's own
 * writer from a random SU(3) field; each run mutates it (structure-aware edits of MILC
 * header integers, NERSC header lines, LIME records and their XML, then byte-level damage),
 * writes the mutant to one temporary path and reads it under alarm() in a forked worker
 * process (one per batch of reads), so a crash or a hang ends the worker, not the run, and
 * is counted against the mutant being read. The worker judges each outcome:
 *   rejected  - with a code a bad file may get, a message naming the file, no field left,
 *               and TQ_ERR_CHECKSUM when the only damage is one flipped bit in the reals;
 *   accepted  - the seed's links (bit for bit, or within one rounding of the file's reals),
 *               or the seed's reals under other extents of the same volume (no format's
 *               checksum covers the header), or other links from a file that carries no
 *               checksum (SciDAC/ILDG without the checksum record, NERSC without CHECKSUM),
 *               or other links whose checksum, computed here independently, equals the
 *               file's: damage the format's checksum cannot see (NERSC's sum of words is
 *               blind to words moved around).
 * Anything else fails the run: a crash, a hang, a corrupted file accepted (links not in
 * SU(3), or differing from the seed without the file's checksum agreeing, or a checksum the
 * reader skipped), an error without a clear message. Mutations are deterministic in (seed,
 * target, index): --only I makes one mutant again (the seed files' time stamps aside),
 * --keep saves the failing ones as they were read.
 * Exit 0 on a clean run, 1 on any failure, 99 when it cannot run. */
#define _POSIX_C_SOURCE 200809L
#include "taskqcd.h"
#include "io/gauge_io_internal.h"   /* tq_nersc_write_rows: the two-row NERSC writer */

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef TQ_FUZZ_LEAK_CHECK
#include <sanitizer/lsan_interface.h>
#endif

/* ---- targets ----------------------------------------------------------------------------- */
typedef struct target {
    const char *name;
    tq_gauge_format fmt;
    int prec;       /* bytes per real in the file */
    int rows;       /* NERSC: 3 (3x3) or 2 (4D_SU3_GAUGE) */
} target;

static const target targets[] = {
    {"milc", TQ_FORMAT_MILC, 4, 3},
    {"scidac-single", TQ_FORMAT_SCIDAC, 4, 3},
    {"scidac-double", TQ_FORMAT_SCIDAC, 8, 3},
    {"ildg-single", TQ_FORMAT_ILDG, 4, 3},
    {"ildg-double", TQ_FORMAT_ILDG, 8, 3},
    {"nersc-3x3-single", TQ_FORMAT_NERSC, 4, 3},
    {"nersc-3x3-double", TQ_FORMAT_NERSC, 8, 3},
    {"nersc-2row-single", TQ_FORMAT_NERSC, 4, 2},
    {"nersc-2row-double", TQ_FORMAT_NERSC, 8, 2},
};
#define NTARGETS (sizeof targets / sizeof targets[0])

/* ---- small helpers ----------------------------------------------------------------------- */
/* The temporary folder and its two files, removed however the run ends (signals included:
 * unlink and rmdir are async-signal-safe). */
static char tmp_dir[512], seed_path[600], mutant_path[600];
static void remove_tmp(void)
{
    if (!tmp_dir[0]) return;
    unlink(seed_path);
    unlink(mutant_path);
    rmdir(tmp_dir);
}
static void on_signal(int sig)
{
    remove_tmp();
    _exit(128 + sig);
}

static void die(const char *what)
{
    fprintf(stderr, "fuzz_gauge: %s\n", what);
    remove_tmp();
    exit(99);
}

typedef struct bytes { unsigned char *p; size_t n, cap; } bytes;

static void b_reserve(bytes *b, size_t n)
{
    if (n <= b->cap) return;
    size_t c = b->cap ? b->cap : 256;
    while (c < n) c *= 2;
    unsigned char *q = realloc(b->p, c);
    if (!q) die("out of memory");
    b->p = q;
    b->cap = c;
}
static void b_set(bytes *b, const void *p, size_t n)
{
    b_reserve(b, n + 1);
    if (n) memcpy(b->p, p, n);
    b->n = n;
}
/* Inserts n bytes at off (p may point into b; NULL inserts zeros). */
static void b_insert(bytes *b, size_t off, const void *p, size_t n)
{
    if (off > b->n) off = b->n;
    unsigned char *tmp = NULL;
    if (p && n) {
        tmp = malloc(n);
        if (!tmp) die("out of memory");
        memcpy(tmp, p, n);
    }
    b_reserve(b, b->n + n + 1);
    memmove(b->p + off + n, b->p + off, b->n - off);
    if (tmp) memcpy(b->p + off, tmp, n); else memset(b->p + off, 0, n);
    b->n += n;
    free(tmp);
}
static void b_erase(bytes *b, size_t off, size_t n)
{
    if (off >= b->n) return;
    if (n > b->n - off) n = b->n - off;
    memmove(b->p + off, b->p + off + n, b->n - off - n);
    b->n -= n;
}
static void b_append(bytes *b, const void *p, size_t n) { b_insert(b, b->n, p, n); }
static void b_free(bytes *b) { free(b->p); b->p = NULL; b->n = b->cap = 0; }

static int read_file(const char *path, bytes *b)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    b->n = 0;
    unsigned char chunk[65536];
    size_t got;
    while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) b_append(b, chunk, got);
    int bad = ferror(f);
    fclose(f);
    return bad ? -1 : 0;
}
static int write_file(const char *path, const bytes *b)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = b->n ? fwrite(b->p, 1, b->n, f) : 0;
    return (fclose(f) == 0 && w == b->n) ? 0 : -1;
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* ---- deterministic random numbers (splitmix64) ---------------------------------------- */
typedef struct rng { uint64_t s; } rng;
static uint64_t mix64(uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}
static uint64_t rnext(rng *r) { return mix64(r->s += 0x9e3779b97f4a7c15ULL); }
static uint64_t below(rng *r, uint64_t n) { return n ? rnext(r) % n : 0; }
static int chance(rng *r, int percent) { return (int)below(r, 100) < percent; }
/* Mostly small, sometimes large: lengths of damaged ranges. */
static size_t small_len(rng *r, size_t max)
{
    size_t l = chance(r, 70) ? 1 + below(r, 8) : 1 + below(r, max ? max : 1);
    return l > max ? max : l;
}

/* ---- the seed file of a target and its structure ---------------------------------------- */
#define LIME_HDR 144
#define MAX_RECORDS 32

/* hdr has one byte more than a LIME header, always 0: the type string always ends */
typedef struct lrec { unsigned char hdr[LIME_HDR + 1]; bytes data; size_t off; } lrec;

typedef struct seedfile {
    const target *t;
    bytes file;
    size_t data_off, data_len;       /* the reals */
    size_t hdr_len;                  /* MILC, NERSC: bytes before the data */
    int nrec;                        /* LIME: records of the seed */
    lrec rec[MAX_RECORDS];
    tq_host_gauge ref;               /* the seed as read back */
} seedfile;

static uint64_t load_be64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++) v = v << 8 | p[i];
    return v;
}
static void store_be64(unsigned char *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--) { p[i] = (unsigned char)v; v >>= 8; }
}
static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Splits a LIME file into records; -1 when it is not one (the seeds always are). */
static int lime_parse(const bytes *f, lrec *rec, int *n)
{
    size_t pos = 0;
    *n = 0;
    while (pos < f->n) {
        if (f->n - pos < LIME_HDR || *n == MAX_RECORDS) return -1;
        lrec *r = &rec[(*n)++];
        memcpy(r->hdr, f->p + pos, LIME_HDR);
        r->hdr[LIME_HDR] = 0;
        uint64_t len = load_be64(r->hdr + 8);
        if (len > f->n - pos - LIME_HDR) return -1;
        memset(&r->data, 0, sizeof r->data);
        b_set(&r->data, f->p + pos + LIME_HDR, (size_t)len);
        r->off = pos;
        pos += LIME_HDR + pad8((size_t)len);
    }
    return 0;
}
static void lime_serialize(const lrec *rec, int n, bytes *out)
{
    out->n = 0;
    for (int i = 0; i < n; i++) {
        unsigned char h[LIME_HDR];
        memcpy(h, rec[i].hdr, LIME_HDR);
        store_be64(h + 8, rec[i].data.n);
        b_append(out, h, LIME_HDR);
        b_append(out, rec[i].data.p, rec[i].data.n);
        b_insert(out, out->n, NULL, pad8(rec[i].data.n) - rec[i].data.n);
    }
}
static const char *rec_type(const lrec *r) { return (const char *)r->hdr + 16; }
static int is_binary(const lrec *r)
{
    return !strncmp(rec_type(r), "ildg-binary-data", 17) || !strncmp(rec_type(r), "scidac-binary-data", 19);
}

static void make_seed(seedfile *sf, const target *t, const tq_host_gauge *field, const char *path)
{
    memset(sf, 0, sizeof *sf);
    sf->t = t;
    tq_status s = t->fmt == TQ_FORMAT_NERSC ? tq_nersc_write_rows(path, field, t->prec, t->rows)
                                            : tq_gauge_write(path, t->fmt, field, t->prec);
    if (s != TQ_SUCCESS || read_file(path, &sf->file) != 0) {
        fprintf(stderr, "fuzz_gauge: cannot write the %s seed: %s\n", t->name, tq_last_error());
        remove_tmp();
        exit(99);
    }
    tq_gauge_file_info info;
    if (tq_gauge_read(path, t->fmt, &sf->ref, &info) != TQ_SUCCESS) {
        fprintf(stderr, "fuzz_gauge: the %s seed does not read back: %s\n", t->name, tq_last_error());
        remove_tmp();
        exit(99);
    }
    if (t->fmt == TQ_FORMAT_MILC) {
        sf->hdr_len = sf->data_off = 96;
    } else if (t->fmt == TQ_FORMAT_NERSC) {
        const char *end = "END_HEADER\n";
        for (size_t i = 0; i + 11 <= sf->file.n; i++)
            if (!memcmp(sf->file.p + i, end, 11)) { sf->hdr_len = sf->data_off = i + 11; break; }
        if (!sf->hdr_len) die("NERSC seed without END_HEADER");
    } else {
        if (lime_parse(&sf->file, sf->rec, &sf->nrec) != 0) die("LIME seed does not parse");
        for (int i = 0; i < sf->nrec; i++)
            if (is_binary(&sf->rec[i])) sf->data_off = sf->rec[i].off + LIME_HDR;
        if (!sf->data_off) die("LIME seed without binary data");
    }
    sf->data_len = (size_t)tq_volume4(field->dims) * 4 * (size_t)t->rows * 6 * (size_t)t->prec;
}

/* ---- mutations --------------------------------------------------------------------------- */
typedef struct mutant {
    bytes file;
    char desc[512];
    int data_flip_only;    /* exactly one bit flipped in the reals, nothing else changed */
} mutant;

static void note(mutant *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void note(mutant *m, const char *fmt, ...)
{
    size_t l = strlen(m->desc);
    if (l + 3 >= sizeof m->desc) return;
    if (l) { strcpy(m->desc + l, "; "); l += 2; }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m->desc + l, sizeof m->desc - l, fmt, ap);
    va_end(ap);
}

static const uint32_t int_values[] = {
    0, 1, 2, 3, 4, 7, 8, 16, 0x7f, 0x80, 0xff, 0x100, 0x7fff, 0x8000, 0xffff, 0x10000,
    0x100000, 0x100001, 0x7fffffff, 0x80000000u, 0x80000001u, 0xfffffffeu, 0xffffffffu,
    20103, 0x456789abu,
};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

static uint32_t interesting32(rng *r, uint32_t orig)
{
    switch (below(r, 6)) {
    case 0: return orig + 1;
    case 1: return orig - 1;
    case 2: return (uint32_t)rnext(r);
    case 3: return tq_bswap32(orig);
    default: return int_values[below(r, NELEM(int_values))];
    }
}

static uint64_t interesting64(rng *r, uint64_t orig, uint64_t fsize)
{
    static const uint64_t v[] = {
        0, 1, 7, 8, 0x7fffffffu, 0x80000000u, 0xffffffffu, 0x100000000ULL, 0x7fffffffffffffffULL,
        0x8000000000000000ULL, 0xffffffffffffffffULL, 0xfffffffffffffff8ULL,
    };
    switch (below(r, 9)) {
    case 0: return orig + 1;
    case 1: return orig - 1;
    case 2: return orig + 8;
    case 3: return orig - 8;
    case 4: return orig * 2;
    case 5: return fsize;
    case 6: return rnext(r);
    default: return v[below(r, NELEM(v))];
    }
}

/* Replacement texts for header values and XML contents. */
static const char *const text_values[] = {
    "", " ", "0", "-1", "1", "2", "3", "4", "8", "16", "2147483647", "2147483648", "-2147483648",
    "4294967295", "4294967296", "18446744073709551616", "99999999999999999999999999", "1048576",
    "1048577", "1e308", "1e400", "-1e308", "nan", "inf", "-inf", "0x10", "abc", "4 4", "4 4 4",
    "4 4 4 4 4", "-4 4 4 4", "0 4 4 4", "'4'", "\"4\"", "'", "\"", "ffffffff", "100000000",
    "-0", "+4", "4.0", "0.5", "IEEE32", "IEEE32BIG", "IEEE32LITTLE", "IEEE64", "IEEE64BIG",
    "IEEE64LITTLE", "IEEE16", "4D_SU3_GAUGE", "4D_SU3_GAUGE_3x3", "4D_SU3_GAUGE_2x3", "F", "D",
    "Q", "su3gauge", "su2gauge", "32", "64", "16", "144", "72", "288", "%s%n%x", "<", ">",
    "</", "&amp;", "<![CDATA[4]]>",
};

/* A new value for a text field: a listed one, a long one, or the original slightly changed
 * (some of these keep its meaning: leading zeros, upper case hex, padding). */
static void new_text_value(rng *r, const char *orig, size_t olen, char *out, size_t cap)
{
    char o[256];
    size_t ol = olen < sizeof o - 1 ? olen : sizeof o - 1;
    memcpy(o, orig, ol);
    o[ol] = '\0';
    switch (below(r, 10)) {
    case 0: case 1: case 2: case 3:
        snprintf(out, cap, "%s", text_values[below(r, NELEM(text_values))]);
        return;
    case 4: {   /* long: beyond the readers' line and value buffers */
        size_t n = chance(r, 50) ? 60 + below(r, 300) : 1000 + below(r, 1200);
        if (n >= cap) n = cap - 1;
        char c = "A9 f<"[below(r, 5)];
        memset(out, c, n);
        out[n] = '\0';
        return;
    }
    case 5: snprintf(out, cap, "0%s", o); return;
    case 6: snprintf(out, cap, "  %s  ", o); return;
    case 7: {
        snprintf(out, cap, "%s", o);
        for (char *p = out; *p; p++) if (*p >= 'a' && *p <= 'f') *p = (char)(*p - 'a' + 'A');
        return;
    }
    case 8: snprintf(out, cap, "%s%c", o, "0-9x. "[below(r, 6)]); return;
    default:
        snprintf(out, cap, "%s", o);
        if (*out) out[below(r, strlen(out))] = "0123456789x-+. eE"[below(r, 17)];
        return;
    }
}

/* -- MILC: header integers, byte order, time stamp, extents -- */
static void mutate_milc(rng *r, const seedfile *sf, mutant *m)
{
    unsigned char *p = m->file.p;
    switch (below(r, 6)) {
    case 0: case 1: case 2: {
        static const size_t fields[] = {0, 4, 8, 12, 16, 84, 88, 92};
        size_t off = fields[below(r, NELEM(fields))];
        uint32_t v = interesting32(r, tq_load_le32(p + off));
        int big = chance(r, 20);
        if (big) tq_store_be32(p + off, v); else tq_store_le32(p + off, v);
        note(m, "MILC header int at %zu = 0x%x (%s)", off, v, big ? "big-endian" : "little-endian");
        break;
    }
    case 3:     /* the same file in the other byte order: must read the same */
        for (size_t i = 0; i + 4 <= m->file.n; i += 4) tq_store_be32(p + i, tq_load_le32(p + i));
        note(m, "MILC rewritten big-endian");
        break;
    case 4:
        for (size_t i = 20; i < 84; i++) p[i] = (unsigned char)rnext(r);
        note(m, "MILC time stamp replaced by random bytes");
        break;
    default: {  /* other extents of the same volume: the checksum does not cover them */
        int d[4];
        for (int mu = 0; mu < 4; mu++) d[mu] = (int)tq_load_le32(p + 4 + 4 * mu);
        int a = (int)below(r, 4), b = (int)below(r, 4);
        if (a != b && d[a] % 2 == 0) { d[a] /= 2; d[b] *= 2; }
        for (int mu = 0; mu < 4; mu++) tq_store_le32(p + 4 + 4 * mu, (uint32_t)d[mu]);
        note(m, "MILC extents %dx%dx%dx%d", d[0], d[1], d[2], d[3]);
        break;
    }
    }
    (void)sf;
}

/* -- NERSC: the header's lines -- */
#define MAX_LINES 64
typedef struct line { const unsigned char *p; size_t n; } line;

static void mutate_nersc(rng *r, const seedfile *sf, mutant *m)
{
    line lines[MAX_LINES];
    int nl = 0;
    for (size_t i = 0, s = 0; i < sf->hdr_len && nl < MAX_LINES; i++)
        if (sf->file.p[i] == '\n') { lines[nl].p = sf->file.p + s; lines[nl].n = i - s; nl++; s = i + 1; }
    const unsigned char *data = sf->file.p + sf->hdr_len;
    size_t ndata = sf->file.n - sf->hdr_len;

    int op = (int)below(r, 14), target_line = 1 + (int)below(r, (uint64_t)(nl - 2));
    const char *eol = "\n";
    char val[2400];
    bytes hdr = {0};
    bytes body = {0};
    b_set(&body, data, ndata);
    for (int i = 0; i < nl; i++) {
        const unsigned char *lp = lines[i].p;
        size_t ln = lines[i].n;
        const unsigned char *eq = memchr(lp, '=', ln);
        if (i == target_line || (op >= 9 && op <= 11)) {
            switch (op) {
            case 0: case 1: case 2: case 3:   /* a value */
                if (!eq) break;
                new_text_value(r, (const char *)eq + 2, ln - (size_t)(eq + 2 - lp), val, sizeof val);
                b_append(&hdr, lp, (size_t)(eq + 2 - lp));
                b_append(&hdr, val, strlen(val));
                b_append(&hdr, eol, strlen(eol));
                note(m, "NERSC line %d: %.*s= '%.40s'", i, (int)(eq - lp), (const char *)lp, val);
                continue;
            case 4:   /* deleted */
                note(m, "NERSC line %d deleted: %.*s", i, (int)ln, (const char *)lp);
                continue;
            case 5:   /* twice, the second one edited */
                b_append(&hdr, lp, ln);
                b_append(&hdr, eol, 1);
                if (eq) {
                    new_text_value(r, (const char *)eq + 2, ln - (size_t)(eq + 2 - lp), val, sizeof val);
                    b_append(&hdr, lp, (size_t)(eq + 2 - lp));
                    b_append(&hdr, val, strlen(val));
                    b_append(&hdr, eol, 1);
                    note(m, "NERSC line %d repeated with value '%.40s'", i, val);
                    continue;
                }
                note(m, "NERSC line %d repeated", i);
                break;
            case 6: {  /* a character of the key or line changed */
                size_t k = below(r, ln ? ln : 1);
                b_append(&hdr, lp, ln);
                if (ln) hdr.p[hdr.n - ln + k] = "abz_=\t \0\r#"[below(r, 10)];
                b_append(&hdr, eol, 1);
                note(m, "NERSC line %d: byte %zu changed", i, k);
                continue;
            }
            case 7:    /* an overlong line or a huge header before it */
                if (chance(r, 50)) {
                    size_t n = 1000 + below(r, 200);
                    memset(val, 'X', n);
                    b_append(&hdr, val, n);
                    b_append(&hdr, eol, 1);
                    note(m, "NERSC %zu-byte line before line %d", n, i);
                } else {
                    int k = 60 + (int)below(r, 20);
                    for (int j = 0; j < k; j++) {
                        snprintf(val, sizeof val, "COMMENT_%d = %01000d\n", j, 0);
                        b_append(&hdr, val, strlen(val));
                    }
                    note(m, "NERSC %d 1000-byte comment lines before line %d", k, i);
                }
                break;
            case 8:    /* a NUL inside the line */
                b_append(&hdr, lp, ln);
                if (ln) hdr.p[hdr.n - 1 - below(r, ln)] = '\0';
                b_append(&hdr, eol, 1);
                note(m, "NERSC NUL in line %d", i);
                continue;
            case 9:    /* CR LF line ends: same file */
                eol = "\r\n";
                if (i == 0) note(m, "NERSC CR LF line ends");
                break;
            case 10:   /* the first or last line missing */
                if (i == 0 || i == nl - 1) {
                    note(m, "NERSC line %d (%.*s) deleted", i, (int)ln, (const char *)lp);
                    continue;
                }
                break;
            case 11: { /* the same reals little-endian: must read the same */
                if (eq && !strncmp((const char *)lp, "FLOATING_POINT", 14)) {
                    const char *fp = sf->t->prec == 4 ? "FLOATING_POINT = IEEE32LITTLE" : "FLOATING_POINT = IEEE64LITTLE";
                    b_append(&hdr, fp, strlen(fp));
                    b_append(&hdr, eol, 1);
                    size_t w = (size_t)sf->t->prec;
                    for (size_t k = 0; k + w <= body.n; k += w)
                        for (size_t j = 0; j < w / 2; j++) {
                            unsigned char c = body.p[k + j];
                            body.p[k + j] = body.p[k + w - 1 - j];
                            body.p[k + w - 1 - j] = c;
                        }
                    note(m, "NERSC rewritten little-endian");
                    continue;
                }
                break;
            }
            case 12:   /* a line without '=' */
                if (eq) {
                    b_append(&hdr, lp, (size_t)(eq - lp));
                    b_append(&hdr, eq + 1, ln - (size_t)(eq + 1 - lp));
                    b_append(&hdr, eol, 1);
                    note(m, "NERSC line %d without '='", i);
                    continue;
                }
                break;
            default: { /* lower-case key: unknown, so the value is ignored */
                b_append(&hdr, lp, ln);
                for (size_t k = hdr.n - ln; k < hdr.n && hdr.p[k] != '='; k++)
                    if (hdr.p[k] >= 'A' && hdr.p[k] <= 'Z') hdr.p[k] = (unsigned char)(hdr.p[k] + 32);
                b_append(&hdr, eol, 1);
                note(m, "NERSC line %d key in lower case", i);
                continue;
            }
            }
        }
        b_append(&hdr, lp, ln);
        b_append(&hdr, eol, strlen(eol));
    }
    if (!m->desc[0]) note(m, "NERSC header unchanged");
    m->file.n = 0;
    b_append(&m->file, hdr.p, hdr.n);
    b_append(&m->file, body.p, body.n);
    b_free(&hdr);
    b_free(&body);
}

/* -- LIME: records and their XML -- */
static const char *const lime_types[] = {
    "ildg-format", "ildg-binary-data", "ildg-data-lfn", "scidac-private-file-xml",
    "scidac-file-xml", "scidac-private-record-xml", "scidac-record-xml", "scidac-binary-data",
    "scidac-checksum", "xlf-info", "", "ildg-binary-dat", "scidac-checksumX",
};

/* A leaf element <tag ...>value</tag> in an XML text: offsets of the element and value. */
typedef struct xml_leaf { size_t el, val, val_end, el_end; } xml_leaf;

static int xml_leaves(const unsigned char *x, size_t n, xml_leaf *out, int cap)
{
    int k = 0;
    for (size_t i = 0; i + 1 < n && k < cap; i++) {
        if (x[i] != '<' || x[i + 1] == '/' || x[i + 1] == '?' || x[i + 1] == '!') continue;
        size_t j = i + 1;
        while (j < n && x[j] != '>' && x[j] != ' ') j++;
        size_t name_len = j - i - 1;
        while (j < n && x[j] != '>') j++;
        if (j >= n) break;
        size_t v = j + 1, e = v;
        while (e < n && x[e] != '<') e++;
        if (e + 2 + name_len >= n || x[e + 1] != '/' || memcmp(x + e + 2, x + i + 1, name_len)) continue;
        out[k].el = i;
        out[k].val = v;
        out[k].val_end = e;
        out[k].el_end = e + 3 + name_len;
        k++;
    }
    return k;
}

static void mutate_xml(rng *r, lrec *rec, int idx, mutant *m)
{
    bytes *d = &rec->data;
    xml_leaf leaves[32];
    int nl = xml_leaves(d->p, d->n, leaves, 32);
    char val[2400];
    if (!nl || chance(r, 15)) {
        size_t cut = below(r, d->n + 1);
        d->n = cut;
        note(m, "LIME record %d (%s) XML cut to %zu bytes", idx, rec_type(rec), cut);
        return;
    }
    xml_leaf *l = &leaves[below(r, (uint64_t)nl)];
    switch (below(r, 6)) {
    case 0: case 1: case 2:
        new_text_value(r, (const char *)d->p + l->val, l->val_end - l->val, val, sizeof val);
        note(m, "LIME record %d (%s) <%.*s> = '%.40s'", idx, rec_type(rec),
             (int)(l->val - l->el - 2), (const char *)d->p + l->el + 1, val);
        b_erase(d, l->val, l->val_end - l->val);
        b_insert(d, l->val, val, strlen(val));
        break;
    case 3:
        note(m, "LIME record %d (%s) element %.*s removed", idx, rec_type(rec),
             (int)(l->val - l->el), (const char *)d->p + l->el);
        b_erase(d, l->el, l->el_end - l->el);
        break;
    case 4: {  /* an earlier copy with another value: readers take the first */
        size_t el_len = l->el_end - l->el;
        new_text_value(r, (const char *)d->p + l->val, l->val_end - l->val, val, sizeof val);
        bytes copy = {0};
        b_set(&copy, d->p + l->el, l->val - l->el);
        b_append(&copy, val, strlen(val));
        b_append(&copy, d->p + l->val_end, l->el_end - l->val_end);
        b_insert(d, l->el, copy.p, copy.n);
        note(m, "LIME record %d (%s) element repeated first with '%.40s' (%zu bytes)", idx,
             rec_type(rec), val, el_len);
        b_free(&copy);
        break;
    }
    default:   /* the closing tag broken */
        d->p[l->val_end + 2 + below(r, l->el_end - l->val_end - 3)] = 'Q';
        note(m, "LIME record %d (%s) closing tag changed", idx, rec_type(rec));
        break;
    }
}

static void mutate_lime(rng *r, const seedfile *sf, mutant *m)
{
    lrec rec[MAX_RECORDS];
    int n = sf->nrec;
    for (int i = 0; i < n; i++) {
        memcpy(rec[i].hdr, sf->rec[i].hdr, LIME_HDR + 1);
        memset(&rec[i].data, 0, sizeof rec[i].data);
        b_set(&rec[i].data, sf->rec[i].data.p, sf->rec[i].data.n);
    }
    int i = (int)below(r, (uint64_t)n), j = (int)below(r, (uint64_t)n);
    int lied_len = 0;
    uint64_t len_value = 0;
    switch (below(r, 12)) {
    case 0:
        note(m, "LIME record %d (%s) removed", i, rec_type(&rec[i]));
        b_free(&rec[i].data);
        memmove(rec + i, rec + i + 1, (size_t)(n - i - 1) * sizeof rec[0]);
        n--;
        break;
    case 1: {
        memmove(rec + j + 1, rec + j, (size_t)(n - j) * sizeof rec[0]);
        n++;
        int src = i >= j ? i + 1 : i;
        memcpy(rec[j].hdr, rec[src].hdr, LIME_HDR + 1);
        memset(&rec[j].data, 0, sizeof rec[j].data);
        b_set(&rec[j].data, rec[src].data.p, rec[src].data.n);
        note(m, "LIME record %d (%s) copied before record %d", i, rec_type(&rec[j]), j);
        break;
    }
    case 2: {
        lrec t = rec[i];
        rec[i] = rec[j];
        rec[j] = t;
        note(m, "LIME records %d and %d swapped", i, j);
        break;
    }
    case 3: {
        unsigned char *ty = rec[i].hdr + 16;
        memset(ty, 0, 128);
        if (chance(r, 80)) {
            const char *nt = lime_types[below(r, NELEM(lime_types))];
            memcpy(ty, nt, strlen(nt));
            note(m, "LIME record %d type '%s'", i, nt);
        } else {
            for (int k = 0; k < 128; k++) ty[k] = (unsigned char)(' ' + below(r, 95));
            note(m, "LIME record %d type: 128 characters without NUL", i);
        }
        break;
    }
    case 4: {
        unsigned f = (unsigned)below(r, 65536);
        rec[i].hdr[6] = (unsigned char)(f >> 8);
        rec[i].hdr[7] = (unsigned char)f;
        note(m, "LIME record %d flags 0x%04x", i, f);
        break;
    }
    case 5: {
        static const unsigned vers[] = {0, 2, 0x100, 0xffff};
        unsigned v = vers[below(r, NELEM(vers))];
        rec[i].hdr[4] = (unsigned char)(v >> 8);
        rec[i].hdr[5] = (unsigned char)v;
        note(m, "LIME record %d version %u", i, v);
        break;
    }
    case 6: {
        uint32_t v = interesting32(r, tq_load_be32(rec[i].hdr));
        tq_store_be32(rec[i].hdr, v);
        note(m, "LIME record %d magic 0x%08x", i, v);
        break;
    }
    case 7: case 8:
        lied_len = 1;
        len_value = interesting64(r, rec[i].data.n, sf->file.n);
        note(m, "LIME record %d (%s) length field %llu (data %zu)", i, rec_type(&rec[i]),
             (unsigned long long)len_value, rec[i].data.n);
        break;
    case 9: case 10: {
        /* an XML record (the seed's non-binary ones all are) */
        int k = i;
        for (int tries = 0; tries < n && is_binary(&rec[k]); tries++) k = (k + 1) % n;
        if (is_binary(&rec[k])) break;
        if (chance(r, 15)) {
            if (rec[k].data.n && rec[k].data.p[rec[k].data.n - 1] == '\0') rec[k].data.n--;
            note(m, "LIME record %d (%s) without its NUL", k, rec_type(&rec[k]));
        } else {
            mutate_xml(r, &rec[k], k, m);
        }
        break;
    }
    default: {
        if (n == MAX_RECORDS) break;
        lrec *nr = &rec[n++];
        memset(nr->hdr, 0, LIME_HDR + 1);
        tq_store_be32(nr->hdr, 0x456789abu);
        nr->hdr[5] = 1;
        const char *nt = lime_types[below(r, NELEM(lime_types))];
        memcpy(nr->hdr + 16, nt, strlen(nt));
        memset(&nr->data, 0, sizeof nr->data);
        size_t len = below(r, 4) ? below(r, 300) : below(r, 70000);
        b_reserve(&nr->data, len + 1);
        for (size_t k = 0; k < len; k++) nr->data.p[k] = (unsigned char)rnext(r);
        nr->data.n = len;
        note(m, "LIME record '%s' of %zu random bytes appended", nt, len);
        break;
    }
    }
    lime_serialize(rec, n, &m->file);
    if (lied_len) {
        size_t off = 0;
        for (int k = 0; k < i; k++) off += LIME_HDR + pad8(rec[k].data.n);
        store_be64(m->file.p + off + 8, len_value);
    }
    for (int k = 0; k < n; k++) b_free(&rec[k].data);
}

/* -- byte-level damage, any format -- */
static size_t meta_offset(rng *r, const seedfile *sf, size_t n)
{
    /* the bytes before the reals, or for LIME any record's header or XML */
    if (sf->t->fmt == TQ_FORMAT_MILC || sf->t->fmt == TQ_FORMAT_NERSC) {
        size_t h = sf->hdr_len < n ? sf->hdr_len : n;
        return below(r, h ? h : 1);
    }
    const lrec *rc = &sf->rec[below(r, (uint64_t)sf->nrec)];
    size_t span = is_binary(rc) ? LIME_HDR : LIME_HDR + rc->data.n;
    size_t off = rc->off + below(r, span);
    return off < n ? off : (n ? n - 1 : 0);
}
static size_t data_offset(rng *r, const seedfile *sf, size_t n)
{
    size_t off = sf->data_off + below(r, sf->data_len);
    return off < n ? off : (n ? below(r, n) : 0);
}

static void mutate_bytes(rng *r, const seedfile *sf, mutant *m)
{
    bytes *b = &m->file;
    size_t n = b->n;
    switch (below(r, 14)) {
    case 0: {   /* truncated */
        size_t at = chance(r, 50) ? below(r, n + 1)
                  : (chance(r, 50) ? sf->data_off : n) - below(r, 17);
        if (at > n) at = n;
        b->n = at;
        note(m, "truncated at %zu of %zu", at, n);
        break;
    }
    case 1: case 2: {  /* bits in the header or metadata */
        int k = 1 + (int)below(r, 4);
        for (int i = 0; i < k && n; i++) {
            size_t off = meta_offset(r, sf, n);
            unsigned bit = (unsigned)below(r, 8);
            b->p[off] ^= (unsigned char)(1u << bit);
            note(m, "header bit %u of byte %zu flipped", bit, off);
        }
        break;
    }
    case 3: {   /* bits in the reals */
        int k = 1 + (int)below(r, 8);
        for (int i = 0; i < k && n; i++) {
            size_t off = data_offset(r, sf, n);
            unsigned bit = (unsigned)below(r, 8);
            b->p[off] ^= (unsigned char)(1u << bit);
            note(m, "data bit %u of byte %zu flipped", bit, off);
        }
        break;
    }
    case 4: {   /* a range overwritten */
        size_t off = chance(r, 50) ? meta_offset(r, sf, n) : below(r, n ? n : 1);
        size_t len = small_len(r, n - (off < n ? off : n));
        int kind = (int)below(r, 3);
        for (size_t i = 0; i < len; i++)
            b->p[off + i] = kind == 0 ? 0 : kind == 1 ? 0xff : (unsigned char)rnext(r);
        note(m, "%zu bytes at %zu set to %s", len, off, kind == 0 ? "0" : kind == 1 ? "0xff" : "random");
        break;
    }
    case 5: {   /* random bytes inserted */
        size_t off = chance(r, 50) ? meta_offset(r, sf, n) : below(r, n + 1);
        size_t len = small_len(r, 64);
        unsigned char junk[64];
        for (size_t i = 0; i < len; i++) junk[i] = (unsigned char)rnext(r);
        b_insert(b, off, junk, len);
        note(m, "%zu random bytes inserted at %zu", len, off);
        break;
    }
    case 6: {   /* a range deleted */
        size_t off = chance(r, 50) ? meta_offset(r, sf, n) : below(r, n ? n : 1);
        size_t len = small_len(r, 64);
        b_erase(b, off, len);
        note(m, "%zu bytes deleted at %zu", len, off);
        break;
    }
    case 7: {   /* two bytes swapped */
        if (n < 2) break;
        size_t a = chance(r, 50) ? meta_offset(r, sf, n) : below(r, n);
        size_t c = chance(r, 50) && a + 1 < n ? a + 1 : below(r, n);
        unsigned char t = b->p[a];
        b->p[a] = b->p[c];
        b->p[c] = t;
        note(m, "bytes %zu and %zu swapped", a, c);
        break;
    }
    case 8: {   /* one word's byte order reversed */
        size_t w = chance(r, 50) ? 4 : 8;
        size_t a = (chance(r, 50) ? meta_offset(r, sf, n) : data_offset(r, sf, n)) & ~(w - 1);
        if (a + w > n) break;
        for (size_t i = 0; i < w / 2; i++) {
            unsigned char t = b->p[a + i];
            b->p[a + i] = b->p[a + w - 1 - i];
            b->p[a + w - 1 - i] = t;
        }
        note(m, "%zu-byte word at %zu byte-reversed", w, a);
        break;
    }
    case 9: {   /* two aligned blocks of the reals swapped: reals, links or sites */
        size_t real = (size_t)sf->t->prec, link = real * 6 * (size_t)sf->t->rows;
        size_t sizes[] = {4, real, link, 4 * link};
        size_t w = sizes[below(r, 4)];
        size_t nb = sf->data_len / w;
        size_t a = sf->data_off + below(r, nb) * w, c = sf->data_off + below(r, nb) * w;
        if (a + w > n || c + w > n || a == c) break;
        for (size_t i = 0; i < w; i++) {
            unsigned char t = b->p[a + i];
            b->p[a + i] = b->p[c + i];
            b->p[c + i] = t;
        }
        note(m, "%zu-byte blocks at %zu and %zu swapped", w, a, c);
        break;
    }
    case 10: {  /* junk appended */
        size_t len = chance(r, 70) ? 1 + below(r, 64) : 1 + below(r, 8192);
        int kind = (int)below(r, 3);
        size_t at = b->n;
        if (kind == 2) {
            b_append(b, b->p, len < n ? len : n);   /* the file's own beginning */
        } else {
            b_insert(b, at, NULL, len);
            if (kind == 1) for (size_t i = 0; i < len; i++) b->p[at + i] = (unsigned char)rnext(r);
        }
        note(m, "%zu bytes of %s appended", b->n - at, kind == 0 ? "zeros" : kind == 1 ? "random" : "the file's start");
        break;
    }
    case 11: {  /* a range copied elsewhere */
        size_t a = below(r, n ? n : 1), len = small_len(r, 4096);
        if (len > n - (a < n ? a : n)) len = n - (a < n ? a : n);
        size_t at = chance(r, 50) ? meta_offset(r, sf, n) : below(r, n + 1);
        b_insert(b, at, b->p + a, len);
        note(m, "%zu bytes from %zu copied to %zu", len, a, at);
        break;
    }
    case 12: {  /* a header integer replaced */
        size_t a = meta_offset(r, sf, n) & ~(size_t)3;
        if (a + 4 > n) break;
        uint32_t v = interesting32(r, tq_load_be32(b->p + a));
        if (chance(r, 50)) tq_store_be32(b->p + a, v); else tq_store_le32(b->p + a, v);
        note(m, "32-bit word at %zu = 0x%x", a, v);
        break;
    }
    default: {  /* a 64-bit header integer replaced (LIME lengths) */
        size_t a = meta_offset(r, sf, n) & ~(size_t)7;
        if (a + 8 > n) break;
        uint64_t v = interesting64(r, load_be64(b->p + a), n);
        store_be64(b->p + a, v);
        note(m, "64-bit word at %zu = 0x%llx", a, (unsigned long long)v);
        break;
    }
    }
}

/* Mutant `index` of a target: the same inputs always give the same bytes. */
static void make_mutant(const seedfile *sf, int tindex, uint64_t seed, uint64_t index, mutant *m)
{
    rng r = { mix64(seed ^ mix64(((uint64_t)tindex + 1) * 0x100000001b3ULL ^ mix64(index))) };
    b_set(&m->file, sf->file.p, sf->file.n);
    m->desc[0] = '\0';
    m->data_flip_only = 0;
    if (chance(&r, 8)) {    /* one flipped bit in the reals: the checksum's job */
        size_t off = sf->data_off + below(&r, sf->data_len);
        unsigned bit = (unsigned)below(&r, 8);
        m->file.p[off] ^= (unsigned char)(1u << bit);
        m->data_flip_only = 1;
        note(m, "only data bit %u of byte %zu flipped", bit, off);
        return;
    }
    int structured = chance(&r, 55);
    if (structured) {
        if (sf->t->fmt == TQ_FORMAT_MILC) mutate_milc(&r, sf, m);
        else if (sf->t->fmt == TQ_FORMAT_NERSC) mutate_nersc(&r, sf, m);
        else mutate_lime(&r, sf, m);
    }
    int k = structured ? (chance(&r, 25) ? 1 : 0) : 1;
    while (k < 4 && chance(&r, 25)) k++;
    for (int i = 0; i < k; i++) mutate_bytes(&r, sf, m);
    if (!m->desc[0]) note(m, "unchanged");
}

/* ---- an independent check of what an accepted file claims ------------------------------------
 * When the reader accepts links other than the seed's, either the file's checksum cannot see
 * the damage (NERSC's is a plain sum of words, blind to moved words; MILC's and SciDAC's
 * repeat with the rank modulo 29 and 31), or the reader failed to verify it. The checksums
 * are computed here again, written from the formats' definitions, over the links as read. */
static uint32_t rotl32(uint32_t w, unsigned r)
{
    r %= 32;
    return r ? (w << r) | (w >> (32 - r)) : w;
}
static uint32_t crc32_bitwise(const unsigned char *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++) c = (c & 1u) ? (c >> 1) ^ 0xedb88320u : c >> 1;
    }
    return ~c;
}
static uint32_t float_bits(double v)
{
    float f = (float)v;
    uint32_t w;
    memcpy(&w, &f, 4);
    return w;
}
static uint64_t double_bits(double v)
{
    uint64_t w;
    memcpy(&w, &v, 8);
    return w;
}

/* Whether the checksum the reader reported matches the links it returned. */
static int checksum_matches(const target *t, const tq_host_gauge *g, const tq_gauge_file_info *info)
{
    int64_t vol = tq_volume4(g->dims);
    if (info->format == TQ_FORMAT_MILC) {
        uint32_t s29 = 0, s31 = 0;
        for (int64_t i = 0; i < vol * 72; i++) {
            uint32_t w = float_bits(g->links[i]);
            s29 ^= rotl32(w, (unsigned)(i % 29));
            s31 ^= rotl32(w, (unsigned)(i % 31));
        }
        return s29 == info->checksum_a && s31 == info->checksum_b;
    }
    if (info->format == TQ_FORMAT_NERSC) {
        uint32_t sum = 0;
        for (int64_t l = 0; l < vol * 4; l++)
            for (int k = 0; k < 6 * t->rows; k++) {
                double v = g->links[l * 18 + k];
                if (info->file_precision == 4) sum += float_bits(v);
                else sum += (uint32_t)double_bits(v) + (uint32_t)(double_bits(v) >> 32);
            }
        return sum == info->nersc_checksum;
    }
    uint32_t a = 0, b = 0;   /* SciDAC's: a CRC-32 per site of its big-endian reals */
    unsigned char site[72 * 8];
    int prec = info->file_precision;
    for (int64_t s = 0; s < vol; s++) {
        for (int k = 0; k < 72; k++) {
            uint64_t w = prec == 4 ? float_bits(g->links[s * 72 + k]) : double_bits(g->links[s * 72 + k]);
            for (int j = 0; j < prec; j++) site[k * prec + j] = (unsigned char)(w >> (8 * (prec - 1 - j)));
        }
        uint32_t c = crc32_bitwise(site, (size_t)(72 * prec));
        a ^= rotl32(c, (unsigned)(s % 29));
        b ^= rotl32(c, (unsigned)(s % 31));
    }
    return a == info->checksum_a && b == info->checksum_b;
}

/* Whether an accepted file carries a checksum the reader should have found: a NERSC
 * CHECKSUM line, or a scidac-checksum record after the binary data. */
static int carries_checksum(const target *t, const bytes *f)
{
    if (t->fmt == TQ_FORMAT_NERSC) {
        for (size_t i = 0; i < f->n;) {
            const unsigned char *e = memchr(f->p + i, '\n', f->n - i);
            size_t n = e ? (size_t)(e - (f->p + i)) : f->n - i;
            char line[1024];
            size_t l = n < sizeof line - 1 ? n : sizeof line - 1;
            memcpy(line, f->p + i, l);
            line[l] = '\0';           /* strings end at a NUL, as the reader's do */
            /* the key is the text before the first '=', without surrounding white space */
            char *eq = strchr(line, '=');
            if (eq) *eq = '\0';
            char *k = line, *kend = line + strlen(line);
            while (isspace((unsigned char)*k)) k++;
            while (kend > k && isspace((unsigned char)kend[-1])) *--kend = '\0';
            if (eq && !strcmp(k, "CHECKSUM")) return 1;
            if (!eq && !strcmp(k, "END_HEADER")) return 0;
            i += n + 1;
        }
        return 0;
    }
    if (t->fmt == TQ_FORMAT_MILC) return 1;
    lrec *rec = calloc(MAX_RECORDS, sizeof *rec);
    int n = 0, found = 0, seen_binary = 0;
    if (!rec) die("out of memory");
    if (lime_parse(f, rec, &n) == 0)
        for (int i = 0; i < n; i++) {
            if (is_binary(&rec[i])) seen_binary = 1;
            else if (seen_binary && !strcmp(rec_type(&rec[i]), "scidac-checksum")) found = 1;
        }
    for (int i = 0; i < n; i++) b_free(&rec[i].data);
    free(rec);
    return found;
}

/* ---- judging one read (in the worker) ------------------------------------------------------ */
enum verdict {
    V_REJECTED, V_SAME, V_ROUNDING, V_GEOMETRY, V_NO_CHECKSUM, V_COLLISION,  /* acceptable */
    V_CORRUPT, V_BAD_ERROR,                                                    /* failures */
    V_COUNT
};
static const char *const verdict_names[] = {
    "rejected", "accepted: the seed's field", "accepted: within rounding",
    "accepted: other extents, same reals", "accepted: no checksum in the file",
    "accepted: damage the format's checksum cannot see", "CORRUPTED FILE ACCEPTED", "UNCLEAR ERROR",
};

static int is_file_error(tq_status s)
{
    return s == TQ_ERR_FORMAT || s == TQ_ERR_CHECKSUM || s == TQ_ERR_NOT_UNITARY || s == TQ_ERR_UNSUPPORTED;
}

static int judge(const seedfile *sf, const char *path, const mutant *m, tq_status s,
                 const tq_host_gauge *g, const tq_gauge_file_info *info, char *why, size_t cap)
{
    const char *msg = tq_last_error();
    if (s != TQ_SUCCESS) {
        if (g->links) { snprintf(why, cap, "%s left a field behind", tq_status_name(s)); return V_BAD_ERROR; }
        if (!is_file_error(s)) {
            snprintf(why, cap, "unexpected code %s: %s", tq_status_name(s), msg);
            return V_BAD_ERROR;
        }
        if (!msg[0] || !strstr(msg, path)) {
            snprintf(why, cap, "%s with a message not naming the file: '%s'", tq_status_name(s), msg);
            return V_BAD_ERROR;
        }
        if (m->data_flip_only && s != TQ_ERR_CHECKSUM) {
            snprintf(why, cap, "a flipped data bit was not caught by the checksum: %s: %s", tq_status_name(s), msg);
            return V_BAD_ERROR;
        }
        return V_REJECTED;
    }
    if (!g->links) { snprintf(why, cap, "TQ_SUCCESS without a field"); return V_BAD_ERROR; }
    double dev = 0;
    double tol = info->file_precision == 8 ? 1e-12 : 1e-5;
    if (tq_host_gauge_unitarity(g, &dev) != TQ_SUCCESS || !(dev <= tol)) {
        snprintf(why, cap, "accepted a field %g away from SU(3)", dev);
        return V_CORRUPT;
    }
    int64_t vol = tq_volume4(g->dims), vref = tq_volume4(sf->ref.dims);
    double diff = INFINITY;
    if (vol == vref) {
        diff = 0;
        for (int64_t i = 0; i < vol * 72; i++) {
            double d = fabs(g->links[i] - sf->ref.links[i]);
            if (!(d <= diff)) diff = isnan(d) ? INFINITY : d;
        }
    }
    /* one unit in the last place of a real of magnitude 1 in the seed's precision */
    double rounding = sf->t->prec == 4 ? 0x1p-23 : 0x1p-52;
    int same_dims = !memcmp(g->dims, sf->ref.dims, sizeof g->dims);
    if (diff <= rounding) return !same_dims ? V_GEOMETRY : diff == 0 ? V_SAME : V_ROUNDING;
    if (!info->has_checksum) {
        if (!carries_checksum(sf->t, &m->file)) return V_NO_CHECKSUM;
        snprintf(why, cap, "links differ from the seed by %g and the file's checksum was not checked", diff);
        return V_CORRUPT;
    }
    if (checksum_matches(sf->t, g, info)) return V_COLLISION;
    snprintf(why, cap, "links differ from the seed by %g (extents %dx%dx%dx%d) and do not match the %s "
             "checksum the reader reports as verified", diff, g->dims[0], g->dims[1], g->dims[2], g->dims[3],
             tq_gauge_format_name(info->format));
    return V_CORRUPT;
}

/* ---- the driver ----------------------------------------------------------------------------- */
typedef struct stats {
    long runs, verdicts[V_COUNT], codes[16], crashes, hangs, leaks;
    double seconds;
} stats;

static struct {
    const char *keep;
    int quiet, timeout;
    long batch, kept;
} opt;

static void keep_mutant(const target *t, uint64_t seed, uint64_t index, const mutant *m, const char *what)
{
    if (!opt.keep || opt.kept >= 200) return;
    char p[4096];
    snprintf(p, sizeof p, "%s/%s-seed%llu-%llu.%s", opt.keep, t->name, (unsigned long long)seed,
             (unsigned long long)index, what);
    if (write_file(p, &m->file) == 0) {
        opt.kept++;
        fprintf(stderr, "fuzz_gauge:   saved as %s\n", p);
    } else {
        fprintf(stderr, "fuzz_gauge:   cannot save %s: %s\n", p, strerror(errno));
    }
}

typedef struct result { int64_t index; int32_t verdict, code; } result;

/* A worker: reads mutants first..last-1 one after the other, each under alarm(), and sends
 * one result per read down fd. Forking once per batch rather than per read matters: the
 * linked CUDA libraries leave ~100 MB of relocated data whose page tables every fork
 * copies (3-4 ms), ten times the cost of a read. */
static void worker(const seedfile *sf, int ti, const char *path, uint64_t seed, long first,
                   long last, int fd)
{
    mutant m;
    memset(&m, 0, sizeof m);
    for (long i = first; i < last; i++) {
        make_mutant(sf, ti, seed, (uint64_t)i, &m);
        if (write_file(path, &m.file) != 0) {
            fprintf(stderr, "fuzz_gauge: cannot write %s: %s\n", path, strerror(errno));
            _exit(3);
        }
        alarm((unsigned)opt.timeout);
        tq_host_gauge g = {{0, 0, 0, 0}, NULL};
        tq_gauge_file_info info;
        memset(&info, 0, sizeof info);
        /* odd runs detect the format, even ones name it */
        tq_gauge_format fmt = (i & 1) ? TQ_FORMAT_AUTO : sf->t->fmt;
        tq_status s = tq_gauge_read(path, fmt, &g, &info);
        char why[1024] = "";
        int v = judge(sf, path, &m, s, &g, &info, why, sizeof why);
        alarm(0);
        tq_host_gauge_free(&g);
        if (v >= V_CORRUPT)
            fprintf(stderr, "fuzz_gauge: FAIL %s #%ld (%s, %s): %s\n", sf->t->name, i,
                    tq_gauge_format_name(fmt), m.desc, why);
        result r = {i, v, (int32_t)s};
        if (write(fd, &r, sizeof r) != (ssize_t)sizeof r) _exit(3);
    }
    b_free(&m.file);
#ifdef TQ_FUZZ_LEAK_CHECK
    /* once per batch: a check scans all the linked libraries' data, longer than many reads;
     * the report names the allocation in the reader, --batch 1 --only I the mutant */
    if (__lsan_do_recoverable_leak_check()) _exit(4);
#endif
    _exit(0);   /* not exit: the linked libraries' exit handlers would only cost time */
}

/* How a worker ended: all its reads done, or dead at `next` (a crash or a hang). */
typedef struct ending { long next; int crashed, hung, leaked, sig, exit_code; } ending;

/* next_report is NULL when a mutant is read again alone: nothing is reported or kept twice. */
static ending run_worker(const seedfile *sf, int ti, const char *path, uint64_t seed, long first,
                         long last, stats *st, double *next_report)
{
    int fds[2];
    if (pipe(fds) != 0) die("pipe failed");
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) die("fork failed");
    if (pid == 0) {
        signal(SIGINT, SIG_DFL);    /* the files are the parent's to remove */
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        close(fds[0]);
        worker(sf, ti, path, seed, first, last, fds[1]);
    }
    close(fds[1]);
    ending e = {first, 0, 0, 0, 0, 0};
    result r;
    size_t got = 0;
    for (;;) {
        ssize_t k = read(fds[0], (char *)&r + got, sizeof r - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
        if (got < sizeof r) continue;
        got = 0;
        st->runs++;
        st->verdicts[r.verdict]++;
        if (r.verdict == V_REJECTED) st->codes[r.code & 15]++;
        if (r.verdict >= V_CORRUPT && next_report) {   /* the worker said why; keep the file */
            mutant m;
            memset(&m, 0, sizeof m);
            make_mutant(sf, ti, seed, (uint64_t)r.index, &m);
            keep_mutant(&targets[ti], seed, (uint64_t)r.index, &m, r.verdict == V_CORRUPT ? "corrupt" : "badmsg");
            b_free(&m.file);
        }
        e.next = (long)r.index + 1;
        if (!opt.quiet && next_report && now_s() > *next_report) {
            fprintf(stderr, "fuzz_gauge: %s: %ld runs\n", targets[ti].name, st->runs);
            *next_report = now_s() + 60;
        }
    }
    close(fds[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) die("waitpid failed");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 3) die("a worker could not write its mutant");
    if (WIFEXITED(status) && WEXITSTATUS(status) == 4 && e.next == last) {
        e.leaked = 1;
        return e;
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && e.next == last) return e;
    if (WIFSIGNALED(status)) {
        e.sig = WTERMSIG(status);
        if (e.sig == SIGALRM) e.hung = 1; else e.crashed = 1;
    } else {
        e.exit_code = WEXITSTATUS(status);   /* something called exit(), or a sanitizer */
        e.crashed = 1;
    }
    return e;
}

static int fuzz_target(int ti, const seedfile *sf, const char *path, uint64_t seed, long runs,
                       long only, stats *st)
{
    const target *t = &targets[ti];
    memset(st, 0, sizeof *st);
    mutant m;
    memset(&m, 0, sizeof m);
    double t0 = now_s(), next_report = t0 + 60;
    long first = only >= 0 ? only : 0, last = only >= 0 ? only + 1 : runs;
    int failed = 0;
    if (only >= 0) {
        make_mutant(sf, ti, seed, (uint64_t)only, &m);
        printf("fuzz_gauge: %s #%ld: %s (%zu bytes)\n", t->name, only, m.desc, m.file.n);
        keep_mutant(t, seed, (uint64_t)only, &m, "mutant");
    }
    for (long i = first; i < last;) {
        long end = last - i > opt.batch ? i + opt.batch : last;
        ending e = run_worker(sf, ti, path, seed, i, end, st, &next_report);
        if (st->verdicts[V_CORRUPT] + st->verdicts[V_BAD_ERROR]) failed = 1;
        if (e.leaked) {
            st->leaks++;
            failed = 1;
            fprintf(stderr, "fuzz_gauge: FAIL %s: reads #%ld to #%ld leaked memory (the report above)\n",
                    t->name, i, end - 1);
        }
        if (!e.crashed && !e.hung) { i = e.next; continue; }
        /* the worker died reading mutant e.next: count it, see whether it does so alone */
        long bad = e.next;
        failed = 1;
        if (bad == end) {
            fprintf(stderr, "fuzz_gauge: FAIL %s: the worker for #%ld to #%ld died after its reads "
                    "(signal %d, exit status %d)\n", t->name, i, end - 1, e.sig, e.exit_code);
            st->crashes++;
            i = end;
            continue;
        }
        st->runs++;
        if (e.hung) st->hangs++; else st->crashes++;
        make_mutant(sf, ti, seed, (uint64_t)bad, &m);
        char how[128];
        if (e.hung) snprintf(how, sizeof how, "HANG (no answer in %d s)", opt.timeout);
        else if (e.sig) snprintf(how, sizeof how, "CRASH (signal %d, %s)", e.sig, strsignal(e.sig));
        else snprintf(how, sizeof how, "CRASH (exit status %d in the read: a sanitizer's report or an exit())",
                      e.exit_code);
        fprintf(stderr, "fuzz_gauge: FAIL %s #%ld: %s on: %s\n", t->name, bad, how, m.desc);
        if (bad > i) {
            stats one;
            memset(&one, 0, sizeof one);
            ending e1 = run_worker(sf, ti, path, seed, bad, bad + 1, &one, NULL);
            if (!e1.crashed && !e1.hung)
                fprintf(stderr, "fuzz_gauge:   alone it reads fine: an earlier read of the same worker "
                        "(#%ld to #%ld) damaged the process\n", i, bad - 1);
        }
        keep_mutant(t, seed, (uint64_t)bad, &m, e.hung ? "hang" : "crash");
        i = bad + 1;
    }
    st->seconds = now_s() - t0;
    if (only >= 0) {
        for (int v = 0; v < V_COUNT; v++)
            if (st->verdicts[v]) printf("fuzz_gauge: %s #%ld: %s\n", t->name, only, verdict_names[v]);
        for (int c = 0; c < 16; c++)
            if (st->codes[c]) printf("fuzz_gauge: %s #%ld: %s\n", t->name, only, tq_status_name((tq_status)c));
    }
    b_free(&m.file);
    return failed;
}

static void print_stats(const char *name, const stats *st)
{
    long acc = 0;
    for (int v = V_SAME; v <= V_COLLISION; v++) acc += st->verdicts[v];
    printf("fuzz_gauge: %-18s %8ld runs %8ld rejected %7ld accepted %ld crashes %ld hangs "
           "%ld corrupted-accepted %ld unclear-errors  (%.1f s, %.0f runs/s)\n",
           name, st->runs, st->verdicts[V_REJECTED], acc, st->crashes, st->hangs,
           st->verdicts[V_CORRUPT], st->verdicts[V_BAD_ERROR], st->seconds,
           st->seconds > 0 ? (double)st->runs / st->seconds : 0.0);
    printf("fuzz_gauge: %-18s   accepted: %ld as the seed, %ld within rounding, %ld other extents, "
           "%ld without checksum, %ld unseen by the checksum; rejected:", "", st->verdicts[V_SAME],
           st->verdicts[V_ROUNDING], st->verdicts[V_GEOMETRY], st->verdicts[V_NO_CHECKSUM],
           st->verdicts[V_COLLISION]);
    for (int c = 0; c < 16; c++)
        if (st->codes[c]) printf(" %s %ld", tq_status_name((tq_status)c), st->codes[c]);
    if (st->leaks) printf("; %ld batches of reads LEAKED memory", st->leaks);
    printf("\n");
}

static void usage(FILE *f)
{
    fprintf(f,
        "usage: fuzz_gauge [--format F|all] [--runs N] [--seed S] [--timeout S] [--quiet]\n"
        "                  [--keep DIR] [--only I] [--batch N] [--dims X,Y,Z,T]\n"
        "  F: milc, scidac, ildg, nersc (both row layouts), or one target:");
    for (size_t i = 0; i < NTARGETS; i++) fprintf(f, " %s", targets[i].name);
    fprintf(f,
        "\n  --runs N     mutants per target (default 2000)\n"
        "  --seed S     the mutations' random seed (default 1); the seed field is fixed\n"
        "  --timeout S  seconds one read may take before it counts as a hang (default 10)\n"
        "  --keep DIR   save failing mutants there (crash, hang, corrupt, badmsg)\n"
        "  --only I     run mutant I alone, describe it and save it in --keep DIR\n"
        "  --batch N    reads per forked worker process (default 500; 1: a process per read)\n"
        "  --dims X,Y,Z,T  the seed files' lattice (default 4,4,4,4)\n"
        "Exit 0: no crash, hang, corrupted acceptance or unclear error; 1: some; 99: cannot run.\n");
}

int main(int argc, char **argv)
{
    const char *format = "all";
    long runs = 2000, only = -1;
    uint64_t seed = 1;
    int dims[4] = {4, 4, 4, 4};
    opt.timeout = 10;
    opt.batch = 500;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char *end = NULL;
        if (!strcmp(a, "--quiet")) { opt.quiet = 1; continue; }
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) { usage(stdout); return 0; }
        if (!v) { usage(stderr); return 99; }
        i++;
        errno = 0;
        if (!strcmp(a, "--format")) format = v;
        else if (!strcmp(a, "--runs")) runs = strtol(v, &end, 10);
        else if (!strcmp(a, "--seed")) seed = strtoull(v, &end, 10);
        else if (!strcmp(a, "--timeout")) opt.timeout = (int)strtol(v, &end, 10);
        else if (!strcmp(a, "--only")) only = strtol(v, &end, 10);
        else if (!strcmp(a, "--batch")) opt.batch = strtol(v, &end, 10);
        else if (!strcmp(a, "--keep")) opt.keep = v;
        else if (!strcmp(a, "--dims")) {
            if (sscanf(v, "%d,%d,%d,%d", &dims[0], &dims[1], &dims[2], &dims[3]) != 4) end = (char *)v;
            else end = (char *)v + strlen(v);
        } else { usage(stderr); return 99; }
        if (end && (*end || errno)) {
            fprintf(stderr, "fuzz_gauge: bad value '%s' for %s\n", v, a);
            return 99;
        }
    }
    if (runs < 0 || opt.timeout <= 0 || opt.batch <= 0 || dims[0] <= 0 || dims[1] <= 0 || dims[2] <= 0 || dims[3] <= 0) {
        usage(stderr);
        return 99;
    }
    int selected[NTARGETS], nsel = 0;
    for (size_t i = 0; i < NTARGETS; i++) {
        selected[i] = !strcmp(format, "all") || !strcmp(format, targets[i].name) ||
                      !strcmp(format, tq_gauge_format_name(targets[i].fmt));
        nsel += selected[i];
    }
    if (!nsel) {
        fprintf(stderr, "fuzz_gauge: unknown format '%s'\n", format);
        usage(stderr);
        return 99;
    }
    if (opt.keep && mkdir(opt.keep, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "fuzz_gauge: cannot create %s: %s\n", opt.keep, strerror(errno));
        return 99;
    }

    const char *tmp = getenv("TMPDIR");
    char dir[512];
    snprintf(dir, sizeof dir, "%s/tq_fuzz_gauge_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) { perror("fuzz_gauge: mkdtemp"); return 99; }
    snprintf(seed_path, sizeof seed_path, "%s/seed", dir);
    snprintf(mutant_path, sizeof mutant_path, "%s/mutant", dir);
    memcpy(tmp_dir, dir, sizeof tmp_dir);
    const char *path = mutant_path;
    signal(SIGINT, on_signal);
    signal(SIGTERM, on_signal);
    signal(SIGHUP, on_signal);

    tq_host_gauge field;
    if (tq_host_gauge_alloc(&field, dims) != TQ_SUCCESS || tq_host_gauge_random(&field, 2026) != TQ_SUCCESS) {
        fprintf(stderr, "fuzz_gauge: cannot make the seed field: %s\n", tq_last_error());
        remove_tmp();
        return 99;
    }
    if (!opt.quiet)
        printf("fuzz_gauge: seed %llu, %ld runs per target, %dx%dx%dx%d lattice, %d s per read\n",
               (unsigned long long)seed, only >= 0 ? 1 : runs, dims[0], dims[1], dims[2], dims[3], opt.timeout);

    int failed = 0;
    stats total;
    memset(&total, 0, sizeof total);
    for (size_t i = 0; i < NTARGETS; i++) {
        if (!selected[i]) continue;
        seedfile sf;
        make_seed(&sf, &targets[i], &field, seed_path);
        stats st;
        failed |= fuzz_target((int)i, &sf, path, seed, runs, only, &st);
        print_stats(targets[i].name, &st);
        fflush(stdout);
        total.runs += st.runs;
        total.crashes += st.crashes;
        total.hangs += st.hangs;
        total.leaks += st.leaks;
        total.seconds += st.seconds;
        for (int v = 0; v < V_COUNT; v++) total.verdicts[v] += st.verdicts[v];
        for (int c = 0; c < 16; c++) total.codes[c] += st.codes[c];
        b_free(&sf.file);
        for (int k = 0; k < sf.nrec; k++) b_free(&sf.rec[k].data);
        tq_host_gauge_free(&sf.ref);
    }
    if (nsel > 1) print_stats("total", &total);
    tq_host_gauge_free(&field);
    remove_tmp();
    if (failed)
        printf("fuzz_gauge: to see and keep one failing mutant: fuzz_gauge --format TARGET --seed %llu "
               "--only INDEX --keep DIR\n", (unsigned long long)seed);
    printf("fuzz_gauge: %s\n", failed ? "FAIL" : "PASS");
    return failed ? 1 : 0;
}
