/* mlx/c/string.h.  An mlx_string owns a NUL-terminated copy of its text;
 * ctx is a cell (handle.h) holding the heap block (NULL for an empty
 * handle). */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* A new handle owning d (NULL after reporting). */
static mlx_string wrap(char *d) {
  void *cell = d ? capi_cell_new(CAPI_H_STRING, d) : NULL;
  if (!cell) free(d);
  return (mlx_string){cell};
}

mlx_string mlx_string_new(void) { return (mlx_string){NULL}; }

mlx_string mlx_string_new_data(const char *str) {
  if (!str) str = "";
  char *d = dup_str(str);
  if (!d) capi_errorf("[mlx_string_new_data] Out of memory.");
  return wrap(d);
}

/* Take s (may be NULL: empty); a freed or invalid *str is reported and s
 * freed. */
int capi_string_adopt(mlx_string *str, char *s) {
  if (capi_check("mlx_string_set", str->ctx, CAPI_H_STRING)) {
    free(s);
    return 1;
  }
  if (str->ctx && s) {
    free(capi_obj(str->ctx));
    capi_obj_set(str->ctx, s);
    return 0;
  }
  if (mlx_string_free(*str)) return 1;
  str->ctx = NULL;
  if (s && !(*str = wrap(s)).ctx) return 1;
  return 0;
}

int capi_string_set(mlx_string *str, const char *s) {
  char *d = dup_str(s ? s : "");
  if (!d) return capi_errorf("[mlx_string_set] Out of memory.");
  return capi_string_adopt(str, d);
}

int mlx_string_set(mlx_string *str, const mlx_string src) {
  if (capi_out("mlx_string_set", str) || capi_check("mlx_string_set", src.ctx, CAPI_H_STRING))
    return 1;
  if (str->ctx == src.ctx) return 0;
  if (!src.ctx) return capi_string_adopt(str, NULL);
  return capi_string_set(str, capi_obj(src.ctx));
}

const char *mlx_string_data(mlx_string str) {
  return capi_check("mlx_string_data", str.ctx, CAPI_H_STRING) ? NULL : capi_obj(str.ctx);
}

int mlx_string_free(mlx_string str) {
  void *s;
  if (capi_cell_free("mlx_string_free", str.ctx, CAPI_H_STRING, &s)) return 1;
  free(s);
  return 0;
}
