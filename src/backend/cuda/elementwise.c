/* Elementwise kernels generated per op, dtypes and layout (elementwise.h).
 *
 * Every kernel is one grid-stride loop over the output's elements in
 * row-major order.  An input is read at the same index (contiguous), at 0
 * (scalar), or at an offset computed from the index through the shape and
 * its strides; axes that every strided operand can walk as one are merged
 * first, so most strided launches need one or two axes. */
#include "backend/cuda/elementwise.h"

#include <string.h>

#include "backend/cuda/device.h"
#include "backend/cuda/elementwise_table.h"
#include "backend/cuda/encoder.h"
#include "backend/cuda/jit.h"
#include "backend/views.h"
#include "core/strbuf.h"
#include "primitives/binary.h"
#include "primitives/unary.h"

const char *cm_cuda_type_name(cm_dtype t) {
  static const char *names[CM_NUM_DTYPES] = {
      [CM_BOOL] = "cm_b8",    [CM_UINT8] = "u8",        [CM_UINT16] = "u16",
      [CM_UINT32] = "u32",    [CM_UINT64] = "u64",      [CM_INT8] = "i8",
      [CM_INT16] = "i16",     [CM_INT32] = "i32",       [CM_INT64] = "i64",
      [CM_FLOAT16] = "cm_f16", [CM_FLOAT32] = "float",  [CM_FLOAT64] = "double",
      [CM_BFLOAT16] = "cm_bf16", [CM_COMPLEX64] = "cm_c64"};
  return (unsigned)t < CM_NUM_DTYPES ? names[t] : "void";
}

/* ---- the op tables ---- */

#define CM_X(CODE, fn, types) [CM_UNARY_##CODE] = {"u_" #fn, CM_CUDA_##types},
static const struct {
  const char *fn;
  unsigned types;
} unary_rows[] = {CM_CUDA_UNARY_OPS(CM_X)};
#undef CM_X
#define CM_X(CODE, fn, types) [CM_BINARY_##CODE] = {"b_" #fn, CM_CUDA_##types},
static const struct {
  const char *fn;
  unsigned types;
} binary_rows[] = {CM_CUDA_BINARY_OPS(CM_X)};
#undef CM_X

bool cm_cuda_unary_fn(int op, cm_dtype in, const char **fn) {
  if (op < 0 || op >= CM_UNARY_NUM_OPS || !(unary_rows[op].types & CM_CUDA_T(in))) return false;
  *fn = unary_rows[op].fn;
  return true;
}

bool cm_cuda_binary_fn(int op, cm_dtype in, const char **fn) {
  if (op < 0 || op >= CM_BINARY_NUM_OPS || !(binary_rows[op].types & CM_CUDA_T(in))) return false;
  *fn = binary_rows[op].fn;
  return true;
}

/* ---- source ---- */

/* Operand k's offset expression: "i" (contiguous), "0" (scalar), or the
 * computed o<k>. */
static void offset_of(cm_strbuf *b, char mode, int k) {
  if (mode == CM_EW_CONTIGUOUS) cm_strbuf_str(b, "i");
  else if (mode == CM_EW_SCALAR) cm_strbuf_str(b, "0");
  else cm_strbuf_printf(b, "o%d", k);
}

char *cm_cuda_ew_source(const cm_ew_spec *s) {
  cm_strbuf b = {0};
  const char *I = s->wide ? "i64" : "i32";
  /* the strided operands: the output first when it is strided, then the
   * strided inputs, numbered in the layout's st[] */
  int ng = s->out_strided ? 1 : 0, slot[3];
  for (int k = 0; k < s->nin; k++) slot[k] = s->mode[k] == CM_EW_STRIDED ? ng++ : -1;
  if (ng) cm_strbuf_printf(&b, "struct cm_layout { i64 shape[%d]; i64 st[%d][%d]; };\n", s->nd, ng, s->nd);
  cm_strbuf_printf(&b, "extern \"C\" __global__ void cm_ew(%s *out", cm_cuda_type_name(s->out));
  for (int k = 0; k < s->nin; k++)
    cm_strbuf_printf(&b, ", const %s *in%d", cm_cuda_type_name(s->in[k]), k);
  cm_strbuf_printf(&b, ", %s n", I);
  if (ng) cm_strbuf_str(&b, ", cm_layout l");
  for (int k = 0; k < s->nparams; k++) cm_strbuf_printf(&b, ", float p%d", k);
  cm_strbuf_printf(&b, ") {\n  for (%s i = (%s)blockIdx.x * blockDim.x + threadIdx.x; i < n; "
                       "i += (%s)gridDim.x * blockDim.x) {\n", I, I, I);
  if (ng) {
    cm_strbuf_printf(&b, "    %s r = i", I);
    for (int g = 0; g < ng; g++) cm_strbuf_printf(&b, ", o%d = 0", g);
    cm_strbuf_printf(&b, ";\n    for (int d = %d; d >= 0; d--) {\n      %s c = r %% (%s)l.shape[d];\n"
                         "      r /= (%s)l.shape[d];\n", s->nd - 1, I, I, I);
    for (int g = 0; g < ng; g++) cm_strbuf_printf(&b, "      o%d += c * (%s)l.st[%d][d];\n", g, I, g);
    cm_strbuf_str(&b, "    }\n");
  }
  char outpos[8];
  snprintf(outpos, sizeof outpos, "%s", s->out_strided ? "o0" : "i");
  /* a copy between equal dtypes moves the element as it is (NaN payloads
   * and all); everything else converts through the compute type */
  if (!s->fn && s->nin == 1 && s->in[0] == s->out) {
    cm_strbuf_printf(&b, "    out[%s] = in0[", outpos);
    offset_of(&b, s->mode[0], slot[0]);
    cm_strbuf_str(&b, "];\n");
  } else {
    for (int k = 0; k < s->nin; k++) {
      cm_strbuf_printf(&b, "    auto x%d = cm_load(in%d[", k, k);
      offset_of(&b, s->mode[k], slot[k]);
      cm_strbuf_str(&b, "]);\n");
    }
    cm_strbuf_printf(&b, "    out[%s] = cm_conv<%s>::from(", outpos, cm_cuda_type_name(s->out));
    if (!s->fn) cm_strbuf_str(&b, "x0");
    else if (!strcmp(s->fn, "?:")) cm_strbuf_str(&b, "(x0 ? x1 : x2)");
    else {
      cm_strbuf_printf(&b, "%s(x0", s->fn);
      for (int k = 1; k < s->nin; k++) cm_strbuf_printf(&b, ", x%d", k);
      for (int k = 0; k < s->nparams; k++) cm_strbuf_printf(&b, ", p%d", k);
      cm_strbuf_str(&b, ")");
    }
    cm_strbuf_str(&b, ");\n");
  }
  cm_strbuf_str(&b, "  }\n}\n");
  if (b.failed) {
    free(b.s);
    cm_error(CM_ERR_MEMORY, "[cuda] Out of memory.");
    return NULL;
  }
  return b.s;
}

/* ---- layouts ---- */

/* Operands of one launch over shape (ndim axes): the output's strides
 * (when it is written through strides) and each strided input's. */
typedef struct ew_layout {
  int nd, ng;
  int64_t shape[CM_MAX_DIMS];
  int64_t st[4][CM_MAX_DIMS];
} ew_layout;

/* Drop size-1 axes and merge axis d into d+1 where every operand steps
 * over both as over one. */
static void collapse(ew_layout *l) {
  int nd = 0;
  for (int d = 0; d < l->nd; d++) {
    if (l->shape[d] == 1) continue;
    if (nd > 0) {
      bool merge = true;
      for (int g = 0; g < l->ng && merge; g++)
        merge = l->st[g][nd - 1] == l->st[g][d] * l->shape[d];
      if (merge) {
        l->shape[nd - 1] *= l->shape[d];
        for (int g = 0; g < l->ng; g++) l->st[g][nd - 1] = l->st[g][d];
        continue;
      }
    }
    l->shape[nd] = l->shape[d];
    for (int g = 0; g < l->ng; g++) l->st[g][nd] = l->st[g][d];
    nd++;
  }
  if (nd == 0) { /* every axis was size 1: one axis of one element */
    l->shape[0] = 1;
    for (int g = 0; g < l->ng; g++) l->st[g][0] = 0;
    nd = 1;
  }
  l->nd = nd;
}

/* Whether offsets of a layout reach beyond 32-bit indices. */
static bool needs_wide(const ew_layout *l, int64_t n) {
  if (n > (int64_t)1 << 30) return true;
  for (int g = 0; g < l->ng; g++) {
    int64_t reach = 0;
    for (int d = 0; d < l->nd; d++) {
      int64_t e = l->st[g][d] * (l->shape[d] - 1);
      reach += e < 0 ? -e : e;
    }
    if (reach > (int64_t)1 << 30) return true;
  }
  return false;
}

static bool same_shape(const cm_array *a, const int32_t *shape, int ndim) {
  if (a->ndim != ndim) return false;
  for (int d = 0; d < ndim; d++)
    if (a->shape[d] != shape[d]) return false;
  return true;
}

/* One elementwise launch: out's elements at (dst_offset, dst_strides)
 * (NULL strides: out is row-contiguous from element 0) over shape,
 * computed by fn from the inputs broadcast to that shape. */
typedef struct ew_call {
  cm_array *out;
  char *out_ptr; /* element 0 of what is written */
  const int64_t *out_strides;
  int ndim;
  const int32_t *shape;
  const char *fn;
  cm_array *const *in;
  int nin;
  float params[3];
  int nparams;
} ew_call;

static int ew_run(const ew_call *c) {
  int64_t n = cm_shape_size(c->ndim, c->shape);
  if (n == 0) return 0;
  cm_ew_spec spec = {.fn = c->fn, .nin = c->nin, .out = c->out->dtype, .nparams = c->nparams};
  ew_layout l = {.nd = c->ndim};
  for (int d = 0; d < c->ndim; d++) l.shape[d] = c->shape[d];
  if (c->out_strides) {
    spec.out_strided = true;
    memcpy(l.st[l.ng++], c->out_strides, sizeof(int64_t) * (size_t)c->ndim);
  }
  for (int k = 0; k < c->nin; k++) {
    cm_array *x = c->in[k];
    spec.in[k] = x->dtype;
    if (x->size == 1) spec.mode[k] = CM_EW_SCALAR;
    else if (!c->out_strides && cm_row_contiguous(x) && same_shape(x, c->shape, c->ndim))
      spec.mode[k] = CM_EW_CONTIGUOUS;
    else {
      spec.mode[k] = CM_EW_STRIDED;
      /* strides of x seen through the launch's shape (0 on broadcast axes) */
      int lead = c->ndim - x->ndim;
      for (int d = 0; d < c->ndim; d++) {
        int j = d - lead;
        l.st[l.ng][d] = (j < 0 || x->shape[j] == 1) ? 0 : x->strides[j];
      }
      l.ng++;
    }
  }
  if (l.ng) {
    collapse(&l);
    spec.nd = l.nd;
  }
  spec.wide = needs_wide(&l, n);
  char *src = cm_cuda_ew_source(&spec);
  if (!src) return -1;
  const void *k = cm_cuda_jit_kernel(c->out->stream.device.index, src, "cm_ew");
  free(src);
  if (!k) return -1;

  /* arguments: out, inputs, n, the layout (shape then each operand's
   * strides, as struct cm_layout lays them out), the constants */
  const void *ptrs[3];
  for (int i = 0; i < c->nin; i++)
    if (!(ptrs[i] = cm_cuda_input_ptr(c->out->stream, c->in[i]))) return -1;
  int64_t packed[CM_MAX_DIMS * 5];
  int p = 0;
  for (int d = 0; d < l.nd; d++) packed[p++] = l.shape[d];
  for (int g = 0; g < l.ng; g++)
    for (int d = 0; d < l.nd; d++) packed[p++] = l.st[g][d];
  int32_t n32 = (int32_t)n;
  void *args[10];
  int a = 0;
  void *out_ptr = c->out_ptr;
  args[a++] = &out_ptr;
  for (int i = 0; i < c->nin; i++) args[a++] = (void *)&ptrs[i];
  args[a++] = spec.wide ? (void *)&n : (void *)&n32;
  if (l.ng) args[a++] = packed;
  float params[3];
  for (int i = 0; i < c->nparams; i++) params[i] = c->params[i], args[a++] = &params[i];

  const cm_cuda_device_props *dev = cm_cuda_device(c->out->stream.device.index);
  int64_t blocks = (n + 255) / 256, cap = (int64_t)(dev ? dev->sm_count : 1) * 32;
  if (blocks > cap) blocks = cap;
  cm_cuda_launch launch = {.func = k,
                           .grid = {(unsigned)blocks, 1, 1},
                           .block = {256, 1, 1},
                           .args = args,
                           .reads = c->in,
                           .nreads = c->nin,
                           .writes = &c->out,
                           .nwrites = 1};
  return cm_cuda_launch_kernel(c->out->stream, &launch);
}

/* out (allocated row-contiguous) = fn(inputs) over out's shape. */
static int ew_fresh(cm_array *out, const char *fn, cm_array *const *in, int nin,
                    const float *params, int nparams) {
  if (cm_alloc_output(out)) return -1;
  ew_call c = {.out = out, .out_ptr = cm_data(out), .ndim = out->ndim, .shape = out->shape,
               .fn = fn, .in = in, .nin = nin, .nparams = nparams};
  for (int i = 0; i < nparams; i++) c.params[i] = params[i];
  return ew_run(&c);
}

static int no_kernel(const char *prim, cm_dtype t) {
  return cm_error(CM_ERR_RUNTIME, "%s has no GPU implementation for %s.", prim, cm_dtype_name(t));
}

/* A constant as the kernel's dtype t would hold it (MLX rounds its scalar
 * arrays to the array's dtype before they meet the values). */
static float rounded(float v, cm_dtype t) {
  if (t == CM_FLOAT16) return cm_f16_to_f32(cm_f32_to_f16(v));
  if (t == CM_BFLOAT16) return cm_bf16_to_f32(cm_f32_to_bf16(v));
  return v;
}

int cm_cuda_unary(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_unary_params *up = cm_unary_params_of(out);
  const char *fn;
  if (!cm_cuda_unary_fn((int)up->op, in[0]->dtype, &fn))
    return no_kernel(cm_unary_op_name(up->op), in[0]->dtype);
  float params[3];
  int np = 0;
  cm_dtype t = in[0]->dtype;
  if (up->op == CM_UNARY_ROUND_DECIMALS) {
    params[np++] = rounded(up->scale, t);
    params[np++] = rounded(up->inv_scale, t);
  } else if (up->op == CM_UNARY_NAN_TO_NUM) {
    params[np++] = rounded(up->nan, t);
    params[np++] = rounded(up->posinf, t);
    params[np++] = rounded(up->neginf, t);
  }
  return ew_fresh(out, fn, in, 1, params, np);
}

int cm_cuda_binary(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  const cm_binary_params *bp = cm_binary_params_of(out);
  const char *fn;
  if (!cm_cuda_binary_fn((int)bp->op, in[0]->dtype, &fn))
    return no_kernel(cm_binary_op_name(bp->op), in[0]->dtype);
  return ew_fresh(out, fn, in, 2, NULL, 0);
}

int cm_cuda_select(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  return ew_fresh(out, "?:", in, 3, NULL, 0);
}

int cm_cuda_copy(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *src = in[0];
  if (src->size == out->size && src->ndim == out->ndim && src->dtype == out->dtype &&
      cm_row_contiguous(src) && src->buf && src->buf->device == CM_GPU) {
    /* already what a copy would produce: share it (arrays are immutable) */
    cm_share_layout(out, src, src->strides, src->offset, src->data_size);
    return 0;
  }
  return ew_fresh(out, NULL, in, 1, NULL, 0);
}

int cm_cuda_copy_strided(cm_array *dst, int64_t dst_offset, const int64_t *dst_strides, int ndim,
                         const int32_t *shape, const cm_array *src) {
  cm_array *srcs[1] = {(cm_array *)src};
  ew_call c = {.out = dst, .out_ptr = (char *)dst->buf->ptr + dst_offset,
               .out_strides = dst_strides, .ndim = ndim, .shape = shape, .in = srcs, .nin = 1};
  return ew_run(&c);
}
