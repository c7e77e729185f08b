/* C API streams and threads, with MLX 0.32's semantics behind mlx-c's
 * functions: each thread has its own default stream, a stream made with
 * mlx_stream_new_device can only be evaluated on its thread (MLX's "There
 * is no Stream(cpu, N) in current thread."), and an error of work queued by
 * mlx_async_eval is reported by mlx_synchronize, once. */
#include <pthread.h>

#include "capi_test.h"

static int index_of(mlx_stream s) {
  int i = -1;
  CHECK(mlx_stream_get_index(&i, s) == 0);
  return i;
}

/* Run fn(arg) on a new thread and wait for it. */
static void in_thread(void *(*fn)(void *), void *arg) {
  pthread_t t;
  CHECK(pthread_create(&t, NULL, fn, arg) == 0);
  pthread_join(t, NULL);
}

/* The call must fail with MLX's message naming stream `index` (a macro so
 * that the call runs inside CHECK_FAILS, which counts handler calls). */
static const char *no_stream(int index) {
  static _Thread_local char want[96];
  snprintf(want, sizeof want, "There is no Stream(cpu, %d) in current thread.", index);
  return want;
}
#define check_no_stream(call, index) CHECK_FAILS((call), no_stream(index))

/* ---- each thread its own default stream ---- */

typedef struct {
  int default_index, after_set_index, main_index;
  float value;
} defaults_job;

static void *defaults_worker(void *arg) {
  defaults_job *j = arg;
  mlx_stream def = mlx_default_cpu_stream_new();
  j->default_index = index_of(def);
  mlx_stream again = mlx_stream_new();
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  CHECK(mlx_get_default_stream(&again, cpu) == 0 && mlx_stream_equal(again, def));
  /* a new default for this thread only; the thread's default stream is it */
  mlx_stream mine = mlx_stream_new_device(cpu);
  CHECK(mlx_set_default_stream(mine) == 0);
  CHECK(mlx_get_default_stream(&again, cpu) == 0);
  j->after_set_index = index_of(again);
  mlx_array a = mlx_array_new(), b = mlx_array_new();
  mlx_stream cur = mlx_default_cpu_stream_new();
  CHECK(mlx_stream_equal(cur, mine));
  CHECK(mlx_arange(&a, 0, 4, 1, MLX_FLOAT32, cur) == 0);
  CHECK(mlx_multiply(&b, a, a, cur) == 0);
  CHECK(mlx_array_eval(b) == 0);
  mlx_stream_free(cur);
  j->value = mlx_array_data_float32(b)[3];
  mlx_array_free(a);
  mlx_array_free(b);
  mlx_stream_free(mine);
  mlx_stream_free(again);
  mlx_stream_free(def);
  mlx_device_free(cpu);
  return NULL;
}

static void test_default_stream_per_thread(void) {
  mlx_stream main_def = mlx_default_cpu_stream_new();
  defaults_job j = {-1, -1, index_of(main_def), 0};
  in_thread(defaults_worker, &j);
  CHECK(j.default_index >= 0 && j.default_index != j.main_index);
  CHECK(j.after_set_index > j.default_index);
  CHECK(j.value == 9.0f);
  mlx_stream now = mlx_default_cpu_stream_new();
  CHECK(mlx_stream_equal(now, main_def)); /* main's default is untouched */
  defaults_job k = {-1, -1, j.main_index, 0};
  in_thread(defaults_worker, &k);
  CHECK(k.default_index != j.default_index && k.default_index != j.main_index);
  mlx_stream_free(now);
  mlx_stream_free(main_def);
}

/* ---- another thread's stream ---- */

typedef struct {
  mlx_stream s;
  mlx_array x;
  int built;
} foreign_job;

static void *foreign_worker(void *arg) {
  foreign_job *j = arg;
  mlx_array y = mlx_array_new();
  /* building on the stream is fine; evaluating on this thread is not */
  j->built = mlx_add(&y, j->x, j->x, j->s) == 0;
  check_no_stream(mlx_array_eval(y), index_of(j->s));
  mlx_vector_array v = mlx_vector_array_new_value(y);
  check_no_stream(mlx_eval(v), index_of(j->s));
  check_no_stream(mlx_async_eval(v), index_of(j->s));
  mlx_vector_array_free(v);
  mlx_array_free(y);
  return NULL;
}

static void test_another_threads_stream(void) {
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  foreign_job j = {mlx_stream_new_device(cpu), mlx_array_new(), 0};
  CHECK(mlx_arange(&j.x, 0, 5, 1, MLX_INT32, j.s) == 0 && mlx_array_eval(j.x) == 0);
  in_thread(foreign_worker, &j);
  CHECK(j.built);
  /* on its own thread the stream works */
  mlx_array y = mlx_array_new();
  CHECK(mlx_add(&y, j.x, j.x, j.s) == 0 && mlx_array_eval(y) == 0);
  CHECK(mlx_array_data_int32(y)[4] == 8);
  mlx_array_free(y);
  mlx_array_free(j.x);
  mlx_stream_free(j.s);
  mlx_device_free(cpu);
}

typedef struct {
  mlx_array y;
  int stream_index;
} build_job;

static void *build_worker(void *arg) {
  build_job *j = arg;
  mlx_stream def = mlx_default_cpu_stream_new();
  j->stream_index = index_of(def);
  mlx_array a = mlx_array_new();
  CHECK(mlx_arange(&a, 0, 3, 1, MLX_FLOAT32, def) == 0);
  CHECK(mlx_exp(&j->y, a, def) == 0);
  mlx_array_free(a);
  mlx_stream_free(def);
  return NULL;
}

static void test_graph_built_on_another_thread(void) {
  build_job j = {mlx_array_new(), -1};
  in_thread(build_worker, &j);
  check_no_stream(mlx_array_eval(j.y), j.stream_index);
  check_no_stream(mlx_array_eval(j.y), j.stream_index); /* still unevaluated */
  mlx_array_free(j.y);
}

/* ---- errors of async work at synchronize ---- */

static void test_async_error_at_synchronize(void) {
  /* far beyond any address space: the allocation fails when it runs */
  int huge[2] = {2147483647, 1 << 20};
  mlx_device cpu = mlx_device_new_type(MLX_CPU, 0);
  mlx_stream s = mlx_stream_new_device(cpu);
  mlx_array z = mlx_array_new();
  CHECK(mlx_zeros(&z, huge, 2, MLX_FLOAT32, s) == 0);
  mlx_vector_array v = mlx_vector_array_new_value(z);
  CHECK(mlx_async_eval(v) == 0);
  CHECK_FAILS(mlx_synchronize(s), "[malloc] Unable to allocate");
  CHECK(mlx_synchronize(s) == 0); /* reported once */
  CHECK_FAILS(mlx_array_eval(z), "[malloc] Unable to allocate"); /* the array stays failed */
  CHECK(mlx_synchronize(s) == 0);
  mlx_stream def = mlx_default_cpu_stream_new();
  CHECK(mlx_synchronize(def) == 0); /* other streams have nothing to report */
  mlx_stream_free(def);
  mlx_vector_array_free(v);
  mlx_array_free(z);
  mlx_stream_free(s);
  mlx_device_free(cpu);
}

int main(void) {
  t_init();
  test_default_stream_per_thread();
  test_another_threads_stream();
  test_graph_built_on_another_thread();
  test_async_error_at_synchronize();
  return t_finish();
}
