/* StarPU's own trace under --trace DIR, where TaskQCD is built against the traced StarPU
 * flavour (scripts/install-deps-fxt, configure --with-fxt): StarPU records FxT events into
 * DIR from its start, and at tq_finalize, once StarPU has written them, they become
 * StarPU's Paje trace (paje.trace, for ViTE), tasks.rec, data.rec, trace.rec and the DAG
 * (dag.dot) in DIR (DIR/rank<r> on rank r > 0), as starpu_fxt_tool would make them. Without
 * FxT both calls do nothing. */
#include "core/tq_internal.h"

#include <starpu.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef STARPU_USE_FXT
#include <starpu_fxt.h>
#include <sys/stat.h>

static char fxt_dir[4096];

void tq_internal_fxt_prepare(const char *dir)
{
    fxt_dir[0] = 0;
    if (!dir) {
        /* a traced StarPU records every run into /tmp unless told not to */
        setenv("STARPU_FXT_TRACE", "0", 0);
        return;
    }
    if ((size_t)snprintf(fxt_dir, sizeof fxt_dir, "%s", dir) >= sizeof fxt_dir) {
        fxt_dir[0] = 0;
        return;
    }
    setenv("STARPU_FXT_TRACE", "1", 1);
    setenv("STARPU_FXT_PREFIX", fxt_dir, 1);
    setenv("STARPU_FXT_SUFFIX", "starpu_fxt", 1);
}

void tq_internal_fxt_finish(int rank, int nranks)
{
    if (!fxt_dir[0]) return;
    char in[4200], out[4200];
    /* StarPU names the file by its id: the rank under StarPU-MPI, else 0 */
    snprintf(in, sizeof in, "%s/starpu_fxt_%d", fxt_dir, nranks > 1 ? rank : 0);
    FILE *f = fopen(in, "rb");
    if (!f) {
        fprintf(stderr, "taskqcd: StarPU's FxT trace %s was not written; no Paje trace\n", in);
        return;
    }
    fclose(f);
    if (nranks > 1 && rank > 0) snprintf(out, sizeof out, "%s/rank%d", fxt_dir, rank);
    else snprintf(out, sizeof out, "%s", fxt_dir);
    mkdir(out, 0777);
    /* zeroed first: options_init leaves fields (the container prefix, ...) that the
     * conversion frees when set; static: the worker tables make it tens of KiB */
    static struct starpu_fxt_options o;
    memset(&o, 0, sizeof o);
    starpu_fxt_options_init(&o);
    o.ninputfiles = 1;
    o.filenames[0] = in;
    o.dir = out;
    starpu_fxt_options_set_dir(&o);
    starpu_fxt_generate_trace(&o);
    starpu_fxt_options_shutdown(&o);
    if (rank == 0)
        fprintf(stderr, "taskqcd: StarPU's trace in %s: paje.trace (ViTE), tasks.rec, data.rec, trace.rec, dag.dot\n", out);
    fxt_dir[0] = 0;
}
#else
void tq_internal_fxt_prepare(const char *dir) { (void)dir; }
void tq_internal_fxt_finish(int rank, int nranks)
{
    (void)rank;
    (void)nranks;
}
#endif
