/* The export-tracing flag (see export_tracing.h): a per-thread depth. */
#include "core/export_tracing.h"

static _Thread_local int depth;

void cm_export_tracing_push(void) { depth++; }
void cm_export_tracing_pop(void) { depth--; }
bool cm_in_export_tracing(void) { return depth > 0; }
