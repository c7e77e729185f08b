#include "backend/cpu/binary_loop.h"

#include "core/threadpool.h"

/* ---- output buffer ------------------------------------------------------- */

static bool dense_permuted(const cm_array *a) {
  return cm_is_contiguous(a) && !cm_row_contiguous(a) && a->buf;
}

/* Strides agree on every axis that moves (size-1 axes never do). */
static bool same_strides(const cm_array *a, const cm_array *b) {
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != 1 && a->strides[i] != b->strides[i]) return false;
  return true;
}

static bool broadcast_scalar(const cm_array *a) {
  for (int i = 0; i < a->ndim; i++)
    if (a->shape[i] != 1 && a->strides[i] != 0) return false;
  return true;
}

int cm_ew_output(cm_array *out, cm_array *const *in, int n) {
  for (int i = 0; i < n; i++)
    if (cm_try_donate(out, in[i])) return 0;
  for (int i = 0; i < n; i++) {
    if (!dense_permuted(in[i])) continue;
    bool ok = true;
    for (int j = 0; j < n && ok; j++)
      ok = j == i || same_strides(in[i], in[j]) || broadcast_scalar(in[j]);
    if (ok) return cm_alloc_output_like(out, in[i]);
  }
  return cm_alloc_output(out);
}

/* ---- walking ------------------------------------------------------------- */

typedef struct ew_job {
  cm_layout L;
  cm_ew_seg_fn seg;
  void *ctx;
  char *const *data;
  int64_t isz[CM_LAYOUT_MAX_OPS];
  int64_t pieces, piece_len; /* few long rows: each is cut into `pieces` runs */
} ew_job;

static int64_t iabs64(int64_t v) { return v < 0 ? -v : v; }

/* Flat: one row, split by element ranges. */
static void run_flat(void *ctx, int64_t begin, int64_t end) {
  ew_job *j = ctx;
  char *ptrs[CM_LAYOUT_MAX_OPS];
  int64_t st[CM_LAYOUT_MAX_OPS];
  for (int k = 0; k < j->L.nops; k++) {
    st[k] = cm_layout_row_stride(&j->L, k);
    ptrs[k] = j->data[k] + begin * st[k] * j->isz[k];
  }
  j->seg(j->ctx, ptrs, st, end - begin, 1, st);
}

/* A range of whole rows: the rows that share their outer index go to seg
 * in one call (stepping along the second-to-last axis), so short rows cost
 * no call each. */
static void run_rows(void *ctx, int64_t begin, int64_t end) {
  ew_job *j = ctx;
  const cm_layout *L = &j->L;
  int d = L->ndim;
  int64_t len = L->shape[d - 1], inner = L->shape[d - 2];
  char *ptrs[CM_LAYOUT_MAX_OPS];
  int64_t st[CM_LAYOUT_MAX_OPS], rs[CM_LAYOUT_MAX_OPS];
  for (int k = 0; k < L->nops; k++) {
    st[k] = L->strides[k][d - 1];
    rs[k] = L->strides[k][d - 2];
  }
  for (int64_t r = begin; r < end;) {
    cm_row_cursor c;
    cm_row_cursor_seek(&c, L, r);
    int64_t count = inner - r % inner;
    if (count > end - r) count = end - r;
    for (int k = 0; k < L->nops; k++) ptrs[k] = j->data[k] + c.offset[k] * j->isz[k];
    j->seg(j->ctx, ptrs, st, len, count, rs);
    r += count;
  }
}

/* Units are (row, piece) pairs in row-major order. */
static void run_pieces(void *ctx, int64_t begin, int64_t end) {
  ew_job *j = ctx;
  const cm_layout *L = &j->L;
  int64_t len = cm_layout_row_len(L), row = begin / j->pieces, pc = begin % j->pieces;
  char *ptrs[CM_LAYOUT_MAX_OPS];
  int64_t st[CM_LAYOUT_MAX_OPS];
  for (int k = 0; k < L->nops; k++) st[k] = cm_layout_row_stride(L, k);
  cm_row_cursor c;
  cm_row_cursor_seek(&c, L, row);
  for (int64_t u = begin; u < end; u++) {
    int64_t start = pc * j->piece_len, stop = start + j->piece_len;
    if (stop > len) stop = len;
    if (start < stop) {
      for (int k = 0; k < L->nops; k++)
        ptrs[k] = j->data[k] + (c.offset[k] + start * st[k]) * j->isz[k];
      j->seg(j->ctx, ptrs, st, stop - start, 1, st);
    }
    if (++pc == j->pieces) {
      pc = 0;
      if (u + 1 < end) cm_row_cursor_next(&c);
    }
  }
}

/* Tiles: when an input runs against the loop order (a.T + b), walking
 * whole rows touches a new cache line and page per element of that input;
 * square tiles reuse each line for TILE rows. */
#define TILE 64

static bool wants_tiles(const cm_layout *L) {
  if (L->ndim != 2 || L->shape[0] < TILE / 2 || L->shape[1] < TILE / 2) return false;
  for (int k = 1; k < L->nops; k++) {
    int64_t s0 = iabs64(L->strides[k][0]), s1 = iabs64(L->strides[k][1]);
    if (s1 > 1 && s0 < s1) return true;
  }
  return false;
}

/* Units are tiles in row-major order; one call per tile. */
static void run_tiles(void *ctx, int64_t begin, int64_t end) {
  ew_job *j = ctx;
  const cm_layout *L = &j->L;
  int64_t R = L->shape[0], C = L->shape[1], tc = (C + TILE - 1) / TILE;
  char *ptrs[CM_LAYOUT_MAX_OPS];
  int64_t st[CM_LAYOUT_MAX_OPS], rs[CM_LAYOUT_MAX_OPS];
  for (int k = 0; k < L->nops; k++) {
    st[k] = L->strides[k][1];
    rs[k] = L->strides[k][0];
  }
  for (int64_t u = begin; u < end; u++) {
    int64_t r0 = (u / tc) * TILE, c0 = (u % tc) * TILE;
    int64_t rows = r0 + TILE < R ? TILE : R - r0, n = c0 + TILE < C ? TILE : C - c0;
    for (int k = 0; k < L->nops; k++) ptrs[k] = j->data[k] + (r0 * rs[k] + c0 * st[k]) * j->isz[k];
    j->seg(j->ctx, ptrs, st, n, rows, rs);
  }
}

/* Collapse the operands' dims after ordering them by the output's strides,
 * largest first: a permuted output (and inputs permuted the same way)
 * then merges into one flat run in memory order. */
static void ordered_layout(cm_layout *L, cm_array *const *arrays, int nops) {
  const cm_array *out = arrays[0];
  int perm[CM_MAX_DIMS], nd = 0;
  for (int i = 0; i < out->ndim; i++) {
    if (out->shape[i] == 1) continue;
    int64_t s = iabs64(out->strides[i]);
    int p = nd++;
    while (p > 0 && iabs64(out->strides[perm[p - 1]]) < s) { /* stable, descending */
      perm[p] = perm[p - 1];
      p--;
    }
    perm[p] = i;
  }
  int32_t shape[CM_MAX_DIMS];
  int64_t strides[CM_LAYOUT_MAX_OPS][CM_MAX_DIMS];
  const int64_t *sp[CM_LAYOUT_MAX_OPS] = {0};
  for (int d = 0; d < nd; d++) {
    shape[d] = out->shape[perm[d]];
    for (int k = 0; k < nops; k++) strides[k][d] = arrays[k]->strides[perm[d]];
  }
  for (int k = 0; k < nops; k++) sp[k] = strides[k];
  cm_layout_init(L, nd, shape, nops, sp);
}

void cm_ew_run(cm_array *const *arrays, char *const *data, int nops, int64_t cost, cm_ew_seg_fn seg,
               void *ctx) {
  if (arrays[0]->size == 0) return;
  ew_job j;
  ordered_layout(&j.L, arrays, nops);
  j.seg = seg;
  j.ctx = ctx;
  j.data = data;
  for (int k = 0; k < nops; k++) j.isz[k] = (int64_t)cm_itemsize(arrays[k]);
  /* about 16K cheap operations per chunk: below twice that the loop runs
   * inline, so a small op never wakes the pool */
  int64_t grain = (1 << 14) / (cost > 0 ? cost : 1);
  if (grain < 1) grain = 1;
  int64_t rows = cm_layout_rows(&j.L), len = cm_layout_row_len(&j.L);
  if (rows == 1) {
    cm_parallel_for(len, grain, run_flat, &j);
    return;
  }
  if (wants_tiles(&j.L)) {
    int64_t tiles = ((rows + TILE - 1) / TILE) * ((len + TILE - 1) / TILE);
    int64_t min_tiles = grain / (TILE * TILE);
    cm_parallel_for(tiles, min_tiles < 1 ? 1 : min_tiles, run_tiles, &j);
    return;
  }
  int threads = cm_num_threads();
  if (rows < threads && len >= 2 * grain) {
    /* few long rows: cut each into pieces so every thread gets work */
    j.pieces = (threads + rows - 1) / rows;
    if (j.pieces > len / grain) j.pieces = len / grain;
    j.piece_len = (len + j.pieces - 1) / j.pieces;
    cm_parallel_for(rows * j.pieces, 1, run_pieces, &j);
    return;
  }
  int64_t min_rows = grain / len;
  cm_parallel_for(rows, min_rows < 1 ? 1 : min_rows, run_rows, &j);
}
