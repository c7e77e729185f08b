/* Elementwise unary ops.  Most are one primitive (Unary) with an op code;
 * a few are compositions (positive, degrees, nan_to_num, ...), built from
 * other ops as the implementation sees fit.  Result dtypes follow MLX:
 * transcendental ops on integers/bool give float32, predicates give bool. */
#ifndef CMLX_OPS_UNARY_H
#define CMLX_OPS_UNARY_H

#include "ops/common.h"

typedef enum cm_unary_op {
  CM_UNARY_ABS,
  CM_UNARY_NEGATIVE,
  CM_UNARY_SIGN,
  CM_UNARY_SQUARE,
  CM_UNARY_SQRT,
  CM_UNARY_RSQRT,
  CM_UNARY_RECIPROCAL,
  CM_UNARY_EXP,
  CM_UNARY_EXPM1,
  CM_UNARY_LOG,
  CM_UNARY_LOG2,
  CM_UNARY_LOG10,
  CM_UNARY_LOG1P,
  CM_UNARY_SIN,
  CM_UNARY_COS,
  CM_UNARY_TAN,
  CM_UNARY_ARCSIN,
  CM_UNARY_ARCCOS,
  CM_UNARY_ARCTAN,
  CM_UNARY_SINH,
  CM_UNARY_COSH,
  CM_UNARY_TANH,
  CM_UNARY_ARCSINH,
  CM_UNARY_ARCCOSH,
  CM_UNARY_ARCTANH,
  CM_UNARY_SIGMOID,
  CM_UNARY_ERF,
  CM_UNARY_ERFINV,
  CM_UNARY_FLOOR,
  CM_UNARY_CEIL,
  CM_UNARY_ROUND, /* to nearest even, 0 decimals */
  CM_UNARY_ISNAN,
  CM_UNARY_ISINF,
  CM_UNARY_ISPOSINF,
  CM_UNARY_ISNEGINF,
  CM_UNARY_LOGICAL_NOT,
  CM_UNARY_BITWISE_INVERT,
  CM_UNARY_REAL,
  CM_UNARY_IMAG,
  CM_UNARY_CONJ,
  /* Added by the implementation: ops that MLX composes from several
   * primitives, done here in one pass (one kernel, no temporaries). */
  CM_UNARY_ISFINITE,
  CM_UNARY_DEGREES,       /* x * (180/pi) in the float type */
  CM_UNARY_RADIANS,       /* x * (pi/180) in the float type */
  CM_UNARY_ROUND_DECIMALS, /* rint(x * 10^d) * 10^-d; params carry d */
  CM_UNARY_NAN_TO_NUM,    /* params carry the nan/posinf/neginf values */
  CM_UNARY_NUM_OPS
} cm_unary_op;

/* Generic entry: checks the dtype, casts as MLX does, builds the node. */
cm_array *cm_unary(cm_unary_op op, cm_array *a, cm_stream s);

cm_array *cm_abs(cm_array *a, cm_stream s);
cm_array *cm_negative(cm_array *a, cm_stream s);
cm_array *cm_positive(cm_array *a, cm_stream s);
cm_array *cm_sign(cm_array *a, cm_stream s);
cm_array *cm_square(cm_array *a, cm_stream s);
cm_array *cm_sqrt(cm_array *a, cm_stream s);
cm_array *cm_rsqrt(cm_array *a, cm_stream s);
cm_array *cm_reciprocal(cm_array *a, cm_stream s);
cm_array *cm_exp(cm_array *a, cm_stream s);
cm_array *cm_expm1(cm_array *a, cm_stream s);
cm_array *cm_log(cm_array *a, cm_stream s);
cm_array *cm_log2(cm_array *a, cm_stream s);
cm_array *cm_log10(cm_array *a, cm_stream s);
cm_array *cm_log1p(cm_array *a, cm_stream s);
cm_array *cm_sin(cm_array *a, cm_stream s);
cm_array *cm_cos(cm_array *a, cm_stream s);
cm_array *cm_tan(cm_array *a, cm_stream s);
cm_array *cm_arcsin(cm_array *a, cm_stream s);
cm_array *cm_arccos(cm_array *a, cm_stream s);
cm_array *cm_arctan(cm_array *a, cm_stream s);
cm_array *cm_sinh(cm_array *a, cm_stream s);
cm_array *cm_cosh(cm_array *a, cm_stream s);
cm_array *cm_tanh(cm_array *a, cm_stream s);
cm_array *cm_arcsinh(cm_array *a, cm_stream s);
cm_array *cm_arccosh(cm_array *a, cm_stream s);
cm_array *cm_arctanh(cm_array *a, cm_stream s);
cm_array *cm_sigmoid(cm_array *a, cm_stream s);
cm_array *cm_erf(cm_array *a, cm_stream s);
cm_array *cm_erfinv(cm_array *a, cm_stream s);
cm_array *cm_floor(cm_array *a, cm_stream s);
cm_array *cm_ceil(cm_array *a, cm_stream s);
cm_array *cm_round(cm_array *a, int decimals, cm_stream s);
cm_array *cm_isnan(cm_array *a, cm_stream s);
cm_array *cm_isinf(cm_array *a, cm_stream s);
cm_array *cm_isfinite(cm_array *a, cm_stream s);
cm_array *cm_isposinf(cm_array *a, cm_stream s);
cm_array *cm_isneginf(cm_array *a, cm_stream s);
/* nan_to_num: posinf/neginf default to the dtype's max/lowest when absent. */
cm_array *cm_nan_to_num(cm_array *a, float nan, bool has_posinf, float posinf, bool has_neginf,
                        float neginf, cm_stream s);
cm_array *cm_logical_not(cm_array *a, cm_stream s);
cm_array *cm_bitwise_invert(cm_array *a, cm_stream s);
cm_array *cm_real(cm_array *a, cm_stream s);
cm_array *cm_imag(cm_array *a, cm_stream s);
cm_array *cm_conjugate(cm_array *a, cm_stream s);
cm_array *cm_degrees(cm_array *a, cm_stream s);
cm_array *cm_radians(cm_array *a, cm_stream s);
/* Identity in value; blocks gradients (a StopGradient primitive). */
cm_array *cm_stop_gradient(cm_array *a, cm_stream s);
/* cm_astype is declared in ops/common.h. */

#endif
