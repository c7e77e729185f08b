#include "ops/dtype_query.h"

#include <string.h>

#include "core/error.h"

int cm_result_type(int n, const cm_dtype *dtypes, cm_dtype *out) {
  if (n <= 0)
    return cm_error(CM_ERR_VALUE, "[result_type] At least one array or dtype is required.");
  cm_dtype t = dtypes[0];
  for (int i = 1; i < n; i++) t = cm_promote_types(t, dtypes[i]);
  *out = t;
  return 0;
}

/* Checked against mx.can_cast for all 196 pairs: it is exactly "the
 * promotion of the pair is the target". */
bool cm_can_cast(cm_dtype from, cm_dtype to) { return cm_promote_types(from, to) == to; }

bool cm_issubdtype_any(cm_dtype_or_category a, cm_dtype_or_category b) {
  if (!a.is_category && !b.is_category) return a.value == b.value;
  if (!a.is_category) return cm_issubdtype((cm_dtype)a.value, (cm_category)b.value);
  if (!b.is_category) return false; /* a category is never a subtype of a dtype */
  return cm_category_sub((cm_category)a.value, (cm_category)b.value);
}

static const char *const kind_names[CM_ISDTYPE_NUM_KINDS] = {
    "bool", "signed integer", "unsigned integer", "integral",
    "real floating", "complex floating", "numeric"};

int cm_isdtype_kind_parse(const char *name, cm_isdtype_kind *out) {
  for (int k = 0; k < CM_ISDTYPE_NUM_KINDS; k++)
    if (strcmp(name, kind_names[k]) == 0) {
      *out = (cm_isdtype_kind)k;
      return 0;
    }
  return cm_error(CM_ERR_VALUE, "[isdtype] Unknown data type kind: '%s'.", name);
}

bool cm_isdtype_has_kind(cm_dtype t, cm_isdtype_kind kind) {
  cm_kind k = cm_dtype_kind(t);
  switch (kind) {
  case CM_ISDTYPE_BOOL: return k == CM_KIND_BOOL;
  case CM_ISDTYPE_SIGNED_INTEGER: return k == CM_KIND_INT;
  case CM_ISDTYPE_UNSIGNED_INTEGER: return k == CM_KIND_UINT;
  case CM_ISDTYPE_INTEGRAL: return k == CM_KIND_INT || k == CM_KIND_UINT;
  case CM_ISDTYPE_REAL_FLOATING: return k == CM_KIND_FLOAT;
  case CM_ISDTYPE_COMPLEX_FLOATING: return k == CM_KIND_COMPLEX;
  case CM_ISDTYPE_NUMERIC: return k != CM_KIND_BOOL;
  default: return false;
  }
}

int cm_isdtype(cm_dtype t, const cm_isdtype_arg *kinds, int n, bool *out) {
  /* left to right, stopping at the first match as MLX does: a bad name
   * after a match goes unnoticed, one before it is an error */
  *out = false;
  for (int i = 0; i < n; i++) {
    bool hit;
    if (kinds[i].is_name) {
      cm_isdtype_kind k = CM_ISDTYPE_BOOL;
      if (cm_isdtype_kind_parse(kinds[i].name, &k)) return -1;
      hit = cm_isdtype_has_kind(t, k);
    } else {
      hit = kinds[i].dtype == t;
    }
    if (hit) {
      *out = true;
      return 0;
    }
  }
  return 0;
}
