/* The backend seam, proved with a second device: a test-only backend
 * registers itself for CM_GPU with its own raw memory (host memory,
 * counted) and naive float32 kernels for a handful of primitives, and a
 * graph built on a gpu stream must run on it through the registry alone:
 *
 *   - values equal the same graph run on the CPU (and a graph that
 *     crosses from a CPU stream to the gpu stream works);
 *   - outputs come from the gpu device's allocator, host-side arrays from
 *     the CPU's, and a CPU buffer is never donated to a gpu output;
 *   - an op with no kernel on the device fails at eval with MLX's
 *     RuntimeError "<Name> has no GPU implementation." without harming
 *     arrays that exist, and the device keeps working afterwards;
 *   - the core's accounting is per device (active memory on the gpu rose
 *     by the outputs' sizes and fell back; the memory API's totals are the
 *     sums; the limits default from the device's allocator and the setters
 *     reach every device), and after the arrays are freed and the cache
 *     cleared the test allocator got back every block it handed out.
 *
 * The kernels are reached only through cm_kernel_register: nothing here
 * depends on how the CPU's kernels are found. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/allocator.h"
#include "core/array.h"
#include "core/backend.h"
#include "core/error.h"
#include "ops/binary.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/sort.h"
#include "ops/unary.h"
#include "primitives/binary.h"
#include "primitives/reduce.h"
#include "primitives/unary.h"
#include "transforms/eval.h"

#include "check.h"


/* ---- the test device's memory ---- */

#define SEAM_TOTAL ((size_t)1 << 30)

static atomic_long raw_allocs, raw_frees;
static atomic_size_t raw_live; /* bytes handed out and not yet given back */

static void *seam_raw_alloc(size_t size, void *ctx) {
  (void)ctx;
  void *p = malloc(size ? size : 1);
  if (p) {
    atomic_fetch_add(&raw_allocs, 1);
    atomic_fetch_add(&raw_live, size);
  }
  return p;
}

static void seam_raw_free(void *p, size_t size, void *ctx) {
  (void)ctx;
  atomic_fetch_add(&raw_frees, 1);
  atomic_fetch_sub(&raw_live, size);
  free(p);
}

static size_t seam_total(void *ctx) {
  (void)ctx;
  return SEAM_TOTAL;
}

/* No default_cache_limit: the cache may grow to the memory limit. */
static const cm_allocator_impl seam_allocator = {
    .name = "seam",
    .raw_alloc = seam_raw_alloc,
    .raw_free = seam_raw_free,
    .total_memory = seam_total,
    .default_limit_fraction = 0.5,
};

/* ---- the test device's kernels: contiguous float32 only ---- */

CM_PARAMS_ACCESSOR(cm_unary_params, seam_unary_params)
CM_PARAMS_ACCESSOR(cm_binary_params, seam_binary_params)
CM_PARAMS_ACCESSOR(cm_reduce_params, seam_reduce_params)

static atomic_int kernel_runs;

static bool dense_f32(const cm_array *a) {
  return a->dtype == CM_FLOAT32 && cm_row_contiguous(a) && a->data_size == a->size;
}

static int unsupported(const char *what) {
  return cm_error(CM_ERR_RUNTIME, "[seam] %s is not supported by the test device.", what);
}

static int seam_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_unary_op op = seam_unary_params(out)->op;
  if (!dense_f32(in[0]) || (op != CM_UNARY_EXP && op != CM_UNARY_NEGATIVE))
    return unsupported("This unary op");
  if (cm_alloc_output(out)) return -1;
  const float *x = cm_data(in[0]);
  float *y = cm_data(out);
  for (int64_t i = 0; i < out->size; i++) y[i] = op == CM_UNARY_EXP ? expf(x[i]) : -x[i];
  atomic_fetch_add(&kernel_runs, 1);
  return 0;
}

static int seam_binary(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_binary_op op = seam_binary_params(out)->op;
  if (!dense_f32(in[0]) || !dense_f32(in[1]) || in[0]->size != out->size ||
      in[1]->size != out->size || (op != CM_BINARY_ADD && op != CM_BINARY_MULTIPLY))
    return unsupported("This binary op");
  if (cm_alloc_output(out)) return -1;
  const float *a = cm_data(in[0]), *b = cm_data(in[1]);
  float *y = cm_data(out);
  for (int64_t i = 0; i < out->size; i++) y[i] = op == CM_BINARY_ADD ? a[i] + b[i] : a[i] * b[i];
  atomic_fetch_add(&kernel_runs, 1);
  return 0;
}

/* Sum over every axis (the output has one element). */
static int seam_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  if (seam_reduce_params(out)->op != CM_REDUCE_SUM || !dense_f32(in[0]) || out->size != 1)
    return unsupported("This reduction");
  if (cm_alloc_output(out)) return -1;
  const float *x = cm_data(in[0]);
  double acc = 0;
  for (int64_t i = 0; i < in[0]->size; i++) acc += x[i];
  *(float *)cm_data(out) = (float)acc;
  atomic_fetch_add(&kernel_runs, 1);
  return 0;
}

static int seam_device_count(void) { return 1; }

static const cm_backend seam_backend = {
    .name = "seam",
    .device = CM_GPU,
    .device_count = seam_device_count,
    .allocator = &seam_allocator,
};

static int register_seam_backend(void) {
  const cm_kernel_entry kernels[] = {
      {&cm_prim_unary, seam_unary},
      {&cm_prim_binary, seam_binary},
      {&cm_prim_reduce, seam_reduce},
  };
  if (cm_backend_register(&seam_backend)) return -1;
  return cm_kernels_register(CM_GPU, kernels, sizeof kernels / sizeof *kernels);
}

/* ---- helpers ---- */

#define ROWS 4
#define COLS 8
#define N (ROWS * COLS)
static const int32_t shape[2] = {ROWS, COLS};

static cm_array *host_array(float base) {
  float v[N];
  for (int i = 0; i < N; i++) v[i] = base + 0.125f * (float)(i % 11) - 0.5f;
  return cm_array_from_data(v, 2, shape, CM_FLOAT32);
}

static bool close_to(const cm_array *a, const cm_array *b, float rtol) {
  if (!a || !b || a->size != b->size || !cm_data(a) || !cm_data(b)) return false;
  const float *x = cm_data(a), *y = cm_data(b);
  for (int64_t i = 0; i < a->size; i++)
    if (!(fabsf(x[i] - y[i]) <= rtol * (1.0f + fabsf(y[i])))) return false;
  return true;
}

/* The graph under test: n = -(exp(x) * y + x), s = sum(n). */
static int build(cm_array *x, cm_array *y, cm_stream st, cm_array **n, cm_array **s) {
  cm_array *e = cm_exp(x, st);
  cm_array *m = e ? cm_multiply(e, y, st) : NULL;
  cm_array *a = m ? cm_add(m, x, st) : NULL;
  *n = a ? cm_negative(a, st) : NULL;
  *s = *n ? cm_sum(*n, CM_AXES_ALL, false, st) : NULL;
  cm_release(e);
  cm_release(m);
  cm_release(a);
  return *s ? 0 : -1;
}

static bool stream_on(cm_device_type t, cm_stream *out) {
  return cm_default_stream((cm_device){t, 0}, out) == 0;
}

/* ---- the checks ---- */

static void test_registry(void) {
  CHECK(cm_backend_for(CM_GPU) == &seam_backend);
  CHECK(cm_device_count(CM_GPU) == 1);
  CHECK(cm_device_available((cm_device){CM_GPU, 0}));
  CHECK(!cm_device_available((cm_device){CM_GPU, 1}));
  cm_stream g, via_device;
  CHECK(stream_on(CM_GPU, &g) && g.device.type == CM_GPU);
  CHECK(cm_stream_resolve(cm_stream_of_device((cm_device){CM_GPU, 0}), &via_device) == 0 &&
        cm_stream_equal(g, via_device));
}

static void test_graph_on_gpu(void) {
  cm_stream g, c;
  if (!stream_on(CM_GPU, &g) || !stream_on(CM_CPU, &c)) {
    CHECK(!"streams");
    return;
  }
  size_t cpu0 = cm_memory_active_on(CM_CPU), gpu0 = cm_memory_active_on(CM_GPU);
  long allocs0 = atomic_load(&raw_allocs);
  cm_array *x = host_array(0.0f), *y = host_array(1.0f);
  /* host-side creation is the CPU's memory, whatever devices exist */
  CHECK(x && y && x->buf->device == CM_CPU && y->buf->device == CM_CPU);
  CHECK(cm_memory_active_on(CM_CPU) == cpu0 + 2 * N * sizeof(float));
  CHECK(cm_memory_active_on(CM_GPU) == gpu0);

  cm_array *n_g, *s_g, *n_c, *s_c;
  CHECK(build(x, y, g, &n_g, &s_g) == 0 && build(x, y, c, &n_c, &s_c) == 0);
  CHECK(n_g && n_g->stream.device.type == CM_GPU && s_g && s_g->stream.device.type == CM_GPU);
  int runs0 = atomic_load(&kernel_runs);
  cm_array *gpu_out[2] = {n_g, s_g}, *cpu_out[2] = {n_c, s_c};
  CHECK(cm_eval(gpu_out, 2) == 0);
  CHECK(atomic_load(&kernel_runs) == runs0 + 5); /* exp, multiply, add, negative, sum */
  CHECK(cm_eval(cpu_out, 2) == 0);
  CHECK(atomic_load(&kernel_runs) == runs0 + 5); /* the CPU ran its own kernels */
  CHECK(close_to(n_g, n_c, 1e-6f));
  CHECK(close_to(s_g, s_c, 1e-5f));

  /* The outputs are the gpu's memory; the intermediates were freed (or
   * donated along the chain) as they were consumed, so the gpu's active
   * memory rose by exactly the outputs' sizes. */
  CHECK(n_g->buf->device == CM_GPU && s_g->buf->device == CM_GPU);
  CHECK(n_c->buf->device == CM_CPU && s_c->buf->device == CM_CPU);
  size_t outs = cm_nbytes(n_g) + cm_nbytes(s_g);
  CHECK(cm_memory_active_on(CM_GPU) == gpu0 + outs);
  CHECK(cm_memory_peak_on(CM_GPU) >= gpu0 + outs);
  CHECK(atomic_load(&raw_allocs) > allocs0);
  CHECK(cm_memory_active() == cm_memory_active_on(CM_CPU) + cm_memory_active_on(CM_GPU));
  CHECK(cm_memory_cache() == cm_memory_cache_on(CM_CPU) + cm_memory_cache_on(CM_GPU));

  /* A CPU node feeding a gpu node, on two streams. */
  cm_array *e_c = cm_exp(x, c);
  cm_array *mixed = e_c ? cm_add(e_c, y, g) : NULL;
  cm_array *e_ref = cm_exp(x, c);
  cm_array *ref = e_ref ? cm_add(e_ref, y, c) : NULL;
  cm_release(e_c);
  cm_release(e_ref);
  CHECK(mixed && ref && cm_eval1(mixed) == 0 && cm_eval1(ref) == 0);
  CHECK(close_to(mixed, ref, 1e-6f) && mixed->buf->device == CM_GPU);
  cm_release(mixed);
  cm_release(ref);

  /* A CPU buffer whose only holder is a gpu node is not donated to it:
   * the output is the gpu's memory. */
  cm_array *t = host_array(2.0f);
  cm_array *neg = t ? cm_negative(t, g) : NULL;
  cm_release(t);
  CHECK(neg && cm_eval1(neg) == 0 && neg->buf->device == CM_GPU);
  CHECK(neg && ((const float *)cm_data(neg))[0] == -(2.0f - 0.5f));
  cm_release(neg);

  cm_release(n_g);
  cm_release(s_g);
  cm_release(n_c);
  cm_release(s_c);
  cm_release(x);
  cm_release(y);
  CHECK(cm_memory_active_on(CM_GPU) == gpu0);
  CHECK(cm_memory_active_on(CM_CPU) == cpu0);
  CHECK(cm_memory_cache_on(CM_GPU) > 0); /* freed blocks went to the gpu's own cache */
}

/* An op with no kernel on the device: MLX's RuntimeError naming the
 * primitive, at eval; existing arrays are untouched; the device works
 * afterwards. */
static void expect_no_gpu_kernel(cm_array *bad, const char *name, cm_array *x, cm_array *kept,
                                 const float *kept_values) {
  char want[128];
  snprintf(want, sizeof want, "%s has no GPU implementation.", name);
  CHECK(bad != NULL);
  if (!bad) return;
  CHECK(cm_eval1(bad) == -1);
  CHECK(cm_error_kind_get() == CM_ERR_RUNTIME);
  CHECK(strcmp(cm_error_message(), want) == 0);
  if (strcmp(cm_error_message(), want) != 0) fprintf(stderr, "  got: %s\n", cm_error_message());
  cm_error_clear();
  /* evaluating it again reports the same failure, not a crash */
  CHECK(cm_eval1(bad) == -1 && strcmp(cm_error_message(), want) == 0);
  cm_error_clear();
  cm_release(bad);
  CHECK(cm_is_evaluated(x) && !x->error && ((const float *)cm_data(x))[0] == -0.5f);
  CHECK(cm_is_evaluated(kept) && !kept->error &&
        memcmp(cm_data(kept), kept_values, cm_nbytes(kept)) == 0);
}

static void test_missing_kernels(void) {
  cm_stream g;
  if (!stream_on(CM_GPU, &g)) {
    CHECK(!"stream");
    return;
  }
  size_t gpu0 = cm_memory_active_on(CM_GPU);
  cm_array *x = host_array(0.0f);
  cm_array *kept = x ? cm_exp(x, g) : NULL;
  CHECK(kept && cm_eval1(kept) == 0);
  if (!kept) return;
  float kept_values[N];
  memcpy(kept_values, cm_data(kept), sizeof kept_values);

  expect_no_gpu_kernel(cm_sort(x, -1, g), "Sort", x, kept, kept_values);
  cm_array *xt_in = host_array(1.0f);
  cm_array *sq = NULL;
  if (xt_in) { /* (4, 8) @ (8, 4): a Matmul node over two host arrays */
    const int32_t tshape[2] = {COLS, ROWS};
    cm_array *w = cm_array_from_data(cm_data(xt_in), 2, tshape, CM_FLOAT32);
    sq = w ? cm_matmul(x, w, g) : NULL;
    cm_release(w);
  }
  expect_no_gpu_kernel(sq, "Matmul", x, kept, kept_values);
  cm_release(xt_in);
  /* the failing op behind a supported one: the error reaches the result */
  cm_array *sorted = cm_sort(kept, -1, g);
  cm_array *after = sorted ? cm_negative(sorted, g) : NULL;
  cm_release(sorted);
  expect_no_gpu_kernel(after, "Sort", x, kept, kept_values);

  /* the device still works, and nothing leaked on it */
  cm_array *again = cm_negative(kept, g);
  CHECK(again && cm_eval1(again) == 0 && ((const float *)cm_data(again))[0] == -kept_values[0]);
  cm_release(again);
  cm_release(kept);
  cm_release(x);
  CHECK(cm_memory_active_on(CM_GPU) == gpu0);
}

static void test_limits(void) {
  /* defaults from the device's allocator: total x fraction, and the cache
   * may reach the memory limit when the allocator gives no cache default */
  size_t gpu_limit = (size_t)(0.5 * (double)SEAM_TOTAL);
  CHECK(cm_memory_limit_on(CM_GPU) == gpu_limit);
  CHECK(cm_memory_cache_limit_on(CM_GPU) == gpu_limit);
  /* the CPU's keep its own defaults */
  CHECK(cm_memory_limit_on(CM_CPU) == (size_t)(0.8 * (double)cm_memory_total_ram()));
  size_t cpu_cache_limit = cm_memory_cache_limit_on(CM_CPU);
  CHECK(cpu_cache_limit >= ((size_t)32 << 20) && cpu_cache_limit <= ((size_t)1 << 30));
  /* with an accelerator present, the memory API reads its limits back */
  CHECK(cm_memory_limit() == gpu_limit);

  /* the setters reach every device and return the accelerator's previous */
  size_t want = (size_t)3 << 28;
  CHECK(cm_memory_set_limit(want) == gpu_limit);
  CHECK(cm_memory_limit_on(CM_GPU) == want && cm_memory_limit_on(CM_CPU) == want);
  CHECK(cm_memory_set_limit(gpu_limit) == want);

  CHECK(cm_memory_cache_on(CM_GPU) > 0);
  CHECK(cm_memory_set_cache_limit(0) == gpu_limit);
  CHECK(cm_memory_cache_on(CM_GPU) == 0 && cm_memory_cache_on(CM_CPU) == 0);
  CHECK(cm_memory_cache_limit_on(CM_CPU) == 0);
  CHECK(cm_memory_set_cache_limit(gpu_limit) == 0);
  CHECK(cm_memory_cache_limit_on(CM_CPU) == gpu_limit);

  /* the peak is reset everywhere */
  cm_memory_reset_peak();
  CHECK(cm_memory_peak() == 0 && cm_memory_peak_on(CM_GPU) == 0 && cm_memory_peak_on(CM_CPU) == 0);
}

static void test_everything_returned(void) {
  cm_memory_clear_cache();
  CHECK(cm_memory_cache_on(CM_GPU) == 0 && cm_memory_cache() == 0);
  CHECK(cm_memory_active_on(CM_GPU) == 0);
  CHECK(atomic_load(&raw_allocs) > 0);
  CHECK(atomic_load(&raw_frees) == atomic_load(&raw_allocs));
  CHECK(atomic_load(&raw_live) == 0);
}

int main(void) {
  /* before anything touches the gpu's memory: its allocator is bound on
   * first use */
  if (register_seam_backend()) {
    fprintf(stderr, "registering the test backend failed: %s\n", cm_error_message());
    return 1;
  }
  test_registry();
  test_graph_on_gpu();
  test_missing_kernels();
  test_limits();
  test_everything_returned();
  return check_report("test_backend_seam");
}
