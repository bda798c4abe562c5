/* BLAS-1 and reduction codelets: CPU implementations, codelet definitions, perf models. */
#include "config.h"
#include "tq_codelets.h"

uint32_t tq_footprint_bytes(struct starpu_task *task)
{
    uint32_t crc = 0;
    const unsigned n = STARPU_TASK_GET_NBUFFERS(task);
    for (unsigned i = 0; i < n; i++)
        crc = starpu_hash_crc32c_be_n(&(uint64_t){starpu_data_get_size(STARPU_TASK_GET_HANDLE(task, i))}, sizeof(uint64_t), crc);
    return crc;
}

#ifdef TQ_SIMGRID
/* Never called: in StarPU's SimGrid mode the simulated CUDA workers only consult the
 * performance models (codelets/tq_codelets.h, TQ_CUDA_IMPL). */
void tq_simgrid_cuda_stub(void *buffers[], void *cl_arg)
{
    (void)buffers; (void)cl_arg;
}
#endif

#include <stdio.h>
#include <string.h>

static const char *const op_names[] = {
    "tq_zero", "tq_copy", "tq_scale", "tq_axpy", "tq_xpay", "tq_axpby", "tq_caxpy",
    "tq_caxpby", "tq_norm2", "tq_rdot", "tq_cdot", "tq_axpy_norm2", "tq_cg_update",
    "tq_cg_direction", "tq_bicgstab_update", "tq_bicgstab_direction", "tq_cdot_norm2", "tq_caxpyz",
    "tq_cg_x_direction", "tq_bicgstab_step", "tq_accumulate", "tq_reliable_residual", "tq_reliable_residual_rho",
    "tq_reliable_residual_rho_qp", "tq_cg_x_direction_set", "tq_bicgstab_step_set",
    "tq_mcdot2", "tq_mcdot3", "tq_mcdot4", "tq_mcaxpy2", "tq_mcaxpy3", "tq_mcaxpy4", "tq_gcr_update",
};
_Static_assert(sizeof op_names / sizeof op_names[0] == TQ_NUM_BLAS_OPS, "a name for every BLAS operation");

const char *tq_blas_op_name(int op)
{
    return op >= 0 && op < TQ_NUM_BLAS_OPS ? op_names[op] : "tq_blas_unknown";
}

/* Sites are visited in order and accumulated in double: deterministic partial sums. */
static inline __attribute__((always_inline)) void blas_loop(int op, const tq_blas_args *a, const double *c,
                                                            void *const *bufs, double *acc)
{
    const int64_t n = a->L[0].stride;
    for (int64_t s = 0; s < n; s++) tq_blas_site(op, c, bufs, a->L, s, acc);
}

void tq_blas_cpu(void *buffers[], void *cl_arg)
{
    const tq_blas_args *a = (const tq_blas_args *)cl_arg;
    const int nop = tq_blas_noperands(a->op);
    double *scal = a->use_scalars ? (double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_scalars(a)]) : NULL;
    const int nres = tq_blas_nresults(a->op);
    double acc[TQ_BLAS_MAX_RESULTS] = {0.0};
    if (!tq_blas_frozen(a, scal)) {
        void *bufs[TQ_BLAS_MAX_OPERANDS];
        for (int i = 0; i < nop; i++) bufs[i] = (void *)STARPU_VECTOR_GET_PTR(buffers[i]);
        double c[TQ_BLAS_MAX_COEFS];
        tq_blas_coefficients(a, scal, c);
        /* one instantiation per op so the per-site switch folds away */
        switch (a->op) {
#define TQ_BLAS_CASE(OP) case OP: blas_loop(OP, a, c, bufs, acc); break;
        TQ_BLAS_FOR_EACH_OP(TQ_BLAS_CASE)
#undef TQ_BLAS_CASE
        default: break;
        }
    }
    if (nres && a->fused) {
        tq_blas_fused_finish(a, scal, acc);
    } else if (nres) {
        /* a frozen task's partial is never summed (the combine task is frozen too) */
        double *partial = (double *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_partial(a)]);
        for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) partial[r] = r < nres ? acc[r] : 0.0;
    }
    if (scal && a->snapshot)
        tq_snapshot_write_cpu((void *)STARPU_VECTOR_GET_PTR(buffers[tq_blas_buf_scalars(a) + 1]), a->mirror, scal);
}

/* Argument: the number of partials (int). */
static void reduce_combine_cpu(void *buffers[], void *cl_arg)
{
    const int n = *(const int *)cl_arg + 1;
    double sum[TQ_BLAS_MAX_RESULTS] = {0.0};
    for (int i = 0; i < n - 1; i++) {
        const double *p = (const double *)STARPU_VECTOR_GET_PTR(buffers[i]);
        for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) sum[r] += p[r];
    }
    double *out = (double *)STARPU_VECTOR_GET_PTR(buffers[n - 1]);
    for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) out[r] = sum[r];
}

/* Buffers: n partial-sum vectors (R), the solver scalars (RW), the snapshot (W) if any. */
static void scalar_combine_cpu(void *buffers[], void *cl_arg)
{
    const tq_scalar_combine_args *a = (const tq_scalar_combine_args *)cl_arg;
    /* peer partials (a->sync.remote) live in GPU memory: only GPU owners' combines have them */
    double *s = (double *)STARPU_VECTOR_GET_PTR(buffers[a->n]);
    if (!tq_guard_shut(s, a->guard)) {
        if (a->n > 0) {
            double sum[TQ_BLAS_MAX_RESULTS] = {0.0};
            for (int i = 0; i < a->n; i++) {
                const double *p = (const double *)STARPU_VECTOR_GET_PTR(buffers[i]);
                for (int r = 0; r < TQ_BLAS_MAX_RESULTS; r++) sum[r] += p[r];
            }
            for (int r = 0; r < a->nres; r++) s[a->dst + r] = sum[r];
        }
        tq_scalar_run(s, a->prog, a->nprog);
    }
    if (a->snapshot) tq_snapshot_write_cpu((void *)STARPU_VECTOR_GET_PTR(buffers[a->n + 1]), a->mirror, s);
}

/* History-based models; bump _vN when a kernel changes so stale models are dropped. */
static struct starpu_perfmodel blas_models[TQ_NUM_BLAS_OPS];
static char blas_model_symbols[TQ_NUM_BLAS_OPS][48];
static struct starpu_perfmodel combine_model = {
    .type = STARPU_HISTORY_BASED, .symbol = "tq_reduce_combine_v2", .footprint = tq_footprint_bytes,
};

struct starpu_codelet tq_cl_blas[TQ_NUM_BLAS_OPS];
struct starpu_codelet tq_cl_blas_scalars[TQ_NUM_BLAS_OPS];
struct starpu_codelet tq_cl_reduce_combine = {
    .cpu_funcs = {reduce_combine_cpu},
    .cpu_funcs_name = {"reduce_combine_cpu"},
    TQ_CUDA_IMPL(tq_reduce_combine_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &combine_model,
    .name = "tq_reduce_combine",
};

static struct starpu_perfmodel scalar_combine_model = {
    .type = STARPU_HISTORY_BASED, .symbol = "tq_scalar_combine_v2", .footprint = tq_footprint_bytes,
};
struct starpu_codelet tq_cl_scalar_combine = {
    .cpu_funcs = {scalar_combine_cpu},
    .cpu_funcs_name = {"scalar_combine_cpu"},
    TQ_CUDA_IMPL(tq_scalar_combine_cuda)
    .nbuffers = STARPU_VARIABLE_NBUFFERS,
    .model = &scalar_combine_model,
    .name = "tq_scalar_combine",
};

static starpu_data_handle_t scratch;

void tq_codelets_init(void)
{
    for (int op = 0; op < TQ_NUM_BLAS_OPS; op++) {
        struct starpu_perfmodel *m = &blas_models[op];
        memset(m, 0, sizeof *m);
        snprintf(blas_model_symbols[op], sizeof blas_model_symbols[op], "%s_v2", op_names[op]);
        m->type = STARPU_HISTORY_BASED;
        m->footprint = tq_footprint_bytes;
        m->symbol = blas_model_symbols[op];

        struct starpu_codelet *cl = &tq_cl_blas[op];
        memset(cl, 0, sizeof *cl);
        cl->cpu_funcs[0] = tq_blas_cpu;
        cl->cpu_funcs_name[0] = "tq_blas_cpu";
#if defined(TQ_HAVE_CUDA)
        cl->cuda_funcs[0] = tq_blas_cuda;
        cl->cuda_flags[0] = STARPU_CUDA_ASYNC;
#elif defined(TQ_SIMGRID)
        cl->cuda_funcs[0] = tq_simgrid_cuda_stub;
#endif
        int nop = tq_blas_noperands(op);
        unsigned rd = tq_blas_reads(op), wr = tq_blas_writes(op);
        const int nbuf = nop + (tq_blas_nresults(op) ? 2 : 0);
        if (nbuf > STARPU_NMAXBUFS) {
            /* more buffers than a codelet's static modes hold: the task carries them */
            cl->nbuffers = STARPU_VARIABLE_NBUFFERS;
        } else {
            for (int i = 0; i < nop; i++)
                cl->modes[i] = (enum starpu_data_access_mode)(((rd >> i & 1u) ? STARPU_R : 0) | ((wr >> i & 1u) ? STARPU_W : 0));
            cl->nbuffers = nop;
            if (tq_blas_nresults(op)) {
                cl->modes[nop] = STARPU_W;
                cl->modes[nop + 1] = STARPU_SCRATCH;
                cl->nbuffers = nop + 2;
            }
        }
        cl->model = m;
        cl->name = op_names[op];
        /* the same for solver tasks, whose buffers (scalars, snapshot, fused reductions) vary:
         * the task carries its modes */
        struct starpu_codelet *cs = &tq_cl_blas_scalars[op];
        *cs = *cl;
        cs->nbuffers = STARPU_VARIABLE_NBUFFERS;
    }
    starpu_vector_data_register(&scratch, -1, 0, TQ_REDUCE_SCRATCH, sizeof(double));
}

void tq_codelets_shutdown(void)
{
    starpu_data_unregister(scratch);
}

starpu_data_handle_t tq_codelets_scratch(void) { return scratch; }
