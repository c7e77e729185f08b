/* mlx/c/map.h: string-keyed maps of arrays and of strings.  Entries are
 * stored in insertion order; insert replaces the value of an existing key.
 * _get and _iterator_next return 2, without calling
 * the error handler, when there is no such key / no further entry.
 * Iterators hand the entries out in mlx-c's order, which is that of a
 * libstdc++ std::unordered_map (see io/key_order.c).
 * ctx is a cell (handle.h) holding the smap; an iterator's ctx is a cell
 * holding its position and its map_ctx the map's cell, so a use of an
 * iterator after its map was freed is reported too. */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"
#include "io/io.h"

typedef struct entry {
  char *key;
  union {
    cm_array *arr;
    char *str;
  } v;
} entry;

typedef struct smap {
  bool of_arrays;
  entry *e;
  size_t len, cap;
} smap;

static smap *smap_new(bool of_arrays, const char *fn) {
  smap *m = calloc(1, sizeof *m);
  if (!m) capi_errorf("[%s] Out of memory.", fn);
  else m->of_arrays = of_arrays;
  return m;
}

static void smap_clear(smap *m) {
  for (size_t i = 0; i < m->len; i++) {
    free(m->e[i].key);
    if (m->of_arrays) cm_release(m->e[i].v.arr);
    else free(m->e[i].v.str);
  }
  m->len = 0;
}

static void smap_free(smap *m) {
  if (!m) return;
  smap_clear(m);
  free(m->e);
  free(m);
}

static entry *smap_find(const smap *m, const char *key) {
  for (size_t i = 0; m && key && i < m->len; i++)
    if (strcmp(m->e[i].key, key) == 0) return &m->e[i];
  return NULL;
}

/* Insert or replace; takes a reference to arr / a copy of str. */
static int smap_insert(smap *m, const char *fn, const char *key, cm_array *arr, const char *str) {
  if (!m) return capi_errorf("[%s] expected a non-empty map", fn);
  if (!key) return capi_errorf("[%s] key is NULL.", fn);
  if (m->of_arrays && !arr) return capi_errorf("[%s] expected a non-empty mlx_array", fn);
  char *sv = NULL;
  if (!m->of_arrays && !(sv = strdup(str ? str : "")))
    return capi_errorf("[%s] Out of memory.", fn);
  entry *e = smap_find(m, key);
  if (e) {
    if (m->of_arrays) {
      cm_retain(arr);
      cm_release(e->v.arr);
      e->v.arr = arr;
    } else {
      free(e->v.str);
      e->v.str = sv;
    }
    return 0;
  }
  if (m->len == m->cap) {
    size_t ncap = m->cap ? m->cap * 2 : 8;
    entry *ne = realloc(m->e, ncap * sizeof *ne);
    if (!ne) {
      free(sv);
      return capi_errorf("[%s] Out of memory.", fn);
    }
    m->e = ne;
    m->cap = ncap;
  }
  char *k = strdup(key);
  if (!k) {
    free(sv);
    return capi_errorf("[%s] Out of memory.", fn);
  }
  m->e[m->len].key = k;
  if (m->of_arrays) m->e[m->len].v.arr = cm_retain(arr);
  else m->e[m->len].v.str = sv;
  m->len++;
  return 0;
}

/* *dst (checked: empty or live of type t) becomes a copy of src (an
 * smap or NULL): a live handle keeps its cell, an empty one gets one. */
static int smap_assign(void **dst, const smap *src, bool of_arrays, capi_htype t, const char *fn) {
  smap *tmp = smap_new(of_arrays, fn);
  if (!tmp) return 1;
  for (size_t i = 0; src && i < src->len; i++)
    if (smap_insert(tmp, fn, src->e[i].key, src->e[i].v.arr, src->e[i].v.str)) {
      smap_free(tmp);
      return 1;
    }
  if (*dst) {
    smap *old = capi_obj(*dst);
    capi_obj_set(*dst, tmp);
    smap_free(old);
    return 0;
  }
  void *c = capi_cell_new(t, tmp);
  if (!c) {
    smap_free(tmp);
    return 1;
  }
  *dst = c;
  return 0;
}

static void *map_cell(bool of_arrays, capi_htype t, const char *fn) {
  smap *m = smap_new(of_arrays, fn);
  if (!m) return NULL;
  void *c = capi_cell_new(t, m);
  if (!c) smap_free(m);
  return c;
}

static int map_set(const char *fn, void **dst, const void *src, bool of_arrays, capi_htype t) {
  if (capi_out(fn, dst) || capi_check(fn, *dst, t) || capi_check(fn, src, t)) return 1;
  if (*dst == src) return 0;
  return smap_assign(dst, capi_obj(src), of_arrays, t, fn);
}

static int map_free(const char *fn, void *ctx, capi_htype t) {
  void *m;
  if (capi_cell_free(fn, ctx, t, &m)) return 1;
  smap_free(m);
  return 0;
}

/* Iterators: ctx is a cell holding the next position and the order of
 * the entries, map_ctx the map's cell.  The order is that of mlx-c's
 * std::unordered_map holding the same insertions (io/key_order.c), worked
 * out when the iteration starts and again if the map grew meanwhile. */
typedef struct iter_state {
  size_t pos, len;
  size_t *order;
} iter_state;

static void *iter_new(const char *fn, const void *map, capi_htype mt, capi_htype it) {
  if (capi_check(fn, map, mt)) return NULL;
  iter_state *i = calloc(1, sizeof *i);
  if (!i) {
    capi_errorf("[%s] Out of memory.", fn);
    return NULL;
  }
  void *c = capi_cell_new(it, i);
  if (!c) free(i);
  return c;
}

static int iter_free(const char *fn, void *ctx, capi_htype it) {
  void *i;
  if (capi_cell_free(fn, ctx, it, &i)) return 1;
  free(((iter_state *)i)->order);
  free(i);
  return 0;
}

/* The next entry of an iterator (checked, with its map): 0 and *e, 2 at
 * the end (or for an empty map), 1 after reporting. */
static int iter_next(const char *fn, void *ctx, void *map, capi_htype mt, capi_htype it,
                     entry **e) {
  if (capi_need_h(fn, ctx, it) || capi_check(fn, map, mt)) return 1;
  smap *m = capi_obj(map);
  iter_state *i = capi_obj(ctx);
  if (!m || i->pos >= m->len) return 2;
  if (!i->order || i->len != m->len) {
    size_t *order = cm_hash_map_order(&m->e[0].key, sizeof(entry), m->len);
    if (!order) return capi_errorf("[%s] Out of memory.", fn);
    free(i->order);
    i->order = order;
    i->len = m->len;
  }
  *e = &m->e[i->order[i->pos++]];
  return 0;
}

/* ======================= string -> array ======================= */

#define T_MA CAPI_H_MAP_ARRAY
#define T_MAI CAPI_H_MAP_ARRAY_ITER

mlx_map_string_to_array mlx_map_string_to_array_new(void) {
  return (mlx_map_string_to_array){map_cell(true, T_MA, "mlx_map_string_to_array_new")};
}

int mlx_map_string_to_array_set(mlx_map_string_to_array *map, const mlx_map_string_to_array src) {
  return map_set("mlx_map_string_to_array_set", map ? &map->ctx : NULL, src.ctx, true, T_MA);
}

int mlx_map_string_to_array_free(mlx_map_string_to_array map) {
  return map_free("mlx_map_string_to_array_free", map.ctx, T_MA);
}

int mlx_map_string_to_array_insert(mlx_map_string_to_array map, const char *key,
                                   const mlx_array value) {
  const char *fn = "mlx_map_string_to_array_insert";
  if (capi_need_h(fn, map.ctx, T_MA) || capi_need(fn, value)) return 1;
  return smap_insert(capi_obj(map.ctx), fn, key, capi_arr(value), NULL);
}

int mlx_map_string_to_array_get(mlx_array *value, const mlx_map_string_to_array map,
                                const char *key) {
  const char *fn = "mlx_map_string_to_array_get";
  if (capi_out(fn, value) || capi_check(fn, map.ctx, T_MA)) return 1;
  entry *e = smap_find(capi_obj(map.ctx), key);
  if (!e) return 2;
  return capi_set(value, cm_retain(e->v.arr));
}

mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(mlx_map_string_to_array map) {
  void *c = iter_new("mlx_map_string_to_array_iterator_new", map.ctx, T_MA, T_MAI);
  return (mlx_map_string_to_array_iterator){c, c ? map.ctx : NULL};
}

int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it) {
  return iter_free("mlx_map_string_to_array_iterator_free", it.ctx, T_MAI);
}

int mlx_map_string_to_array_iterator_next(const char **key, mlx_array *value,
                                          mlx_map_string_to_array_iterator it) {
  const char *fn = "mlx_map_string_to_array_iterator_next";
  if (capi_out(fn, key) || capi_out(fn, value)) return 1;
  entry *e;
  int rc = iter_next(fn, it.ctx, it.map_ctx, T_MA, T_MAI, &e);
  if (rc) return rc;
  *key = e->key;
  return capi_set(value, cm_retain(e->v.arr));
}

/* ======================= string -> string ======================= */

#define T_MS CAPI_H_MAP_STRING
#define T_MSI CAPI_H_MAP_STRING_ITER

mlx_map_string_to_string mlx_map_string_to_string_new(void) {
  return (mlx_map_string_to_string){map_cell(false, T_MS, "mlx_map_string_to_string_new")};
}

int mlx_map_string_to_string_set(mlx_map_string_to_string *map,
                                 const mlx_map_string_to_string src) {
  return map_set("mlx_map_string_to_string_set", map ? &map->ctx : NULL, src.ctx, false, T_MS);
}

int mlx_map_string_to_string_free(mlx_map_string_to_string map) {
  return map_free("mlx_map_string_to_string_free", map.ctx, T_MS);
}

int mlx_map_string_to_string_insert(mlx_map_string_to_string map, const char *key,
                                    const char *value) {
  const char *fn = "mlx_map_string_to_string_insert";
  if (capi_need_h(fn, map.ctx, T_MS)) return 1;
  return smap_insert(capi_obj(map.ctx), fn, key, NULL, value);
}

int mlx_map_string_to_string_get(const char **value, const mlx_map_string_to_string map,
                                 const char *key) {
  const char *fn = "mlx_map_string_to_string_get";
  if (capi_out(fn, value) || capi_check(fn, map.ctx, T_MS)) return 1;
  entry *e = smap_find(capi_obj(map.ctx), key);
  if (!e) return 2;
  *value = e->v.str;
  return 0;
}

mlx_map_string_to_string_iterator
mlx_map_string_to_string_iterator_new(mlx_map_string_to_string map) {
  void *c = iter_new("mlx_map_string_to_string_iterator_new", map.ctx, T_MS, T_MSI);
  return (mlx_map_string_to_string_iterator){c, c ? map.ctx : NULL};
}

int mlx_map_string_to_string_iterator_free(mlx_map_string_to_string_iterator it) {
  return iter_free("mlx_map_string_to_string_iterator_free", it.ctx, T_MSI);
}

int mlx_map_string_to_string_iterator_next(const char **key, const char **value,
                                           mlx_map_string_to_string_iterator it) {
  const char *fn = "mlx_map_string_to_string_iterator_next";
  if (capi_out(fn, key) || capi_out(fn, value)) return 1;
  entry *e;
  int rc = iter_next(fn, it.ctx, it.map_ctx, T_MS, T_MSI, &e);
  if (rc) return rc;
  *key = e->key;
  *value = e->v.str;
  return 0;
}
