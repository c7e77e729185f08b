/* mlx/c/export.h: exporting and importing functions (transforms/export.h). */
#include <stdlib.h>
#include <string.h>

#include "capi/capi.h"
#include "transforms/export.h"

/* A map's keys (borrowed from the map) and arrays (new references). */
typedef struct kw_list {
  const char **keys;
  cm_array **vals;
  int n;
} kw_list;

static void kw_free(kw_list *k) {
  cm_array_list_free(k->vals, k->n);
  free(k->keys);
}

static int kw_of(const char *fn, mlx_map_string_to_array map, kw_list *k) {
  memset(k, 0, sizeof *k);
  if (capi_check(fn, map.ctx, CAPI_H_MAP_ARRAY)) return 1;
  if (!map.ctx) return 0;
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(map);
  const char *key;
  mlx_array v = mlx_array_new();
  int cap = 0, st;
  while ((st = mlx_map_string_to_array_iterator_next(&key, &v, it)) == 0) {
    if (k->n == cap) {
      cap = cap ? 2 * cap : 8;
      const char **nk = realloc(k->keys, sizeof *nk * (size_t)cap);
      cm_array **nv = nk ? realloc(k->vals, sizeof *nv * (size_t)cap) : NULL;
      if (nk) k->keys = nk;
      if (nv) k->vals = nv;
      if (!nk || !nv) {
        mlx_array_free(v);
        mlx_map_string_to_array_iterator_free(it);
        kw_free(k);
        return capi_errorf("%s: out of memory", fn);
      }
    }
    k->keys[k->n] = key;
    k->vals[k->n++] = cm_retain(capi_arr(v));
  }
  mlx_array_free(v);
  mlx_map_string_to_array_iterator_free(it);
  if (st == 1) {
    kw_free(k);
    memset(k, 0, sizeof *k);
    return 1;
  }
  return 0;
}

/* A kwargs closure called on flat inputs: nargs positional, then the
 * keyword arrays in sorted key order. */
typedef struct kw_call {
  mlx_closure_kwargs cls;
  int nargs, nkw;
  const char **sorted;
} kw_call;

static int kw_call_fn(void *vctx, cm_array *const *in, int nin, cm_array ***out, int *nout) {
  kw_call *c = vctx;
  (void)nin;
  mlx_vector_array args = mlx_vector_array_new(), res = mlx_vector_array_new();
  mlx_map_string_to_array kw = mlx_map_string_to_array_new();
  int rc = capi_vector_set_arrays(&args, in, (size_t)c->nargs);
  for (int i = 0; !rc && i < c->nkw; i++) {
    mlx_array v = capi_wrap(cm_retain(in[c->nargs + i]));
    rc = v.ctx ? mlx_map_string_to_array_insert(kw, c->sorted[i], v) : 1;
    mlx_array_free(v);
  }
  if (!rc) rc = mlx_closure_kwargs_apply(&res, c->cls, args, kw);
  size_t n = 0;
  cm_array *const *items = NULL;
  if (!rc && capi_vector_arrays("export", res, &items, &n)) rc = 1;
  cm_array **o = rc ? NULL : malloc(sizeof *o * (n + 1));
  for (size_t i = 0; o && i < n; i++) o[i] = cm_retain(items[i]);
  mlx_vector_array_free(args), mlx_vector_array_free(res);
  mlx_map_string_to_array_free(kw);
  if (!o) return cm_error(CM_ERR_RUNTIME, "mlx_export_function_kwargs: the function failed.");
  *out = o, *nout = (int)n;
  return 0;
}

static int sorted_keys(const kw_list *k, const char ***out) {
  int *perm = malloc(sizeof *perm * (size_t)(k->n + 1));
  const char **s = malloc(sizeof *s * (size_t)(k->n + 1));
  int rc = perm && s ? cm_export_sort_keys(k->keys, k->n, perm) : -1;
  for (int i = 0; !rc && i < k->n; i++) s[i] = k->keys[perm[i]];
  free(perm);
  if (rc) free(s);
  else *out = s;
  return rc;
}

static int add(const char *fn, cm_exporter *x, cm_closure f, mlx_vector_array args,
               const kw_list *k) {
  size_t n = 0;
  cm_array *const *a;
  if (capi_vector_arrays(fn, args, &a, &n)) return 1;
  if (cm_exporter_add(x, f, a, (int)n, k->keys, k->vals, k->n)) return capi_fail();
  (void)fn;
  return 0;
}

int mlx_export_function(const char *file, const mlx_closure fun, const mlx_vector_array args,
                        bool shapeless) {
  if (capi_check("mlx_export_function", fun.ctx, CAPI_H_CLOSURE)) return 1;
  if (!file || !fun.ctx) return capi_errorf("mlx_export_function: empty file or closure");
  cm_exporter *x = cm_exporter_new(file, shapeless, "", 0);
  if (!x) return capi_fail();
  kw_list none = {0};
  int rc = add(__func__, x, (cm_closure){capi_closure_call, fun.ctx}, args, &none);
  cm_exporter_free(x);
  return rc;
}

static int export_kwargs(cm_exporter *x, const mlx_closure_kwargs fun, const mlx_vector_array args,
                         const mlx_map_string_to_array kwargs) {
  kw_list k;
  if (kw_of("mlx_export_function_kwargs", kwargs, &k)) return 1;
  size_t n = 0;
  cm_array *const *a;
  if (capi_vector_arrays("mlx_export_function_kwargs", args, &a, &n)) {
    kw_free(&k);
    return 1;
  }
  (void)a;
  kw_call c = {fun, (int)n, k.n, NULL};
  int rc = sorted_keys(&k, &c.sorted) ? capi_fail() : 0;
  if (!rc) rc = add(__func__, x, (cm_closure){kw_call_fn, &c}, args, &k);
  free(c.sorted);
  kw_free(&k);
  return rc;
}

int mlx_export_function_kwargs(const char *file, const mlx_closure_kwargs fun,
                               const mlx_vector_array args, const mlx_map_string_to_array kwargs,
                               bool shapeless) {
  if (capi_check("mlx_export_function_kwargs", fun.ctx, CAPI_H_CLOSURE_KWARGS)) return 1;
  if (!file || !fun.ctx) return capi_errorf("mlx_export_function_kwargs: empty file or closure");
  cm_exporter *x = cm_exporter_new(file, shapeless, "", 0);
  if (!x) return capi_fail();
  int rc = export_kwargs(x, fun, args, kwargs);
  cm_exporter_free(x);
  return rc;
}

typedef struct exporter_h {
  cm_exporter *x;
  mlx_closure fun;
} exporter_h;

mlx_function_exporter mlx_function_exporter_new(const char *file, const mlx_closure fun,
                                                bool shapeless) {
  if (capi_check("mlx_function_exporter_new", fun.ctx, CAPI_H_CLOSURE))
    return (mlx_function_exporter){0};
  exporter_h *h = calloc(1, sizeof *h);
  if (!h || !file || !fun.ctx) {
    free(h);
    capi_errorf("mlx_function_exporter_new: empty file or closure, or out of memory");
    return (mlx_function_exporter){0};
  }
  if (!(h->x = cm_exporter_new(file, shapeless, "", 0))) {
    free(h);
    capi_fail();
    return (mlx_function_exporter){0};
  }
  h->fun = mlx_closure_new();
  mlx_closure_set(&h->fun, fun);
  void *c = capi_cell_new(CAPI_H_FUNCTION_EXPORTER, h);
  if (!c) {
    cm_exporter_free(h->x);
    mlx_closure_free(h->fun);
    free(h);
  }
  return (mlx_function_exporter){c};
}

int mlx_function_exporter_free(mlx_function_exporter xfunc) {
  exporter_h *h;
  if (capi_cell_free("mlx_function_exporter_free", xfunc.ctx, CAPI_H_FUNCTION_EXPORTER,
                     (void **)&h))
    return 1;
  if (!h) return 0;
  cm_exporter_free(h->x);
  mlx_closure_free(h->fun);
  free(h);
  return 0;
}

int mlx_function_exporter_apply(const mlx_function_exporter xfunc, const mlx_vector_array args) {
  if (capi_check("mlx_function_exporter_apply", xfunc.ctx, CAPI_H_FUNCTION_EXPORTER)) return 1;
  exporter_h *h = capi_obj(xfunc.ctx);
  if (!h) return capi_errorf("mlx_function_exporter_apply: empty exporter");
  kw_list none = {0};
  return add(__func__, h->x, (cm_closure){capi_closure_call, h->fun.ctx}, args, &none);
}

int mlx_function_exporter_apply_kwargs(const mlx_function_exporter xfunc,
                                       const mlx_vector_array args,
                                       const mlx_map_string_to_array kwargs) {
  if (capi_check("mlx_function_exporter_apply_kwargs", xfunc.ctx, CAPI_H_FUNCTION_EXPORTER))
    return 1;
  exporter_h *h = capi_obj(xfunc.ctx);
  if (!h) return capi_errorf("mlx_function_exporter_apply_kwargs: empty exporter");
  kw_list k;
  if (kw_of(__func__, kwargs, &k)) return 1;
  /* a plain closure takes the keyword arrays after the positional ones */
  int rc = add(__func__, h->x, (cm_closure){capi_closure_call, h->fun.ctx}, args, &k);
  kw_free(&k);
  return rc;
}

mlx_imported_function mlx_imported_function_new(const char *file) {
  if (!file) {
    capi_errorf("mlx_imported_function_new: empty file name");
    return (mlx_imported_function){0};
  }
  cm_imported *f = cm_import_function(file);
  if (!f) {
    capi_fail();
    return (mlx_imported_function){0};
  }
  void *c = capi_cell_new(CAPI_H_IMPORTED_FUNCTION, f);
  if (!c) cm_imported_free(f);
  return (mlx_imported_function){c};
}

int mlx_imported_function_free(mlx_imported_function xfunc) {
  void *f;
  if (capi_cell_free("mlx_imported_function_free", xfunc.ctx, CAPI_H_IMPORTED_FUNCTION, &f))
    return 1;
  if (f) cm_imported_free(f);
  return 0;
}

int mlx_imported_function_apply_kwargs(mlx_vector_array *res, const mlx_imported_function xfunc,
                                       const mlx_vector_array args,
                                       const mlx_map_string_to_array kwargs) {
  const char *fn = "mlx_imported_function_apply";
  if (capi_out(fn, res)) return 1;
  if (capi_check(fn, xfunc.ctx, CAPI_H_IMPORTED_FUNCTION)) return 1;
  if (!xfunc.ctx) return capi_errorf("%s: empty imported function", fn);
  size_t n = 0;
  cm_array *const *a;
  if (capi_vector_arrays(fn, args, &a, &n)) return 1;
  kw_list k;
  if (kw_of(fn, kwargs, &k)) return 1;
  cm_array **outs = NULL;
  int nout = 0;
  int rc =
      cm_imported_call(capi_obj(xfunc.ctx), a, (int)n, k.keys, k.vals, k.n, &outs, &nout) ? capi_fail() : 0;
  kw_free(&k);
  if (!rc) rc = capi_vector_set_arrays(res, outs, (size_t)nout);
  cm_array_list_free(outs, nout);
  return rc;
}

int mlx_imported_function_apply(mlx_vector_array *res, const mlx_imported_function xfunc,
                                const mlx_vector_array args) {
  return mlx_imported_function_apply_kwargs(res, xfunc, args, (mlx_map_string_to_array){0});
}
