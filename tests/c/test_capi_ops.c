/* C API ops: elementwise unary/binary/ternary ops, casts, broadcasting,
 * shape ops, reductions, error reporting, and the not-implemented stubs.
 * Expected values are worked out by hand (and agree with MLX 0.32). */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;

static void test_binary(void) {
  int32_t av[3] = {1, 2, 3}, bv[3] = {10, 20, 30};
  mlx_array a = vec_i32(av, 3), b = vec_i32(bv, 3);
  EXPECT(mlx_add(&r_, a, b, S), "array([11, 22, 33], dtype=int32)");
  EXPECT(mlx_subtract(&r_, b, a, S), "array([9, 18, 27], dtype=int32)");
  EXPECT(mlx_multiply(&r_, a, b, S), "array([10, 40, 90], dtype=int32)");
  EXPECT(mlx_divide(&r_, a, b, S), "array([0.1, 0.1, 0.1], dtype=float32)");
  EXPECT(mlx_floor_divide(&r_, b, a, S), "array([10, 10, 10], dtype=int32)");
  EXPECT(mlx_maximum(&r_, a, b, S), "array([10, 20, 30], dtype=int32)");
  EXPECT(mlx_minimum(&r_, a, b, S), "array([1, 2, 3], dtype=int32)");
  EXPECT(mlx_equal(&r_, a, a, S), "array([True, True, True], dtype=bool)");
  EXPECT(mlx_not_equal(&r_, a, b, S), "array([True, True, True], dtype=bool)");
  EXPECT(mlx_less(&r_, a, b, S), "array([True, True, True], dtype=bool)");
  EXPECT(mlx_greater_equal(&r_, a, b, S), "array([False, False, False], dtype=bool)");
  EXPECT(mlx_bitwise_and(&r_, a, b, S), "array([0, 0, 2], dtype=int32)"); /* 1&10, 2&20, 3&30 */
  EXPECT(mlx_bitwise_or(&r_, a, b, S), "array([11, 22, 31], dtype=int32)");
  EXPECT(mlx_left_shift(&r_, a, a, S), "array([2, 8, 24], dtype=int32)");

  int32_t pv[2] = {2, 3}, qv[2] = {3, 2};
  mlx_array p = vec_i32(pv, 2), q = vec_i32(qv, 2);
  EXPECT(mlx_power(&r_, p, q, S), "array([8, 9], dtype=int32)");
  int32_t mv[2] = {7, -7}, twos[2] = {2, 2};
  mlx_array m = vec_i32(mv, 2), t = vec_i32(twos, 2);
  EXPECT(mlx_remainder(&r_, m, t, S), "array([1, 1], dtype=int32)");
  mlx_vector_array qr = mlx_vector_array_new();
  CHECK(mlx_divmod(&qr, m, t, S) == 0 && mlx_vector_array_size(qr) == 2);
  mlx_array part = mlx_array_new();
  CHECK(mlx_vector_array_get(&part, qr, 0) == 0);
  CHECK_PRINTS(part, "array([3, -4], dtype=int32)");
  CHECK(mlx_vector_array_get(&part, qr, 1) == 0);
  CHECK_PRINTS(part, "array([1, 1], dtype=int32)");
  mlx_array_free(part);
  mlx_vector_array_free(qr);

  /* broadcasting (2,3) + (3,), and promotion int32 + float32 */
  int32_t grid[6] = {0, 1, 2, 3, 4, 5};
  int s23[2] = {2, 3};
  mlx_array g = mlx_array_new_data(grid, s23, 2, MLX_INT32);
  EXPECT(mlx_add(&r_, g, b, S), "array([[10, 21, 32],\n       [13, 24, 35]], dtype=int32)");
  float hv[1] = {0.5f};
  mlx_array half = vec_f32(hv, 1);
  EXPECT(mlx_multiply(&r_, a, half, S), "array([0.5, 1, 1.5], dtype=float32)");

  /* x = x + y reuses the handle */
  mlx_array acc = mlx_array_new();
  mlx_array_set(&acc, a);
  for (int i = 0; i < 3; i++) CHECK(mlx_add(&acc, acc, a, S) == 0);
  CHECK_PRINTS(acc, "array([4, 8, 12], dtype=int32)");
  mlx_array_free(acc);

  /* errors leave the result alone */
  int32_t fv[4] = {0, 0, 0, 0};
  mlx_array four = vec_i32(fv, 4);
  mlx_array r = mlx_array_new_int(9);
  void *before = r.ctx;
  CHECK_FAILS(mlx_add(&r, g, four, S), "[broadcast_shapes] Shapes (2,3) and (4) cannot be broadcast.");
  CHECK(r.ctx == before);
  CHECK_FAILS(mlx_add(&r, g, mlx_array_new(), S), "non-empty");
  mlx_array_free(r);
  mlx_array_free(four);
  mlx_array_free(half);
  mlx_array_free(g);
  mlx_array_free(m);
  mlx_array_free(t);
  mlx_array_free(p);
  mlx_array_free(q);
  mlx_array_free(a);
  mlx_array_free(b);
}

static void test_unary(void) {
  float xv[2] = {0, 1};
  mlx_array x = vec_f32(xv, 2);
  EXPECT(mlx_exp(&r_, x, S), "array([1, 2.71828], dtype=float32)");
  EXPECT(mlx_negative(&r_, x, S), "array([-0, -1], dtype=float32)");
  EXPECT(mlx_sin(&r_, x, S), "array([0, 0.841471], dtype=float32)");
  EXPECT(mlx_log1p(&r_, x, S), "array([0, 0.693147], dtype=float32)");
  int32_t iv[2] = {0, 1};
  mlx_array xi = vec_i32(iv, 2);
  EXPECT(mlx_exp(&r_, xi, S), "array([1, 2.71828], dtype=float32)"); /* ints -> float32 */
  float sq[2] = {4, 9};
  mlx_array s4 = vec_f32(sq, 2);
  EXPECT(mlx_sqrt(&r_, s4, S), "array([2, 3], dtype=float32)");
  EXPECT(mlx_rsqrt(&r_, s4, S), "array([0.5, 0.333333], dtype=float32)");
  EXPECT(mlx_square(&r_, s4, S), "array([16, 81], dtype=float32)");
  EXPECT(mlx_reciprocal(&r_, s4, S), "array([0.25, 0.111111], dtype=float32)");
  int32_t nv[3] = {-1, 2, 0};
  mlx_array n = vec_i32(nv, 3);
  EXPECT(mlx_abs(&r_, n, S), "array([1, 2, 0], dtype=int32)");
  EXPECT(mlx_sign(&r_, n, S), "array([-1, 1, 0], dtype=int32)");
  EXPECT(mlx_logical_not(&r_, n, S), "array([False, False, True], dtype=bool)");
  float fl[2] = {1.5f, -1.5f};
  mlx_array f = vec_f32(fl, 2);
  EXPECT(mlx_floor(&r_, f, S), "array([1, -2], dtype=float32)");
  EXPECT(mlx_ceil(&r_, f, S), "array([2, -1], dtype=float32)");
  float rv[4] = {0.5f, 1.5f, 2.5f, -0.5f};
  mlx_array rr = vec_f32(rv, 4);
  EXPECT(mlx_round(&r_, rr, 0, S), "array([0, 2, 2, -0], dtype=float32)");
  float r1v[2] = {0.25f, 1.35f};
  mlx_array r1 = vec_f32(r1v, 2);
  EXPECT(mlx_round(&r_, r1, 1, S), "array([0.2, 1.4], dtype=float32)");
  float nanv[3] = {NAN, INFINITY, 1};
  mlx_array nn = vec_f32(nanv, 3);
  EXPECT(mlx_isnan(&r_, nn, S), "array([True, False, False], dtype=bool)");
  EXPECT(mlx_isinf(&r_, nn, S), "array([False, True, False], dtype=bool)");
  EXPECT(mlx_isfinite(&r_, nn, S), "array([False, False, True], dtype=bool)");
  mlx_optional_float big = {100.0f, true}, none = {0, false};
  EXPECT(mlx_nan_to_num(&r_, nn, 0.0f, big, none, S), "array([0, 100, 1], dtype=float32)");
  EXPECT(mlx_stop_gradient(&r_, x, S), "array([0, 1], dtype=float32)");
  mlx_array c = mlx_array_new_complex(3, -4);
  EXPECT(mlx_abs(&r_, c, S), "array(5, dtype=float32)");
  EXPECT(mlx_real(&r_, c, S), "array(3, dtype=float32)");
  EXPECT(mlx_imag(&r_, c, S), "array(-4, dtype=float32)");
  EXPECT(mlx_conjugate(&r_, c, S), "array(3+4j, dtype=complex64)");
  mlx_array_free(c);
  mlx_array_free(nn);
  mlx_array_free(r1);
  mlx_array_free(rr);
  mlx_array_free(f);
  mlx_array_free(n);
  mlx_array_free(s4);
  mlx_array_free(xi);
  mlx_array_free(x);
}

static void test_misc(void) {
  bool cv[3] = {true, false, true};
  int shape3[1] = {3};
  mlx_array cond = mlx_array_new_data(cv, shape3, 1, MLX_BOOL);
  int32_t xv[3] = {1, 2, 3}, yv[3] = {10, 20, 30};
  mlx_array x = vec_i32(xv, 3), y = vec_i32(yv, 3);
  EXPECT(mlx_where(&r_, cond, x, y, S), "array([1, 20, 3], dtype=int32)");
  int32_t clv[3] = {1, 5, 10};
  mlx_array cl = vec_i32(clv, 3);
  mlx_array lo = mlx_array_new_int(2), hi = mlx_array_new_int(6);
  EXPECT(mlx_clip(&r_, cl, lo, mlx_array_new(), S), "array([2, 5, 10], dtype=int32)");
  EXPECT(mlx_clip(&r_, cl, lo, hi, S), "array([2, 5, 6], dtype=int32)");
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_clip(&r, cl, mlx_array_new(), mlx_array_new(), S), "At most one of a_min and a_max may be None");

  float fv[2] = {1.7f, -1.7f};
  mlx_array f = vec_f32(fv, 2);
  EXPECT(mlx_astype(&r_, f, MLX_INT32, S), "array([1, -1], dtype=int32)");
  EXPECT(mlx_astype(&r_, f, MLX_BOOL, S), "array([True, True], dtype=bool)");
  EXPECT(mlx_astype(&r_, f, MLX_FLOAT16, S), "array([1.7002, -1.7002], dtype=float16)");
  /* out of range float -> int as MLX casts: wrapped low bits, not saturated */
  float ov[3] = {300.2f, -1.7f, 3e9f};
  mlx_array over = vec_f32(ov, 3);
  EXPECT(mlx_astype(&r_, over, MLX_UINT8, S), "array([44, 255, 0], dtype=uint8)");
  EXPECT(mlx_astype(&r_, over, MLX_INT32, S), "array([300, -1, -2147483648], dtype=int32)");
  mlx_array_free(over);
  CHECK_FAILS(mlx_astype(&r, f, (mlx_dtype)42, S), "Invalid dtype");
  int s23[2] = {2, 3};
  EXPECT(mlx_broadcast_to(&r_, x, s23, 2, S), "array([[1, 2, 3],\n       [1, 2, 3]], dtype=int32)");
  int s4[1] = {4};
  CHECK_FAILS(mlx_broadcast_to(&r, x, s4, 1, S), "[broadcast_to]");
  EXPECT(mlx_contiguous(&r_, x, false, S), "array([1, 2, 3], dtype=int32)");
  EXPECT(mlx_copy(&r_, x, S), "array([1, 2, 3], dtype=int32)");

  mlx_vector_array in = mlx_vector_array_new(), out = mlx_vector_array_new();
  mlx_array one = mlx_array_new_int(1);
  mlx_vector_array_append_value(in, x);
  mlx_vector_array_append_value(in, one);
  CHECK(mlx_broadcast_arrays(&out, in, S) == 0 && mlx_vector_array_size(out) == 2);
  mlx_array o = mlx_array_new();
  CHECK(mlx_vector_array_get(&o, out, 1) == 0);
  CHECK_PRINTS(o, "array([1, 1, 1], dtype=int32)");
  mlx_array_free(o);

  /* depends: the outputs are the inputs, the dependencies computed first */
  mlx_vector_array deps = mlx_vector_array_new(), dout = mlx_vector_array_new();
  mlx_vector_array_append_value(deps, y);
  CHECK(mlx_depends(&dout, in, deps) == 0 && mlx_vector_array_size(dout) == 2);
  mlx_array d0 = mlx_array_new();
  CHECK(mlx_vector_array_get(&d0, dout, 0) == 0);
  CHECK_PRINTS(d0, "array([1, 2, 3], dtype=int32)");
  mlx_vector_array none = mlx_vector_array_new();
  CHECK_FAILS(mlx_depends(&dout, none, deps), "[depends] At least one input is required.");
  mlx_vector_array_free(none);
  mlx_array_free(d0);
  mlx_vector_array_free(deps);
  mlx_vector_array_free(dout);

  mlx_array_free(one);
  mlx_vector_array_free(in);
  mlx_vector_array_free(out);
  mlx_array_free(r);
  mlx_array_free(f);
  mlx_array_free(lo);
  mlx_array_free(hi);
  mlx_array_free(cl);
  mlx_array_free(cond);
  mlx_array_free(x);
  mlx_array_free(y);
}

static void test_shape(void) {
  mlx_array a = mlx_array_new();
  CHECK(mlx_arange(&a, 0, 6, 1, MLX_INT32, S) == 0);
  int s23[2] = {2, 3};
  mlx_array m = mlx_array_new();
  CHECK(mlx_reshape(&m, a, s23, 2, S) == 0);
  CHECK_PRINTS(m, "array([[0, 1, 2],\n       [3, 4, 5]], dtype=int32)");
  EXPECT(mlx_transpose(&r_, m, S), "array([[0, 3],\n       [1, 4],\n       [2, 5]], dtype=int32)");
  int start[2] = {0, 1}, stop[2] = {2, 3}, step[2] = {1, 1};
  EXPECT(mlx_slice(&r_, m, start, 2, stop, 2, step, 2, S), "array([[1, 2],\n       [4, 5]], dtype=int32)");
  EXPECT(mlx_expand_dims(&r_, a, 0, S), "array([[0, 1, 2, 3, 4, 5]], dtype=int32)");
  EXPECT(mlx_flatten(&r_, m, 0, -1, S), "array([0, 1, 2, 3, 4, 5], dtype=int32)");
  mlx_vector_array parts = mlx_vector_array_new();
  CHECK(mlx_split(&parts, a, 3, 0, S) == 0 && mlx_vector_array_size(parts) == 3);
  mlx_array p = mlx_array_new();
  CHECK(mlx_vector_array_get(&p, parts, 2) == 0);
  CHECK_PRINTS(p, "array([4, 5], dtype=int32)");
  EXPECT(mlx_concatenate(&r_, parts, S), "array([0, 1, 2, 3, 4, 5], dtype=int32)");
  EXPECT(mlx_stack(&r_, parts, S), "array([[0, 1],\n       [2, 3],\n       [4, 5]], dtype=int32)");
  mlx_array_free(p);
  mlx_vector_array_free(parts);
  int bad[2] = {4, 4};
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_reshape(&r, a, bad, 2, S), "[reshape]");
  mlx_array_free(m);
  mlx_array_free(a);
}

static void test_reduce(void) {
  int32_t v[4] = {1, 2, 3, 4};
  int s22[2] = {2, 2};
  mlx_array a = mlx_array_new_data(v, s22, 2, MLX_INT32);
  EXPECT(mlx_sum(&r_, a, false, S), "array(10, dtype=int32)");
  EXPECT(mlx_sum_axis(&r_, a, 0, false, S), "array([4, 6], dtype=int32)");
  int ax[1] = {1};
  EXPECT(mlx_sum_axes(&r_, a, ax, 1, true, S), "array([[3],\n       [7]], dtype=int32)");
  EXPECT(mlx_max(&r_, a, false, S), "array(4, dtype=int32)");
  EXPECT(mlx_prod(&r_, a, false, S), "array(24, dtype=int32)");
  EXPECT(mlx_argmax(&r_, a, false, S), "array(3, dtype=uint32)");
  EXPECT(mlx_all(&r_, a, false, S), "array(True, dtype=bool)");
  mlx_array r = mlx_array_new();
  CHECK_FAILS(mlx_sum_axis(&r, a, 2, false, S), "Invalid axis 2 for array with 2 dimensions.");
  mlx_array_free(a);
}

static void test_not_implemented(void) {
  mlx_array a = mlx_array_new_float(1), r = mlx_array_new();
  int ax[1] = {0};
  CHECK_FAILS(mlx_number_of_elements(&r, a, ax, 1, false, MLX_INT32, S),
              "mlx_number_of_elements: not implemented yet in cmlx");
  /* mx.linalg exists now: a 0-d input is its rank error */
  CHECK_FAILS(mlx_linalg_inv(&r, a, S), "[linalg::inv] Arrays must have >= 2 dimensions.");
  CHECK_FAILS(mlx_load(&r, "/nonexistent/x.npy", S), "[load] Failed to open file");
  CHECK(r.ctx == NULL);
  mlx_array_free(a);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_binary();
  test_unary();
  test_misc();
  test_shape();
  test_reduce();
  test_not_implemented();
  mlx_stream_free(S);
  return t_finish();
}
