/* The Scan primitive: cumulative sum, product, max, min and logaddexp
 * along one axis (op codes: the public cm_scan_op of ops/scan.h).
 *
 * Its derivative rules (primitives/scan.c) are built from ops, scans
 * among them, so that derivatives of any order work. */
#ifndef CMLX_PRIMITIVES_SCAN_H
#define CMLX_PRIMITIVES_SCAN_H

#include "ops/scan.h"
#include "primitives/primitive.h"

/* Zeroed before filling, so equal nodes compare equal bytewise. */
typedef struct cm_scan_params {
  int op;   /* cm_scan_op */
  int axis; /* normalised, >= 0 */
  bool reverse, inclusive;
} cm_scan_params;
CM_PARAMS_ACCESSOR(cm_scan_params, cm_scan_params_of)

extern const cm_prim cm_prim_scan;
const char *cm_scan_op_name(int op); /* "CumSum", ... */

#endif
