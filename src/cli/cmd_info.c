/* taskqcd info: what StarPU started with and how TaskQCD was built; with --dim, how a
 * lattice is distributed (the rank grid, the blocks and what runs each block's tasks). */
#include "cli.h"
#include "taskqcd.h"

#include <stdio.h>
#include <string.h>

static int usage(const char *bad)
{
    if (bad) fprintf(stderr, "taskqcd info: %s\n", bad);
    printf("usage: taskqcd info [--ncpus N] [--ncuda N] [--sched POLICY]\n"
           "                    [--dim X Y Z T [--block X Y Z T] [--gridsize X Y Z T] [--where any|cpu|cuda]]\n"
           "With --dim: the distribution of that lattice over the ranks (under mpirun), its\n"
           "blocks and the worker that runs each block's tasks on rank 0 (owner computes).\n");
    return bad ? 2 : 0;
}

/* The rank grid, the blocks and their owners (rank 0's blocks by worker). */
static int print_distribution(const int dims[4], const int block[4], const int procs[4])
{
    tq_lattice_params lp;
    memset(&lp, 0, sizeof lp);
    memcpy(lp.dims, dims, sizeof lp.dims);
    memcpy(lp.block, block, sizeof lp.block);
    memcpy(lp.procs, procs, sizeof lp.procs);
    tq_lattice *lat = NULL;
    tq_status st = tq_lattice_create(&lp, &lat);
    if (st != TQ_SUCCESS) {
        fprintf(stderr, "taskqcd info: %s\n", tq_last_error());
        return st == TQ_ERR_INVALID_ARG ? 2 : 1;
    }
    tq_lattice_info li;
    tq_lattice_get_info(lat, &li);
    int nb[4];
    for (int mu = 0; mu < 4; mu++) nb[mu] = li.dims[mu] / li.block[mu];
    printf("  lattice %dx%dx%dx%d: ranks %dx%dx%dx%d, local %dx%dx%dx%d; blocks %dx%dx%dx%d, a grid of %dx%dx%dx%d = %d "
           "(%d per rank)\n", li.dims[0], li.dims[1], li.dims[2], li.dims[3], li.procs[0], li.procs[1], li.procs[2],
           li.procs[3], li.local[0], li.local[1], li.local[2], li.local[3], li.block[0], li.block[1], li.block[2],
           li.block[3], nb[0], nb[1], nb[2], nb[3], li.nblocks_global, li.nblocks);
    const int shown = li.nblocks_global < 64 ? li.nblocks_global : 64;
    for (int b = 0; b < shown && st == TQ_SUCCESS; b++) {
        int rank, c[4], r = b;
        char owner[64];
        for (int mu = 0; mu < 4; mu++) { c[mu] = r % nb[mu]; r /= nb[mu]; }
        st = tq_lattice_block_owner(lat, b, &rank, owner, sizeof owner);
        if (st == TQ_SUCCESS)
            printf("    block %3d at (%d,%d,%d,%d): rank %d, %s\n", b, c[0], c[1], c[2], c[3], rank,
                   rank == li.coords[0] + li.procs[0] * (li.coords[1] + li.procs[1] * (li.coords[2] + li.procs[2] * li.coords[3]))
                       ? owner : "its owner there");
    }
    if (shown < li.nblocks_global) printf("    ... (%d more blocks)\n", li.nblocks_global - shown);
    int peer = 0;
    if (st == TQ_SUCCESS) st = tq_lattice_peer_gpus(lat, &peer);
    if (st == TQ_SUCCESS && peer)
        printf("  peer mode: faces and partial sums go GPU to GPU between its %d GPUs (TQ_PEER=0: off)\n", peer);
    else if (st == TQ_SUCCESS)
        printf("  peer mode: off (it needs the blocks on 2 to 8 GPUs of one process, with peer access)\n");
    if (st != TQ_SUCCESS) fprintf(stderr, "taskqcd info: %s\n", tq_last_error());
    tq_lattice_destroy(lat);
    return st == TQ_SUCCESS ? 0 : 1;
}

int tq_cmd_info(int argc, char **argv)
{
    tq_init_params p;
    tq_init_params_default(&p);
    if (tq_init_params_from_args(&p, &argc, argv)) {
        fprintf(stderr, "taskqcd info: %s\n", tq_last_error());
        return 2;
    }
    int dims[4] = {0, 0, 0, 0}, block[4] = {0, 0, 0, 0}, procs[4] = {0, 0, 0, 0};
    const char *where = "any";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--help")) return usage(NULL);
        if (!strcmp(a, "--dim") || !strcmp(a, "--block") || !strcmp(a, "--gridsize")) {
            if (tq_cli_parse_dims(argc, argv, &i, !strcmp(a, "--dim") ? dims : !strcmp(a, "--block") ? block : procs))
                return usage("--dim, --block and --gridsize take four positive integers");
        } else if (!strcmp(a, "--where") && i + 1 < argc) {
            where = argv[++i];
            if (strcmp(where, "any") && strcmp(where, "cpu") && strcmp(where, "cuda"))
                return usage("--where must be any, cpu or cuda");
        } else {
            char msg[300];
            snprintf(msg, sizeof msg, "unknown option '%s'", a);
            return usage(msg);
        }
    }
    if (!dims[0] && (block[0] || procs[0])) return usage("--block and --gridsize need --dim");
    const int init = tq_cli_init("taskqcd info", &p);
    if (init) return init;
    tq_runtime_info info;
    tq_get_runtime_info(&info);
    printf("TaskQCD %d.%d.%d\n", TQ_VERSION_MAJOR, TQ_VERSION_MINOR, TQ_VERSION_PATCH);
    printf("  StarPU %s, scheduler %s%s\n", info.starpu_version, info.sched,
           info.starpu_fxt ? ", FxT traces (--trace writes StarPU's Paje trace too)" : "");
    printf("  workers: %d CPU, %d CUDA\n", info.ncpu_workers, info.ncuda_workers);
    printf("  built with CUDA: %s, MPI: %s (rank %d of %d)\n", info.built_with_cuda ? "yes" : "no",
           info.built_with_mpi ? "yes" : "no", info.mpi_rank, info.mpi_size);
    int rc = 0;
    if (dims[0]) {
        tq_status st = tq_set_placement(!strcmp(where, "cpu") ? TQ_WHERE_CPU : !strcmp(where, "cuda") ? TQ_WHERE_CUDA : TQ_WHERE_ANY);
        if (st != TQ_SUCCESS) {
            fprintf(stderr, "taskqcd info: %s\n", tq_last_error());
            rc = 2;
        } else {
            printf("  placement: --where %s\n", where);
            rc = print_distribution(dims, block, procs);
        }
        tq_set_placement(TQ_WHERE_ANY);
    }
    tq_finalize();
    return rc;
}
