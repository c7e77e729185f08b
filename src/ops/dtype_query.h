/* Questions about dtypes that both front doors answer the same way:
 * result_type, can_cast, issubdtype over dtypes and categories, and the
 * array-API isdtype.  No graph, no buffers: pure functions of dtypes. */
#ifndef CMLX_OPS_DTYPE_QUERY_H
#define CMLX_OPS_DTYPE_QUERY_H

#include <stdbool.h>

#include "core/dtype.h"

/* mx.result_type: the promotion of every dtype, left to right.  n == 0 is
 * a ValueError ("[result_type] At least one array or dtype is required."). */
int cm_result_type(int n, const cm_dtype *dtypes, cm_dtype *out);

/* mx.can_cast(from, to): true when promoting from with to gives to, i.e.
 * to can hold from as the promotion lattice sees it (MLX 0.32: uint16 ->
 * float16 is allowed, float16 -> bfloat16 is not, bool casts to anything). */
bool cm_can_cast(cm_dtype from, cm_dtype to);

/* mx.issubdtype for each combination of dtype and category:
 * dtype/dtype: equal; dtype/category: membership (bool is only generic);
 * category/category: the hierarchy; category/dtype: always false. */
typedef struct cm_dtype_or_category {
  bool is_category;
  int value; /* a cm_dtype or a cm_category */
} cm_dtype_or_category;
bool cm_issubdtype_any(cm_dtype_or_category a, cm_dtype_or_category b);

/* Array-API kinds for isdtype. */
typedef enum cm_isdtype_kind {
  CM_ISDTYPE_BOOL,             /* 'bool' */
  CM_ISDTYPE_SIGNED_INTEGER,   /* 'signed integer' */
  CM_ISDTYPE_UNSIGNED_INTEGER, /* 'unsigned integer' */
  CM_ISDTYPE_INTEGRAL,         /* 'integral' */
  CM_ISDTYPE_REAL_FLOATING,    /* 'real floating' (float16/32/64, bfloat16) */
  CM_ISDTYPE_COMPLEX_FLOATING, /* 'complex floating' */
  CM_ISDTYPE_NUMERIC,          /* 'numeric' (everything but bool) */
  CM_ISDTYPE_NUM_KINDS
} cm_isdtype_kind;

/* Parse a kind name; ValueError "[isdtype] Unknown data type kind: 'foo'." */
int cm_isdtype_kind_parse(const char *name, cm_isdtype_kind *out);
bool cm_isdtype_has_kind(cm_dtype t, cm_isdtype_kind kind);

/* One entry of isdtype's kind argument: a dtype or a kind name.  A tuple is
 * an array of them, true when any matches.  Errors come from unknown names. */
typedef struct cm_isdtype_arg {
  bool is_name;
  cm_dtype dtype;   /* when !is_name */
  const char *name; /* when is_name */
} cm_isdtype_arg;
int cm_isdtype(cm_dtype t, const cm_isdtype_arg *kinds, int n, bool *out);

#endif
