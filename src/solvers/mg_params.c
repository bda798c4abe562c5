/* Multigrid parameters and the geometry of its levels (solvers/mg_internal.h). */
#include "solvers/mg_internal.h"

#include <string.h>

void tq_mg_params_default(tq_mg_params *p)
{
    memset(p, 0, sizeof *p);
    p->levels = 3;
    for (int l = 0; l < TQ_MG_MAX_LEVELS - 1; l++) {
        for (int mu = 0; mu < 4; mu++) p->block[l][mu] = l == 0 ? 4 : 2;
        p->nvec[l] = 24;
        /* no pre-smoothing, 8 post-steps: the same outer iterations as paper 000's 4 + 4 on
         * 32^4 at light mass, and the cycle restricts r itself (no residual M z to form):
         * 5-9 % less per solve on an H200 (doc/performance.md, "The smoother's split") */
        p->pre_steps[l] = 0;
        p->post_steps[l] = 8;
        /* paper 000's tolerance; 200 iterations where it takes 500: on 32^4 at kappa 0.1454
         * (BiCGstab 2191 iterations) the solves took the same outer iterations after a set-up
         * of 7.2 s as after one of 13.0 s (doc/performance.md, "The set-up's iterations") */
        p->setup_tol[l] = 5e-6;
        p->setup_iters[l] = 200;
    }
    p->coarse_tol = 0.25;
    p->coarse_maxiter = 10;
    p->smoother_prec = TQ_HALF;
    p->nullvec_prec = TQ_HALF;
    p->verbosity = 1;
    p->coarsest_eo = 1;
    p->smoother_eo = 1;
    p->coarse_prec = TQ_SINGLE;
    p->solves_at_once = 4;
    p->setup_inverter = TQ_INV_BICGSTAB;
}

static const char dirname[4] = {'x', 'y', 'z', 't'};

tq_status tq_mg_geometry(const char *who, const tq_mg_params *p, const tq_lattice *lat, int coarse[][4],
                         int coarse_block[][4])
{
    if (!p || !lat) return tq_error(TQ_ERR_INVALID_ARG, "%s: NULL multigrid parameters or lattice", who);
    if (p->levels < 2 || p->levels > TQ_MG_MAX_LEVELS)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: %d multigrid levels; 2 to %d are supported", who, p->levels,
                        TQ_MG_MAX_LEVELS);
    for (int l = 0; l + 1 < p->levels; l++)
        if (!(p->setup_tol[l] > 0 && p->setup_tol[l] < 1) || p->setup_iters[l] < 1)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: level %d: setup tolerance %g and iterations %d: need 0 < tol < 1 "
                            "and >= 1", who, l, p->setup_tol[l], p->setup_iters[l]);
    if (!(p->coarse_tol > 0 && p->coarse_tol < 1) || p->coarse_maxiter < 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: coarse tolerance %g and iterations %d: need 0 < tol < 1 and >= 1", who,
                        p->coarse_tol, p->coarse_maxiter);
    if (p->coarsest_eo != 0 && p->coarsest_eo != 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: coarsest_eo %d: 1 (even-odd coarsest solves) or 0", who, p->coarsest_eo);
    if (p->coarse_prec != TQ_DOUBLE && p->coarse_prec != TQ_SINGLE && p->coarse_prec != TQ_HALF)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: coarse precision %d: double, single or half", who, (int)p->coarse_prec);
    if (p->where[0] != TQ_WHERE_ANY)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: level 0 is the operator's lattice: it runs where the operator runs "
                        "(tq_set_placement); place only coarse levels (where[1] ..)", who);
    for (int l = 1; l < p->levels; l++)
        if (p->where[l] != TQ_WHERE_ANY && p->where[l] != TQ_WHERE_CPU && p->where[l] != TQ_WHERE_CUDA)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: level %d: unknown placement %d", who, l, (int)p->where[l]);
    if (p->setup_inverter != TQ_INV_BICGSTAB && p->setup_inverter != TQ_INV_GCR)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: setup_inverter %d: the null vectors' solves are BiCGstab or GCR", who,
                        (int)p->setup_inverter);
    if (p->solves_at_once < 1 || p->solves_at_once > TQ_MG_MAX_SOLVES_AT_ONCE)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: solves_at_once %d: 1 to %d", who, p->solves_at_once,
                        TQ_MG_MAX_SOLVES_AT_ONCE);
    if (p->smoother_eo != 0 && p->smoother_eo != 1)
        return tq_error(TQ_ERR_INVALID_ARG, "%s: smoother_eo %d: 1 (even-odd smoothers) or 0", who, p->smoother_eo);
    memcpy(coarse[0], lat->dims, sizeof coarse[0]);
    memcpy(coarse_block[0], lat->block, sizeof coarse_block[0]);
    int dof_per_chirality = 6;   /* per fine site: 2 spins x 3 colors */
    for (int l = 0; l + 1 < p->levels; l++) {
        const int *a = p->block[l];
        if (p->nvec[l] < 1 || p->nvec[l] > TQ_MG_MAX_NVEC)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: level %d has %d null vectors; 1 to %d are supported", who, l,
                            p->nvec[l], TQ_MG_MAX_NVEC);
        if (p->pre_steps[l] < 0 || p->post_steps[l] < 0 || p->pre_steps[l] + p->post_steps[l] == 0)
            return tq_error(TQ_ERR_INVALID_ARG, "%s: level %d smoother steps %d + %d: none negative, not both 0", who, l,
                            p->pre_steps[l], p->post_steps[l]);
        int64_t agg_sites = 1;
        for (int mu = 0; mu < 4; mu++) {
            const int b = coarse_block[l][mu];
            if (a[mu] < 1 || b % a[mu])
                return tq_error(TQ_ERR_INVALID_ARG,
                                "%s: level %d aggregate extent %d in %c does not divide the level's block extent %d "
                                "(lattice %dx%dx%dx%d, blocks %dx%dx%dx%d)", who, l, a[mu], dirname[mu], b,
                                coarse[l][0], coarse[l][1], coarse[l][2], coarse[l][3], coarse_block[l][0],
                                coarse_block[l][1], coarse_block[l][2], coarse_block[l][3]);
            if ((b / a[mu]) % 2)
                return tq_error(TQ_ERR_INVALID_ARG,
                                "%s: level %d aggregates of %d in %c leave coarse blocks of odd extent %d (from %d): "
                                "too many levels or too large aggregates for this lattice and block size", who, l,
                                a[mu], dirname[mu], b / a[mu], b);
            coarse[l + 1][mu] = coarse[l][mu] / a[mu];
            coarse_block[l + 1][mu] = b / a[mu];
            agg_sites *= a[mu];
        }
        if ((int64_t)p->nvec[l] > agg_sites * dof_per_chirality)
            return tq_error(TQ_ERR_INVALID_ARG,
                            "%s: level %d has %d null vectors but an aggregate of %lld sites holds only %lld degrees "
                            "of freedom per chirality", who, l, p->nvec[l], (long long)agg_sites,
                            (long long)(agg_sites * dof_per_chirality));
        dof_per_chirality = p->nvec[l];
    }
    return TQ_SUCCESS;
}
