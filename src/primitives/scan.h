/* The Scan primitive: cumulative sum, product, max, min and logaddexp
 * along one axis, plus the internal derivative scans its transform rules
 * build (they are one pass along the axis too, and composing them from
 * public ops would need gathers and scatters cmlx does not have):
 *
 *   PROD_VJP(x, c)   d/dx of sum(c * cumprod(x)), exact with zeros in x
 *   PROD_JVP(x, t)   the tangent of cumprod(x) along t
 *   MAX_VJP(x, c)    each c[k] goes to the position holding the running
 *   MIN_VJP(x, c)    max/min at k (the latest one when tied, as MLX)
 *   MAX_JVP(x, t)    t at that position
 *   MIN_JVP(x, t)
 *   LSE_VJP(x, c)    the gradient of logcumsumexp, stably
 *   LSE_JVP(x, t)
 *
 * Each carries the forward scan's axis / reverse / inclusive, and its
 * output has the dtype of its second input.  These internal nodes have
 * no derivative rules of their own (second derivatives of cumprod, cummax,
 * cummin and logcumsumexp are not supported yet). */
#ifndef CMLX_PRIMITIVES_SCAN_H
#define CMLX_PRIMITIVES_SCAN_H

#include "ops/scan.h"
#include "primitives/primitive.h"

/* The internal op codes: X(CODE, Name), numbered after the public ones. */
#define CM_SCAN_DERIV_OPS(X)         \
  X(PROD_VJP, "CumProdVJP")          \
  X(PROD_JVP, "CumProdJVP")          \
  X(MAX_VJP, "CumMaxVJP")            \
  X(MIN_VJP, "CumMinVJP")            \
  X(MAX_JVP, "CumMaxJVP")            \
  X(MIN_JVP, "CumMinJVP")            \
  X(LSE_VJP, "CumLogaddexpVJP")      \
  X(LSE_JVP, "CumLogaddexpJVP")

enum {
  CM_SCAN_DERIV_BEFORE_FIRST_ = CM_SCAN_NUM_PUBLIC_OPS - 1,
#define CM_X(CODE, Name) CM_SCAN_##CODE,
  CM_SCAN_DERIV_OPS(CM_X)
#undef CM_X
  CM_SCAN_NUM_OPS
};

/* Zeroed before filling, so equal nodes compare equal bytewise. */
typedef struct cm_scan_params {
  int op;   /* cm_scan_op or one of the derivative codes above */
  int axis; /* normalised, >= 0 */
  bool reverse, inclusive;
} cm_scan_params;

extern const cm_prim cm_prim_scan;
const char *cm_scan_op_name(int op); /* "CumSum", ... */

#endif
