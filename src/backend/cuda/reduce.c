/* Reductions on the GPU.  One block computes one output element: its
 * threads stride over the reduced elements (addressed through the reduced
 * axes' shape and strides, so any layout is read in place), fold into a
 * per-thread accumulator, and combine in shared memory.  The kept and the
 * reduced axes are each merged where their strides allow first.
 *
 * Accumulators: float for float16 and bfloat16 results, the result's own
 * type otherwise (integer sums wrap, as on the CPU), bool for all and any.
 * max and min let NaN win, as MLX's.  Complex max and min (MLX's
 * lexicographic order with its NaN rules) have no GPU kernel yet. */
#include "backend/cuda/reduce.h"

#include <string.h>

#include "backend/cuda/device.h"
#include "backend/cuda/elementwise.h"
#include "backend/cuda/encoder.h"
#include "backend/cuda/jit.h"
#include "core/strbuf.h"
#include "primitives/reduce.h"

#define THREADS 256

/* The accumulator type for a result of dtype out. */
static const char *acc_type(int op, cm_dtype out) {
  if (op == CM_REDUCE_AND || op == CM_REDUCE_OR || out == CM_BOOL) return "bool";
  if (out == CM_FLOAT16 || out == CM_BFLOAT16) return "float";
  return cm_cuda_type_name(out);
}

/* The identity of op in the accumulator type of out. */
static const char *identity(int op, cm_dtype out) {
  switch (op) {
  case CM_REDUCE_SUM: return "0";
  case CM_REDUCE_PROD: return "1";
  case CM_REDUCE_AND: return "true";
  case CM_REDUCE_OR: return "false";
  default: break;
  }
  bool max = op == CM_REDUCE_MAX;
  switch (out) {
  case CM_BOOL: return max ? "false" : "true";
  case CM_UINT8: return max ? "0" : "0xff";
  case CM_UINT16: return max ? "0" : "0xffff";
  case CM_UINT32: return max ? "0" : "0xffffffffu";
  case CM_UINT64: return max ? "0" : "0xffffffffffffffffull";
  case CM_INT8: return max ? "-128" : "127";
  case CM_INT16: return max ? "-32768" : "32767";
  case CM_INT32: return max ? "(-2147483647 - 1)" : "2147483647";
  case CM_INT64: return max ? "(-9223372036854775807ll - 1)" : "9223372036854775807ll";
  default: return max ? "-__int_as_float(0x7f800000)" : "__int_as_float(0x7f800000)";
  }
}

static const char *combine(int op) {
  switch (op) {
  case CM_REDUCE_SUM: return "b_add";
  case CM_REDUCE_PROD: return "b_mul";
  case CM_REDUCE_MAX: return "b_max";
  case CM_REDUCE_MIN: return "b_min";
  case CM_REDUCE_AND: return "b_land";
  case CM_REDUCE_OR: return "b_lor";
  default: return NULL;
  }
}

char *cm_cuda_reduce_source(int op, cm_dtype in, cm_dtype out, int kd, int rd) {
  const char *comb = combine(op);
  if (!comb || ((op == CM_REDUCE_MAX || op == CM_REDUCE_MIN) && in == CM_COMPLEX64)) {
    cm_error(CM_ERR_RUNTIME, "%s has no GPU implementation for %s.",
             cm_reduce_op_name((cm_reduce_op)op), cm_dtype_name(in));
    return NULL;
  }
  const char *acc = acc_type(op, out);
  cm_strbuf b = {0};
  cm_strbuf_printf(&b,
                   "struct cm_rlayout { i64 kshape[%d]; i64 kst[%d]; i64 rshape[%d]; i64 rst[%d]; };\n"
                   "extern \"C\" __global__ void cm_reduce(%s *out, const %s *in, i64 nout, i64 nred,"
                   " cm_rlayout l) {\n"
                   "  __shared__ %s sh[%d];\n"
                   "  for (i64 j = blockIdx.x; j < nout; j += gridDim.x) {\n"
                   "    i64 base = 0, r = j;\n"
                   "    for (int d = %d; d >= 0; d--) { base += (r %% l.kshape[d]) * l.kst[d]; "
                   "r /= l.kshape[d]; }\n"
                   "    %s acc = cm_conv<%s>::from(%s);\n"
                   "    for (i64 t = threadIdx.x; t < nred; t += blockDim.x) {\n"
                   "      i64 off = base, q = t;\n"
                   "      for (int d = %d; d >= 0; d--) { off += (q %% l.rshape[d]) * l.rst[d]; "
                   "q /= l.rshape[d]; }\n"
                   "      acc = %s(acc, cm_conv<%s>::from(in[off]));\n"
                   "    }\n"
                   "    sh[threadIdx.x] = acc;\n"
                   "    __syncthreads();\n"
                   "    for (int s = blockDim.x / 2; s > 0; s >>= 1) {\n"
                   "      if (threadIdx.x < s) sh[threadIdx.x] = %s(sh[threadIdx.x], sh[threadIdx.x + s]);\n"
                   "      __syncthreads();\n"
                   "    }\n"
                   "    if (threadIdx.x == 0) out[j] = cm_conv<%s>::from(sh[0]);\n"
                   "    __syncthreads();\n"
                   "  }\n"
                   "}\n",
                   kd, kd, rd, rd, cm_cuda_type_name(out), cm_cuda_type_name(in), acc, THREADS,
                   kd - 1, acc, acc, identity(op, out), rd - 1, comb, acc, comb, cm_cuda_type_name(out));
  if (b.failed) {
    free(b.s);
    cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    return NULL;
  }
  return b.s;
}

/* Axes with one stride each, merged where they walk memory as one (size-1
 * axes dropped); at least one axis is kept (size 1, stride 0). */
typedef struct axes {
  int n;
  int64_t shape[CM_MAX_DIMS], st[CM_MAX_DIMS];
} axes;

static void push_axis(axes *x, int64_t size, int64_t stride) {
  if (size == 1) return;
  if (x->n && x->st[x->n - 1] == stride * size) {
    x->shape[x->n - 1] *= size;
    x->st[x->n - 1] = stride;
    return;
  }
  x->shape[x->n] = size;
  x->st[x->n++] = stride;
}

static void finish_axes(axes *x) {
  if (x->n == 0) x->shape[0] = 1, x->st[0] = 0, x->n = 1;
}

int cm_cuda_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_reduce_params *rp = cm_reduce_params_of(out);
  cm_array *a = in[0];
  if (cm_alloc_output(out)) return -1;
  if (out->size == 0) return 0;
  axes kept = {0}, red = {0};
  for (int d = 0; d < a->ndim; d++) {
    if (rp->axes >> d & 1) push_axis(&red, a->shape[d], a->strides[d]);
    else push_axis(&kept, a->shape[d], a->strides[d]);
  }
  int64_t nred = a->size / out->size; /* 0 when a reduced axis is empty */
  if (a->size == 0) nred = 0;
  finish_axes(&kept);
  finish_axes(&red);
  char *src = cm_cuda_reduce_source((int)rp->op, a->dtype, out->dtype, kept.n, red.n);
  if (!src) return -1;
  const void *k = cm_cuda_jit_kernel(out->stream.device.index, src, "cm_reduce");
  free(src);
  if (!k) return -1;
  const void *ip = a->size ? cm_cuda_input_ptr(out->stream, a) : cm_data(out);
  if (!ip) return -1;
  void *op = cm_data(out);
  int64_t nout = out->size;
  int64_t layout[4 * CM_MAX_DIMS];
  int q = 0;
  for (int d = 0; d < kept.n; d++) layout[q++] = kept.shape[d];
  for (int d = 0; d < kept.n; d++) layout[q++] = kept.st[d];
  for (int d = 0; d < red.n; d++) layout[q++] = red.shape[d];
  for (int d = 0; d < red.n; d++) layout[q++] = red.st[d];
  void *args[] = {&op, (void *)&ip, &nout, &nred, layout};
  const cm_cuda_device_props *dev = cm_cuda_device(out->stream.device.index);
  int64_t blocks = nout, cap = (int64_t)(dev ? dev->sm_count : 1) * 32;
  if (blocks > cap) blocks = cap;
  cm_array *reads[1] = {a};
  cm_cuda_launch launch = {.func = k,
                           .grid = {(unsigned)blocks, 1, 1},
                           .block = {THREADS, 1, 1},
                           .args = args,
                           .reads = reads,
                           .nreads = a->size ? 1 : 0,
                           .writes = &out,
                           .nwrites = 1};
  return cm_cuda_launch_kernel(out->stream, &launch);
}
