/* mlx/c/string.h.  An mlx_string owns a NUL-terminated copy of its text;
 * ctx points at the heap block (NULL for an empty handle). */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

mlx_string mlx_string_new(void) { return (mlx_string){NULL}; }

mlx_string mlx_string_new_data(const char *str) {
  if (!str) str = "";
  char *d = dup_str(str);
  if (!d) capi_errorf("[mlx_string_new_data] Out of memory.");
  return (mlx_string){d};
}

int capi_string_adopt(mlx_string *str, char *s) {
  free(str->ctx);
  str->ctx = s;
  return 0;
}

int capi_string_set(mlx_string *str, const char *s) {
  char *d = dup_str(s ? s : "");
  if (!d) return capi_errorf("[mlx_string_set] Out of memory.");
  return capi_string_adopt(str, d);
}

int mlx_string_set(mlx_string *str, const mlx_string src) {
  if (capi_out("mlx_string_set", str)) return 1;
  if (str->ctx == src.ctx) return 0;
  if (!src.ctx) return capi_string_adopt(str, NULL);
  return capi_string_set(str, src.ctx);
}

const char *mlx_string_data(mlx_string str) { return str.ctx; }

int mlx_string_free(mlx_string str) {
  free(str.ctx);
  return 0;
}
