/* The Scan primitive: names and transform rules.
 *
 *   cumsum        vjp: cumsum of the cotangent in the other direction
 *                 (same inclusive flag); jvp: cumsum of the tangent
 *   cumprod       exact even with zeros in the input (PROD_VJP/PROD_JVP:
 *                 MLX 0.32 gives the same finite values)
 *   cummax/min    the cotangent goes to the position holding the running
 *                 extreme (the latest one on ties), as MLX 0.32 gives
 *   logcumsumexp  LSE_VJP / LSE_JVP, stable for large inputs
 * The derivative nodes themselves have no rules (no second derivatives
 * of cumprod, cummax, cummin, logcumsumexp yet). */
#include "primitives/scan.h"

#include "backend/cpu/scan.h"

static const char *const names[CM_SCAN_NUM_OPS] = {
#define CM_X(CODE, name, Name, ...) [CM_SCAN_##CODE] = Name,
    CM_SCAN_OPS(CM_X)
#undef CM_X
#define CM_X(CODE, Name) [CM_SCAN_##CODE] = Name,
    CM_SCAN_DERIV_OPS(CM_X)
#undef CM_X
};

const char *cm_scan_op_name(int op) {
  return op >= 0 && op < CM_SCAN_NUM_OPS ? names[op] : "Scan";
}

static const char *op_name(const cm_params *p) {
  return cm_scan_op_name(((const cm_scan_params *)p)->op);
}

/* A derivative node: code(x, y) with the forward scan's settings; its
 * dtype is y's. */
static cm_array *deriv(const cm_scan_params *fp, int code, cm_array *x, cm_array *y, cm_stream s) {
  cm_scan_params q = *fp;
  q.op = code;
  cm_array *in[2] = {x, y};
  return cm_node_new(y->dtype, y->ndim, y->shape, &cm_prim_scan, &q, sizeof q, in, 2, s);
}

static int scan_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                    cm_stream s) {
  (void)out, (void)nin, (void)argnums, (void)nargs;
  const cm_scan_params *sp = (const cm_scan_params *)p;
  cm_array *g;
  switch (sp->op) {
  case CM_SCAN_SUM:
    g = cm_cumsum(cotan, sp->axis, !sp->reverse, sp->inclusive, s);
    break;
  case CM_SCAN_PROD: g = deriv(sp, CM_SCAN_PROD_VJP, in[0], cotan, s); break;
  case CM_SCAN_MAX: g = deriv(sp, CM_SCAN_MAX_VJP, in[0], cotan, s); break;
  case CM_SCAN_MIN: g = deriv(sp, CM_SCAN_MIN_VJP, in[0], cotan, s); break;
  case CM_SCAN_LOGADDEXP: g = deriv(sp, CM_SCAN_LSE_VJP, in[0], cotan, s); break;
  default:
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[vjp] Not implemented for %s.", op_name(p));
  }
  grads[0] = g;
  return g ? 0 : -1;
}

static int scan_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                    cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)out, (void)nin;
  const cm_scan_params *sp = (const cm_scan_params *)p;
  cm_array *t = tangents[0];
  switch (sp->op) {
  case CM_SCAN_SUM:
    *tangent = cm_cumsum(t, sp->axis, sp->reverse, sp->inclusive, s);
    break;
  case CM_SCAN_PROD: *tangent = deriv(sp, CM_SCAN_PROD_JVP, in[0], t, s); break;
  case CM_SCAN_MAX: *tangent = deriv(sp, CM_SCAN_MAX_JVP, in[0], t, s); break;
  case CM_SCAN_MIN: *tangent = deriv(sp, CM_SCAN_MIN_JVP, in[0], t, s); break;
  case CM_SCAN_LOGADDEXP: *tangent = deriv(sp, CM_SCAN_LSE_JVP, in[0], t, s); break;
  default:
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[jvp] Not implemented for %s.", op_name(p));
  }
  return *tangent ? 0 : -1;
}

/* Batching: the scanned axis moves past the batch axis. */
static int scan_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                     const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)node;
  cm_scan_params q = *(const cm_scan_params *)p;
  if (nin != 1)
    return cm_error(CM_ERR_NOT_IMPLEMENTED, "[vmap] Not implemented for %s.", op_name(p));
  cm_array *a = in[0];
  if (axes[0] <= q.axis) q.axis++;
  *out = cm_node_new(a->dtype, a->ndim, a->shape, &cm_prim_scan, &q, sizeof q, &a, 1, s);
  *out_axis = axes[0];
  return *out ? 0 : -1;
}

const cm_prim cm_prim_scan = {
    .name = "Scan",
    .params_size = sizeof(cm_scan_params),
    .op_name = op_name,
    .eval_cpu = cm_cpu_scan,
    .vjp = scan_vjp,
    .jvp = scan_jvp,
    .vmap = scan_vmap,
};
