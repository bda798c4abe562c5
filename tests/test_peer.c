/* Peer mode (core/stencil.h, src/blas/blas.c, codelets/face_sync.h): with two or more GPUs
 * in one process, faces and reductions' partial sums go from GPU to GPU through their
 * memory, ordered by counters on the streams. Skipped without two GPUs (bench/device-run.sh
 * runs it on a machine with several). On a weak 16^4 field, one and two blocks per GPU,
 * Wilson and clover: M_pc and its dagger in double, single and half, M in double, a
 * BiCGstab solve (double, single sloppy with reliable updates) and a CG solve on the normal
 * equations are bitwise those of the same process with peer mode off (TQ_PEER=0, StarPU's
 * face and partial-sum handles), the operator really was in peer mode (tq_lattice_peer_gpus),
 * the solvers' fused iterations sent their split partials through peer memory (at least one
 * reduction per CG iteration; none with TQ_PEER=0), with one block per GPU M_pc's first hop
 * packed the second's faces (core/stencil.h, TQ_STENCIL_PACK_NEXT; none with TQ_PEER=0 or
 * TQ_PACK_AHEAD=0) and every task ran on its block's owner. Applications submitted back to
 * back (M_pc on four inputs into four outputs, no wait between them, with TQ_MATPC_TURNS=1:
 * their intermediates by turns, src/dirac/dirac_forms.c, and their kernels side by side,
 * codelets/chain.c) give the bits each gives alone. */
#include "tq_test.h"
#include "dirac_test_util.h"
#include "tq_tasks.h"
#include "solvers/solver_internal.h"   /* tq_internal_solver_peer_split_reductions */
#include "core/stencil.h"              /* tq_internal_stencil_packs_ahead */

enum { L = 16, NSITES = L * L * L * L, NSPIN = NSITES * 24, BURST = 4 };

typedef struct results {
    double matpc[3][NSPIN], matpc_dag[NSPIN], mat[NSPIN], bicgstab[NSPIN], cg[NSPIN];
    double lone[BURST][NSPIN], burst[BURST][NSPIN];   /* single precision */
    int bicgstab_iter, cg_iter;
} results;

/* Everything compared, for one operator type and block extent; *gpus: what
 * tq_lattice_peer_gpus said for the lattice. */
static void run(const tq_host_gauge *hg, const double *src, const int block[4], int clover, results *r, int *gpus)
{
    const int dims[4] = {L, L, L, L};
    tq_dirac_params dp;
    memset(&dp, 0, sizeof dp);
    dp.type = clover ? TQ_DSLASH_CLOVER : TQ_DSLASH_WILSON;
    dp.kappa = 0.12;
    dp.csw = 1.0;
    for (int ip = 0; ip < 3; ip++) {
        setup S;
        if (setup_make_op(&S, dims, block, hg, precs[ip], TQ_RECON_12, 0.12, &dp)) return;
        CHECK_OK(tq_lattice_peer_gpus(S.lat, gpus));
        tq_field *in = spinor(&S, precs[ip], TQ_EVEN, src), *out = spinor(&S, precs[ip], TQ_EVEN, NULL);
        CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 0));
        CHECK_OK(tq_field_export(out, r->matpc[ip]));
        if (ip == 0) {
            CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 1));
            CHECK_OK(tq_field_export(out, r->matpc_dag));
            tq_field *b = spinor(&S, TQ_DOUBLE, TQ_FULL, src), *x = spinor(&S, TQ_DOUBLE, TQ_FULL, NULL);
            CHECK_OK(tq_dirac_mat(S.dirac, x, b, 0));
            CHECK_OK(tq_field_export(x, r->mat));
            for (int cg = 0; cg < 2; cg++) {
                tq_solver_params sp;
                tq_solver_params_default(&sp);
                sp.tol = 1e-9;
                sp.inverter = cg ? TQ_INV_CG : TQ_INV_BICGSTAB;
                sp.solve_type = cg ? TQ_SOLVE_NORMOP_PC : TQ_SOLVE_DIRECT_PC;
                tq_solver_result res;
                CHECK_OK(tq_solve(S.dirac, x, b, &sp, &res));
                CHECK_OK(tq_field_export(x, cg ? r->cg : r->bicgstab));
                *(cg ? &r->cg_iter : &r->bicgstab_iter) = res.iterations;
            }
            tq_field_destroy(b);
            tq_field_destroy(x);
        }
        if (ip == 1) {   /* back to back: each application alone (waited for), then all at once */
            tq_field *bin[BURST], *bout[BURST];
            for (int j = 0; j < BURST; j++) {
                /* the input from burst[j], which the export below overwrites on the even sites only */
                for (int64_t i = 0; i < NSPIN; i++) r->burst[j][i] = src[(i + 977 * (j + 1)) % NSPIN];
                bin[j] = spinor(&S, precs[ip], TQ_EVEN, r->burst[j]);
                memset(r->burst[j], 0, sizeof r->burst[j]);
                bout[j] = spinor(&S, precs[ip], TQ_EVEN, NULL);
                CHECK_OK(tq_dirac_matpc(S.dirac, bout[j], bin[j], TQ_EVEN, 0));
                CHECK_OK(tq_field_export(bout[j], r->lone[j]));
            }
            /* by turns whatever the blocks' size (by default only from 2^19 sites per parity) */
            setenv("TQ_MATPC_TURNS", "1", 1);
            for (int j = 0; j < BURST; j++) CHECK_OK(tq_dirac_matpc(S.dirac, bout[j], bin[j], TQ_EVEN, j & 1));
            for (int j = 0; j < BURST; j++) CHECK_OK(tq_dirac_matpc(S.dirac, bout[j], bin[j], TQ_EVEN, 0));
            unsetenv("TQ_MATPC_TURNS");
            for (int j = 0; j < BURST; j++) {
                CHECK_OK(tq_field_export(bout[j], r->burst[j]));
                CHECK(!memcmp(r->burst[j], r->lone[j], sizeof r->lone[j]),
                      "M_pc %d of %d back to back differs from it alone (block t %d, %s)", j, BURST, block[3],
                      clover ? "clover" : "Wilson");
                tq_field_destroy(bin[j]);
                tq_field_destroy(bout[j]);
            }
        }
        tq_field_destroy(in);
        tq_field_destroy(out);
        setup_free(&S);
    }
}

int main(void)
{
    tq_runtime_info info;
    if (tq_test_init_quiet(&info)) return 1;
    if (info.ncuda_workers < 2) {
        tq_finalize();
        return tq_test_skip("test_peer", "needs two or more GPUs (run it on a multi-GPU machine: bench/device-run.sh)");
    }
    CHECK_OK(tq_set_placement(TQ_WHERE_CUDA));
    const int ng = info.ncuda_workers;
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, (const int[4]){L, L, L, L}));
    CHECK_OK(tq_host_gauge_weak(&hg, 7, 0.2));
    double *src = malloc(NSPIN * sizeof *src);
    results *peer = malloc(sizeof *peer), *ref = malloc(sizeof *ref);
    if (!src || !peer || !ref) return 1;
    tq_test_fill(src, NSPIN, 11);
    for (int per_gpu = 1; per_gpu <= 2; per_gpu++) {
        const int bt = L / (ng * per_gpu);
        if (bt < 2 || bt % 2 || L % (ng * per_gpu)) {
            printf("%d blocks per GPU: not checked (%d GPUs do not split t = %d into even blocks)\n", per_gpu, ng, L);
            continue;
        }
        const int block[4] = {L, L, L, bt};
        for (int clover = 0; clover < 2; clover++) {
            memset(peer, 0, sizeof *peer);
            memset(ref, 0, sizeof *ref);
            int gpus_peer = 0, gpus_ref = 0;
            unsetenv("TQ_PEER");
            tq_internal_owner_checks(1);
            const long split0 = tq_internal_solver_peer_split_reductions();
            const long ahead0 = tq_internal_stencil_packs_ahead();
            run(&hg, src, block, clover, peer, &gpus_peer);
            const long ahead1 = tq_internal_stencil_packs_ahead();
            tq_wait_all();
            tq_internal_owner_checks(0);
            const long split1 = tq_internal_solver_peer_split_reductions();
            setenv("TQ_PEER", "0", 1);
            run(&hg, src, block, clover, ref, &gpus_ref);
            unsetenv("TQ_PEER");
            const long split2 = tq_internal_solver_peer_split_reductions();
            const long ahead2 = tq_internal_stencil_packs_ahead();
            const char *what = clover ? "clover" : "Wilson";
            printf("%s, %d block(s) per GPU: peer mode over %d GPUs; BiCGstab %d, CG %d iterations\n", what, per_gpu,
                   gpus_peer, peer->bicgstab_iter, peer->cg_iter);
            CHECK(gpus_peer == ng, "%s, %d per GPU: peer mode over %d GPUs, expected %d", what, per_gpu, gpus_peer, ng);
            CHECK(gpus_ref == 0, "TQ_PEER=0 left peer mode on (%d GPUs)", gpus_ref);
            /* the fused iteration's split partials through peer memory (unless TQ_SPLIT_FUSE=0) */
            const char *fuse = getenv("TQ_SPLIT_FUSE");
            const int split_on = !(fuse && fuse[0] == '0');
            CHECK(split_on ? split1 - split0 >= peer->cg_iter : split1 == split0,
                  "%s: %ld split epilogue reductions through peer memory (CG %d iterations)", what, split1 - split0,
                  peer->cg_iter);
            CHECK(split2 == split1, "%s: TQ_PEER=0 sent %ld split partials through peer memory", what, split2 - split1);
            /* one block per GPU: every face a peer face, so M_pc's first hop packs the
             * second's faces (one exterior per GPU and M_pc, at least); two per GPU: where
             * the placement puts neighbours on one GPU, a StarPU handle between them */
            const char *ahead_env = getenv("TQ_PACK_AHEAD");
            const int ahead_off = ahead_env && ahead_env[0] == '0';
            printf("%s, %d block(s) per GPU: %ld exteriors packed ahead\n", what, per_gpu, ahead1 - ahead0);
            if (ahead_off || per_gpu == 1)
                CHECK(ahead_off ? ahead1 == ahead0 : ahead1 - ahead0 >= 4L * ng, "%s, %d per GPU: %ld exteriors packed ahead",
                      what, per_gpu, ahead1 - ahead0);
            CHECK(ahead2 == ahead1, "%s: TQ_PEER=0 packed %ld ahead", what, ahead2 - ahead1);
            for (int ip = 0; ip < 3; ip++)
                CHECK(!memcmp(peer->matpc[ip], ref->matpc[ip], sizeof ref->matpc[ip]), "%s M_pc (precision %d) differs",
                      what, ip);
            CHECK(!memcmp(peer->matpc_dag, ref->matpc_dag, sizeof ref->matpc_dag), "%s M_pc^dag differs", what);
            CHECK(!memcmp(peer->mat, ref->mat, sizeof ref->mat), "%s M differs", what);
            CHECK(peer->bicgstab_iter == ref->bicgstab_iter && peer->bicgstab_iter > 0, "%s BiCGstab: %d / %d iterations",
                  what, peer->bicgstab_iter, ref->bicgstab_iter);
            CHECK(!memcmp(peer->bicgstab, ref->bicgstab, sizeof ref->bicgstab), "%s BiCGstab solution differs", what);
            CHECK(peer->cg_iter == ref->cg_iter && peer->cg_iter > 0, "%s CG: %d / %d iterations", what, peer->cg_iter,
                  ref->cg_iter);
            CHECK(!memcmp(peer->cg, ref->cg, sizeof ref->cg), "%s CG solution differs", what);
        }
    }
    long on_owner = 0, elsewhere = 0;
    tq_internal_owner_stats(&on_owner, &elsewhere);
    printf("peer-mode tasks: %ld ran on their owner, %ld elsewhere\n", on_owner, elsewhere);
    CHECK(on_owner > 0 && elsewhere == 0, "%ld owned tasks ran elsewhere (%ld on their owner)", elsewhere, on_owner);
    free(src);
    free(peer);
    free(ref);
    tq_host_gauge_free(&hg);
    tq_finalize();
    return tq_test_finish("test_peer");
}
