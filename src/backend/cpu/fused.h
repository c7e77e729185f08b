/* Fused elementwise kernels (mx.compile): the CPU's side of a fused
 * program (primitives/compiled.h).  The first time a Compiled node of a
 * program is evaluated, the program is turned into C source
 * (jit_codegen.c), compiled with the system compiler and loaded (jit.c;
 * the disk cache makes that a load in later processes), and the kernel is
 * kept for the program from then on.  One driver (fused.c) runs it over
 * any layout.  Ops whose kernels are exact expressions are written inline
 * in the generated loop; the others (libm and vectorised transcendental
 * loops, integer division, float to integer casts) call the very row
 * functions the op-by-op kernels use, on blocks of the region's values, so
 * fused results equal unfused ones bit for bit.  A program whose kernel
 * cannot be built (no compiler) is interpreted over those row functions
 * (fused_interp.c), with the same bits. */
#ifndef CMLX_BACKEND_CPU_FUSED_H
#define CMLX_BACKEND_CPU_FUSED_H

#include <stdbool.h>
#include <stdint.h>

#include "core/array.h"
#include "primitives/compiled.h"

/* Whether a fused kernel can compute a node of this kind (UNARY .. CAST),
 * op code and dtypes. */
bool cm_fused_supports(cm_fused_op_kind kind, int op, cm_dtype in, cm_dtype out);

/* Whether such a node is written inline in the kernels (one exact C
 * expression) rather than calling a row function. */
bool cm_fused_inline(cm_fused_op_kind kind, int op, cm_dtype in, cm_dtype out);

/* The Compiled primitive's CPU kernel. */
int cm_cpu_fused(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Its form for a region feeding a reduction (fused_reduce.c). */
int cm_cpu_fused_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* ---- internal: kernels, code generation and loading ---- */
typedef void (*cm_fused_main_fn)(int64_t n, const char *const *in, const int64_t *is,
                                 char *const *out, void *const *fn, const void *const *pp);

/* What runs a program: its generated kernel (main, with the row
 * functions and parameters of its call-outs), or, when none could be had,
 * the interpreter (main NULL).  A snapshot: the table may gain the built
 * kernel later (a retry with another compiler), a run keeps what it took. */
typedef struct cm_fused_exec {
  const cm_fused_program *prog;
  cm_fused_main_fn main;
  void *const *fn;
  const void *const *pp;
} cm_fused_exec;

/* The kernel of interned program p: looked up by program, else by its
 * source (programs that differ only in their reduction share one),
 * else built (or loaded from the disk cache) once per process while
 * other threads asking for it wait.  A build that fails is not tried
 * again until $CMLX_CC changes; meanwhile the program is interpreted.
 * 0, or -1 with a MemoryError. */
int cm_fused_exec_for(const cm_fused_program *p, cm_fused_exec *x);

/* Program p computed op by op over blocks of its values with the row
 * functions of the op-by-op kernels (fused_interp.c): the same contract
 * and bits as p's generated cm_fused_main. */
void cm_fused_interpret(const cm_fused_program *p, int64_t n, const char *const *in,
                        const int64_t *is, char *const *out);

/* Run x on n elements (as cm_fused_main below). */
static inline void cm_fused_exec_run(const cm_fused_exec *x, int64_t n, const char *const *in,
                                     const int64_t *is, char *const *out) {
  if (x->main) x->main(n, in, is, out, x->fn, x->pp);
  else cm_fused_interpret(x->prog, n, in, is, out);
}

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
char *cm_fused_source(const cm_fused_program *p, int *ncalls);
/* Fill calls for p (row functions in op order); -1 if an op has none. */
int cm_fused_calls_for(const cm_fused_program *p, cm_fused_calls *calls);
/* Compile (or load from the cache) source and return its cm_fused_main;
 * NULL (no error set) when that is impossible. */
cm_fused_main_fn cm_jit_load(const char *source);

#endif
