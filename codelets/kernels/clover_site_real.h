/* Clover term per site in one real type (included twice by clover_site.h: TQ_R = double
 * with plain names, float with names ending in _f; single and half fields compute in
 * float). prec is an argument so callers with a compile-time value get the loads resolved.
 * No include guard on purpose. */

/* o = K_b v for one chiral block: k its 36 packed reals, v and o 12 reals (o must not alias v). */
TQ_HD void TQ_RF(tq_clover_mul_block)(const TQ_R *k, const TQ_R *v, TQ_R *o)
{
    TQ_UNROLL
    for (int i = 0; i < 6; i++) {
        o[2 * i] = k[i] * v[2 * i];
        o[2 * i + 1] = k[i] * v[2 * i + 1];
    }
    TQ_UNROLL
    for (int i = 1; i < 6; i++)
        TQ_UNROLL
        for (int j = 0; j < i; j++) {
            const TQ_R re = k[tq_clover_offdiag(i, j)], im = k[tq_clover_offdiag(i, j) + 1];
            /* o_i += A_ij v_j;  o_j += conj(A_ij) v_i */
            o[2 * i] += re * v[2 * j] - im * v[2 * j + 1];
            o[2 * i + 1] += re * v[2 * j + 1] + im * v[2 * j];
            o[2 * j] += re * v[2 * i] + im * v[2 * i + 1];
            o[2 * j + 1] += re * v[2 * i + 1] - im * v[2 * i];
        }
}

/* out = K in for one site: K the 72 packed reals, in/out 24 reals (out must not alias in). */
TQ_HD void TQ_RF(tq_clover_mul)(const TQ_R *K, const TQ_R *in, TQ_R *out)
{
    TQ_UNROLL
    for (int b = 0; b < 2; b++)
        TQ_RF(tq_clover_mul_block)(K + TQ_CLOVER_BLOCK_REALS * b, in + 12 * b, out + 12 * b);
}

/* v <- K v with K site s of clover buffer kb (layout Lk, 72 reals), loaded one chiral block
 * at a time so that a kernel holds 36 of its reals, not 72 (the fused hopping + clover
 * epilogue, kernels/dslash_wilson_site.h). */
TQ_HD void TQ_RF(tq_clover_apply_site)(const void *kb, const tq_layout *Lk, int64_t s, TQ_R *v)
{
    const TQ_R hs = Lk->prec == 2 ? TQ_RF(tq_half_scale)(kb, Lk, s) : 0;
    const int per_block = TQ_CLOVER_BLOCK_REALS / Lk->vec;   /* chunks of one block */
    TQ_UNROLL
    for (int b = 0; b < 2; b++) {
        TQ_R k[TQ_CLOVER_BLOCK_REALS], o[12];
        TQ_UNROLL
        for (int j = 0; j < per_block; j++) TQ_RF(tq_load_chunk)(kb, Lk, s, b * per_block + j, hs, k + j * Lk->vec);
        TQ_RF(tq_clover_mul_block)(k, v + 12 * b, o);
        TQ_UNROLL
        for (int i = 0; i < 12; i++) v[12 * b + i] = o[i];
    }
}

/* Site s of one clover task. With in_place, in and out are the same buffer. */
TQ_HD void TQ_RF(tq_clover_site)(const tq_clover_args *a, const void *K, const void *in,
                                 const void *x, void *out, int64_t s, int prec)
{
    tq_layout Lk = a->L_clover, Li = a->L_in, Lo = a->L_out, Lx = a->L_x;
    /* compile-time shapes where prec is one (the loads unroll, the site stays in registers) */
    Lk.prec = Li.prec = Lo.prec = Lx.prec = prec;
    Lk.nreal = TQ_CLOVER_REALS;
    Li.nreal = Lo.nreal = Lx.nreal = 24;
    Lk.vec = tq_layout_vec(prec, TQ_CLOVER_REALS);
    Li.vec = Lo.vec = Lx.vec = tq_layout_vec(prec, 24);
    TQ_R k[TQ_CLOVER_REALS], v[24], o[24];
    TQ_RF(tq_load_site)(K, &Lk, s, k);
    TQ_RF(tq_load_site)(in, &Li, s, v);
    TQ_RF(tq_clover_mul)(k, v, o);
    if (a->xpay) {
        TQ_RF(tq_load_site)(x, &Lx, s, v);
        const TQ_R c = (TQ_R)a->a;
        TQ_UNROLL
        for (int i = 0; i < 24; i++) o[i] = v[i] + c * o[i];
    }
    TQ_RF(tq_store_site)(out, &Lo, s, o);
}
