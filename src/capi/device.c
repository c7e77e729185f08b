/* mlx/c/device.h: device handles (ctx = a cell holding a heap cm_device,
 * NULL = empty). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"
#include "core/backend.h"

mlx_device capi_device_wrap(cm_device d) {
  cm_device *p = malloc(sizeof *p);
  if (!p) {
    capi_errorf("[mlx_device] Out of memory.");
    return (mlx_device){NULL};
  }
  *p = d;
  void *cell = capi_cell_new(CAPI_H_DEVICE, p);
  if (!cell) free(p);
  return (mlx_device){cell};
}

int capi_device(const char *fn, mlx_device d, cm_device *out) {
  if (capi_need_h(fn, d.ctx, CAPI_H_DEVICE)) return 1;
  *out = *(cm_device *)capi_obj(d.ctx);
  return 0;
}

mlx_device mlx_device_new(void) { return (mlx_device){NULL}; }

mlx_device mlx_device_new_type(mlx_device_type type, int index) {
  return capi_device_wrap((cm_device){type == MLX_GPU ? CM_GPU : CM_CPU, index});
}

int mlx_device_free(mlx_device dev) {
  void *p;
  if (capi_cell_free("mlx_device_free", dev.ctx, CAPI_H_DEVICE, &p)) return 1;
  free(p);
  return 0;
}

int mlx_device_set(mlx_device *dev, const mlx_device src) {
  const char *fn = "mlx_device_set";
  if (capi_out(fn, dev) || capi_check(fn, dev->ctx, CAPI_H_DEVICE) ||
      capi_check(fn, src.ctx, CAPI_H_DEVICE))
    return 1;
  if (dev->ctx == src.ctx) return 0;
  if (!src.ctx) {
    int rc = mlx_device_free(*dev);
    dev->ctx = NULL;
    return rc;
  }
  if (!dev->ctx) {
    *dev = capi_device_wrap(*(cm_device *)capi_obj(src.ctx));
    return dev->ctx ? 0 : 1;
  }
  *(cm_device *)capi_obj(dev->ctx) = *(cm_device *)capi_obj(src.ctx);
  return 0;
}

int mlx_device_tostring(mlx_string *str, mlx_device dev) {
  if (capi_out("mlx_device_tostring", str)) return 1;
  cm_device d = {CM_CPU, 0};
  if (capi_device("mlx_device_tostring", dev, &d)) return 1;
  char buf[64];
  snprintf(buf, sizeof buf, "Device(%s, %d)", cm_device_type_name(d.type), d.index);
  return capi_string_set(str, buf);
}

bool mlx_device_equal(mlx_device lhs, mlx_device rhs) {
  if (capi_check("mlx_device_equal", lhs.ctx, CAPI_H_DEVICE) ||
      capi_check("mlx_device_equal", rhs.ctx, CAPI_H_DEVICE))
    return false;
  if (!lhs.ctx || !rhs.ctx) return lhs.ctx == rhs.ctx;
  const cm_device *a = capi_obj(lhs.ctx), *b = capi_obj(rhs.ctx);
  return a->type == b->type && a->index == b->index;
}

int mlx_device_get_index(int *index, mlx_device dev) {
  if (capi_out("mlx_device_get_index", index)) return 1;
  cm_device d = {CM_CPU, 0};
  if (capi_device("mlx_device_get_index", dev, &d)) return 1;
  *index = d.index;
  return 0;
}

int mlx_device_get_type(mlx_device_type *type, mlx_device dev) {
  if (capi_out("mlx_device_get_type", type)) return 1;
  cm_device d = {CM_CPU, 0};
  if (capi_device("mlx_device_get_type", dev, &d)) return 1;
  *type = d.type == CM_GPU ? MLX_GPU : MLX_CPU;
  return 0;
}

int mlx_get_default_device(mlx_device *dev) {
  if (capi_out("mlx_get_default_device", dev)) return 1;
  mlx_device d = capi_device_wrap(cm_default_device());
  if (!d.ctx) return 1;
  mlx_device_free(*dev);
  *dev = d;
  return 0;
}

int mlx_set_default_device(mlx_device dev) {
  cm_device d = {CM_CPU, 0};
  if (capi_device("mlx_set_default_device", dev, &d)) return 1;
  return cm_set_default_device(d) ? capi_fail() : 0;
}

int mlx_device_is_available(bool *avail, mlx_device dev) {
  if (capi_out("mlx_device_is_available", avail)) return 1;
  cm_device d = {CM_CPU, 0};
  if (capi_device("mlx_device_is_available", dev, &d)) return 1;
  *avail = cm_device_available(d);
  return 0;
}

int mlx_device_count(int *count, mlx_device_type type) {
  if (capi_out("mlx_device_count", count)) return 1;
  *count = cm_device_count(type == MLX_GPU ? CM_GPU : CM_CPU);
  return 0;
}

/* ---- device info: string-or-size properties by key ----
 * MLX reports {"architecture", "device_name"} for the CPU and nothing for
 * an unavailable GPU. */

typedef struct info_entry {
  char *key;
  bool is_string;
  char *str;
  size_t size;
} info_entry;

typedef struct capi_device_info {
  info_entry *entries;
  size_t n;
} capi_device_info;

static void info_free(capi_device_info *info) {
  if (!info) return;
  for (size_t i = 0; i < info->n; i++) {
    free(info->entries[i].key);
    free(info->entries[i].str);
  }
  free(info->entries);
  free(info);
}

/* One entry: a string (val) or, with val NULL, a size. */
static int info_add(capi_device_info *info, const char *key, const char *val, size_t size) {
  info_entry *ne = realloc(info->entries, (info->n + 1) * sizeof *ne);
  if (!ne) return -1;
  info->entries = ne;
  info_entry *e = &ne[info->n];
  e->key = strdup(key);
  e->str = val ? strdup(val) : NULL;
  e->is_string = val != NULL;
  e->size = size;
  if (!e->key || (val && !e->str)) {
    free(e->key);
    free(e->str);
    return -1;
  }
  info->n++;
  return 0;
}

mlx_device_info mlx_device_info_new(void) { return (mlx_device_info){NULL}; }

#define T_INFO CAPI_H_DEVICE_INFO

int mlx_device_info_get(mlx_device_info *info, mlx_device dev) {
  if (capi_out("mlx_device_info_get", info) ||
      capi_check("mlx_device_info_get", info->ctx, T_INFO))
    return 1;
  cm_device d = {CM_CPU, 0};
  if (capi_device("mlx_device_info_get", dev, &d)) return 1;
  capi_device_info *ni = calloc(1, sizeof *ni);
  if (!ni) return capi_errorf("[mlx_device_info_get] Out of memory.");
  cm_device_info_entry facts[CM_DEVICE_INFO_MAX];
  int n = cm_device_info(d, facts);
  /* mlx-c's fallbacks for unknown strings: the architecture is "unknown",
   * the device's name is its architecture. */
  const char *arch = "unknown";
  for (int i = 0; i < n; i++)
    if (facts[i].is_string && facts[i].str && strcmp(facts[i].key, "architecture") == 0)
      arch = facts[i].str;
  for (int i = 0; i < n; i++) {
    const cm_device_info_entry *f = &facts[i];
    const char *str = f->str ? f->str : strcmp(f->key, "device_name") == 0 ? arch : "unknown";
    if (info_add(ni, f->key, f->is_string ? str : NULL, f->is_string ? 0 : (size_t)f->num)) {
      info_free(ni);
      return capi_errorf("[mlx_device_info_get] Out of memory.");
    }
  }
  if (info->ctx) { /* a live handle keeps its cell */
    capi_device_info *old = capi_obj(info->ctx);
    capi_obj_set(info->ctx, ni);
    info_free(old);
    return 0;
  }
  void *c = capi_cell_new(T_INFO, ni);
  if (!c) {
    info_free(ni);
    return 1;
  }
  info->ctx = c;
  return 0;
}

int mlx_device_info_free(mlx_device_info info) {
  void *ci;
  if (capi_cell_free("mlx_device_info_free", info.ctx, T_INFO, &ci)) return 1;
  info_free(ci);
  return 0;
}

/* The entry of key in a checked info (*e NULL: none); 1 after reporting
 * a freed or invalid handle. */
static int info_find(const char *fn, mlx_device_info info, const char *key, info_entry **e) {
  *e = NULL;
  if (capi_check(fn, info.ctx, T_INFO)) return 1;
  capi_device_info *ci = capi_obj(info.ctx);
  for (size_t i = 0; ci && key && i < ci->n; i++)
    if (strcmp(ci->entries[i].key, key) == 0) {
      *e = &ci->entries[i];
      break;
    }
  return 0;
}

int mlx_device_info_has_key(bool *exists, mlx_device_info info, const char *key) {
  if (capi_out("mlx_device_info_has_key", exists)) return 1;
  info_entry *e;
  if (info_find("mlx_device_info_has_key", info, key, &e)) return 1;
  *exists = e != NULL;
  return 0;
}

int mlx_device_info_is_string(bool *is_string, mlx_device_info info, const char *key) {
  if (capi_out("mlx_device_info_is_string", is_string)) return 1;
  info_entry *e;
  if (info_find("mlx_device_info_is_string", info, key, &e)) return 1;
  if (!e) return capi_errorf("[mlx_device_info_is_string] Key '%s' not found.", key ? key : "");
  *is_string = e->is_string;
  return 0;
}

int mlx_device_info_get_string(const char **value, mlx_device_info info, const char *key) {
  if (capi_out("mlx_device_info_get_string", value)) return 1;
  info_entry *e;
  if (info_find("mlx_device_info_get_string", info, key, &e)) return 1;
  if (!e) return capi_errorf("[mlx_device_info_get_string] Key '%s' not found.", key ? key : "");
  if (!e->is_string)
    return capi_errorf("[mlx_device_info_get_string] Key '%s' is not a string.", key);
  *value = e->str;
  return 0;
}

int mlx_device_info_get_size(size_t *value, mlx_device_info info, const char *key) {
  if (capi_out("mlx_device_info_get_size", value)) return 1;
  info_entry *e;
  if (info_find("mlx_device_info_get_size", info, key, &e)) return 1;
  if (!e) return capi_errorf("[mlx_device_info_get_size] Key '%s' not found.", key ? key : "");
  if (e->is_string) return capi_errorf("[mlx_device_info_get_size] Key '%s' is not a size.", key);
  *value = e->size;
  return 0;
}

int mlx_device_info_get_keys(mlx_vector_string *keys, mlx_device_info info) {
  if (capi_out("mlx_device_info_get_keys", keys) ||
      capi_check("mlx_device_info_get_keys", info.ctx, T_INFO))
    return 1;
  capi_device_info *ci = capi_obj(info.ctx);
  mlx_vector_string v = mlx_vector_string_new();
  for (size_t i = 0; ci && i < ci->n; i++)
    if (mlx_vector_string_append_value(v, ci->entries[i].key)) {
      mlx_vector_string_free(v);
      return 1;
    }
  int rc = mlx_vector_string_set(keys, v);
  mlx_vector_string_free(v);
  return rc;
}
