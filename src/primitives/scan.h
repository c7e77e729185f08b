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

enum {
  CM_SCAN_PROD_VJP = CM_SCAN_NUM_PUBLIC_OPS,
  CM_SCAN_PROD_JVP,
  CM_SCAN_MAX_VJP,
  CM_SCAN_MIN_VJP,
  CM_SCAN_MAX_JVP,
  CM_SCAN_MIN_JVP,
  CM_SCAN_LSE_VJP,
  CM_SCAN_LSE_JVP,
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
