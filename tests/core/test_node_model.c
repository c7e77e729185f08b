/* The node model from inside the core: parameter blocks (size checks,
 * variable-length blocks, destructors, equality, hashing, export bytes)
 * and multi-output nodes (one evaluation for every output, outputs that
 * outlive or are dropped before their siblings, memory released).  These
 * are internal contracts with no public API of their own, so this test
 * includes the core's headers; the C API tests stay on the public ones. */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/array.h"
#include "ops/binary.h"
#include "ops/creation.h"
#include "ops/shape.h"
#include "primitives/shape.h"
#include "primitives/binary.h"
#include "transforms/eval.h"

#include "check.h"


static cm_stream cpu(void) { return check_cpu_stream(); }

static float first_float(cm_array *a) { return *(const float *)cm_data(a); }

/* ---- a variable-length block with a destructor ---- */

typedef struct counted_params {
  int32_t n;      /* entries that follow */
  int32_t *freed; /* the destructor counts here */
  int32_t add[];  /* output k gets input + add[k] */
} counted_params;

static size_t counted_extent(const cm_params *p) {
  const counted_params *c = (const void *)p;
  return sizeof *c + sizeof(int32_t) * (size_t)(c->n < 0 ? 0 : c->n);
}
static void counted_destroy(cm_params *p) { (*((counted_params *)(void *)p)->freed)++; }

static int kernel_runs;
/* out, cm_output(out, 1), ... = in[0] + add[k] (float32 scalars) */
static int counted_eval(cm_array *out, cm_array *const *in, int nin, const cm_params *p) {
  (void)nin;
  const counted_params *c = (const void *)p;
  kernel_runs++;
  for (int k = 0; k < cm_num_outputs(out); k++) {
    cm_array *o = cm_output(out, k);
    if (cm_alloc_output(o)) return -1;
    *(float *)cm_data(o) = first_float(in[0]) + (float)c->add[k];
  }
  return 0;
}

static const cm_prim counted = {.name = "Counted",
                                .params_size = sizeof(counted_params),
                                .params_extent = counted_extent,
                                .params_destroy = counted_destroy,
                                .eval = counted_eval};

typedef struct {
  counted_params h;
  int32_t add[3];
} counted3;

static counted3 make3(int32_t *freed) { return (counted3){{3, freed}, {1, 2, 3}}; }
/* The block's own size (the struct above may carry tail padding). */
#define SIZE3 (sizeof(counted_params) + 3 * sizeof(int32_t))

static int make_group(cm_array *x, counted3 *p, cm_array **outs) {
  cm_dtype dt[3] = {CM_FLOAT32, CM_FLOAT32, CM_FLOAT32};
  int nd[3] = {0, 0, 0};
  const int32_t *sh[3] = {NULL, NULL, NULL};
  return cm_node_new_multi(3, dt, nd, sh, &counted, p, SIZE3, &x, 1, cpu(), outs);
}

static void test_param_sizes(void) {
  cm_array *x = cm_array_scalar_double(1.0, CM_FLOAT32);
  cm_binary_params bp = {CM_BINARY_ADD};
  cm_array *ins[2] = {x, x};
  /* a block of the wrong size is refused, and x is untouched */
  char big[sizeof bp + 4] = {0};
  CHECK(!cm_node_new(CM_FLOAT32, 0, NULL, &cm_prim_binary, big, sizeof big, ins, 2, cpu()));
  CHECK(cm_error_kind_get() == CM_ERR_RUNTIME && strstr(cm_error_message(), "expected"));
  cm_error_clear();
  CHECK(!cm_node_new(CM_FLOAT32, 0, NULL, &cm_prim_binary, NULL, 0, ins, 2, cpu()));
  cm_error_clear();
  CHECK(atomic_load(&x->refs) == 1);
  /* variable length: the header says how long the block is */
  int32_t freed = 0;
  counted3 p = make3(&freed);
  CHECK(!cm_node_new(CM_FLOAT32, 0, NULL, &counted, &p, SIZE3 - 4, &x, 1, cpu()));
  cm_error_clear();
  CHECK(freed == 0); /* a refused block stays the caller's */
  cm_array *a = cm_node_new(CM_FLOAT32, 0, NULL, &counted, &p, SIZE3, &x, 1, cpu());
  CHECK(a && a->params_size == SIZE3);
  cm_release(a); /* never evaluated: the destructor runs on free */
  CHECK(freed == 1);
  a = cm_node_new(CM_FLOAT32, 0, NULL, &counted, &p, SIZE3, &x, 1, cpu());
  CHECK(cm_eval(&a, 1) == 0 && first_float(a) == 2.0f);
  CHECK(freed == 2); /* evaluated: the graph (and the block) is dropped */
  cm_release(a);
  CHECK(freed == 2);
  /* blocks larger than the inline space live on the heap */
  struct {
    counted_params h;
    int32_t add[40];
  } large = {{40, &freed}, {7}};
  a = cm_node_new(CM_FLOAT32, 0, NULL, &counted, &large, sizeof(counted_params) + 40 * sizeof(int32_t), &x, 1, cpu());
  CHECK(a && (void *)a->params != (void *)a->params_inline);
  CHECK(cm_eval(&a, 1) == 0 && first_float(a) == 8.0f);
  cm_release(a);
  CHECK(freed == 3);
  CHECK(atomic_load(&x->refs) == 1);
  cm_release(x);
}

static void test_equal_hash_save(void) {
  cm_array *x = cm_array_scalar_double(2.0, CM_FLOAT32);
  cm_array *a = cm_add(x, x, CM_STREAM_DEFAULT), *b = cm_add(x, x, CM_STREAM_DEFAULT);
  cm_array *c = cm_multiply(x, x, CM_STREAM_DEFAULT);
  CHECK(cm_node_params_equal(a, b) && cm_node_params_hash(a) == cm_node_params_hash(b));
  CHECK(!cm_node_params_equal(a, c) && cm_node_params_hash(a) != cm_node_params_hash(c));
  cm_bytes bytes = {0};
  CHECK(cm_node_params_save(a, &bytes) == 0 && bytes.len == sizeof(cm_binary_params));
  cm_params *p = NULL;
  size_t size = 0;
  CHECK(cm_params_load(&cm_prim_binary, bytes.data, bytes.len, &p, &size) == 0 && size == bytes.len);
  CHECK(p && ((const cm_binary_params *)(void *)p)->op == CM_BINARY_ADD);
  cm_params_free(&cm_prim_binary, p);
  /* a truncated or padded block is refused, as a hostile file must be */
  CHECK(cm_params_load(&cm_prim_binary, bytes.data, bytes.len - 1, &p, &size) != 0 && !p);
  cm_error_clear();
  /* a block holding pointers cannot be written out without hooks */
  int32_t freed = 0;
  counted3 q = make3(&freed);
  cm_array *d = cm_node_new(CM_FLOAT32, 0, NULL, &counted, &q, SIZE3, &x, 1, cpu());
  bytes.len = 0;
  CHECK(cm_node_params_save(d, &bytes) != 0 && cm_error_kind_get() == CM_ERR_VALUE);
  cm_error_clear();
  free(bytes.data);
  cm_release(d);
  cm_release(a);
  cm_release(b);
  cm_release(c);
  cm_release(x);
}

static void test_siblings(void) {
  cm_array *x = cm_array_scalar_double(10.0, CM_FLOAT32);
  int32_t freed = 0;
  counted3 p = make3(&freed);
  cm_array *o[3];
  CHECK(make_group(x, &p, o) == 0);
  CHECK(cm_num_outputs(o[1]) == 3 && cm_output(o[2], 0) == o[0] && o[1]->position == 1);
  /* evaluating one output computes all of them, once */
  kernel_runs = 0;
  CHECK(cm_eval(&o[1], 1) == 0);
  CHECK(kernel_runs == 1 && cm_is_evaluated(o[0]) && cm_is_evaluated(o[2]));
  CHECK(first_float(o[0]) == 11.0f && first_float(o[1]) == 12.0f && first_float(o[2]) == 13.0f);
  CHECK(freed == 1 && atomic_load(&x->refs) == 1); /* graph dropped for all */
  /* a dropped output gives its buffer back at once; the others stay */
  size_t before = cm_memory_active();
  cm_release(o[0]);
  CHECK(cm_memory_active() < before);
  CHECK(first_float(o[1]) == 12.0f && first_float(o[2]) == 13.0f);
  cm_release(o[2]);
  CHECK(first_float(o[1]) == 12.0f);
  cm_release(o[1]);

  /* outputs dropped before evaluation: the survivor still evaluates */
  CHECK(make_group(x, &p, o) == 0);
  CHECK(atomic_load(&x->refs) == 2);
  cm_release(o[0]);
  cm_release(o[1]);
  kernel_runs = 0;
  CHECK(cm_eval(&o[2], 1) == 0 && kernel_runs == 1 && first_float(o[2]) == 13.0f);
  CHECK(freed == 2);
  cm_release(o[2]);
  CHECK(atomic_load(&x->refs) == 1);

  /* every handle dropped before evaluation: the group and its block go */
  CHECK(make_group(x, &p, o) == 0);
  for (int k = 0; k < 3; k++) cm_release(o[k]);
  CHECK(freed == 3 && atomic_load(&x->refs) == 1);

  /* an output reached again through a sibling is alive again */
  CHECK(make_group(x, &p, o) == 0);
  cm_release(o[0]);
  cm_array *again = cm_retain(cm_output(o[1], 0));
  cm_release(o[1]);
  cm_release(o[2]);
  CHECK(freed == 3);
  CHECK(cm_eval(&again, 1) == 0 && first_float(again) == 11.0f);
  cm_release(again);
  CHECK(freed == 4 && atomic_load(&x->refs) == 1);

  /* the sibling of a multi-output node in a chain of ordinary nodes */
  CHECK(make_group(x, &p, o) == 0);
  cm_array *sum = cm_add(o[0], o[2], CM_STREAM_DEFAULT);
  for (int k = 0; k < 3; k++) cm_release(o[k]);
  CHECK(sum && cm_eval(&sum, 1) == 0 && first_float(sum) == 24.0f);
  cm_release(sum);
  CHECK(freed == 5 && atomic_load(&x->refs) == 1);
  cm_release(x);
}

static void test_divmod(void) {
  float av[4] = {7, -7, 5.5f, -0.5f}, bv[4] = {2, 2, -2, 3};
  int32_t sh = 4;
  cm_array *a = cm_array_from_data(av, 1, &sh, CM_FLOAT32), *b = cm_array_from_data(bv, 1, &sh, CM_FLOAT32);
  cm_array *q, *r;
  CHECK(cm_divmod(a, b, &q, &r, CM_STREAM_DEFAULT) == 0);
  CHECK(q->sib && q->sib == r->sib && strcmp(q->prim->name, "DivMod") == 0);
  cm_release(a); /* the node holds the inputs */
  cm_release(b);
  CHECK(cm_eval(&r, 1) == 0 && cm_is_evaluated(q));
  const float *qd = cm_data(q), *rd = cm_data(r);
  float qe[4] = {3, -4, -3, -1}, re[4] = {1, 1, -0.5f, 2.5f};
  for (int i = 0; i < 4; i++) CHECK(qd[i] == qe[i] && rd[i] == re[i]);
  cm_release(q);
  CHECK(((const float *)cm_data(r))[3] == 2.5f);
  cm_release(r);
}

/* Blocks sized by their contents: a slice of every axis of a 6-d array and
 * an as_strided view of 9 dimensions are one node each. */
static void test_variable_blocks(void) {
  int32_t shape[6] = {3, 3, 3, 3, 3, 3};
  cm_array *a = cm_arange(0, 729, 1, CM_FLOAT32, CM_STREAM_DEFAULT);
  cm_array *b = cm_reshape(a, 6, shape, CM_STREAM_DEFAULT);
  int32_t start[6] = {1, 1, 1, 1, 1, 2}, stop[6] = {3, 3, 3, 3, 3, 3}, step[6] = {1, 1, 1, 1, 1, 1};
  cm_array *c = cm_slice(b, 6, start, 6, stop, 6, step, CM_STREAM_DEFAULT);
  CHECK(c && c->prim == &cm_prim_slice && c->in[0] == b);
  CHECK(c->params_size == cm_slice_params_size(c->params) && ((const cm_slice_params *)(void *)c->params)->n == 6);
  CHECK(cm_eval(&c, 1) == 0 && c->size == 32);
  /* element [0,..,0] of the window is b[1,1,1,1,1,2] */
  CHECK(first_float(c) == 243 + 81 + 27 + 9 + 3 + 2);
  int32_t vshape[9] = {2, 2, 2, 2, 2, 2, 2, 2, 2};
  int64_t vstrides[9] = {256, 128, 64, 32, 16, 8, 4, 2, 1};
  cm_array *v = cm_as_strided(a, 9, vshape, 9, vstrides, 1, CM_STREAM_DEFAULT);
  CHECK(v && v->prim == &cm_prim_as_strided && v->nin == 1);
  CHECK(cm_eval(&v, 1) == 0 && first_float(v) == 1.0f && v->strides[0] == 256);
  /* a header claiming more entries than the block holds is refused */
  cm_slice_params bad = {.n = 3};
  cm_array *x = cm_node_new(CM_FLOAT32, 6, shape, &cm_prim_slice, &bad, offsetof(cm_slice_params, ax), &b, 1,
                            cpu());
  CHECK(!x && cm_error_kind_get() == CM_ERR_RUNTIME);
  cm_error_clear();
  bad.n = 1000;
  x = cm_node_new(CM_FLOAT32, 6, shape, &cm_prim_slice, &bad, sizeof bad, &b, 1, cpu());
  CHECK(!x);
  cm_error_clear();
  cm_release(v);
  cm_release(c);
  cm_release(b);
  cm_release(a);
}

int main(void) {
  test_param_sizes();
  test_equal_hash_save();
  test_siblings();
  test_divmod();
  test_variable_blocks();
  return check_report("test_node_model");
}
