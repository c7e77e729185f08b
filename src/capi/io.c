/* mlx/c/io.h: loading and saving arrays (.npy, safetensors, GGUF) through
 * the core's formats (src/io).  Loading from a path is lazy, as in MLX;
 * loading from an mlx_io_reader evaluates the arrays before returning, so
 * they never outlive the reader the caller frees. */
#include <stdlib.h>
#include <string.h>

#include "capi/io_capi.h"
#include "transforms/eval.h"

static int eval_all(cm_named_arrays *m) { return m->n ? cm_eval(m->arrs, (int)m->n) : 0; }

/* Move a core result into an mlx-c map (a fresh one replaces *res). */
static int arrays_out(mlx_map_string_to_array *res, const cm_named_arrays *m) {
  mlx_map_string_to_array out = mlx_map_string_to_array_new();
  int rc = 0;
  for (size_t i = 0; i < m->n && !rc; i++) {
    mlx_array v = capi_wrap(cm_retain(m->arrs[i]));
    rc = v.ctx ? mlx_map_string_to_array_insert(out, m->keys[i], v) : 1;
    mlx_array_free(v);
  }
  if (!rc) rc = mlx_map_string_to_array_set(res, out);
  mlx_map_string_to_array_free(out);
  return rc;
}

static int strings_out(mlx_map_string_to_string *res, const cm_metadata *m) {
  mlx_map_string_to_string out = mlx_map_string_to_string_new();
  int rc = 0;
  for (size_t i = 0; i < m->n && !rc; i++)
    if (m->vals[i].kind == CM_META_STRING)
      rc = mlx_map_string_to_string_insert(out, m->keys[i], m->vals[i].str);
  if (!rc) rc = mlx_map_string_to_string_set(res, out);
  mlx_map_string_to_string_free(out);
  return rc;
}

static int arrays_in(mlx_map_string_to_array in, cm_named_arrays *out, const char *fn) {
  if (capi_check(fn, in.ctx, CAPI_H_MAP_ARRAY)) return 1;
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(in);
  const char *key;
  mlx_array v = mlx_array_new();
  int rc = 0, k;
  while (!rc && !(k = mlx_map_string_to_array_iterator_next(&key, &v, it))) {
    if (capi_need(fn, v)) rc = 1;
    else if (cm_named_arrays_put(out, key, strlen(key), cm_retain(capi_arr(v)), true, fn))
      rc = capi_fail();
  }
  if (!rc && k == 1) rc = 1;
  mlx_array_free(v);
  mlx_map_string_to_array_iterator_free(it);
  return rc;
}

static int strings_in(mlx_map_string_to_string in, cm_metadata *out) {
  if (capi_check("mlx_save_safetensors", in.ctx, CAPI_H_MAP_STRING)) return 1;
  if (!in.ctx) return 0;
  mlx_map_string_to_string_iterator it = mlx_map_string_to_string_iterator_new(in);
  const char *key, *val;
  int rc = 0, k;
  while (!rc && !(k = mlx_map_string_to_string_iterator_next(&key, &val, it)))
    if (cm_metadata_set_string(out, key, val, strlen(val))) rc = capi_fail();
  if (!rc && k == 1) rc = 1;
  mlx_map_string_to_string_iterator_free(it);
  return rc;
}

int mlx_load_reader(mlx_array *res, mlx_io_reader in_stream, const mlx_stream s) {
  if (capi_op("mlx_load_reader", res, s)) return 1;
  cm_reader *r = capi_reader(in_stream, "load");
  if (!r) return 1;
  cm_array *a = cm_load_npy(r, capi_stream(s));
  if (a && cm_eval1(a)) {
    cm_release(a);
    a = NULL;
  }
  cm_reader_release(r);
  return capi_set(res, a);
}

int mlx_load(mlx_array *res, const char *file, const mlx_stream s) {
  if (capi_op("mlx_load", res, s)) return 1;
  if (!file) return capi_errorf("[load] file is NULL.");
  return capi_set(res, cm_load_npy_path(file, capi_stream(s)));
}

int mlx_load_gguf(mlx_io_gguf *gguf, const char *file, const mlx_stream s) {
  if (capi_op("mlx_load_gguf", gguf, s) || capi_check("mlx_load_gguf", gguf->ctx, CAPI_H_IO_GGUF))
    return 1;
  if (!file) return capi_errorf("[load_gguf] file is NULL.");
  cm_reader *r = cm_reader_file("load_gguf", file);
  if (!r) return capi_fail();
  capi_gguf *g = calloc(1, sizeof *g);
  int rc = g ? cm_load_gguf(r, capi_stream(s), &g->arrays, &g->meta)
             : cm_error(CM_ERR_MEMORY, "[load_gguf] Out of memory.");
  cm_reader_release(r);
  if (rc) {
    capi_gguf_destroy(g);
    return capi_fail();
  }
  return capi_gguf_put(gguf, g);
}

static int load_st(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1, cm_reader *r,
                   const mlx_stream s, bool eval) {
  cm_named_arrays arrays = {0};
  cm_metadata meta = {0};
  int rc = cm_load_safetensors(r, capi_stream(s), &arrays, &meta);
  if (!rc && eval) rc = eval_all(&arrays);
  rc = rc ? capi_fail() : arrays_out(res_0, &arrays) || strings_out(res_1, &meta);
  cm_named_arrays_clear(&arrays);
  cm_metadata_clear(&meta);
  cm_reader_release(r);
  return rc;
}

int mlx_load_safetensors_reader(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1,
                                mlx_io_reader in_stream, const mlx_stream s) {
  if (capi_op("mlx_load_safetensors_reader", res_0, s) ||
      capi_out("mlx_load_safetensors_reader", res_1))
    return 1;
  cm_reader *r = capi_reader(in_stream, "load_safetensors");
  return r ? load_st(res_0, res_1, r, s, true) : 1;
}

int mlx_load_safetensors(mlx_map_string_to_array *res_0, mlx_map_string_to_string *res_1,
                         const char *file, const mlx_stream s) {
  if (capi_op("mlx_load_safetensors", res_0, s) || capi_out("mlx_load_safetensors", res_1))
    return 1;
  if (!file) return capi_errorf("[load_safetensors] file is NULL.");
  cm_reader *r = cm_reader_file("load_safetensors", file);
  return r ? load_st(res_0, res_1, r, s, false) : capi_fail();
}

int mlx_save_writer(mlx_io_writer out_stream, const mlx_array a) {
  cm_writer w;
  if (capi_need("mlx_save_writer", a) || capi_writer(out_stream, "save", &w)) return 1;
  return cm_save_npy(&w, capi_arr(a)) ? capi_fail() : 0;
}

int mlx_save(const char *file, const mlx_array a) {
  if (capi_need("mlx_save", a)) return 1;
  if (!file) return capi_errorf("[save] file is NULL.");
  return cm_save_npy_path(file, capi_arr(a)) ? capi_fail() : 0;
}

int mlx_save_gguf(const char *file, mlx_io_gguf gguf) {
  if (capi_need_h("mlx_save_gguf", gguf.ctx, CAPI_H_IO_GGUF)) return 1;
  capi_gguf *g = capi_obj(gguf.ctx);
  if (!file) return capi_errorf("[save_gguf] file is NULL.");
  return cm_save_gguf_path(file, &g->arrays, &g->meta) ? capi_fail() : 0;
}

/* Save through w (a writer or a file): 0 or 1 (reported). */
static int save_st(cm_writer *w, const char *path, const mlx_map_string_to_array param,
                   const mlx_map_string_to_string metadata) {
  cm_named_arrays arrays = {0};
  cm_metadata meta = {0};
  int rc = arrays_in(param, &arrays, "save_safetensors") || strings_in(metadata, &meta);
  if (!rc) {
    int r2 =
        w ? cm_save_safetensors(w, &arrays, &meta) : cm_save_safetensors_path(path, &arrays, &meta);
    if (r2) rc = capi_fail();
  }
  cm_named_arrays_clear(&arrays);
  cm_metadata_clear(&meta);
  return rc;
}

int mlx_save_safetensors_writer(mlx_io_writer in_stream, const mlx_map_string_to_array param,
                                const mlx_map_string_to_string metadata) {
  cm_writer w;
  if (capi_writer(in_stream, "save_safetensors", &w)) return 1;
  return save_st(&w, NULL, param, metadata);
}

int mlx_save_safetensors(const char *file, const mlx_map_string_to_array param,
                         const mlx_map_string_to_string metadata) {
  if (!file) return capi_errorf("[save_safetensors] file is NULL.");
  return save_st(NULL, file, param, metadata);
}
