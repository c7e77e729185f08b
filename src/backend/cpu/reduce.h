/* CPU kernels for the reduction primitives, and the plan they share.
 *
 * A plan splits the input's axes into kept axes (one per output element,
 * in output order) and reduced axes (walked in row-major order, which is
 * what arg-reductions count in), drops size-1 axes and merges neighbours
 * that step evenly in memory.  Three shapes of loop then cover all inputs:
 *   rows     the reduced axes merge into one contiguous run per output
 *            (reduce-all of a contiguous array, sum over the last axis)
 *   columns  the innermost kept axis is contiguous: whole rows of outputs
 *            are accumulated at once (sum over leading axes)
 *   general  anything else: reduced elements are gathered in blocks. */
#ifndef CMLX_BACKEND_CPU_REDUCE_H
#define CMLX_BACKEND_CPU_REDUCE_H

#include "backend/cpu/types.h"
#include "primitives/primitive.h"

int cm_cpu_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_arg_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_median(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
/* Fused softmax / logsumexp over the last axis (reduce_softmax.c). */
int cm_cpu_softmax(cm_array *out, cm_array *const *in, int nin, const cm_params *p);
int cm_cpu_logsumexp(cm_array *out, cm_array *const *in, int nin, const cm_params *p);

/* Reductions of values made on demand (fused regions feeding a reduction,
 * backend/cpu/fused_reduce.c): nout rows of nred elements of dtype dt,
 * row-major, reduced with op into dst (odt) with the very blocks, kernels
 * and combining tree of the Reduce kernel on a contiguous row-major input,
 * so the results are the same bits.  produce(ctx, start, n, buf) writes
 * the n values from flat index start into buf (n <= 4096, 8-byte items at
 * most); it is called from the pool's threads. */
typedef void (*cm_reduce_producer)(void *ctx, int64_t start, int64_t n, void *buf);
bool cm_reduce_rows_supported(int op, cm_dtype dt);
int cm_reduce_rows_produced(int op, cm_dtype dt, int64_t nout, int64_t nred,
                            cm_reduce_producer produce, void *ctx, char *dst, cm_dtype odt);

/* ---- shared by the reduce_*.c kernels ---- */
typedef struct cm_reduce_plan {
  int nk, nr;                    /* merged kept / reduced axes */
  int64_t kshape[CM_MAX_DIMS];   /* kept axes, outermost first */
  int64_t kstride[CM_MAX_DIMS];  /* their input strides (elements) */
  int64_t rshape[CM_MAX_DIMS];   /* reduced axes, outermost first */
  int64_t rstride[CM_MAX_DIMS];
  int64_t nout; /* number of outputs (product of kshape) */
  int64_t nred; /* elements reduced into each output (product of rshape) */
} cm_reduce_plan;

void cm_reduce_plan_init(cm_reduce_plan *P, const cm_array *in, uint64_t axes);

/* Faster kernels for this CPU (reduce_x86.c): replaces *base (reduce a
 * contiguous run into one accumulator) and *col (fold a row into a row of
 * accumulators), and sets *col4 (fold four rows `stride` bytes apart,
 * combined pairwise first) for op on dtype and returns true; or returns
 * false. */
typedef void (*cm_red_fn)(void *acc, const void *src, int64_t n);
typedef void (*cm_red_col4_fn)(void *acc, const void *src, int64_t stride, int64_t n);
bool cm_reduce_simd(int op, cm_dtype dt, cm_red_fn *base, cm_red_fn *col, cm_red_col4_fn *col4);
/* The kernel reducing a contiguous run of dtype with op (sum .. or) into
 * one accumulator (float for halves), the fastest this CPU has. */
cm_red_fn cm_reduce_contig(int op, cm_dtype dt);

/* A complex value from its parts (CMPLXF is missing under clang with
 * glibc; C11 guarantees the two-float layout). */
static inline cm_c64_t cm_reduce_cplx(float re, float im) {
  union { float f[2]; cm_c64_t c; } u = {{re, im}};
  return u.c;
}

/* An odometer over a list of axes giving the element offset of the
 * current position; next() is amortised O(1). */
typedef struct cm_axes_cursor {
  int n;
  const int64_t *shape, *stride;
  int64_t index[CM_MAX_DIMS];
  int64_t offset;
} cm_axes_cursor;

void cm_axes_cursor_seek(cm_axes_cursor *c, int n, const int64_t *shape, const int64_t *stride,
                         int64_t pos);
static inline void cm_axes_cursor_next(cm_axes_cursor *c) {
  for (int i = c->n - 1; i >= 0; i--) {
    c->offset += c->stride[i];
    if (++c->index[i] < c->shape[i]) return;
    c->offset -= c->stride[i] * c->shape[i];
    c->index[i] = 0;
  }
}

#endif
