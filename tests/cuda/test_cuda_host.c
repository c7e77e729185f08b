/* The CUDA backend's host-side logic, on any machine: graph dependency
 * tracking and topology keys, the instantiated-graph LRU, the small-block
 * pool, the commit thresholds, and the backend's registration on a
 * machine without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "backend/cuda/device.h"
#include "backend/cuda/encoder.h"
#include "backend/cuda/graph_plan.h"
#include "backend/cuda/small_pool.h"
#include "core/backend.h"
#include "core/check.h" /* tests/core/check.h */

/* edge (from, to) is among the plan's edges */
static bool has_edge(const cm_graph_plan *p, int from, int to) {
  for (size_t i = 0; i < p->n_edges; i++)
    if (p->edge_from[i] == from && p->edge_to[i] == to) return true;
  return false;
}

static int add(cm_graph_plan *p, uint64_t id, const void *r0, const void *r1, const void *w0) {
  const void *r[2] = {r0, r1}, *w[1] = {w0};
  size_t rb[2] = {1 << 20, 1 << 20}, wb[1] = {1 << 20};
  int nr = r1 ? 2 : (r0 ? 1 : 0);
  return cm_graph_plan_add(p, CM_GRAPH_KERNEL, id, r, rb, nr, w, wb, w0 ? 1 : 0);
}

static void test_dependencies(void) {
  char x, y, z, t;
  cm_graph_plan p;
  cm_graph_plan_init(&p);
  /* n0: y = f(x); n1: z = g(x) (independent); n2: t = h(y, z) */
  CHECK(add(&p, 1, &x, NULL, &y) == 0);
  CHECK(add(&p, 2, &x, NULL, &z) == 1);
  CHECK(p.n_edges == 0); /* two readers of x need no order */
  CHECK(add(&p, 3, &y, &z, &t) == 2);
  CHECK(p.n_edges == 2 && has_edge(&p, 0, 2) && has_edge(&p, 1, 2));
  /* n3 writes x in place (a donated input): after both readers of x */
  CHECK(add(&p, 4, &x, NULL, &x) == 3);
  CHECK(has_edge(&p, 0, 3) && has_edge(&p, 1, 3));
  CHECK(!has_edge(&p, 2, 3)); /* n2 never touched x */
  /* n4 reads x: after its last writer n3 only */
  CHECK(add(&p, 5, &x, NULL, NULL) == 4);
  CHECK(has_edge(&p, 3, 4) && !has_edge(&p, 0, 4));
  /* n5 writes t again: after t's writer n2 (write after write) */
  CHECK(add(&p, 6, NULL, NULL, &t) == 5);
  CHECK(has_edge(&p, 2, 5));
  size_t edges = p.n_edges;
  CHECK(p.updatable);
  uint64_t key = p.key;
  CHECK(p.bytes == (size_t)(1 + 1 + 1 + 1 + 2 + 1 + 1 + 1 + 1 + 1) << 20);

  /* the same launches again give the same key; a different kernel or a
   * different edge gives another */
  cm_graph_plan_reset(&p);
  CHECK(p.n_nodes == 0 && p.n_edges == 0 && p.bytes == 0);
  char x2, y2, z2, t2; /* other buffers, same topology */
  add(&p, 1, &x2, NULL, &y2);
  add(&p, 2, &x2, NULL, &z2);
  add(&p, 3, &y2, &z2, &t2);
  add(&p, 4, &x2, NULL, &x2);
  add(&p, 5, &x2, NULL, NULL);
  add(&p, 6, NULL, NULL, &t2);
  CHECK(p.key == key && p.n_edges == edges);
  cm_graph_plan_reset(&p);
  add(&p, 1, &x2, NULL, &y2);
  add(&p, 2, &y2, NULL, &z2); /* now depends on n0 */
  uint64_t k2 = p.key;
  cm_graph_plan_reset(&p);
  add(&p, 1, &x2, NULL, &y2);
  add(&p, 2, &x2, NULL, &z2);
  CHECK(p.key != k2);
  /* a child graph makes the plan not updatable */
  const void *r[1] = {&x2};
  CHECK(cm_graph_plan_add(&p, CM_GRAPH_CHILD, 0, r, NULL, 1, NULL, NULL, 0) == 2);
  CHECK(!p.updatable);
  cm_graph_plan_reset(&p);
  CHECK(p.updatable);

  /* many buffers: the table grows and keeps every history */
  enum { N = 5000 };
  char *bufs = malloc(N);
  for (int i = 0; i < N; i++) add(&p, 7, i ? &bufs[i - 1] : NULL, NULL, &bufs[i]);
  CHECK(p.n_nodes == N && p.n_edges == N - 1);
  bool chain = true;
  for (int i = 1; i < N; i++) chain = chain && has_edge(&p, i - 1, i);
  CHECK(chain);
  CHECK(cm_graph_plan_full(&p, 100, 1 << 20));
  CHECK(!cm_graph_plan_full(&p, N + 1, (size_t)1 << 40));
  free(bufs);
  cm_graph_plan_free(&p);
}

static int destroyed[16], ndestroyed;
static void note_destroy(void *v) { destroyed[ndestroyed++ % 16] = (int)(intptr_t)v; }

static void test_lru(void) {
  cm_graph_lru c;
  cm_graph_lru_init(&c, 2, note_destroy);
  CHECK(cm_graph_lru_put(&c, 10, (void *)1) == 0);
  CHECK(cm_graph_lru_put(&c, 20, (void *)2) == 0);
  CHECK(cm_graph_lru_get(&c, 10) == (void *)1); /* 10 is now the most recent */
  CHECK(cm_graph_lru_put(&c, 30, (void *)3) == 0);
  CHECK(ndestroyed == 1 && destroyed[0] == 2); /* 20 was least recently used */
  CHECK(cm_graph_lru_get(&c, 20) == NULL);
  CHECK(cm_graph_lru_take(&c, 10) == (void *)1 && c.n == 1);
  CHECK(cm_graph_lru_get(&c, 10) == NULL);
  CHECK(cm_graph_lru_put(&c, 30, (void *)4) == 0); /* replacing destroys the old value */
  CHECK(ndestroyed == 2 && destroyed[1] == 3);
  cm_graph_lru_free(&c);
  CHECK(ndestroyed == 3 && destroyed[2] == 4);
  cm_graph_lru_init(&c, 0, note_destroy); /* capacity 0 keeps nothing */
  CHECK(cm_graph_lru_put(&c, 1, (void *)5) == 0 && ndestroyed == 4 && c.n == 0);
  cm_graph_lru_free(&c);
}

static size_t slabs_out;
static void *slab_alloc(size_t n, void *ctx) {
  (void)ctx;
  slabs_out++;
  return aligned_alloc(256, n);
}
static void slab_free(void *p, size_t n, void *ctx) {
  (void)n, (void)ctx;
  slabs_out--;
  free(p);
}

static void test_small_pool(void) {
  cm_small_pool p;
  cm_small_pool_init(&p, slab_alloc, slab_free, NULL);
  enum { CELLS = CM_SMALL_SLAB / CM_SMALL_CELL };
  void *cells[CELLS + 1];
  for (int i = 0; i <= CELLS; i++) cells[i] = cm_small_pool_alloc(&p);
  CHECK(slabs_out == 2); /* one more cell than a slab holds */
  bool distinct = true;
  for (int i = 1; i <= CELLS; i++) distinct = distinct && cells[i] != cells[i - 1];
  CHECK(distinct);
  CHECK((char *)cells[1] - (char *)cells[0] == CM_SMALL_CELL); /* address order */
  CHECK(cm_small_pool_in_use(&p) == CELLS + 1);
  CHECK(cm_small_pool_owns(&p, cells[5]));
  char outside[8];
  CHECK(!cm_small_pool_owns(&p, outside));
  CHECK(!cm_small_pool_free(&p, outside));
  CHECK(!cm_small_pool_free(&p, (char *)cells[0] + 1)); /* not a cell's start */
  CHECK(cm_small_pool_free(&p, cells[7]));
  CHECK(cm_small_pool_alloc(&p) == cells[7]); /* freed cells are reused first */
  for (int i = 0; i <= CELLS; i++) CHECK(cm_small_pool_free(&p, cells[i]));
  CHECK(cm_small_pool_in_use(&p) == 0);
  cm_small_pool_destroy(&p);
  CHECK(slabs_out == 0);
}

static void test_limits(void) {
  int ops;
  size_t mb;
  unsetenv("MLX_MAX_OPS_PER_BUFFER");
  unsetenv("MLX_MAX_MB_PER_BUFFER");
  cm_cuda_graph_limits(9, 0, &ops, &mb); /* Hopper */
  CHECK(ops == 100 && mb == 1000);
  cm_cuda_graph_limits(8, 0, &ops, &mb); /* A100 */
  CHECK(ops == 20 && mb == 400);
  cm_cuda_graph_limits(7, 5, &ops, &mb); /* anything else: MLX's defaults */
  CHECK(ops == 20 && mb == 100);
  setenv("MLX_MAX_OPS_PER_BUFFER", "7", 1);
  setenv("MLX_MAX_MB_PER_BUFFER", "3", 1);
  cm_cuda_graph_limits(9, 0, &ops, &mb);
  CHECK(ops == 7 && mb == 3);
  unsetenv("MLX_MAX_OPS_PER_BUFFER");
  unsetenv("MLX_MAX_MB_PER_BUFFER");
}

/* Without a GPU the backend is registered with no device, and the GPU is
 * unavailable (MLX's CUDA build on such a machine). */
static void test_registration(void) {
  const cm_backend *b = cm_backend_for(CM_GPU);
  CHECK(b && !strcmp(b->name, "cuda"));
  CHECK(b && b->finish && b->allocator && b->allocator->default_limit_fraction == 0.95);
  if (cm_cuda_device_count() == 0) {
    CHECK(!cm_device_available((cm_device){CM_GPU, 0}));
    CHECK(cm_default_device().type == CM_CPU);
    CHECK(cm_buffer_alloc_on(CM_GPU, 16) == NULL); /* no memory without a device */
    cm_error_clear();
  } else {
    CHECK(cm_default_device().type == CM_GPU);
  }
}

int main(void) {
  test_dependencies();
  test_lru();
  test_small_pool();
  test_limits();
  test_registration();
  return check_report("test_cuda_host");
}
