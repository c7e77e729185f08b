/* Every kernel the CUDA backend's tables promise compiles: the elementwise
 * ops over every dtype of their rows (contiguous, scalar and strided
 * inputs, 32- and 64-bit indices), the copies between every pair of
 * dtypes, Select, and the reductions.  NVRTC compiles for sm_90 (the GPU
 * machine's H200) without a device, so this runs on any machine with the
 * CUDA toolkit's NVRTC; without NVRTC it says so and passes.  The kernels
 * are batched many to a program (renamed apart) to keep it fast. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/elementwise.h"
#include "backend/cuda/jit.h"
#include "backend/cuda/libs.h"
#include "backend/cuda/reduce.h"
#include "core/check.h" /* tests/core/check.h */
#include "core/strbuf.h"
#include "ops/binary.h"
#include "ops/unary.h"
#include "primitives/reduce.h"

/* ---- batching ---- */
typedef struct batch {
  cm_strbuf text;
  int n, total;
} batch;

/* Append src with its kernel and layout names made unique. */
static void batch_add(batch *b, char *src) {
  CHECK(src != NULL);
  if (!src) return;
  static const char *names[] = {"cm_layout", "cm_rlayout", "cm_ew(", "cm_reduce("};
  int id = b->total++;
  for (const char *s = src; *s;) {
    size_t best = 0;
    int which = -1;
    for (int k = 0; k < 4; k++)
      if (!strncmp(s, names[k], strlen(names[k]))) best = strlen(names[k]), which = k;
    if (which < 0) {
      cm_strbuf_put(&b->text, s, 1);
      s++;
      continue;
    }
    bool call = names[which][best - 1] == '(';
    cm_strbuf_put(&b->text, names[which], best - (call ? 1 : 0));
    cm_strbuf_printf(&b->text, "_%d%s", id, call ? "(" : "");
    s += best;
  }
  free(src);
  if (++b->n == 150) {
    void *img = NULL;
    size_t size = 0;
    int rc = cm_cuda_jit_compile(b->text.s, "sm_90", &img, &size);
    if (rc) fprintf(stderr, "%s\n", cm_error_message());
    CHECK(rc == 0 && size > 0);
    free(img);
    b->text.len = 0;
    b->text.s[0] = 0;
    b->n = 0;
  }
}

static void batch_flush(batch *b) {
  if (!b->n) return;
  b->n = 149;
  batch_add(b, strdup("")); /* compiles what is there */
  b->total--;
}

/* ---- what the tables promise ---- */
static cm_dtype unary_out(int op, cm_dtype in) {
  static const char outs[] = {
#define CM_X(CODE, name, Name, out, ...) [CM_UNARY_##CODE] = #out[0],
      CM_UNARY_OPS(CM_X)
#undef CM_X
  };
  switch (outs[op]) {
  case 'B': return CM_BOOL;                                /* BOOL */
  case 'R': return in == CM_COMPLEX64 ? CM_FLOAT32 : in;   /* REAL */
  default: return in;                                      /* SAME, FLOAT */
  }
}

static bool binary_is_comparison(int op) {
  return (op >= CM_BINARY_EQUAL && op <= CM_BINARY_GREATER_EQUAL) ||
         op == CM_BINARY_LOGICAL_AND || op == CM_BINARY_LOGICAL_OR || op == CM_BINARY_LOGICAL_XOR;
}

int main(void) {
  if (!cm_nvrtc()) {
    printf("test_cuda_kernels: NVRTC is not available here (%s); nothing compiled\n",
           cm_error_message());
    return 0;
  }
  batch b = {0};
  int kernels = 0;
  for (int op = 0; op < CM_UNARY_NUM_OPS; op++)
    for (int t = 0; t < CM_NUM_DTYPES; t++) {
      const char *fn;
      if (!cm_cuda_unary_fn(op, (cm_dtype)t, &fn)) continue;
      int np = op == CM_UNARY_ROUND_DECIMALS ? 2 : op == CM_UNARY_NAN_TO_NUM ? 3 : 0;
      cm_ew_spec s = {.fn = fn, .nin = 1, .in = {(cm_dtype)t}, .out = unary_out(op, (cm_dtype)t),
                      .mode = {CM_EW_CONTIGUOUS}, .nparams = np};
      batch_add(&b, cm_cuda_ew_source(&s));
      s.mode[0] = CM_EW_STRIDED, s.nd = 3, s.wide = true;
      batch_add(&b, cm_cuda_ew_source(&s));
      kernels += 2;
    }
  for (int op = 0; op < CM_BINARY_NUM_OPS; op++)
    for (int t = 0; t < CM_NUM_DTYPES; t++) {
      const char *fn;
      if (!cm_cuda_binary_fn(op, (cm_dtype)t, &fn)) continue;
      cm_dtype out = binary_is_comparison(op) ? CM_BOOL : (cm_dtype)t;
      cm_ew_spec s = {.fn = fn, .nin = 2, .in = {(cm_dtype)t, (cm_dtype)t}, .out = out,
                      .mode = {CM_EW_CONTIGUOUS, CM_EW_SCALAR}};
      batch_add(&b, cm_cuda_ew_source(&s));
      s.mode[0] = CM_EW_STRIDED, s.mode[1] = CM_EW_STRIDED, s.nd = 2, s.wide = true;
      batch_add(&b, cm_cuda_ew_source(&s));
      kernels += 2;
    }
  for (int t = 0; t < CM_NUM_DTYPES; t++) {
    for (int u = 0; u < CM_NUM_DTYPES; u++) { /* every copy and cast */
      cm_ew_spec s = {.nin = 1, .in = {(cm_dtype)t}, .out = (cm_dtype)u, .mode = {CM_EW_STRIDED},
                      .nd = 2, .out_strided = u % 2 == 0};
      batch_add(&b, cm_cuda_ew_source(&s));
      kernels++;
    }
    cm_ew_spec sel = {.fn = "?:", .nin = 3, .in = {CM_BOOL, (cm_dtype)t, (cm_dtype)t},
                      .out = (cm_dtype)t, .mode = {CM_EW_STRIDED, CM_EW_CONTIGUOUS, CM_EW_SCALAR},
                      .nd = 1};
    batch_add(&b, cm_cuda_ew_source(&sel));
    kernels++;
    for (int op = CM_REDUCE_SUM; op <= CM_REDUCE_OR; op++) {
      if ((op == CM_REDUCE_MAX || op == CM_REDUCE_MIN) && t == CM_COMPLEX64) {
        char *none = cm_cuda_reduce_source(op, (cm_dtype)t, (cm_dtype)t, 1, 1);
        CHECK(none == NULL); /* no kernel: a clear error instead */
        cm_error_clear();
        continue;
      }
      cm_dtype out = cm_reduce_result_type((cm_reduce_op)op, (cm_dtype)t);
      batch_add(&b, cm_cuda_reduce_source(op, (cm_dtype)t, out, 2, 1));
      kernels++;
    }
  }
  batch_flush(&b);
  free(b.text.s);
  printf("test_cuda_kernels: %d kernels compiled for sm_90\n", kernels);
  return check_report("test_cuda_kernels");
}
