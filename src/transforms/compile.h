/* Function compilation (mx.compile): trace once, replay many times.
 *
 * A compiled function keeps a cache of traces.  A call whose inputs match
 * an entry (same constants, as the front door hashes the non-array parts
 * of the arguments, same dtypes and shapes) replays that entry's graph on
 * the new inputs: every traced node that depends on an input is rebuilt
 * with the same primitive and parameters, everything else (constants the
 * function made or captured) is reused as it is.  The user's function runs
 * only on a miss, on placeholders that cannot be evaluated, so its Python
 * side effects happen once per trace as in MLX.
 *
 * Not yet: graph simplification and fusion into generated kernels; shape
 * inference for shapeless replays (a shapeless function is traced again
 * for each new shape, which MLX avoids). */
#ifndef CMLX_TRANSFORMS_COMPILE_H
#define CMLX_TRANSFORMS_COMPILE_H

#include <stdint.h>

#include "transforms/autodiff.h"

typedef struct cm_compiled cm_compiled;

/* extra_free releases what a front door attached to an entry (NULL: none). */
cm_compiled *cm_compiled_new(bool shapeless, void (*extra_free)(void *));
void cm_compiled_free(cm_compiled *c);
/* Forget every trace (MLX's compile_clear_cache for one function). */
void cm_compiled_clear(cm_compiled *c);

/* outputs = f(inputs), through the cache.  f is called (on placeholders)
 * only when no entry matches.  *extra is the matched or new entry's slot
 * for the front door's data (holding NULL on a new entry; set it then),
 * or NULL itself when f ran directly because an input is another
 * transform's tracer (MLX compiles nothing inside a trace). */
int cm_compiled_call(cm_compiled *c, cm_closure f, cm_array *const *inputs, int nin,
                     const uint64_t *constants, int nconst, cm_array ***outputs, int *nout,
                     void ***extra);

/* One trace, kept by the caller (export): inputs are the placeholders, tape
 * every node between them and the outputs in topological order (leaves,
 * i.e. constants and placeholders, included; a multi-output node's
 * outputs each appear once they are used). */
typedef struct cm_compile_trace_result {
  cm_array **inputs, **outputs, **tape;
  int nin, nout;
  size_t len;
} cm_compile_trace_result;
int cm_compile_trace(cm_closure f, cm_array *const *in, int nin, bool shapeless,
                     cm_compile_trace_result *r);
void cm_compile_trace_result_free(cm_compile_trace_result *r);

/* MLX's compile modes; disabled: compiled functions call f directly. */
typedef enum cm_compile_mode {
  CM_COMPILE_DISABLED = 0,
  CM_COMPILE_NO_SIMPLIFY = 1,
  CM_COMPILE_NO_FUSE = 2,
  CM_COMPILE_ENABLED = 3,
} cm_compile_mode;
void cm_set_compile_mode(cm_compile_mode mode);
/* The mode, with MLX_DISABLE_COMPILE in the environment read once. */
cm_compile_mode cm_get_compile_mode(void);

#endif
