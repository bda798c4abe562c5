/* The task log (TQ_TASK_LOG=FILE): every task's codelet (a chain's first and last entry),
 * worker, and submit, start and end times from StarPU's per-task profiling, and every face
 * that moves between ranks (posted, done), written at tq_finalize as a table for
 * bench/plot-tasks.py (a Gantt chart per worker, busy time, gaps). A plain StarPU build has
 * no FxT trace; this shows where the time between kernels goes without one. A trace folder
 * (tq_init_params.trace_dir, --trace DIR, TQ_TRACE) puts the table there as tasks.tsv and
 * adds summary.txt (per worker busy and idle time, per codelet count and times, bytes per
 * bus from StarPU's bus profiling) and gantt.svg (one row per worker, a bar per task
 * coloured by codelet, faces between ranks on a row of their own). */
#include "config.h"
#include "tq_tasks.h"
#include "chain.h"

#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { LOG_CAPACITY = 1 << 20 };   /* records kept; later ones are counted as dropped */

typedef struct log_record {
    const char *name, *first, *last;   /* codelet; a chain's first and last entry */
    int nops, worker, peer;            /* peer: the other rank of a face transfer, else -1 */
    double submit, start, end;         /* µs, StarPU's clock */
} log_record;

/* What a logged task's callback needs: its labels, and the callback it replaces. */
typedef struct log_arg {
    const char *name, *first, *last;
    int nops;
    void (*also)(void *);
    void *also_arg;
} log_arg;

static int state = -1;                 /* -1: not looked at yet, 0: off, 1: on */
static const char *log_path;
static char trace_dir[4096];           /* empty: no trace folder */
static char trace_log[4200];

void tq_task_log_set_trace(const char *dir)
{
    snprintf(trace_dir, sizeof trace_dir, "%s", dir ? dir : "");
    snprintf(trace_log, sizeof trace_log, "%s/tasks.tsv", trace_dir);
    __atomic_store_n(&state, -1, __ATOMIC_RELEASE);
}
static log_record *records;
static long nrecords, dropped;

int tq_task_log_on(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s >= 0) return s;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (state < 0) {
        const char *p = trace_dir[0] ? trace_log : getenv("TQ_TASK_LOG");
        int on = p && *p;
        if (on && !(records = malloc(LOG_CAPACITY * sizeof *records))) {
            fprintf(stderr, "taskqcd: TQ_TASK_LOG: no memory for the task log; not logging\n");
            on = 0;
        }
        if (on) {
            log_path = p;
            starpu_profiling_status_set(STARPU_PROFILING_ENABLE);
        }
        __atomic_store_n(&state, on, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return state;
}

static log_record *new_record(void)
{
    long i = __atomic_fetch_add(&nrecords, 1, __ATOMIC_RELAXED);
    if (i >= LOG_CAPACITY) {
        __atomic_add_fetch(&dropped, 1, __ATOMIC_RELAXED);
        return NULL;
    }
    return &records[i];
}

static void log_callback(void *p)
{
    log_arg *a = p;
    struct starpu_task *task = starpu_task_get_current();
    struct starpu_profiling_task_info *info = task ? task->profiling_info : NULL;
    log_record *r = info ? new_record() : NULL;
    if (r) {
        *r = (log_record){a->name, a->first, a->last, a->nops, info->workerid, -1,
                          starpu_timing_timespec_to_us(&info->submit_time), starpu_timing_timespec_to_us(&info->start_time),
                          starpu_timing_timespec_to_us(&info->end_time)};
    }
    if (a->also) a->also(a->also_arg);
    free(a);
}

void tq_task_log_attach(struct starpu_task *task)
{
    log_arg *a = malloc(sizeof *a);
    if (!a) return;
    *a = (log_arg){task->cl->name ? task->cl->name : "?", NULL, NULL, 0, task->callback_func, task->callback_arg};
    if (task->cl == &tq_cl_chain && task->cl_arg) {
        const tq_chain_head *h = task->cl_arg;
        const tq_chain_op *ops = (const tq_chain_op *)(h + 1);
        a->nops = h->nops;
        if (h->nops > 0) {
            a->first = ops[0].cl->name;
            a->last = ops[h->nops - 1].cl->name;
        }
    }
    task->callback_func = log_callback;
    task->callback_arg = a;
}

double tq_task_log_now(void) { return starpu_timing_now(); }

void tq_task_log_transfer(const char *what, int peer, double posted)
{
    log_record *r = new_record();
    if (r) *r = (log_record){what, NULL, NULL, 0, -1, peer, posted, posted, starpu_timing_now()};
}

/* ---- the trace folder's summary and Gantt chart --------------------------------------- */

/* A record's label: its codelet, or a chain's first and last entry. */
static void record_label(const log_record *r, char *buf, size_t size)
{
    if (r->first) snprintf(buf, size, "chain %s..%s", r->first, r->last);
    else snprintf(buf, size, "%s", r->name);
}

typedef struct label_stat {
    char label[160];
    long count;
    double total;
} label_stat;

/* Index of label in stats (added if new; -1 when the table is full). */
static int label_index(label_stat *stats, int *n, int cap, const char *label)
{
    for (int i = 0; i < *n; i++)
        if (!strcmp(stats[i].label, label)) return i;
    if (*n == cap) return -1;
    snprintf(stats[*n].label, sizeof stats[*n].label, "%s", label);
    stats[*n].count = 0;
    stats[*n].total = 0;
    return (*n)++;
}

/* A colour per label: a hue from its hash (the same label, the same colour in every chart). */
static void label_colour(const char *label, char out[8])
{
    uint32_t h = 2166136261u;
    for (const char *c = label; *c; c++) h = (h ^ (unsigned char)*c) * 16777619u;
    const double hue = (h % 360) / 60.0, sat = 0.55 + 0.3 * ((h >> 9) % 100) / 100.0, val = 0.85;
    const double c = val * sat, x = c * (1 - fabs(fmod(hue, 2.0) - 1)), m = val - c;
    double rgb[3] = {0, 0, 0};
    const int sector = (int)hue % 6;
    const double tab[6][3] = {{c, x, 0}, {x, c, 0}, {0, c, x}, {0, x, c}, {x, 0, c}, {c, 0, x}};
    for (int k = 0; k < 3; k++) rgb[k] = tab[sector][k] + m;
    snprintf(out, 8, "#%02x%02x%02x", (int)(rgb[0] * 255), (int)(rgb[1] * 255), (int)(rgb[2] * 255));
}

static void xml_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else fputc(*s, f);
    }
}

/* path = the trace folder's name.suffix (.RANK on several ranks); 0 on success. */
static int trace_path(char *path, size_t size, const char *name, int rank, int nranks)
{
    const int n = nranks > 1 ? snprintf(path, size, "%s/%s.%d", trace_dir, name, rank) : snprintf(path, size, "%s/%s", trace_dir, name);
    return n < 0 || (size_t)n >= size;
}

/* summary.txt and gantt.svg from the n records (times from the first submit). */
static void write_trace(const log_record *rec, long n, double t0, int rank, int nranks)
{
    enum { MAX_LABELS = 512 };
    const int nworkers = (int)starpu_worker_get_count();
    double *busy = calloc((size_t)nworkers + 1, sizeof *busy);
    long *count = calloc((size_t)nworkers + 1, sizeof *count);
    label_stat *stats = calloc(MAX_LABELS, sizeof *stats);
    if (!busy || !count || !stats) {
        fprintf(stderr, "taskqcd: trace: out of memory for the summary\n");
        free(busy); free(count); free(stats);
        return;
    }
    int nlabels = 0, transfers = 0;
    double first = INFINITY, last = -INFINITY;
    for (long i = 0; i < n; i++) {
        const log_record *r = &rec[i];
        first = fmin(first, r->start - t0);
        last = fmax(last, r->end - t0);
        if (r->worker >= 0 && r->worker < nworkers) {
            busy[r->worker] += r->end - r->start;
            count[r->worker]++;
        } else {
            transfers++;
        }
        char label[160];
        record_label(r, label, sizeof label);
        const int k = label_index(stats, &nlabels, MAX_LABELS, label);
        if (k >= 0) stats[k].count++, stats[k].total += r->end - r->start;
    }
    if (n == 0) first = last = 0;
    const double span = last - first;
    char path[4300];
    FILE *f = trace_path(path, sizeof path, "summary.txt", rank, nranks) ? NULL : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "taskqcd: trace: cannot write %s\n", path);
    } else {
        fprintf(f, "# taskqcd trace: rank %d of %d, %ld records (%ld dropped), span %.1f us from the first task's start\n",
                rank, nranks, n, dropped, span);
        fprintf(f, "\n# workers: tasks, busy and idle time over the span\nworker\tkind\ttasks\tbusy_us\tidle_us\tbusy_fraction\n");
        for (int w = 0; w < nworkers; w++) {
            char name[64];
            starpu_worker_get_name(w, name, sizeof name);
            for (char *c = name; *c; c++)
                if (*c == ' ' || *c == '\t') *c = '_';
            const enum starpu_worker_archtype t = starpu_worker_get_type(w);
            fprintf(f, "%s\t%s\t%ld\t%.1f\t%.1f\t%.4f\n", name, t == STARPU_CPU_WORKER ? "cpu" : t == STARPU_CUDA_WORKER ? "cuda" : "other",
                    count[w], busy[w], span - busy[w], span > 0 ? busy[w] / span : 0.0);
        }
        fprintf(f, "\n# codelets (a chain by its first and last entry): count, mean and total time\ncodelet\tcount\tmean_us\ttotal_us\n");
        for (int k = 0; k < nlabels; k++)
            fprintf(f, "%s\t%ld\t%.2f\t%.1f\n", stats[k].label, stats[k].count, stats[k].total / stats[k].count, stats[k].total);
        fprintf(f, "\n# buses (StarPU's bus profiling since tq_init): bytes and transfers\nfrom\tto\tbytes\ttransfers\n");
        for (int b = 0; b < starpu_bus_get_count(); b++) {
            struct starpu_profiling_bus_info info;
            if (starpu_bus_get_profiling_info(b, &info)) continue;
            char src[64], dst[64];
            starpu_memory_node_get_name((unsigned)starpu_bus_get_src(b), src, sizeof src);
            starpu_memory_node_get_name((unsigned)starpu_bus_get_dst(b), dst, sizeof dst);
            fprintf(f, "%s\t%s\t%lld\t%d\n", src, dst, info.transferred_bytes, info.transfer_count);
        }
        if (fclose(f)) fprintf(stderr, "taskqcd: trace: error writing %s\n", path);
    }
    /* the Gantt chart: rows of workers (and faces between ranks), time to the right */
    f = trace_path(path, sizeof path, "gantt.svg", rank, nranks) ? NULL : fopen(path, "w");
    if (!f) {
        fprintf(stderr, "taskqcd: trace: cannot write %s\n", path);
    } else {
        const int rows = nworkers + (transfers > 0), row_h = 18, left = 150, width = 1200, top = 30;
        const int legend = nlabels < 24 ? nlabels : 24, height = top + rows * row_h + 40 + 16 * legend;
        const double scale = span > 0 ? width / span : 1.0;
        fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" font-family=\"sans-serif\" "
                "font-size=\"11\">\n<text x=\"4\" y=\"16\">taskqcd trace, rank %d of %d: %ld tasks over %.1f us</text>\n",
                left + width + 10, height, rank, nranks, n, span);
        for (int w = 0; w < rows; w++) {
            char name[64] = "faces between ranks";
            if (w < nworkers) starpu_worker_get_name(w, name, sizeof name);
            fprintf(f, "<text x=\"4\" y=\"%d\">", top + w * row_h + 13);
            xml_text(f, name);
            fprintf(f, "</text>\n");
        }
        for (long i = 0; i < n; i++) {
            const log_record *r = &rec[i];
            const int row = r->worker >= 0 && r->worker < nworkers ? r->worker : nworkers;
            char label[160], colour[8];
            record_label(r, label, sizeof label);
            label_colour(label, colour);
            const double x = left + (r->start - t0 - first) * scale, w = fmax((r->end - r->start) * scale, 0.5);
            fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\"><title>", x, top + row * row_h + 2,
                    w, row_h - 4, colour);
            xml_text(f, label);
            fprintf(f, " %.1f us</title></rect>\n", r->end - r->start);
        }
        const int ly = top + rows * row_h + 20;
        fprintf(f, "<text x=\"4\" y=\"%d\">codelets (the %d of most time):</text>\n", ly, legend);
        for (int shown = 0; shown < legend; shown++) {   /* by total time */
            int best = -1;
            for (int k = 0; k < nlabels; k++)
                if (stats[k].count >= 0 && (best < 0 || stats[k].total > stats[best].total)) best = k;
            if (best < 0) break;
            char colour[8];
            label_colour(stats[best].label, colour);
            fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/><text x=\"%d\" y=\"%d\">", left,
                    ly + 6 + 16 * shown, colour, left + 18, ly + 16 + 16 * shown);
            xml_text(f, stats[best].label);
            fprintf(f, " (%ld, %.1f us)</text>\n", stats[best].count, stats[best].total);
            stats[best].count = -1;   /* shown */
        }
        fprintf(f, "</svg>\n");
        if (fclose(f)) fprintf(stderr, "taskqcd: trace: error writing %s\n", path);
    }
    free(busy);
    free(count);
    free(stats);
}

void tq_task_log_finish(void)
{
    if (__atomic_load_n(&state, __ATOMIC_ACQUIRE) != 1) {
        __atomic_store_n(&state, -1, __ATOMIC_RELEASE);   /* the next tq_init looks again */
        return;
    }
    starpu_task_wait_for_all();
    char path[4096];
    int rank = 0, size = 1;
    tq_task_get_ranks(&rank, &size);
    if (size > 1) snprintf(path, sizeof path, "%s.%d", log_path, rank);
    else snprintf(path, sizeof path, "%s", log_path);
    FILE *f = fopen(path, "w");
    long n = nrecords < LOG_CAPACITY ? nrecords : LOG_CAPACITY;
    if (!f) {
        fprintf(stderr, "taskqcd: TQ_TASK_LOG: cannot write %s\n", path);
    } else {
        double t0 = 0;
        for (long i = 0; i < n; i++)
            if (i == 0 || records[i].submit < t0) t0 = records[i].submit;
        fprintf(f, "# taskqcd task log: rank %d of %d, %ld records, %ld dropped; times in us from the first submit\n",
                rank, size, n, dropped);
        fprintf(f, "codelet\tfirst\tlast\tnops\tworker\tworker_name\tpeer\tsubmit\tstart\tend\n");
        for (long i = 0; i < n; i++) {
            const log_record *r = &records[i];
            char wname[64] = "-";
            if (r->worker >= 0) starpu_worker_get_name(r->worker, wname, sizeof wname);
            for (char *c = wname; *c; c++)
                if (*c == '\t' || *c == ' ') *c = '_';
            fprintf(f, "%s\t%s\t%s\t%d\t%d\t%s\t%d\t%.2f\t%.2f\t%.2f\n", r->name, r->first ? r->first : "-",
                    r->last ? r->last : "-", r->nops, r->worker, wname, r->peer, r->submit - t0, r->start - t0, r->end - t0);
        }
        if (fclose(f)) fprintf(stderr, "taskqcd: TQ_TASK_LOG: error writing %s\n", path);
        else if (!trace_dir[0]) fprintf(stderr, "taskqcd: task log: %ld tasks in %s\n", n, path);
        if (trace_dir[0]) {
            write_trace(records, n, t0, rank, size);
            fprintf(stderr, "taskqcd: trace: %ld tasks in %s (tasks.tsv, summary.txt, gantt.svg, graph.json)\n", n, trace_dir);
        }
    }
    free(records);
    records = NULL;
    nrecords = dropped = 0;
    __atomic_store_n(&state, -1, __ATOMIC_RELEASE);
}
