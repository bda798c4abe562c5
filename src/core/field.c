/* Fields: one StarPU vector handle per block and parity, in the layout of
 * codelets/kernels/field_layout.h; import/export from the API's lexicographic host order. */
#include "core/field_internal.h"
#include "tq_tasks.h"
#include "random_field.h"
#ifdef TQ_HAVE_CUDA
#include "face_sync.h"
#endif

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* Gauge links are converted between the host's 72 reals per site and the stored
 * 4 x recon reals per site (src/gauge_field.c). */

int tq_field_kind_is_vector(tq_field_kind k)
{
    return k == TQ_FIELD_SPINOR || k == TQ_FIELD_STAGGERED || k == TQ_FIELD_COARSE;
}

static int host_reals_per_site(tq_field_kind k, int ndof)
{
    switch (k) {
    case TQ_FIELD_COARSE: return 2 * ndof;
    case TQ_FIELD_SPINOR: return 24;
    case TQ_FIELD_STAGGERED: return 6;
    case TQ_FIELD_GAUGE: return 72;
    case TQ_FIELD_CLOVER: return 72;
    }
    return 0;
}

static const char *kind_name(tq_field_kind k)
{
    switch (k) {
    case TQ_FIELD_SPINOR: return "spinor";
    case TQ_FIELD_STAGGERED: return "staggered";
    case TQ_FIELD_GAUGE: return "gauge";
    case TQ_FIELD_CLOVER: return "clover";
    case TQ_FIELD_COARSE: return "coarse";
    }
    return "?";
}

const char *tq_precision_name(tq_precision p)
{
    switch (p) {
    case TQ_DOUBLE: return "double";
    case TQ_SINGLE: return "single";
    case TQ_HALF: return "half";
    }
    return "invalid";
}

tq_status tq_precision_parse(const char *s, tq_precision *out)
{
    if (!s || !out) return tq_error(TQ_ERR_INVALID_ARG, "tq_precision_parse: NULL argument");
    if (!strcmp(s, "double") || !strcmp(s, "d")) *out = TQ_DOUBLE;
    else if (!strcmp(s, "single") || !strcmp(s, "s") || !strcmp(s, "float")) *out = TQ_SINGLE;
    else if (!strcmp(s, "half") || !strcmp(s, "h")) *out = TQ_HALF;
    else return tq_error(TQ_ERR_INVALID_ARG, "unknown precision '%s' (double, single or half)", s);
    return TQ_SUCCESS;
}

tq_status tq_field_create(tq_lattice *lat, const tq_field_params *p, tq_field **out)
{
    if (!lat || !p || !out) return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: NULL argument");
    *out = NULL;
    if (!tq_is_initialized()) return tq_error(TQ_ERR_NOT_INITIALIZED, "tq_field_create: call tq_init first");
    if (p->kind < TQ_FIELD_SPINOR || p->kind > TQ_FIELD_COARSE)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: unknown field kind %d", (int)p->kind);
    if (p->prec != TQ_DOUBLE && p->prec != TQ_SINGLE && p->prec != TQ_HALF)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: unknown precision %d", (int)p->prec);
    if (p->subset < TQ_EVEN || p->subset > TQ_FULL)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: unknown subset %d", (int)p->subset);
    if (!tq_field_kind_is_vector(p->kind) && p->subset != TQ_FULL)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: %s fields hold both parities (subset must be TQ_FULL)", kind_name(p->kind));
    int recon = p->recon ? (int)p->recon : 18;
    if (p->kind == TQ_FIELD_GAUGE && recon != 18 && recon != 12 && recon != 8)
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: gauge compression %d is not 18, 12 or 8", recon);

    if (p->kind == TQ_FIELD_COARSE && (p->ndof <= 0 || p->ndof % 12))
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_create: a coarse field's ndof is %d, not a positive multiple of 12 "
                        "(2 nvec complex per coarse site: nvec a multiple of 6)", p->ndof);

    tq_field *f = calloc(1, sizeof *f);
    if (!f) return tq_error(TQ_ERR_NOMEM, "tq_field_create: out of memory");
    f->lat = lat;
    f->p = *p;
    f->p.recon = p->kind == TQ_FIELD_GAUGE ? (tq_recon)recon : (tq_recon)0;
    f->p.ndof = p->kind == TQ_FIELD_COARSE ? p->ndof : 0;
    f->rows = p->kind == TQ_FIELD_COARSE ? p->ndof / 12 : 1;
    if (p->subset == TQ_FULL) { f->nparity = 2; f->parity[0] = 0; f->parity[1] = 1; }
    else { f->nparity = 1; f->parity[0] = (int)p->subset; }
    int nreal = p->kind == TQ_FIELD_GAUGE ? 4 * recon : p->kind == TQ_FIELD_COARSE ? 24 : host_reals_per_site(p->kind, 0);
    f->layout = tq_layout_make((int)p->prec, nreal, p->kind != TQ_FIELD_GAUGE, lat->block_cb * f->rows);
    /* 18-real links: vectors of 2 so every link starts on a vector (72 reals would give 4) */
    if (p->kind == TQ_FIELD_GAUGE && recon == 18) f->layout.vec = 2;

    int nh = lat->nblocks * f->nparity;
    f->h = calloc((size_t)nh, sizeof *f->h);
    if (!f->h) { free(f); return tq_error(TQ_ERR_NOMEM, "tq_field_create: out of memory"); }
    size_t site_bytes = (size_t)(tq_layout_bytes(&f->layout) / f->layout.stride);
    for (int i = 0; i < nh; i++)
        /* home node -1: StarPU allocates on first use, wherever that is, so a field that
         * only lives on a GPU never takes host memory */
        starpu_vector_data_register(&f->h[i], -1, 0, (uint32_t)f->layout.stride, site_bytes);
    __atomic_add_fetch(&lat->nfields, 1, __ATOMIC_RELAXED);   /* fields are made and freed by several host threads (solves side by side) */
    *out = f;
    return TQ_SUCCESS;
}

void tq_field_destroy(tq_field *f)
{
    if (!f) return;
    int nh = f->lat->nblocks * f->nparity;
    for (int i = 0; i < nh; i++) {
        tq_task_note_access(f->h[i], STARPU_W);   /* no waiting chain takes a later run past it */
        starpu_data_unregister_submit(f->h[i]);
    }
    __atomic_sub_fetch(&f->lat->nfields, 1, __ATOMIC_RELAXED);
    free(f->h);
    free(f);
}

tq_status tq_field_parity_view(const tq_field *f, int p, tq_field **out)
{
    if (!f || !out || (p != 0 && p != 1)) return tq_error(TQ_ERR_INVALID_ARG, "tq_field_parity_view: NULL field or parity %d", p);
    *out = NULL;
    if (f->nparity != 2 || !tq_field_kind_is_vector(f->p.kind))
        return tq_error(TQ_ERR_INVALID_ARG, "tq_field_parity_view: not a full vector field");
    tq_field *v = malloc(sizeof *v);
    starpu_data_handle_t *h = malloc(sizeof *h * (size_t)f->lat->nblocks);
    if (!v || !h) {
        free(v);
        free(h);
        return tq_error(TQ_ERR_NOMEM, "tq_field_parity_view: out of memory");
    }
    *v = *f;
    v->p.subset = (tq_subset)p;
    v->nparity = 1;
    v->parity[0] = p;
    for (int b = 0; b < f->lat->nblocks; b++) h[b] = tq_field_handle(f, b, p);
    v->h = h;
    *out = v;
    return TQ_SUCCESS;
}

void tq_field_view_release(tq_field *v)
{
    if (!v) return;
    free(v->h);
    free(v);
}

tq_status tq_field_get_params(const tq_field *f, tq_field_params *p)
{
    if (!f || !p) return tq_error(TQ_ERR_INVALID_ARG, "tq_field_get_params: NULL argument");
    *p = f->p;
    return TQ_SUCCESS;
}

int tq_field_reals_per_site(const tq_field *f) { return f ? f->layout.nreal * f->rows : 0; }

size_t tq_field_bytes(const tq_field *f)
{
    return f ? (size_t)tq_layout_bytes(&f->layout) * (size_t)(f->lat->nblocks * f->nparity) : 0;
}

static int spinor_shaped(const tq_field *f)
{
    return f->p.kind == TQ_FIELD_SPINOR || (f->p.kind == TQ_FIELD_COARSE && f->p.ndof == 12);
}

tq_status tq_field_check_compatible(const char *who, const tq_field *a, const tq_field *b,
                                    int same_precision)
{
    if (!a || !b) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL field", who);
    if (a->lat != b->lat) return tq_error(TQ_ERR_MISMATCH, "%s: fields live on different lattices", who);
    /* a coarse field of 12 complex per site is a spinor field's buffers site for site (the
     * fine level of multigrid reads spinors so), so the two go together */
    const int spinor_like = spinor_shaped(a) && spinor_shaped(b);
    if (a->p.kind != b->p.kind && !spinor_like)
        return tq_error(TQ_ERR_MISMATCH, "%s: field kinds differ (%s vs %s)", who, kind_name(a->p.kind), kind_name(b->p.kind));
    if (a->p.subset != b->p.subset) return tq_error(TQ_ERR_MISMATCH, "%s: fields cover different parities", who);
    if (same_precision && a->p.prec != b->p.prec)
        return tq_error(TQ_ERR_MISMATCH, "%s: precisions differ (%s vs %s); convert with tq_blas_copy", who,
                        tq_precision_name(a->p.prec), tq_precision_name(b->p.prec));
    if (a->p.recon != b->p.recon) return tq_error(TQ_ERR_MISMATCH, "%s: gauge compressions differ", who);
    if (a->p.ndof != b->p.ndof && !spinor_like)
        return tq_error(TQ_ERR_MISMATCH, "%s: coarse fields of %d and %d complex per site", who, a->p.ndof, b->p.ndof);
    return TQ_SUCCESS;
}

/* One block's buffer (parity i) and the host array it is copied from or to. */
typedef struct block_copy {
    const tq_field *f;
    void *buf;
    int bx[4];                /* the block's place among this rank's blocks */
    int i, hreal;
    double *host_out;
    const double *host_in;
} block_copy;

/* Sites [begin, end) of the block (x fastest); those of another parity are skipped. */
static void copy_block_sites(int64_t begin, int64_t end, void *arg)
{
    const block_copy *c = arg;
    const tq_field *f = c->f;
    const tq_lattice *lat = f->lat;
    const int gauge = f->p.kind == TQ_FIELD_GAUGE, recon = (int)f->p.recon;
    double site[TQ_MAX_REALS_PER_SITE];
    for (int64_t k = begin; k < end; k++) {
        int x[4];
        int64_t q = k;
        for (int mu = 0; mu < 4; mu++) {
            x[mu] = c->bx[mu] * lat->block[mu] + (int)(q % lat->block[mu]);
            q /= lat->block[mu];
        }
        int blk, par;
        int64_t cb;
        tq_lattice_locate(lat, x, &blk, &par, &cb);
        if (par != f->parity[c->i]) continue;
        int64_t lex = (((int64_t)x[3] * lat->local[2] + x[2]) * lat->local[1] + x[1]) * lat->local[0] + x[0];
        if (c->host_in) {
            const double *src = c->host_in + lex * c->hreal;
            if (gauge) { tq_gauge_pack_site(recon, src, site); tq_store_site(c->buf, &f->layout, cb, site); }
            else for (int j = 0; j < f->rows; j++) tq_store_site(c->buf, &f->layout, tq_field_row(f, cb, j), src + 24 * j);
        } else {
            double *dst = c->host_out + lex * c->hreal;
            if (gauge) { tq_load_site(c->buf, &f->layout, cb, site); tq_gauge_unpack_site(recon, site, dst); }
            else for (int j = 0; j < f->rows; j++) tq_load_site(c->buf, &f->layout, tq_field_row(f, cb, j), dst + 24 * j);
        }
    }
}

/* The host's side of GPU blocks in tq_host_access: one buffer for the process, kept
 * between accesses and page-locked up to STAGING_PIN_MAX bytes. A fresh buffer per export
 * paid its page faults in the copy: 100 MB from an H200 took 67 ms (1.5 GB/s), twelve
 * 32^4 solutions 1.6 s. Held by one access at a time (staging.lock), released at
 * tq_finalize. */
#define STAGING_PIN_MAX ((size_t)1 << 30)
static struct {
    pthread_mutex_t lock;
    void *buf;
    size_t bytes;
    int pinned;
} staging = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static void staging_drop(void)
{
#ifdef TQ_HAVE_CUDA
    if (staging.pinned) tq_cuda_host_unregister(staging.buf);
#endif
    free(staging.buf);
    staging.buf = NULL;
    staging.bytes = 0;
    staging.pinned = 0;
}

static void staging_release(void)
{
    pthread_mutex_lock(&staging.lock);
    staging_drop();
    pthread_mutex_unlock(&staging.lock);
}

/* With staging.lock held: at least bytes of it (NULL: no memory). Not zeroed for a write:
 * the layout has no padding (stride = the block's sites, whole vectors per site), so the
 * host's conversion writes every byte, as it does into a buffer in main memory. */
static void *staging_get(size_t bytes)
{
    if (bytes > staging.bytes) {
        staging_drop();
        if (!(staging.buf = malloc(bytes))) return NULL;
        staging.bytes = bytes;
#ifdef TQ_HAVE_CUDA
        staging.pinned = bytes <= STAGING_PIN_MAX && tq_cuda_host_register(staging.buf, bytes) == 0;
#endif
        tq_internal_at_finalize(staging_release);
    }
    return staging.buf;
}

tq_status tq_host_access_begin(tq_host_access *a, starpu_data_handle_t h, int worker, int write)
{
    *a = (tq_host_access){h, STARPU_MAIN_RAM, -1, write, NULL, NULL, starpu_vector_get_nx(h) * starpu_vector_get_elemsize(h)};
#ifdef TQ_HAVE_CUDA
    if (worker >= 0 && starpu_worker_get_type(worker) == STARPU_CUDA_WORKER) {
        a->device = starpu_worker_get_devid(worker);
        a->node = starpu_worker_get_memory_node(worker);
    }
#else
    (void)worker;
#endif
    if (a->device >= 0) {
        pthread_mutex_lock(&staging.lock);
        if (!(a->host = staging_get(a->bytes))) {
            pthread_mutex_unlock(&staging.lock);
            return tq_error(TQ_ERR_NOMEM, "field transfer: no host memory for a block of %zu bytes", a->bytes);
        }
    }
    if (starpu_data_acquire_on_node(h, (int)a->node, write ? STARPU_W : STARPU_R)) {
        if (a->device >= 0) pthread_mutex_unlock(&staging.lock);
        return tq_error(TQ_ERR_RUNTIME, "field transfer: cannot acquire a block in %s", a->device >= 0 ? "GPU memory" : "main memory");
    }
    a->buf = (void *)STARPU_VECTOR_GET_PTR(starpu_data_get_interface_on_node(h, a->node));
    if (a->device < 0) a->host = a->buf;
#ifdef TQ_HAVE_CUDA
    if (a->device >= 0 && !write && tq_cuda_copy_host(a->device, a->host, a->buf, a->bytes)) {
        starpu_data_release_on_node(h, (int)a->node);
        pthread_mutex_unlock(&staging.lock);
        return tq_error(TQ_ERR_RUNTIME, "field transfer: copying a block from GPU %d failed", a->device);
    }
#endif
    return TQ_SUCCESS;
}

tq_status tq_host_access_end(tq_host_access *a)
{
    tq_status st = TQ_SUCCESS;
#ifdef TQ_HAVE_CUDA
    if (a->device >= 0 && a->write && tq_cuda_copy_host(a->device, a->buf, a->host, a->bytes))
        st = tq_error(TQ_ERR_RUNTIME, "field transfer: copying a block to GPU %d failed", a->device);
#endif
    starpu_data_release_on_node(a->h, (int)a->node);
    if (a->device >= 0) pthread_mutex_unlock(&staging.lock);
    return st;
}

/* Visit every local site of the field's parities, block by block (this rank's blocks), with
 * the block's buffer seen from the host where its owner computes (tq_host_access); the
 * sites of a block are converted on host threads (at 64^4 one thread takes seconds). */
static tq_status transfer(const tq_field *f, double *host_out, const double *host_in)
{
    const tq_lattice *lat = f->lat;
    block_copy c = {f, NULL, {0}, 0, host_reals_per_site(f->p.kind, f->p.ndof), host_out, host_in};
    tq_status st = TQ_SUCCESS;
    for (int b = 0; b < lat->nblocks && st == TQ_SUCCESS; b++) {
        const int rank = tq_block_global_rank(lat, b);   /* among all ranks (tasks/ names them so) */
        if (!tq_block_is_local(lat, b)) {
            /* every rank learns that the owner holds the block's new data */
            if (host_in)
                for (int i = 0; i < f->nparity; i++) tq_task_data_written_on(tq_field_handle(f, b, i), rank);
            continue;
        }
        tq_block_grid_coords(lat, b, c.bx);
        for (int mu = 0; mu < 4; mu++) c.bx[mu] -= lat->coords[mu] * lat->nbl[mu];   /* in this rank's blocks */
        for (int i = 0; i < f->nparity && st == TQ_SUCCESS; i++) {
            starpu_data_handle_t h = tq_field_handle(f, b, i);
            if (host_in && tq_lattice_nprocs(lat) > 1) tq_task_data_written_on(h, rank);   /* else no other rank has it */
            const int worker = tq_internal_access_worker(tq_internal_block_options(lat, b), tq_block_local_index(lat, b), h,
                                                         host_in != NULL);
            tq_host_access a;
            if ((st = tq_host_access_begin(&a, h, worker, host_in != NULL))) break;
            c.buf = a.host;
            c.i = i;
            tq_host_parallel_for(tq_volume4(lat->block), copy_block_sites, &c);
            st = tq_host_access_end(&a);
        }
    }
    return st;
}

tq_status tq_field_import(tq_field *f, const double *host)
{
    if (!f || !host) return tq_error(TQ_ERR_INVALID_ARG, "tq_field_import: NULL argument");
    return transfer(f, NULL, host);
}

tq_status tq_field_export(const tq_field *f, double *host)
{
    if (!f || !host) return tq_error(TQ_ERR_INVALID_ARG, "tq_field_export: NULL argument");
    return transfer(f, host, NULL);
}

tq_status tq_internal_field_random(tq_field *f, uint64_t seed, uint32_t stream)
{
    const char *who = "random field";
    if (!f) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL field", who);
    if (!tq_field_kind_is_vector(f->p.kind)) return tq_error(TQ_ERR_INVALID_ARG, "%s: not a vector field", who);
    const tq_lattice *lat = f->lat;
    tq_random_field_args a = {.L = f->layout, .rows = f->rows, .block_cb = lat->block_cb, .stream = stream};
    tq_rng_key(a.key, seed);
    for (int mu = 0; mu < 4; mu++) {
        a.B[mu] = lat->block[mu];
        a.global[mu] = lat->dims[mu];
    }
    for (int b = 0; b < lat->nblocks; b++) {
        int bc[4];
        tq_block_grid_coords(lat, b, bc);
        for (int mu = 0; mu < 4; mu++) a.origin[mu] = bc[mu] * lat->block[mu];
        const tq_task_options opt = tq_internal_block_options(lat, b);
        for (int i = 0; i < f->nparity; i++) {
            a.parity = f->parity[i];
            int ret = tq_task_random_field(&opt, &a, tq_field_handle(f, b, i));
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    }
    return TQ_SUCCESS;
}

tq_status tq_internal_field_convert(tq_field *dst, const tq_field *src)
{
    const char *who = "field precision conversion";
    if (!dst || !src || dst == src) return tq_error(TQ_ERR_INVALID_ARG, "%s: two distinct fields needed", who);
    if (src->lat != dst->lat) return tq_error(TQ_ERR_MISMATCH, "%s: the fields are on different lattices", who);
    if (src->p.kind != dst->p.kind) return tq_error(TQ_ERR_MISMATCH, "%s: the fields are of different kinds", who);
    if (src->p.recon != dst->p.recon)
        return tq_error(TQ_ERR_MISMATCH, "%s: compression %d into %d (the same compression only)", who,
                        (int)src->p.recon, (int)dst->p.recon);
    if (src->nparity != dst->nparity || src->parity[0] != dst->parity[0] || src->layout.nreal != dst->layout.nreal ||
        src->layout.stride != dst->layout.stride)
        return tq_error(TQ_ERR_MISMATCH, "%s: the fields hold different sites", who);
    const tq_lattice *lat = src->lat;
    tq_field_convert_args a = {.src = src->layout, .dst = dst->layout};
    for (int b = 0; b < lat->nblocks; b++) {
        const tq_task_options opt = tq_internal_block_options(lat, b);
        for (int i = 0; i < src->nparity; i++) {
            int ret = tq_task_field_convert(&opt, &a, tq_field_handle(src, b, i), tq_field_handle(dst, b, i));
            if (ret) return tq_error(TQ_ERR_RUNTIME, "%s: task submission failed (%d)", who, ret);
        }
    }
    return TQ_SUCCESS;
}
