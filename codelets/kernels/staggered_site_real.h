/* The improved staggered hopping term per site in one real type: included twice by
 * staggered_site.h (TQ_R = double, plain names; TQ_R = float, names ending in _f; TQ_RM(fn)
 * the math function of that type). The CUDA kernels compute double fields in double,
 * single and half ones in float; the CPU codelets use double for all three. prec is an
 * argument rather than read from the layouts so that callers with a literal get the loads
 * resolved and the loops unrolled. No include guard on purpose.
 *
 * A site is the sum over mu of the four products of direction mu (tq_ks_dir_terms),
 * accumulated in the reference's order (tq_ks_accumulate): mu = 0..3, and within a
 * direction V in(x+mu), V_b in(x-mu), W in(x+3mu), W_b in(x-3mu), added, subtracted,
 * added, subtracted, starting from zero. One CPU call does all four directions; on GPUs
 * four threads compute one direction each and hand the running sum along in that order. */

/* The four links of direction mu at site s (72 reals, matrices TQ_KS_FAT .. TQ_KS_LONG_BACK
 * at 18 k): rows 3 mu .. 3 mu + 2 of the links field. */
TQ_HD void TQ_RF(tq_ks_dir_links)(const void *links, const tq_layout *Ll, int64_t cb, int64_t s, int mu, TQ_R *u)
{
    TQ_UNROLL
    for (int j = 0; j < TQ_KS_DIR_ROWS; j++)
        TQ_RF(tq_load_site)(links, Ll, (TQ_KS_DIR_ROWS * mu + j) * cb + s, u + 24 * j);
}

/* The input vector h sites from x along d->mu (h = +-1 or +-3): from the block, or with
 * faces set and across a split direction from d->lo (below) or d->hi (above). */
TQ_HD void TQ_RF(tq_ks_neighbour)(const tq_ks_dir *d, const void *in, const tq_layout *Lin, int faces, int h, TQ_R *v)
{
    int y = d->xm + h;
    if (faces && d->split && (y < 0 || y >= d->Bm)) {
        const int below = y < 0;
        const int layer = below ? -1 - y : y - d->Bm;
        TQ_RF(tq_load_site)(below ? d->lo : d->hi, &d->Lf, layer * d->fs + d->fi, v);
        return;
    }
    while (y < 0) y += d->Bm;   /* periodic inside an unsplit direction */
    while (y >= d->Bm) y -= d->Bm;
    TQ_RF(tq_load_site)(in, Lin, (int64_t)((d->lex + (tq_ks_index)(y - d->xm) * d->step) >> 1), v);
}

/* out = u in for a 3x3 complex matrix and a colour vector, each row summed from zero over
 * k = 0, 1, 2 (reference/wilson_reference.h's product order). CPUs round each product and
 * sum as written (bitwise the reference); GPUs fuse them, with explicit fused
 * multiply-adds so that the rounding is fixed by this source rather than by how the
 * compiler contracts each kernel that inlines it (interior and exterior must agree). */
TQ_HD void TQ_RF(tq_ks_mat_vec)(const TQ_R *u, const TQ_R *in, TQ_R *out)
{
    TQ_UNROLL
    for (int i = 0; i < 3; i++) {
        TQ_R re = 0, im = 0;
        TQ_UNROLL
        for (int k = 0; k < 3; k++) {
            const TQ_R ur = u[(i * 3 + k) * 2], ui = u[(i * 3 + k) * 2 + 1];
#ifdef __CUDA_ARCH__
            re = TQ_RM(fma)(ur, in[2 * k], re);
            re = TQ_RM(fma)(-ui, in[2 * k + 1], re);
            im = TQ_RM(fma)(ur, in[2 * k + 1], im);
            im = TQ_RM(fma)(ui, in[2 * k], im);
#else
            re += ur * in[2 * k] - ui * in[2 * k + 1];
            im += ur * in[2 * k + 1] + ui * in[2 * k];
#endif
        }
        out[2 * i] = re;
        out[2 * i + 1] = im;
    }
}

/* The four products of direction d->mu at site s (t[k]: matrix k, TQ_KS_FAT ..
 * TQ_KS_LONG_BACK, times the input at x + mu, x - mu, x + 3mu, x - 3mu). */
TQ_HD void TQ_RF(tq_ks_dir_terms)(const tq_ks_dir *d, const void *in, const tq_layout *Lin, const void *links,
                                  const tq_layout *Ll, int64_t cb, int64_t s, int faces, TQ_R t[4][6])
{
    TQ_R u[72];
    TQ_RF(tq_ks_dir_links)(links, Ll, cb, s, d->mu, u);
    TQ_UNROLL
    for (int k = 0; k < 4; k++) {
        const int h = k >= TQ_KS_LONG ? 3 : 1;
        TQ_R v[6];
        TQ_RF(tq_ks_neighbour)(d, in, Lin, faces, (k & 1) ? -h : h, v);
        TQ_RF(tq_ks_mat_vec)(u + 18 * k, v, t[k]);
    }
}

/* acc += t[0] - t[1] + t[2] - t[3], one term at a time in that order (the reference's). */
TQ_HD void TQ_RF(tq_ks_accumulate)(TQ_R acc[6], TQ_R t[4][6])
{
    TQ_UNROLL
    for (int k = 0; k < 4; k++)
        TQ_UNROLL
        for (int i = 0; i < 6; i++) {
            if (k & 1) acc[i] -= t[k][i];
            else acc[i] += t[k][i];
        }
}

/* Site s (coordinates x, parity a->parity) computed whole, direction after direction (the
 * CPU codelets); faces 0 where the caller knows no hop crosses (from unused). */
TQ_HD void TQ_RF(tq_ks_site)(const tq_ks_args *a, const void *in, const void *links, const void *const *from,
                             void *out, int64_t s, const int x[4], int prec, int faces)
{
    tq_layout Lin, Lout, Ll;
    tq_ks_layouts(a, prec, &Lin, &Lout, &Ll);
    TQ_R acc[6] = {0, 0, 0, 0, 0, 0};
    for (int mu = 0; mu < 4; mu++) {
        tq_ks_dir d;
        TQ_R t[4][6];
        tq_ks_dir_init(a, from, x, mu, prec, faces, &d);
        TQ_RF(tq_ks_dir_terms)(&d, in, &Lin, links, &Ll, a->cb, s, faces, t);
        TQ_RF(tq_ks_accumulate)(acc, t);
    }
    TQ_RF(tq_store_site)(out, &Lout, s, acc);
}
