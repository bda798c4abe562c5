/* taskqcd info: what StarPU started with and how TaskQCD was built. */
#include "cli.h"
#include "taskqcd.h"

#include <stdio.h>
#include <string.h>

int tq_cmd_info(int argc, char **argv)
{
    tq_init_params p;
    tq_init_params_default(&p);
    if (tq_init_params_from_args(&p, &argc, argv)) {
        fprintf(stderr, "taskqcd info: %s\n", tq_last_error());
        return 2;
    }
    if (argc > 1) {
        if (strcmp(argv[1], "--help")) fprintf(stderr, "taskqcd info: unknown option '%s'\n", argv[1]);
        printf("usage: taskqcd info [--ncpus N] [--ncuda N] [--sched POLICY]\n");
        return strcmp(argv[1], "--help") ? 2 : 0;
    }
    const int init = tq_cli_init("taskqcd info", &p);
    if (init) return init;
    tq_runtime_info info;
    tq_get_runtime_info(&info);
    printf("TaskQCD %d.%d.%d\n", TQ_VERSION_MAJOR, TQ_VERSION_MINOR, TQ_VERSION_PATCH);
    printf("  StarPU %s, scheduler %s\n", info.starpu_version, info.sched);
    printf("  workers: %d CPU, %d CUDA\n", info.ncpu_workers, info.ncuda_workers);
    printf("  built with CUDA: %s, MPI: %s (rank %d of %d)\n", info.built_with_cuda ? "yes" : "no",
           info.built_with_mpi ? "yes" : "no", info.mpi_rank, info.mpi_size);
    tq_finalize();
    return 0;
}
