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

/* A Metal kernel called from an exported closure: recorded as MLX's
 * CustomKernel (its generated name and source in the file), imported back
 * as a node whose evaluation needs a GPU; outside export, MLX's CPU build
 * error. */
static const char *k_source = "    uint elem = thread_position_in_grid.x;\n"
                              "    out[elem] = a[elem] + b_shape[0];\n";
static mlx_fast_metal_kernel k_kernel;
static mlx_fast_metal_kernel_config k_config;
static bool k_gpu_only;

static int call_kernel(mlx_vector_array *res, const mlx_vector_array in) {
  return mlx_fast_metal_kernel_apply(res, k_kernel, in, k_config, mlx_stream_new());
}

static int call_kernel_cpu(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_stream cpu = mlx_default_cpu_stream_new();
  int rc = mlx_fast_metal_kernel_apply(res, k_kernel, in, k_config, cpu);
  k_gpu_only = rc && strstr(t_last_error, "[metal_kernel] Only supports the GPU.");
  mlx_stream_free(cpu);
  return rc;
}

static void test_metal_kernel(void) {
  mlx_vector_string inames = mlx_vector_string_new(), onames = mlx_vector_string_new();
  mlx_vector_string_append_value(inames, "a");
  mlx_vector_string_append_value(inames, "b");
  mlx_vector_string_append_value(onames, "out");
  k_kernel = mlx_fast_metal_kernel_new("k", inames, onames, k_source, "", true, false);
  k_config = mlx_fast_metal_kernel_config_new();
  CHECK(k_kernel.ctx != NULL && k_config.ctx != NULL);
  int shape[2] = {2, 2};
  CHECK(mlx_fast_metal_kernel_config_add_output_arg(k_config, shape, 2, MLX_FLOAT32) == 0);
  CHECK(mlx_fast_metal_kernel_config_set_grid(k_config, 4, 1, 1) == 0);
  CHECK(mlx_fast_metal_kernel_config_set_thread_group(k_config, 4, 1, 1) == 0);
  CHECK(mlx_fast_metal_kernel_config_set_init_value(k_config, 0.5f) == 0);
  CHECK(mlx_fast_metal_kernel_config_add_template_arg_int(k_config, "N", 3) == 0);
  CHECK(mlx_fast_metal_kernel_config_add_template_arg_bool(k_config, "B", true) == 0);
  CHECK(mlx_fast_metal_kernel_config_add_template_arg_dtype(k_config, "T", MLX_FLOAT16) == 0);
  CHECK_FAILS(mlx_fast_metal_kernel_config_add_output_arg(k_config, shape, 2, (mlx_dtype)99), "");

  float av[4] = {0, 0, 0, 0}, bv[10] = {0};
  mlx_array a = vec_f32(av, 4), b = vec_f32(bv, 10), a2 = mlx_array_new();
  mlx_stream cpu = mlx_default_cpu_stream_new();
  CHECK(mlx_reshape(&a2, a, shape, 2, cpu) == 0);
  mlx_vector_array args = mlx_vector_array_new(), res = mlx_vector_array_new();
  mlx_vector_array_append_value(args, a2);
  mlx_vector_array_append_value(args, b);
  /* outside export: MLX's CPU build */
  CHECK_FAILS(call_kernel(&res, args), "[metal_kernel] No Metal back-end.");
  mlx_closure f = mlx_closure_new_func(call_kernel);
  CHECK(mlx_export_function(path, f, args, false) == 0);
  FILE *fp = fopen(path, "rb");
  static char data[1 << 16];
  size_t n = fp ? fread(data, 1, sizeof data, fp) : 0;
  if (fp) fclose(fp);
  CHECK(n > 0 && n < sizeof data);
  CHECK(memmem(data, n, "CustomKernel", 12) != NULL);
  const char *name = "custom_kernel_k__3_1_float16_t_floatc_float_float"; /* as from Python */
  CHECK(memmem(data, n, name, strlen(name)) != NULL);
  CHECK(memmem(data, n, "out[elem] = a[elem] + b_shape[0];", 33) != NULL);
  CHECK(memmem(data, n, "template <int N, bool B, typename T>", 36) != NULL);
  mlx_imported_function imp = mlx_imported_function_new(path);
  CHECK(imp.ctx != NULL);
  CHECK(mlx_imported_function_apply(&res, imp, args) == 0);
  mlx_array out = mlx_array_new();
  CHECK(mlx_vector_array_size(res) == 1 && mlx_vector_array_get(&out, res, 0) == 0);
  CHECK(mlx_array_ndim(out) == 2 && mlx_array_dtype(out) == MLX_FLOAT32);
  CHECK_FAILS(mlx_array_eval(out), "Custom kernels only run on GPU.");
  /* outside export any stream is MLX's CPU-build error; under export a
   * CPU stream is MLX's "Only supports the GPU." */
  mlx_vector_array none = mlx_vector_array_new();
  CHECK_FAILS(mlx_fast_metal_kernel_apply(&none, k_kernel, args, k_config, cpu),
              "No Metal back-end.");
  mlx_closure g = mlx_closure_new_func(call_kernel_cpu);
  CHECK(mlx_export_function(bad, g, args, false) != 0 && k_gpu_only);
  mlx_imported_function_free(imp);
  mlx_closure_free(f), mlx_closure_free(g);
  mlx_array_free(out), mlx_array_free(a), mlx_array_free(a2), mlx_array_free(b);
  mlx_vector_array_free(args), mlx_vector_array_free(res), mlx_vector_array_free(none);
  mlx_fast_metal_kernel_config_free(k_config);
  mlx_fast_metal_kernel_free(k_kernel);
  mlx_vector_string_free(inames), mlx_vector_string_free(onames);
  mlx_stream_free(cpu);
}

int main(void) {
  t_init();
  const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(path, sizeof path, "%s/capi_export_%d.mlxfn", tmp, (int)getpid());
  snprintf(bad, sizeof bad, "%s/capi_export_bad_%d.mlxfn", tmp, (int)getpid());
  test_export_import();
  test_dot();
  test_metal_kernel();
  remove(path);
  remove(bad);
  return t_finish();
}
