/* Wilson hopping term per site in one real type: included twice by wilson_site.h (TQ_R =
 * double, plain names; TQ_R = float, names ending in _f; TQ_RM(fn) the math function of
 * that type). Double-precision fields compute in double, single and half ones in float.
 * prec and recon are arguments rather than read from the layouts so that callers with
 * compile-time values (the CUDA kernels, the CPU switch) get the loads resolved and the
 * loops unrolled. No include guard on purpose. */

/* (re, im) times i^code. */
TQ_HD void TQ_RF(tq_mul_i)(int code, TQ_R re, TQ_R im, TQ_R *ore, TQ_R *oim)
{
    switch (code & 3) {
    case 0: *ore = re; *oim = im; break;
    case 1: *ore = -im; *oim = re; break;
    case 2: *ore = -re; *oim = -im; break;
    default: *ore = im; *oim = -re; break;
    }
}

/* h = spin components 0, 1 of (1 + sign gamma_mu) psi (12 reals: (s * 3 + c) * 2 + re/im). */
TQ_HD void TQ_RF(tq_spin_project)(int mu, int sign, const TQ_R *psi, TQ_R *h)
{
    TQ_UNROLL
    for (int s = 0; s < 2; s++) {
        const int col = tq_gamma_col(mu, s), code = tq_gamma_code(mu, s) + (sign < 0 ? 2 : 0);
        TQ_UNROLL
        for (int c = 0; c < 3; c++) {
            TQ_R re, im;
            TQ_RF(tq_mul_i)(code, psi[(col * 3 + c) * 2], psi[(col * 3 + c) * 2 + 1], &re, &im);
            h[(s * 3 + c) * 2] = psi[(s * 3 + c) * 2] + re;
            h[(s * 3 + c) * 2 + 1] = psi[(s * 3 + c) * 2 + 1] + im;
        }
    }
}

/* h = the projection of the spinor at site s of buffer `in` (layout L). Half precision on
 * GPUs projects the loaded values while they are still biased integers (b = q + K,
 * tq_half_word_unpack_biased): a difference b_a - b_b = q_a - q_b and a sum written as
 * b_a - (2K - b_b) = q_a + q_b are both exact, so each projected component costs one or two
 * additions instead of unbiasing and scaling all 24 loaded components; the site's scale
 * then multiplies the 12 results. */
TQ_HD void TQ_RF(tq_load_project)(const void *in, const tq_layout *L, int64_t s, int mu, int sign, TQ_R *h)
{
#ifdef __CUDA_ARCH__
    if (L->prec == 2 && L->vec == 4 && L->nreal == 24) {
        TQ_R b[24];   /* float in the float instantiation, the one that runs */
        TQ_UNROLL
        for (int j = 0; j < 6; j++) {
            const uint2 w = ((const uint2 *)in)[(int64_t)j * L->stride + s];
            float f[4];
            tq_half_word_unpack_biased(w.x, f, f + 1);
            tq_half_word_unpack_biased(w.y, f + 2, f + 3);
            TQ_UNROLL
            for (int k = 0; k < 4; k++) b[4 * j + k] = f[k];
        }
        const TQ_R scale = tq_layout_norm_cptr(in, L)[s] * (TQ_R)(1.0 / TQ_HALF_SCALE);
        const TQ_R two_bias = (TQ_R)2 * TQ_HALF_BIAS;
        TQ_UNROLL
        for (int sp = 0; sp < 2; sp++) {
            const int col = tq_gamma_col(mu, sp), code = tq_gamma_code(mu, sp) + (sign < 0 ? 2 : 0);
            TQ_UNROLL
            for (int c = 0; c < 3; c++) {
                TQ_R re, im, sre, sim;   /* +-b of the partner component, and those signs */
                TQ_RF(tq_mul_i)(code, b[(col * 3 + c) * 2], b[(col * 3 + c) * 2 + 1], &re, &im);
                TQ_RF(tq_mul_i)(code, 1, 1, &sre, &sim);
                const TQ_R ar = b[(sp * 3 + c) * 2], ai = b[(sp * 3 + c) * 2 + 1];
                h[(sp * 3 + c) * 2] = (TQ_R)(scale * (sre > 0 ? ar - (two_bias - re) : ar + re));
                h[(sp * 3 + c) * 2 + 1] = (TQ_R)(scale * (sim > 0 ? ai - (two_bias - im) : ai + im));
            }
        }
        return;
    }
#endif
    TQ_R psi[24];
    TQ_RF(tq_load_site)(in, L, s, psi);
    TQ_RF(tq_spin_project)(mu, sign, psi, h);
}

/* acc += phase * (1 + sign gamma_mu) psi rebuilt from its projection h (phase +-1: the
 * boundary factor, an FFMA in place of the FADD). */
TQ_HD void TQ_RF(tq_spin_accumulate)(int mu, int sign, TQ_R phase, const TQ_R *h, TQ_R *acc)
{
    TQ_UNROLL
    for (int k = 0; k < 12; k++) acc[k] += phase * h[k];
    TQ_UNROLL
    for (int s = 2; s < 4; s++) {
        const int col = tq_gamma_col(mu, s), code = tq_gamma_code(mu, s) + (sign < 0 ? 2 : 0);
        TQ_UNROLL
        for (int c = 0; c < 3; c++) {
            TQ_R re, im;
            TQ_RF(tq_mul_i)(code, h[(col * 3 + c) * 2], h[(col * 3 + c) * 2 + 1], &re, &im);
            acc[(s * 3 + c) * 2] += phase * re;
            acc[(s * 3 + c) * 2 + 1] += phase * im;
        }
    }
}

/* out = U h or U^dag h for the two color vectors of a half spinor (u: 3x3 row-major). */
TQ_HD void TQ_RF(tq_link_mul_half)(const TQ_R *u, int adjoint, const TQ_R *h, TQ_R *out)
{
    TQ_UNROLL
    for (int s = 0; s < 2; s++)
        TQ_UNROLL
        for (int i = 0; i < 3; i++) {
            TQ_R re = 0, im = 0;
            TQ_UNROLL
            for (int j = 0; j < 3; j++) {
                const TQ_R vr = h[(s * 3 + j) * 2], vi = h[(s * 3 + j) * 2 + 1];
                if (!adjoint) {
                    const TQ_R ur = u[(i * 3 + j) * 2], ui = u[(i * 3 + j) * 2 + 1];
                    re += ur * vr - ui * vi;
                    im += ur * vi + ui * vr;
                } else {   /* (U^dag)_ij = conj(U_ji) */
                    const TQ_R ur = u[(j * 3 + i) * 2], ui = u[(j * 3 + i) * 2 + 1];
                    re += ur * vr + ui * vi;
                    im += ur * vi - ui * vr;
                }
            }
            out[(s * 3 + i) * 2] = re;
            out[(s * 3 + i) * 2 + 1] = im;
        }
}

/* Third row of an SU(3) matrix from the first two: c = conj(a x b). */
TQ_HD void TQ_RF(tq_link_third_row)(TQ_R *u)
{
    TQ_UNROLL
    for (int k = 0; k < 3; k++) {
        const int k1 = (k + 1) % 3, k2 = (k + 2) % 3;
        const TQ_R ar = u[2 * k1], ai = u[2 * k1 + 1], br = u[6 + 2 * k2], bi = u[6 + 2 * k2 + 1];
        const TQ_R cr = u[2 * k2], ci = u[2 * k2 + 1], dr = u[6 + 2 * k1], di = u[6 + 2 * k1 + 1];
        /* (a_k1 b_k2 - a_k2 b_k1)^* */
        u[12 + 2 * k] = (ar * br - ai * bi) - (cr * dr - ci * di);
        u[12 + 2 * k + 1] = -((ar * bi + ai * br) - (cr * di + ci * dr));
    }
}

/* The 8-number form (kernels/su3.h documents it; phases stored as fractions of pi). */
TQ_HD void TQ_RF(tq_link_reconstruct_8)(TQ_R *u, const TQ_R *p)
{
    const TQ_R pi = (TQ_R)3.14159265358979323846;
    const TQ_R a2r = p[2], a2i = p[3], a3r = p[4], a3i = p[5], b1r = p[6], b1i = p[7];
    const TQ_R n2 = a2r * a2r + a2i * a2i + a3r * a3r + a3i * a3i;
    const TQ_R one_n2 = 1 - n2;
    const TQ_R a1_mod = TQ_RM(sqrt)(one_n2 > 0 ? one_n2 : 0);
    const TQ_R a1r = a1_mod * TQ_RM(cos)(pi * p[0]), a1i = a1_mod * TQ_RM(sin)(pi * p[0]);
    if (n2 == 0) {
        TQ_UNROLL
        for (int k = 0; k < 18; k++) u[k] = 0;
        u[0] = a1r; u[1] = a1i; u[8] = 1; u[16] = a1r; u[17] = -a1i;
        return;
    }
    const TQ_R c1sq = n2 - (b1r * b1r + b1i * b1i);
    const TQ_R c1_mod = TQ_RM(sqrt)(c1sq > 0 ? c1sq : 0);
    const TQ_R c1r = c1_mod * TQ_RM(cos)(pi * p[1]), c1i = c1_mod * TQ_RM(sin)(pi * p[1]);
    const TQ_R B[6] = {0, 0, -a3r, a3i, a2r, -a2i};
    const TQ_R C[6] = {n2, 0, -(a1r * a2r + a1i * a2i), -(a1r * a2i - a1i * a2r),
                       -(a1r * a3r + a1i * a3i), -(a1r * a3i - a1i * a3r)};
    const TQ_R inv = 1 / n2;
    u[0] = a1r; u[1] = a1i; u[2] = a2r; u[3] = a2i; u[4] = a3r; u[5] = a3i;
    u[6] = b1r; u[7] = b1i; u[12] = c1r; u[13] = c1i;
    TQ_UNROLL
    for (int k = 1; k < 3; k++) {
        const TQ_R Br = B[2 * k], Bi = B[2 * k + 1], Cr = C[2 * k], Ci = C[2 * k + 1];
        u[6 + 2 * k] = (c1r * Br + c1i * Bi + b1r * Cr - b1i * Ci) * inv;
        u[6 + 2 * k + 1] = (c1r * Bi - c1i * Br + b1r * Ci + b1i * Cr) * inv;
        u[12 + 2 * k] = (-(b1r * Br + b1i * Bi) + c1r * Cr - c1i * Ci) * inv;
        u[12 + 2 * k + 1] = (-(b1r * Bi - b1i * Br) + c1r * Ci + c1i * Cr) * inv;
    }
}

/* Link mu of site s (3x3 complex, row-major) from a gauge buffer of layout Lg. */
TQ_HD void TQ_RF(tq_link_load)(const void *gauge, const tq_layout *Lg, int64_t s, int mu,
                               int recon, TQ_R *u)
{
    const TQ_R hs = Lg->prec == 2 ? TQ_RF(tq_half_scale)(gauge, Lg, s) : 0;
    const int j0 = mu * recon / Lg->vec;
    TQ_R p[18];
    TQ_UNROLL
    for (int j = 0; j < recon / Lg->vec; j++) TQ_RF(tq_load_chunk)(gauge, Lg, s, j0 + j, hs, p + j * Lg->vec);
    if (recon == 8) {
        TQ_RF(tq_link_reconstruct_8)(u, p);
    } else {
        TQ_UNROLL
        for (int k = 0; k < 12; k++) u[k] = p[k];
        if (recon == 18) {
            TQ_UNROLL
            for (int k = 12; k < 18; k++) u[k] = p[k];
        } else {
            TQ_RF(tq_link_third_row)(u);
        }
    }
}

/* The layouts of a task with compile-time precision and compression filled in. */
TQ_HD void TQ_RF(tq_dslash_wilson_layouts)(const tq_dslash_wilson_args *a, int prec, int recon, tq_layout *Lin,
                                    tq_layout *Lout, tq_layout *Lx, tq_layout *Lg, tq_layout *Lf)
{
    *Lin = a->L_in; Lin->prec = prec; Lin->nreal = 24; Lin->vec = tq_layout_vec(prec, 24); Lin->has_norm = prec == 2;
    *Lout = a->L_out; Lout->prec = prec; Lout->nreal = 24; Lout->vec = Lin->vec; Lout->has_norm = prec == 2;
    *Lx = a->L_x; Lx->prec = prec; Lx->nreal = 24; Lx->vec = Lin->vec; Lx->has_norm = prec == 2;
    *Lg = a->L_gauge; Lg->prec = prec; Lg->nreal = 4 * recon; Lg->has_norm = 0;
    Lg->vec = recon == 18 ? 2 : tq_layout_vec(prec, 4 * recon);
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++) {
        const int fp = tq_dslash_wilson_face_prec(prec);
        Lf[mu] = a->L_face[mu]; Lf[mu].prec = fp; Lf[mu].nreal = 12; Lf[mu].vec = tq_layout_vec(fp, 12);
        Lf[mu].has_norm = fp == 2;
    }
}

/* BiCGstab's products of the new t (acc, one site) with s (field wb) and r0 (field ub), of
 * layout L: res[0..6] += <t, s>, |t|^2, <r0, s>, <r0, t>. s and r0 are read a chunk at a
 * time: whole sites of both held too many registers (the half-precision kernel spilled).
 * Each sum starts from 0 and adds the site's 12 complex components in order. */
TQ_HD void TQ_RF(tq_bicgstab_t_products)(const TQ_R *acc, const void *wb, const void *ub, const tq_layout *L,
                                          int64_t s, TQ_R *res)
{
    const TQ_R hw = L->prec == 2 ? TQ_RF(tq_half_scale)(wb, L, s) : 0;
    const TQ_R hu = L->prec == 2 ? TQ_RF(tq_half_scale)(ub, L, s) : 0;
    TQ_R sum[7] = {0, 0, 0, 0, 0, 0, 0};
    TQ_UNROLL
    for (int j = 0; j < 24 / L->vec; j++) {
        TQ_R w[4], u[4];
        TQ_RF(tq_load_chunk)(wb, L, s, j, hw, w);
        TQ_RF(tq_load_chunk)(ub, L, s, j, hu, u);
        TQ_UNROLL
        for (int p = 0; p < L->vec; p += 2) {
            const TQ_R *t = acc + j * L->vec + p;
            sum[0] += t[0] * w[p] + t[1] * w[p + 1];
            sum[1] += t[0] * w[p + 1] - t[1] * w[p];
            sum[2] += t[0] * t[0] + t[1] * t[1];
            sum[3] += u[p] * w[p] + u[p + 1] * w[p + 1];
            sum[4] += u[p] * w[p + 1] - u[p + 1] * w[p];
            sum[5] += u[p] * t[0] + u[p + 1] * t[1];
            sum[6] += u[p] * t[1] - u[p + 1] * t[0];
        }
    }
    TQ_UNROLL
    for (int r = 0; r < 7; r++) res[r] += sum[r];
}

/* All eight hops of site x (index s, output parity a->parity), in a fixed order whatever
 * the decomposition: a neighbour inside the block (or across the block's own wrap in a
 * direction that is not split) is read from in, one across a split face from the face
 * the neighbour block packed (from[mu][0]: packed by the block below, its upper face;
 * from[mu][1]: by the block above, its lower face). The face holds exactly what the hop
 * would have computed (P psi, or U^dag P psi), so in double and single the result is the
 * same bits for every block decomposition. Then out = a D in (+ x), or a K D in (+ x) with
 * the clover term K (buffer kb) when clover.
 * gp, gq: gauge buffers of the output and input parity. prec, recon, dagger: a->L_in.prec,
 * a->recon, a->dagger as literals (TQ_DSLASH_WILSON_DISPATCH), so no sign is decided per site;
 * direct: a->direct, a literal in the GPU kernels (the branch costs the others registers). */
TQ_HD void TQ_RF(tq_dslash_wilson_site)(const tq_dslash_wilson_args *a, const void *in, const void *gp,
                                 const void *gq, const void *xb, const void *kb,
                                 const void *const from[4][2], void *out, const int *x, int64_t s,
                                 int prec, int recon, int dagger, int clover, int direct, int epi,
                                 const TQ_R *ecoef, const tq_epi_fields *ef, TQ_R *res)
{
    tq_layout Lin, Lout, Lx, Lg, Lf[4];
    TQ_RF(tq_dslash_wilson_layouts)(a, prec, recon, &Lin, &Lout, &Lx, &Lg, Lf);
    const int sf = dagger ? 1 : -1;   /* projector sign of forward hops */
    TQ_R acc[24];
    TQ_UNROLL
    for (int k = 0; k < 24; k++) acc[k] = 0;
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++) {
        TQ_UNROLL
        for (int dir = 0; dir < 2; dir++) {   /* 0 forward, 1 backward */
            const int sign = dir == 0 ? sf : -sf;
            const int edge = dir == 0 ? x[mu] == a->B[mu] - 1 : x[mu] == 0;
            TQ_R phase = 1;
            if (edge) phase = (TQ_R)(dir == 0 ? a->phase_hi[mu] : a->phase_lo[mu]);
            TQ_R h[12], uh[12], u[18];
            if (!direct && edge && a->split[mu]) {
                const int64_t fi = tq_face_index(a->B, mu, x);
                if (dir == 0) {
                    TQ_RF(tq_load_site)(from[mu][1], &Lf[mu], fi, h);
                    TQ_RF(tq_link_load)(gp, &Lg, s, mu, recon, u);
                    TQ_RF(tq_link_mul_half)(u, 0, h, uh);
                } else {
                    TQ_RF(tq_load_site)(from[mu][0], &Lf[mu], fi, uh);
                }
            } else {
                /* in the block, across its own wrap, or (direct) in the neighbour block:
                 * the same site index (the wrap's) and the neighbour's data; a face holds
                 * exactly what this computes (tq_dslash_wilson_face_prec: no rounding),
                 * so the same bits as through a face, whatever the decomposition. One path
                 * with only the pointers conditional: branching on edge per thread ran a
                 * warp's hop twice where its sites straddle an unsplit edge. */
                const int cross = direct && edge && a->split[mu];
                int y[4] = {x[0], x[1], x[2], x[3]};
                y[mu] = dir == 0 ? (edge ? 0 : x[mu] + 1) : (edge ? a->B[mu] - 1 : x[mu] - 1);
                const int64_t sy = tq_block_cb(a->B, y);
                TQ_R p[12];
                TQ_RF(tq_load_project)(cross ? a->nbr_in[mu][1 - dir] : in, &Lin, sy, mu, sign, p);
                if (dir == 0) {
                    TQ_RF(tq_link_load)(gp, &Lg, s, mu, recon, u);
                    TQ_RF(tq_link_mul_half)(u, 0, p, uh);
                } else {
                    TQ_RF(tq_link_load)(cross ? a->nbr_g[mu] : gq, &Lg, sy, mu, recon, u);
                    TQ_RF(tq_link_mul_half)(u, 1, p, uh);
                }
            }
            TQ_RF(tq_spin_accumulate)(mu, sign, phase, uh, acc);
        }
    }
    if (clover) {
        tq_layout Lk = a->L_clover;
        Lk.prec = prec; Lk.nreal = TQ_CLOVER_REALS; Lk.vec = tq_layout_vec(prec, TQ_CLOVER_REALS); Lk.has_norm = prec == 2;
        TQ_RF(tq_clover_apply_site)(kb, &Lk, s, acc);
    }
    const TQ_R coef = (TQ_R)a->a;
    if (a->xpay) {
        TQ_R xv[24];
        TQ_RF(tq_load_site)(xb, &Lx, s, xv);
        TQ_UNROLL
        for (int k = 0; k < 24; k++) acc[k] = xv[k] + coef * acc[k];
    } else {
        TQ_UNROLL
        for (int k = 0; k < 24; k++) acc[k] *= coef;
    }
    /* the epilogue's fields: out's layout, or a staged copy's */
    tq_layout Le = Lout;
    int64_t se = s;
    if (ef && ef->stride) {
        Le.stride = ef->stride;
        se = ef->s;
#ifdef __CUDA_ARCH__
        asm volatile("cp.async.wait_all;" ::: "memory");   /* this thread's staged copies */
#endif
    }
    if (epi == TQ_EPI_AXPY_NORM2) {
        TQ_R rv[24];   /* out holds r: r += ecoef y */
        TQ_RF(tq_load_site)(ef->r, &Le, se, rv);
        TQ_UNROLL
        for (int k = 0; k < 24; k++) acc[k] = rv[k] + ecoef[0] * acc[k];
    }
    if (epi == TQ_EPI_CAXPYZ) {
        TQ_R wv[24];   /* out = w + ecoef y, ecoef complex (y is not stored) */
        TQ_RF(tq_load_site)(ef->w, &Le, se, wv);
        TQ_UNROLL
        for (int k = 0; k < 24; k += 2) {
            const TQ_R re = wv[k] + ecoef[0] * acc[k] - ecoef[1] * acc[k + 1];
            const TQ_R im = wv[k + 1] + ecoef[0] * acc[k + 1] + ecoef[1] * acc[k];
            acc[k] = re;
            acc[k + 1] = im;
        }
    }
    TQ_RF(tq_store_site)(out, &Lout, s, acc);
    /* w and u have out's layout (same precision and shape) */
    if (epi == TQ_EPI_NORM2 || epi == TQ_EPI_AXPY_NORM2) {
        TQ_R n2 = 0;
        TQ_UNROLL
        for (int k = 0; k < 24; k++) n2 += acc[k] * acc[k];
        res[0] += n2;
    } else if (epi == TQ_EPI_BICGSTAB_T) {
        TQ_RF(tq_bicgstab_t_products)(acc, ef->w, ef->u, &Le, se, res);
    }
}

/* Interior: site s unless it lies on a split face (the exterior task does those) or outside
 * the task's band (a->band); direct: every site, a->nbr_in and a->nbr_g giving the
 * neighbour blocks' data. With an
 * epilogue (epi, its coefficient ecoef (re, im), what it reads ef; only on unsplit blocks),
 * the site's contributions to the reductions are added to res. */
TQ_HD void TQ_RF(tq_dslash_wilson_interior_site)(const tq_dslash_wilson_args *a, const void *in, const void *gp,
                                          const void *gq, const void *xb, const void *kb, void *out,
                                          int64_t s, int prec, int recon, int dagger, int clover, int direct,
                                          int epi, const TQ_R *ecoef, const tq_epi_fields *ef, TQ_R *res)
{
    int x[4];
    tq_block_coords(a->B, a->parity, s, x);
    if (!direct) {
        const int band = tq_interior_band(a->B, a->split, x);
        if (band == 0 || (a->band && band != a->band)) return;
    }
    const void *const none[4][2] = {{NULL, NULL}, {NULL, NULL}, {NULL, NULL}, {NULL, NULL}};
    TQ_RF(tq_dslash_wilson_site)(a, in, gp, gq, xb, kb, none, out, x, s, prec, recon, dagger, clover, direct, epi, ecoef, ef,
                                 res);
}

/* Site s's epilogue results res (nres) into the entries ent (result r of entry e at
 * r n + e), s on a split face: at the entry that takes the site, and zeros at a corner's
 * repeats, so that a sum over every entry adds what the exterior loop adds (it adds
 * nothing for a repeat). */
TQ_HD void TQ_RF(tq_face_entries_store)(const tq_dslash_wilson_args *a, int64_t s, int nres, const TQ_R *res, TQ_R *ent,
                                        int64_t n)
{
    int x[4];
    int64_t e[4];
    tq_block_coords(a->B, a->parity, s, x);
    const int k = tq_face_entries_of(a, x, e);
    for (int i = 0; i < k; i++)
        for (int r = 0; r < nres; r++) ent[r * n + e[i]] = i == 0 ? res[r] : (TQ_R)0;
}

/* One face site: the site sy (layout Lin, links g of its parity) packed into face (layout
 * Lf) at index fi, as the hop across the face in mu computes it. Lower face (side 0), for
 * the block below: P_forward psi(y); upper face (side 1), for the block above:
 * U_mu(y)^dag P_backward psi(y). tq_load_project, as the interior hops and the in-place
 * neighbours project: in half precision on GPUs it rounds differently from projecting the
 * loaded site, and a face must hold the bits an in-place read computes. */
TQ_HD void TQ_RF(tq_dslash_wilson_pack_site)(const void *in, const tq_layout *Lin, const void *g, const tq_layout *Lg,
                                             void *face, const tq_layout *Lf, int mu, int side, int64_t fi, int64_t sy,
                                             int recon, int dagger)
{
    const int sf = dagger ? 1 : -1;
    TQ_R h[12];
    if (side == 0) {
        TQ_RF(tq_load_project)(in, Lin, sy, mu, sf, h);
    } else {
        TQ_R p[12], u[18];
        TQ_RF(tq_load_project)(in, Lin, sy, mu, -sf, p);
        TQ_RF(tq_link_load)(g, Lg, sy, mu, recon, u);
        TQ_RF(tq_link_mul_half)(u, 1, p, h);
    }
    TQ_RF(tq_store_site)(face, Lf, fi, h);
}

/* Pack: face entry e (tq_face_entry) of the block's input field, parity a->parity, into
 * face[mu][side] (the face buffers). */
TQ_HD void TQ_RF(tq_dslash_wilson_pack_entry)(const tq_dslash_wilson_args *a, const void *in, const void *g,
                                       void *const face[4][2], int64_t e, int prec, int recon,
                                       int dagger)
{
    tq_layout Lin, Lout, Lx, Lg, Lf[4];
    TQ_RF(tq_dslash_wilson_layouts)(a, prec, recon, &Lin, &Lout, &Lx, &Lg, Lf);
    int mu, side;
    int64_t fi;
    tq_face_entry(a, e, &mu, &side, &fi);
    if (mu < 0) return;
    int y[4];
    tq_face_coords(a->B, mu, side ? a->B[mu] - 1 : 0, a->parity, fi, y);
    TQ_RF(tq_dslash_wilson_pack_site)(in, &Lin, g, &Lg, face[mu][side], &Lf[mu], mu, side, fi, tq_block_cb(a->B, y),
                                      recon, dagger);
}

/* Packing ahead: the faces of the next hop, one that reads this hop's output out (parity
 * a->parity, the links gp of that parity) with the same dagger (M_pc's second hop), at
 * site x (index s) on this block's split faces, just stored by this thread: one entry per
 * split face the site lies on, into ahead[mu][side]. The site is read back from out, so
 * the faces hold the bits the next hop's own pack would write (half precision: the
 * rounded, stored values). */
TQ_HD void TQ_RF(tq_dslash_wilson_pack_ahead)(const tq_dslash_wilson_args *a, const void *out, const void *gp,
                                              void *const ahead[4][2], const int *x, int64_t s, int prec, int recon,
                                              int dagger)
{
    tq_layout Lin, Lout, Lx, Lg, Lf[4];
    TQ_RF(tq_dslash_wilson_layouts)(a, prec, recon, &Lin, &Lout, &Lx, &Lg, Lf);
    TQ_UNROLL
    for (int mu = 0; mu < 4; mu++) {
        if (!a->split[mu] || (x[mu] != 0 && x[mu] != a->B[mu] - 1)) continue;
        const int side = x[mu] != 0;
        TQ_RF(tq_dslash_wilson_pack_site)(out, &Lout, gp, &Lg, ahead[mu][side], &Lf[mu], mu, side,
                                          tq_face_index(a->B, mu, x), s, recon, dagger);
    }
}

/* Exterior: the site x of face entry e (output parity), unless an earlier entry covers it
 * (corner sites lie on several faces; one thread takes each site once, so no two threads
 * write one site), from the faces `from`. With an epilogue (a split one: a->epi.split),
 * the site's contributions are added to res as in the interior. ahead (NULL: none): the
 * next hop's faces, packed from the site once stored (tq_dslash_wilson_pack_ahead). */
TQ_HD void TQ_RF(tq_dslash_wilson_exterior_entry)(const tq_dslash_wilson_args *a, const void *in, const void *gp,
                                           const void *gq, const void *xb, const void *kb,
                                           const void *const from[4][2], void *out, int64_t e,
                                           int prec, int recon, int dagger, int clover, int epi,
                                           const TQ_R *ecoef, const tq_epi_fields *ef, TQ_R *res,
                                           void *const (*ahead)[2])
{
    int x[4];
    if (!tq_face_entry_site(a, e, x)) return;
    const int64_t s = tq_block_cb(a->B, x);
    /* ef's fields unstaged (stride 0): read at the site's own index */
    TQ_RF(tq_dslash_wilson_site)(a, in, gp, gq, xb, kb, from, out, x, s, prec, recon, dagger, clover, 0, epi, ecoef, ef,
                                 res);
    if (ahead) TQ_RF(tq_dslash_wilson_pack_ahead)(a, out, gp, ahead, x, s, prec, recon, dagger);
}
