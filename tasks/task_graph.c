/* The task graph (TQ_TASK_GRAPH=FILE, or --export-graph FILE on every command): every task
 * this rank submits, in submission order, with its codelet, owner, placement, priority and
 * data accesses (handle, mode), and the dependencies StarPU derives from that order (a read
 * after the handle's last write, a write after its last write and after the reads since),
 * written at tq_finalize as JSON (FILE, or FILE.RANK on several ranks), and for graphs of
 * at most DOT_MAX_TASKS tasks also as Graphviz DOT (the same name with .dot added), for
 * schedulers run offline on TaskQCD's workloads and for looking at. The tasks are the kernels as the library submits them,
 * before chains group them (a chain runs its tasks in this order). The format is in
 * doc/design.md ("Task-graph export"). */
#include "config.h"
#include "tq_tasks.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DOT_MAX_TASKS = 2000 };   /* larger graphs are unreadable drawn */

typedef struct graph_access {
    int handle;   /* index into handles */
    int mode;     /* STARPU_R, STARPU_W or STARPU_RW */
} graph_access;

typedef struct graph_task {
    const char *codelet;
    int worker, priority, first, naccess;   /* accesses[first .. first + naccess) */
    tq_where where;
    double cost_us[2];   /* expected on a CPU and a CUDA worker; NaN: no calibrated model */
} graph_task;

typedef struct graph_handle {
    starpu_data_handle_t h;
    size_t bytes;
    long last_writer;       /* task index, -1: none yet */
    long *readers;          /* tasks that read it since its last write */
    int nreaders, cap_readers;
} graph_handle;

typedef struct graph_edge {
    long from, to;
    int handle;
    char kind;   /* 'R': read after write, 'A': write after read, 'W': write after write */
} graph_edge;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int state = -1;   /* -1: not looked at since tq_init, 0: off, 1: on */
static char graph_path[4096];
static const char *path_set;   /* tq_task_graph_set_path's, before the environment's */
static graph_task *tasks;
static graph_access *accesses;
static graph_handle *handles;
static graph_edge *edges;
static long ntasks, cap_tasks, naccesses, cap_accesses, nedges, cap_edges;
static int nhandles, cap_handles, failed;
/* handle -> index: open addressing, capacity a power of two */
static int *slots;
static int nslots;

void tq_task_graph_set_path(const char *path)
{
    pthread_mutex_lock(&lock);
    path_set = path && *path ? path : NULL;
    state = -1;
    pthread_mutex_unlock(&lock);
}

int tq_task_graph_on(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s >= 0) return s;
    pthread_mutex_lock(&lock);
    if (state < 0) {
        const char *p = path_set ? path_set : getenv("TQ_TASK_GRAPH");
        const int on = p && *p && strlen(p) < sizeof graph_path - 16;
        if (on) snprintf(graph_path, sizeof graph_path, "%s", p);
        __atomic_store_n(&state, on, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return state;
}

static int grow(void **p, long *cap, long need, size_t size)
{
    if (need <= *cap) return 0;
    long c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

static size_t hash_handle(starpu_data_handle_t h)
{
    uintptr_t x = (uintptr_t)h;
    x ^= x >> 17;
    x *= (uintptr_t)0x9e3779b97f4a7c15ull;
    return (size_t)(x ^ (x >> 29));
}

/* The index of h, added when new; -1 without memory. */
static int handle_index(starpu_data_handle_t h)
{
    if (2 * (nhandles + 1) > nslots) {   /* rehash at half full */
        const int n = nslots ? 2 * nslots : 1024;
        int *s = malloc((size_t)n * sizeof *s);
        if (!s) return -1;
        for (int i = 0; i < n; i++) s[i] = -1;
        for (int k = 0; k < nhandles; k++) {
            size_t i = hash_handle(handles[k].h) & (size_t)(n - 1);
            while (s[i] >= 0) i = (i + 1) & (size_t)(n - 1);
            s[i] = k;
        }
        free(slots);
        slots = s;
        nslots = n;
    }
    size_t i = hash_handle(h) & (size_t)(nslots - 1);
    while (slots[i] >= 0) {
        if (handles[slots[i]].h == h) return slots[i];
        i = (i + 1) & (size_t)(nslots - 1);
    }
    long cap = cap_handles;
    if (grow((void **)&handles, &cap, nhandles + 1, sizeof *handles)) return -1;
    cap_handles = (int)cap;
    handles[nhandles] = (graph_handle){h, starpu_data_get_size(h), -1, NULL, 0, 0};
    slots[i] = nhandles;
    return nhandles++;
}

static int add_edge(long from, long to, int handle, char kind)
{
    if (from < 0 || from == to) return 0;
    if (grow((void **)&edges, &cap_edges, nedges + 1, sizeof *edges)) return -1;
    edges[nedges++] = (graph_edge){from, to, handle, kind};
    return 0;
}

/* One access of task t: its edges, then the handle's history. */
static int access_handle(long t, int k, int mode)
{
    graph_handle *g = &handles[k];
    if (mode & STARPU_W) {
        if (add_edge(g->last_writer, t, k, 'W')) return -1;
        for (int r = 0; r < g->nreaders; r++)
            if (add_edge(g->readers[r], t, k, 'A')) return -1;
        g->last_writer = t;
        g->nreaders = 0;
        return 0;
    }
    if (add_edge(g->last_writer, t, k, 'R')) return -1;
    long cap = g->cap_readers;
    if (grow((void **)&g->readers, &cap, g->nreaders + 1, sizeof *g->readers)) return -1;
    g->cap_readers = (int)cap;
    g->readers[g->nreaders++] = t;
    return 0;
}

/* The task's expected time on the first CPU and the first CUDA worker, from its codelet's
 * performance model (NaN where the model has too few measurements of data this size, the
 * codelet has no such implementation or the machine no such worker): a task built for
 * the question only, never submitted. */
static void expected_costs(const struct starpu_codelet *cl, const void *arg, size_t asize,
                           const struct starpu_data_descr *d, int n, double cost[2])
{
    cost[0] = cost[1] = NAN;
    if (!cl->model) return;
    struct starpu_task *t = starpu_task_create();
    if (!t) return;
    if (n > STARPU_NMAXBUFS) {   /* more buffers than the task holds: StarPU's dynamic arrays (freed with it) */
        t->dyn_handles = malloc((size_t)n * sizeof *t->dyn_handles);
        t->dyn_modes = malloc((size_t)n * sizeof *t->dyn_modes);
        if (!t->dyn_handles || !t->dyn_modes) {
            t->destroy = 0;
            starpu_task_destroy(t);
            return;
        }
    }
    t->cl = (struct starpu_codelet *)cl;
    t->cl_arg = (void *)arg;   /* cl_arg_free stays 0: the caller's */
    t->cl_arg_size = asize;
    if (cl->nbuffers == STARPU_VARIABLE_NBUFFERS) t->nbuffers = n;
    for (int i = 0; i < n; i++) {
        STARPU_TASK_SET_HANDLE(t, d[i].handle, i);
        STARPU_TASK_SET_MODE(t, d[i].mode, i);
    }
    const enum starpu_worker_archtype kind[2] = {STARPU_CPU_WORKER, STARPU_CUDA_WORKER};
    const int has_impl[2] = {cl->cpu_funcs[0] != NULL, cl->cuda_funcs[0] != NULL};
    for (int k = 0; k < 2; k++) {
        int w;
        if (!has_impl[k] || starpu_worker_get_ids_by_type(kind[k], &w, 1) < 1) continue;
        cost[k] = starpu_task_expected_length(t, starpu_worker_get_perf_archtype(w, STARPU_NMAX_SCHED_CTXS), 0);
    }
    t->destroy = 0;   /* never submitted: destroyed here */
    starpu_task_destroy(t);
}

void tq_task_graph_add(const struct starpu_codelet *cl, const void *arg, size_t asize, int worker, tq_where where,
                       int priority, const struct starpu_data_descr *d, int n)
{
    double cost[2];
    expected_costs(cl, arg, asize, d, n, cost);   /* outside the lock: StarPU's own locks */
    pthread_mutex_lock(&lock);
    if (failed || grow((void **)&tasks, &cap_tasks, ntasks + 1, sizeof *tasks) ||
        grow((void **)&accesses, &cap_accesses, naccesses + n, sizeof *accesses)) {
        failed = 1;
        pthread_mutex_unlock(&lock);
        return;
    }
    const long t = ntasks++;
    tasks[t] = (graph_task){cl->name ? cl->name : "?", worker, priority, (int)naccesses, 0, where, {cost[0], cost[1]}};
    for (int i = 0; i < n && !failed; i++) {
        /* a handle twice in one task: one access, its modes merged (StarPU's view too) */
        const int k = handle_index(d[i].handle);
        if (k < 0) { failed = 1; break; }
        int j = 0;
        while (j < tasks[t].naccess && accesses[tasks[t].first + j].handle != k) j++;
        if (j < tasks[t].naccess) {
            accesses[tasks[t].first + j].mode |= (int)d[i].mode & STARPU_RW;
        } else {
            accesses[naccesses++] = (graph_access){k, (int)d[i].mode & STARPU_RW};
            tasks[t].naccess++;
        }
    }
    for (int j = 0; j < tasks[t].naccess && !failed; j++)
        if (access_handle(t, accesses[tasks[t].first + j].handle, accesses[tasks[t].first + j].mode)) failed = 1;
    pthread_mutex_unlock(&lock);
}

static const char *mode_name(int mode)
{
    return mode == STARPU_RW ? "RW" : mode & STARPU_W ? "W" : "R";
}

static const char *where_name(tq_where w)
{
    return w == TQ_WHERE_CPU ? "cpu" : w == TQ_WHERE_CUDA ? "cuda" : "any";
}

static int write_graph(FILE *f, int rank, int size)
{
    fprintf(f, "{\n  \"format\": \"taskqcd-task-graph\", \"version\": 1, \"rank\": %d, \"ranks\": %d,\n", rank, size);
    fprintf(f, "  \"workers\": [");
    const unsigned nw = starpu_worker_get_count();
    for (unsigned w = 0; w < nw; w++) {
        char name[64];
        starpu_worker_get_name((int)w, name, sizeof name);
        const enum starpu_worker_archtype a = starpu_worker_get_type((int)w);
        fprintf(f, "%s\n    {\"id\": %u, \"kind\": \"%s\", \"name\": \"", w ? "," : "", w,
                a == STARPU_CPU_WORKER ? "cpu" : a == STARPU_CUDA_WORKER ? "cuda" : "other");
        for (const char *c = name; *c; c++)
            if (*c != '"' && *c != '\\') fputc(*c, f);
        fputs("\"}", f);
    }
    fprintf(f, "\n  ],\n  \"handles\": [");
    for (int k = 0; k < nhandles; k++)
        fprintf(f, "%s\n    {\"id\": %d, \"bytes\": %zu}", k ? "," : "", k, handles[k].bytes);
    fprintf(f, "\n  ],\n  \"tasks\": [");
    for (long t = 0; t < ntasks; t++) {
        const graph_task *g = &tasks[t];
        fprintf(f, "%s\n    {\"id\": %ld, \"codelet\": \"%s\", \"owner\": %d, \"where\": \"%s\", \"priority\": %d, "
                "\"cost_us\": {", t ? "," : "", t, g->codelet, g->worker, where_name(g->where), g->priority);
        for (int k = 0; k < 2; k++) {
            fprintf(f, "%s\"%s\": ", k ? ", " : "", k ? "cuda" : "cpu");
            if (isnan(g->cost_us[k])) fputs("null", f);
            else fprintf(f, "%.3f", g->cost_us[k]);
        }
        fputs("}, \"accesses\": [", f);
        for (int j = 0; j < g->naccess; j++)
            fprintf(f, "%s[%d, \"%s\"]", j ? ", " : "", accesses[g->first + j].handle,
                    mode_name(accesses[g->first + j].mode));
        fputs("]}", f);
    }
    fprintf(f, "\n  ],\n  \"edges\": [");
    for (long e = 0; e < nedges; e++)
        fprintf(f, "%s\n    [%ld, %ld, %d, \"%s\"]", e ? "," : "", edges[e].from, edges[e].to, edges[e].handle,
                edges[e].kind == 'R' ? "RAW" : edges[e].kind == 'A' ? "WAR" : "WAW");
    fprintf(f, "\n  ]\n}\n");
    return ferror(f);
}

static int write_dot(FILE *f)
{
    fprintf(f, "digraph taskqcd {\n  node [shape=box, fontsize=10];\n");
    for (long t = 0; t < ntasks; t++)
        fprintf(f, "  t%ld [label=\"%ld %s\\nowner %d\"];\n", t, t, tasks[t].codelet, tasks[t].worker);
    for (long e = 0; e < nedges; e++)
        fprintf(f, "  t%ld -> t%ld [label=\"%s h%d\"];\n", edges[e].from, edges[e].to,
                edges[e].kind == 'R' ? "RAW" : edges[e].kind == 'A' ? "WAR" : "WAW", edges[e].handle);
    fprintf(f, "}\n");
    return ferror(f);
}

/* Writes path through a temporary file renamed onto it; 0 on success, else nothing left. */
static int write_atomic(const char *path, int (*writer)(FILE *, int, int), int (*dot)(FILE *), int rank, int size)
{
    char tmp[4400];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    int bad = !f || (writer ? writer(f, rank, size) : dot(f));
    if (f && fclose(f)) bad = 1;
    if (bad || rename(tmp, path)) {
        remove(tmp);
        return -1;
    }
    return 0;
}

static void clear(void)
{
    for (int k = 0; k < nhandles; k++) free(handles[k].readers);
    free(tasks); free(accesses); free(handles); free(edges); free(slots);
    tasks = NULL; accesses = NULL; handles = NULL; edges = NULL; slots = NULL;
    ntasks = cap_tasks = naccesses = cap_accesses = nedges = cap_edges = 0;
    nhandles = cap_handles = nslots = 0;
    failed = 0;
}

void tq_task_graph_finish(void)
{
    pthread_mutex_lock(&lock);
    if (state == 1) {
        int rank = 0, size = 1;
        tq_task_get_ranks(&rank, &size);
        char path[4200], dot[4300];
        if (size > 1) snprintf(path, sizeof path, "%s.%d", graph_path, rank);
        else snprintf(path, sizeof path, "%s", graph_path);
        snprintf(dot, sizeof dot, "%s.dot", path);
        if (failed) {
            fprintf(stderr, "taskqcd: task graph: out of memory while recording; %s not written\n", path);
        } else if (write_atomic(path, write_graph, NULL, rank, size)) {
            fprintf(stderr, "taskqcd: task graph: cannot write %s\n", path);
        } else {
            const int drawn = ntasks <= DOT_MAX_TASKS && !write_atomic(dot, NULL, write_dot, rank, size);
            fprintf(stderr, "taskqcd: task graph: %ld tasks, %ld dependencies in %s%s%s\n", ntasks, nedges, path,
                    drawn ? " and " : "", drawn ? dot : "");
        }
    }
    clear();
    state = -1;   /* the next tq_init looks again */
    pthread_mutex_unlock(&lock);
}
