/* Stand-alone variants of BiCGstab's x/r/p pass (6 half-precision color-spinor fields
 * read, 3 written, 32^4 / 2 sites) outside StarPU and the library: the thread mapping, the
 * register cap, loads into registers or staged in shared memory with cp.async, and the
 * same pass split in two; next to 9 plain streams and the device-to-device copy rate.
 * The evidence behind staged_sites (codelets/blas_cuda.cu); its figures are in
 * doc/performance.md ("BLAS and reductions"). The per-site arithmetic is the library's
 * (kernels/blas_site.h).
 *
 * Build here (nvcc; no GPU needed) and run on the GPU machine:
 *   nvcc -O3 -arch=sm_90 -std=c++17 -I codelets -I build -diag-suppress 128 \
 *        -o bench/blas_stage_variants bench/blas_stage_variants.cu
 *   ./bench/blas_stage_variants */
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <cuda_runtime.h>
#include "kernels/blas_site.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

constexpr int NREAL = 24, VEC = 4, NCH = NREAL / VEC / 2;   /* chunks per thread */
struct bufs6 { void *p[6]; };
struct coefs { float c[8]; };

/* The step's ops as functors over one complex pair: full step, x part, r/p part. */
struct op_step {
    static constexpr int nop = 6; static constexpr unsigned rd = 63u, wr = 41u; static constexpr int nres = 3;
    __device__ static void pair(const float *c, float v[6][2], float *acc) { tq_blas_pair_f(TQ_OP_BICGSTAB_STEP, c, v, acc); }
};
struct op_x {   /* operands p s x (0 1 5 of the step) : x += alpha p + omega s */
    static constexpr int nop = 3; static constexpr unsigned rd = 7u, wr = 4u; static constexpr int nres = 0;
    __device__ static void pair(const float *c, float v[6][2], float *) {
        v[2][0] += c[0] * v[0][0] - c[1] * v[0][1] + c[2] * v[1][0] - c[3] * v[1][1];
        v[2][1] += c[0] * v[0][1] + c[1] * v[0][0] + c[2] * v[1][1] + c[3] * v[1][0];
    }
};
struct op_rp {  /* operands p s t r q */
    static constexpr int nop = 5; static constexpr unsigned rd = 31u, wr = 9u; static constexpr int nres = 3;
    __device__ static void pair(const float *c, float v[6][2], float *acc) {
        const float dr = v[3][0] - v[1][0], di = v[3][1] - v[1][1];
        v[3][0] = v[1][0] - (c[2] * v[2][0] - c[3] * v[2][1]);
        v[3][1] = v[1][1] - (c[2] * v[2][1] + c[3] * v[2][0]);
        const float pr = v[0][0] - (c[6] * dr - c[7] * di);
        const float pi = v[0][1] - (c[6] * di + c[7] * dr);
        v[0][0] = v[3][0] + c[4] * pr - c[5] * pi;
        v[0][1] = v[3][1] + c[4] * pi + c[5] * pr;
        acc[0] += v[3][0] * v[3][0] + v[3][1] * v[3][1];
        acc[1] += v[4][0] * v[0][0] + v[4][1] * v[0][1];
        acc[2] += v[4][0] * v[0][1] - v[4][1] * v[0][0];
    }
};

__device__ __forceinline__ float unb(unsigned w, int hi) { float a, b; tq_half_word_unpack(w, &a, &b); return hi ? b : a; }

/* The block's 3 sums in a shared-memory tree (as the library's reduce_kernel), to scratch. */
__device__ __forceinline__ void block_sum3(const double *acc, double *scratch)
{
    __shared__ double sh[3][256];
    for (int r = 0; r < 3; r++) sh[r][threadIdx.x] = acc[r];
    __syncthreads();
    for (int w = 128; w > 0; w >>= 1) {
        if (threadIdx.x < w)
            for (int r = 0; r < 3; r++) sh[r][threadIdx.x] += sh[r][threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0)
        for (int r = 0; r < 3; r++) scratch[blockIdx.x * 3 + r] = sh[r][0];
}

/* A chunk's 4 values from its two stored words. */
__device__ __forceinline__ void chunk_values(uint2 ww, float hs, float *v)
{
    tq_half_word_unpack(ww.x, &v[0], &v[1]);
    tq_half_word_unpack(ww.y, &v[2], &v[3]);
#pragma unroll
    for (int k = 0; k < 4; k++) v[k] *= hs;
}

/* Chunk cc of every read operand (in): the op pair by pair, the outputs to out (or to the
 * shared so, SMO), their magnitudes to m. */
template <class F, int SMO>
__device__ __forceinline__ void chunk_op(const float *c, float in[6][4], int cc, float out[3][NCH * VEC], float *m,
                                         float *sacc, float (*so)[NCH * VEC][256])
{
#pragma unroll
    for (int p = 0; p < VEC; p += 2) {
        float v[6][2];
#pragma unroll
        for (int i = 0; i < F::nop; i++) if (F::rd >> i & 1u) { v[i][0] = in[i][p]; v[i][1] = in[i][p + 1]; }
        F::pair(c, v, sacc);
        int o = 0;
#pragma unroll
        for (int i = 0; i < F::nop; i++)
            if (F::wr >> i & 1u) {
                if (SMO) { so[o][cc * VEC + p][threadIdx.x] = v[i][0]; so[o][cc * VEC + p + 1][threadIdx.x] = v[i][1]; }
                else { out[o][cc * VEC + p] = v[i][0]; out[o][cc * VEC + p + 1] = v[i][1]; }
                m[o] = fmaxf(m[o], fmaxf(fabsf(v[i][0]), fabsf(v[i][1])));
                o++;
            }
    }
}

/* The outputs of site s quantized against the site norms m; half h == 0 writes the norms. */
template <class F, int SMO>
__device__ __forceinline__ void store_outputs(const bufs6 &b, int64_t n, int64_t s, int h, float out[3][NCH * VEC],
                                              const float *m, float (*so)[NCH * VEC][256])
{
    int o = 0;
#pragma unroll
    for (int i = 0; i < F::nop; i++)
        if (F::wr >> i & 1u) {
            const float inv = m[o] > 0.0f ? 1.0f / m[o] : 0.0f;
            if (h == 0) ((float *)((char *)b.p[i] + n * NREAL * 2))[s] = m[o];
#pragma unroll
            for (int cc = 0; cc < NCH; cc++) {
                float q[4];
#pragma unroll
                for (int k = 0; k < 4; k++) q[k] = tq_half_scaled_f((SMO ? so[o][cc * VEC + k][threadIdx.x] : out[o][cc * VEC + k]) * inv);
                ((uint2 *)b.p[i])[(int64_t)(h * NCH + cc) * n + s] = make_uint2(tq_half_word_pack(q[0], q[1]), tq_half_word_pack(q[2], q[3]));
            }
            o++;
        }
}

/* PF: 0 = loads chunk by chunk (the library), 1 = every load of the iteration first. */
template <class F, int PF, int SMO>
__device__ __forceinline__ void half_iter(const float *c, const bufs6 &b, int64_t n, int64_t s, int h, double *acc,
                                          float (*so)[NCH * VEC][256])
{
    constexpr int nop = F::nop;
    const int active = s < n;
    float hs[6] = {0, 0, 0, 0, 0, 0};
    uint2 w[NCH][6];
    float out[3][NCH * VEC], m[3] = {0, 0, 0};
    float sacc[3] = {0, 0, 0};
    if (active) {
#pragma unroll
        for (int i = 0; i < nop; i++) if (F::rd >> i & 1u) hs[i] = ((const float *)((const char *)b.p[i] + n * NREAL * 2))[s] / 32767.0f;
        if (PF) {
#pragma unroll
            for (int cc = 0; cc < NCH; cc++)
#pragma unroll
                for (int i = 0; i < nop; i++) if (F::rd >> i & 1u) w[cc][i] = ((const uint2 *)b.p[i])[(int64_t)(h * NCH + cc) * n + s];
        }
#pragma unroll
        for (int cc = 0; cc < NCH; cc++) {
            float in[6][4];
#pragma unroll
            for (int i = 0; i < nop; i++)
                if (F::rd >> i & 1u) chunk_values(PF ? w[cc][i] : ((const uint2 *)b.p[i])[(int64_t)(h * NCH + cc) * n + s], hs[i], in[i]);
            chunk_op<F, SMO>(c, in, cc, out, m, sacc, so);
        }
    }
#pragma unroll
    for (int o = 0; o < 3; o++) m[o] = fmaxf(m[o], __shfl_xor_sync(0xffffffffu, m[o], 16));
    if (!active) return;
#pragma unroll
    for (int r = 0; r < 3; r++) acc[r] += (double)sacc[r];
    store_outputs<F, SMO>(b, n, s, h, out, m, so);
}

template <class F, int PF, int MINB, int SMO>
__global__ void __launch_bounds__(256, MINB) kern(coefs cf, bufs6 b, int64_t n, double *scratch)
{
    extern __shared__ float dyn[];
    float (*so)[NCH * VEC][256] = (float (*)[NCH * VEC][256])dyn;
    double acc[3] = {0, 0, 0};
    const int lane = threadIdx.x & 31, h = lane >> 4;
    const int64_t step = (int64_t)gridDim.x * blockDim.x / 2;
    for (int64_t base = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x - lane) / 2; base < n; base += step)
        half_iter<F, PF, SMO>(cf.c, b, n, base + (lane & 15), h, acc, so);
    if (F::nres == 0) return;
    block_sum3(acc, scratch);
}

/* Loads through cp.async into shared memory, two stages: the next iteration's loads are in
 * flight while this one computes. */
#include <cuda_pipeline.h>
template <class F, int MINB>
__global__ void __launch_bounds__(256, MINB) kern_async(coefs cf, bufs6 b, int64_t n, double *scratch)
{
    constexpr int nop = F::nop;
    extern __shared__ float dyn[];
    uint2 (*raw)[nop][NCH][256] = (uint2 (*)[nop][NCH][256])dyn;                       /* [2] stages */
    float (*nrm)[nop][256] = (float (*)[nop][256])(dyn + 2 * nop * NCH * 256 * 2);      /* [2] stages */
    double acc[3] = {0, 0, 0};
    const int lane = threadIdx.x & 31, h = lane >> 4, t = threadIdx.x;
    const int64_t step = (int64_t)gridDim.x * blockDim.x / 2;
    const float *c = cf.c;
    int64_t base = (blockIdx.x * (int64_t)blockDim.x + threadIdx.x - lane) / 2;
    auto issue = [&](int64_t bs, int st) {
        const int64_t s = bs + (lane & 15);
        if (bs < n && s < n) {
#pragma unroll
            for (int i = 0; i < nop; i++)
                if (F::rd >> i & 1u) {
                    __pipeline_memcpy_async(&nrm[st][i][t], (const float *)((const char *)b.p[i] + n * NREAL * 2) + s, 4);
#pragma unroll
                    for (int cc = 0; cc < NCH; cc++)
                        __pipeline_memcpy_async(&raw[st][i][cc][t], (const uint2 *)b.p[i] + (int64_t)(h * NCH + cc) * n + s, 8);
                }
        }
        __pipeline_commit();
    };
    issue(base, 0);
    int st = 0;
    for (; base < n; base += step, st ^= 1) {
        issue(base + step, st ^ 1);
        __pipeline_wait_prior(1);
        const int64_t s = base + (lane & 15);
        const int active = s < n;
        float out[3][NCH * VEC], m[3] = {0, 0, 0}, sacc[3] = {0, 0, 0};
        if (active) {
            float hs[6];
#pragma unroll
            for (int i = 0; i < nop; i++) hs[i] = (F::rd >> i & 1u) ? nrm[st][i][t] / 32767.0f : 0.0f;
#pragma unroll
            for (int cc = 0; cc < NCH; cc++) {
                float in[6][4];
#pragma unroll
                for (int i = 0; i < nop; i++)
                    if (F::rd >> i & 1u) chunk_values(raw[st][i][cc][t], hs[i], in[i]);
                chunk_op<F, 0>(c, in, cc, out, m, sacc, NULL);
            }
        }
#pragma unroll
        for (int o = 0; o < 3; o++) m[o] = fmaxf(m[o], __shfl_xor_sync(0xffffffffu, m[o], 16));
        if (active) {
#pragma unroll
            for (int r = 0; r < 3; r++) acc[r] += (double)sacc[r];
            store_outputs<F, 0>(b, n, s, h, out, m, NULL);
        }
    }
    __pipeline_wait_prior(0);
    if (F::nres == 0) return;
    block_sum3(acc, scratch);
}

/* The library's single/double path (one thread per site, tq_blas_site_n). */
template <int PREC>
__global__ void __launch_bounds__(256, 1) kern_lib(bufs6 b, int64_t n, double *scratch, coefs cf)
{
    double acc[3] = {0, 0, 0};
    double c[8];
    for (int k = 0; k < 8; k++) c[k] = cf.c[k];
    tq_layout L[6];
    for (int i = 0; i < 6; i++) { L[i].prec = PREC; L[i].nreal = 24; L[i].vec = tq_layout_vec(PREC, 24); L[i].has_norm = 0; L[i].stride = n; }
    for (int64_t s = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; s < n; s += (int64_t)gridDim.x * blockDim.x)
        tq_blas_site_n(TQ_OP_BICGSTAB_STEP, c, b.p, L, s, acc, 24, tq_layout_vec(PREC, 24), 0);
    block_sum3(acc, scratch);
}

template <class F, int MINB>
static void run_async(const char *name, coefs cf, bufs6 b, int64_t n, double *scratch, double bytes, double copy_gbs)
{
    const size_t smem = 2 * (size_t)F::nop * (NCH * 256 * 8 + 256 * 4);
    CK(cudaFuncSetAttribute(kern_async<F, MINB>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern_async<F, MINB>, 256, smem);
    cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, kern_async<F, MINB>);
    int grid = per_sm * 132;
    float us = timeit_sm(kern_async<F, MINB>, grid, smem, 40, cf, b, n, scratch);
    printf("%-34s regs %3d blocks/SM %d grid %5d  %7.1f us  %6.0f GB/s  %5.1f %% of copy (smem %zu)\n", name, fa.numRegs, per_sm,
           grid, us, bytes / us * 1e-3, 100.0 * bytes / us * 1e-3 / copy_gbs, smem);
}

__global__ void fill(uint16_t *u, float *norm, int64_t nq, int64_t n, unsigned seed)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < nq; i += (int64_t)gridDim.x * blockDim.x) {
        unsigned x = (unsigned)i * 2654435761u ^ seed; x ^= x >> 13; x *= 0x5bd1e995u; x ^= x >> 15;
        u[i] = (uint16_t)(32768 + (int)(x % 65535u) - 32767);
        if (i < n) norm[i] = 1.0f + (x & 255) / 256.0f;
    }
}

__global__ void copy4(const float4 *a, float4 *b, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) b[i] = a[i];
}

template <class K, class... A>
static float timeit_sm(K k, int grid, size_t smem, int reps, A... args)
{
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    float best = 1e30f;
    for (int t = 0; t < 5; t++) {
        cudaEventRecord(e0);
        for (int r = 0; r < reps; r++) k<<<grid, 256, smem>>>(args...);
        cudaEventRecord(e1); cudaEventSynchronize(e1);
        float ms; cudaEventElapsedTime(&ms, e0, e1);
        if (ms / reps < best) best = ms / reps;
    }
    CK(cudaGetLastError());
    return best * 1000.0f;
}

/* Pure streams: 6 arrays read, 3 written, flat, element type T (no arithmetic). */
template <class T>
__global__ void streams(bufs6 b, int64_t ne)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < ne; i += (int64_t)gridDim.x * blockDim.x) {
        T a0 = ((const T *)b.p[0])[i], a1 = ((const T *)b.p[1])[i], a2 = ((const T *)b.p[2])[i];
        T a3 = ((const T *)b.p[3])[i], a4 = ((const T *)b.p[4])[i], a5 = ((const T *)b.p[5])[i];
        a0.x ^= a1.x ^ a2.x; a3.x ^= a4.x; a5.x ^= a1.y;
        ((T *)b.p[0])[i] = a0; ((T *)b.p[3])[i] = a3; ((T *)b.p[5])[i] = a5;
    }
}

template <class K, class... A>
static float timeit(K k, int grid, int reps, A... args)
{ return timeit_sm(k, grid, 0, reps, args...); }

template <class F, int PF, int MINB, int SMO = 0>
static void run(const char *name, coefs cf, bufs6 b, int64_t n, double *scratch, int fullgrid, double bytes, double copy_gbs)
{
    int per_sm = 0, sms = 0, dev = 0;
    const size_t smem = SMO ? 3 * NCH * VEC * 256 * sizeof(float) : 0;
    if (SMO) CK(cudaFuncSetAttribute(kern<F, PF, MINB, SMO>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kern<F, PF, MINB, SMO>, 256, smem);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev);
    cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, kern<F, PF, MINB, SMO>);
    int grid = fullgrid ? (int)((2 * n + 255) / 256) : per_sm * sms;
    float us = timeit_sm(kern<F, PF, MINB, SMO>, grid, smem, 40, cf, b, n, scratch);
    printf("%-34s regs %3d blocks/SM %d grid %5d  %7.1f us  %6.0f GB/s  %5.1f %% of copy\n", name, fa.numRegs, per_sm,
           grid, us, bytes / us * 1e-3, 100.0 * bytes / us * 1e-3 / copy_gbs);
}

int main()
{
    const int64_t n = 32L * 32 * 32 * 32 / 2;
    const int64_t fbytes = n * NREAL * 2 + n * 4;
    bufs6 b;
    for (int i = 0; i < 6; i++) {
        CK(cudaMalloc(&b.p[i], fbytes));
        fill<<<1024, 256>>>((uint16_t *)b.p[i], (float *)((char *)b.p[i] + n * NREAL * 2), n * NREAL, n, 17u * i + 3u);
    }
    double *scratch; CK(cudaMalloc(&scratch, 8192 * 3 * sizeof(double)));
    coefs cf = {{0.3f, 0.1f, 0.2f, -0.05f, 0.4f, 0.02f, 0.5f, 0.01f}};
    const int64_t cn = 256L << 20;   /* 1 GiB copy */
    float4 *ca, *cb; CK(cudaMalloc(&ca, cn * 4)); CK(cudaMalloc(&cb, cn * 4));
    cudaMemset(ca, 1, cn * 4);
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    float best = 1e30f;
    for (int t = 0; t < 5; t++) {
        cudaEventRecord(e0); cudaMemcpyAsync(cb, ca, cn * 4, cudaMemcpyDeviceToDevice); cudaEventRecord(e1);
        cudaEventSynchronize(e1); float ms; cudaEventElapsedTime(&ms, e0, e1); if (ms < best) best = ms;
    }
    const double copy_gbs = 2.0 * cn * 4 / (best * 1e-3) * 1e-9;
    float k_us = timeit(copy4, 132 * 8, 5, (const float4 *)ca, cb, cn / 4);
    printf("cudaMemcpy D2D %.0f GB/s; float4 copy kernel %.0f GB/s\n", copy_gbs, 2.0 * cn * 4 / (k_us * 1e-6) * 1e-9);
    /* a 32^4 half field pair copy, for the size effect */
    float s_us = timeit(copy4, (int)((fbytes / 16 + 255) / 256), 40, (const float4 *)b.p[0], (float4 *)b.p[1], fbytes / 16);
    printf("one half field copy (%.1f MB each way): %.1f us, %.0f GB/s\n", fbytes * 1e-6, s_us, 2.0 * fbytes / s_us * 1e-3);
    {
        const double sb = 9.0 * (fbytes / 16 * 16);
        for (int g = 1; g <= 8; g *= 2) {
            float u16 = timeit(streams<uint4>, 132 * g, 40, b, fbytes / 16);
            float u8 = timeit(streams<uint2>, 132 * g, 40, b, fbytes / 8);
            float u4 = timeit(streams<uint2>, (int)((fbytes / 8 + 255) / 256), 40, b, fbytes / 8);
            printf("9 streams, grid %d blocks/SM: 16-byte %.1f us (%.0f GB/s), 8-byte %.1f us (%.0f GB/s); 8-byte full grid %.1f us\n",
                   8 * g / 8, u16, sb / u16 * 1e-3, u8, sb / u8 * 1e-3, u4);
        }
        float f16 = timeit(streams<uint4>, (int)((fbytes / 16 + 255) / 256), 40, b, fbytes / 16);
        printf("9 streams, 16-byte full grid %.1f us (%.0f GB/s)\n", f16, sb / f16 * 1e-3);
    }
    const double step_bytes = 9.0 * fbytes, x_bytes = 4.0 * fbytes, rp_bytes = 7.0 * fbytes;
    bufs6 bx = {{b.p[0], b.p[1], b.p[5], 0, 0, 0}};
    run_async<op_step, 1>("step, cp.async 2 stages", cf, b, n, scratch, step_bytes, copy_gbs);
    run_async<op_step, 2>("step, cp.async 2 stages (2/SM)", cf, b, n, scratch, step_bytes, copy_gbs);
    run_async<op_rp, 2>("r/p, cp.async 2 stages", cf, b, n, scratch, rp_bytes, copy_gbs);
    run_async<op_x, 2>("x, cp.async 2 stages", cf, bx, n, scratch, x_bytes, copy_gbs);
    {
        bufs6 bs;
        for (int i = 0; i < 6; i++) { CK(cudaMalloc(&bs.p[i], n * 24 * 8)); cudaMemset(bs.p[i], 0, n * 24 * 8); }
        int sms = 132;
        for (int g = 1; g <= 4; g *= 2) {
            float u4 = timeit(kern_lib<4>, sms * g, 20, bs, n, scratch, cf);
            float u8 = timeit(kern_lib<8>, sms * g, 20, bs, n, scratch, cf);
            printf("library step grid %d/SM: single %.1f us (%.0f GB/s), double %.1f us (%.0f GB/s)\n", g, u4, 9.0 * n * 96 / u4 * 1e-3, u8, 9.0 * n * 192 / u8 * 1e-3);
        }
        cudaFuncAttributes fa; cudaFuncGetAttributes(&fa, kern_lib<4>); printf("single regs %d\n", fa.numRegs);
        cudaFuncGetAttributes(&fa, kern_lib<8>); printf("double regs %d\n", fa.numRegs);
    }
    run<op_step, 0, 3>("step, library (3/SM, one wave)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 0, 3>("step, library, full grid", cf, b, n, scratch, 1, step_bytes, copy_gbs);
    run<op_step, 1, 3>("step, prefetch (3/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 1, 3>("step, prefetch, full grid", cf, b, n, scratch, 1, step_bytes, copy_gbs);
    run<op_step, 1, 2>("step, prefetch (2/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 1, 2>("step, prefetch (2/SM), full grid", cf, b, n, scratch, 1, step_bytes, copy_gbs);
    run<op_step, 0, 4, 1>("step, smem out (4/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 0, 5, 1>("step, smem out (5/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 0, 6, 1>("step, smem out (6/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 1, 4, 1>("step, smem out prefetch (4/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 1, 5, 1>("step, smem out prefetch (5/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 0, 5, 1>("step, smem out (5/SM) full grid", cf, b, n, scratch, 1, step_bytes, copy_gbs);
    run<op_step, 0, 4>("step, library (4/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_step, 1, 4>("step, prefetch (4/SM)", cf, b, n, scratch, 0, step_bytes, copy_gbs);
    run<op_x, 0, 3>("x part (3 read 1 written), full", cf, bx, n, scratch, 1, x_bytes, copy_gbs);
    run<op_x, 1, 4>("x part prefetch 4/SM, full", cf, bx, n, scratch, 1, x_bytes, copy_gbs);
    run<op_rp, 0, 3>("r/p part (5 read 2 written)", cf, b, n, scratch, 0, rp_bytes, copy_gbs);
    run<op_rp, 1, 3>("r/p part prefetch", cf, b, n, scratch, 0, rp_bytes, copy_gbs);
    run<op_rp, 1, 3>("r/p part prefetch full", cf, b, n, scratch, 1, rp_bytes, copy_gbs);
    return 0;
}
