/* The multigrid object shared by its set-up (src/solvers/mg_setup.c: levels, cycles, files)
 * and its solves (src/solvers/mg_solve_sources.c). Private to src/solvers. */
#ifndef TQ_MG_MULTIGRID_H
#define TQ_MG_MULTIGRID_H

#include "solvers/mg_internal.h"

#include <pthread.h>

enum { MG_MAX_TRANSFERS = TQ_MG_MAX_LEVELS - 1 };

/* What one solve at a time uses (several slots: solves side by side, one per submitting
 * thread): the cycles and work fields, and in slots past the first the operators' work
 * copies (their own faces and temporaries, the links shared), so that two threads' tasks
 * never share a buffer. */
enum { MG_MAX_SLOTS = TQ_MG_MAX_SOLVES_AT_ONCE };
/* Sloppy copies of the operator for the outer GCR, one per (precision, compression) asked. */
enum { MG_MAX_SLOPPY = 4 };
typedef struct mg_slot {
    const tq_dirac *outer_d, *fine_d;   /* the outer GCR's operator, the fine level's cycle's */
    const tq_mg_coarse_op *op[TQ_MG_MAX_LEVELS];   /* level l >= 1's operator */
    tq_mg_two_level *cycle[MG_MAX_TRANSFERS];   /* level l's cycle; cycle[l + 1] preconditions its coarse solve */
    tq_field *w;             /* the true residual's work field */
    tq_field *rs, *zs;       /* the outer GCR's r and z in smoother_prec (with smooth_d) */
    tq_dirac *sloppy[MG_MAX_SLOPPY];   /* with copies: work copies of the set-up's outer_sloppy */
    int copies;              /* outer_d, fine_d and op are work copies owned here */
} mg_slot;

struct tq_multigrid {
    tq_mg_params p;
    const tq_dirac *d;
    tq_lattice *lat;
    tq_mg_transfer *t[MG_MAX_TRANSFERS];        /* level l to l + 1 */
    tq_mg_coarse_op *op[TQ_MG_MAX_LEVELS];      /* level l's operator, l >= 1 (level 0: d) */
    tq_dirac *smooth_d;      /* the fine level's cycle operator in smoother_prec (NULL: d itself) */
    /* the outer GCR's sloppy operators (made at the first solve asking for each; lock) */
    tq_dirac *outer_sloppy[MG_MAX_SLOPPY];
    mg_slot slot[MG_MAX_SLOTS];   /* slot 0 made with the set-up, the others for solves side by side */
    int nslots;
    /* solves side by side: 0 not yet, 1 slots 0 .. over the blocks' owners, 2 slots 1 ..
     * each on one GPU in turn (slot s on the (s - 1)-th; its operators made there) */
    int slots_mode;
    pthread_mutex_t lock;    /* outer_iterations, from solves side by side */
    int dims[TQ_MG_MAX_LEVELS][4];
    long setup_iterations;
    long outer_iterations;   /* the outer GCR's, summed over every solve */
    double setup_seconds;
};

/* Slot S's cycles (the coarsest first: each preconditions the coarse solve of the one
 * above) and work fields; copies: on work copies of the operators (a slot past the first).
 * tq_mg_slot_destroy frees what it made (and zeroes S). */
tq_status tq_mg_slot_build(tq_multigrid *mg, mg_slot *S, int copies);
void tq_mg_slot_destroy(mg_slot *S);

#endif
