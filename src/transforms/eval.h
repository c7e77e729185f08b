/* Evaluation: sort the graph behind some arrays, hand each node to its
 * stream, and (for eval) wait.  Arrays already evaluated or in flight are
 * skipped, so a node is computed once even if two threads ask for it. */
#ifndef CMLX_TRANSFORMS_EVAL_H
#define CMLX_TRANSFORMS_EVAL_H

#include "core/array.h"

int cm_eval(cm_array *const *arrays, int n);
int cm_async_eval(cm_array *const *arrays, int n);
/* Evaluate one array (a no-op when it already is). */
static inline int cm_eval1(cm_array *a) {
  return cm_is_evaluated(a) && !a->error ? 0 : cm_eval(&a, 1);
}
/* While vmap (later compile) traces a function on placeholders, eval on
 * this thread is an error rather than a silent wrong answer. */
void cm_eval_forbid_push(void);
void cm_eval_forbid_pop(void);
/* While vjp, jvp or vmap traces a function on this thread (MLX's
 * InTracing): async_eval of a tracer node (core/array.h) is then an error. */
void cm_trace_push(void);
void cm_trace_pop(void);
bool cm_in_trace(void);

#endif
