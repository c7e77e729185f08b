/* Handle checking (src/capi/handle.h): a freed, double-freed, wrongly
 * typed or garbage handle is reported through the error handler and the
 * call returns non-zero, where it used to hang (eval) or crash.  An alarm
 * turns a hang into a failure.  The test runs itself a second time with
 * CMLX_CHECK_HANDLES=1 for what only the registry catches. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "capi_test.h"

static mlx_stream S;

#define FREED "was freed"
#define INVALID "is invalid"
#define DOUBLE "Double free"

static mlx_array scalar(float v) { return mlx_array_new_float32(v); }

static void test_use_after_free(void) {
  mlx_array a = scalar(1), b = scalar(2), r = mlx_array_new();
  CHECK(mlx_array_free(a) == 0);
  CHECK_FAILS(mlx_array_eval(a), FREED);
  CHECK_FAILS(mlx_array_eval(a), "mlx_array_eval");
  CHECK_FAILS(mlx_add(&r, a, b, S), FREED);
  CHECK(r.ctx == NULL);
  CHECK_FAILS(mlx_add(&r, b, a, S), "[add]");
  CHECK_FAILS(mlx_exp(&r, a, S), FREED);
  float f = 0;
  CHECK_FAILS(mlx_array_item_float32(&f, a), FREED);
  int before = t_errors;
  CHECK(mlx_array_size(a) == 0 && mlx_array_ndim(a) == 0 && mlx_array_data_float32(a) == NULL);
  CHECK(t_errors == before + 3);
  mlx_vector_array v = mlx_vector_array_new();
  CHECK_FAILS(mlx_vector_array_append_value(v, a), FREED);
  CHECK(mlx_vector_array_size(v) == 0);
  mlx_vector_array_free(v);
  CHECK_FAILS(mlx_array_set(&r, a), FREED);
  /* a freed handle as the result: the op is reported, nothing leaks */
  mlx_array dead = scalar(3);
  mlx_array_free(dead);
  CHECK_FAILS(mlx_add(&dead, b, b, S), FREED);
  mlx_array_free(b);
  mlx_array_free(r);
}

static void test_double_free(void) {
  mlx_array a = scalar(1);
  CHECK(mlx_array_free(a) == 0);
  CHECK_FAILS(mlx_array_free(a), DOUBLE);
  /* a copy of a handle is the same handle: freeing both is a double free
   * (the node is released once) */
  mlx_array b = scalar(2), c = b, keep = mlx_array_new();
  mlx_array_set(&keep, b);
  CHECK(mlx_array_free(b) == 0);
  CHECK_FAILS(mlx_array_free(c), DOUBLE);
  float f = 0;
  CHECK(mlx_array_item_float32(&f, keep) == 0 && f == 2);
  mlx_array_free(keep);

  mlx_stream s = mlx_default_cpu_stream_new();
  CHECK(mlx_stream_free(s) == 0);
  CHECK_FAILS(mlx_stream_free(s), DOUBLE);
  mlx_device d = mlx_device_new_type(MLX_CPU, 0);
  CHECK(mlx_device_free(d) == 0);
  CHECK_FAILS(mlx_device_free(d), DOUBLE);
  mlx_string str = mlx_string_new_data("x");
  CHECK(mlx_string_free(str) == 0);
  CHECK_FAILS(mlx_string_free(str), DOUBLE);
  CHECK(mlx_string_data(str) == NULL);
}

/* Freeing an empty handle is fine (mlx-c allows it); empty results are
 * filled as before. */
static void test_empty_is_fine(void) {
  int before = t_errors;
  CHECK(mlx_array_free(mlx_array_new()) == 0);
  CHECK(mlx_stream_free(mlx_stream_new()) == 0);
  CHECK(mlx_device_free(mlx_device_new()) == 0);
  CHECK(mlx_string_free(mlx_string_new()) == 0);
  CHECK(t_errors == before);
  mlx_array a = scalar(1), b = scalar(2), r = mlx_array_new();
  CHECK(mlx_add(&r, a, b, S) == 0);
  CHECK(mlx_add(&r, r, b, S) == 0); /* reused in place */
  float f = 0;
  CHECK(mlx_array_item_float32(&f, r) == 0 && f == 5);
  CHECK(t_errors == before);
  mlx_array_free(a), mlx_array_free(b), mlx_array_free(r);
}

static void test_freed_stream(void) {
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_stream_free(s);
  mlx_array a = scalar(1), r = mlx_array_new();
  CHECK_FAILS(mlx_exp(&r, a, s), FREED);
  CHECK_FAILS(mlx_synchronize(s), "mlx_stream");
  mlx_array_free(a);
}

static void test_wrong_type_and_garbage(void) {
  mlx_array a = scalar(1), r = mlx_array_new();
  mlx_array as_array = {S.ctx}; /* a stream passed as an array */
  CHECK_FAILS(mlx_exp(&r, as_array, S), "is an mlx_stream, not an mlx_array");
  mlx_array odd = {(void *)0x1234};
  CHECK_FAILS(mlx_array_eval(odd), INVALID);
  CHECK_FAILS(mlx_array_free(odd), INVALID);
  CHECK_FAILS(mlx_add(&r, a, odd, S), INVALID);
  /* aligned heap garbage */
  unsigned char *junk = aligned_alloc(64, 256);
  memset(junk, 0xab, 256);
  mlx_array g = {junk};
  CHECK_FAILS(mlx_array_eval(g), INVALID);
  CHECK_FAILS(mlx_array_free(g), INVALID);
  mlx_stream gs = {junk + 32};
  CHECK_FAILS(mlx_exp(&r, a, gs), INVALID);
  free(junk);
  CHECK(r.ctx == NULL);
  mlx_array_free(a);
}

/* Vectors: every kind is a checked cell. */
static void test_vectors(void) {
  mlx_array a = scalar(1), r = mlx_array_new();
  /* use after free */
  mlx_vector_array va = mlx_vector_array_new_value(a);
  CHECK(mlx_vector_array_free(va) == 0);
  CHECK_FAILS(mlx_vector_array_append_value(va, a), FREED);
  CHECK_FAILS(mlx_vector_array_get(&r, va, 0), FREED);
  CHECK_FAILS(mlx_eval(va), FREED);
  CHECK_FAILS(mlx_concatenate_axis(&r, va, 0, S), FREED);
  int before = t_errors;
  CHECK(mlx_vector_array_size(va) == 0);
  CHECK(t_errors == before + 1);
  mlx_vector_array fresh = mlx_vector_array_new();
  CHECK_FAILS(mlx_vector_array_set(&fresh, va), FREED);
  CHECK_FAILS(mlx_vector_array_set(&va, fresh), FREED);
  CHECK_FAILS(mlx_vector_array_set_value(&va, a), FREED);
  mlx_vector_array_free(fresh);
  mlx_vector_int vi = mlx_vector_int_new_value(3);
  mlx_vector_int_free(vi);
  int iv = 0;
  CHECK_FAILS(mlx_vector_int_get(&iv, vi, 0), FREED);
  CHECK_FAILS(mlx_vector_int_append_value(vi, 1), FREED);
  mlx_vector_string vs = mlx_vector_string_new_value("x");
  mlx_vector_string_free(vs);
  char *sv = NULL;
  CHECK_FAILS(mlx_vector_string_get(&sv, vs, 0), FREED);
  mlx_vector_vector_array vv = mlx_vector_vector_array_new();
  mlx_vector_vector_array_free(vv);
  CHECK_FAILS(mlx_vector_vector_array_append_value(vv, va), FREED);
  /* double free */
  CHECK_FAILS(mlx_vector_array_free(va), DOUBLE);
  CHECK_FAILS(mlx_vector_int_free(vi), DOUBLE);
  CHECK_FAILS(mlx_vector_string_free(vs), DOUBLE);
  CHECK_FAILS(mlx_vector_vector_array_free(vv), DOUBLE);
  /* wrong type */
  mlx_vector_int ints = mlx_vector_int_new_value(7);
  mlx_vector_array as_va = {ints.ctx};
  CHECK_FAILS(mlx_vector_array_append_value(as_va, a), "is an mlx_vector_int, not an mlx_vector_array");
  CHECK_FAILS(mlx_eval(as_va), "not an mlx_vector_array");
  CHECK_FAILS(mlx_vector_array_free(as_va), "not an mlx_vector_array");
  mlx_vector_string as_vs = {ints.ctx};
  CHECK_FAILS(mlx_vector_string_append_value(as_vs, "y"), "not an mlx_vector_string");
  mlx_vector_int as_vi = {a.ctx};
  CHECK_FAILS(mlx_vector_int_append_value(as_vi, 1), "is an mlx_array, not an mlx_vector_int");
  mlx_vector_int odd = {(void *)0x1234};
  CHECK_FAILS(mlx_vector_int_free(odd), INVALID);
  /* valid use unaffected, results reuse live handles and fill empty ones */
  before = t_errors;
  CHECK(mlx_vector_int_get(&iv, ints, 0) == 0 && iv == 7);
  CHECK(mlx_vector_int_free(ints) == 0);
  mlx_vector_array v1 = mlx_vector_array_new(), v2 = {NULL};
  CHECK(mlx_vector_array_append_value(v1, a) == 0 && mlx_vector_array_append_value(v1, a) == 0);
  CHECK(mlx_vector_array_set(&v2, v1) == 0 && v2.ctx && mlx_vector_array_size(v2) == 2);
  void *cell = v2.ctx;
  CHECK(mlx_vector_array_set_value(&v2, a) == 0 && v2.ctx == cell && mlx_vector_array_size(v2) == 1);
  CHECK(mlx_stack_axis(&r, v1, 0, S) == 0 && mlx_array_size(r) == 2);
  mlx_vector_vector_array w = mlx_vector_vector_array_new_value(v1);
  mlx_vector_vector_array w2 = {NULL};
  CHECK(mlx_vector_vector_array_set(&w2, w) == 0 && mlx_vector_vector_array_size(w2) == 1);
  mlx_vector_array got = {NULL};
  CHECK(mlx_vector_vector_array_get(&got, w2, 0) == 0 && mlx_vector_array_size(got) == 2);
  mlx_vector_string s1 = mlx_vector_string_new_value("a"), s2 = {NULL};
  CHECK(mlx_vector_string_set(&s2, s1) == 0 && mlx_vector_string_get(&sv, s2, 0) == 0 &&
        strcmp(sv, "a") == 0);
  CHECK(mlx_vector_array_free(v1) == 0 && mlx_vector_array_free(v2) == 0);
  CHECK(mlx_vector_array_free(got) == 0);
  CHECK(mlx_vector_vector_array_free(w) == 0 && mlx_vector_vector_array_free(w2) == 0);
  CHECK(mlx_vector_string_free(s1) == 0 && mlx_vector_string_free(s2) == 0);
  CHECK(mlx_vector_array_free((mlx_vector_array){NULL}) == 0);
  CHECK(t_errors == before);
  mlx_array_free(a), mlx_array_free(r);
}

/* Maps and their iterators are checked cells. */
static void test_maps(void) {
  mlx_array a = scalar(1), r = mlx_array_new();
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  CHECK(mlx_map_string_to_array_insert(m, "a", a) == 0);
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
  CHECK(mlx_map_string_to_array_free(m) == 0);
  /* use after free */
  CHECK_FAILS(mlx_map_string_to_array_insert(m, "b", a), FREED);
  CHECK_FAILS(mlx_map_string_to_array_get(&r, m, "a"), FREED);
  const char *key = NULL;
  CHECK_FAILS(mlx_map_string_to_array_iterator_next(&key, &r, it), FREED); /* its map was freed */
  CHECK(mlx_map_string_to_array_iterator_free(it) == 0);
  CHECK_FAILS(mlx_map_string_to_array_iterator_next(&key, &r, it), FREED);
  mlx_map_string_to_array m2 = {NULL};
  CHECK_FAILS(mlx_map_string_to_array_set(&m2, m), FREED);
  CHECK(m2.ctx == NULL);
  CHECK_FAILS(mlx_save_safetensors("/nonexistent/x.safetensors", m, (mlx_map_string_to_string){0}), FREED);
  mlx_map_string_to_string ms = mlx_map_string_to_string_new();
  mlx_map_string_to_string_free(ms);
  const char *val = NULL;
  CHECK_FAILS(mlx_map_string_to_string_insert(ms, "k", "v"), FREED);
  CHECK_FAILS(mlx_map_string_to_string_get(&val, ms, "k"), FREED);
  CHECK(mlx_map_string_to_string_iterator_new(ms).ctx == NULL && t_errors > 0);
  /* double free */
  CHECK_FAILS(mlx_map_string_to_array_free(m), DOUBLE);
  CHECK_FAILS(mlx_map_string_to_string_free(ms), DOUBLE);
  CHECK_FAILS(mlx_map_string_to_array_iterator_free(it), DOUBLE);
  /* wrong type: a vector where a map is expected, a map of strings as one of arrays */
  mlx_vector_array v = mlx_vector_array_new();
  mlx_map_string_to_array as_map = {v.ctx};
  CHECK_FAILS(mlx_map_string_to_array_insert(as_map, "a", a),
              "is an mlx_vector_array, not an mlx_map_string_to_array");
  CHECK_FAILS(mlx_map_string_to_array_free(as_map), "not an mlx_map_string_to_array");
  mlx_map_string_to_string live = mlx_map_string_to_string_new();
  mlx_map_string_to_array wrong = {live.ctx};
  CHECK_FAILS(mlx_map_string_to_array_get(&r, wrong, "a"), "is an mlx_map_string_to_string");
  mlx_vector_array as_vec = {live.ctx};
  CHECK_FAILS(mlx_vector_array_append_value(as_vec, a), "not an mlx_vector_array");
  /* valid use unaffected */
  int before = t_errors;
  CHECK(mlx_map_string_to_string_insert(live, "k", "v") == 0);
  mlx_map_string_to_string copy = {NULL};
  CHECK(mlx_map_string_to_string_set(&copy, live) == 0);
  CHECK(mlx_map_string_to_string_get(&val, copy, "k") == 0 && strcmp(val, "v") == 0);
  mlx_map_string_to_string_iterator sit = mlx_map_string_to_string_iterator_new(copy);
  CHECK(mlx_map_string_to_string_iterator_next(&key, &val, sit) == 0 && strcmp(key, "k") == 0);
  CHECK(mlx_map_string_to_string_iterator_next(&key, &val, sit) == 2);
  CHECK(mlx_map_string_to_string_iterator_free(sit) == 0);
  mlx_map_string_to_array ma = mlx_map_string_to_array_new(), mb = mlx_map_string_to_array_new();
  CHECK(mlx_map_string_to_array_insert(ma, "x", a) == 0);
  void *cell = mb.ctx;
  CHECK(mlx_map_string_to_array_set(&mb, ma) == 0 && mb.ctx == cell);
  CHECK(mlx_map_string_to_array_get(&r, mb, "x") == 0 && mlx_array_size(r) == 1);
  CHECK(mlx_map_string_to_array_get(&r, mb, "y") == 2);
  CHECK(mlx_map_string_to_array_free(ma) == 0 && mlx_map_string_to_array_free(mb) == 0);
  CHECK(mlx_map_string_to_string_free(live) == 0 && mlx_map_string_to_string_free(copy) == 0);
  CHECK(mlx_map_string_to_array_free((mlx_map_string_to_array){NULL}) == 0);
  CHECK(mlx_vector_array_free(v) == 0);
  CHECK(t_errors == before);
  mlx_array_free(a), mlx_array_free(r);
}

static int twice(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  int rc = mlx_vector_array_get(&x, in, 0) || mlx_add(&y, x, x, S) ||
           mlx_vector_array_set_value(res, y);
  mlx_array_free(x), mlx_array_free(y);
  return rc;
}

static int breaks_result(mlx_vector_array *res, const mlx_vector_array in) {
  (void)in;
  return mlx_vector_array_free(*res); /* leaves a freed handle as the result */
}

static int kw_fn(mlx_vector_array *res, const mlx_vector_array in, const mlx_map_string_to_array kw) {
  (void)kw;
  return mlx_vector_array_set(res, in);
}

/* Closures of every kind are checked cells; each handle has its own cell. */
static void test_closures(void) {
  mlx_array a = scalar(2);
  mlx_vector_array in = mlx_vector_array_new_value(a), out = mlx_vector_array_new();
  mlx_closure c = mlx_closure_new_func(twice), c2 = mlx_closure_new();
  CHECK(mlx_closure_set(&c2, c) == 0);
  CHECK(mlx_closure_free(c) == 0);
  /* use after free (the copy keeps the function alive) */
  CHECK_FAILS(mlx_closure_apply(&out, c, in), FREED);
  mlx_vector_array r0 = mlx_vector_array_new(), r1 = mlx_vector_array_new();
  CHECK_FAILS(mlx_vjp(&r0, &r1, c, in, in), FREED);
  mlx_closure_value_and_grad vg = mlx_closure_value_and_grad_new();
  int argnum = 0;
  CHECK_FAILS(mlx_value_and_grad(&vg, c, &argnum, 1), FREED);
  mlx_closure cc = mlx_closure_new();
  CHECK_FAILS(mlx_compile(&cc, c, false), FREED);
  CHECK_FAILS(mlx_closure_set(&cc, c), FREED);
  CHECK(cc.ctx == NULL);
  /* double free */
  CHECK_FAILS(mlx_closure_free(c), DOUBLE);
  mlx_closure_kwargs k = mlx_closure_kwargs_new_func(kw_fn);
  mlx_closure_kwargs_free(k);
  mlx_map_string_to_array kw = mlx_map_string_to_array_new();
  CHECK_FAILS(mlx_closure_kwargs_apply(&out, k, in, kw), FREED);
  CHECK_FAILS(mlx_closure_kwargs_free(k), DOUBLE);
  /* wrong type: a closure of another kind, a vector as a closure */
  mlx_closure_kwargs k2 = mlx_closure_kwargs_new_func(kw_fn);
  mlx_closure as_plain = {k2.ctx};
  CHECK_FAILS(mlx_closure_apply(&out, as_plain, in), "is an mlx_closure_kwargs, not an mlx_closure");
  mlx_closure vec_as_closure = {in.ctx};
  CHECK_FAILS(mlx_closure_free(vec_as_closure), "is an mlx_vector_array, not an mlx_closure");
  mlx_closure_custom as_custom = {c2.ctx};
  CHECK_FAILS(mlx_custom_vjp(&cc, c2, as_custom), "not an mlx_closure_custom");
  /* a function that frees its result vector is reported, not a crash */
  mlx_closure bad = mlx_closure_new_func(breaks_result);
  CHECK_FAILS(mlx_closure_apply(&out, bad, in), FREED);
  mlx_closure_free(bad);
  /* valid use unaffected; the result handle keeps its cell */
  int before = t_errors;
  void *cell = out.ctx;
  CHECK(mlx_closure_apply(&out, c2, in) == 0 && out.ctx == cell);
  mlx_array y = mlx_array_new();
  float f = 0;
  CHECK(mlx_vector_array_get(&y, out, 0) == 0 && mlx_array_item_float32(&f, y) == 0 && f == 4);
  mlx_vector_array empty = {NULL};
  CHECK(mlx_closure_apply(&empty, c2, in) == 0 && mlx_vector_array_size(empty) == 1);
  CHECK(mlx_closure_kwargs_apply(&out, k2, in, kw) == 0 && mlx_vector_array_size(out) == 1);
  CHECK(mlx_value_and_grad(&vg, c2, &argnum, 1) == 0);
  CHECK(mlx_closure_value_and_grad_free(vg) == 0);
  CHECK(mlx_compile(&cc, c2, false) == 0 && mlx_closure_apply(&out, cc, in) == 0);
  CHECK(mlx_closure_free(cc) == 0 && mlx_closure_free(c2) == 0);
  CHECK(mlx_closure_kwargs_free(k2) == 0);
  CHECK(mlx_closure_free(mlx_closure_new()) == 0);
  CHECK(mlx_closure_custom_free(mlx_closure_custom_new()) == 0);
  CHECK(t_errors == before);
  mlx_map_string_to_array_free(kw);
  mlx_vector_array_free(in), mlx_vector_array_free(out), mlx_vector_array_free(empty);
  mlx_vector_array_free(r0), mlx_vector_array_free(r1);
  mlx_array_free(a), mlx_array_free(y);
}

static void test_device_info(void) {
  mlx_device d = mlx_device_new_type(MLX_CPU, 0);
  mlx_device_info info = mlx_device_info_new();
  CHECK(mlx_device_info_get(&info, d) == 0 && info.ctx);
  void *cell = info.ctx;
  CHECK(mlx_device_info_get(&info, d) == 0 && info.ctx == cell); /* reused */
  bool has = false;
  CHECK(mlx_device_info_has_key(&has, info, "device_name") == 0 && has);
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK(mlx_device_info_get_keys(&keys, info) == 0 && mlx_vector_string_size(keys) > 0);
  CHECK(mlx_device_info_free(info) == 0);
  CHECK_FAILS(mlx_device_info_has_key(&has, info, "device_name"), FREED);
  CHECK_FAILS(mlx_device_info_get_keys(&keys, info), FREED);
  CHECK_FAILS(mlx_device_info_get(&info, d), FREED);
  CHECK_FAILS(mlx_device_info_free(info), DOUBLE);
  mlx_device_info as_info = {d.ctx};
  CHECK_FAILS(mlx_device_info_has_key(&has, as_info, "x"), "is an mlx_device, not an mlx_device_info");
  mlx_device_info_free(mlx_device_info_new());
  mlx_vector_string_free(keys);
  mlx_device_free(d);
}

static size_t mem_tell(void *d) { (void)d; return 0; }
static void mem_free(void *d) { (*(int *)d)++; }

/* Readers and writers, GGUF containers, exporters, imported functions,
 * groups and node namers are checked cells too. */
static void test_other_handles(void) {
  mlx_array a = scalar(1), r = mlx_array_new();
  mlx_string str = mlx_string_new();
  int freed = 0;
  mlx_io_vtable vt = {0};
  vt.tell = mem_tell;
  vt.free = mem_free;
  mlx_io_reader rd = mlx_io_reader_new(&freed, vt);
  void *desc = NULL;
  CHECK(mlx_io_reader_descriptor(&desc, rd) == 0 && desc == &freed);
  CHECK(mlx_io_reader_free(rd) == 0 && freed == 1);
  CHECK_FAILS(mlx_io_reader_descriptor(&desc, rd), FREED);
  CHECK_FAILS(mlx_io_reader_tostring(&str, rd), FREED);
  CHECK_FAILS(mlx_load_reader(&r, rd, S), FREED);
  CHECK_FAILS(mlx_io_reader_free(rd), DOUBLE);
  CHECK(freed == 1);
  mlx_io_writer wr = mlx_io_writer_new(&freed, vt);
  mlx_io_reader as_reader = {wr.ctx};
  CHECK_FAILS(mlx_io_reader_descriptor(&desc, as_reader), "is an mlx_io_writer, not an mlx_io_reader");
  CHECK(mlx_io_writer_free(wr) == 0 && freed == 2);
  CHECK_FAILS(mlx_save_writer(wr, a), FREED);

  mlx_io_gguf gg = mlx_io_gguf_new();
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK(mlx_io_gguf_get_keys(&keys, gg) == 0 && mlx_vector_string_size(keys) == 0);
  CHECK(mlx_io_gguf_free(gg) == 0);
  CHECK_FAILS(mlx_io_gguf_get_keys(&keys, gg), FREED);
  CHECK_FAILS(mlx_save_gguf("/nonexistent/x.gguf", gg), FREED);
  CHECK_FAILS(mlx_io_gguf_free(gg), DOUBLE);

  mlx_node_namer nn = mlx_node_namer_new();
  CHECK(mlx_node_namer_set_name(nn, a, "x") == 0);
  const char *name = NULL;
  CHECK(mlx_node_namer_get_name(&name, nn, a) == 0 && strcmp(name, "x") == 0);
  CHECK(mlx_node_namer_free(nn) == 0);
  CHECK_FAILS(mlx_node_namer_get_name(&name, nn, a), FREED);
  CHECK_FAILS(mlx_node_namer_free(nn), DOUBLE);
  mlx_node_namer as_namer = {a.ctx};
  CHECK_FAILS(mlx_node_namer_set_name(as_namer, a, "y"), "is an mlx_array, not an mlx_node_namer");

  mlx_distributed_group g = mlx_distributed_group_new();
  CHECK(mlx_distributed_init(&g, false, "any") == 0);
  void *cell = g.ctx;
  CHECK(mlx_distributed_init(&g, false, "any") == 0 && g.ctx == cell);
  CHECK(mlx_distributed_group_size(g) == 1);
  CHECK(mlx_distributed_group_free(g) == 0);
  CHECK_FAILS(mlx_distributed_all_sum(&r, a, g, S), FREED);
  CHECK_FAILS(mlx_distributed_group_rank(g) == -1, FREED);
  CHECK_FAILS(mlx_distributed_group_free(g), DOUBLE);
  mlx_distributed_group as_group = {keys.ctx};
  CHECK_FAILS(mlx_distributed_all_sum(&r, a, as_group, S), "not an mlx_distributed_group");

  mlx_imported_function imp = {keys.ctx};
  mlx_vector_array out = mlx_vector_array_new(), args = mlx_vector_array_new();
  CHECK_FAILS(mlx_imported_function_apply(&out, imp, args), "not an mlx_imported_function");
  CHECK_FAILS(mlx_imported_function_free(imp), "not an mlx_imported_function");
  mlx_function_exporter ex = {keys.ctx};
  CHECK_FAILS(mlx_function_exporter_apply(ex, args), "not an mlx_function_exporter");
  CHECK(mlx_function_exporter_free((mlx_function_exporter){NULL}) == 0);
  CHECK(mlx_imported_function_free((mlx_imported_function){NULL}) == 0);

  mlx_fast_metal_kernel_config cfg = mlx_fast_metal_kernel_config_new();
  CHECK(mlx_fast_metal_kernel_config_set_grid(cfg, 1, 1, 1) == 0);
  mlx_fast_metal_kernel_config_free(cfg);
  CHECK_FAILS(mlx_fast_metal_kernel_config_set_grid(cfg, 1, 1, 1), FREED);
  int before = t_errors;
  mlx_fast_metal_kernel_config_free(cfg);
  CHECK(t_errors == before + 1 && strstr(t_last_error, DOUBLE));
  mlx_fast_metal_kernel_config as_cfg = {keys.ctx};
  CHECK_FAILS(mlx_fast_metal_kernel_config_set_grid(as_cfg, 1, 1, 1), "not an mlx_fast_metal_kernel_config");

  mlx_vector_array_free(out), mlx_vector_array_free(args);
  mlx_vector_string_free(keys);
  mlx_string_free(str);
  mlx_array_free(a), mlx_array_free(r);
}

/* Valid programs are unaffected, including many handles in flight. */
static void test_many(void) {
  enum { N = 20000 };
  static mlx_array xs[N];
  int before = t_errors;
  for (int i = 0; i < N; i++) xs[i] = scalar((float)i);
  mlx_array sum = scalar(0);
  for (int i = 0; i < N; i += 1000) CHECK(mlx_add(&sum, sum, xs[i], S) == 0);
  for (int i = 0; i < N; i++) CHECK(mlx_array_free(xs[i]) == 0);
  float f = 0;
  CHECK(mlx_array_item_float32(&f, sum) == 0 && f == 190000);
  mlx_array_free(sum);
  CHECK(t_errors == before);
}

/* The quarantine: a freed cell is not handed out again before 4096 later
 * frees of this thread, whatever the rhythm of makes and frees (one by
 * one, in pairs, in bursts, frees far ahead of makes); and it is handed
 * out after that (memory stays bounded), except with CMLX_CHECK_HANDLES=1,
 * where no cell is ever reused.  Every free is logged; every new handle is
 * looked up among the last 4096 frees. */
enum { QUARANTINE = 4096, LOG = 60000 };
static void *free_log[LOG];
static int nfree, reuses, early;

static mlx_array q_make(void) {
  mlx_array a = scalar(1);
  int lo = nfree > QUARANTINE ? nfree - QUARANTINE : 0;
  for (int i = nfree - 1; i >= lo; i--)
    if (free_log[i] == a.ctx) early++;
  for (int i = lo - 1; i >= 0 && i >= lo - 2 * QUARANTINE; i--)
    if (free_log[i] == a.ctx) {
      reuses++;
      break;
    }
  return a;
}

static void q_free(mlx_array a) {
  if (nfree < LOG) free_log[nfree++] = a.ctx;
  mlx_array_free(a);
}

static void quarantine_rhythms(bool registry) {
  enum { BURST = 3000 };
  static mlx_array hs[2 * QUARANTINE];
  int before = t_errors;
  mlx_array first = scalar(7);
  q_free(first);
  for (int i = 0; i < 9000; i++) q_free(q_make()); /* one by one */
  for (int i = 0; i < 3000; i++) {                /* in pairs */
    mlx_array x = q_make(), y = q_make();
    q_free(x);
    q_free(y);
  }
  for (int k = 0; k < 4; k++) { /* bursts */
    for (int i = 0; i < BURST; i++) hs[i] = q_make();
    for (int i = 0; i < BURST; i++) q_free(hs[i]);
  }
  for (int i = 0; i < 2 * QUARANTINE; i++) hs[i] = q_make(); /* frees far ahead */
  for (int i = 0; i < 2 * QUARANTINE; i++) q_free(hs[i]);
  for (int i = 0; i < 2 * QUARANTINE; i++) hs[i] = q_make();
  for (int i = 0; i < 2 * QUARANTINE; i++) q_free(hs[i]);
  CHECK(nfree < LOG);
  CHECK(early == 0);
  CHECK(registry ? reuses == 0 : reuses > 20000);
  CHECK(t_errors == before);
}

/* On a thread of its own: a fresh ring and no cells spilled by the tests
 * before, so every path of the store is taken. */
static void *quarantine_thread(void *registry) {
  quarantine_rhythms(*(bool *)registry);
  return NULL;
}

static void test_quarantine(bool registry) {
  pthread_t th;
  CHECK(pthread_create(&th, NULL, quarantine_thread, &registry) == 0 &&
        pthread_join(th, NULL) == 0);
}

/* Handles made on one thread and freed on another: the freeing thread's
 * quarantine takes the cell, and a use after it is still reported. */
enum { XN = 5000 };
static mlx_array xs_main[XN], xs_thread[XN];
static void *cross_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < XN; i++) mlx_array_free(xs_main[i]);
  for (int i = 0; i < XN; i++) xs_thread[i] = scalar((float)i);
  return NULL;
}

static void test_cross_thread(void) {
  int before = t_errors;
  for (int i = 0; i < XN; i++) xs_main[i] = scalar((float)i);
  pthread_t th;
  CHECK(pthread_create(&th, NULL, cross_thread, NULL) == 0 && pthread_join(th, NULL) == 0);
  CHECK(t_errors == before);
  CHECK_FAILS(mlx_array_eval(xs_main[XN - 1]), FREED);
  float f = 0;
  CHECK(mlx_array_item_float32(&f, xs_thread[XN - 1]) == 0 && f == XN - 1);
  for (int i = 0; i < XN; i++) CHECK(mlx_array_free(xs_thread[i]) == 0);
  CHECK_FAILS(mlx_array_free(xs_thread[XN - 1]), DOUBLE);
}

/* Only with CMLX_CHECK_HANDLES=1: a forged copy of a live cell, and a
 * handle freed long ago (its cell would otherwise have been reused). */
static void test_registry(void) {
  mlx_array a = scalar(1);
  _Alignas(64) unsigned char forged[64];
  memcpy(forged, a.ctx, 32);
  mlx_array f = {forged};
  CHECK_FAILS(mlx_array_eval(f), INVALID);
  mlx_array old = scalar(2);
  mlx_array_free(old);
  for (int i = 0; i < 10000; i++) mlx_array_free(scalar((float)i));
  CHECK_FAILS(mlx_array_eval(old), FREED);
  CHECK_FAILS(mlx_array_free(old), DOUBLE);
  mlx_array_free(a);
}

static int run_registry_child(const char *self) {
  pid_t pid = fork();
  if (pid == 0) {
    setenv("CMLX_CHECK_HANDLES", "1", 1);
    execl("/proc/self/exe", self, (char *)NULL);
    _exit(127);
  }
  int st = 0;
  if (pid < 0 || waitpid(pid, &st, 0) < 0) return 1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
}

int main(int argc, char **argv) {
  (void)argc;
  alarm(60); /* a hang is a failure, not a stuck CI job */
  t_init();
  S = mlx_default_cpu_stream_new();
  const char *reg = getenv("CMLX_CHECK_HANDLES");
  bool registry = reg && strcmp(reg, "1") == 0;
  test_use_after_free();
  test_double_free();
  test_empty_is_fine();
  test_freed_stream();
  test_wrong_type_and_garbage();
  test_vectors();
  test_maps();
  test_closures();
  test_device_info();
  test_other_handles();
  test_many();
  test_quarantine(registry);
  test_cross_thread();
  if (registry) test_registry();
  mlx_stream_free(S);
  int rc = t_finish();
  if (!registry) {
    int child = run_registry_child(argv[0]);
    CHECK(child == 0);
    if (child) {
      fprintf(stderr, "the CMLX_CHECK_HANDLES=1 run failed (%d)\n", child);
      rc = 1;
    }
  }
  return rc;
}
