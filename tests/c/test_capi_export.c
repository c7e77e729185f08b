/* mlx/c/export.h and graph_utils.h: export, import, kwargs, exporters,
 * the node namer, export_to_dot and print_graph, and bad files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capi_test.h"
#include "mlx/c/mlx.h"

static int twice_plus(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array x = mlx_array_new(), y = mlx_array_new(), two = mlx_array_new_float(2.0f);
  mlx_vector_array_get(&x, in, 0);
  mlx_vector_array_get(&y, in, 1);
  mlx_array r = mlx_array_new();
  mlx_multiply(&r, x, two, s);
  mlx_add(&r, r, y, s);
  mlx_vector_array_set_value(res, r);
  mlx_array_free(r), mlx_array_free(x), mlx_array_free(y), mlx_array_free(two);
  mlx_stream_free(s);
  return 0;
}

static int sub_kw(mlx_vector_array *res, const mlx_vector_array args,
                  const mlx_map_string_to_array kw) {
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array a = mlx_array_new(), b = mlx_array_new(), r = mlx_array_new();
  mlx_map_string_to_array_get(&a, kw, "a");
  mlx_map_string_to_array_get(&b, kw, "b");
  mlx_subtract(&r, a, b, s);
  mlx_vector_array_set_value(res, r);
  mlx_array_free(a), mlx_array_free(b), mlx_array_free(r);
  mlx_stream_free(s);
  (void)args;
  return 0;
}

static char path[256], bad[256];

static void test_export_import(void) {
  float xv[3] = {1, 2, 3}, yv[3] = {10, 20, 30};
  mlx_array x = vec_f32(xv, 3), y = vec_f32(yv, 3);
  mlx_vector_array args = mlx_vector_array_new();
  mlx_vector_array_append_value(args, x);
  mlx_vector_array_append_value(args, y);
  mlx_closure f = mlx_closure_new_func(twice_plus);
  CHECK(mlx_export_function(path, f, args, false) == 0);
  mlx_imported_function imp = mlx_imported_function_new(path);
  CHECK(imp.ctx != NULL);
  mlx_vector_array res = mlx_vector_array_new();
  CHECK(mlx_imported_function_apply(&res, imp, args) == 0);
  CHECK(mlx_vector_array_size(res) == 1);
  mlx_array out = mlx_array_new();
  mlx_vector_array_get(&out, res, 0);
  CHECK_PRINTS(out, "array([12, 24, 36], dtype=float32)");
  /* another signature: no match */
  mlx_vector_array one = mlx_vector_array_new_value(x);
  CHECK_FAILS(mlx_imported_function_apply(&res, imp, one), "No imported function found");
  mlx_imported_function_free(imp);

  /* an exporter with two traces */
  mlx_function_exporter ex = mlx_function_exporter_new(path, f, false);
  CHECK(ex.ctx != NULL);
  CHECK(mlx_function_exporter_apply(ex, args) == 0);
  CHECK_FAILS(mlx_function_exporter_apply(ex, args), "twice with the same signature");
  float zv[1] = {5};
  mlx_array z = vec_f32(zv, 1);
  mlx_vector_array args2 = mlx_vector_array_new();
  mlx_vector_array_append_value(args2, z);
  mlx_vector_array_append_value(args2, z);
  CHECK(mlx_function_exporter_apply(ex, args2) == 0);
  mlx_function_exporter_free(ex);
  imp = mlx_imported_function_new(path);
  CHECK(mlx_imported_function_apply(&res, imp, args2) == 0);
  mlx_vector_array_get(&out, res, 0);
  CHECK_PRINTS(out, "array([15], dtype=float32)");
  mlx_imported_function_free(imp);

  /* kwargs */
  mlx_map_string_to_array kw = mlx_map_string_to_array_new();
  mlx_map_string_to_array_insert(kw, "b", x);
  mlx_map_string_to_array_insert(kw, "a", y);
  mlx_closure_kwargs fk = mlx_closure_kwargs_new_func(sub_kw);
  mlx_vector_array empty = mlx_vector_array_new();
  CHECK(mlx_export_function_kwargs(path, fk, empty, kw, false) == 0);
  imp = mlx_imported_function_new(path);
  CHECK(mlx_imported_function_apply_kwargs(&res, imp, empty, kw) == 0);
  mlx_vector_array_get(&out, res, 0);
  CHECK_PRINTS(out, "array([9, 18, 27], dtype=float32)");
  mlx_imported_function_free(imp);

  /* truncated files fail through the handler, never crash */
  FILE *fp = fopen(path, "rb");
  unsigned char buf[4096];
  size_t n = fp ? fread(buf, 1, sizeof buf, fp) : 0;
  if (fp) fclose(fp);
  CHECK(n > 40);
  for (size_t k = 0; k < n; k += 3) {
    FILE *o = fopen(bad, "wb");
    fwrite(buf, 1, k, o);
    fclose(o);
    int errs = t_errors;
    mlx_imported_function b = mlx_imported_function_new(bad);
    CHECK(b.ctx == NULL && t_errors == errs + 1);
    mlx_imported_function_free(b);
  }
  CHECK(strstr(t_last_error, "import_function") != NULL);
  mlx_imported_function bm = mlx_imported_function_new("/nonexistent/x.mlxfn");
  CHECK(bm.ctx == NULL && strstr(t_last_error, "Failed to open"));

  mlx_closure_kwargs_free(fk);
  mlx_map_string_to_array_free(kw);
  mlx_vector_array_free(empty), mlx_vector_array_free(one), mlx_vector_array_free(args2);
  mlx_vector_array_free(res), mlx_vector_array_free(args);
  mlx_closure_free(f);
  mlx_array_free(out), mlx_array_free(x), mlx_array_free(y), mlx_array_free(z);
}

static void test_dot(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  float v[2] = {1, 2};
  mlx_array a = vec_f32(v, 2), b = mlx_array_new_float(3.0f), r = mlx_array_new();
  mlx_add(&r, a, b, s);
  mlx_node_namer namer = mlx_node_namer_new();
  CHECK(mlx_node_namer_set_name(namer, a, "input") == 0);
  const char *name = NULL;
  CHECK(mlx_node_namer_get_name(&name, namer, a) == 0 && !strcmp(name, "input"));
  CHECK(mlx_node_namer_get_name(&name, namer, b) == 0 && !strcmp(name, "B"));
  mlx_vector_array outs = mlx_vector_array_new_value(r);
  char text[4096] = {0};
  FILE *m = fmemopen(text, sizeof text - 1, "w");
  CHECK(mlx_export_to_dot(m, namer, outs) == 0);
  fclose(m);
  CHECK(strncmp(text, "digraph {", 9) == 0);
  CHECK(strstr(text, "{ rank=source; \"input\"; }") != NULL);
  CHECK(strstr(text, "[label =\"Add\", shape=rectangle]") != NULL);
  memset(text, 0, sizeof text);
  m = fmemopen(text, sizeof text - 1, "w");
  CHECK(mlx_print_graph(m, namer, outs) == 0);
  fclose(m);
  CHECK(strstr(text, "Inputs: input [(2), float32], B [(), float32]") != NULL);
  CHECK(strstr(text, "\nAdd input [(2), float32], ") != NULL);
  mlx_node_namer_free(namer);
  mlx_vector_array_free(outs);
  mlx_array_free(a), mlx_array_free(b), mlx_array_free(r);
  mlx_stream_free(s);
}

int main(void) {
  t_init();
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(path, sizeof path, "%s/capi_export_%d.mlxfn", tmp, (int)getpid());
  snprintf(bad, sizeof bad, "%s/capi_export_bad_%d.mlxfn", tmp, (int)getpid());
  test_export_import();
  test_dot();
  remove(path);
  remove(bad);
  return t_finish();
}
