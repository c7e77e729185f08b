#include "backend/cpu/binary.h"

#include <math.h>
#include <string.h>

#include "backend/cpu/binary_impl.h"
#include "backend/cpu/binary_loop.h"
#include "backend/cpu/binary_table.h"
#include "backend/cpu/cpu_features.h"
#include "primitives/binary.h"

/* Rough work per element relative to an add, for sizing parallel chunks
 * (the cost column of backend/cpu/binary_table.h): integer division and
 * libm calls are tens of times dearer, and complex arithmetic about four
 * times. */
static const uint8_t op_costs[CM_BINARY_NUM_OPS] = {
#define CM_X(CODE, cost, ...) [CM_BINARY_##CODE] = cost,
    CM_CPU_BINARY_OPS(CM_X)
#undef CM_X
};

static int64_t op_cost(cm_binary_op op, cm_dtype t) {
  int64_t c = op_costs[op];
  return t == CM_COMPLEX64 ? 4 * c : c;
}

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
/* AVX2 rows when the CPU has them; CMLX_BINARY_SIMD=0 forces the baseline. */
static bool use_avx2(void) { return cm_cpu_simd_enabled(CM_SIMD_BINARY); }
#else
static bool use_avx2(void) { return false; }
#define cm_binary_arith_row_avx2 cm_binary_arith_row
#define cm_binary_cmp_row_avx2 cm_binary_cmp_row
#endif

cm_binary_row_fn cm_binary_row_for(cm_binary_op op, cm_dtype t) {
  bool v = use_avx2();
  cm_binary_row_fn fn = v ? cm_binary_arith_row_avx2(op, t) : cm_binary_arith_row(op, t);
  if (!fn) fn = v ? cm_binary_cmp_row_avx2(op, t) : cm_binary_cmp_row(op, t);
  return fn;
}

static void seg(void *ctx, char *const *p, const int64_t *st, int64_t n, int64_t rows,
                const int64_t *rs) {
  cm_binary_row_fn fn = *(cm_binary_row_fn *)ctx;
  cm_bin_run run = {n, rows, {st[0], st[1], st[2]}, {rs[0], rs[1], rs[2]}};
  fn(p[0], p[1], p[2], &run);
}

/* Element i of a real floating-point buffer, as a double. */
static double float_at(const void *v, cm_dtype t, int64_t i) {
  switch (t) {
  case CM_FLOAT32: return ((const float *)v)[i];
  case CM_FLOAT64: return ((const double *)v)[i];
  case CM_FLOAT16: return cm_f16_to_f32(((const uint16_t *)v)[i]);
  case CM_BFLOAT16: return cm_bf16_to_f32(((const uint16_t *)v)[i]);
  default: return NAN;
  }
}

/* The exponent of a power when it is 2 or 1 everywhere: one element
 * broadcast (a Python scalar), or a contiguous array of equal values (the
 * b - 1 that power's gradient computes from a broadcast b); NaN otherwise.
 * The scan stops at the first element that differs. */
static double small_exponent(const cm_array *a) {
  const void *v = cm_data(a);
  double e = float_at(v, a->dtype, 0);
  if (e != 2.0 && e != 1.0) return NAN;
  if (a->data_size == 1) return e;
  if (!cm_row_contiguous(a)) return NAN;
  /* every element has element 0's bytes: compare in blocks of 256 bytes */
  size_t isz = cm_dtype_size(a->dtype), n = (size_t)a->size * isz, blk = 256 / isz * isz;
  unsigned char first[256];
  const unsigned char *b = v;
  for (size_t k = 0; k < blk; k += isz) memcpy(first + k, b, isz);
  size_t i = 0;
  for (; i + blk <= n; i += blk)
    if (memcmp(b + i, first, blk)) return NAN;
  return memcmp(b + i, first, n - i) ? NAN : e;
}

int cm_cpu_binary(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_binary_op op = cm_binary_params_of(out)->op;
  cm_dtype t = in[0]->dtype;
  cm_binary_row_fn fn = cm_binary_row_for(op, t);
  if (!fn || in[1]->dtype != t)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[%s] Not implemented for %s.", cm_binary_op_name(op),
                    cm_dtype_name(t));
  /* x ** 2 and x ** 1 with the same exponent everywhere (a squared loss
   * and its gradient's x ** 1) are x * x and x * 1: pow's exact result
   * rounded once, without a libm pow per element (about 40x dearer) */
  cm_array *rhs = in[1];
  if (op == CM_BINARY_POWER && in[1]->size > 0) {
    double e = small_exponent(in[1]);
    if (e == 2.0 || e == 1.0) fn = cm_binary_row_for(CM_BINARY_MULTIPLY, t);
    if (e == 2.0) rhs = in[0];
  }
  /* element 0 of each input, read before donation may move a buffer */
  char *data[3] = {NULL, cm_data(in[0]), cm_data(rhs)};
  if (cm_ew_output(out, in, 2)) return -1;
  data[0] = cm_data(out);
  cm_array *ops[3] = {out, in[0], rhs};
  cm_ew_run(ops, data, 3, op_cost(op, t), seg, &fn);
  return 0;
}

/* DivMod: quotient and remainder in one pass over the inputs.  At most the
 * quotient takes over an input's buffer, and each segment writes the
 * remainder first, so every element of both inputs is read before the
 * in-place quotient overwrites it. */
typedef struct divmod_rows {
  cm_binary_row_fn quotient, remainder;
} divmod_rows;

static void divmod_seg(void *ctx, char *const *p, const int64_t *st, int64_t n, int64_t rows,
                       const int64_t *rs) {
  const divmod_rows *f = ctx;
  cm_bin_run rem = {n, rows, {st[1], st[2], st[3]}, {rs[1], rs[2], rs[3]}};
  f->remainder(p[1], p[2], p[3], &rem);
  cm_bin_run quo = {n, rows, {st[0], st[2], st[3]}, {rs[0], rs[2], rs[3]}};
  f->quotient(p[0], p[2], p[3], &quo);
}

int cm_cpu_divmod(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *quotient = cm_output(out, 0), *remainder = cm_output(out, 1);
  cm_dtype t = in[0]->dtype;
  divmod_rows f = {cm_binary_row_for(CM_BINARY_FLOOR_DIVIDE, t),
                   cm_binary_row_for(CM_BINARY_REMAINDER, t)};
  if (!f.quotient || !f.remainder || in[1]->dtype != t)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[DivMod] Not implemented for %s.", cm_dtype_name(t));
  char *data[4] = {NULL, NULL, cm_data(in[0]), cm_data(in[1])};
  if (cm_ew_output(quotient, in, 2) || cm_alloc_output_like(remainder, quotient)) return -1;
  data[0] = cm_data(quotient);
  data[1] = cm_data(remainder);
  cm_array *ops[4] = {quotient, remainder, in[0], in[1]};
  int64_t cost = op_cost(CM_BINARY_FLOOR_DIVIDE, t) + op_cost(CM_BINARY_REMAINDER, t);
  cm_ew_run(ops, data, 4, cost, divmod_seg, &f);
  return 0;
}
