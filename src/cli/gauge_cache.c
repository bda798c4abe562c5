/* The propagator's default gauge field (issue 5): a quenched configuration from the
 * generator, cached as a SciDAC file so that later runs read it instead of generating it
 * again. The file name holds everything the configuration depends on; tq_gauge_write writes
 * it atomically, so concurrent runs never read half a file. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *tq_cli_default_cache_dir(char *buf, size_t len)
{
    const char *e = getenv("TASKQCD_CACHE");
    if (e && *e) return e;
    e = getenv("XDG_CACHE_HOME");
    if (e && *e && (size_t)snprintf(buf, len, "%s/taskqcd", e) < len) return buf;
    e = getenv("HOME");
    if (e && *e && (size_t)snprintf(buf, len, "%s/.cache/taskqcd", e) < len) return buf;
    return NULL;
}

/* mkdir -p; 0 or an errno */
static int make_dirs(const char *dir)
{
    char p[4096];
    if (strlen(dir) >= sizeof p) return ENAMETOOLONG;
    strcpy(p, dir);
    for (char *c = p + 1; ; c++) {
        if (*c != '/' && *c) continue;
        const char keep = *c;
        *c = 0;
        if (mkdir(p, 0755) && errno != EEXIST) return errno;
        *c = keep;
        if (!keep) break;
    }
    struct stat st;
    return stat(dir, &st) ? errno : S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
}

static int generate(const tq_cli_quenched *q, tq_host_gauge *out, double *seconds)
{
    tq_generator_params gp;
    tq_generator_params_default(&gp);
    gp.beta = q->beta;
    gp.seed = q->seed;
    tq_generator *g = NULL;
    const double t0 = tq_cli_now();
    int rc = tq_generator_create(q->dims, &gp, &g) != TQ_SUCCESS;
    for (int s = 1; !rc && s <= q->sweeps; s++) {
        rc = tq_generator_sweep(g, q->nor) != TQ_SUCCESS;
        if (!rc && s % 10 == 0) rc = tq_generator_reunitarize(g) != TQ_SUCCESS;
    }
    if (!rc) rc = tq_generator_export(g, out) != TQ_SUCCESS;
    tq_generator_destroy(g);
    *seconds = tq_cli_now() - t0;
    return rc;
}

int tq_cli_quenched_gauge(const tq_cli_quenched *q, int verbosity, tq_host_gauge *out, char *desc, size_t desc_len)
{
    const char *me = "taskqcd propagator";
    char name[256], path[4096];
    snprintf(name, sizeof name, "quenched_%dx%dx%dx%d_b%g_seed%llu_%dsweeps_or%d.lime", q->dims[0], q->dims[1], q->dims[2],
             q->dims[3], q->beta, (unsigned long long)q->seed, q->sweeps, q->nor);
    snprintf(desc, desc_len, "quenched %dx%dx%dx%d, beta %g, seed %llu, %d sweeps of 1 heat bath + %d overrelaxation",
             q->dims[0], q->dims[1], q->dims[2], q->dims[3], q->beta, (unsigned long long)q->seed, q->sweeps, q->nor);
    int cache = q->cache_dir != NULL;
    if (cache && (size_t)snprintf(path, sizeof path, "%s/%s", q->cache_dir, name) >= sizeof path) cache = 0;
    if (cache && access(path, F_OK) == 0) {
        if (tq_gauge_read(path, TQ_FORMAT_SCIDAC, out, NULL) == TQ_SUCCESS) {
            if (!memcmp(out->dims, q->dims, sizeof out->dims)) {
                if (verbosity >= 1) printf("  gauge: %s, read from the cache %s\n", desc, path);
                return 0;
            }
            tq_host_gauge_free(out);
            fprintf(stderr, "%s: warning: the cached configuration %s has other dimensions; generating it again\n", me, path);
        } else {
            fprintf(stderr, "%s: warning: the cached configuration %s cannot be read (%s); generating it again\n", me, path,
                    tq_last_error());
        }
    }
    if (tq_host_gauge_alloc(out, q->dims)) return 1;
    /* the configuration depends on the kind of worker that made it (last bits of CPU and GPU
     * arithmetic differ and the Markov chain amplifies them): one kind makes all of it */
    tq_runtime_info ri;
    tq_get_runtime_info(&ri);
    const tq_where before = tq_get_placement();
    const tq_where kind = before == TQ_WHERE_ANY ? (ri.ncuda_workers > 0 ? TQ_WHERE_CUDA : TQ_WHERE_CPU) : before;
    tq_set_placement(kind);
    if (verbosity >= 1) {
        printf("  gauge: generating the %s on %s workers ...\n", desc, kind == TQ_WHERE_CUDA ? "CUDA" : "CPU");
        fflush(stdout);
    }
    double seconds = 0;
    const int rc = generate(q, out, &seconds);
    tq_set_placement(before);
    if (rc) { tq_host_gauge_free(out); return 1; }
    tq_plaquette p;
    tq_host_gauge_plaquette(out, &p);
    if (verbosity >= 1) printf("  gauge: generated in %.2f s, plaquette %.6f\n", seconds, p.total);
    if (!cache) return 0;
    const int err = make_dirs(q->cache_dir);
    if (err || tq_gauge_write(path, TQ_FORMAT_SCIDAC, out, 8) != TQ_SUCCESS) {
        fprintf(stderr, "%s: warning: cannot cache the configuration in %s (%s); it is not kept\n", me, q->cache_dir,
                err ? strerror(err) : tq_last_error());
    } else if (verbosity >= 1) {
        printf("  gauge: cached in %s\n", path);
    }
    return 0;
}
