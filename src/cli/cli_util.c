/* Small option-parsing helpers shared by the taskqcd commands and the benchmarks. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int tq_cli_parse_dims(int argc, char **argv, int *i, int dims[4])
{
    if (*i + 4 >= argc) return -1;
    for (int mu = 0; mu < 4; mu++) {
        char *end;
        long v = strtol(argv[*i + 1 + mu], &end, 10);
        if (*end || v <= 0 || v > 1 << 16) return -1;
        dims[mu] = (int)v;
    }
    *i += 4;
    return 0;
}

int tq_cli_list_has(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == n && !strncmp(p, name, n)) return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

int tq_cli_parse_positive(const char *s, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v <= 0 || v > 1 << 30) return -1;
    *out = (int)v;
    return 0;
}

double tq_cli_now(void)
{
    return tq_wall_time();   /* the simulated time under SimGrid */
}

void tq_cli_workers_for_placement(tq_init_params *ip, const char *where)
{
    if (strcmp(where, "cuda")) return;
    /* CPU workers only wait then: a few suffice for the host-side work (and each is a
     * thread StarPU starts and binds) */
    if (ip->ncpus < 0 && !getenv("STARPU_NCPU") && !getenv("STARPU_NCPUS")) ip->ncpus = TQ_CLI_GPU_ONLY_NCPUS;
}

int tq_cli_init(const char *me, const tq_init_params *p)
{
    const tq_status s = tq_init(p);
    if (s == TQ_SUCCESS) {
        /* under mpirun, rank 0 prints the results (every rank still reports its errors) */
        tq_runtime_info ri;
        if (tq_get_runtime_info(&ri) == TQ_SUCCESS && ri.mpi_rank > 0 && !freopen("/dev/null", "w", stdout))
            fprintf(stderr, "%s: rank %d: cannot silence its output\n", me, ri.mpi_rank);
        return 0;
    }
    fprintf(stderr, "%s: %s\n", me, tq_last_error());
    return s == TQ_ERR_INVALID_ARG ? 2 : 1;
}

int tq_cli_agree(const char *me, int rc)
{
    const tq_status s = tq_status_agree(rc == 0 ? TQ_SUCCESS : rc == 2 ? TQ_ERR_INVALID_ARG : TQ_ERR_IO);
    if (s == TQ_SUCCESS || rc != 0) return rc;
    fprintf(stderr, "%s: %s\n", me, tq_last_error());
    return s == TQ_ERR_INVALID_ARG ? 2 : 1;
}
