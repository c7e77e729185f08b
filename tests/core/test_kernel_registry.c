/* The seam between the layers above and the backends (core/backend.h):
 * the CPU backend's kernels are found through the registry, a device
 * without a kernel is MLX's error naming the primitive, device-neutral
 * evaluations run on every device, and the distributed transports'
 * reduction is the backend's.  Last, a backend of the test's own for the
 * GPU device type (which no built-in backend claims in this build) gets
 * the nodes of GPU streams. */
#include <stdio.h>
#include <string.h>

#include "core/array.h"
#include "core/backend.h"
#include "core/error.h"
#include "ops/creation.h"
#include "ops/reduce.h"
#include "ops/unary.h"
#include "primitives/binary.h"
#include "primitives/compiled.h"
#include "primitives/custom_kernel.h"
#include "primitives/distributed.h"
#include "primitives/linalg.h"
#include "primitives/sort.h"
#include "primitives/unary.h"
#include "transforms/eval.h"

#include "check.h"


static bool error_is(const char *want) {
  const char *got = cm_error_message();
  bool ok = got && strcmp(got, want) == 0;
  if (!ok) fprintf(stderr, "error: got \"%s\", want \"%s\"\n", got ? got : "(none)", want);
  cm_error_clear();
  return ok;
}

static void cpu_kernels(void) {
  const cm_prim *prims[] = {&cm_prim_unary,    &cm_prim_binary,        &cm_prim_sort,
                            &cm_prim_compiled, &cm_prim_custom_kernel, &cm_prim_all_reduce};
  for (size_t i = 0; i < sizeof prims / sizeof prims[0]; i++)
    CHECK(cm_kernel_lookup(CM_CPU, prims[i]) != NULL);
  /* Without a built-in GPU backend (the CPU build) the GPU has no
   * kernels; the CUDA build's backend brings its own. */
  if (!cm_backend_for(CM_GPU)) CHECK(cm_kernel_lookup(CM_GPU, &cm_prim_unary) == NULL);
}

static void missing_kernel_error(void) {
  /* Eig has no GPU kernel in any build (nor in MLX's) */
  CHECK(cm_kernel_for(CM_GPU, &cm_prim_eig, NULL) == NULL);
  CHECK(error_is("Eig has no GPU implementation."));
  if (cm_backend_for(CM_GPU)) return;
  cm_unary_params p = {.op = CM_UNARY_EXP};
  CHECK(cm_kernel_for(CM_GPU, &cm_prim_unary, (const cm_params *)&p) == NULL);
  CHECK(error_is("Exp has no GPU implementation."));
}

static int neutral_ran;
static int neutral_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  neutral_ran++;
  return 0;
}
static const cm_prim neutral = {.name = "Neutral", .eval = neutral_eval};

static void device_neutral_eval(void) {
  CHECK(cm_kernel_lookup(CM_CPU, &neutral) == neutral_eval);
  CHECK(cm_kernel_lookup(CM_GPU, &neutral) == neutral_eval);
}

static void transports_reduce(void) {
  const cm_backend *cpu = cm_backend_for(CM_CPU);
  CHECK(cpu && cpu->reduce_into);
  if (!cpu || !cpu->reduce_into) return;
  float acc[3] = {1, 2, 3}, x[3] = {10, 20, 30};
  cpu->reduce_into(acc, x, 3, CM_FLOAT32, CM_REDUCE_SUM);
  CHECK(acc[0] == 11 && acc[1] == 22 && acc[2] == 33);
  int32_t m[2] = {5, -1}, y[2] = {3, 4};
  cpu->reduce_into(m, y, 2, CM_INT32, CM_REDUCE_MAX);
  CHECK(m[0] == 5 && m[1] == 4);
}

/* ---- a backend of the test's own for the GPU device type ---- */

static int one_device(void) { return 1; }
static const cm_backend test_gpu = {
    .name = "test-gpu", .device = CM_GPU, .device_count = one_device};

/* Reports that it ran instead of filling the output, so the test needs
 * no device memory. */
static int test_gpu_kernel(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)out, (void)in, (void)nin, (void)p;
  return cm_error(CM_ERR_RUNTIME, "test-gpu kernel ran");
}
static const cm_prim gpu_only = {.name = "GpuOnly"};

static void own_gpu_backend(void) {
  int32_t shape[1] = {4};
  cm_array *x = cm_ones(1, shape, CM_FLOAT32, CM_STREAM_DEFAULT);
  CHECK(x && cm_eval1(x) == 0);

  CHECK(cm_backend_register(&test_gpu) == 0);
  CHECK(cm_backend_for(CM_GPU) == &test_gpu);
  CHECK(cm_kernel_register(CM_GPU, &gpu_only, test_gpu_kernel) == 0);
  cm_stream gs;
  CHECK(cm_new_stream((cm_device){CM_GPU, 0}, &gs) == 0);

  /* A kernel registered for the device runs for a node of its stream;
   * the CPU has none for this primitive. */
  cm_array *a = cm_node_new(CM_FLOAT32, 1, shape, &gpu_only, NULL, 0, &x, 1, gs);
  CHECK(a && cm_eval1(a) != 0);
  CHECK(error_is("test-gpu kernel ran"));
  CHECK(cm_kernel_lookup(CM_CPU, &gpu_only) == NULL);

  /* A primitive the device has no kernel for is MLX's error. */
  cm_array *e = cm_exp(x, gs);
  CHECK(e && cm_eval1(e) != 0);
  CHECK(error_is("Exp has no GPU implementation."));

  /* Removing the kernel leaves the device without one. */
  CHECK(cm_kernel_register(CM_GPU, &gpu_only, NULL) == 0);
  CHECK(cm_kernel_lookup(CM_GPU, &gpu_only) == NULL);

  cm_release(e);
  cm_release(a);
  cm_release(x);
}

int main(void) {
  cpu_kernels();
  missing_kernel_error();
  device_neutral_eval();
  transports_reduce();
  own_gpu_backend();
  return check_report("test_kernel_registry");
}
