/* Host loops split across threads: set-up work on plain host arrays (random gauge fields
 * and sources of large lattices) that runs before the fields and their tasks exist. At
 * 96^3x192 one thread takes minutes for what 32 threads do in seconds. */
#define _GNU_SOURCE   /* sched_getaffinity */
#include "core/tq_internal.h"

#include <pthread.h>
#include <sched.h>

enum { MAX_HOST_THREADS = 32, MIN_ITEMS_PER_THREAD = 4096 };

typedef struct host_chunk {
    int64_t begin, end;
    void (*fn)(int64_t begin, int64_t end, void *arg);
    void *arg;
} host_chunk;

static void *run_chunk(void *p)
{
    host_chunk *c = p;
    c->fn(c->begin, c->end, c->arg);
    return NULL;
}

/* The cores this process may run on (mpirun's binding or taskset included), at least 1. */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set)) return 1;
    int n = CPU_COUNT(&set);
    return n > 0 ? n : 1;
}

void tq_host_parallel_for(int64_t n, void (*fn)(int64_t begin, int64_t end, void *arg), void *arg)
{
    if (n <= 0) return;
    int64_t nt = usable_cores();
    if (nt > MAX_HOST_THREADS) nt = MAX_HOST_THREADS;
    if (nt > n / MIN_ITEMS_PER_THREAD) nt = n / MIN_ITEMS_PER_THREAD;
    if (nt < 1) nt = 1;
    host_chunk chunks[MAX_HOST_THREADS];
    pthread_t threads[MAX_HOST_THREADS];
    int started[MAX_HOST_THREADS] = {0};
    for (int t = 0; t < nt; t++) {
        chunks[t] = (host_chunk){n * t / nt, n * (t + 1) / nt, fn, arg};
        /* chunk 0 runs on this thread; a thread that cannot start runs its chunk here too */
        if (t > 0) started[t] = !pthread_create(&threads[t], NULL, run_chunk, &chunks[t]);
    }
    run_chunk(&chunks[0]);
    for (int t = 1; t < nt; t++) {
        if (started[t]) pthread_join(threads[t], NULL);
        else run_chunk(&chunks[t]);
    }
}
