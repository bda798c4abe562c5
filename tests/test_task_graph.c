/* The task-graph export (tq_init_params.task_graph, tasks/task_graph.c): Wilson M_pc applied
 * twice and a norm over 2 blocks on 2 CPU workers, then tq_finalize writes the graph. The
 * file must hold every task this process submitted (tq_internal_tasks_submitted counts them
 * as they go to StarPU or into a chain), as many packs, interiors and exteriors as blocks
 * times hopping terms, a partial-sum task per block and their combine; every dependency
 * must point forward, every exterior must read a face that a pack of the other block
 * wrote (RAW), and the combine must read every block's partial sums; the DOT drawing beside
 * it must have the same dependencies. After a calibrating run (STARPU_CALIBRATE=1, a private
 * STARPU_HOME) every operator task carries its expected time on a CPU worker from the
 * performance models, and none on a CUDA worker (none started). A path in a missing folder
 * leaves no file (and no temporary) behind; without a path no file is written. */
#define _POSIX_C_SOURCE 200809L
#include "tq_test.h"
#include "dirac_test_util.h"
#include "tq_tasks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { MAX_TASKS = 4096 };

typedef struct graph {
    long ntasks, nedges;
    char codelet[MAX_TASKS][48];
    int nin[MAX_TASKS];                 /* incoming RAW edges */
    int raw_from_pack[MAX_TASKS];       /* of them, from a pack task */
    int raw_from_norm[MAX_TASKS];       /* from a norm's partial-sum task */
    int cpu_cost[MAX_TASKS];            /* the expected CPU time is a number > 0 */
    int cuda_cost[MAX_TASKS];           /* the expected CUDA time is not null */
    int backward;                       /* edges not from an earlier to a later task */
    int format_ok;
} graph;

/* The whole file into memory (NULL on failure). */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    const long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) { free(s); s = NULL; }
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* Reads what the checks need from the JSON the library writes (one task and one edge per
 * line); 0 on success. */
static int read_graph(const char *path, graph *g)
{
    memset(g, 0, sizeof *g);
    char *s = slurp(path);
    if (!s) return -1;
    g->format_ok = strstr(s, "\"format\": \"taskqcd-task-graph\"") != NULL;
    const char *tasks = strstr(s, "\"tasks\": ["), *edges = strstr(s, "\"edges\": [");
    if (!tasks || !edges) { free(s); return -1; }
    for (const char *p = tasks; (p = strstr(p, "{\"id\": ")) && p < edges; p++) {
        long id;
        char name[48];
        if (sscanf(p, "{\"id\": %ld, \"codelet\": \"%47[^\"]\"", &id, name) != 2 || id != g->ntasks || id >= MAX_TASKS) {
            free(s);
            return -1;
        }
        snprintf(g->codelet[id], sizeof g->codelet[id], "%s", name);
        const char *c = strstr(p, "\"cost_us\": {\"cpu\": ");
        double us = 0;
        if (c && c < edges) {
            c += strlen("\"cost_us\": {\"cpu\": ");
            g->cpu_cost[id] = sscanf(c, "%lf", &us) == 1 && us > 0;
            const char *cu = strstr(c, "\"cuda\": ");
            g->cuda_cost[id] = cu && strncmp(cu + strlen("\"cuda\": "), "null", 4) != 0;
        }
        g->ntasks++;
    }
    for (const char *p = edges + 10; (p = strchr(p, '[')); p++) {
        long from, to;
        int h;
        char kind[8];
        if (sscanf(p, "[%ld, %ld, %d, \"%7[A-Z]\"]", &from, &to, &h, kind) != 4) continue;
        g->nedges++;
        if (from < 0 || to >= g->ntasks || from >= to) { g->backward++; continue; }
        if (strcmp(kind, "RAW")) continue;
        g->nin[to]++;
        if (strstr(g->codelet[from], "pack")) g->raw_from_pack[to]++;
        if (strstr(g->codelet[from], "norm2")) g->raw_from_norm[to]++;
    }
    free(s);
    return 0;
}

/* Lines of the DOT file that draw a dependency; -1 without the file or its header. */
static long dot_edges(const char *path)
{
    char *s = slurp(path);
    if (!s) return -1;
    long n = strncmp(s, "digraph taskqcd {", 17) ? -1 : 0;
    for (const char *p = s; n >= 0 && (p = strstr(p, " -> ")); p++) n++;
    free(s);
    return n;
}

static long count_named(const graph *g, const char *part)
{
    long n = 0;
    for (long t = 0; t < g->ntasks; t++) n += strstr(g->codelet[t], part) != NULL;
    return n;
}

/* Starts the runtime writing its graph to path (NULL: none), applies M_pc twice and takes a
 * norm over 2 blocks, `rounds` times; returns the tasks submitted between tq_init and
 * tq_finalize, -1 on failure. */
static long run_workload(const char *path, int rounds)
{
    tq_init_params ip;
    tq_init_params_default(&ip);
    ip.ncpus = 2;
    ip.ncuda = 0;
    ip.verbosity = 0;
    ip.use_mpi = 0;
    ip.task_graph = path;
    const long start = tq_internal_tasks_submitted();
    if (tq_init(&ip) != TQ_SUCCESS) {
        CHECK(0, "tq_init: %s", tq_last_error());
        return -1;
    }
    CHECK_OK(tq_set_placement(TQ_WHERE_CPU));
    const int dims[4] = {8, 8, 8, 8}, block[4] = {8, 8, 8, 4};
    tq_host_gauge hg;
    CHECK_OK(tq_host_gauge_alloc(&hg, dims));
    CHECK_OK(tq_host_gauge_weak(&hg, 3, 0.2));
    /* the whole lattice's sites, the even ones read */
    double *src = calloc((size_t)8 * 8 * 8 * 8 * 24, sizeof *src);
    for (int i = 0; i < 8 * 8 * 8 * 8 * 24; i++) src[i] = (double)(i % 7) - 3.0;
    setup S;
    long before = -1;
    if (!setup_make(&S, dims, block, &hg, TQ_DOUBLE, TQ_RECON_12, 0.12)) {
        tq_field *in = spinor(&S, TQ_DOUBLE, TQ_EVEN, src), *out = spinor(&S, TQ_DOUBLE, TQ_EVEN, NULL);
        CHECK_OK(tq_wait_all());
        before = tq_internal_tasks_submitted();
        for (int r = 0; r < rounds; r++) {
            double n2 = 0;
            CHECK_OK(tq_dirac_matpc(S.dirac, out, in, TQ_EVEN, 0));
            CHECK_OK(tq_dirac_matpc(S.dirac, in, out, TQ_EVEN, 0));
            CHECK_OK(tq_blas_norm2(in, &n2));
            CHECK(n2 > 0, "norm %g", n2);
        }
        tq_field_destroy(in);
        tq_field_destroy(out);
        setup_free(&S);
    }
    const long submitted = tq_internal_tasks_submitted() - start;
    printf("test_task_graph: %ld tasks submitted, %ld of them for the two M_pc and the norm\n", submitted,
           before >= 0 ? tq_internal_tasks_submitted() - before : -1);
    tq_host_gauge_free(&hg);
    free(src);
    CHECK_OK(tq_finalize());
    return submitted;
}

int main(void)
{
    unsetenv("TQ_TASK_GRAPH");
    char dir[] = "/tmp/test_task_graph.XXXXXX";
    if (!mkdtemp(dir)) return tq_test_skip("test_task_graph", "no temporary folder");
    char path[256], dot[300], missing[256], tmp[300];
    snprintf(path, sizeof path, "%s/graph.json", dir);
    snprintf(dot, sizeof dot, "%s.dot", path);
    snprintf(missing, sizeof missing, "%s/no/such/folder/graph.json", dir);
    snprintf(tmp, sizeof tmp, "%s.tmp", missing);
    /* performance models of this test's own, calibrated by a first run without a graph */
    setenv("STARPU_HOME", dir, 1);
    setenv("STARPU_CALIBRATE", "1", 1);
    /* StarPU drops a measurement more than 50 % from the running mean and counts it as an
     * error (and flushes the entry once errors outnumber samples), so on a loaded machine or
     * under the sanitizers, where the first, cold task is many times slower than the rest,
     * an entry could stay below the 10 samples that make it calibrated: keep them all. */
    setenv("STARPU_HISTORY_MAX_ERROR", "1000000", 1);
    run_workload(NULL, 8);

    const long submitted = run_workload(path, 1);
    static graph g;
    CHECK(read_graph(path, &g) == 0, "cannot read the graph back from %s", path);
    CHECK(g.format_ok, "the file does not say its format");
    CHECK(g.ntasks == submitted, "%ld tasks in the file, %ld submitted", g.ntasks, submitted);
    CHECK(g.nedges > 0 && g.backward == 0, "%ld dependencies, %d of them not forward", g.nedges, g.backward);
    /* M_pc is two hopping terms: per block and term one pack, one interior, one exterior */
    const long packs = count_named(&g, "pack"), interiors = count_named(&g, "interior"),
               exteriors = count_named(&g, "exterior");
    printf("test_task_graph: %ld tasks, %ld dependencies; %ld packs, %ld interiors, %ld exteriors\n", g.ntasks,
           g.nedges, packs, interiors, exteriors);
    CHECK(packs == interiors && interiors == exteriors && exteriors >= 2 * 2 * 2 && exteriors % 2 == 0,
          "packs %ld, interiors %ld, exteriors %ld (2 blocks, hopping terms in pairs)", packs, interiors, exteriors);
    int ext_ok = 1, combine_ok = 0, op_costed = 1, cuda_costed = 0;
    for (long t = 0; t < g.ntasks; t++) {
        if (strstr(g.codelet[t], "dslash") && !g.cpu_cost[t]) op_costed = 0;
        cuda_costed |= g.cuda_cost[t];
        if (strstr(g.codelet[t], "exterior") && g.raw_from_pack[t] < 1) ext_ok = 0;
        if (strstr(g.codelet[t], "combine") && g.raw_from_norm[t] == 2) combine_ok = 1;
    }
    CHECK(ext_ok, "an exterior task reads no face a pack wrote");
    CHECK(count_named(&g, "norm2") == 2, "%ld partial-sum tasks of the norm (2 blocks)", count_named(&g, "norm2"));
    CHECK(combine_ok, "no task combines the two blocks' partial sums");
    CHECK(op_costed, "an operator task without its expected CPU time after a calibrating run");
    CHECK(!cuda_costed, "a task with an expected CUDA time on a machine without a CUDA worker");
    const long drawn = dot_edges(dot);
    CHECK(drawn == g.nedges, "the DOT file %s draws %ld dependencies, the JSON has %ld", dot, drawn, g.nedges);
    CHECK(remove(dot) == 0, "removing %s", dot);

    /* no path: nothing written; a path that cannot be written: nothing left behind */
    CHECK(remove(path) == 0, "removing %s", path);
    run_workload(NULL, 1);
    CHECK(access(path, F_OK) != 0, "a graph was written without a path");
    run_workload(missing, 1);
    CHECK(access(missing, F_OK) != 0 && access(tmp, F_OK) != 0, "a graph or its temporary in a missing folder");
    char rm[300];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);   /* and the performance models under it */
    CHECK(system(rm) == 0, "removing %s", dir);
    return tq_test_finish("test_task_graph");
}
