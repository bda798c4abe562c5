/* Chunk access to the field layout (field_layout.h) in one real type. Included twice by
 * field_layout.h, with TQ_R = double (plain names) and TQ_R = float (names ending in _f):
 * the arithmetic type of a kernel is chosen by the name it calls, the stored bytes are the
 * same. No include guard on purpose. */

/* Scale that turns the integer q of a site with norm `norm` into its value. */
TQ_HD TQ_R TQ_RF(tq_half_scale_of_norm)(float norm)
{
    return (TQ_R)norm / (TQ_R)TQ_HALF_SCALE;
}

/* Scale that turns the integer q of site s into its value (half precision only). */
TQ_HD TQ_R TQ_RF(tq_half_scale)(const void *buf, const tq_layout *L, int64_t s)
{
    return L->has_norm ? TQ_RF(tq_half_scale_of_norm)(tq_layout_norm_cptr(buf, L)[s])
                       : (TQ_R)1.0 / (TQ_R)TQ_HALF_SCALE;
}

#ifdef __CUDACC__
/* The 4 values of a half-precision chunk from its two stored words (a GPU thread that
 * loaded the words itself, or staged them in shared memory: blas_cuda.cu). */
__device__ __forceinline__ void TQ_RF(tq_half_chunk4_values)(uint2 w, TQ_R half_scale, TQ_R *v)
{
    float f[4];
    tq_half_word_unpack(w.x, f, f + 1);
    tq_half_word_unpack(w.y, f + 2, f + 3);
    TQ_UNROLL
    for (int c = 0; c < 4; c++) v[c] = (TQ_R)f[c] * half_scale;
}
#endif

/* Chunk j of site s (reals j*vec .. j*vec+vec-1). One vector load per chunk on GPUs
 * (double2, float4/float2, 8- or 4-byte words of 16-bit values): each thread reads whole 8- or 16-byte words
 * and a warp a contiguous segment. half_scale from tq_half_scale() (ignored otherwise). */
TQ_HD void TQ_RF(tq_load_chunk)(const void *buf, const tq_layout *L, int64_t s, int j,
                                TQ_R half_scale, TQ_R *v)
{
    const int64_t i = (int64_t)j * L->stride + s;   /* in units of vectors */
#ifdef __CUDACC__
    if (L->prec == 8) {
        double2 d = ((const double2 *)buf)[i];
        v[0] = (TQ_R)d.x; v[1] = (TQ_R)d.y;
    } else if (L->prec == 4) {
        if (L->vec == 4) { float4 f = ((const float4 *)buf)[i]; v[0] = f.x; v[1] = f.y; v[2] = f.z; v[3] = f.w; }
        else { float2 f = ((const float2 *)buf)[i]; v[0] = f.x; v[1] = f.y; }
    } else {
#ifdef __CUDA_ARCH__
        if (L->vec == 4) {
            TQ_RF(tq_half_chunk4_values)(((const uint2 *)buf)[i], half_scale, v);
        } else {
            float f[2];
            tq_half_word_unpack(((const unsigned *)buf)[i], f, f + 1);
            v[0] = (TQ_R)f[0] * half_scale;
            v[1] = (TQ_R)f[1] * half_scale;
        }
#else
        const uint16_t *u = (const uint16_t *)buf + i * L->vec;
        TQ_UNROLL
        for (int c = 0; c < L->vec; c++) v[c] = (TQ_R)((int)u[c] - TQ_HALF_OFFSET) * half_scale;
#endif
    }
#else
    const int64_t o = i * L->vec;
    TQ_UNROLL
    for (int c = 0; c < L->vec; c++) {
        if (L->prec == 8) v[c] = (TQ_R)((const double *)buf)[o + c];
        else if (L->prec == 4) v[c] = (TQ_R)((const float *)buf)[o + c];
        else v[c] = (TQ_R)((int)((const uint16_t *)buf)[o + c] - TQ_HALF_OFFSET) * half_scale;
    }
#endif
}

/* v * 32767 clamped to [-32767, 32767]. */
TQ_HD TQ_R TQ_RF(tq_half_scaled)(TQ_R v)
{
    TQ_R q = v * (TQ_R)TQ_HALF_SCALE;
    if (q > (TQ_R)TQ_HALF_SCALE) q = (TQ_R)TQ_HALF_SCALE;
    if (q < -(TQ_R)TQ_HALF_SCALE) q = -(TQ_R)TQ_HALF_SCALE;
    return q;
}

/* Nearest int16, ties to even, as the GPU store (field_layout.h) rounds: adding and
 * subtracting 1.5 * 2^(mantissa bits) rounds to an integer in the default rounding mode
 * (plain C arithmetic; the build never enables value-changing float optimisations). */
TQ_HD int16_t TQ_RF(tq_half_quantize)(TQ_R v)
{
    const TQ_R magic = sizeof(TQ_R) == 8 ? (TQ_R)6755399441055744.0 : (TQ_R)12582912.0;   /* 1.5 * 2^52, 1.5 * 2^23 */
    const TQ_R q = TQ_RF(tq_half_scaled)(v);
    return (int16_t)((q + magic) - magic);
}

/* Stores chunk j of site s; for half precision, inv_norm multiplies before quantizing
 * (1 / site norm, or 1 for fields without a norm). */
TQ_HD void TQ_RF(tq_store_chunk)(void *buf, const tq_layout *L, int64_t s, int j, TQ_R inv_norm,
                                 const TQ_R *v)
{
    const int64_t i = (int64_t)j * L->stride + s;
#ifdef __CUDACC__
    if (L->prec == 8) {
        ((double2 *)buf)[i] = make_double2((double)v[0], (double)v[1]);
    } else if (L->prec == 4) {
        if (L->vec == 4) ((float4 *)buf)[i] = make_float4((float)v[0], (float)v[1], (float)v[2], (float)v[3]);
        else ((float2 *)buf)[i] = make_float2((float)v[0], (float)v[1]);
    } else {
#ifdef __CUDA_ARCH__
        float q[4];
        TQ_UNROLL
        for (int c = 0; c < L->vec; c++) q[c] = (float)TQ_RF(tq_half_scaled)(v[c] * inv_norm);
        if (L->vec == 4)
            ((uint2 *)buf)[i] = make_uint2(tq_half_word_pack(q[0], q[1]), tq_half_word_pack(q[2], q[3]));
        else
            ((unsigned *)buf)[i] = tq_half_word_pack(q[0], q[1]);
#else
        uint16_t *u = (uint16_t *)buf + i * L->vec;
        TQ_UNROLL
        for (int c = 0; c < L->vec; c++) u[c] = (uint16_t)(TQ_RF(tq_half_quantize)(v[c] * inv_norm) + TQ_HALF_OFFSET);
#endif
    }
#else
    const int64_t o = i * L->vec;
    TQ_UNROLL
    for (int c = 0; c < L->vec; c++) {
        if (L->prec == 8) ((double *)buf)[o + c] = (double)v[c];
        else if (L->prec == 4) ((float *)buf)[o + c] = (float)v[c];
        else ((uint16_t *)buf)[o + c] = (uint16_t)(TQ_RF(tq_half_quantize)(v[c] * inv_norm) + TQ_HALF_OFFSET);
    }
#endif
}

/* For a half-precision site about to be stored: records its norm (max |real|) and returns
 * the factor to quantize with. Quantizing against the stored float norm keeps
 * load(store(v)) consistent. */
TQ_HD TQ_R TQ_RF(tq_half_prepare_site)(void *buf, const tq_layout *L, int64_t s, const TQ_R *v)
{
    if (!L->has_norm) return 1;
    TQ_R m = 0;
    TQ_UNROLL
    for (int k = 0; k < L->nreal; k++) {
        TQ_R a = v[k] < 0 ? -v[k] : v[k];
        m = a > m ? a : m;
    }
    float mf = (float)m;
    tq_layout_norm_ptr(buf, L)[s] = mf;
    return mf > 0.0f ? (TQ_R)1 / (TQ_R)mf : 0;
}

/* Reals lo .. hi - 1 of site s into v[0 .. hi - lo - 1] (lo and hi multiples of L->vec):
 * part of a site, for kernels that give parts of a site to different threads. */
TQ_HD void TQ_RF(tq_load_reals)(const void *buf, const tq_layout *L, int64_t s, int lo, int hi, TQ_R *v)
{
    TQ_R hs = L->prec == 2 ? TQ_RF(tq_half_scale)(buf, L, s) : 0;
    for (int j = lo / L->vec; j < hi / L->vec; j++) TQ_RF(tq_load_chunk)(buf, L, s, j, hs, v + j * L->vec - lo);
}

/* One complex (reals 2 e, 2 e + 1) of site s from a double or single buffer. */
TQ_HD void TQ_RF(tq_load_complex)(const void *buf, const tq_layout *L, int64_t s, int e, TQ_R *re, TQ_R *im)
{
    const int64_t k = tq_layout_index(L, s, 2 * e);   /* 2 e and 2 e + 1 share a short vector */
    if (L->prec == 8) *re = (TQ_R)((const double *)buf)[k], *im = (TQ_R)((const double *)buf)[k + 1];
    else *re = (TQ_R)((const float *)buf)[k], *im = (TQ_R)((const float *)buf)[k + 1];
}

/* One complex (reals 2 e, 2 e + 1) of site s, for buffers without a per-site norm (double,
 * single): a half-precision site needs all its values to be stored (its norm). */
TQ_HD void TQ_RF(tq_store_complex)(void *buf, const tq_layout *L, int64_t s, int e, TQ_R re, TQ_R im)
{
    const int64_t k = tq_layout_index(L, s, 2 * e);   /* 2 e and 2 e + 1 share a short vector */
    if (L->prec == 8) ((double *)buf)[k] = (double)re, ((double *)buf)[k + 1] = (double)im;
    else ((float *)buf)[k] = (float)re, ((float *)buf)[k + 1] = (float)im;
}

/* Whole-site load/store (import/export, and kernels with site-level work). */
TQ_HD void TQ_RF(tq_load_site)(const void *buf, const tq_layout *L, int64_t s, TQ_R *v)
{
    TQ_R hs = L->prec == 2 ? TQ_RF(tq_half_scale)(buf, L, s) : 0;
    TQ_UNROLL
    for (int j = 0; j < L->nreal / L->vec; j++) TQ_RF(tq_load_chunk)(buf, L, s, j, hs, v + j * L->vec);
}

TQ_HD void TQ_RF(tq_store_site)(void *buf, const tq_layout *L, int64_t s, const TQ_R *v)
{
    TQ_R inv = L->prec == 2 ? TQ_RF(tq_half_prepare_site)(buf, L, s, v) : 1;
    TQ_UNROLL
    for (int j = 0; j < L->nreal / L->vec; j++) TQ_RF(tq_store_chunk)(buf, L, s, j, inv, v + j * L->vec);
}
