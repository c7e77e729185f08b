/* Transform rules of the Binary primitive (every op code).
 *
 * A Binary node's inputs already have the output's shape (the op
 * constructor inserts Broadcast nodes, whose vjp sums back), so the rules
 * here are purely elementwise.  Each op's partial derivatives follow
 * MLX 0.32:
 *   add, subtract        g, +-g
 *   multiply             g conj(b), g conj(a)
 *   divide               g / conj(b), -(g conj(a)) / conj(b)^2
 *   remainder            g, -floor(a / b) g
 *   power                g conj(b a^(b-1)), g conj(log(a) a^b) (0 where
 *                        a^b is 0, so 0^b gives 0 rather than 0 * -inf)
 *   maximum, minimum     the cotangent goes to a where a > b (a < b), to b
 *                        otherwise: ties go to b
 *   arctan2              g b / (a^2 + b^2), -g a / (a^2 + b^2)
 *   logaddexp            g sigmoid(a - b), g (1 - sigmoid(a - b))
 *   floor_divide, the comparisons, logical and bitwise ops: zero.
 * In reverse mode the factors are conjugated (MLX's complex convention,
 * see unary_rules.c); the forward mode is sum_i t_i * factor_i.  (MLX
 * 0.32 leaves power's factors unconjugated on complex inputs, unlike its
 * multiply and divide; here power follows the same convention as the
 * rest, so that z**2 and z*z have the same gradient.)
 *
 * vmap aligns the operands' batch axes (cm_rule_align) and applies the op
 * again. */
#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "primitives/binary.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

/* A DIFF op whose partial is missing from the switch in partial() below,
 * or a zero-derivative op that has one, must not compile. */
#pragma GCC diagnostic error "-Wswitch"

/* The table's grad column (ops/binary_ops.h). */
enum grad { GRAD_DIFF, GRAD_ZERO, GRAD_ZERO_BOOL, GRAD_ZERO_BOOL_IN };
static const unsigned char grad_of[CM_BINARY_NUM_OPS] = {
#define CM_X(CODE, name, Name, dtype, grad, ...) [CM_BINARY_##CODE] = GRAD_##grad,
    CM_BINARY_OPS(CM_X)
#undef CM_X
};

static bool is_zero_op(cm_binary_op op) { return grad_of[op] != GRAD_DIFF; }

/* Case labels of the ops with a zero derivative (they have no partial). */
#define ZERO_CASE_DIFF(CODE)
#define ZERO_CASE_ZERO(CODE) case CM_BINARY_##CODE:
#define ZERO_CASE_ZERO_BOOL(CODE) case CM_BINARY_##CODE:
#define ZERO_CASE_ZERO_BOOL_IN(CODE) case CM_BINARY_##CODE:
#define ZERO_CASES_X(CODE, name, Name, dtype, grad, ...) ZERO_CASE_##grad(CODE)

/* The linear map from the (co)tangent g of operand i to the output:
 * g * f, g / f or just g (f NULL), negated if neg. */
typedef struct part {
  cm_array *f;
  bool div, neg;
} part;

/* The partial for operand i of a differentiable op.  out is the node (for
 * power's reverse mode, which reuses a^b as MLX does). */
static part partial(cm_rt *t, cm_binary_op op, int i, cm_array *a, cm_array *b, cm_array *out,
                    cm_stream s) {
  part q = {NULL, false, false};
  switch (op) {
  case CM_BINARY_ADD: break;
  case CM_BINARY_SUBTRACT: q.neg = i == 1; break;
  case CM_BINARY_MULTIPLY: q.f = i == 0 ? b : a; break;
  case CM_BINARY_DIVIDE:
    if (i == 0) {
      q.f = b;
      q.div = true;
    }
    /* i == 1 is built in apply_part: -(g conj(a)) / conj(b)^2 */
    break;
  case CM_BINARY_REMAINDER:
    if (i == 1) {
      cm_array *d = RT(t, cm_divide(a, b, s));
      q.f = RT(t, cm_floor(d, s));
      q.neg = true;
    }
    break;
  case CM_BINARY_POWER:
    if (i == 0) { /* b a^(b-1), with 1 in a's dtype (MLX) */
      cm_array *one = RT(t, cm_rule_scalar(1.0, a->dtype));
      cm_array *bm1 = RT(t, cm_subtract(b, one, s));
      cm_array *pw = RT(t, cm_power(a, bm1, s));
      q.f = RT(t, cm_multiply(pw, b, s));
    } else { /* log(a) a^b, or 0 where a^b is 0 */
      cm_array *lg = RT(t, cm_log(a, s));
      cm_array *m = RT(t, cm_multiply(lg, out, s));
      cm_array *z = m ? RT(t, cm_rule_scalar(0.0, m->dtype)) : NULL;
      q.f = RT(t, cm_where(out, m, z, s));
    }
    break;
  case CM_BINARY_MAXIMUM:
  case CM_BINARY_MINIMUM: {
    bool mx = op == CM_BINARY_MAXIMUM;
    q.f = i == 0 ? RT(t, mx ? cm_greater(a, b, s) : cm_less(a, b, s))
                 : RT(t, mx ? cm_less_equal(a, b, s) : cm_greater_equal(a, b, s));
    break;
  }
  case CM_BINARY_ARCTAN2: {
    cm_array *a2 = RT(t, cm_square(a, s)), *b2 = RT(t, cm_square(b, s));
    cm_array *den = RT(t, cm_add(a2, b2, s));
    cm_array *num = i == 0 ? b : RT(t, cm_negative(a, s));
    q.f = RT(t, cm_divide(num, den, s));
    break;
  }
  case CM_BINARY_LOGADDEXP: {
    cm_array *d = RT(t, cm_subtract(a, b, s));
    cm_array *sg = RT(t, cm_sigmoid(d, s));
    if (i == 0) {
      q.f = sg;
    } else {
      cm_array *one = sg ? RT(t, cm_rule_scalar(1.0, sg->dtype)) : NULL;
      q.f = RT(t, cm_subtract(one, sg, s));
    }
    break;
  }
    CM_BINARY_OPS(ZERO_CASES_X)
  case CM_BINARY_NUM_OPS: break;
  }
  return q;
}

/* g pushed through the partial of operand i; conj_f for reverse mode. */
static cm_array *apply_part(cm_rt *t, cm_binary_op op, int i, cm_array *a, cm_array *b,
                            cm_array *out, cm_array *g, bool conj_f, cm_stream s) {
  if (op == CM_BINARY_DIVIDE && i == 1) {
    cm_array *ca = conj_f ? RT(t, cm_conjugate(a, s)) : a;
    cm_array *cb = conj_f ? RT(t, cm_conjugate(b, s)) : b;
    cm_array *num = RT(t, cm_multiply(g, ca, s));
    cm_array *den = RT(t, cm_square(cb, s));
    cm_array *q = RT(t, cm_divide(num, den, s));
    return RT(t, cm_negative(q, s));
  }
  part q = partial(t, op, i, a, b, out, s);
  if (t->fail) return NULL;
  cm_array *r = g;
  if (q.f) {
    cm_array *f = conj_f ? RT(t, cm_conjugate(q.f, s)) : q.f;
    r = q.div ? RT(t, cm_divide(g, f, s)) : RT(t, cm_multiply(g, f, s));
  }
  return q.neg ? RT(t, cm_negative(r, s)) : r;
}

int cm_rule_binary_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                       cm_stream s) {
  (void)nin, (void)p;
  cm_binary_op op = cm_binary_params_of(out)->op;
  if (is_zero_op(op)) return 0; /* every grads[k] stays NULL: zero */
  for (int k = 0; k < nargs; k++) {
    cm_rt t = {.n = 0};
    cm_array *r = apply_part(&t, op, argnums[k], in[0], in[1], out, cotan, true, s);
    if (cm_rt_done(&t, r, &grads[k])) return -1;
  }
  return 0;
}

/* The zero tangent of a non-differentiable op, in MLX 0.32's dtype (the
 * grad column): bool for the logical ops and for not_equal on bools (that
 * is logical_xor), the tangent's otherwise. */
static cm_dtype zero_tangent_dtype(cm_binary_op op, cm_array *const *in, cm_dtype tan) {
  switch ((enum grad)grad_of[op]) {
  case GRAD_ZERO_BOOL: return CM_BOOL;
  case GRAD_ZERO_BOOL_IN: return in[0]->dtype == CM_BOOL ? CM_BOOL : tan;
  case GRAD_ZERO:
  case GRAD_DIFF: break;
  }
  return tan;
}

int cm_rule_binary_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                       cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)nin, (void)p;
  cm_binary_op op = cm_binary_params_of(out)->op;
  if (is_zero_op(op)) {
    cm_dtype dt = zero_tangent_dtype(op, in, cm_rule_tangent_dtype(tangents, 2));
    return (*tangent = cm_rule_zeros(out, dt, s)) ? 0 : -1;
  }
  cm_rt t = {.n = 0};
  cm_array *sum = NULL;
  for (int i = 0; i < 2; i++) {
    if (!tangents[i]) continue;
    cm_array *r = apply_part(&t, op, i, in[0], in[1], out, tangents[i], false, s);
    sum = sum ? RT(&t, cm_add(sum, r, s)) : r;
  }
  return cm_rt_done(&t, sum, tangent);
}

int cm_rule_binary_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                        const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  cm_array *x[2];
  if (cm_rule_align(in, 2, axes, x, out_axis, s)) return -1;
  /* the inputs already have the op's compute dtype, so the constructor
   * gives the traced node's dtype again */
  *out = cm_binary(cm_binary_params_of(node)->op, x[0], x[1], s);
  cm_release(x[0]);
  cm_release(x[1]);
  return *out ? 0 : -1;
}
