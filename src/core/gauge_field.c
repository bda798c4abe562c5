/* Gauge fields on StarPU handles: conversion between the host's 3x3 links and the stored
 * compressed form (18, 12 or 8 reals per link, paper 004 Appendix A). */
#include "core/field_internal.h"
#include "kernels/su3.h"

#include <string.h>

#define M_PI_VALUE 3.14159265358979323846


void tq_gauge_pack_site(int recon, const double *links72, double *stored)
{
    for (int mu = 0; mu < 4; mu++) {
        const double *u = links72 + 18 * mu;
        double *o = stored + recon * mu;
        if (recon == 18) memcpy(o, u, 18 * sizeof(double));
        else if (recon == 12) memcpy(o, u, 12 * sizeof(double));
        else {
            tq_su3_pack_8(o, u);
            /* phases stored as fractions of pi so that every stored real lies in [-1, 1]
             * (needed by half precision, harmless otherwise) */
            o[0] /= M_PI_VALUE;
            o[1] /= M_PI_VALUE;
        }
    }
}

void tq_gauge_unpack_site(int recon, const double *stored, double *links72)
{
    for (int mu = 0; mu < 4; mu++) {
        double *u = links72 + 18 * mu;
        const double *o = stored + recon * mu;
        if (recon == 18) memcpy(u, o, 18 * sizeof(double));
        else if (recon == 12) tq_su3_reconstruct_12(u, o);
        else {
            double p[8];
            memcpy(p, o, sizeof p);
            p[0] *= M_PI_VALUE;
            p[1] *= M_PI_VALUE;
            tq_su3_reconstruct_8(u, p);
        }
    }
}

tq_status tq_gauge_field_import(tq_field *f, const tq_host_gauge *g)
{
    if (!f || !g || !g->links) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_field_import: NULL argument");
    if (f->p.kind != TQ_FIELD_GAUGE) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_field_import: field is not a gauge field");
    for (int mu = 0; mu < 4; mu++)
        if (g->dims[mu] != f->lat->local[mu])
            return tq_error(TQ_ERR_MISMATCH, "tq_gauge_field_import: host field is %dx%dx%dx%d, lattice (local) is %dx%dx%dx%d",
                            g->dims[0], g->dims[1], g->dims[2], g->dims[3],
                            f->lat->local[0], f->lat->local[1], f->lat->local[2], f->lat->local[3]);
    return tq_field_import(f, g->links);
}

tq_status tq_gauge_field_export(const tq_field *f, tq_host_gauge *g)
{
    if (!f || !g || !g->links) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_field_export: NULL argument");
    if (f->p.kind != TQ_FIELD_GAUGE) return tq_error(TQ_ERR_INVALID_ARG, "tq_gauge_field_export: field is not a gauge field");
    for (int mu = 0; mu < 4; mu++)
        if (g->dims[mu] != f->lat->local[mu])
            return tq_error(TQ_ERR_MISMATCH, "tq_gauge_field_export: host field dimensions differ from the lattice");
    return tq_field_export(f, g->links);
}
