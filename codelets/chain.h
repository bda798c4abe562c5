/* The chain codelet: one task that runs several codelets' implementations one after the
 * other on its worker (on a GPU: in the worker's stream, without a host round trip in
 * between). tasks/submit.c records chains (tq_task_chain_begin/end). */
#ifndef TQ_CHAIN_H
#define TQ_CHAIN_H

#include <starpu.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The most buffers one recorded task may have (tasks with more are submitted alone). */
#define TQ_CHAIN_MAX_OP_BUFFERS 64

/* The chain task's argument, one or more segments run one after the other. A segment is
 * one allocation: the head, then nops entries, then the buffer map (int16_t: entry i's
 * buffer j is the chain task's buffer map[op[i].map_offset + j]), then as many write flags
 * (uint8_t, 1: that entry writes the buffer, TQ_CHAIN_WRITES_SCRATCH: it is the entry's
 * scratch), then each entry's own argument at arg_offset from the segment's start
 * (16-byte aligned; 0: none). The first segment is the task's cl_arg; `next` links the
 * segments appended while the task waited for its dependencies (tasks/submit.c). */
#define TQ_CHAIN_WRITES_SCRATCH 2
typedef struct tq_chain_head {
    int32_t nops, nmap;
    struct tq_chain_head *next;
} tq_chain_head;
typedef struct {
    struct starpu_codelet *cl;
    uint32_t arg_offset;
    uint16_t nbuf, map_offset;
    int32_t priority;   /* the recorded task's StarPU priority */
    uint8_t part;       /* the sites it writes (tq_task_options.part): 0 all */
    uint8_t read_part;  /* the sites it only reads (tq_task_options.read_part): 0 all */
    uint8_t flags;      /* TQ_CHAIN_OP_OVERLAP (tq_task_overlap) */
} tq_chain_op;
/* A long entry that goes to the stream of its latest conflicting predecessor, or to the
 * least recently used free one, so that it can run beside the earlier work it does not
 * conflict with (the next application of an operator beside the one before). */
#define TQ_CHAIN_OP_OVERLAP 1

/* Buffers: the union of the recorded tasks' handles (modes merged); argument: above. On a
 * GPU, consecutive entries that touch no buffer another of them writes (one operator's
 * blocks, one BLAS operation's blocks, a face pack beside an interior) run side by side on
 * several streams; those of a higher priority than the group's lowest (packs, exteriors)
 * on a stream of the GPU's highest priority, so that their thread blocks go first. Two
 * entries that both write a buffer but disjoint parts of its sites (a split block's
 * interior and exterior stencil work), or one reading a part of it the other does not
 * write (a deep band), may also run side by side. An entry waits only for the earlier
 * entries it conflicts with, not for whole groups before it. */
extern struct starpu_codelet tq_cl_chain;

#ifdef __cplusplus
}
#endif

#endif
