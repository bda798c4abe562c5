/* taskqcd: the command-line tool (in the spirit of QUDA's test drivers). */
#include "config.h"
#include "cli.h"
#include "taskqcd.h"
#ifdef TQ_SIMGRID
#include <starpu.h>   /* SimGrid mode renames main: its file must see StarPU's header */
#endif

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *out)
{
    fprintf(out,
        "usage: taskqcd COMMAND [options]\n"
        "\n"
        "commands:\n"
        "  propagator the main job: solve for the 12 point sources and print the pion\n"
        "            correlator (--gauge FILE or a generated field; --inv-type, --prec-sloppy ...)\n"
        "  generate  quenched SU(3) configurations by heat bath and overrelaxation:\n"
        "            --dim X Y Z T --beta B --sweeps N --or K --seed S --out FILE\n"
        "  demo      generate or load a gauge field, print its plaquette, then time\n"
        "            BLAS/reduction kernels on every worker kind\n"
        "  info      show the StarPU workers, scheduler and build options\n"
        "  gauge     gauge files: info FILE | convert IN OUT --format F | generate ...\n"
        "  blas      time BLAS-1 kernels: --dim X Y Z T --prec P --op LIST --niter K\n"
        "  dslash    apply and time a Wilson operator, checked against the reference:\n"
        "            --dim X Y Z T --prec P --recon R --test dslash|mat|matpc|matpcdagmatpc\n"
        "\n"
        "runtime options (every command that starts StarPU):\n"
        "  --ncpus N --ncuda N --sched POLICY --verbosity N --quiet --no-mpi --export-graph FILE\n"
        "  (StarPU's environment variables, e.g. STARPU_NCPU, STARPU_SCHED, also work)\n"
        "  default scheduler: dmdas with GPUs, StarPU's lws without\n"
        "\n"
        "taskqcd COMMAND --help shows the command's options.\n");
}


int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    if (!strcmp(argv[1], "--version")) {
        printf("taskqcd %d.%d.%d\n", TQ_VERSION_MAJOR, TQ_VERSION_MINOR, TQ_VERSION_PATCH);
        return 0;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "demo")) return tq_cmd_demo(argc - 1, argv + 1);
    if (!strcmp(cmd, "info")) return tq_cmd_info(argc - 1, argv + 1);
    if (!strcmp(cmd, "gauge")) return tq_cmd_gauge(argc - 1, argv + 1);
    if (!strcmp(cmd, "blas")) return tq_cmd_blas(argc - 1, argv + 1);
    if (!strcmp(cmd, "dslash")) return tq_cmd_dslash(argc - 1, argv + 1);
    if (!strcmp(cmd, "propagator")) return tq_cmd_propagator(argc - 1, argv + 1);
    if (!strcmp(cmd, "generate")) return tq_cmd_generate(argc - 1, argv + 1);
    fprintf(stderr, "taskqcd: unknown command '%s'\n\n", cmd);
    usage(stderr);
    return 2;
}
