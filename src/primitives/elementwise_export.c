/* .mlxfn states of the elementwise primitives (unary.c, binary.c,
 * ternary.c, divmod.c; the contract is export_desc.h).
 *
 * MLX has most unary and binary op codes as primitives of their own,
 * without state, under the op table's Name; a few share one with a state
 * (Log's base, Sqrt's reciprocal flag, Equal's NaN flag, BitwiseBinary's
 * op).  Those MLX composes (reciprocal, degrees, radians, the float
 * predicates) are written as MLX's composition through the writer's
 * bridges; the rest under "CmlxUnary" / "CmlxBinary" with cmlx's op code,
 * which cmlx reads back and MLX reports it cannot deserialise. */
#include <math.h>

#include <string.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/ops.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/binary.h"
#include "primitives/divmod.h"
#include "primitives/export_desc.h"
#include "primitives/rules_util.h"
#include "primitives/ternary.h"
#include "primitives/unary.h"

/* ---- Unary ---- */

/* The op codes MLX has as stateless primitives under the Name column. */
static const cm_unary_op mlx_unary_ops[] = {
    CM_UNARY_ABS,         CM_UNARY_NEGATIVE, CM_UNARY_SIGN,    CM_UNARY_SQUARE,  CM_UNARY_EXP,
    CM_UNARY_EXPM1,       CM_UNARY_LOG1P,    CM_UNARY_SIN,     CM_UNARY_COS,     CM_UNARY_TAN,
    CM_UNARY_ARCSIN,      CM_UNARY_ARCCOS,   CM_UNARY_ARCTAN,  CM_UNARY_SINH,    CM_UNARY_COSH,
    CM_UNARY_TANH,        CM_UNARY_ARCSINH,  CM_UNARY_ARCCOSH, CM_UNARY_ARCTANH, CM_UNARY_SIGMOID,
    CM_UNARY_ERF,         CM_UNARY_ERFINV,   CM_UNARY_FLOOR,   CM_UNARY_CEIL,    CM_UNARY_ROUND,
    CM_UNARY_LOGICAL_NOT, CM_UNARY_REAL,     CM_UNARY_IMAG,    CM_UNARY_CONJ,
};

static bool mlx_unary(cm_unary_op op) { return CM_XINDEX_OF(mlx_unary_ops, op) >= 0; }

/* MLX's compositions of the unary ops it has no primitive for; 1 when
 * op is one (sv set), 0 when not. */
static int save_unary_composed(const cm_array *a, cm_unary_op op, xw *w, xsave *sv) {
  cm_dtype in = a->in[0]->dtype;
  switch (op) {
  case CM_UNARY_RECIPROCAL:
    sv->scalar = sv->scalar_first = true, sv->value = 1.0;
    return sv->name = "Divide", 1;
  case CM_UNARY_DEGREES:
  case CM_UNARY_RADIANS:
    sv->scalar = true, sv->value = op == CM_UNARY_DEGREES ? 180.0 / M_PI : M_PI / 180.0;
    return sv->name = "Multiply", 1;
  case CM_UNARY_ISPOSINF:
  case CM_UNARY_ISNEGINF:
    if (!cm_dtype_is_float(in)) return 0;
    sv->scalar = true, sv->value = op == CM_UNARY_ISPOSINF ? INFINITY : -INFINITY;
    xw_bool(w, false);
    return sv->name = "Equal", 1;
  case CM_UNARY_ISNAN:
    if (!cm_dtype_is_float(in) && in != CM_COMPLEX64) return 0;
    sv->self = true;
    return sv->name = "NotEqual", 1;
  default: return 0;
  }
}

static int save_unary(const cm_array *a, xw *w, xsave *sv) {
  const cm_unary_params *u = cm_unary_params_of(a);
  sv->real = u->op == CM_UNARY_ABS && a->in[0]->dtype == CM_COMPLEX64;
  if (mlx_unary(u->op)) return sv->name = cm_unary_op_name(u->op), 0;
  if (u->op == CM_UNARY_LOG || u->op == CM_UNARY_LOG2 || u->op == CM_UNARY_LOG10) {
    xw_i32(w, u->op == CM_UNARY_LOG2 ? 0 : u->op == CM_UNARY_LOG10 ? 1 : 2);
    return sv->name = "Log", 0;
  }
  if (u->op == CM_UNARY_SQRT || u->op == CM_UNARY_RSQRT) {
    xw_bool(w, u->op == CM_UNARY_RSQRT);
    return sv->name = "Sqrt", 0;
  }
  if (save_unary_composed(a, u->op, w, sv)) return 0;
  xw_i32(w, u->op);
  xw_i32(w, u->decimals);
  xw_f32(w, u->nan), xw_f32(w, u->posinf), xw_f32(w, u->neginf);
  return sv->name = "CmlxUnary", 0;
}

static int load_unary(cm_unary_op op, cm_array *const *in, int nin, const xout *o, cm_array **outs,
                      cm_stream s) {
  CM_XINPUTS(1, 1);
  return cm_xload_one(cm_unary(op, in[0], s), o, outs);
}

CM_XLOAD(load_named_unary) {
  CM_XMEASURE;
  if (code == CM_UNARY_ABS && nin == 1 && in[0]->dtype == CM_COMPLEX64 && o->n == 1 &&
      o->dtypes[0] == CM_COMPLEX64) { /* MLX's Abs keeps the complex dtype */
    cm_array *m = cm_unary(CM_UNARY_ABS, in[0], s);
    cm_array *c = m ? cm_astype(m, CM_COMPLEX64, s) : NULL;
    cm_release(m);
    return cm_xload_one(c, o, outs);
  }
  return load_unary((cm_unary_op)code, in, nin, o, outs, s);
}
CM_XLOAD(load_log) {
  int32_t base = xr_i32(r);
  if (base < 0 || base > 2) xr_bad(r, "an invalid Log base");
  CM_XMEASURE;
  return load_unary(base == 0   ? CM_UNARY_LOG2
                    : base == 1 ? CM_UNARY_LOG10
                                : CM_UNARY_LOG,
                    in, nin, o, outs, s);
}
CM_XLOAD(load_sqrt) {
  bool recip = xr_bool(r);
  CM_XMEASURE;
  return load_unary(recip ? CM_UNARY_RSQRT : CM_UNARY_SQRT, in, nin, o, outs, s);
}
CM_XLOAD(load_cmlx_unary) {
  int32_t op = xr_i32(r), dec = xr_i32(r);
  float nan = xr_f32(r), pinf = xr_f32(r), ninf = xr_f32(r);
  if (op < 0 || op >= CM_UNARY_NUM_OPS) xr_bad(r, "an invalid unary op");
  CM_XMEASURE;
  CM_XINPUTS(1, 1);
  if (op == CM_UNARY_ROUND_DECIMALS) return cm_xload_one(cm_round(in[0], dec, s), o, outs);
  if (op == CM_UNARY_NAN_TO_NUM)
    return cm_xload_one(cm_nan_to_num(in[0], nan, true, pinf, true, ninf, s), o, outs);
  return load_unary((cm_unary_op)op, in, nin, o, outs, s);
}

static int unary_op_names(cm_export_name *out, int max) {
  int n = 0;
  for (int i = 0; i < CM_XCOUNT(mlx_unary_ops) && n < max; i++)
    out[n++] = (cm_export_name){cm_unary_op_name(mlx_unary_ops[i]), load_named_unary,
                                (int)mlx_unary_ops[i]};
  return n;
}

/* ---- elementwise ops MLX composes (ops.cpp's isinf, isfinite, nan_to_num,
 * round with decimals, logical_xor; the predicates on integers are
 * constants there) ---- */

static cm_array *scalar(cm_rt *t, double v, cm_dtype dt) {
  return RT(t, cm_array_scalar_double(v, dt));
}

/* x == +inf or x == -inf; complex: either part. */
static cm_array *is_inf(cm_rt *t, cm_array *x, cm_stream s) {
  if (x->dtype == CM_COMPLEX64) {
    cm_array *re = RT(t, cm_real(x, s)), *im = RT(t, cm_imag(x, s));
    if (t->fail) return NULL;
    cm_array *a = is_inf(t, re, s), *b = a ? is_inf(t, im, s) : NULL;
    return b ? RT(t, cm_logical_or(a, b, s)) : NULL;
  }
  cm_array *pi = scalar(t, INFINITY, x->dtype), *ni = scalar(t, -INFINITY, x->dtype);
  cm_array *p = t->fail ? NULL : RT(t, cm_equal(x, pi, s));
  cm_array *n = t->fail ? NULL : RT(t, cm_equal(x, ni, s));
  return t->fail ? NULL : RT(t, cm_logical_or(p, n, s));
}

static cm_array *lower_unary(const cm_array *a) {
  const cm_unary_params *u = cm_unary_params_of(a);
  cm_array *x = a->in[0];
  cm_stream s = a->stream;
  bool inexact = cm_dtype_is_inexact(x->dtype), real = cm_dtype_is_float(x->dtype);
  cm_rt t = {0};
  cm_array *r = NULL, *out;
  switch (u->op) {
  case CM_UNARY_ISNAN:
  case CM_UNARY_ISINF:
  case CM_UNARY_ISPOSINF:
  case CM_UNARY_ISNEGINF:
  case CM_UNARY_ISFINITE:
    if (!inexact) { /* MLX's full(shape, false) (true for isfinite) */
      cm_array *v = scalar(&t, u->op == CM_UNARY_ISFINITE, CM_BOOL);
      r = t.fail ? NULL : RT(&t, cm_full(a->ndim, a->shape, v, CM_BOOL, s));
    } else if (u->op == CM_UNARY_ISINF) {
      r = is_inf(&t, x, s);
    } else if (u->op == CM_UNARY_ISFINITE) {
      cm_array *i = is_inf(&t, x, s), *n = t.fail ? NULL : RT(&t, cm_not_equal(x, x, s));
      cm_array *o = t.fail ? NULL : RT(&t, cm_logical_or(i, n, s));
      r = t.fail ? NULL : RT(&t, cm_logical_not(o, s));
    } else {
      return NULL; /* the writer's own bridges (save_unary_composed) */
    }
    break;
  case CM_UNARY_NAN_TO_NUM: {
    if (!real) return NULL;
    cm_dtype dt = x->dtype;
    cm_array *vn = scalar(&t, u->nan, dt), *vp = scalar(&t, u->posinf, dt);
    cm_array *vm = scalar(&t, u->neginf, dt), *pi = scalar(&t, INFINITY, dt);
    cm_array *ni = scalar(&t, -INFINITY, dt);
    if (t.fail) break;
    cm_array *nan = RT(&t, cm_not_equal(x, x, s)), *o = RT(&t, cm_where(nan, vn, x, s));
    cm_array *pos = RT(&t, cm_equal(x, pi, s)), *o2 = RT(&t, cm_where(pos, vp, o, s));
    cm_array *neg = RT(&t, cm_equal(x, ni, s));
    r = RT(&t, cm_where(neg, vm, o2, s));
    break;
  }
  case CM_UNARY_ROUND_DECIMALS: {
    if (!cm_dtype_is_float(a->dtype)) return NULL;
    cm_array *sc = scalar(&t, u->scale, a->dtype), *inv = scalar(&t, u->inv_scale, a->dtype);
    cm_array *m = t.fail ? NULL : RT(&t, cm_multiply(x, sc, s));
    cm_array *rd = RT(&t, cm_round(m, 0, s));
    r = RT(&t, cm_multiply(rd, inv, s));
    break;
  }
  default: return NULL;
  }
  if (!t.fail && r &&
      (r->dtype != a->dtype || !cm_shape_equal(r->ndim, r->shape, a->ndim, a->shape)))
    r = NULL; /* not the node's value after all: keep the node */
  return cm_rt_done(&t, r, &out) || !r ? NULL : out;
}

static cm_array *lower_logical_xor(const cm_array *a) {
  cm_stream s = a->stream;
  cm_rt t = {0};
  cm_array *x = RT(&t, cm_astype(a->in[0], CM_BOOL, s)),
           *y = RT(&t, cm_astype(a->in[1], CM_BOOL, s));
  cm_array *r = t.fail ? NULL : RT(&t, cm_not_equal(x, y, s)), *out;
  return cm_rt_done(&t, r, &out) ? NULL : out;
}

static cm_array *lower_binary(const cm_array *a) {
  return cm_binary_params_of(a)->op == CM_BINARY_LOGICAL_XOR ? lower_logical_xor(a) : NULL;
}

const cm_export_desc cm_export_unary = {
    .save = save_unary,
    .lower = lower_unary,
    CM_EXPORT_NAMES({"Log", load_log, 0}, {"Sqrt", load_sqrt, 0},
                    {"CmlxUnary", load_cmlx_unary, 0}),
    .op_names = unary_op_names,
};

static int make_stop_gradient(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                              cm_array **outs, cm_stream s) {
  (void)v, (void)nin;
  return cm_xload_one(cm_stop_gradient(in[0], s), o, outs);
}
const cm_export_desc cm_export_stop_gradient = {
    .name = "StopGradient", .nin_lo = 1, .nin_hi = 1, .make = make_stop_gradient};

/* ---- Binary ---- */

/* The op codes MLX has as stateless primitives under the Name column. */
static const cm_binary_op mlx_binary_ops[] = {
    CM_BINARY_ADD,        CM_BINARY_SUBTRACT,     CM_BINARY_MULTIPLY,      CM_BINARY_DIVIDE,
    CM_BINARY_REMAINDER,  CM_BINARY_POWER,        CM_BINARY_MAXIMUM,       CM_BINARY_MINIMUM,
    CM_BINARY_ARCTAN2,    CM_BINARY_LOGADDEXP,    CM_BINARY_NOT_EQUAL,     CM_BINARY_LESS,
    CM_BINARY_LESS_EQUAL, CM_BINARY_GREATER,      CM_BINARY_GREATER_EQUAL, CM_BINARY_LOGICAL_AND,
    CM_BINARY_LOGICAL_OR, CM_BINARY_FLOOR_DIVIDE,
};

/* MLX's BitwiseBinary::Op: And, Or, Xor, LeftShift, RightShift. */
static const cm_binary_op bitwise_ops[5] = {CM_BINARY_BITWISE_AND, CM_BINARY_BITWISE_OR,
                                            CM_BINARY_BITWISE_XOR, CM_BINARY_LEFT_SHIFT,
                                            CM_BINARY_RIGHT_SHIFT};

static int save_binary(const cm_array *a, xw *w, xsave *sv) {
  cm_binary_op op = cm_binary_params_of(a)->op;
  if (CM_XINDEX_OF(mlx_binary_ops, op) >= 0) return sv->name = cm_binary_op_name(op), 0;
  if (op == CM_BINARY_EQUAL) return xw_bool(w, false), sv->name = "Equal", 0;
  int k = CM_XINDEX_OF(bitwise_ops, op);
  if (k >= 0) return xw_i32(w, k), sv->name = "BitwiseBinary", 0;
  xw_i32(w, op);
  return sv->name = "CmlxBinary", 0;
}

static int load_binary(cm_binary_op op, cm_array *const *in, int nin, const xout *o,
                       cm_array **outs, cm_stream s) {
  CM_XINPUTS(2, 2);
  return cm_xload_one(cm_binary(op, in[0], in[1], s), o, outs);
}
CM_XLOAD(load_named_binary) {
  CM_XMEASURE;
  return load_binary((cm_binary_op)code, in, nin, o, outs, s);
}
CM_XLOAD(load_cmlx_binary) {
  int32_t op = xr_i32(r);
  if (op < 0 || op >= CM_BINARY_NUM_OPS) xr_bad(r, "an invalid binary op");
  CM_XMEASURE;
  return load_binary((cm_binary_op)op, in, nin, o, outs, s);
}
CM_XLOAD(load_equal) {
  bool nan = xr_bool(r);
  CM_XMEASURE;
  if (nan) return cm_error(CM_ERR_VALUE, "[import_function] NaNEqual is not supported by cmlx.");
  return load_binary(CM_BINARY_EQUAL, in, nin, o, outs, s);
}
CM_XLOAD(load_bitwise) {
  int32_t k = xr_i32(r);
  if (k < 0 || k >= CM_XCOUNT(bitwise_ops)) xr_bad(r, "an invalid bitwise op");
  CM_XMEASURE;
  return load_binary(bitwise_ops[k], in, nin, o, outs, s);
}

static int binary_op_names(cm_export_name *out, int max) {
  int n = 0;
  for (int i = 0; i < CM_XCOUNT(mlx_binary_ops) && n < max; i++)
    out[n++] = (cm_export_name){cm_binary_op_name(mlx_binary_ops[i]), load_named_binary,
                                (int)mlx_binary_ops[i]};
  return n;
}

const cm_export_desc cm_export_binary = {
    .save = save_binary,
    .lower = lower_binary,
    CM_EXPORT_NAMES({"CmlxBinary", load_cmlx_binary, 0}, {"Equal", load_equal, 0},
                    {"BitwiseBinary", load_bitwise, 0}),
    .op_names = binary_op_names,
};

/* ---- Select, DivMod ---- */

static int make_select(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                       cm_array **outs, cm_stream s) {
  (void)v, (void)nin;
  return cm_xload_one(cm_where(in[0], in[1], in[2], s), o, outs);
}
const cm_export_desc cm_export_select = {
    .name = "Select", .nin_lo = 3, .nin_hi = 3, .make = make_select};

static int make_divmod(const cm_xval *v, cm_array *const *in, int nin, const xout *o,
                       cm_array **outs, cm_stream s) {
  (void)v, (void)nin;
  if (o->n != 2) return cm_error(CM_ERR_VALUE, "[import_function] Invalid file: DivMod outputs.");
  return cm_divmod(in[0], in[1], &outs[0], &outs[1], s);
}
const cm_export_desc cm_export_divmod = {
    .name = "DivMod", .nin_lo = 2, .nin_hi = 2, .make = make_divmod};
