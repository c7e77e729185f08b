/* Transform rules of the Unary primitive (every op code) and StopGradient.
 *
 * Most ops are linear in the (co)tangent g: the rule is g * f or g / f for
 * a factor f built from the input x or the output, optionally with a
 * constant scale applied to g first ("pre", MLX's order of operations) or
 * to the result ("post").  Forward mode uses f; reverse mode uses conj(f),
 * MLX's convention for complex inputs (the cotangent is dL/dz*, as in
 * PyTorch): for a holomorphic f the vjp is g * conj(f'(z)).  conj is the
 * identity (no node) on real dtypes, so real graphs are exactly MLX's.
 *
 * Non-differentiable ops (floor, ceil, round, sign, the predicates,
 * logical_not) have a zero gradient: vjp leaves the cotangent NULL (zero
 * to the engine) and jvp returns zeros.  bitwise_invert has no rules in
 * MLX (integers only) and raises NotImplementedError here.
 *
 * vmap is the same node on the batched input; the batch axis passes
 * through. */
#include <math.h>

#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"
#include "primitives/unary.h"

/* A LINEAR op whose factor is missing from factor() below, or a SPECIAL
 * op missing from special(), must not compile: both switches get the
 * other kinds' case labels from the table and have no default. */
#pragma GCC diagnostic error "-Wswitch"

/* The grad column of ops/unary_ops.h. */
enum kind {
  LINEAR,    /* g * f or g / f (see struct lin) */
  SPECIAL,   /* handled case by case below */
  NO_RULE,   /* not differentiable in MLX */
  ZERO_IN,   /* no gradient; the zero tangent has the input's dtype */
  ZERO_BOOL, /* ... bool (ops MLX builds from logical ones) */
  ZERO_TAN,  /* ... the tangent's (MLX builds these from comparisons) */
};

static const unsigned char kinds[CM_UNARY_NUM_OPS] = {
#define CM_X(CODE, name, Name, out, checks, grad, ...) [CM_UNARY_##CODE] = grad,
    CM_UNARY_OPS(CM_X)
#undef CM_X
};

static enum kind kind_of(cm_unary_op op) { return (enum kind)kinds[op]; }

/* Case labels of the ops of every kind but one (KIND), for the switches
 * that handle exactly the ops of kind KIND. */
#define CASE_IF_NOT_LINEAR_LINEAR(CODE)
#define CASE_IF_NOT_LINEAR_SPECIAL(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_LINEAR_NO_RULE(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_LINEAR_ZERO_IN(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_LINEAR_ZERO_BOOL(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_LINEAR_ZERO_TAN(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_SPECIAL_LINEAR(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_SPECIAL_SPECIAL(CODE)
#define CASE_IF_NOT_SPECIAL_NO_RULE(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_SPECIAL_ZERO_IN(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_SPECIAL_ZERO_BOOL(CODE) case CM_UNARY_##CODE:
#define CASE_IF_NOT_SPECIAL_ZERO_TAN(CODE) case CM_UNARY_##CODE:
#define NOT_LINEAR_X(CODE, name, Name, out, checks, grad, ...) CASE_IF_NOT_LINEAR_##grad(CODE)
#define NOT_SPECIAL_X(CODE, name, Name, out, checks, grad, ...) CASE_IF_NOT_SPECIAL_##grad(CODE)

typedef struct lin {
  cm_array *f; /* NULL: only the scales */
  bool div;    /* g / f instead of g * f */
  bool neg;    /* negate the result */
  double pre;  /* g is first multiplied by pre (in x's dtype) unless 1 */
  double post; /* the result is multiplied by post (in its dtype) unless 1 */
} lin;

/* 1 - x*x, x*x + 1, ... : c + sign * x^2 with c in x's dtype. */
static cm_array *quad(cm_rt *t, cm_array *x, double c, bool minus_sq, cm_stream s) {
  cm_array *sq = RT(t, cm_square(x, s));
  cm_array *k = RT(t, cm_rule_scalar(c, x->dtype));
  return minus_sq ? RT(t, cm_subtract(k, sq, s)) : RT(t, cm_add(sq, k, s));
}

/* The factor of a LINEAR op.  x is the input, y the output; vjp selects
 * MLX's reverse-mode form where it differs (expm1 uses the output). */
static lin factor(cm_rt *t, cm_unary_op op, cm_array *x, cm_array *y, bool vjp, cm_stream s) {
  lin l = {NULL, false, false, 1.0, 1.0};
  switch (op) {
  case CM_UNARY_SQUARE: /* 2 x */
    l.pre = 2.0;
    l.f = x;
    break;
  case CM_UNARY_SQRT: /* 0.5 / sqrt(x) */
    l.pre = 0.5;
    l.f = y;
    l.div = true;
    break;
  case CM_UNARY_RSQRT: /* -0.5 rsqrt(x) / x */
    l.pre = -0.5;
    l.f = RT(t, cm_divide(y, x, s));
    break;
  case CM_UNARY_RECIPROCAL: /* MLX builds 1 / x: -1 / x^2 */
    l.f = RT(t, cm_square(x, s));
    l.div = l.neg = true;
    break;
  case CM_UNARY_EXP: l.f = y; break;
  case CM_UNARY_EXPM1: {
    cm_array *one = vjp ? RT(t, cm_rule_scalar(1.0, y->dtype)) : NULL;
    l.f = vjp ? RT(t, cm_add(y, one, s)) : RT(t, cm_exp(x, s));
    break;
  }
  case CM_UNARY_LOG:
  case CM_UNARY_LOG2:
  case CM_UNARY_LOG10:
    l.f = x;
    l.div = true;
    /* MLX's scale is the float 1 / log(base) */
    if (op != CM_UNARY_LOG) l.post = 1.0f / logf(op == CM_UNARY_LOG2 ? 2.0f : 10.0f);
    break;
  case CM_UNARY_LOG1P: {
    cm_array *one = RT(t, cm_rule_scalar(1.0, x->dtype));
    l.f = RT(t, cm_add(one, x, s));
    l.div = true;
    break;
  }
  case CM_UNARY_SIN: l.f = RT(t, cm_cos(x, s)); break;
  case CM_UNARY_COS: {
    cm_array *sn = RT(t, cm_sin(x, s));
    l.f = RT(t, cm_negative(sn, s));
    break;
  }
  case CM_UNARY_TAN: {
    cm_array *c = RT(t, cm_cos(x, s));
    l.f = RT(t, cm_square(c, s));
    l.div = true;
    break;
  }
  case CM_UNARY_ARCSIN: l.f = RT(t, cm_rsqrt(quad(t, x, 1.0, true, s), s)); break;
  case CM_UNARY_ARCCOS: {
    cm_array *r = RT(t, cm_rsqrt(quad(t, x, 1.0, true, s), s));
    l.f = RT(t, cm_negative(r, s));
    break;
  }
  case CM_UNARY_ARCTAN: {
    cm_array *sq = RT(t, cm_square(x, s)), *one = RT(t, cm_rule_scalar(1.0, x->dtype));
    l.f = RT(t, cm_add(one, sq, s));
    l.div = true;
    break;
  }
  case CM_UNARY_SINH: l.f = RT(t, cm_cosh(x, s)); break;
  case CM_UNARY_COSH: l.f = RT(t, cm_sinh(x, s)); break;
  case CM_UNARY_TANH: {
    cm_array *c = RT(t, cm_cosh(x, s));
    l.f = RT(t, cm_square(c, s));
    l.div = true;
    break;
  }
  case CM_UNARY_ARCSINH: l.f = RT(t, cm_rsqrt(quad(t, x, 1.0, false, s), s)); break;
  case CM_UNARY_ARCCOSH: l.f = RT(t, cm_rsqrt(quad(t, x, -1.0, false, s), s)); break;
  case CM_UNARY_ARCTANH:
    l.f = quad(t, x, 1.0, true, s);
    l.div = true;
    break;
  case CM_UNARY_SIGMOID: { /* s (1 - s) with s the output */
    cm_array *one = RT(t, cm_rule_scalar(1.0, y->dtype));
    cm_array *d = RT(t, cm_subtract(one, y, s));
    l.f = RT(t, cm_multiply(y, d, s));
    break;
  }
  case CM_UNARY_ERF: { /* 2/sqrt(pi) exp(-x^2) */
    cm_array *sq = RT(t, cm_square(x, s)), *n = RT(t, cm_negative(sq, s));
    l.pre = 1.12837916709551257390; /* M_2_SQRTPI */
    l.f = RT(t, cm_exp(n, s));
    break;
  }
  case CM_UNARY_ERFINV: { /* sqrt(pi)/2 exp(erfinv(x)^2) */
    cm_array *sq = RT(t, cm_square(y, s));
    l.pre = 1.0 / 1.12837916709551257390;
    l.f = RT(t, cm_exp(sq, s));
    break;
  }
  case CM_UNARY_DEGREES: l.pre = 180.0 / 3.14159265358979323846; break;
  case CM_UNARY_RADIANS:
    l.pre = 3.14159265358979323846 / 180.0;
    break;
    CM_UNARY_OPS(NOT_LINEAR_X)
  case CM_UNARY_NUM_OPS: break;
  }
  return l;
}

/* Apply a LINEAR factor to g; conj_f for reverse mode. */
static cm_array *apply(cm_rt *t, const lin *l, cm_array *g, cm_dtype const_dtype, bool conj_f,
                       cm_stream s) {
  if (l->pre != 1.0) {
    cm_array *k = RT(t, cm_rule_scalar(l->pre, const_dtype));
    g = RT(t, cm_multiply(k, g, s));
  }
  cm_array *r = g;
  if (l->f) {
    cm_array *f = conj_f ? RT(t, cm_conjugate(l->f, s)) : l->f;
    r = l->div ? RT(t, cm_divide(g, f, s)) : RT(t, cm_multiply(g, f, s));
  }
  if (l->neg) r = RT(t, cm_negative(r, s));
  if (l->post != 1.0) {
    cm_array *k = r ? RT(t, cm_rule_scalar(l->post, r->dtype)) : NULL;
    r = RT(t, cm_multiply(k, r, s));
  }
  return r;
}

/* The SPECIAL ops; vjp selects reverse mode. */
static cm_array *special(cm_rt *t, cm_unary_op op, cm_array *x, cm_array *g, bool vjp,
                         cm_stream s) {
  switch (op) {
  case CM_UNARY_ABS: {
    /* vjp g * sign(x) (for complex z: g z/|z|); jvp Re(t conj(sign(x))),
     * which is t * sign(x) on real dtypes */
    cm_array *sg = RT(t, cm_sign(x, s));
    if (vjp) return RT(t, cm_multiply(g, sg, s));
    cm_array *c = RT(t, cm_conjugate(sg, s));
    cm_array *m = RT(t, cm_multiply(g, c, s));
    return RT(t, cm_real(m, s));
  }
  case CM_UNARY_NEGATIVE: return RT(t, cm_negative(g, s));
  case CM_UNARY_CONJ: return RT(t, cm_conjugate(g, s));
  case CM_UNARY_REAL:
    /* the real cotangent becomes the real part of the input's */
    return vjp ? RT(t, cm_astype(g, x->dtype, s)) : RT(t, cm_real(g, s));
  case CM_UNARY_IMAG: {
    if (!vjp) return RT(t, cm_imag(g, s));
    if (x->dtype != CM_COMPLEX64) /* imag of a real array is 0 */
      return NULL;
    const float i[2] = {0.0f, 1.0f}; /* 1j: the cotangent lands on the imaginary part */
    cm_array *j = RT(t, cm_array_scalar(i, CM_COMPLEX64, CM_COMPLEX64));
    return RT(t, cm_multiply(j, g, s));
  }
  case CM_UNARY_NAN_TO_NUM: {
    /* the replaced elements (nan, +-inf) get nothing, as through MLX's
     * chain of where */
    cm_array *fin = RT(t, cm_isfinite(x, s));
    return RT(t, cm_multiply(g, fin, s));
  }
    CM_UNARY_OPS(NOT_SPECIAL_X)
  case CM_UNARY_NUM_OPS: break;
  }
  return NULL;
}

static int no_rule(const char *mode, const cm_array *node) {
  return cm_error(CM_ERR_NOT_IMPLEMENTED, "[%s] Not implemented for %s.", mode,
                  cm_unary_op_name(cm_unary_params_of(node)->op));
}

int cm_rule_unary_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                      cm_stream s) {
  (void)nin, (void)argnums, (void)nargs, (void)p;
  cm_unary_op op = cm_unary_params_of(out)->op;
  cm_rt t = {.n = 0};
  cm_array *r = NULL;
  switch (kind_of(op)) {
  case ZERO_IN:
  case ZERO_BOOL:
  case ZERO_TAN: return 0; /* grads[0] stays NULL: a zero gradient */
  case NO_RULE: return no_rule("vjp", out);
  case SPECIAL:
    r = special(&t, op, in[0], cotan, true, s);
    if (!r && !t.fail) return 0; /* imag of a real input: zero */
    break;
  case LINEAR: {
    lin l = factor(&t, op, in[0], out, true, s);
    r = apply(&t, &l, cotan, in[0]->dtype, true, s);
    break;
  }
  }
  return cm_rt_done(&t, r, &grads[0]);
}

/* The zero tangent of a non-differentiable op, in MLX's dtype (the grad
 * column): the input's for the rounding ops and sign, bool for the ops MLX
 * builds from logical ones, the tangent's for the comparisons isnan /
 * isposinf / isneginf are built from in MLX. */
static cm_dtype zero_tangent_dtype(enum kind k, cm_array *x, cm_array *tan) {
  return k == ZERO_BOOL ? CM_BOOL : k == ZERO_TAN ? tan->dtype : x->dtype;
}

int cm_rule_unary_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                      cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  cm_unary_op op = cm_unary_params_of(out)->op;
  cm_rt t = {.n = 0};
  cm_array *r = NULL;
  enum kind k = kind_of(op);
  switch (k) {
  case ZERO_IN:
  case ZERO_BOOL:
  case ZERO_TAN:
    return (*tangent = cm_rule_zeros(out, zero_tangent_dtype(k, in[0], tangents[0]), s)) ? 0 : -1;
  case NO_RULE: return no_rule("jvp", out);
  case SPECIAL: r = special(&t, op, in[0], tangents[0], false, s); break;
  case LINEAR: {
    lin l = factor(&t, op, in[0], out, false, s);
    r = apply(&t, &l, tangents[0], in[0]->dtype, false, s);
    break;
  }
  }
  return cm_rt_done(&t, r, tangent);
}

int cm_rule_unary_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                       const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin;
  /* the same op on the batched input: its dtype is the traced node's */
  *out = cm_op_node(node->dtype, in[0]->ndim, in[0]->shape, &cm_prim_unary, p,
                    sizeof(cm_unary_params), in, 1, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

/* ---- StopGradient: a wall for gradients; vmap passes through ---- */

int cm_rule_stop_gradient_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                              cm_stream s) {
  (void)out, (void)in, (void)nin, (void)p, (void)cotan, (void)argnums, (void)nargs, (void)grads,
      (void)s;
  return 0; /* grads[0] stays NULL: zero */
}

int cm_rule_stop_gradient_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                              cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  return (*tangent = cm_rule_zeros(out, tangents[0]->dtype, s)) ? 0 : -1;
}

int cm_rule_stop_gradient_vmap(const cm_array *node, cm_array *const *in, int nin,
                               const cm_params *p, const int *axes, cm_array **out, int *out_axis,
                               cm_stream s) {
  (void)node, (void)nin, (void)p;
  *out = cm_stop_gradient(in[0], s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}
