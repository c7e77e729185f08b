/* Elementwise unary op constructors.  Each op's dtype rule is in its row of
 * ops/unary_ops.h: which dtypes it rejects (with MLX's message), which it
 * passes through unchanged, and what the result dtype is.  Ops MLX builds
 * from several primitives (isfinite, degrees, radians, nan_to_num, round
 * with decimals) are single Unary nodes here, with MLX's constants and
 * rounding steps reproduced inside the kernel. */
#include "ops/unary.h"

#include <math.h>
#include <string.h>

#include "primitives/unary.h"

enum out_rule {
  OUT_SAME,  /* result has the input's dtype */
  OUT_FLOAT, /* integers and bool are cast to float32 first */
  OUT_BOOL,  /* predicates */
  OUT_REAL,  /* complex64 -> float32, others keep their dtype (abs, real, imag) */
};

enum {
  NO_BOOL = 1,          /* negative: ValueError on bool */
  NO_COMPLEX = 2,       /* ValueError "[op] Not supported for complex64." */
  INTEGER_ONLY = 4,     /* bitwise_invert: bool and integers only */
  IDENTITY_EXACT = 8,   /* floor/ceil/round: integers and bool come back as is */
  IDENTITY_REAL = 16,   /* real/conj: non-complex inputs come back as is */
};

/* Each op's name, result rule and checks: its row of ops/unary_ops.h. */
static const struct op_info {
  const char *name; /* MLX's op name, for messages */
  unsigned char out, flags;
} info[CM_UNARY_NUM_OPS] = {
#define CM_X(CODE, name, Name, out, checks, ...) [CM_UNARY_##CODE] = {#name, OUT_##out, checks},
    CM_UNARY_OPS(CM_X)
#undef CM_X
};

/* Build the node for p->op over a: check, cast, pick the result dtype. */
static cm_array *unary_node(cm_array *a, const cm_unary_params *p, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[unary] Got a null array."), NULL;
  if ((unsigned)p->op >= CM_UNARY_NUM_OPS)
    return cm_error(CM_ERR_VALUE, "[unary] Invalid op code %d.", (int)p->op), NULL;
  if (cm_op_stream(&s)) return NULL;
  const struct op_info *in = &info[p->op];
  cm_dtype t = a->dtype;
  cm_kind k = cm_dtype_kind(t);
  if ((in->flags & NO_BOOL) && t == CM_BOOL)
    return cm_error(CM_ERR_VALUE, "[%s] Not supported for bool, use logical_not instead.",
                    in->name),
           NULL;
  if ((in->flags & NO_COMPLEX) && k == CM_KIND_COMPLEX)
    return cm_error(CM_ERR_VALUE, "[%s] Not supported for %s.", in->name, cm_dtype_name(t)), NULL;
  if ((in->flags & INTEGER_ONLY) && cm_dtype_is_inexact(t))
    return cm_error(CM_ERR_VALUE, "[%s] Bitwise inverse only allowed on integer types.", in->name),
           NULL;
  if ((in->flags & IDENTITY_EXACT) && !cm_dtype_is_inexact(t)) return cm_retain(a);
  if ((in->flags & IDENTITY_REAL) && k != CM_KIND_COMPLEX) return cm_retain(a);

  cm_dtype out = t;
  cm_array *x = cm_retain(a);
  switch ((enum out_rule)in->out) {
  case OUT_SAME: break;
  case OUT_FLOAT:
    out = cm_float_result_type(t);
    if (out != t) {
      cm_release(x);
      if (!(x = cm_astype(a, out, s))) return NULL;
    }
    break;
  case OUT_BOOL: out = CM_BOOL; break;
  case OUT_REAL: out = k == CM_KIND_COMPLEX ? CM_FLOAT32 : t; break;
  }
  cm_array *r = cm_op_node(out, x->ndim, x->shape, &cm_prim_unary, p, sizeof *p, &x, 1, s);
  cm_release(x);
  return r;
}

static cm_array *simple(cm_unary_op op, cm_array *a, cm_stream s) {
  cm_unary_params p;
  memset(&p, 0, sizeof p);
  p.op = op;
  return unary_node(a, &p, s);
}

cm_array *cm_unary(cm_unary_op op, cm_array *a, cm_stream s) {
  if (op == CM_UNARY_ROUND_DECIMALS) return cm_round(a, 0, s);
  if (op == CM_UNARY_NAN_TO_NUM) return cm_nan_to_num(a, 0.0f, false, 0, false, 0, s);
  return simple(op, a, s);
}

/* The named constructors of ops/unary.h (ctor column NAMED). */
#define SIMPLE_OP_NAMED(CODE, name) \
  cm_array *cm_##name(cm_array *a, cm_stream s) { return simple(CM_UNARY_##CODE, a, s); }
#define SIMPLE_OP_OWN(CODE, name)
#define CM_X(CODE, name, Name, out, checks, grad, ctor, ...) SIMPLE_OP_##ctor(CODE, name)
CM_UNARY_OPS(CM_X)
#undef CM_X

cm_array *cm_positive(cm_array *a, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[positive] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  return cm_retain(a);
}

/* MLX: decimals == 0 is the Round primitive (integers pass through);
 * otherwise the input goes to its float type, is multiplied by 10^d,
 * rounded, multiplied by the float 1/10^d, and cast back.  Integers go
 * through float32 there too, so they lose precision past 2^24 as in MLX. */
cm_array *cm_round(cm_array *a, int decimals, cm_stream s) {
  if (decimals == 0) return simple(CM_UNARY_ROUND, a, s);
  if (!a) return cm_error(CM_ERR_VALUE, "[round] Got a null array."), NULL;
  cm_unary_params p;
  memset(&p, 0, sizeof p);
  p.op = CM_UNARY_ROUND_DECIMALS;
  p.decimals = decimals;
  p.scale = (float)pow(10.0, decimals);
  p.inv_scale = 1.0f / p.scale;
  cm_array *r = unary_node(a, &p, s);
  if (!r || r->dtype == a->dtype) return r;
  cm_array *c = cm_astype(r, a->dtype, s);
  cm_release(r);
  return c;
}

/* Finite stand-ins for +-inf: the dtype's max and lowest.  MLX knows them
 * for the 32- and 16-bit floats only and raises for other inexact types,
 * but only when a default is actually needed. */
static int dtype_max(cm_dtype t, float *out) {
  switch (t) {
  case CM_FLOAT16: *out = 65504.0f; return 0;
  case CM_BFLOAT16: *out = 3.38953138925153547590e+38f; return 0; /* 0x7f7f */
  case CM_FLOAT32: *out = 3.40282346638528859812e+38f; return 0;  /* FLT_MAX */
  default:
    return cm_error(CM_ERR_VALUE, "[nan_to_num] Does not yet support given type: %s.",
                    cm_dtype_name(t));
  }
}

cm_array *cm_nan_to_num(cm_array *a, float nan, bool has_posinf, float posinf, bool has_neginf,
                        float neginf, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[nan_to_num] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  cm_dtype t = a->dtype;
  if (!cm_dtype_is_inexact(t)) return cm_retain(a);
  cm_unary_params p;
  memset(&p, 0, sizeof p);
  p.op = CM_UNARY_NAN_TO_NUM;
  p.nan = nan;
  p.posinf = posinf;
  p.neginf = neginf;
  float m = 0;
  if (!has_posinf) {
    if (dtype_max(t, &m)) return NULL;
    p.posinf = m;
  }
  if (!has_neginf) {
    if (dtype_max(t, &m)) return NULL;
    p.neginf = -m;
  }
  return unary_node(a, &p, s);
}

cm_array *cm_stop_gradient(cm_array *a, cm_stream s) {
  if (!a) return cm_error(CM_ERR_VALUE, "[stop_gradient] Got a null array."), NULL;
  if (cm_op_stream(&s)) return NULL;
  return cm_op_node(a->dtype, a->ndim, a->shape, &cm_prim_stop_gradient, NULL, 0, &a, 1, s);
}
