/* Per-stream task queues.  Each stream's worker thread runs its tasks in
 * order; the eval transform decides what to queue. */
#ifndef CMLX_CORE_SCHEDULER_H
#define CMLX_CORE_SCHEDULER_H

#include <stdbool.h>

#include "core/stream.h"

typedef void (*cm_task_fn)(void *ctx);

/* Queue fn(ctx) on stream s (resolved).  -1 on failure. */
int cm_stream_enqueue(cm_stream s, cm_task_fn fn, void *ctx);
/* If s has nothing queued or running, take it for inline execution on the
 * calling thread and return true; the caller must then call
 * cm_stream_end_inline.  Running on the caller saves two thread hand-offs
 * per eval, which dominates the cost of small ops. */
bool cm_stream_begin_inline(cm_stream s);
void cm_stream_end_inline(cm_stream s);

#endif
