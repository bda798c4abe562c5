/* Reading and writing a part of a gauge file: the runs of a box's sites (tq_io_read_box,
 * tq_io_write_box), a file every rank writes its part of (tq_io_shared_*) and the
 * combination of the ranks' partial checksums (tq_io_partial_verify); used by
 * tq_gauge_read_local and tq_gauge_write_local, where each rank reads or writes only its
 * sites. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/gauge_io_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

tq_io_box tq_io_box_whole(const int dims[4])
{
    tq_io_box b;
    memset(&b, 0, sizeof b);
    memcpy(b.dims, dims, sizeof b.dims);
    memcpy(b.ext, dims, sizeof b.ext);
    memcpy(b.own, dims, sizeof b.own);
    return b;
}

const tq_io_box tq_io_header_only;

tq_status tq_io_check_box(const tq_io_box *box, const int dims[4], const char *path)
{
    if (!box || box == &tq_io_header_only || !memcmp(box->dims, dims, sizeof box->dims)) return TQ_SUCCESS;
    const int *w = box->dims;
    return tq_error(TQ_ERR_MISMATCH, "'%s' holds a %dx%dx%dx%d lattice, the lattice read into is %dx%dx%dx%d", path,
                    dims[0], dims[1], dims[2], dims[3], w[0], w[1], w[2], w[3]);
}

int tq_io_box_own_site(const tq_io_box *b, int64_t i)
{
    for (int mu = 0; mu < 4; mu++) {
        if (i % b->ext[mu] >= b->own[mu]) return 0;
        i /= b->ext[mu];
    }
    return 1;
}

/* Calls visit(ctx, global index, box index, n) for runs of n box sites consecutive both in
 * the file and in the box, in box order. */
typedef tq_status (*run_visit)(void *ctx, int64_t global_site, int64_t box_site, int64_t n);

static tq_status box_runs(const tq_io_box *b, run_visit visit, void *ctx)
{
    const int *d = b->dims, *o = b->origin, *e = b->ext;
    /* the directions below k are whole in the box (from 0, all of it): a run spans all of
     * them and as much of direction k as is consecutive (up to the periodic wrap) */
    int k = 0;
    int64_t inner = 1;
    while (k < 4 && o[k] % d[k] == 0 && e[k] == d[k]) inner *= d[k++];
    const int64_t box_vol = tq_volume4(e);
    const int64_t step = k < 4 ? inner * e[k] : inner;   /* box sites per outer coordinate */
    tq_status s = TQ_SUCCESS;
    for (int64_t outer = 0; outer * step < box_vol && s == TQ_SUCCESS; outer++) {
        /* the coordinates above k of this run (in the box) */
        int y[4] = {0, 0, 0, 0};
        int64_t q = outer;
        for (int mu = k + 1; mu < 4; mu++) { y[mu] = (int)(q % e[mu]); q /= e[mu]; }
        for (int part = 0; part < 2 && s == TQ_SUCCESS; part++) {
            /* along k: from the box's start to the lattice's end, then from 0 (the wrap) */
            int from = 0, len = 1;
            if (k < 4) {
                const int start = o[k] % d[k], first = d[k] - start < e[k] ? d[k] - start : e[k];
                from = part ? first : 0;
                len = part ? e[k] - first : first;
            } else if (part) break;
            if (len <= 0) continue;
            int x[4];
            for (int mu = 0; mu < 4; mu++) x[mu] = mu < k ? 0 : (o[mu] + (mu == k ? from : y[mu])) % d[mu];
            const int64_t g0 = (((int64_t)x[3] * d[2] + x[2]) * d[1] + x[1]) * d[0] + x[0];
            s = visit(ctx, g0, outer * step + (int64_t)from * inner, (int64_t)len * inner);
        }
    }
    return s;
}

typedef struct box_io {
    FILE *f;      /* reading */
    int fd;       /* writing */
    const char *path, *what;
    int64_t data_off;
    size_t site_bytes;
    unsigned char *buf;   /* TQ_IO_CHUNK_SITES sites */
    tq_io_run_fn fn;
    void *ctx;
} box_io;

static tq_status read_run(void *ctx, int64_t g0, int64_t b0, int64_t n)
{
    box_io *io = (box_io *)ctx;
    tq_status s = tq_io_seek(io->f, io->data_off + g0 * (int64_t)io->site_bytes, io->path);
    for (int64_t c = 0; c < n && s == TQ_SUCCESS; c += TQ_IO_CHUNK_SITES) {
        const int64_t m = n - c < TQ_IO_CHUNK_SITES ? n - c : TQ_IO_CHUNK_SITES;
        s = tq_io_read_exact(io->f, io->buf, (size_t)m * io->site_bytes, io->path, io->what);
        if (s == TQ_SUCCESS) s = io->fn(io->ctx, io->buf, g0 + c, b0 + c, m);
    }
    return s;
}

static tq_status write_run(void *ctx, int64_t g0, int64_t b0, int64_t n)
{
    box_io *io = (box_io *)ctx;
    tq_status s = TQ_SUCCESS;
    for (int64_t c = 0; c < n && s == TQ_SUCCESS; c += TQ_IO_CHUNK_SITES) {
        const int64_t m = n - c < TQ_IO_CHUNK_SITES ? n - c : TQ_IO_CHUNK_SITES;
        s = io->fn(io->ctx, io->buf, g0 + c, b0 + c, m);
        const size_t bytes = (size_t)m * io->site_bytes;
        const off_t at = (off_t)(io->data_off + (g0 + c) * (int64_t)io->site_bytes);
        for (size_t done = 0; s == TQ_SUCCESS && done < bytes;) {
            const ssize_t w = pwrite(io->fd, io->buf + done, bytes - done, at + (off_t)done);
            if (w <= 0) s = tq_error(TQ_ERR_IO, "cannot write '%s': %s", io->path, w < 0 ? strerror(errno) : "nothing written");
            else done += (size_t)w;
        }
    }
    return s;
}

tq_status tq_io_read_box(FILE *f, const char *path, int64_t data_off, size_t site_bytes, const tq_io_box *b,
                         const char *what, tq_io_run_fn fn, void *ctx)
{
    box_io io = {f, -1, path, what, data_off, site_bytes, malloc(TQ_IO_CHUNK_SITES * site_bytes), fn, ctx};
    if (!io.buf) return tq_error(TQ_ERR_NOMEM, "reading '%s': out of memory", path);
    const tq_status s = box_runs(b, read_run, &io);
    free(io.buf);
    return s;
}

tq_status tq_io_write_box(tq_io_shared *sf, int64_t data_off, size_t site_bytes, const tq_io_box *b, tq_io_run_fn fn,
                          void *ctx)
{
    box_io io = {NULL, sf->fd, sf->path, NULL, data_off, site_bytes, malloc(TQ_IO_CHUNK_SITES * site_bytes), fn, ctx};
    if (!io.buf) return tq_error(TQ_ERR_NOMEM, "writing '%s': out of memory", sf->path);
    const tq_status s = box_runs(b, write_run, &io);
    free(io.buf);
    return s;
}

tq_status tq_io_shared_open(const char *path, tq_io_shared *sf)
{
    memset(sf, 0, sizeof *sf);
    sf->path = path;
    sf->fd = -1;
    sf->af.f = NULL;
    sf->root = tq_internal_mpi_rank() == 0;
    tq_status s = TQ_SUCCESS;
    if (sf->root) {
        s = tq_io_create_atomic(path, &sf->af);
        if (s == TQ_SUCCESS && strlen(sf->af.tmp) >= sizeof sf->tmp)
            s = tq_io_finish_atomic(&sf->af, tq_error(TQ_ERR_INVALID_ARG, "writing '%s': the path is too long", path));
        if (s == TQ_SUCCESS) snprintf(sf->tmp, sizeof sf->tmp, "%s", sf->af.tmp);
    }
    s = tq_status_agree(s);
    if (s != TQ_SUCCESS) return s;
    tq_internal_bcast(sf->tmp, (int)sizeof sf->tmp, 0);
    sf->fd = open(sf->tmp, O_WRONLY);
    s = sf->fd < 0 ? tq_error(TQ_ERR_IO, "cannot open '%s' (writing '%s'): %s", sf->tmp, path, strerror(errno)) : TQ_SUCCESS;
    s = tq_status_agree(s);
    if (s != TQ_SUCCESS) {
        if (sf->fd >= 0) close(sf->fd);
        sf->fd = -1;
        if (sf->root) tq_io_finish_atomic(&sf->af, s);
    }
    return s;
}

tq_status tq_io_shared_close(tq_io_shared *sf, tq_status s)
{
    if (sf->fd >= 0 && close(sf->fd) != 0 && s == TQ_SUCCESS)
        s = tq_error(TQ_ERR_IO, "cannot write '%s': %s", sf->path, strerror(errno));
    sf->fd = -1;
    s = tq_status_agree(s);   /* every rank's data is in the file (or one failed) */
    if (sf->root) s = tq_io_finish_atomic(&sf->af, s);
    return tq_status_agree(s);
}

tq_status tq_io_partial_verify(tq_io_partial *p, const char *path, const int dims[4])
{
    const double vol = (double)tq_volume4(dims);
    if (p->format == TQ_FORMAT_NERSC) {
        double sums[2] = {p->got_trace, p->got_plaq};
        tq_internal_allreduce_u32(&p->got_a, 1, 0);
        tq_internal_allreduce_sum(sums, 2);
        const double trace = sums[0] / (3.0 * 4.0 * vol), plaq = sums[1] / (3.0 * 6.0 * vol);
        if (p->have_checksum && p->got_a != p->want_a)
            return tq_error(TQ_ERR_CHECKSUM, "'%s': NERSC checksum mismatch: header says %x, data give %x", path,
                            p->want_a, p->got_a);
        /* the header's values are printed decimals: compared as loosely as the whole-file reader does */
        if (p->have_trace && !(fabs(trace - p->want_trace) <= 1e-5))
            return tq_error(TQ_ERR_CHECKSUM, "'%s': NERSC LINK_TRACE mismatch: header says %.10g, data give %.10g",
                            path, p->want_trace, trace);
        if (p->have_plaq && !(fabs(plaq - p->want_plaq) <= 1e-5))
            return tq_error(TQ_ERR_CHECKSUM, "'%s': NERSC PLAQUETTE mismatch: header says %.10g, data give %.10g",
                            path, p->want_plaq, plaq);
        return TQ_SUCCESS;
    }
    uint32_t got[2] = {p->got_a, p->got_b};
    tq_internal_allreduce_u32(got, 2, 1);   /* both checksums xor their sites' terms */
    if (p->have_checksum && (got[0] != p->want_a || got[1] != p->want_b))
        return tq_error(TQ_ERR_CHECKSUM, "'%s': %s checksum mismatch: file says %x %x, data give %x %x", path,
                        p->format == TQ_FORMAT_MILC ? "MILC" : "SciDAC", p->want_a, p->want_b, got[0], got[1]);
    return TQ_SUCCESS;
}
