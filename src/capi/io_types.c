/* mlx/c/io_types.h: readers, writers and GGUF containers, and the
 * adapters of readers and writers to the core's (io_capi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capi/io_capi.h"

/* Readers and writers are a descriptor plus the caller's vtable.  Freeing
 * one calls vtable.free(desc). */
typedef capi_io_obj io_obj;

/* A new handle cell of type t (reader or writer); NULL after reporting. */
static void *io_new(void *desc, mlx_io_vtable vt, capi_htype t) {
  io_obj *o = malloc(sizeof *o);
  if (!o) {
    capi_errorf("[mlx_io] Out of memory.");
    return NULL;
  }
  o->desc = desc;
  o->vt = vt;
  void *c = capi_cell_new(t, o);
  if (!c) free(o);
  return c;
}

static int io_descriptor(const char *fn, void **desc_, void *ctx, capi_htype t) {
  if (capi_out(fn, desc_) || capi_check(fn, ctx, t)) return 1;
  io_obj *o = capi_obj(ctx);
  if (!o) return capi_errorf("[mlx_io] expected a non-empty reader or writer");
  *desc_ = o->desc;
  return 0;
}

static int io_tostring(const char *fn, mlx_string *str_, void *ctx, capi_htype t) {
  if (capi_out(fn, str_) || capi_check(fn, ctx, t)) return 1;
  io_obj *o = capi_obj(ctx);
  if (!o) return capi_errorf("[mlx_io] expected a non-empty reader or writer");
  return capi_string_set(str_, o->vt.label ? o->vt.label(o->desc) : "");
}

static int io_free(const char *fn, void *ctx, capi_htype t) {
  void *p;
  if (capi_cell_free(fn, ctx, t, &p)) return 1;
  io_obj *o = p;
  if (!o) return 0;
  if (o->vt.free) o->vt.free(o->desc);
  free(o);
  return 0;
}

#define T_R CAPI_H_IO_READER
#define T_W CAPI_H_IO_WRITER

mlx_io_reader mlx_io_reader_new(void *desc, mlx_io_vtable vtable) {
  return (mlx_io_reader){io_new(desc, vtable, T_R)};
}
int mlx_io_reader_descriptor(void **desc_, mlx_io_reader io) {
  return io_descriptor("mlx_io_reader_descriptor", desc_, io.ctx, T_R);
}
int mlx_io_reader_tostring(mlx_string *str_, mlx_io_reader io) {
  return io_tostring("mlx_io_reader_tostring", str_, io.ctx, T_R);
}
int mlx_io_reader_free(mlx_io_reader io) { return io_free("mlx_io_reader_free", io.ctx, T_R); }

mlx_io_writer mlx_io_writer_new(void *desc, mlx_io_vtable vtable) {
  return (mlx_io_writer){io_new(desc, vtable, T_W)};
}
int mlx_io_writer_descriptor(void **desc_, mlx_io_writer io) {
  return io_descriptor("mlx_io_writer_descriptor", desc_, io.ctx, T_W);
}
int mlx_io_writer_tostring(mlx_string *str_, mlx_io_writer io) {
  return io_tostring("mlx_io_writer_tostring", str_, io.ctx, T_W);
}
int mlx_io_writer_free(mlx_io_writer io) { return io_free("mlx_io_writer_free", io.ctx, T_W); }

/* ---- adapters to the core ---- */

static bool obj_ok(const capi_io_obj *o) {
  return o && (!o->vt.is_open || o->vt.is_open(o->desc)) && (!o->vt.good || o->vt.good(o->desc));
}

static const char *obj_label(const capi_io_obj *o) {
  return o && o->vt.label ? o->vt.label(o->desc) : "stream";
}

static int vt_read_at(void *ctx, void *dst, size_t n, uint64_t off) {
  capi_io_obj *o = ctx;
  if (o->vt.read_at_offset) {
    o->vt.read_at_offset(o->desc, dst, n, (size_t)off);
  } else if (o->vt.seek && o->vt.read) {
    o->vt.seek(o->desc, (int64_t)off, SEEK_SET);
    o->vt.read(o->desc, dst, n);
  } else {
    return cm_error(CM_ERR_RUNTIME, "[load] The reader has no read function.");
  }
  if (o->vt.good && !o->vt.good(o->desc))
    return cm_error(CM_ERR_RUNTIME, "[load] Failed to read %zu bytes from %s.", n, obj_label(o));
  return 0;
}

static int vt_size(void *ctx, uint64_t *out) {
  capi_io_obj *o = ctx;
  if (!o->vt.seek || !o->vt.tell) return cm_error(CM_ERR_RUNTIME, "[load] The reader cannot seek.");
  size_t pos = o->vt.tell(o->desc);
  o->vt.seek(o->desc, 0, SEEK_END);
  *out = o->vt.tell(o->desc);
  o->vt.seek(o->desc, (int64_t)pos, SEEK_SET);
  if (o->vt.good && !o->vt.good(o->desc))
    return cm_error(CM_ERR_RUNTIME, "[load] Failed to seek in %s.", obj_label(o));
  return 0;
}

cm_reader *capi_reader(mlx_io_reader in, const char *fn) {
  if (capi_check(fn, in.ctx, T_R)) return NULL;
  capi_io_obj *o = capi_obj(in.ctx);
  if (!obj_ok(o)) {
    capi_errorf("[%s] Failed to open %s", fn, obj_label(o));
    return NULL;
  }
  static const cm_reader_ops ops = {vt_read_at, vt_size, NULL};
  cm_reader *r = cm_reader_new(&ops, o, true, obj_label(o));
  if (!r) capi_fail();
  return r;
}

static int vt_write(void *ctx, const void *src, size_t n) {
  capi_io_obj *o = ctx;
  o->vt.write(o->desc, src, n);
  if (o->vt.good && !o->vt.good(o->desc))
    return cm_error(CM_ERR_RUNTIME, "[save] Failed to write %zu bytes to %s.", n, obj_label(o));
  return 0;
}

int capi_writer(mlx_io_writer out, const char *fn, cm_writer *w) {
  if (capi_check(fn, out.ctx, T_W)) return 1;
  capi_io_obj *o = capi_obj(out.ctx);
  if (!obj_ok(o) || !o->vt.write) return capi_errorf("[%s] Failed to open %s", fn, obj_label(o));
  *w = (cm_writer){vt_write, o, 0, obj_label(o)};
  return 0;
}

/* ---- GGUF containers ----
 * As mlx-c: the get functions return 2 when the key is absent (3 for a
 * metadata value of another kind) without reporting; the set functions
 * keep an existing entry (std::map::insert). */

#define T_G CAPI_H_IO_GGUF

static capi_gguf *gguf_of(mlx_io_gguf io, const char *fn) {
  return capi_need_h(fn, io.ctx, T_G) ? NULL : capi_obj(io.ctx);
}

void capi_gguf_destroy(capi_gguf *g) {
  if (!g) return;
  cm_named_arrays_clear(&g->arrays);
  cm_metadata_clear(&g->meta);
  free(g);
}

int capi_gguf_put(mlx_io_gguf *res, capi_gguf *g) {
  if (res->ctx) {
    capi_gguf *old = capi_obj(res->ctx);
    capi_obj_set(res->ctx, g);
    capi_gguf_destroy(old);
    return 0;
  }
  void *c = capi_cell_new(T_G, g);
  if (!c) {
    capi_gguf_destroy(g);
    return 1;
  }
  res->ctx = c;
  return 0;
}

mlx_io_gguf mlx_io_gguf_new(void) {
  capi_gguf *g = calloc(1, sizeof *g);
  if (!g) {
    capi_errorf("[mlx_io_gguf_new] Out of memory.");
    return (mlx_io_gguf){NULL};
  }
  mlx_io_gguf io = {NULL};
  capi_gguf_put(&io, g);
  return io;
}

int mlx_io_gguf_free(mlx_io_gguf io) {
  void *g;
  if (capi_cell_free("mlx_io_gguf_free", io.ctx, T_G, &g)) return 1;
  capi_gguf_destroy(g);
  return 0;
}

int mlx_io_gguf_get_keys(mlx_vector_string *keys, mlx_io_gguf io) {
  if (capi_out("mlx_io_gguf_get_keys", keys)) return 1;
  capi_gguf *g = gguf_of(io, "mlx_io_gguf_get_keys");
  if (!g) return 1;
  /* in the order of mlx-c's std::unordered_map (io/key_order.c) */
  size_t *order = cm_hash_map_order(g->arrays.keys, sizeof *g->arrays.keys, g->arrays.n);
  if (!order) return capi_errorf("[mlx_io_gguf_get_keys] Out of memory.");
  mlx_vector_string v = mlx_vector_string_new();
  for (size_t i = 0; i < g->arrays.n; i++)
    if (mlx_vector_string_append_value(v, g->arrays.keys[order[i]])) {
      mlx_vector_string_free(v);
      free(order);
      return 1;
    }
  free(order);
  int rc = mlx_vector_string_set(keys, v);
  mlx_vector_string_free(v);
  return rc;
}

int mlx_io_gguf_get_array(mlx_array *arr, mlx_io_gguf io, const char *key) {
  if (capi_out("mlx_io_gguf_get_array", arr)) return 1;
  capi_gguf *g = gguf_of(io, "mlx_io_gguf_get_array");
  if (!g) return 1;
  cm_array *a = key ? cm_named_arrays_get(&g->arrays, key) : NULL;
  if (!a) return 2;
  return capi_set(arr, cm_retain(a));
}

/* The metadata value of key if it has kind k: 0; 2 absent; 3 other kind. */
static int meta_find(mlx_io_gguf io, const char *fn, const char *key, cm_meta_kind k,
                     const cm_meta_value **v) {
  capi_gguf *g = gguf_of(io, fn);
  if (!g) return 1;
  *v = key ? cm_metadata_get(&g->meta, key) : NULL;
  if (!*v) return 2;
  return (*v)->kind == k ? 0 : 3;
}

int mlx_io_gguf_get_metadata_array(mlx_array *arr, mlx_io_gguf io, const char *key) {
  if (capi_out("mlx_io_gguf_get_metadata_array", arr)) return 1;
  const cm_meta_value *v;
  int rc = meta_find(io, "mlx_io_gguf_get_metadata_array", key, CM_META_ARRAY, &v);
  return rc ? rc : capi_set(arr, cm_retain(v->arr));
}

int mlx_io_gguf_get_metadata_string(mlx_string *str, mlx_io_gguf io, const char *key) {
  if (capi_out("mlx_io_gguf_get_metadata_string", str)) return 1;
  const cm_meta_value *v;
  int rc = meta_find(io, "mlx_io_gguf_get_metadata_string", key, CM_META_STRING, &v);
  return rc ? rc : capi_string_set(str, v->str);
}

int mlx_io_gguf_get_metadata_vector_string(mlx_vector_string *vstr, mlx_io_gguf io,
                                           const char *key) {
  if (capi_out("mlx_io_gguf_get_metadata_vector_string", vstr)) return 1;
  const cm_meta_value *v;
  int rc = meta_find(io, "mlx_io_gguf_get_metadata_vector_string", key, CM_META_STRINGS, &v);
  if (rc) return rc;
  return mlx_vector_string_set_data(vstr, (const char **)v->strs, v->nstrs);
}

static int meta_has(bool *flag, mlx_io_gguf io, const char *fn, const char *key, cm_meta_kind k) {
  if (capi_out(fn, flag)) return 1;
  const cm_meta_value *v;
  int rc = meta_find(io, fn, key, k, &v);
  *flag = rc == 0;
  return rc == 3 ? 0 : rc;
}

int mlx_io_gguf_has_metadata_array(bool *flag, mlx_io_gguf io, const char *key) {
  return meta_has(flag, io, "mlx_io_gguf_has_metadata_array", key, CM_META_ARRAY);
}

int mlx_io_gguf_has_metadata_string(bool *flag, mlx_io_gguf io, const char *key) {
  return meta_has(flag, io, "mlx_io_gguf_has_metadata_string", key, CM_META_STRING);
}

int mlx_io_gguf_has_metadata_vector_string(bool *flag, mlx_io_gguf io, const char *key) {
  return meta_has(flag, io, "mlx_io_gguf_has_metadata_vector_string", key, CM_META_STRINGS);
}

/* Checks for a set: the handle, the key; false if the key is present. */
static capi_gguf *gguf_set_target(mlx_io_gguf io, const char *fn, const char *key, bool meta,
                                  bool *present) {
  capi_gguf *g = gguf_of(io, fn);
  if (!g) return NULL;
  if (!key) {
    capi_errorf("[%s] key is NULL.", fn);
    return NULL;
  }
  *present =
      meta ? cm_metadata_get(&g->meta, key) != NULL : cm_named_arrays_get(&g->arrays, key) != NULL;
  return g;
}

int mlx_io_gguf_set_array(mlx_io_gguf io, const char *key, const mlx_array arr) {
  bool present;
  capi_gguf *g = gguf_set_target(io, "mlx_io_gguf_set_array", key, false, &present);
  if (!g || capi_need("mlx_io_gguf_set_array", arr)) return 1;
  if (present) return 0;
  return cm_named_arrays_put(&g->arrays, key, strlen(key), cm_retain(capi_arr(arr)), false,
                             "mlx_io_gguf_set_array")
             ? capi_fail()
             : 0;
}

int mlx_io_gguf_set_metadata_array(mlx_io_gguf io, const char *key, const mlx_array marr) {
  bool present;
  capi_gguf *g = gguf_set_target(io, "mlx_io_gguf_set_metadata_array", key, true, &present);
  if (!g || capi_need("mlx_io_gguf_set_metadata_array", marr)) return 1;
  if (present) return 0;
  return cm_metadata_set_array(&g->meta, key, capi_arr(marr)) ? capi_fail() : 0;
}

int mlx_io_gguf_set_metadata_string(mlx_io_gguf io, const char *key, const char *mstr) {
  bool present;
  capi_gguf *g = gguf_set_target(io, "mlx_io_gguf_set_metadata_string", key, true, &present);
  if (!g) return 1;
  if (!mstr) return capi_errorf("[mlx_io_gguf_set_metadata_string] value is NULL.");
  if (present) return 0;
  return cm_metadata_set_string(&g->meta, key, mstr, strlen(mstr)) ? capi_fail() : 0;
}

int mlx_io_gguf_set_metadata_vector_string(mlx_io_gguf io, const char *key,
                                           const mlx_vector_string mvstr) {
  bool present;
  capi_gguf *g = gguf_set_target(io, "mlx_io_gguf_set_metadata_vector_string", key, true, &present);
  if (!g) return 1;
  if (present) return 0;
  size_t n = mlx_vector_string_size(mvstr);
  char **strs = calloc(n ? n : 1, sizeof *strs);
  if (!strs) return capi_errorf("[mlx_io_gguf_set_metadata_vector_string] Out of memory.");
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) rc = mlx_vector_string_get(&strs[i], mvstr, i);
  if (!rc && cm_metadata_set_strings(&g->meta, key, (const char *const *)strs, NULL, n))
    rc = capi_fail();
  free(strs);
  return rc;
}
