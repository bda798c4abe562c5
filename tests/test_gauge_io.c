/* Gauge-file readers and writers: MILC, ILDG, SciDAC, NERSC.
 * Real configurations from ../shared/data/milc (skipped, saying so, when absent) against the
 * values MILC recorded; round trips in every format and precision; corrupted copies (in a
 * mkdtemp directory, never in the shared data) that must be refused with the right code and
 * leave no field behind. */
#define _POSIX_C_SOURCE 200809L
#include "tq_test.h"
#include "io/gauge_io_internal.h"

#include <stdint.h>
#include <unistd.h>

static char tmpdir[256];

static const char *tmp_path(const char *name, char *buf, size_t n)
{
    snprintf(buf, n, "%s/%s", tmpdir, name);
    return buf;
}

/* Whole-file helpers for making corrupted copies. */
static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) { free(b); b = NULL; }
    fclose(f);
    *size = (size_t)n;
    return b;
}

static int spit(const char *path, const void *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f) return -1;
    size_t w = fwrite(data, 1, n, f);
    return (fclose(f) == 0 && w == n) ? 0 : -1;
}

/* Offset of a byte string in a buffer, or -1. */
static long find_bytes(const unsigned char *b, size_t n, const char *s)
{
    size_t l = strlen(s);
    for (size_t i = 0; i + l <= n; i++)
        if (memcmp(b + i, s, l) == 0) return (long)i;
    return -1;
}

static int64_t volume(const tq_host_gauge *g) { return tq_volume4(g->dims); }

static int same_field(const tq_host_gauge *a, const tq_host_gauge *b)
{
    return a->links && b->links && memcmp(a->dims, b->dims, sizeof a->dims) == 0 &&
           memcmp(a->links, b->links, (size_t)volume(a) * 72 * sizeof(double)) == 0;
}

static double max_diff(const tq_host_gauge *a, const tq_host_gauge *b)
{
    double m = 0;
    for (int64_t i = 0; i < volume(a) * 72; i++) m = fmax(m, fabs(a->links[i] - b->links[i]));
    return m;
}

/* A copy of g rounded to single precision (what a 4-byte file holds). */
static void round_to_float(tq_host_gauge *dst, const tq_host_gauge *src)
{
    CHECK_OK(tq_host_gauge_alloc(dst, src->dims));
    for (int64_t i = 0; i < volume(src) * 72; i++) dst->links[i] = (float)src->links[i];
}

/* ---- a random SU(3) field made here, so the tests do not depend on the generators ---- */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static double uniform(void)
{
    rng_state ^= rng_state >> 12; rng_state ^= rng_state << 25; rng_state ^= rng_state >> 27;
    return ((rng_state * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0);
}
static double gauss(void)
{
    double u = uniform(), v = uniform();
    return sqrt(-2.0 * log(u + 1e-300)) * cos(6.283185307179586 * v);
}

static void random_su3(double *u)
{
    for (int i = 0; i < 12; i++) u[i] = gauss();
    /* Gram-Schmidt on rows 0 and 1, row 2 = conj(row0 x row1): unitary with det 1 */
    double n = 0;
    for (int i = 0; i < 6; i++) n += u[i] * u[i];
    n = 1.0 / sqrt(n);
    for (int i = 0; i < 6; i++) u[i] *= n;
    double dr = 0, di = 0; /* <row0, row1> = sum conj(a) b */
    for (int k = 0; k < 3; k++) {
        dr += u[2 * k] * u[6 + 2 * k] + u[2 * k + 1] * u[6 + 2 * k + 1];
        di += u[2 * k] * u[6 + 2 * k + 1] - u[2 * k + 1] * u[6 + 2 * k];
    }
    for (int k = 0; k < 3; k++) {
        u[6 + 2 * k] -= dr * u[2 * k] - di * u[2 * k + 1];
        u[6 + 2 * k + 1] -= dr * u[2 * k + 1] + di * u[2 * k];
    }
    n = 0;
    for (int i = 6; i < 12; i++) n += u[i] * u[i];
    n = 1.0 / sqrt(n);
    for (int i = 6; i < 12; i++) u[i] *= n;
    tq_su3_reconstruct_row3(u);
}

static void random_field(tq_host_gauge *g, const int dims[4])
{
    CHECK_OK(tq_host_gauge_alloc(g, dims));
    for (int64_t l = 0; l < volume(g) * 4; l++) random_su3(g->links + l * 18);
}

/* Reads path expecting failure with code; g->links must come back NULL. */
#define CHECK_READ_FAILS(path, fmt, code) do { \
    tq_host_gauge bad_; \
    bad_.links = (double *)&bad_;  /* not NULL: the reader must reset it */ \
    CHECK_ERR(tq_gauge_read((path), (fmt), &bad_, NULL), code); \
    CHECK(bad_.links == NULL, "links left non-NULL after a failed read of %s", (path)); \
    if (bad_.links && bad_.links != (double *)&bad_) tq_host_gauge_free(&bad_); \
} while (0)

/* ---- tests on the real configurations ----------------------------------------------------- */
typedef struct sample {
    const char *file;
    tq_gauge_format fmt;
    int dims[4];
    uint32_t cka, ckb;
    double ss, st;   /* MILC convention (3 x ours) */
} sample;

static const sample samples[] = {
    {"lat.sample.l4444", TQ_FORMAT_MILC, {4, 4, 4, 4}, 0x2352c05, 0xd137321d, 1.7946751560761729, 1.7744257976067317},
    {"lat.sample.l4444.ildg", TQ_FORMAT_ILDG, {4, 4, 4, 4}, 0x37affb9c, 0x2fc07bbf, 1.7946751560761729, 1.7744257976067317},
    {"lat.sample.l4444.scidac", TQ_FORMAT_SCIDAC, {4, 4, 4, 4}, 0x37affb9c, 0x2fc07bbf, 1.7946751560761729, 1.7744257976067317},
    {"lat.sample.l4448", TQ_FORMAT_MILC, {4, 4, 4, 8}, 0x13f3b413, 0x161f7dde, 1.7237482807974562, 1.6905860654166089},
    {"lat.sample.l4448.scidac", TQ_FORMAT_SCIDAC, {4, 4, 4, 8}, 0x1c5a6cb5, 0x5dea327a, 1.7237482807974562, 1.6905860654166089},
    {"lat.sample.l8888", TQ_FORMAT_MILC, {8, 8, 8, 8}, 0x4f9d000e, 0x8d72f72e, 1.7790021544584596, 1.7823592881385857},
};
#define NSAMPLES (sizeof samples / sizeof samples[0])

static void test_samples(int *have_data)
{
    char buf[512];
    tq_host_gauge g[NSAMPLES];
    memset(g, 0, sizeof g);
    *have_data = 1;
    for (size_t i = 0; i < NSAMPLES; i++) {
        const char *path = tq_test_milc_file(samples[i].file, buf, sizeof buf);
        if (!path) {
            printf("test_gauge_io: shared data absent (%s): skipping the real-configuration tests\n", buf);
            *have_data = 0;
            break;
        }
        tq_gauge_file_info info;
        memset(&info, 0xff, sizeof info);
        CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &g[i], &info));
        if (!g[i].links) continue;
        CHECK(info.format == samples[i].fmt, "%s: detected %s", samples[i].file, tq_gauge_format_name(info.format));
        CHECK(memcmp(info.dims, samples[i].dims, sizeof info.dims) == 0 &&
              memcmp(g[i].dims, samples[i].dims, sizeof info.dims) == 0, "%s: dims", samples[i].file);
        CHECK(info.file_precision == 4, "%s: precision %d", samples[i].file, info.file_precision);
        CHECK(info.has_checksum == 1, "%s: has_checksum", samples[i].file);
        CHECK(info.checksum_a == samples[i].cka && info.checksum_b == samples[i].ckb,
              "%s: checksums %x %x", samples[i].file, info.checksum_a, info.checksum_b);
        tq_plaquette p;
        CHECK_OK(tq_host_gauge_plaquette(&g[i], &p));
        CHECK_CLOSE(3 * p.spatial, samples[i].ss, 1e-6, samples[i].file);
        CHECK_CLOSE(3 * p.temporal, samples[i].st, 1e-6, samples[i].file);

        /* the explicit format reads the same */
        tq_host_gauge h;
        CHECK_OK(tq_gauge_read(path, samples[i].fmt, &h, NULL));
        CHECK(same_field(&g[i], &h), "%s: explicit format reads differently", samples[i].file);
        tq_host_gauge_free(&h);
    }
    if (*have_data) {
        /* the MILC, ILDG and SciDAC copies hold the same single-precision numbers */
        CHECK(same_field(&g[0], &g[1]), "l4444 MILC and ILDG differ");
        CHECK(same_field(&g[0], &g[2]), "l4444 MILC and SciDAC differ");
        CHECK(same_field(&g[3], &g[4]), "l4448 MILC and SciDAC differ");
        double tr;
        CHECK_OK(tq_host_gauge_link_trace(&g[5], &tr));
        CHECK(fabs(tr - -0.000646) <= 5e-7, "l8888 link trace %.9g, NERSC says -0.000646", tr);
        /* the .ildg copy also has SciDAC records: read as SciDAC it is the same field */
        tq_host_gauge h;
        CHECK_OK(tq_gauge_read(tq_test_milc_file("lat.sample.l4444.ildg", buf, sizeof buf), TQ_FORMAT_SCIDAC, &h, NULL));
        CHECK(same_field(&g[0], &h), "l4444.ildg read as SciDAC differs");
        tq_host_gauge_free(&h);
        /* a pure SciDAC file is not ILDG (no ildg-format record), nor MILC, nor NERSC */
        const char *sc = tq_test_milc_file("lat.sample.l4444.scidac", buf, sizeof buf);
        CHECK_READ_FAILS(sc, TQ_FORMAT_ILDG, TQ_ERR_FORMAT);
        CHECK_READ_FAILS(sc, TQ_FORMAT_MILC, TQ_ERR_FORMAT);
        CHECK_READ_FAILS(sc, TQ_FORMAT_NERSC, TQ_ERR_FORMAT);
    }
    for (size_t i = 0; i < NSAMPLES; i++) tq_host_gauge_free(&g[i]);
}

/* The NERSC checksum of l8888: MILC's .info records 1245429571, MILC's nersc_cksum, which
 * sums the two rows a 4D_SU3_GAUGE archive stores. A 3x3 file's checksum covers all three
 * rows, so it is a different number; both are checked against independent sums here. */
static void test_nersc_l8888(void)
{
    char buf[512], out[512];
    const char *path = tq_test_milc_file("lat.sample.l8888", buf, sizeof buf);
    if (!path) return;
    tq_host_gauge g, h;
    CHECK_OK(tq_gauge_read(path, TQ_FORMAT_MILC, &g, NULL));
    if (!g.links) return;

    /* independent sums of the float bit patterns */
    uint32_t sum2 = 0, sum3 = 0;
    for (int64_t l = 0; l < volume(&g) * 4; l++)
        for (int k = 0; k < 18; k++) {
            float v = (float)g.links[l * 18 + k];
            uint32_t w;
            memcpy(&w, &v, 4);
            sum3 += w;
            if (k < 12) sum2 += w;
        }
    CHECK(sum2 == 1245429571u, "two-row sum %u", sum2);

    for (int rows = 2; rows <= 3; rows++) {
        tmp_path(rows == 2 ? "l8888.nersc2" : "l8888.nersc3", out, sizeof out);
        if (rows == 3) CHECK_OK(tq_gauge_write(out, TQ_FORMAT_NERSC, &g, 4));
        else CHECK_OK(tq_nersc_write_rows(out, &g, 4, 2));
        size_t n;
        unsigned char *b = slurp(out, &n);
        CHECK(b != NULL, "cannot read back %s", out);
        if (!b) continue;
        long at = find_bytes(b, n < 4096 ? n : 4096, "CHECKSUM = ");
        unsigned long ck = at >= 0 ? strtoul((char *)b + at + 11, NULL, 16) : 0;
        CHECK(ck == (rows == 2 ? 1245429571ul : (unsigned long)sum3),
              "%d-row NERSC header checksum %lu", rows, ck);
        CHECK(find_bytes(b, n < 4096 ? n : 4096, "FLOATING_POINT = IEEE32BIG\n") >= 0, "IEEE32BIG");
        CHECK(find_bytes(b, n < 4096 ? n : 4096, rows == 2 ? "DATATYPE = 4D_SU3_GAUGE\n" : "DATATYPE = 4D_SU3_GAUGE_3x3\n") >= 0, "datatype");
        free(b);
        tq_gauge_file_info info;
        CHECK_OK(tq_gauge_read(out, TQ_FORMAT_AUTO, &h, &info));
        if (!h.links) continue;
        CHECK(info.format == TQ_FORMAT_NERSC && info.has_checksum && info.file_precision == 4 &&
              info.nersc_checksum == (rows == 2 ? 1245429571u : sum3), "NERSC info");
        if (rows == 3) CHECK(same_field(&g, &h), "3x3 single round trip not exact");
        else CHECK(max_diff(&g, &h) < 1e-6, "two-row reconstruction differs by %g", max_diff(&g, &h));
        tq_host_gauge_free(&h);
    }
    printf("test_gauge_io: l8888 NERSC checksums: two rows %u (MILC .info 1245429571), 3x3 %u\n", sum2, sum3);
    tq_host_gauge_free(&g);
}

/* MILC files of the other byte order: the l4444 sample with every 32-bit word swapped
 * (except the time stamp) must read as the same field with the same checksums. */
static void test_milc_big_endian(void)
{
    char buf[512], out[512];
    const char *path = tq_test_milc_file("lat.sample.l4444", buf, sizeof buf);
    if (!path) return;
    size_t n;
    unsigned char *b = slurp(path, &n);
    CHECK(b != NULL, "read %s", path);
    if (!b) return;
    for (size_t i = 0; i + 4 <= n; i += 4) {
        if (i >= 20 && i < 84) continue;  /* time stamp: characters */
        uint32_t w = tq_load_le32(b + i);
        tq_store_be32(b + i, w);
    }
    tmp_path("l4444.be", out, sizeof out);
    CHECK(spit(out, b, n) == 0, "write %s", out);
    free(b);
    tq_host_gauge a, c;
    tq_gauge_file_info info;
    CHECK_OK(tq_gauge_read(path, TQ_FORMAT_AUTO, &a, NULL));
    CHECK_OK(tq_gauge_read(out, TQ_FORMAT_AUTO, &c, &info));
    CHECK(info.format == TQ_FORMAT_MILC && info.checksum_a == 0x2352c05 && info.checksum_b == 0xd137321d,
          "big-endian MILC info");
    CHECK(same_field(&a, &c), "big-endian MILC reads differently");
    tq_host_gauge_free(&a);
    tq_host_gauge_free(&c);
}

/* An ILDG file without a SciDAC checksum record reads with has_checksum = 0. */
static void test_ildg_without_checksum(const char *src, const char *name)
{
    char out[512];
    size_t n;
    unsigned char *b = slurp(src, &n);
    CHECK(b != NULL, "read %s", src);
    if (!b) return;
    long at = find_bytes(b, n, "scidac-checksum");
    CHECK(at >= 0, "%s has no scidac-checksum record", src);
    if (at >= 0) memcpy(b + at, "xxxxxx", 6);  /* an unknown record type: skipped */
    tmp_path(name, out, sizeof out);
    CHECK(spit(out, b, n) == 0, "write %s", out);
    free(b);
    tq_host_gauge a, c;
    tq_gauge_file_info info;
    CHECK_OK(tq_gauge_read(src, TQ_FORMAT_AUTO, &a, NULL));
    CHECK_OK(tq_gauge_read(out, TQ_FORMAT_AUTO, &c, &info));
    CHECK(info.format == TQ_FORMAT_ILDG && info.has_checksum == 0 && info.checksum_a == 0,
          "ILDG without checksum: format %s has_checksum %d", tq_gauge_format_name(info.format), info.has_checksum);
    CHECK(same_field(&a, &c), "ILDG without checksum reads differently");
    tq_host_gauge_free(&a);
    tq_host_gauge_free(&c);
}

/* ---- round trips --------------------------------------------------------------------------- */
static void round_trip(const tq_host_gauge *g, tq_gauge_format fmt, int prec, const char *name)
{
    char out[512];
    tmp_path(name, out, sizeof out);
    CHECK_OK(tq_gauge_write(out, fmt, g, prec));
    tq_host_gauge h, want;
    tq_gauge_file_info info;
    CHECK_OK(tq_gauge_read(out, TQ_FORMAT_AUTO, &h, &info));
    if (!h.links) return;
    CHECK(info.format == fmt, "%s: detected %s", name, tq_gauge_format_name(info.format));
    CHECK(info.file_precision == prec, "%s: precision %d", name, info.file_precision);
    CHECK(info.has_checksum == 1, "%s: no checksum", name);
    CHECK(memcmp(info.dims, g->dims, sizeof info.dims) == 0, "%s: dims", name);
    if (prec == 4) {
        round_to_float(&want, g);
        CHECK(same_field(&want, &h), "%s: single round trip not exact (max diff %g)", name, max_diff(&want, &h));
        tq_host_gauge_free(&want);
    } else {
        CHECK(same_field(g, &h), "%s: double round trip not exact (max diff %g)", name, max_diff(g, &h));
    }
    /* reading with the explicit format gives the same */
    tq_host_gauge k;
    CHECK_OK(tq_gauge_read(out, fmt, &k, NULL));
    CHECK(same_field(&h, &k), "%s: explicit format differs", name);
    tq_host_gauge_free(&k);
    tq_host_gauge_free(&h);
}

static void test_round_trips(const tq_host_gauge *rnd)
{
    round_trip(rnd, TQ_FORMAT_MILC, 4, "rt.milc");
    round_trip(rnd, TQ_FORMAT_ILDG, 4, "rt4.ildg");
    round_trip(rnd, TQ_FORMAT_ILDG, 8, "rt8.ildg");
    round_trip(rnd, TQ_FORMAT_SCIDAC, 4, "rt4.scidac");
    round_trip(rnd, TQ_FORMAT_SCIDAC, 8, "rt8.scidac");
    round_trip(rnd, TQ_FORMAT_NERSC, 4, "rt4.nersc");
    round_trip(rnd, TQ_FORMAT_NERSC, 8, "rt8.nersc");

    /* NERSC two-row, double: third row reconstructed */
    char out[512];
    tq_host_gauge h;
    tmp_path("rt8.nersc2", out, sizeof out);
    CHECK_OK(tq_nersc_write_rows(out, rnd, 8, 2));
    CHECK_OK(tq_gauge_read(out, TQ_FORMAT_NERSC, &h, NULL));
    if (h.links) {
        CHECK(max_diff(rnd, &h) < 1e-14, "two-row double reconstruction: %g", max_diff(rnd, &h));
        tq_host_gauge_free(&h);
    }

    /* NERSC little-endian variants: same data, words swapped, header says LITTLE */
    for (int prec = 4; prec <= 8; prec += 4) {
        char src[512];
        tmp_path(prec == 4 ? "rt4.nersc" : "rt8.nersc", src, sizeof src);
        size_t n;
        unsigned char *b = slurp(src, &n);
        if (!b) { CHECK(0, "read %s", src); continue; }
        long end = find_bytes(b, n, "END_HEADER\n");
        long fp = find_bytes(b, n, prec == 4 ? "IEEE32BIG" : "IEEE64BIG");
        CHECK(end > 0 && fp > 0, "NERSC header layout");
        if (end > 0 && fp > 0) {
            size_t hdr = (size_t)end + 11;
            unsigned char *c = malloc(n + 8);
            size_t m = 0;
            memcpy(c, b, (size_t)fp); m = (size_t)fp;
            const char *lit = prec == 4 ? "IEEE32LITTLE" : "IEEE64LITTLE";
            memcpy(c + m, lit, strlen(lit)); m += strlen(lit);
            memcpy(c + m, b + fp + 9, hdr - (size_t)fp - 9); m += hdr - (size_t)fp - 9;
            for (size_t i = hdr; i + prec <= n; i += (size_t)prec)
                for (int k = 0; k < prec; k++) c[m + (i - hdr) + (size_t)k] = b[i + (size_t)(prec - 1 - k)];
            m += n - hdr;
            char le[512];
            tmp_path(prec == 4 ? "rt4le.nersc" : "rt8le.nersc", le, sizeof le);
            CHECK(spit(le, c, m) == 0, "write %s", le);
            tq_host_gauge a;
            CHECK_OK(tq_gauge_read(src, TQ_FORMAT_NERSC, &h, NULL));
            CHECK_OK(tq_gauge_read(le, TQ_FORMAT_AUTO, &a, NULL));
            CHECK(same_field(&h, &a), "NERSC %s reads differently", lit);
            tq_host_gauge_free(&a);
            tq_host_gauge_free(&h);
            free(c);
        }
        free(b);
    }

    /* writer argument checks */
    tmp_path("never", out, sizeof out);
    CHECK_ERR(tq_gauge_write(out, TQ_FORMAT_MILC, rnd, 8), TQ_ERR_UNSUPPORTED);
    CHECK_ERR(tq_gauge_write(out, TQ_FORMAT_AUTO, rnd, 8), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_gauge_write(out, TQ_FORMAT_SCIDAC, rnd, 2), TQ_ERR_INVALID_ARG);
    tq_host_gauge empty = {{4, 4, 4, 4}, NULL};
    CHECK_ERR(tq_gauge_write(out, TQ_FORMAT_SCIDAC, &empty, 8), TQ_ERR_INVALID_ARG);
    CHECK(access(out, F_OK) != 0, "a refused write left %s behind", out);
    CHECK_ERR(tq_gauge_write("/nonexistent-dir/x.lime", TQ_FORMAT_SCIDAC, rnd, 8), TQ_ERR_IO);
}

/* ---- bad input ------------------------------------------------------------------------------ */
static void corrupt_copy(const char *src, const char *name, char *out, size_t outn, long flip_at,
                         long truncate_to)
{
    size_t n;
    unsigned char *b = slurp(src, &n);
    tmp_path(name, out, outn);
    if (!b) { CHECK(0, "read %s", src); return; }
    if (flip_at >= 0 && (size_t)flip_at < n) b[flip_at] ^= 0x01;
    if (truncate_to >= 0 && (size_t)truncate_to < n) n = (size_t)truncate_to;
    CHECK(spit(out, b, n) == 0, "write %s", out);
    free(b);
}

static void test_bad_input(const tq_host_gauge *rnd)
{
    char out[512], src[512];
    tq_host_gauge g;

    /* missing file: IO error naming the file */
    tmp_path("does-not-exist.lime", out, sizeof out);
    g.links = (double *)&g;
    CHECK_ERR(tq_gauge_read(out, TQ_FORMAT_AUTO, &g, NULL), TQ_ERR_IO);
    CHECK(g.links == NULL, "links not NULL after missing file");
    CHECK(strstr(tq_last_error(), out) != NULL, "message does not name the file: %s", tq_last_error());

    /* unknown contents */
    tmp_path("garbage", out, sizeof out);
    CHECK(spit(out, "hello, world, not a gauge field", 31) == 0, "write");
    CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);
    CHECK(strstr(tq_last_error(), out) != NULL, "message does not name the file: %s", tq_last_error());
    tmp_path("empty", out, sizeof out);
    CHECK(spit(out, "", 0) == 0, "write");
    CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);
    CHECK_READ_FAILS(out, TQ_FORMAT_MILC, TQ_ERR_FORMAT);
    CHECK_READ_FAILS(out, TQ_FORMAT_SCIDAC, TQ_ERR_FORMAT);
    CHECK_READ_FAILS(out, TQ_FORMAT_NERSC, TQ_ERR_FORMAT);

    /* per format: a good file written here, then corrupted copies */
    static const struct { tq_gauge_format fmt; int prec; const char *name; } fm[] = {
        {TQ_FORMAT_MILC, 4, "bad.milc"}, {TQ_FORMAT_ILDG, 8, "bad.ildg"},
        {TQ_FORMAT_SCIDAC, 4, "bad.scidac"}, {TQ_FORMAT_NERSC, 8, "bad.nersc"},
    };
    for (size_t i = 0; i < sizeof fm / sizeof fm[0]; i++) {
        tmp_path(fm[i].name, src, sizeof src);
        CHECK_OK(tq_gauge_write(src, fm[i].fmt, rnd, fm[i].prec));
        size_t n;
        unsigned char *b = slurp(src, &n);
        if (!b) { CHECK(0, "read %s", src); continue; }
        char nm[64];

        /* truncated: half the file, and one byte short */
        snprintf(nm, sizeof nm, "%s.trunc", fm[i].name);
        corrupt_copy(src, nm, out, sizeof out, -1, (long)n / 2);
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);
        CHECK_READ_FAILS(out, fm[i].fmt, TQ_ERR_FORMAT);
        corrupt_copy(src, nm, out, sizeof out, -1, (long)n - 1);
        CHECK_READ_FAILS(out, fm[i].fmt, TQ_ERR_FORMAT);
        /* truncated inside the header */
        corrupt_copy(src, nm, out, sizeof out, -1, 40);
        CHECK_READ_FAILS(out, fm[i].fmt, TQ_ERR_FORMAT);

        /* wrong magic */
        snprintf(nm, sizeof nm, "%s.magic", fm[i].name);
        corrupt_copy(src, nm, out, sizeof out, 1, -1);
        CHECK_READ_FAILS(out, fm[i].fmt, TQ_ERR_FORMAT);
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);

        /* one data byte flipped (a mantissa bit in the last site): checksum mismatch */
        snprintf(nm, sizeof nm, "%s.flip", fm[i].name);
        corrupt_copy(src, nm, out, sizeof out, fm[i].fmt == TQ_FORMAT_ILDG || fm[i].fmt == TQ_FORMAT_SCIDAC
                     ? find_bytes(b, n, "binary-data") + 144 - 7 + 3 /* first real's low byte */
                     : (long)n - 2, -1);
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_CHECKSUM);
        CHECK(strstr(tq_last_error(), out) != NULL, "message does not name the file: %s", tq_last_error());

        /* header inconsistent with the size: one dimension doubled */
        snprintf(nm, sizeof nm, "%s.dims", fm[i].name);
        tmp_path(nm, out, sizeof out);
        unsigned char *c = malloc(n);
        memcpy(c, b, n);
        if (fm[i].fmt == TQ_FORMAT_MILC) {
            tq_store_le32(c + 4, tq_load_le32(c + 4) * 2);    /* nx */
        } else if (fm[i].fmt == TQ_FORMAT_NERSC) {
            long at = find_bytes(c, n, "DIMENSION_1 = 4");
            if (at >= 0) c[at + 14] = '8';
        } else {
            long at = find_bytes(c, n, "<lx>4</lx>");
            if (at >= 0) c[at + 4] = '8';
        }
        CHECK(spit(out, c, n) == 0, "write %s", out);
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);
        free(c);
        free(b);
    }

    /* LIME: both dims records present (SciDAC): changing only one is inconsistent */
    tmp_path("bad.scidac", src, sizeof src);
    {
        size_t n;
        unsigned char *b = slurp(src, &n);
        if (b) {
            long at = find_bytes(b, n, "<dims>4 ");
            if (at >= 0) b[at + 6] = '2';
            tmp_path("bad.scidac.dims2", out, sizeof out);
            CHECK(spit(out, b, n) == 0, "write");
            CHECK_READ_FAILS(out, TQ_FORMAT_SCIDAC, TQ_ERR_FORMAT);
            free(b);
        }
    }

    /* LIME record lengths near 2^63 and 2^64 (found by tests/fuzz_gauge): refused, and the
     * message gives the length rather than a padded size that overflowed to 0 */
    {
        size_t n;
        unsigned char *b = slurp(src, &n);
        static const uint64_t lens[] = {UINT64_MAX, UINT64_MAX - 3, INT64_MAX};
        for (size_t k = 0; b && k < sizeof lens / sizeof lens[0]; k++) {
            tq_store_be64(b + 8, lens[k]);   /* the first record's data length */
            tmp_path("bad.scidac.len", out, sizeof out);
            CHECK(spit(out, b, n) == 0, "write");
            CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);
            CHECK(strstr(tq_last_error(), " needs 0 bytes") == NULL, "length %llu: %s",
                  (unsigned long long)lens[k], tq_last_error());
        }
        free(b);
    }

    /* a non-unitary link in an otherwise valid file (its checksum matches) */
    tq_host_gauge nu;
    CHECK_OK(tq_host_gauge_alloc(&nu, rnd->dims));
    memcpy(nu.links, rnd->links, (size_t)volume(rnd) * 72 * sizeof(double));
    for (int k = 0; k < 18; k++) nu.links[5 * 18 + k] *= 1.01;
    static const struct { tq_gauge_format fmt; int prec; const char *name; } nf[] = {
        {TQ_FORMAT_MILC, 4, "nonunit.milc"}, {TQ_FORMAT_ILDG, 8, "nonunit.ildg"},
        {TQ_FORMAT_SCIDAC, 4, "nonunit.scidac"}, {TQ_FORMAT_NERSC, 8, "nonunit.nersc"},
    };
    for (size_t i = 0; i < sizeof nf / sizeof nf[0]; i++) {
        tmp_path(nf[i].name, out, sizeof out);
        CHECK_OK(tq_gauge_write(out, nf[i].fmt, &nu, nf[i].prec));
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_NOT_UNITARY);
    }
    /* double precision is held to 1e-12: a link off by 1e-9 is refused in a double file */
    for (int k = 0; k < 18; k++) nu.links[5 * 18 + k] = rnd->links[5 * 18 + k] * (1 + 1e-9);
    tmp_path("nonunit2.scidac", out, sizeof out);
    CHECK_OK(tq_gauge_write(out, TQ_FORMAT_SCIDAC, &nu, 8));
    CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_NOT_UNITARY);
    tq_host_gauge_free(&nu);

    /* a plaquette that disagrees with the NERSC header */
    tmp_path("bad.nersc", src, sizeof src);
    {
        size_t n;
        unsigned char *b = slurp(src, &n);
        if (b) {
            long at = find_bytes(b, n, "PLAQUETTE = ");
            CHECK(at >= 0, "no PLAQUETTE");
            if (at >= 0) memcpy(b + at + 12, "0.9", 3);
            tmp_path("bad.nersc.plaq", out, sizeof out);
            CHECK(spit(out, b, n) == 0, "write");
            CHECK_READ_FAILS(out, TQ_FORMAT_NERSC, TQ_ERR_CHECKSUM);
            free(b);
        }
    }
}

static void test_real_corruptions(void)
{
    char buf[512], out[512];
    static const char *files[] = {"lat.sample.l4444", "lat.sample.l4444.ildg", "lat.sample.l4444.scidac"};
    for (int i = 0; i < 3; i++) {
        const char *src = tq_test_milc_file(files[i], buf, sizeof buf);
        if (!src) return;
        size_t n;
        unsigned char *b = slurp(src, &n);
        if (!b) continue;
        long at = i == 0 ? 96 + 1000 : find_bytes(b, n, "binary-data") + 144 - 7 + 1000;
        free(b);
        corrupt_copy(src, "real.flip", out, sizeof out, at, -1);
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_CHECKSUM);
        corrupt_copy(src, "real.trunc", out, sizeof out, -1, (long)n - 100);
        CHECK_READ_FAILS(out, TQ_FORMAT_AUTO, TQ_ERR_FORMAT);
    }
}

static void test_names(void)
{
    tq_gauge_format f;
    static const tq_gauge_format all[] = {TQ_FORMAT_AUTO, TQ_FORMAT_MILC, TQ_FORMAT_SCIDAC, TQ_FORMAT_ILDG, TQ_FORMAT_NERSC};
    for (int i = 0; i < 5; i++) {
        CHECK_OK(tq_gauge_format_parse(tq_gauge_format_name(all[i]), &f));
        CHECK(f == all[i], "format %d does not round-trip through its name", (int)all[i]);
    }
    CHECK_OK(tq_gauge_format_parse("SciDAC", &f));
    CHECK(f == TQ_FORMAT_SCIDAC, "case-insensitive parse");
    CHECK_ERR(tq_gauge_format_parse("lime", &f), TQ_ERR_INVALID_ARG);
    CHECK_ERR(tq_gauge_format_parse("", &f), TQ_ERR_INVALID_ARG);
    CHECK(strcmp(tq_gauge_format_name(TQ_FORMAT_ILDG), "ildg") == 0, "ildg name");
    /* the CRC is zlib's */
    CHECK(tq_crc32(0, "123456789", 9) == 0xCBF43926u, "crc32 check value");
}

/* Single-precision links written with 8-byte reals fail the double-precision check; the
 * refusal says the deviation is small enough for single precision, which points at the
 * cause (issue 26: `gauge convert --precision 8` of a single-precision file). Reunitarised
 * first, the same links read back. A plainly broken link gets no such hint. */
static void test_promoted_single(const tq_host_gauge *rnd)
{
    char out[512];
    tq_host_gauge f, h;
    round_to_float(&f, rnd);
    tmp_path("promoted.scidac", out, sizeof out);
    CHECK_OK(tq_gauge_write(out, TQ_FORMAT_SCIDAC, &f, 8));
    CHECK_ERR(tq_gauge_read(out, TQ_FORMAT_AUTO, &h, NULL), TQ_ERR_NOT_UNITARY);
    CHECK(h.links == NULL, "a refused read left links");
    CHECK(strstr(tq_last_error(), "single precision") != NULL,
          "refusal of single-precision links in a double file gives no hint: '%s'", tq_last_error());

    tq_plaquette want, got = {0, 0, 0};
    CHECK_OK(tq_host_gauge_plaquette(rnd, &want));
    CHECK_OK(tq_host_gauge_reunitarize(&f));
    tmp_path("promoted2.scidac", out, sizeof out);
    CHECK_OK(tq_gauge_write(out, TQ_FORMAT_SCIDAC, &f, 8));
    CHECK_OK(tq_gauge_read(out, TQ_FORMAT_AUTO, &h, NULL));
    if (h.links) {
        CHECK_OK(tq_host_gauge_plaquette(&h, &got));
        CHECK_CLOSE(got.total, want.total, 1e-6, "plaquette after promotion with reunitarisation");
        tq_host_gauge_free(&h);
    }

    for (int k = 0; k < 18; k++) f.links[7 * 18 + k] *= 1.01;
    tmp_path("promoted3.scidac", out, sizeof out);
    CHECK_OK(tq_gauge_write(out, TQ_FORMAT_SCIDAC, &f, 8));
    CHECK_ERR(tq_gauge_read(out, TQ_FORMAT_AUTO, &h, NULL), TQ_ERR_NOT_UNITARY);
    CHECK(strstr(tq_last_error(), "single precision") == NULL,
          "a link off by 2%% is called a precision matter: '%s'", tq_last_error());
    tq_host_gauge_free(&f);
}

static void remove_tmpdir(void)
{
    static const char *names[] = {
        "l8888.nersc2", "l8888.nersc3", "l4444.be", "nock.ildg", "nock2.ildg", "rt.milc", "rt4.ildg",
        "rt8.ildg", "rt4.scidac", "rt8.scidac", "rt4.nersc", "rt8.nersc", "rt8.nersc2", "rt4le.nersc",
        "rt8le.nersc", "promoted.scidac", "promoted2.scidac", "promoted3.scidac", "garbage",
        "empty", "bad.milc", "bad.ildg", "bad.scidac", "bad.nersc",
        "bad.milc.trunc", "bad.ildg.trunc", "bad.scidac.trunc", "bad.nersc.trunc", "bad.milc.magic",
        "bad.ildg.magic", "bad.scidac.magic", "bad.nersc.magic", "bad.milc.flip", "bad.ildg.flip",
        "bad.scidac.flip", "bad.nersc.flip", "bad.milc.dims", "bad.ildg.dims", "bad.scidac.dims",
        "bad.nersc.dims", "bad.scidac.dims2", "bad.scidac.len", "nonunit.milc", "nonunit.ildg", "nonunit.scidac",
        "nonunit.nersc", "nonunit2.scidac", "bad.nersc.plaq", "real.flip", "real.trunc", "never",
    };
    char p[512];
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) remove(tmp_path(names[i], p, sizeof p));
    rmdir(tmpdir);
}

int main(void)
{
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/tq_gauge_io_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }

    test_names();
    int have_data = 0;
    test_samples(&have_data);
    if (have_data) {
        test_nersc_l8888();
        test_milc_big_endian();
        char buf[512];
        test_ildg_without_checksum(tq_test_milc_file("lat.sample.l4444.ildg", buf, sizeof buf), "nock.ildg");
        test_real_corruptions();
    }

    /* self-contained: a random SU(3) field built here (4^3 x 6, not all extents equal) */
    tq_host_gauge rnd;
    random_field(&rnd, (const int[4]){4, 4, 4, 6});
    double dev;
    CHECK_OK(tq_host_gauge_unitarity(&rnd, &dev));
    CHECK(dev < 1e-14, "test field unitarity %g", dev);
    test_round_trips(&rnd);
    {
        char p[512];
        test_ildg_without_checksum(tmp_path("rt8.ildg", p, sizeof p), "nock2.ildg");
    }
    test_bad_input(&rnd);
    test_promoted_single(&rnd);
    tq_host_gauge_free(&rnd);

    remove_tmpdir();
    return tq_test_finish("test_gauge_io");
}
