/* Fused elementwise kernels (mx.compile): a region of elementwise nodes is
 * described as a small program (cm_fused_prog), turned into C source
 * (jit_codegen.c), compiled with the system compiler and loaded (jit.c),
 * and run by one driver (fused.c) over any layout.  Ops whose kernels are
 * exact expressions are written inline in the generated loop; the others
 * (libm and vectorised transcendental loops, integer division, float to
 * integer casts) call the very row functions the op-by-op kernels use, on
 * blocks of the region's values, so fused results equal unfused ones bit
 * for bit. */
#ifndef CMLX_BACKEND_CPU_FUSED_H
#define CMLX_BACKEND_CPU_FUSED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/array.h"
#include "primitives/unary.h"

typedef enum cm_fop_kind { CM_FOP_UNARY, CM_FOP_BINARY, CM_FOP_SELECT, CM_FOP_CAST } cm_fop_kind;

/* One node of a region.  arg[i] names a value: below nin an input of the
 * region, else the result of op arg[i] - nin (an earlier op). */
typedef struct cm_fop {
  cm_fop_kind kind;
  int op; /* cm_unary_op or cm_binary_op */
  cm_dtype dtype;
  int nargs;
  int arg[3];
  cm_unary_params up; /* UNARY: the node's parameters */
} cm_fop;

typedef struct cm_fused_prog {
  int nin, nops, nout;
  const cm_dtype *in_dtype;
  const bool *in_scalar; /* an input of one element, read once (a broadcast scalar) */
  /* broadcast along the region's last axis: constant along each row of the
   * driver's walk when its stride there is 0 (read once per row then) */
  const bool *in_rowconst;
  const cm_fop *ops;
  const int *outs; /* the op index of each output */
} cm_fused_prog;

typedef struct cm_fused_kernel cm_fused_kernel;

/* Whether a fused kernel can compute a node of this kind, op code and
 * dtypes. */
bool cm_fused_supports(cm_fop_kind kind, int op, cm_dtype in, cm_dtype out);

/* Whether such a node is written inline in the kernels (one exact C
 * expression) rather than calling a row function. */
bool cm_fused_inline(cm_fop_kind kind, int op, cm_dtype in, cm_dtype out);

/* The kernel of program p: generated, compiled (or found in the disk
 * cache) and loaded once per process, then shared.  NULL, with no error
 * set, when it cannot be built (no compiler, disabled): the caller keeps
 * the unfused nodes.  Kernels live until the process exits. */
const cm_fused_kernel *cm_fused_kernel_get(const cm_fused_prog *p);

/* The Compiled primitive's CPU kernel. */
int cm_cpu_fused(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Its form for a region feeding a reduction (fused_reduce.c). */
int cm_cpu_fused_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* ---- internal: code generation and loading ---- */
/* Run kernel k on n elements (see cm_fused_main below). */
void cm_fused_kernel_run(const cm_fused_kernel *k, int64_t n, const char *const *in,
                         const int64_t *is, char *const *out);
/* k's number of inputs; *nout its outputs. */
int cm_fused_kernel_arity(const cm_fused_kernel *k, int *nout);
/* The drivers' walk over shape (ndim, shape) for nin inputs broadcast to
 * it and nout row-major outputs: the collapsed shape (axes of length 1
 * dropped, neighbours contiguous in every operand merged; one axis at
 * least) into cshape, and per collapsed axis d the strides of the inputs
 * then the outputs at st[d * (nin + nout) + k].  Returns its length. */
int cm_fused_collapse(int ndim, const int32_t *shape, cm_array *const *in, int nin, int nout,
                      int64_t *cshape, int64_t *st);
/* What a call-out op needs at run time, in op order: the row function
 * and its parameters. */
typedef struct cm_fused_calls {
  int n;
  void **fn;
  const void **params;
} cm_fused_calls;
/* C source of p's kernel (malloc'd), defining
 *   void cm_fused_main(int64_t n, const char *const *in, const int64_t *is,
 *                      char *const *out, void *const *fn, const void *const *pp);
 * which computes n elements: input k at in[k] with stride is[k] elements
 * (unused for scalar inputs), outputs contiguous.  Unit strides (0 for
 * row-constant inputs) take a vectorised body, others a general one.  Each call-out op is a
 * comment in the source (so the source names the program) and
 * *ncalls counts them.  NULL on out of memory. */
char *cm_fused_source(const cm_fused_prog *p, int *ncalls);
/* Fill calls for p (row functions in op order); -1 if an op has none. */
int cm_fused_calls_for(const cm_fused_prog *p, cm_fused_calls *calls);
typedef void (*cm_fused_main_fn)(int64_t n, const char *const *in, const int64_t *is,
                                 char *const *out, void *const *fn, const void *const *pp);
/* Compile (or load from the cache) source and return its cm_fused_main;
 * NULL (no error set) when that is impossible. */
cm_fused_main_fn cm_jit_load(const char *source);

#endif
