/* BLAS per-site arithmetic in one real type: included twice by blas_site.h (TQ_R = double,
 * plain names; TQ_R = float, names ending in _f). No include guard on purpose. */

/* One complex component of every operand: v[i][0] + i v[i][1]. Written operands are
 * updated in place; acc receives this component's contribution to the reductions. */
TQ_HD void TQ_RF(tq_blas_pair)(int op, const TQ_R *c, TQ_R v[TQ_BLAS_MAX_OPERANDS][2], TQ_R *acc)
{
    TQ_R re, im;
    switch (op) {
    case TQ_OP_ZERO:
        v[0][0] = 0; v[0][1] = 0; break;
    case TQ_OP_COPY:
        v[1][0] = v[0][0]; v[1][1] = v[0][1]; break;
    case TQ_OP_SCALE:
        v[0][0] *= c[0]; v[0][1] *= c[0]; break;
    case TQ_OP_AXPY:
        v[1][0] += c[0] * v[0][0]; v[1][1] += c[0] * v[0][1]; break;
    case TQ_OP_XPAY:
        v[1][0] = v[0][0] + c[0] * v[1][0]; v[1][1] = v[0][1] + c[0] * v[1][1]; break;
    case TQ_OP_AXPBY:
        v[1][0] = c[0] * v[0][0] + c[1] * v[1][0]; v[1][1] = c[0] * v[0][1] + c[1] * v[1][1]; break;
    case TQ_OP_CAXPY:
        v[1][0] += c[0] * v[0][0] - c[1] * v[0][1];
        v[1][1] += c[0] * v[0][1] + c[1] * v[0][0];
        break;
    case TQ_OP_CAXPBY:
        re = c[0] * v[0][0] - c[1] * v[0][1] + c[2] * v[1][0] - c[3] * v[1][1];
        im = c[0] * v[0][1] + c[1] * v[0][0] + c[2] * v[1][1] + c[3] * v[1][0];
        v[1][0] = re; v[1][1] = im;
        break;
    case TQ_OP_NORM2:
        acc[0] += v[0][0] * v[0][0] + v[0][1] * v[0][1]; break;
    case TQ_OP_RDOT:
        acc[0] += v[0][0] * v[1][0] + v[0][1] * v[1][1]; break;
    case TQ_OP_CDOT:
        acc[0] += v[0][0] * v[1][0] + v[0][1] * v[1][1];
        acc[1] += v[0][0] * v[1][1] - v[0][1] * v[1][0];
        break;
    case TQ_OP_AXPY_NORM2:
        v[1][0] += c[0] * v[0][0]; v[1][1] += c[0] * v[0][1];
        acc[0] += v[1][0] * v[1][0] + v[1][1] * v[1][1];
        break;
    case TQ_OP_CG_UPDATE:
        v[2][0] += c[0] * v[0][0]; v[2][1] += c[0] * v[0][1];
        v[3][0] -= c[0] * v[1][0]; v[3][1] -= c[0] * v[1][1];
        acc[0] += v[3][0] * v[3][0] + v[3][1] * v[3][1];
        break;
    case TQ_OP_GCR_UPDATE:
        /* operands z Az x r; c = alpha (re, im), s */
        v[2][0] += c[0] * v[0][0] - c[1] * v[0][1];
        v[2][1] += c[0] * v[0][1] + c[1] * v[0][0];
        v[3][0] -= c[0] * v[1][0] - c[1] * v[1][1];
        v[3][1] -= c[0] * v[1][1] + c[1] * v[1][0];
        v[0][0] *= c[2]; v[0][1] *= c[2];
        v[1][0] *= c[2]; v[1][1] *= c[2];
        acc[0] += v[3][0] * v[3][0] + v[3][1] * v[3][1];
        break;
    case TQ_OP_CG_DIRECTION:
        v[1][0] = v[0][0] + c[0] * v[1][0]; v[1][1] = v[0][1] + c[0] * v[1][1]; break;
    case TQ_OP_BICGSTAB_UPDATE:
        /* operands p s t r0 x r; c = alpha (re, im), omega (re, im) */
        v[4][0] += c[0] * v[0][0] - c[1] * v[0][1] + c[2] * v[1][0] - c[3] * v[1][1];
        v[4][1] += c[0] * v[0][1] + c[1] * v[0][0] + c[2] * v[1][1] + c[3] * v[1][0];
        v[5][0] = v[1][0] - (c[2] * v[2][0] - c[3] * v[2][1]);
        v[5][1] = v[1][1] - (c[2] * v[2][1] + c[3] * v[2][0]);
        acc[0] += v[5][0] * v[5][0] + v[5][1] * v[5][1];
        acc[1] += v[3][0] * v[5][0] + v[3][1] * v[5][1];
        acc[2] += v[3][0] * v[5][1] - v[3][1] * v[5][0];
        break;
    case TQ_OP_BICGSTAB_DIRECTION:
        /* operands r v p; c = beta (re, im), omega (re, im) */
        re = v[2][0] - (c[2] * v[1][0] - c[3] * v[1][1]);
        im = v[2][1] - (c[2] * v[1][1] + c[3] * v[1][0]);
        v[2][0] = v[0][0] + c[0] * re - c[1] * im;
        v[2][1] = v[0][1] + c[0] * im + c[1] * re;
        break;
    case TQ_OP_CAXPYZ:
        v[2][0] = v[1][0] + c[0] * v[0][0] - c[1] * v[0][1];
        v[2][1] = v[1][1] + c[0] * v[0][1] + c[1] * v[0][0];
        break;
    case TQ_OP_CG_X_DIRECTION:
    case TQ_OP_CG_X_DIRECTION_SET:
        /* operands r p x; c = alpha, beta */
        if (op == TQ_OP_CG_X_DIRECTION_SET) { v[2][0] = 0; v[2][1] = 0; }
        v[2][0] += c[0] * v[1][0]; v[2][1] += c[0] * v[1][1];
        v[1][0] = v[0][0] + c[1] * v[1][0]; v[1][1] = v[0][1] + c[1] * v[1][1];
        break;
    case TQ_OP_BICGSTAB_STEP:
    case TQ_OP_BICGSTAB_STEP_SET: {
        /* operands p s t r q x; c = alpha, omega, beta, delta (re, im each) */
        if (op == TQ_OP_BICGSTAB_STEP_SET) { v[5][0] = 0; v[5][1] = 0; }
        v[5][0] += c[0] * v[0][0] - c[1] * v[0][1] + c[2] * v[1][0] - c[3] * v[1][1];
        v[5][1] += c[0] * v[0][1] + c[1] * v[0][0] + c[2] * v[1][1] + c[3] * v[1][0];
        const TQ_R dr = v[3][0] - v[1][0], di = v[3][1] - v[1][1];   /* r - s = alpha v */
        v[3][0] = v[1][0] - (c[2] * v[2][0] - c[3] * v[2][1]);
        v[3][1] = v[1][1] - (c[2] * v[2][1] + c[3] * v[2][0]);
        const TQ_R pr = v[0][0] - (c[6] * dr - c[7] * di);
        const TQ_R pi = v[0][1] - (c[6] * di + c[7] * dr);
        v[0][0] = v[3][0] + c[4] * pr - c[5] * pi;
        v[0][1] = v[3][1] + c[4] * pi + c[5] * pr;
        acc[0] += v[3][0] * v[3][0] + v[3][1] * v[3][1];
        acc[1] += v[4][0] * v[0][0] + v[4][1] * v[0][1];
        acc[2] += v[4][0] * v[0][1] - v[4][1] * v[0][0];
        break;
    }
    case TQ_OP_ACCUMULATE:
        v[1][0] += v[0][0]; v[1][1] += v[0][1];
        break;
    case TQ_OP_RELIABLE_RESIDUAL:
    case TQ_OP_RELIABLE_RESIDUAL_RHO:
    case TQ_OP_RELIABLE_RESIDUAL_RHO_QP:
        /* operands b Ax r p (r0 (q)): the true residual, the direction corrected by its
         * change; the sums from the values before they are rounded to r's and p's
         * precision (as in TQ_OP_BICGSTAB_STEP) */
        re = v[0][0] - v[1][0];
        im = v[0][1] - v[1][1];
        v[3][0] += re - v[2][0]; v[3][1] += im - v[2][1];
        v[2][0] = re; v[2][1] = im;
        acc[0] += re * re + im * im;
        if (op != TQ_OP_RELIABLE_RESIDUAL) {
            acc[1] += v[4][0] * re + v[4][1] * im;
            acc[2] += v[4][0] * im - v[4][1] * re;
        }
        if (op == TQ_OP_RELIABLE_RESIDUAL_RHO_QP) {
            acc[3] += v[5][0] * v[3][0] + v[5][1] * v[3][1];
            acc[4] += v[5][0] * v[3][1] - v[5][1] * v[3][0];
        }
        break;
    case TQ_OP_MCDOT2: case TQ_OP_MCDOT3: case TQ_OP_MCDOT4: {
        const int m = tq_blas_multi(op);
        TQ_UNROLL
        for (int i = 0; i < m; i++) {
            acc[2 * i] += v[i][0] * v[m][0] + v[i][1] * v[m][1];
            acc[2 * i + 1] += v[i][0] * v[m][1] - v[i][1] * v[m][0];
        }
        break;
    }
    case TQ_OP_MCAXPY2: case TQ_OP_MCAXPY3: case TQ_OP_MCAXPY4: {
        /* added in order i = 0, 1, ..: the sum of the single-vector caxpys */
        const int m = tq_blas_multi(op);
        TQ_UNROLL
        for (int i = 0; i < m; i++) {
            v[m][0] += c[2 * i] * v[i][0] - c[2 * i + 1] * v[i][1];
            v[m][1] += c[2 * i] * v[i][1] + c[2 * i + 1] * v[i][0];
        }
        break;
    }
    case TQ_OP_CDOT_NORM2:
        acc[0] += v[0][0] * v[1][0] + v[0][1] * v[1][1];
        acc[1] += v[0][0] * v[1][1] - v[0][1] * v[1][0];
        acc[2] += v[0][0] * v[0][0] + v[0][1] * v[0][1];
        break;
    default:
        break;
    }
}

/* Pair p (reals p, p + 1) of a loaded chunk (in[i]: operand i's vec reals): the read
 * operands' values into v, then the operation; the written operands' new values are left
 * in v. */
TQ_HD void TQ_RF(tq_blas_chunk_pair)(int op, const TQ_R *c, TQ_R in[TQ_BLAS_MAX_OPERANDS][4], int p,
                                     TQ_R v[TQ_BLAS_MAX_OPERANDS][2], TQ_R *acc)
{
    const int nop = tq_blas_noperands(op);
    const unsigned rd = tq_blas_reads(op);
    TQ_UNROLL
    for (int i = 0; i < nop; i++)
        if (rd >> i & 1u) { v[i][0] = in[i][p]; v[i][1] = in[i][p + 1]; }
    TQ_RF(tq_blas_pair)(op, c, v, acc);
}

/* Chunk cc of a site whose outputs are half precision, its values loaded into in: the
 * written operands' new values go to out (row o for the o-th written operand, from column
 * cc * vec), their largest magnitudes into m, the reductions into site_acc. */
TQ_HD void TQ_RF(tq_blas_half_chunk)(int op, const TQ_R *c, TQ_R in[TQ_BLAS_MAX_OPERANDS][4], int cc, const int vec,
                                     TQ_R *site_acc, TQ_R out[TQ_BLAS_MAX_WRITTEN][TQ_BLAS_MAX_REALS], TQ_R *m)
{
    const int nop = tq_blas_noperands(op);
    const unsigned wr = tq_blas_writes(op);
    TQ_R v[TQ_BLAS_MAX_OPERANDS][2];
    TQ_UNROLL
    for (int p = 0; p < vec && p < 4; p += 2) {   /* a chunk holds at most 4 reals (gcc cannot tell) */
        TQ_RF(tq_blas_chunk_pair)(op, c, in, p, v, site_acc);
        int o = 0;
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (wr >> i & 1u) {
                out[o][cc * vec + p] = v[i][0];
                out[o][cc * vec + p + 1] = v[i][1];
                TQ_R a0 = v[i][0] < 0 ? -v[i][0] : v[i][0], a1 = v[i][1] < 0 ? -v[i][1] : v[i][1];
                a0 = a1 > a0 ? a1 : a0;
                m[o] = a0 > m[o] ? a0 : m[o];
                o++;
            }
    }
}

/* Chunks j0 .. j0 + nch - 1 (vec reals each) of site s for an operation whose outputs are
 * half precision (every operand half, with norms): tq_blas_half_chunk on each, with m
 * starting at 0 and the reductions added to acc. The norms are the largest magnitudes over
 * the whole site, so a site split between threads combines their m before
 * tq_blas_half_store. */
TQ_HD void TQ_RF(tq_blas_half_chunks)(int op, const TQ_R *c, void *const *bufs, const tq_layout *L, int64_t s,
                                      int j0, const int nch, const int vec, double *acc,
                                      TQ_R out[TQ_BLAS_MAX_WRITTEN][TQ_BLAS_MAX_REALS], TQ_R *m)
{
    const int nop = tq_blas_noperands(op);
    const unsigned rd = tq_blas_reads(op);
    TQ_R hs[TQ_BLAS_MAX_OPERANDS], in[TQ_BLAS_MAX_OPERANDS][4];
    TQ_R site_acc[TQ_BLAS_MAX_RESULTS] = {0};
    TQ_UNROLL
    for (int i = 0; i < nop; i++) hs[i] = (rd >> i & 1u) ? TQ_RF(tq_half_scale)(bufs[i], &L[i], s) : 0;
    TQ_UNROLL
    for (int o = 0; o < TQ_BLAS_MAX_WRITTEN; o++) m[o] = 0;
    TQ_UNROLL
    for (int cc = 0; cc < nch; cc++) {
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (rd >> i & 1u) TQ_RF(tq_load_chunk)(bufs[i], &L[i], s, j0 + cc, hs[i], in[i]);
        TQ_RF(tq_blas_half_chunk)(op, c, in, cc, vec, site_acc, out, m);
    }
    TQ_UNROLL
    for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) acc[r] += (double)site_acc[r];
}

/* Stores what tq_blas_half_chunks computed, quantized against the site's norms m (the
 * largest magnitudes over the whole site); store_norm: this thread also writes the norms. */
TQ_HD void TQ_RF(tq_blas_half_store)(int op, void *const *bufs, const tq_layout *L, int64_t s, int j0, const int nch,
                                     const int vec, TQ_R out[TQ_BLAS_MAX_WRITTEN][TQ_BLAS_MAX_REALS], const TQ_R *m,
                                     int store_norm)
{
    const int nop = tq_blas_noperands(op);
    const unsigned wr = tq_blas_writes(op);
    int o = 0;
    TQ_UNROLL
    for (int i = 0; i < nop; i++)
        if (wr >> i & 1u) {
            TQ_R inv = 1;
            if (L[i].has_norm) {
                const float mf = (float)m[o];
                if (store_norm) tq_layout_norm_ptr(bufs[i], &L[i])[s] = mf;
                inv = mf > 0.0f ? (TQ_R)1 / (TQ_R)mf : 0;
            }
            TQ_UNROLL
            for (int cc = 0; cc < nch; cc++) TQ_RF(tq_store_chunk)(bufs[i], &L[i], s, j0 + cc, inv, out[o] + cc * vec);
            o++;
        }
}

/* The whole operation on site s, one storage chunk (2 or 4 reals) at a time so that GPU
 * threads issue one vector load or store per chunk. bufs[i] and L[i] are operand i's
 * buffer and layout; all operands share nreal; vec is the smallest operand vec, and mixed
 * says whether some operand has a larger one (a converting copy between double, vec 2,
 * and single or half, vec 4): then chunks of 2 are used and outputs stored per site. */
TQ_HD void TQ_RF(tq_blas_site_n)(int op, const TQ_R *c, void *const *bufs, const tq_layout *L,
                          int64_t s, double *acc, const int nreal, const int vec,
                          const int mixed)
{
    const int nop = tq_blas_noperands(op);
    const unsigned rd = tq_blas_reads(op), wr = tq_blas_writes(op);
    TQ_R hs[TQ_BLAS_MAX_OPERANDS];
    TQ_R site_acc[TQ_BLAS_MAX_RESULTS] = {0};
    int half_out = 0;
    TQ_UNROLL
    for (int i = 0; i < nop; i++)
        if (L[i].prec == 2 && (wr >> i & 1u)) half_out = 1;
    if (half_out && !mixed) {
        /* a half-precision output's norm (the site's largest magnitude) is stored with it:
         * the whole site first, then the stores (a GPU splits the site between two threads
         * instead, blas_cuda.cu) */
        TQ_R out[TQ_BLAS_MAX_WRITTEN][TQ_BLAS_MAX_REALS], m[TQ_BLAS_MAX_WRITTEN];
        TQ_RF(tq_blas_half_chunks)(op, c, bufs, L, s, 0, nreal / vec, vec, acc, out, m);
        TQ_RF(tq_blas_half_store)(op, bufs, L, s, 0, nreal / vec, vec, out, m, 1);
        return;
    }
    TQ_UNROLL
    for (int i = 0; i < nop; i++) hs[i] = (L[i].prec == 2 && (rd >> i & 1u)) ? TQ_RF(tq_half_scale)(bufs[i], &L[i], s) : 0;
    TQ_R v[TQ_BLAS_MAX_OPERANDS][2];
    TQ_R in[TQ_BLAS_MAX_OPERANDS][4], res[TQ_BLAS_MAX_OPERANDS][4] = {{0}};
    /* a converting copy (between vec 2 and vec 4 layouts, into half too) keeps the whole
     * site and stores it at the end */
    TQ_R out[TQ_BLAS_MAX_WRITTEN][TQ_BLAS_MAX_REALS];
    TQ_UNROLL
    for (int k0 = 0; k0 < nreal; k0 += vec) {
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (rd >> i & 1u) {
                if (!mixed) TQ_RF(tq_load_chunk)(bufs[i], &L[i], s, k0 / vec, hs[i], in[i]);
                else {
                    /* converting copy between vec 2 and vec 4 layouts: pick the right half */
                    TQ_R tmp[4];
                    TQ_RF(tq_load_chunk)(bufs[i], &L[i], s, k0 / L[i].vec, hs[i], tmp);
                    int off = k0 % L[i].vec;
                    in[i][0] = tmp[off]; in[i][1] = tmp[off + 1];
                }
            }
        TQ_UNROLL
        for (int p = 0; p < vec; p += 2) {
            TQ_RF(tq_blas_chunk_pair)(op, c, in, p, v, site_acc);
            for (int i = 0; i < nop; i++)
                if (wr >> i & 1u) { res[i][p] = v[i][0]; res[i][p + 1] = v[i][1]; }
        }
        int o = 0;
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (wr >> i & 1u) {
                if (L[i].prec == 2 || mixed) {
                    TQ_UNROLL
                    for (int p = 0; p < vec; p++) out[o][k0 + p] = res[i][p];
                } else {
                    TQ_RF(tq_store_chunk)(bufs[i], &L[i], s, k0 / vec, 1, res[i]);
                }
                o++;
            }
    }
    if (half_out || mixed) {
        int o = 0;
        TQ_UNROLL
        for (int i = 0; i < nop; i++)
            if (wr >> i & 1u) {
                if (L[i].prec == 2 || mixed) {
                    /* the site's norm first (half), then its chunks */
                    TQ_R inv = 1;
                    if (L[i].has_norm) {
                        TQ_R m = 0;
                        TQ_UNROLL
                        for (int k = 0; k < nreal; k++) {
                            TQ_R a = out[o][k] < 0 ? -out[o][k] : out[o][k];
                            m = a > m ? a : m;
                        }
                        float mf = (float)m;
                        tq_layout_norm_ptr(bufs[i], &L[i])[s] = mf;
                        inv = mf > 0.0f ? (TQ_R)1 / (TQ_R)mf : 0;
                    }
                    const int ov = mixed ? L[i].vec : vec;
                    TQ_UNROLL
                    for (int k0 = 0; k0 < nreal; k0 += ov) TQ_RF(tq_store_chunk)(bufs[i], &L[i], s, k0 / ov, inv, out[o] + k0);
                }
                o++;
            }
    }
    TQ_UNROLL
    for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) acc[r] += (double)site_acc[r];
}

