/* C API plumbing: devices, streams, strings, vectors, maps, closures,
 * memory counters, the error handler, eval/async_eval, version. */
#include <stdint.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capi_test.h"

/* The default CPU stream (set in main): mlx-c rejects an empty one. */
static mlx_stream S;

static void test_devices(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0), gpu = mlx_device_new_type(MLX_GPU, 0);
  mlx_string s = mlx_string_new();
  CHECK(mlx_device_tostring(&s, cpu) == 0 && strcmp(mlx_string_data(s), "Device(cpu, 0)") == 0);
  CHECK(mlx_device_tostring(&s, gpu) == 0 && strcmp(mlx_string_data(s), "Device(gpu, 0)") == 0);
  bool avail = false;
  CHECK(mlx_device_is_available(&avail, cpu) == 0 && avail);
  CHECK(mlx_device_is_available(&avail, gpu) == 0 && !avail);
  int count = -1;
  CHECK(mlx_device_count(&count, MLX_CPU) == 0 && count == 1);
  CHECK(mlx_device_count(&count, MLX_GPU) == 0 && count == 0);
  mlx_device d = mlx_device_new();
  CHECK(mlx_get_default_device(&d) == 0 && mlx_device_equal(d, cpu));
  CHECK(!mlx_device_equal(cpu, gpu));
  mlx_device_type type = MLX_GPU;
  int index = -1;
  CHECK(mlx_device_get_type(&type, d) == 0 && type == MLX_CPU);
  CHECK(mlx_device_get_index(&index, d) == 0 && index == 0);
  CHECK(mlx_set_default_device(cpu) == 0);
  CHECK_FAILS(mlx_set_default_device(gpu), "[set_default_device] Cannot set gpu device without gpu backend.");
  CHECK_FAILS(mlx_device_get_index(&index, mlx_device_new()), "non-empty");
  mlx_device copy = mlx_device_new();
  CHECK(mlx_device_set(&copy, gpu) == 0 && mlx_device_equal(copy, gpu));

  mlx_device_info info = mlx_device_info_new();
  CHECK(mlx_device_info_get(&info, cpu) == 0);
  bool has = false, is_str = false;
  CHECK(mlx_device_info_has_key(&has, info, "architecture") == 0 && has);
  CHECK(mlx_device_info_has_key(&has, info, "nope") == 0 && !has);
  CHECK(mlx_device_info_is_string(&is_str, info, "device_name") == 0 && is_str);
  const char *arch = NULL;
  CHECK(mlx_device_info_get_string(&arch, info, "architecture") == 0 && arch && arch[0]);
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK(mlx_device_info_get_keys(&keys, info) == 0 && mlx_vector_string_size(keys) == 2);
  size_t sz;
  CHECK_FAILS(mlx_device_info_get_size(&sz, info, "architecture"), "is not a size");
  CHECK(mlx_device_info_get(&info, gpu) == 0);
  CHECK(mlx_device_info_get_keys(&keys, info) == 0 && mlx_vector_string_size(keys) == 0);
  mlx_vector_string_free(keys);
  mlx_device_info_free(info);
  mlx_string_free(s);
  mlx_device_free(copy);
  mlx_device_free(d);
  mlx_device_free(cpu);
  mlx_device_free(gpu);
}

static void test_streams(void) {
  mlx_stream def = mlx_default_cpu_stream_new();
  CHECK(def.ctx != NULL);
  mlx_string s = mlx_string_new();
  CHECK(mlx_stream_tostring(&s, def) == 0 && strcmp(mlx_string_data(s), "Stream(Device(cpu, 0), 0)") == 0);
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream other = mlx_stream_new_device(cpu);
  int index = -1;
  CHECK(other.ctx && mlx_stream_get_index(&index, other) == 0 && index > 0);
  CHECK(!mlx_stream_equal(def, other));
  mlx_stream again = mlx_stream_new();
  CHECK(mlx_get_default_stream(&again, cpu) == 0 && mlx_stream_equal(again, def));
  mlx_device d = mlx_device_new();
  CHECK(mlx_stream_get_device(&d, other) == 0 && mlx_device_equal(d, cpu));

  /* work on a second stream, then synchronize it */
  mlx_array a = mlx_array_new(), b = mlx_array_new();
  CHECK(mlx_arange(&a, 0, 100000, 1, MLX_FLOAT32, other) == 0);
  CHECK(mlx_multiply(&b, a, a, other) == 0);
  mlx_vector_array v = mlx_vector_array_new_value(b);
  CHECK(mlx_async_eval(v) == 0);
  CHECK(mlx_synchronize(other) == 0);
  CHECK(mlx_array_data_float32(b)[300] == 90000.0f);
  CHECK(mlx_set_default_stream(other) == 0);
  CHECK(mlx_get_default_stream(&again, cpu) == 0 && mlx_stream_equal(again, other));
  CHECK(mlx_set_default_stream(def) == 0);
  CHECK(mlx_stream_set(&again, other) == 0 && mlx_stream_equal(again, other));

  /* no GPU: the gpu default stream is an error and an empty handle */
  int errs = t_errors;
  mlx_stream gpu = mlx_default_gpu_stream_new();
  CHECK(gpu.ctx == NULL && t_errors == errs + 1);
  CHECK(strstr(t_last_error, "[default_stream] Cannot get gpu stream without gpu backend.") != NULL);
  mlx_device gd = mlx_device_new_type(MLX_GPU, 0);
  CHECK_FAILS(mlx_get_default_stream(&again, gd), "Cannot get gpu stream");
  CHECK_FAILS(mlx_stream_tostring(&s, mlx_stream_new()), "expected a non-empty mlx_stream");

  mlx_device_free(gd);
  mlx_vector_array_free(v);
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_device_free(d);
  mlx_stream_free(again);
  mlx_stream_free(other);
  mlx_device_free(cpu);
  mlx_stream_free(def);
  mlx_string_free(s);
}

static void test_strings_vectors(void) {
  mlx_string s = mlx_string_new_data("hello");
  mlx_string t = mlx_string_new();
  CHECK(mlx_string_set(&t, s) == 0 && strcmp(mlx_string_data(t), "hello") == 0);
  CHECK(mlx_string_data(t) != mlx_string_data(s)); /* a copy */
  mlx_string_free(s);
  mlx_string_free(t);
  CHECK(mlx_string_data(mlx_string_new()) == NULL);
  mlx_string ver = mlx_string_new();
  CHECK(mlx_version(&ver) == 0 && strcmp(mlx_string_data(ver), "0.32.4") == 0);
  mlx_string_free(ver);

  mlx_array a = mlx_array_new_int(1), b = mlx_array_new_int(2);
  mlx_array items[2] = {a, b};
  mlx_vector_array v = mlx_vector_array_new_data(items, 2);
  CHECK(mlx_vector_array_size(v) == 2);
  mlx_vector_array_append_value(v, a);
  CHECK(mlx_vector_array_size(v) == 3);
  mlx_array g = mlx_array_new();
  int32_t x = 0;
  CHECK(mlx_vector_array_get(&g, v, 1) == 0 && mlx_array_item_int32(&x, g) == 0 && x == 2);
  CHECK_FAILS(mlx_vector_array_get(&g, v, 3), "out of range");
  mlx_vector_array w = mlx_vector_array_new();
  CHECK(mlx_vector_array_set(&w, v) == 0 && mlx_vector_array_size(w) == 3);
  CHECK(mlx_vector_array_set_value(&w, b) == 0 && mlx_vector_array_size(w) == 1);
  CHECK(mlx_vector_array_set_data(&w, items, 2) == 0 && mlx_vector_array_size(w) == 2);
  CHECK(mlx_vector_array_append_data(w, items, 2) == 0 && mlx_vector_array_size(w) == 4);
  CHECK_FAILS(mlx_vector_array_append_value(w, mlx_array_new()), "non-empty");
  mlx_vector_array one = mlx_vector_array_new_value(a);
  CHECK(mlx_vector_array_size(one) == 1);

  mlx_vector_vector_array vv = mlx_vector_vector_array_new();
  CHECK(mlx_vector_vector_array_append_value(vv, v) == 0);
  CHECK(mlx_vector_vector_array_append_value(vv, one) == 0);
  mlx_vector_array_free(v); /* vv holds its own copy */
  CHECK(mlx_vector_vector_array_size(vv) == 2);
  mlx_vector_array inner = mlx_vector_array_new();
  CHECK(mlx_vector_vector_array_get(&inner, vv, 0) == 0 && mlx_vector_array_size(inner) == 3);
  mlx_vector_vector_array vv2 = mlx_vector_vector_array_new();
  CHECK(mlx_vector_vector_array_set(&vv2, vv) == 0 && mlx_vector_vector_array_size(vv2) == 2);
  mlx_vector_array pair[2] = {inner, one};
  mlx_vector_vector_array vv3 = mlx_vector_vector_array_new_data(pair, 2);
  CHECK(mlx_vector_vector_array_size(vv3) == 2);
  CHECK(mlx_vector_vector_array_set_value(&vv3, one) == 0 && mlx_vector_vector_array_size(vv3) == 1);
  CHECK_FAILS(mlx_vector_vector_array_get(&inner, vv3, 5), "out of range");
  mlx_vector_vector_array_free(vv3);
  mlx_vector_vector_array_free(vv2);
  mlx_vector_vector_array_free(vv);
  mlx_vector_array_free(inner);
  mlx_vector_array_free(one);
  mlx_vector_array_free(w);

  int iv[3] = {4, 5, 6};
  mlx_vector_int vi = mlx_vector_int_new_data(iv, 3);
  mlx_vector_int_append_value(vi, 7);
  int out = 0;
  CHECK(mlx_vector_int_size(vi) == 4 && mlx_vector_int_get(&out, vi, 3) == 0 && out == 7);
  mlx_vector_int vi2 = mlx_vector_int_new();
  CHECK(mlx_vector_int_set(&vi2, vi) == 0 && mlx_vector_int_size(vi2) == 4);
  CHECK(mlx_vector_int_set_value(&vi2, 9) == 0 && mlx_vector_int_get(&out, vi2, 0) == 0 && out == 9);
  CHECK_FAILS(mlx_vector_int_get(&out, vi2, 1), "out of range");
  mlx_vector_int_free(vi);
  mlx_vector_int_free(vi2);

  const char *words[2] = {"alpha", "beta"};
  mlx_vector_string vs = mlx_vector_string_new_data(words, 2);
  mlx_vector_string_append_value(vs, "gamma");
  char *word = NULL;
  CHECK(mlx_vector_string_size(vs) == 3 && mlx_vector_string_get(&word, vs, 2) == 0 && strcmp(word, "gamma") == 0);
  mlx_vector_string vs2 = mlx_vector_string_new();
  CHECK(mlx_vector_string_set(&vs2, vs) == 0 && mlx_vector_string_get(&word, vs2, 0) == 0 &&
        strcmp(word, "alpha") == 0);
  mlx_vector_string_free(vs);
  mlx_vector_string_free(vs2);
  mlx_array_free(g);
  mlx_array_free(a);
  mlx_array_free(b);
}

static void test_maps(void) {
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  mlx_array a = mlx_array_new_int(1), b = mlx_array_new_float(2);
  CHECK(mlx_map_string_to_array_insert(m, "a", a) == 0);
  CHECK(mlx_map_string_to_array_insert(m, "b", b) == 0);
  CHECK(mlx_map_string_to_array_insert(m, "a", b) == 0); /* replaces */
  mlx_array got = mlx_array_new();
  CHECK(mlx_map_string_to_array_get(&got, m, "a") == 0 && mlx_array_dtype(got) == MLX_FLOAT32);
  int errs = t_errors;
  CHECK(mlx_map_string_to_array_get(&got, m, "zzz") == 2 && t_errors == errs); /* no handler call */
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
  const char *key;
  int n = 0;
  while (mlx_map_string_to_array_iterator_next(&key, &got, it) == 0) n++;
  CHECK(n == 2);
  mlx_map_string_to_array_iterator_free(it);
  mlx_map_string_to_array m2 = mlx_map_string_to_array_new();
  CHECK(mlx_map_string_to_array_set(&m2, m) == 0);
  mlx_map_string_to_array_free(m);
  CHECK(mlx_map_string_to_array_get(&got, m2, "b") == 0);
  mlx_map_string_to_array_free(m2);
  mlx_array_free(got);
  mlx_array_free(a);
  mlx_array_free(b);

  mlx_map_string_to_string ms = mlx_map_string_to_string_new();
  CHECK(mlx_map_string_to_string_insert(ms, "format", "mlx") == 0);
  const char *val = NULL;
  CHECK(mlx_map_string_to_string_get(&val, ms, "format") == 0 && strcmp(val, "mlx") == 0);
  CHECK(mlx_map_string_to_string_get(&val, ms, "other") == 2);
  mlx_map_string_to_string_iterator its = mlx_map_string_to_string_iterator_new(ms);
  const char *k, *v;
  CHECK(mlx_map_string_to_string_iterator_next(&k, &v, its) == 0 && strcmp(k, "format") == 0);
  CHECK(mlx_map_string_to_string_iterator_next(&k, &v, its) == 2);
  mlx_map_string_to_string_iterator_free(its);
  mlx_map_string_to_string ms2 = mlx_map_string_to_string_new();
  CHECK(mlx_map_string_to_string_set(&ms2, ms) == 0);
  mlx_map_string_to_string_free(ms);
  CHECK(mlx_map_string_to_string_get(&val, ms2, "format") == 0 && strcmp(val, "mlx") == 0);
  mlx_map_string_to_string_free(ms2);
}

/* closures */
static int square_all(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  mlx_stream s = mlx_default_cpu_stream_new();
  int rc = mlx_multiply(&y, x, x, s);
  mlx_stream_free(s);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return rc;
}

static int payload_dtor_calls;
static void payload_dtor(void *p) { payload_dtor_calls += *(int *)p; }

static int add_payload(mlx_vector_array *res, const mlx_vector_array in, void *payload) {
  mlx_array x = mlx_array_new(), k = mlx_array_new_int(*(int *)payload), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  int rc = mlx_add(&y, x, k, S);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(k);
  mlx_array_free(y);
  return rc;
}

static int negate(mlx_array *res, const mlx_array x) { return mlx_negative(res, x, S); }
static int identity(mlx_vector_array *res, const mlx_vector_array in) { return mlx_vector_array_set(res, in); }
static int failing(mlx_vector_array *res, const mlx_vector_array in) {
  (void)res;
  (void)in;
  return 3;
}

static void test_closures(void) {
  mlx_array three = mlx_array_new_int(3);
  mlx_vector_array in = mlx_vector_array_new_value(three), out = mlx_vector_array_new();
  mlx_array r = mlx_array_new();
  int32_t v = 0;

  mlx_closure c = mlx_closure_new_func(square_all);
  CHECK(mlx_closure_apply(&out, c, in) == 0 && mlx_vector_array_get(&r, out, 0) == 0);
  CHECK(mlx_array_item_int32(&v, r) == 0 && v == 9);

  static int ten = 10;
  payload_dtor_calls = 0;
  mlx_closure p = mlx_closure_new_func_payload(add_payload, &ten, payload_dtor);
  mlx_closure shared = mlx_closure_new();
  CHECK(mlx_closure_set(&shared, p) == 0);
  CHECK(mlx_closure_free(p) == 0 && payload_dtor_calls == 0); /* still shared */
  CHECK(mlx_closure_apply(&out, shared, in) == 0 && mlx_vector_array_get(&r, out, 0) == 0);
  CHECK(mlx_array_item_int32(&v, r) == 0 && v == 13);
  mlx_closure_free(shared);
  CHECK(payload_dtor_calls == 10);

  mlx_closure u = mlx_closure_new_unary(negate);
  CHECK(mlx_closure_apply(&out, u, in) == 0 && mlx_vector_array_get(&r, out, 0) == 0);
  CHECK(mlx_array_item_int32(&v, r) == 0 && v == -3);
  mlx_closure f = mlx_closure_new_func(failing);
  CHECK_FAILS(mlx_closure_apply(&out, f, in), "non-zero");
  CHECK_FAILS(mlx_closure_apply(&out, mlx_closure_new(), in), "non-empty");

  /* vjp / jvp of the identity hand the seed straight back */
  mlx_vector_array o2 = mlx_vector_array_new();
  mlx_closure ident = mlx_closure_new_func(identity);
  float seed_v = 0.5f, x_v = 3.0f;
  int one[1] = {1};
  mlx_array xs = mlx_array_new_data(&x_v, one, 1, MLX_FLOAT32);
  mlx_array seed = mlx_array_new_data(&seed_v, one, 1, MLX_FLOAT32);
  mlx_vector_array primals = mlx_vector_array_new_value(xs), seeds = mlx_vector_array_new_value(seed);
  float fv = 0;
  CHECK(mlx_vjp(&out, &o2, ident, primals, seeds) == 0);
  CHECK(mlx_vector_array_size(out) == 1 && mlx_vector_array_size(o2) == 1);
  CHECK(mlx_vector_array_get(&r, o2, 0) == 0 && mlx_array_item_float32(&fv, r) == 0 && fv == 0.5f);
  CHECK(mlx_vector_array_get(&r, out, 0) == 0 && mlx_array_item_float32(&fv, r) == 0 && fv == 3.0f);
  CHECK(mlx_jvp(&out, &o2, ident, primals, seeds) == 0);
  CHECK(mlx_vector_array_get(&r, o2, 0) == 0 && mlx_array_item_float32(&fv, r) == 0 && fv == 0.5f);
  /* a closure that fails is reported once, through the core's error */
  mlx_closure bad = mlx_closure_new_func(failing);
  CHECK_FAILS(mlx_vjp(&out, &o2, bad, primals, seeds), "non-zero");
  CHECK_FAILS(mlx_vjp(&out, &o2, mlx_closure_new(), primals, seeds), "non-empty");
  mlx_closure_free(bad);
  mlx_closure_free(ident);
  mlx_vector_array_free(primals);
  mlx_vector_array_free(seeds);
  mlx_array_free(xs);
  mlx_array_free(seed);
  /* value_and_grad and compile are wired (tested in test_capi_transforms.c
   * and test_capi_compile.c) */
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  int argnums[1] = {0};
  CHECK(mlx_value_and_grad(&vg, c, argnums, 1) == 0);
  CHECK(mlx_compile(&u, c, false) == 0);
  mlx_closure_value_and_grad_free(vg);
  mlx_vector_array_free(o2);
  mlx_closure_free(f);
  mlx_closure_free(u);
  mlx_closure_free(c);
  mlx_array_free(r);
  mlx_array_free(three);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
}

static void test_memory(void) {
  CHECK(mlx_clear_cache() == 0);
  size_t active0 = 0, active1 = 0, peak = 0, cache = 0, limit = 0, old = 0;
  CHECK(mlx_get_active_memory(&active0) == 0);
  mlx_array a = mlx_array_new();
  int shape[1] = {1 << 20};
  CHECK(mlx_zeros(&a, shape, 1, MLX_FLOAT32, S) == 0 && mlx_array_eval(a) == 0);
  CHECK(mlx_get_active_memory(&active1) == 0 && active1 >= active0 + (4u << 20));
  CHECK(mlx_get_peak_memory(&peak) == 0 && peak >= active1);
  mlx_array_free(a);
  CHECK(mlx_get_active_memory(&active1) == 0 && active1 == active0);
  CHECK(mlx_get_cache_memory(&cache) == 0 && cache >= (4u << 20)); /* the block went to the cache */
  CHECK(mlx_clear_cache() == 0 && mlx_get_cache_memory(&cache) == 0 && cache == 0);
  CHECK(mlx_reset_peak_memory() == 0 && mlx_get_peak_memory(&peak) == 0 && peak == 0); /* MLX */
  CHECK(mlx_get_memory_limit(&limit) == 0 && limit > 0);
  CHECK(mlx_set_memory_limit(&old, limit / 2) == 0 && old == limit);
  CHECK(mlx_set_memory_limit(&old, limit) == 0 && old == limit / 2);
  CHECK(mlx_set_cache_limit(&old, 0) == 0);
  CHECK(mlx_set_cache_limit(&old, old) == 0 && old == 0);
  CHECK(mlx_set_wired_limit(&old, 0) == 0);
}

/* the handler's data is destroyed when the handler is replaced */
static int data_dtor_calls;
static void data_dtor(void *p) {
  (void)p;
  data_dtor_calls++;
}
static void other_handler(const char *msg, void *data) {
  (void)msg;
  (*(int *)data)++;
}

static void test_error_handler(void) {
  int hits = 0;
  mlx_set_error_handler(other_handler, &hits, data_dtor);
  mlx_array r = mlx_array_new();
  CHECK(mlx_arange(&r, 0, 1, 0, MLX_FLOAT32, S) != 0);
  CHECK(hits == 1 && data_dtor_calls == 0);
  t_init();
  CHECK(data_dtor_calls == 1);
  mlx_error("custom %d", 5);
  CHECK(strncmp(t_last_error, "custom 5 at ", 12) == 0);
  mlx_array_free(r);
}

/* mlx-c's default handler prints "MLX error: <msg>" and exits with -1. */
static void test_default_handler(void) {
  int fds[2];
  CHECK(pipe(fds) == 0);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(fds[1], 1);
    mlx_set_error_handler(NULL, NULL, NULL);
    mlx_array r = mlx_array_new();
    mlx_arange(&r, 0, 1, 0, MLX_FLOAT32, S);
    _exit(0); /* not reached */
  }
  close(fds[1]);
  char buf[256] = {0};
  ssize_t got = read(fds[0], buf, sizeof buf - 1);
  close(fds[0]);
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid);
  CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 255);
  CHECK(got > 0 && strcmp(buf, "MLX error: [arange] step must be nonzero.\n") == 0);
}

static void test_eval(void) {
  mlx_array a = mlx_array_new(), b = mlx_array_new();
  CHECK(mlx_arange(&a, 0, 10, 1, MLX_INT32, S) == 0);
  CHECK(mlx_add(&b, a, a, S) == 0);
  bool avail = true;
  CHECK(_mlx_array_is_available(&avail, b) == 0 && !avail); /* lazy */
  mlx_vector_array v = mlx_vector_array_new_value(b);
  CHECK(mlx_eval(v) == 0);
  CHECK(_mlx_array_is_available(&avail, b) == 0 && avail);
  CHECK(mlx_array_data_int32(b)[9] == 18);
  mlx_vector_array_free(v);
  mlx_array_free(a);
  mlx_array_free(b);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_devices();
  test_streams();
  test_strings_vectors();
  test_maps();
  test_closures();
  test_memory();
  test_error_handler();
  test_default_handler();
  test_eval();
  bool b = true;
  CHECK(mlx_metal_is_available(&b) == 0 && !b);
  b = true;
  CHECK(mlx_cuda_is_available(&b) == 0 && !b);
  CHECK(mlx_distributed_is_available("ring") == mlx_distributed_is_available(NULL));
  CHECK(!mlx_distributed_is_available("nccl") && !mlx_distributed_is_available("foo"));
  return t_finish();
}
