/* The task log (TQ_TASK_LOG=FILE): every task's codelet (a chain's first and last entry),
 * worker, and submit, start and end times from StarPU's per-task profiling, and every face
 * that moves between ranks (posted, done), written at tq_finalize as a table for
 * bench/plot-tasks.py (a Gantt chart per worker, busy time, gaps). A plain StarPU build has
 * no FxT trace; this shows where the time between kernels goes without one. */
#include "config.h"
#include "tq_tasks.h"
#include "chain.h"

#include <pthread.h>
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
static log_record *records;
static long nrecords, dropped;

int tq_task_log_on(void)
{
    int s = __atomic_load_n(&state, __ATOMIC_ACQUIRE);
    if (s >= 0) return s;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_mutex_lock(&lock);
    if (state < 0) {
        const char *p = getenv("TQ_TASK_LOG");
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
        else fprintf(stderr, "taskqcd: task log: %ld tasks in %s\n", n, path);
    }
    free(records);
    records = NULL;
    nrecords = dropped = 0;
    __atomic_store_n(&state, -1, __ATOMIC_RELEASE);
}
