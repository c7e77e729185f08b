/* Per-stream task queues.  Each stream's worker thread runs its tasks in
 * order; the eval transform decides what to queue. */
#ifndef CMLX_CORE_SCHEDULER_H
#define CMLX_CORE_SCHEDULER_H

#include <stdbool.h>

#include "core/error.h"
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

/* Before an eval on the calling thread runs or queues work on s (resolved):
 * -1 with MLX's RuntimeError when s belongs to another thread or was
 * destroyed by cm_clear_streams, or with the error an async_eval left on s
 * that nobody has reported yet (once: MLX raises it at the next enqueue on
 * the stream).  Lock-free: it runs once per stream per eval. */
int cm_stream_claim(cm_stream s);
/* A task queued by async_eval failed on s: keep the first such error until
 * synchronize or the next eval on s reports it. */
void cm_stream_note_error(cm_stream s, const cm_error_record *rec);
/* The error of a failed array on s reached the caller through eval: there
 * is nothing left for synchronize to report. */
void cm_stream_forget_error(cm_stream s);

/* Memory pressure (core/allocator.c): while another thread is running
 * tasks that are not all blocked, wait until one of them finishes a task
 * or blocks, and return true (retry the allocation); false at once when
 * no other work can make progress, or after 10 s without any. */
bool cm_sched_wait_for_progress(void);
/* Around a runner's wait for another node (eval.c): while blocked it is
 * not progress that an allocation may wait for. */
void cm_sched_block(void);
void cm_sched_unblock(void);

#endif
