/* C API indexing: take, take_along_axis, put_along_axis, gather, scatter
 * and its reductions, masked_scatter, the combining slice updates, their
 * errors, out-of-range indices, and gradients through gather and scatter.
 * Expected values agree with MLX 0.32 (worked by hand or printed by it). */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;

static mlx_array arr_i32(const int32_t *v, const int *shape, int ndim) {
  return mlx_array_new_data(v, shape, ndim, MLX_INT32);
}

/* arange(12) as (3, 4) int32 */
static mlx_array a34(void) {
  int32_t v[12];
  for (int i = 0; i < 12; i++) v[i] = i;
  int shape[2] = {3, 4};
  return arr_i32(v, shape, 2);
}

/* The call builds fine but evaluating it fails with `needle`. */
#define EXPECT_EVAL_FAILS(call, needle)        \
  do {                                         \
    mlx_array r_ = mlx_array_new();            \
    CHECK((call) == 0);                        \
    CHECK_FAILS(mlx_array_eval(r_), needle);   \
    mlx_array_free(r_);                        \
  } while (0)

static void test_take(void) {
  mlx_array a = a34();
  int32_t iv[3] = {0, 5, -1};
  mlx_array idx = vec_i32(iv, 3);
  EXPECT(mlx_take(&r_, a, idx, S), "array([0, 5, 11], dtype=int32)");
  int32_t cv[2] = {0, 3};
  int cshape[2] = {1, 2};
  mlx_array cidx = arr_i32(cv, cshape, 2);
  EXPECT(mlx_take_axis(&r_, a, cidx, 1, S),
         "array([[[0, 3]],\n       [[4, 7]],\n       [[8, 11]]], dtype=int32)");
  EXPECT(mlx_take_axis(&r_, a, idx, -2, S),
         "array([[0, 1, 2, 3],\n       [8, 9, 10, 11],\n       [8, 9, 10, 11]], dtype=int32)");
  /* out of range: clamped by default (MLX reads out of bounds) */
  int32_t ov[2] = {100, -100};
  mlx_array oidx = vec_i32(ov, 2);
  EXPECT(mlx_take(&r_, a, oidx, S), "array([11, 0], dtype=int32)");
  /* any integer dtype indexes; 0-d indices drop the axis */
  uint8_t u = 2;
  mlx_array uidx = mlx_array_new_data(&u, NULL, 0, MLX_UINT8);
  EXPECT(mlx_take_axis(&r_, a, uidx, 0, S), "array([8, 9, 10, 11], dtype=int32)");

  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_take_axis(&r, a, idx, 2, S), "[take] Received invalid axis 2 for array with 2 dimensions.");
  float fv = 1.0f;
  mlx_array fidx = vec_f32(&fv, 1);
  CHECK_FAILS(mlx_take(&r, a, fidx, S), "[gather] Got indices with invalid dtype. Indices must be integral.");
  mlx_array bidx = mlx_array_new_bool(true);
  CHECK_FAILS(mlx_take(&r, a, bidx, S), "Boolean indices not supported.");
  int eshape[2] = {0, 3};
  mlx_array empty = mlx_array_new_data(NULL, eshape, 2, MLX_FLOAT32);
  CHECK_FAILS(mlx_take_axis(&r, empty, idx, 0, S), "[take] Cannot do a non-empty take from an empty axis.");
  CHECK_FAILS(mlx_take(&r, mlx_array_new(), idx, S), "non-empty");
  mlx_array_free(r);
  mlx_array_free(empty);
  mlx_array_free(bidx);
  mlx_array_free(fidx);
  mlx_array_free(uidx);
  mlx_array_free(oidx);
  mlx_array_free(cidx);
  mlx_array_free(idx);
  mlx_array_free(a);
}

static void test_along_axis(void) {
  mlx_array a = a34();
  int32_t iv[3] = {0, 1, 2};
  int ishape[2] = {3, 1};
  mlx_array idx = arr_i32(iv, ishape, 2);
  EXPECT(mlx_take_along_axis(&r_, a, idx, 1, S), "array([[0],\n       [5],\n       [10]], dtype=int32)");
  EXPECT(mlx_take_along_axis(&r_, a, idx, -1, S), "array([[0],\n       [5],\n       [10]], dtype=int32)");
  int32_t hundred = 100;
  int one_shape[2] = {1, 1};
  mlx_array v = arr_i32(&hundred, one_shape, 2);
  EXPECT(mlx_put_along_axis(&r_, a, idx, v, 1, S),
         "array([[100, 1, 2, 3],\n       [4, 100, 6, 7],\n       [8, 9, 100, 11]], dtype=int32)");
  /* repeated indices: put keeps the last write, scatter_add accumulates */
  int32_t rv[2] = {0, 0}, vals[2] = {5, 6};
  int rshape[2] = {1, 2};
  mlx_array ridx = arr_i32(rv, rshape, 2), rvals = arr_i32(vals, rshape, 2);
  EXPECT(mlx_put_along_axis(&r_, a, ridx, rvals, 1, S),
         "array([[6, 1, 2, 3],\n       [6, 5, 6, 7],\n       [6, 9, 10, 11]], dtype=int32)");
  EXPECT(mlx_scatter_add_axis(&r_, a, ridx, rvals, 1, S),
         "array([[11, 1, 2, 3],\n       [15, 5, 6, 7],\n       [19, 9, 10, 11]], dtype=int32)");

  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_take_along_axis(&r, a, idx, 2, S),
              "[take_along_axis] Axis 2 is out of bounds for array with 2 dimensions.");
  int32_t flat[2] = {0, 1};
  mlx_array fidx = vec_i32(flat, 2);
  CHECK_FAILS(mlx_take_along_axis(&r, a, fidx, 1, S),
              "[take_along_axis] Indices of dimension 1 does not match array of dimension 2.");
  int32_t two[4] = {0, 1, 0, 1};
  int tshape[2] = {2, 2};
  mlx_array tidx = arr_i32(two, tshape, 2);
  CHECK_FAILS(mlx_take_along_axis(&r, a, tidx, 1, S), "[broadcast_shapes] Shapes (3) and (2) cannot be broadcast.");
  CHECK_FAILS(mlx_put_along_axis(&r, a, idx, v, 3, S),
              "[put_along_axis] Axis 3 is out of bounds for array with 2 dimensions.");
  mlx_array_free(r);
  mlx_array_free(tidx);
  mlx_array_free(fidx);
  mlx_array_free(ridx);
  mlx_array_free(rvals);
  mlx_array_free(v);
  mlx_array_free(idx);
  mlx_array_free(a);
}

static void test_gather(void) {
  mlx_array a = a34();
  int32_t iv[2] = {2, 0};
  mlx_array idx = vec_i32(iv, 2);
  int axes[1] = {0}, sizes[2] = {1, 2};
  mlx_vector_array vec = mlx_vector_array_new_value(idx);
  EXPECT(mlx_gather(&r_, a, vec, axes, 1, sizes, 2, S),
         "array([[[8, 9]],\n       [[0, 1]]], dtype=int32)");
  EXPECT(mlx_gather_single(&r_, a, idx, 0, sizes, 2, S),
         "array([[[8, 9]],\n       [[0, 1]]], dtype=int32)");
  /* two index arrays broadcast together */
  int32_t i1[2] = {1, 3};
  mlx_array idx1 = vec_i32(i1, 2);
  mlx_array both[2] = {idx, idx1};
  mlx_vector_array vec2 = mlx_vector_array_new_data(both, 2);
  int axes2[2] = {0, 1}, ones[2] = {1, 1};
  EXPECT(mlx_gather(&r_, a, vec2, axes2, 2, ones, 2, S), "array([[[9]],\n       [[3]]], dtype=int32)");
  /* no index arrays: the slice at the origin */
  mlx_vector_array none = mlx_vector_array_new();
  int win[2] = {2, 2};
  EXPECT(mlx_gather(&r_, a, none, NULL, 0, win, 2, S), "array([[0, 1],\n       [4, 5]], dtype=int32)");

  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_gather(&r, a, vec, axes2, 2, sizes, 2, S),
              "[gather] Number of index arrays does not match number of axes.");
  int bad_sizes[2] = {1, 5};
  CHECK_FAILS(mlx_gather(&r, a, vec, axes, 1, bad_sizes, 2, S),
              "[gather] Slice sizes must be in [0, a.shape(i)]. Got (1,5) for array with shape (3,4).");
  CHECK_FAILS(mlx_gather(&r, a, vec, axes, 1, sizes, 1, S),
              "[gather] Got slice_sizes with size 1 for array with 2 dimensions.");
  int same[2] = {0, 0};
  CHECK_FAILS(mlx_gather(&r, a, vec2, same, 2, ones, 2, S), "[gather] Repeat axes not allowed in gather.");
  int far[1] = {2};
  CHECK_FAILS(mlx_gather(&r, a, vec, far, 1, sizes, 2, S), "[gather] Axes don't match array dimensions.");
  mlx_array_free(r);
  mlx_vector_array_free(none);
  mlx_vector_array_free(vec2);
  mlx_vector_array_free(vec);
  mlx_array_free(idx1);
  mlx_array_free(idx);
  mlx_array_free(a);
}

static void test_scatter(void) {
  int32_t zv[4] = {0, 0, 0, 0}, iv[3] = {0, 0, 3}, uv[3] = {1, 2, 3};
  mlx_array a = vec_i32(zv, 4), idx = vec_i32(iv, 3);
  int ushape[2] = {3, 1};
  mlx_array upd = arr_i32(uv, ushape, 2);
  EXPECT(mlx_scatter_single(&r_, a, idx, upd, 0, S), "array([2, 0, 0, 3], dtype=int32)");
  EXPECT(mlx_scatter_add_single(&r_, a, idx, upd, 0, S), "array([3, 0, 0, 3], dtype=int32)");
  EXPECT(mlx_scatter_max_single(&r_, a, idx, upd, 0, S), "array([2, 0, 0, 3], dtype=int32)");
  EXPECT(mlx_scatter_min_single(&r_, a, idx, upd, 0, S), "array([0, 0, 0, 0], dtype=int32)");
  int32_t onesv[4] = {1, 1, 1, 1};
  mlx_array ones = vec_i32(onesv, 4);
  EXPECT(mlx_scatter_prod_single(&r_, ones, idx, upd, 0, S), "array([2, 1, 1, 3], dtype=int32)");
  mlx_vector_array vec = mlx_vector_array_new_value(idx);
  int axes[1] = {0};
  EXPECT(mlx_scatter_add(&r_, a, vec, upd, axes, 1, S), "array([3, 0, 0, 3], dtype=int32)");
  /* updates are cast to the array's dtype */
  float fu[3] = {1.5f, 2.5f, 3.5f};
  int fshape[2] = {3, 1};
  mlx_array fupd = mlx_array_new_data(fu, fshape, 2, MLX_FLOAT32);
  EXPECT(mlx_scatter_add_single(&r_, a, idx, fupd, 0, S), "array([3, 0, 0, 3], dtype=int32)");
  /* out-of-range writes are dropped; negative indices wrap */
  int32_t ov[3] = {7, -1, -9};
  mlx_array oidx = vec_i32(ov, 3);
  EXPECT(mlx_scatter_single(&r_, a, oidx, upd, 0, S), "array([0, 0, 0, 2], dtype=int32)");
  /* windows: rows of a (3, 4) */
  mlx_array m = a34();
  int32_t rv[2] = {2, 2};
  mlx_array ridx = vec_i32(rv, 2);
  int32_t rows[8] = {1, 1, 1, 1, 10, 10, 10, 10};
  int rshape[3] = {2, 1, 4};
  mlx_array rupd = arr_i32(rows, rshape, 3);
  EXPECT(mlx_scatter_add_single(&r_, m, ridx, rupd, 0, S),
         "array([[0, 1, 2, 3],\n       [4, 5, 6, 7],\n       [19, 20, 21, 22]], dtype=int32)");

  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_scatter_single(&r, a, idx, a, 0, S),
              "[scatter] Updates with 1 dimensions does not match the sum of the array (1) and indices (1) dimensions.");
  int bshape[2] = {2, 1};
  mlx_array bupd = arr_i32(uv, bshape, 2);
  CHECK_FAILS(mlx_scatter_single(&r, a, idx, bupd, 0, S),
              "[scatter] Update shape (2,1) is not valid for broadcasted index shape (3).");
  int32_t big[15] = {0};
  int gshape[2] = {3, 5};
  mlx_array gupd = arr_i32(big, gshape, 2);
  CHECK_FAILS(mlx_scatter_single(&r, a, idx, gupd, 0, S),
              "[scatter] Updates with shape (3,5) are too large for array with shape (4).");
  mlx_array_free(r);
  mlx_array_free(gupd);
  mlx_array_free(bupd);
  mlx_array_free(rupd);
  mlx_array_free(ridx);
  mlx_array_free(m);
  mlx_array_free(oidx);
  mlx_array_free(fupd);
  mlx_vector_array_free(vec);
  mlx_array_free(ones);
  mlx_array_free(upd);
  mlx_array_free(idx);
  mlx_array_free(a);
}

static void test_masked_scatter(void) {
  int32_t av[6] = {0, 1, 2, 3, 4, 5};
  int shape[2] = {2, 3};
  mlx_array a = arr_i32(av, shape, 2);
  bool mv[6] = {true, false, true, false, true, false};
  mlx_array mask = mlx_array_new_data(mv, shape, 2, MLX_BOOL);
  int32_t sv[3] = {10, 20, 30};
  mlx_array src = vec_i32(sv, 3);
  EXPECT(mlx_masked_scatter(&r_, a, mask, src, S), "array([[10, 1, 20],\n       [3, 30, 5]], dtype=int32)");
  /* a mask over the leading axis: rows, the value repeated per row */
  bool rm[2] = {false, true};
  int one[1] = {2};
  mlx_array rmask = mlx_array_new_data(rm, one, 1, MLX_BOOL);
  EXPECT(mlx_masked_scatter(&r_, a, rmask, src, S), "array([[0, 1, 2],\n       [10, 20, 30]], dtype=int32)");
  mlx_array t = mlx_array_new_bool(true);
  mlx_array seven = mlx_array_new_int(7);
  EXPECT(mlx_masked_scatter(&r_, a, t, seven, S), "array([[7, 7, 7],\n       [7, 7, 7]], dtype=int32)");
  /* too few source elements: an error from eval */
  int32_t two[2] = {1, 2};
  mlx_array few = vec_i32(two, 2);
  EXPECT_EVAL_FAILS(mlx_masked_scatter(&r_, a, mask, few, S), "Source does not have enough elements for mask");
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_masked_scatter(&r, a, a, src, S), "[masked_scatter] The mask has to be boolean.");
  int mshape[2] = {1, 2};
  mlx_array bad = mlx_array_new_data(mv, mshape, 2, MLX_BOOL);
  CHECK_FAILS(mlx_masked_scatter(&r, a, bad, src, S),
              "[masked_scatter] The boolean mask should have the same shape as the beginning of the "
              "indexed array but the mask has shape (1,2) and the array has shape (2,3)");
  mlx_array_free(r);
  mlx_array_free(bad);
  mlx_array_free(few);
  mlx_array_free(seven);
  mlx_array_free(t);
  mlx_array_free(rmask);
  mlx_array_free(src);
  mlx_array_free(mask);
  mlx_array_free(a);
}

static void test_slice_update_reduce(void) {
  int32_t av[4] = {1, 2, 3, 4}, uv[2] = {10, 20};
  mlx_array a = vec_i32(av, 4), u = vec_i32(uv, 2);
  int start[1] = {1}, stop[1] = {3}, step[1] = {1};
  EXPECT(mlx_slice_update_add(&r_, a, u, start, 1, stop, 1, step, 1, S), "array([1, 12, 23, 4], dtype=int32)");
  EXPECT(mlx_slice_update_prod(&r_, a, u, start, 1, stop, 1, step, 1, S), "array([1, 20, 60, 4], dtype=int32)");
  EXPECT(mlx_slice_update_max(&r_, a, u, start, 1, stop, 1, step, 1, S), "array([1, 10, 20, 4], dtype=int32)");
  EXPECT(mlx_slice_update_min(&r_, a, u, start, 1, stop, 1, step, 1, S), "array([1, 2, 3, 4], dtype=int32)");
  int s2[1] = {3}, e2[1] = {-5}, st2[1] = {-2}; /* a[3::-2] = [4, 2] */
  EXPECT(mlx_slice_update_add(&r_, a, u, s2, 1, e2, 1, st2, 1, S), "array([1, 22, 3, 14], dtype=int32)");
  mlx_array_free(u);
  mlx_array_free(a);
}

/* ---- gradients ---- */

static mlx_array g_idx;

static int f_gather(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  int sizes[1] = {1};
  int rc = mlx_gather_single(&y, x, g_idx, 0, sizes, 1, S);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return rc;
}

/* x[idx] = 0 */
static int f_zero_at(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  int shape[2] = {3, 1};
  float zv[3] = {0, 0, 0};
  mlx_array zeros = mlx_array_new_data(zv, shape, 2, MLX_FLOAT32);
  int rc = mlx_scatter_single(&y, x, g_idx, zeros, 0, S);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(zeros);
  mlx_array_free(x);
  mlx_array_free(y);
  return rc;
}

/* scatter_add of the second input into the first */
static int f_scatter_add(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), u = mlx_array_new(), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  mlx_vector_array_get(&u, in, 1);
  int rc = mlx_scatter_add_single(&y, x, g_idx, u, 0, S);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(u);
  mlx_array_free(y);
  return rc;
}

static int f_take_along(mlx_vector_array *res, const mlx_vector_array in) {
  mlx_array x = mlx_array_new(), y = mlx_array_new();
  mlx_vector_array_get(&x, in, 0);
  int rc = mlx_take_along_axis(&y, x, g_idx, 0, S);
  mlx_vector_array_set_value(res, y);
  mlx_array_free(x);
  mlx_array_free(y);
  return rc;
}

/* grads = vjp(f, primals, cotangent)[arg]; prints it */
#define EXPECT_VJP(fn, primals, cotan, arg, expected)                         \
  do {                                                                        \
    mlx_closure c_ = mlx_closure_new_func(fn);                                \
    mlx_vector_array o_ = mlx_vector_array_new(), g_ = mlx_vector_array_new(); \
    mlx_vector_array ct_ = mlx_vector_array_new_value(cotan);                 \
    CHECK(mlx_vjp(&o_, &g_, c_, primals, ct_) == 0);                          \
    mlx_array r_ = mlx_array_new();                                           \
    CHECK(mlx_vector_array_get(&r_, g_, arg) == 0);                           \
    CHECK_PRINTS(r_, expected);                                               \
    mlx_array_free(r_);                                                       \
    mlx_vector_array_free(ct_);                                               \
    mlx_vector_array_free(o_);                                                \
    mlx_vector_array_free(g_);                                                \
    mlx_closure_free(c_);                                                     \
  } while (0)

static void test_gradients(void) {
  int32_t iv[3] = {0, 0, 2};
  g_idx = vec_i32(iv, 3);
  float xv[3] = {1, 2, 3};
  mlx_array x = vec_f32(xv, 3);
  mlx_vector_array primals = mlx_vector_array_new_value(x);
  float cv[3] = {1, 10, 100};
  int cshape[2] = {3, 1};
  mlx_array cot = mlx_array_new_data(cv, cshape, 2, MLX_FLOAT32);
  /* gather's vjp is a scatter-add: repeated indices accumulate */
  EXPECT_VJP(f_gather, primals, cot, 0, "array([11, 0, 100], dtype=float32)");
  /* x[idx] = 0: zero gradient at idx, one elsewhere */
  float ones[3] = {1, 1, 1};
  mlx_array seed = vec_f32(ones, 3);
  EXPECT_VJP(f_zero_at, primals, seed, 0, "array([0, 1, 0], dtype=float32)");
  /* scatter_add: the input passes the cotangent; the updates gather it */
  float uv[3] = {5, 6, 7};
  mlx_array upd = mlx_array_new_data(uv, cshape, 2, MLX_FLOAT32);
  mlx_array pair[2] = {x, upd};
  mlx_vector_array primals2 = mlx_vector_array_new_data(pair, 2);
  float sv[3] = {1, 2, 3};
  mlx_array seed2 = vec_f32(sv, 3);
  EXPECT_VJP(f_scatter_add, primals2, seed2, 0, "array([1, 2, 3], dtype=float32)");
  EXPECT_VJP(f_scatter_add, primals2, seed2, 1, "array([[1],\n       [1],\n       [3]], dtype=float32)");
  /* jvp of a gather is the gather of the tangent */
  mlx_closure c = mlx_closure_new_func(f_gather);
  mlx_vector_array o = mlx_vector_array_new(), t = mlx_vector_array_new();
  float tv[3] = {0.5f, 1, 2};
  mlx_array tan = vec_f32(tv, 3);
  mlx_vector_array tans = mlx_vector_array_new_value(tan);
  CHECK(mlx_jvp(&o, &t, c, primals, tans) == 0);
  mlx_array r = mlx_array_new();
  CHECK(mlx_vector_array_get(&r, t, 0) == 0);
  CHECK_PRINTS(r, "array([[0.5],\n       [0.5],\n       [2]], dtype=float32)");
  mlx_closure_free(c);
  /* take_along_axis: vjp scatters back along the axis */
  mlx_closure ta = mlx_closure_new_func(f_take_along);
  mlx_vector_array g = mlx_vector_array_new(), ct = mlx_vector_array_new_value(seed2);
  CHECK(mlx_vjp(&o, &g, ta, primals, ct) == 0);
  CHECK(mlx_vector_array_get(&r, g, 0) == 0);
  CHECK_PRINTS(r, "array([3, 0, 3], dtype=float32)");
  mlx_closure_free(ta);
  mlx_vector_array_free(ct);
  mlx_vector_array_free(g);
  mlx_array_free(r);
  mlx_vector_array_free(tans);
  mlx_array_free(tan);
  mlx_vector_array_free(o);
  mlx_vector_array_free(t);
  mlx_array_free(seed2);
  mlx_vector_array_free(primals2);
  mlx_array_free(upd);
  mlx_array_free(seed);
  mlx_array_free(cot);
  mlx_vector_array_free(primals);
  mlx_array_free(x);
  mlx_array_free(g_idx);
}

/* A scatter-add big enough for the threaded paths: the same answer as a
 * serial loop, every run. */
static void test_large_scatter(void) {
  enum { N = 200000, BINS = 97 };
  static int32_t iv[N];
  static float uv[N];
  double expect[BINS] = {0};
  for (int i = 0; i < N; i++) {
    iv[i] = (i * 7919) % BINS;
    uv[i] = (float)(i % 13) * 0.25f;
    expect[iv[i]] += uv[i];
  }
  mlx_array idx = vec_i32(iv, N);
  int ushape[2] = {N, 1};
  mlx_array upd = mlx_array_new_data(uv, ushape, 2, MLX_FLOAT32);
  int bshape[1] = {BINS};
  mlx_array zeros = mlx_array_new(); /* mlx_array_new_data(NULL, ...) is an error */
  CHECK(mlx_zeros(&zeros, bshape, 1, MLX_FLOAT32, S) == 0);
  mlx_array r = mlx_array_new();
  CHECK(mlx_scatter_add_single(&r, zeros, idx, upd, 0, S) == 0 && mlx_array_eval(r) == 0);
  const float *d = mlx_array_data_float32(r);
  int bad = 0;
  for (int b = 0; d && b < BINS; b++) bad += fabs(d[b] - expect[b]) > 1e-2 * (1 + fabs(expect[b]));
  CHECK(d && bad == 0);
  /* gather of the same indices */
  mlx_array g = mlx_array_new();
  CHECK(mlx_take(&g, r, idx, S) == 0 && mlx_array_eval(g) == 0);
  const float *gd = mlx_array_data_float32(g);
  bad = 0;
  for (int i = 0; gd && d && i < N; i++) bad += gd[i] != d[iv[i]];
  CHECK(gd && bad == 0);
  /* overlapping windows of 3 (the destination split with rows) */
  enum { W = 3 };
  static float wv[N * W];
  double wexp[BINS + W] = {0};
  for (int i = 0; i < N; i++)
    for (int k = 0; k < W; k++) {
      wv[i * W + k] = (float)((i + k) % 7) - 3.0f;
      wexp[iv[i] + k] += wv[i * W + k];
    }
  int wshape[2] = {N, W}, tshape[1] = {BINS + W};
  mlx_array wupd = mlx_array_new_data(wv, wshape, 2, MLX_FLOAT32);
  mlx_array wz = mlx_array_new();
  CHECK(mlx_zeros(&wz, tshape, 1, MLX_FLOAT32, S) == 0);
  mlx_array w = mlx_array_new();
  CHECK(mlx_scatter_add_single(&w, wz, idx, wupd, 0, S) == 0 && mlx_array_eval(w) == 0);
  const float *wd = mlx_array_data_float32(w);
  bad = 0;
  for (int b = 0; wd && b < BINS + W; b++) bad += fabs(wd[b] - wexp[b]) > 1e-3 * (1 + fabs(wexp[b]));
  CHECK(wd && bad == 0);
  mlx_array_free(w);
  mlx_array_free(wz);
  mlx_array_free(wupd);
  mlx_array_free(g);
  mlx_array_free(r);
  mlx_array_free(zeros);
  mlx_array_free(upd);
  mlx_array_free(idx);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_take();
  test_along_axis();
  test_gather();
  test_scatter();
  test_masked_scatter();
  test_slice_update_reduce();
  test_gradients();
  test_large_scatter();
  mlx_stream_free(S);
  return t_finish();
}
