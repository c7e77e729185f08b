#include "backend/cpu/strided.h"

void cm_layout_init(cm_layout *L, int ndim, const int32_t *shape, int nops,
                    const int64_t *const *strides) {
  L->nops = nops;
  int d = 0;
  for (int i = 0; i < ndim; i++) {
    if (shape[i] == 1) continue; /* size-1 axes never move the pointer */
    if (d > 0) {
      /* merge into the previous kept axis when every operand steps evenly */
      bool merge = true;
      for (int k = 0; k < nops && merge; k++)
        merge = L->strides[k][d - 1] == strides[k][i] * shape[i];
      if (merge) {
        L->shape[d - 1] *= shape[i];
        for (int k = 0; k < nops; k++) L->strides[k][d - 1] = strides[k][i];
        continue;
      }
    }
    L->shape[d] = shape[i];
    for (int k = 0; k < nops; k++) L->strides[k][d] = strides[k][i];
    d++;
  }
  if (d == 0) { /* scalar or all-ones shape */
    L->shape[0] = 1;
    for (int k = 0; k < nops; k++) L->strides[k][0] = 1;
    d = 1;
  }
  for (int i = 0; i < ndim; i++)
    if (shape[i] == 0) { /* empty: one row of length 0 */
      L->shape[0] = 0;
      d = 1;
      break;
    }
  L->ndim = d;
}

void cm_layout_of(cm_layout *L, cm_array *const *arrays, int n) {
  const int64_t *strides[CM_LAYOUT_MAX_OPS];
  for (int k = 0; k < n; k++) strides[k] = arrays[k]->strides;
  cm_layout_init(L, arrays[0]->ndim, arrays[0]->shape, n, strides);
}

void cm_row_cursor_seek(cm_row_cursor *c, const cm_layout *L, int64_t row) {
  c->L = L;
  for (int k = 0; k < L->nops; k++) c->offset[k] = 0;
  for (int i = L->ndim - 2; i >= 0; i--) {
    int64_t idx = row % L->shape[i];
    row /= L->shape[i];
    c->index[i] = idx;
    for (int k = 0; k < L->nops; k++) c->offset[k] += idx * L->strides[k][i];
  }
}

void cm_row_cursor_next(cm_row_cursor *c) {
  const cm_layout *L = c->L;
  for (int i = L->ndim - 2; i >= 0; i--) {
    for (int k = 0; k < L->nops; k++) c->offset[k] += L->strides[k][i];
    if (++c->index[i] < L->shape[i]) return;
    for (int k = 0; k < L->nops; k++) c->offset[k] -= L->strides[k][i] * L->shape[i];
    c->index[i] = 0;
  }
}
