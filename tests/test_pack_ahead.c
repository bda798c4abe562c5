/* Packing ahead (core/stencil.h, TQ_STENCIL_PACK_NEXT): an exterior that also packs the
 * next hop's faces from the face sites it has just stored must write exactly what the next
 * hop's own pack task would (its bits decide that a run is bitwise the same with and
 * without it, on every placement). Per-site functions of kernels/dslash_wilson_site.h on
 * random fields, for every precision, compression and dagger, with one, two and four split
 * directions (corner sites lie on several faces): the exterior entries with ahead faces,
 * then the next hop's pack entries over the same output field into other faces, compared
 * byte for byte; every face entry must be written (the ahead faces start zero, the packed
 * ones from a pattern). The exterior's own output must not change. */
#include "tq_test.h"
#include "kernels/dslash_wilson_site.h"

enum { MAXF = 8 };

/* A buffer of layout L with random contents in [-0.5, 0.5) (half: through tq_store_site, so
 * that the norms are valid). */
static void *random_buffer(const tq_layout *L, uint64_t seed)
{
    void *buf = calloc(1, (size_t)tq_layout_bytes(L));
    double v[TQ_MAX_REALS_PER_SITE];
    for (int64_t s = 0; s < L->stride; s++) {
        tq_test_fill(v, L->nreal, seed * 1000003u + (uint64_t)s);
        tq_store_site(buf, L, s, v);
    }
    return buf;
}

/* One case: hop A with output parity `parity` on block B split in `split`. */
static void check_case(const int *B, const int *split, int prec, int recon, int dagger, int parity, uint64_t seed)
{
    tq_dslash_wilson_args a;
    memset(&a, 0, sizeof a);
    int64_t vol = 1;
    for (int mu = 0; mu < 4; mu++) {
        a.B[mu] = B[mu];
        a.split[mu] = split[mu];
        a.phase_lo[mu] = a.phase_hi[mu] = 1.0;
        vol *= B[mu];
    }
    a.cb = vol / 2;
    a.parity = parity;
    a.dagger = dagger;
    a.recon = recon;
    a.a = 1.0;
    a.L_in = a.L_out = a.L_x = tq_layout_make(prec, 24, 1, a.cb);
    a.L_gauge = tq_layout_make(prec, 4 * recon, 0, a.cb);
    if (recon == 18) a.L_gauge.vec = 2;
    const int fp = tq_dslash_wilson_face_prec(prec);
    for (int mu = 0; mu < 4; mu++) a.L_face[mu] = tq_layout_make(fp, 12, 1, tq_face_sites(a.B, mu));
    void *in = random_buffer(&a.L_in, seed + 1), *out = random_buffer(&a.L_out, seed + 2);
    void *gp = random_buffer(&a.L_gauge, seed + 3), *gq = random_buffer(&a.L_gauge, seed + 4);
    void *from[4][2] = {{NULL}}, *ahead[4][2] = {{NULL}}, *packed[4][2] = {{NULL}};
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2 && split[mu]; side++) {
            from[mu][side] = random_buffer(&a.L_face[mu], seed + 10 + 2 * mu + side);
            ahead[mu][side] = calloc(1, (size_t)tq_layout_bytes(&a.L_face[mu]));
            packed[mu][side] = malloc((size_t)tq_layout_bytes(&a.L_face[mu]));
            memset(packed[mu][side], 0xA5, (size_t)tq_layout_bytes(&a.L_face[mu]));
        }
    void *plain = malloc((size_t)tq_layout_bytes(&a.L_out));
    memcpy(plain, out, (size_t)tq_layout_bytes(&a.L_out));
    const int64_t n = tq_face_total(&a);
    const void *const (*fr)[2] = (const void *const (*)[2])from;
    /* hop A's exterior, with and without ahead faces */
#define EXTERIOR(P, R, D)                                                                              \
    for (int64_t e = 0; e < n; e++) {                                                                  \
        if (P == 8) {                                                                                  \
            tq_dslash_wilson_exterior_entry(&a, in, gp, gq, NULL, NULL, fr, out, e, P, R, D, 0, TQ_EPI_NONE, NULL, NULL, NULL, ahead); \
            tq_dslash_wilson_exterior_entry(&a, in, gp, gq, NULL, NULL, fr, plain, e, P, R, D, 0, TQ_EPI_NONE, NULL, NULL, NULL, NULL); \
        } else {                                                                                       \
            tq_dslash_wilson_exterior_entry_f(&a, in, gp, gq, NULL, NULL, fr, out, e, P, R, D, 0, TQ_EPI_NONE, NULL, NULL, NULL, ahead); \
            tq_dslash_wilson_exterior_entry_f(&a, in, gp, gq, NULL, NULL, fr, plain, e, P, R, D, 0, TQ_EPI_NONE, NULL, NULL, NULL, NULL); \
        }                                                                                              \
    }
    TQ_DSLASH_WILSON_DISPATCH(prec, recon, dagger, EXTERIOR);
#undef EXTERIOR
    CHECK(!memcmp(out, plain, (size_t)tq_layout_bytes(&a.L_out)), "prec %d recon %d dagger %d: packing ahead changed the output",
          prec, recon, dagger);
    /* hop B's pack of hop A's output: its arguments as src/dirac/dslash_wilson.c's hop_pack
     * makes them (the packed parity is hop A's output parity, its input hop A's output) */
    tq_dslash_wilson_args pa = a;
    pa.L_in = a.L_out;
    void *const (*pk)[2] = (void *const (*)[2])packed;
#define PACK(P, R, D)                                                                                  \
    for (int64_t e = 0; e < n; e++) {                                                                  \
        if (P == 8) tq_dslash_wilson_pack_entry(&pa, out, gp, pk, e, P, R, D);                          \
        else tq_dslash_wilson_pack_entry_f(&pa, out, gp, pk, e, P, R, D);                               \
    }
    TQ_DSLASH_WILSON_DISPATCH(prec, recon, dagger, PACK);
#undef PACK
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2 && split[mu]; side++)
            CHECK(!memcmp(ahead[mu][side], packed[mu][side], (size_t)tq_layout_bytes(&a.L_face[mu])),
                  "prec %d recon %d dagger %d parity %d split %d%d%d%d: face mu %d side %d packed ahead differs from the pack",
                  prec, recon, dagger, parity, split[0], split[1], split[2], split[3], mu, side);
    for (int mu = 0; mu < 4; mu++)
        for (int side = 0; side < 2; side++) {
            free(from[mu][side]);
            free(ahead[mu][side]);
            free(packed[mu][side]);
        }
    free(in);
    free(out);
    free(plain);
    free(gp);
    free(gq);
}

int main(void)
{
    const int B[4] = {4, 2, 4, 6};
    const int splits[3][4] = {{0, 0, 0, 1}, {0, 0, 1, 1}, {1, 1, 1, 1}};
    const int precs[3] = {8, 4, 2}, recons[3] = {18, 12, 8};
    uint64_t seed = 1;
    for (int k = 0; k < 3; k++)
        for (int ip = 0; ip < 3; ip++)
            for (int ir = 0; ir < 3; ir++)
                for (int dagger = 0; dagger < 2; dagger++)
                    for (int parity = 0; parity < 2; parity++)
                        check_case(B, splits[k], precs[ip], recons[ir], dagger, parity, seed++ * 97);
    return tq_test_finish("test_pack_ahead");
}
