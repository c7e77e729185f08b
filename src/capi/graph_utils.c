/* mlx/c/graph_utils.h: graph printing (transforms/export.h). */
#include "capi/capi.h"
#include "transforms/export.h"

/* ctx of an mlx_node_namer is a cell (handle.h) holding the core namer. */
#define T_NN CAPI_H_NODE_NAMER

mlx_node_namer mlx_node_namer_new(void) {
  cm_node_namer *n = cm_node_namer_new();
  if (!n) {
    capi_fail();
    return (mlx_node_namer){NULL};
  }
  void *c = capi_cell_new(T_NN, n);
  if (!c) cm_node_namer_free(n);
  return (mlx_node_namer){c};
}

int mlx_node_namer_free(mlx_node_namer namer) {
  void *n;
  if (capi_cell_free("mlx_node_namer_free", namer.ctx, T_NN, &n)) return 1;
  if (n) cm_node_namer_free(n);
  return 0;
}

int mlx_node_namer_set_name(mlx_node_namer namer, const mlx_array arr, const char *name) {
  if (capi_check(__func__, namer.ctx, T_NN)) return 1;
  if (!namer.ctx || capi_need(__func__, arr) || !name)
    return capi_errorf("%s: empty namer, array or name", __func__);
  return cm_node_namer_set(capi_obj(namer.ctx), capi_arr(arr), name) ? capi_fail() : 0;
}

int mlx_node_namer_get_name(const char **name, mlx_node_namer namer, const mlx_array arr) {
  if (capi_out(__func__, name) || capi_check(__func__, namer.ctx, T_NN)) return 1;
  if (!namer.ctx || capi_need(__func__, arr))
    return capi_errorf("%s: empty namer or array", __func__);
  const char *s = cm_node_namer_get(capi_obj(namer.ctx), capi_arr(arr));
  if (!s) return capi_fail();
  *name = s;
  return 0;
}

static int file_sink(void *ctx, const char *text, size_t len) {
  return fwrite(text, 1, len, ctx) == len ? 0 : cm_error(CM_ERR_RUNTIME, "write failed");
}

typedef int (*printer)(cm_text_sink, void *, cm_node_namer *, cm_array *const *, int);

static int print_with(const char *fn, printer p, FILE *os, mlx_node_namer namer,
                      mlx_vector_array outputs) {
  if (!os) return capi_errorf("%s: no stream", fn);
  size_t n = 0;
  cm_array *const *a;
  if (capi_vector_arrays(fn, outputs, &a, &n) || capi_check(fn, namer.ctx, T_NN)) return 1;
  cm_node_namer *own = namer.ctx ? NULL : cm_node_namer_new();
  cm_node_namer *nm = namer.ctx ? capi_obj(namer.ctx) : own;
  int rc = nm && !p(file_sink, os, nm, a, (int)n) ? 0 : capi_fail();
  cm_node_namer_free(own);
  return rc;
}

int mlx_export_to_dot(FILE *os, const mlx_node_namer namer, const mlx_vector_array outputs) {
  return print_with(__func__, cm_export_to_dot, os, namer, outputs);
}

int mlx_print_graph(FILE *os, const mlx_node_namer namer, const mlx_vector_array outputs) {
  return print_with(__func__, cm_print_graph, os, namer, outputs);
}
