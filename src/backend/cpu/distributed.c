/* CPU kernels of the collectives: flat, contiguous buffers in and out, the
 * moving done by the group's transport (distributed/comm.h). */
#include "backend/cpu/distributed.h"

#include <stdlib.h>
#include <string.h>

#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/types.h"
#include "core/error.h"
#include "distributed/check.h"
#include "primitives/distributed.h"

/* ---- element-wise reductions ---- */

#define R_SUM(a, x) ((a) + (x))
#define R_MAX(a, x) ((a) < (x) ? (x) : (a))
#define R_MIN(a, x) ((x) < (a) ? (x) : (a))
#define B_SUM(a, x) ((a) || (x))
#define C_LT(a, b) (crealf(a) < crealf(b) || (crealf(a) == crealf(b) && cimagf(a) < cimagf(b)))
#define C_MAX(a, x) (C_LT(a, x) ? (x) : (a))
#define C_MIN(a, x) (C_LT(x, a) ? (x) : (a))

#define PLAIN_LOOP(T, F) \
  for (size_t i = 0; i < n; i++) ((T *)acc)[i] = F(((T *)acc)[i], ((const T *)x)[i])
#define HALF_LOOP(TO, FROM, F)                                                  \
  for (size_t i = 0; i < n; i++) {                                              \
    float a_ = FROM(((uint16_t *)acc)[i]), x_ = FROM(((const uint16_t *)x)[i]); \
    ((uint16_t *)acc)[i] = TO(F(a_, x_));                                       \
  }

#define INT_CASES(F)                                                  \
  case CM_UINT8: PLAIN_LOOP(uint8_t, F); break;                       \
  case CM_UINT16: PLAIN_LOOP(uint16_t, F); break;                     \
  case CM_UINT32: PLAIN_LOOP(uint32_t, F); break;                     \
  case CM_UINT64: PLAIN_LOOP(uint64_t, F); break;                     \
  case CM_INT8: PLAIN_LOOP(int8_t, F); break;                         \
  case CM_INT16: PLAIN_LOOP(int16_t, F); break;                       \
  case CM_INT32: PLAIN_LOOP(int32_t, F); break;                       \
  case CM_INT64: PLAIN_LOOP(int64_t, F); break;                       \
  case CM_FLOAT32: PLAIN_LOOP(float, F); break;                       \
  case CM_FLOAT64: PLAIN_LOOP(double, F); break;                      \
  case CM_FLOAT16: HALF_LOOP(cm_f32_to_f16, cm_f16_to_f32, F); break; \
  case CM_BFLOAT16: HALF_LOOP(cm_f32_to_bf16, cm_bf16_to_f32, F); break;

void cm_cpu_reduce_into(void *acc, const void *x, size_t n, cm_dtype dt, int op) {
  switch (op) {
  case CM_REDUCE_SUM:
    switch (dt) {
      INT_CASES(R_SUM)
    case CM_BOOL: PLAIN_LOOP(bool, B_SUM); break;
    case CM_COMPLEX64: PLAIN_LOOP(cm_c64_t, R_SUM); break;
    default: break;
    }
    break;
  case CM_REDUCE_MAX:
    switch (dt) {
      INT_CASES(R_MAX)
    case CM_BOOL: PLAIN_LOOP(bool, R_MAX); break;
    case CM_COMPLEX64: PLAIN_LOOP(cm_c64_t, C_MAX); break;
    default: break;
    }
    break;
  case CM_REDUCE_MIN:
    switch (dt) {
      INT_CASES(R_MIN)
    case CM_BOOL: PLAIN_LOOP(bool, R_MIN); break;
    case CM_COMPLEX64: PLAIN_LOOP(cm_c64_t, C_MIN); break;
    default: break;
    }
    break;
  default: break; /* the transports are asked for sum, max and min only */
  }
}

/* ---- the kernels ---- */

static cm_comm *comm_of(const cm_array *node, const char *name) {
  cm_comm *c = cm_dist_params_of(node)->group->comm;
  if (!c)
    cm_error(CM_ERR_RUNTIME, "[%s] Communication not implemented in an empty distributed group.",
             name);
  return c;
}

/* x's elements in row-major order: its own data when row-contiguous, else
 * a malloc'd copy in *tmp (freed by the caller). */
static const void *flat_input(const cm_array *x, void **tmp) {
  *tmp = NULL;
  if (cm_row_contiguous(x) || x->size == 0) return cm_data(x);
  int64_t strides[CM_MAX_DIMS];
  cm_row_major_strides(x->ndim, x->shape, strides);
  *tmp = malloc(cm_nbytes(x));
  if (!*tmp) return cm_error(CM_ERR_MEMORY, "[distributed] Out of memory."), NULL;
  cm_cpu_copy_strided(*tmp, x->dtype, strides, cm_data(x), x->dtype, x->strides, x->ndim, x->shape);
  return *tmp;
}

int cm_cpu_all_reduce(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *x = in[0];
  cm_comm *c = comm_of(out, "AllReduce");
  if (!c) return -1;
  const void *src;
  if (cm_row_contiguous(x) && cm_try_donate(out, x)) {
    src = cm_data(out);
  } else if (cm_row_contiguous(x)) {
    if (cm_alloc_output(out)) return -1;
    src = cm_data(x);
  } else {
    if (cm_alloc_output(out)) return -1;
    cm_cpu_copy_strided(cm_data(out), out->dtype, out->strides, cm_data(x), x->dtype, x->strides,
                        x->ndim, x->shape);
    src = cm_data(out);
  }
  /* even when empty: with the check on, every rank takes part in it */
  return cm_comm_all_reduce(c, src, cm_data(out), (size_t)out->size, out->dtype,
                            (cm_reduce_op)cm_dist_params_of(out)->op);
}

int cm_cpu_all_gather(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_comm *c = comm_of(out, "AllGather");
  if (!c || cm_alloc_output(out)) return -1;
  void *tmp;
  const void *src = flat_input(in[0], &tmp);
  if (!src && in[0]->size) return -1;
  int rc = cm_comm_all_gather(c, src, cm_data(out), (size_t)in[0]->size, in[0]->dtype);
  free(tmp);
  return rc;
}

int cm_cpu_reduce_scatter(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_comm *c = comm_of(out, "ReduceScatter");
  if (!c || cm_alloc_output(out)) return -1;
  void *tmp;
  const void *src = flat_input(in[0], &tmp);
  if (!src && in[0]->size) return -1;
  int rc = cm_comm_reduce_scatter(c, src, cm_data(out), (size_t)out->size, out->dtype,
                                  (cm_reduce_op)cm_dist_params_of(out)->op);
  free(tmp);
  return rc;
}

int cm_cpu_send(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin, (void)p;
  cm_array *x = in[0];
  cm_comm *c = comm_of(out, "Send");
  if (!c) return -1;
  void *tmp;
  const void *src = flat_input(x, &tmp);
  if (!src && x->size) return -1;
  int rc = cm_comm_send(c, src, (size_t)x->size, x->dtype, cm_dist_params_of(out)->peer);
  free(tmp);
  if (rc) return -1;
  /* the output is x itself */
  cm_share_layout(out, x, x->strides, x->offset, x->data_size);
  return 0;
}

int cm_cpu_recv(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)in, (void)nin, (void)p;
  cm_comm *c = comm_of(out, "Recv");
  if (!c || cm_alloc_output(out)) return -1;
  return cm_comm_recv(c, cm_data(out), (size_t)out->size, out->dtype, cm_dist_params_of(out)->peer);
}
