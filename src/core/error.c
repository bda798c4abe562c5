/* Error reporting: a per-thread message buffer behind tq_last_error(). */
#include "core/tq_internal.h"

#include <stdio.h>

static _Thread_local char last_error[1024];

tq_status tq_error(tq_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return code;
}

void tq_clear_error(void) { last_error[0] = '\0'; }

const char *tq_last_error(void) { return last_error; }

const char *tq_status_name(tq_status s)
{
    switch (s) {
    case TQ_SUCCESS: return "TQ_SUCCESS";
    case TQ_ERR_INVALID_ARG: return "TQ_ERR_INVALID_ARG";
    case TQ_ERR_NOT_INITIALIZED: return "TQ_ERR_NOT_INITIALIZED";
    case TQ_ERR_ALREADY_INITIALIZED: return "TQ_ERR_ALREADY_INITIALIZED";
    case TQ_ERR_NOMEM: return "TQ_ERR_NOMEM";
    case TQ_ERR_RUNTIME: return "TQ_ERR_RUNTIME";
    case TQ_ERR_IO: return "TQ_ERR_IO";
    case TQ_ERR_FORMAT: return "TQ_ERR_FORMAT";
    case TQ_ERR_CHECKSUM: return "TQ_ERR_CHECKSUM";
    case TQ_ERR_NOT_UNITARY: return "TQ_ERR_NOT_UNITARY";
    case TQ_ERR_UNSUPPORTED: return "TQ_ERR_UNSUPPORTED";
    case TQ_ERR_MISMATCH: return "TQ_ERR_MISMATCH";
    case TQ_ERR_NOT_CONVERGED: return "TQ_ERR_NOT_CONVERGED";
    case TQ_ERR_BREAKDOWN: return "TQ_ERR_BREAKDOWN";
    }
    return "TQ_ERR_UNKNOWN";
}
