/* mlx/c/map.h: string-keyed maps of arrays and of strings.  Entries keep
 * insertion order (mlx-c's order is unspecified); insert replaces the value
 * of an existing key.  _get and _iterator_next return 2, without calling
 * the error handler, when there is no such key / no further entry. */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"

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

/* *dst becomes a copy of src (allocating dst if empty). */
static int smap_assign(void **dst, const smap *src, bool of_arrays, const char *fn) {
  if (*dst == src) return 0;
  smap *tmp = smap_new(of_arrays, fn);
  if (!tmp) return 1;
  for (size_t i = 0; src && i < src->len; i++)
    if (smap_insert(tmp, fn, src->e[i].key, src->e[i].v.arr, src->e[i].v.str)) {
      smap_free(tmp);
      return 1;
    }
  smap_free(*dst);
  *dst = tmp;
  return 0;
}

/* ======================= string -> array ======================= */

mlx_map_string_to_array mlx_map_string_to_array_new(void) {
  return (mlx_map_string_to_array){smap_new(true, "mlx_map_string_to_array_new")};
}

int mlx_map_string_to_array_set(mlx_map_string_to_array *map, const mlx_map_string_to_array src) {
  if (capi_out("mlx_map_string_to_array_set", map)) return 1;
  return smap_assign(&map->ctx, src.ctx, true, "mlx_map_string_to_array_set");
}

int mlx_map_string_to_array_free(mlx_map_string_to_array map) {
  smap_free(map.ctx);
  return 0;
}

int mlx_map_string_to_array_insert(mlx_map_string_to_array map, const char *key,
                                   const mlx_array value) {
  const char *fn = "mlx_map_string_to_array_insert";
  if (capi_need(fn, value)) return 1;
  return smap_insert(map.ctx, fn, key, capi_arr(value), NULL);
}

int mlx_map_string_to_array_get(mlx_array *value, const mlx_map_string_to_array map,
                                const char *key) {
  if (capi_out("mlx_map_string_to_array_get", value)) return 1;
  entry *e = smap_find(map.ctx, key);
  if (!e) return 2;
  return capi_set(value, cm_retain(e->v.arr));
}

/* Iterators: ctx holds the next index, map_ctx the map. */
static void *iter_new(const char *fn) {
  size_t *i = calloc(1, sizeof *i);
  if (!i) capi_errorf("[%s] Out of memory.", fn);
  return i;
}

mlx_map_string_to_array_iterator mlx_map_string_to_array_iterator_new(mlx_map_string_to_array map) {
  return (mlx_map_string_to_array_iterator){iter_new("mlx_map_string_to_array_iterator_new"),
                                            map.ctx};
}

int mlx_map_string_to_array_iterator_free(mlx_map_string_to_array_iterator it) {
  free(it.ctx);
  return 0;
}

int mlx_map_string_to_array_iterator_next(const char **key, mlx_array *value,
                                          mlx_map_string_to_array_iterator it) {
  if (capi_out("mlx_map_string_to_array_iterator_next", key) ||
      capi_out("mlx_map_string_to_array_iterator_next", value))
    return 1;
  smap *m = it.map_ctx;
  size_t *i = it.ctx;
  if (!i || !m || *i >= m->len) return 2;
  entry *e = &m->e[(*i)++];
  *key = e->key;
  return capi_set(value, cm_retain(e->v.arr));
}

/* ======================= string -> string ======================= */

mlx_map_string_to_string mlx_map_string_to_string_new(void) {
  return (mlx_map_string_to_string){smap_new(false, "mlx_map_string_to_string_new")};
}

int mlx_map_string_to_string_set(mlx_map_string_to_string *map,
                                 const mlx_map_string_to_string src) {
  if (capi_out("mlx_map_string_to_string_set", map)) return 1;
  return smap_assign(&map->ctx, src.ctx, false, "mlx_map_string_to_string_set");
}

int mlx_map_string_to_string_free(mlx_map_string_to_string map) {
  smap_free(map.ctx);
  return 0;
}

int mlx_map_string_to_string_insert(mlx_map_string_to_string map, const char *key,
                                    const char *value) {
  return smap_insert(map.ctx, "mlx_map_string_to_string_insert", key, NULL, value);
}

int mlx_map_string_to_string_get(const char **value, const mlx_map_string_to_string map,
                                 const char *key) {
  if (capi_out("mlx_map_string_to_string_get", value)) return 1;
  entry *e = smap_find(map.ctx, key);
  if (!e) return 2;
  *value = e->v.str;
  return 0;
}

mlx_map_string_to_string_iterator mlx_map_string_to_string_iterator_new(
    mlx_map_string_to_string map) {
  return (mlx_map_string_to_string_iterator){iter_new("mlx_map_string_to_string_iterator_new"),
                                             map.ctx};
}

int mlx_map_string_to_string_iterator_free(mlx_map_string_to_string_iterator it) {
  free(it.ctx);
  return 0;
}

int mlx_map_string_to_string_iterator_next(const char **key, const char **value,
                                           mlx_map_string_to_string_iterator it) {
  if (capi_out("mlx_map_string_to_string_iterator_next", key) ||
      capi_out("mlx_map_string_to_string_iterator_next", value))
    return 1;
  smap *m = it.map_ctx;
  size_t *i = it.ctx;
  if (!i || !m || *i >= m->len) return 2;
  entry *e = &m->e[(*i)++];
  *key = e->key;
  *value = e->v.str;
  return 0;
}
