/* Reading a part of a gauge file: the runs of a box's sites (tq_io_read_box) and the
 * combination of the ranks' partial checksums (tq_io_partial_verify); used by
 * tq_gauge_read_local, where each rank reads only its sites. */
#define _POSIX_C_SOURCE 200809L
#define _FILE_OFFSET_BITS 64
#include "io/gauge_io_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tq_io_box tq_io_box_whole(const int dims[4])
{
    tq_io_box b;
    memset(&b, 0, sizeof b);
    memcpy(b.dims, dims, sizeof b.dims);
    memcpy(b.ext, dims, sizeof b.ext);
    memcpy(b.own, dims, sizeof b.own);
    return b;
}

tq_status tq_io_check_box(const tq_io_box *box, const int dims[4], const char *path)
{
    if (!box || !memcmp(box->dims, dims, sizeof box->dims)) return TQ_SUCCESS;
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

tq_status tq_io_read_box(FILE *f, const char *path, int64_t data_off, size_t site_bytes, const tq_io_box *b,
                         const char *what, tq_io_run_fn fn, void *ctx)
{
    const int *d = b->dims, *o = b->origin, *e = b->ext;
    /* the directions below k are whole in the box (from 0, all of it): a run spans all of
     * them and as much of direction k as is consecutive (up to the periodic wrap) */
    int k = 0;
    int64_t inner = 1;
    while (k < 4 && o[k] % d[k] == 0 && e[k] == d[k]) inner *= d[k++];
    unsigned char *buf = malloc(TQ_IO_CHUNK_SITES * site_bytes);
    if (!buf) return tq_error(TQ_ERR_NOMEM, "reading '%s': out of memory", path);
    const int64_t box_vol = tq_volume4(e);
    const int64_t step = k < 4 ? inner * e[k] : inner;   /* box sites per outer coordinate */
    tq_status s = TQ_SUCCESS;
    for (int64_t outer = 0; outer * step < box_vol && s == TQ_SUCCESS; outer++) {
        /* the coordinates above k of this run (in the box), then the global site of its start */
        int y[4] = {0, 0, 0, 0};
        int64_t q = outer;
        for (int mu = k + 1; mu < 4; mu++) { y[mu] = (int)(q % e[mu]); q /= e[mu]; }
        for (int part = 0; part < 2 && s == TQ_SUCCESS; part++) {
            /* along k: from the box's start to the lattice's end, then from 0 (the wrap) */
            int from = 0, len = k < 4 ? e[k] : 1;
            if (k < 4) {
                const int start = o[k] % d[k], first = d[k] - start < e[k] ? d[k] - start : e[k];
                from = part ? first : 0;
                len = part ? e[k] - first : first;
            } else if (part) break;
            if (len <= 0) continue;
            int x[4];
            for (int mu = 0; mu < 4; mu++) x[mu] = mu < k ? 0 : (o[mu] + (mu == k ? from : y[mu])) % d[mu];
            const int64_t g0 = (((int64_t)x[3] * d[2] + x[2]) * d[1] + x[1]) * d[0] + x[0];
            const int64_t b0 = outer * step + (int64_t)from * inner;
            const int64_t n = (int64_t)len * inner;
            s = tq_io_seek(f, data_off + g0 * (int64_t)site_bytes, path);
            for (int64_t c = 0; c < n && s == TQ_SUCCESS; c += TQ_IO_CHUNK_SITES) {
                const int64_t m = n - c < TQ_IO_CHUNK_SITES ? n - c : TQ_IO_CHUNK_SITES;
                s = tq_io_read_exact(f, buf, (size_t)m * site_bytes, path, what);
                if (s == TQ_SUCCESS) s = fn(ctx, buf, g0 + c, b0 + c, m);
            }
        }
    }
    free(buf);
    return s;
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
