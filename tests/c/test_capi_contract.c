/* C API: contractions (tensordot, tensordot_axis, einsum, gather_mm,
 * segmented_mm, block_masked_mm), their optional arguments as empty
 * arrays, and MLX's errors.  Expected values are MLX 0.32's. */
#include <stdint.h>

#include "capi_test.h"

static mlx_stream S;

static mlx_array arange_f32(int rows, int cols) {
  float v[64];
  for (int i = 0; i < rows * cols; i++) v[i] = (float)i;
  int shape[2] = {rows, cols};
  return mlx_array_new_data(v, shape, 2, MLX_FLOAT32);
}

static mlx_array ints(const int32_t *v, int ndim, const int *shape) {
  return mlx_array_new_data(v, shape, ndim, MLX_INT32);
}

static const char *AB = "array([[20, 23, 26, 29],\n       [56, 68, 80, 92]], dtype=float32)";

static void test_tensordot(void) {
  mlx_array a = arange_f32(2, 3), b = arange_f32(3, 4), r = mlx_array_new();
  EXPECT(mlx_tensordot_axis(&r_, a, b, 1, S), AB);
  int xa[1] = {1}, xb[1] = {0}, xneg[1] = {-1};
  EXPECT(mlx_tensordot(&r_, a, b, xa, 1, xb, 1, S), AB);
  EXPECT(mlx_tensordot(&r_, a, b, xneg, 1, xb, 1, S), AB);
  EXPECT(mlx_tensordot_axis(&r_, a, a, 2, S), "array(55, dtype=float32)");
  CHECK_FAILS(mlx_tensordot_axis(&r, a, b, -1, S),
              "[tensordot] axis must be greater or equal to 0.");
  CHECK_FAILS(mlx_tensordot_axis(&r, a, b, 3, S),
              "[tensordot] axis must be less than the number of dimensions of a and b.");
  CHECK_FAILS(mlx_tensordot(&r, a, b, xa, 1, xb, 0, S),
              "[tensordot] axes must have the same size.");
  CHECK_FAILS(mlx_tensordot(&r, a, b, xb, 1, xb, 1, S),
              "[tensordot] a and b must have the same shape on the contracted axes.");
  int far[1] = {5};
  CHECK_FAILS(mlx_tensordot(&r, a, b, far, 1, xb, 1, S), "out of bounds");
  CHECK(r.ctx == NULL);
  mlx_array_free(a);
  mlx_array_free(b);
}

static void test_einsum(void) {
  mlx_array a = arange_f32(2, 3), b = arange_f32(3, 4), sq = arange_f32(3, 3);
  mlx_array r = mlx_array_new();
  mlx_vector_array v = mlx_vector_array_new();
  mlx_vector_array_append_value(v, a);
  mlx_vector_array_append_value(v, b);
  EXPECT(mlx_einsum(&r_, "ij,jk->ki", v, S),
         "array([[20, 56],\n       [23, 68],\n       [26, 80],\n       [29, 92]], dtype=float32)");
  EXPECT(mlx_einsum(&r_, "ij, jk", v, S), AB);
  CHECK_FAILS(mlx_einsum(&r, "ij", v, S),
              "[einsum] Number of operands, 2, does not match number of input subscripts, 1");
  CHECK_FAILS(mlx_einsum(&r, "i1,jk", v, S), "[einsum] Subscripts must be letters, but got '1'.");
  mlx_vector_array one = mlx_vector_array_new_value(sq);
  EXPECT(mlx_einsum(&r_, "ii", one, S), "array(12, dtype=float32)");
  EXPECT(mlx_einsum(&r_, "ii->i", one, S), "array([0, 4, 8], dtype=float32)");
  CHECK_FAILS(mlx_einsum(&r, "ij->ii", one, S), "[einsum] Repeat indices not allowed in output.");
  mlx_vector_array none = mlx_vector_array_new();
  CHECK_FAILS(mlx_einsum(&r, "", none, S), "[einsum] At least one operand is required.");
  mlx_vector_array_free(none);
  mlx_vector_array_free(one);
  mlx_vector_array_free(v);
  mlx_array_free(sq);
  mlx_array_free(a);
  mlx_array_free(b);
}

static void test_gather_segmented(void) {
  float av[12], bv[24];
  for (int i = 0; i < 12; i++) av[i] = (float)i;
  for (int i = 0; i < 24; i++) bv[i] = (float)i;
  int sa[3] = {2, 2, 3}, sb[3] = {2, 3, 4}, s2[1] = {2};
  mlx_array A = mlx_array_new_data(av, sa, 3, MLX_FLOAT32);
  mlx_array B = mlx_array_new_data(bv, sb, 3, MLX_FLOAT32);
  int32_t li[2] = {1, 0}, ri[2] = {0, 0};
  mlx_array L = ints(li, 1, s2), R = ints(ri, 1, s2), none = mlx_array_new(), r = mlx_array_new();
  EXPECT(mlx_gather_mm(&r_, A, B, L, R, false, S),
         "array([[[92, 113, 134, 155],\n        [128, 158, 188, 218]],\n       [[20, 23, 26, 29],\n"
         "        [56, 68, 80, 92]]], dtype=float32)");
  /* no lhs indices: every batch element of a in order */
  mlx_array g = mlx_array_new();
  CHECK(mlx_gather_mm(&g, A, B, none, R, true, S) == 0 && mlx_array_eval(g) == 0);
  CHECK(mlx_array_ndim(g) == 3 && mlx_array_shape(g)[0] == 2);
  mlx_array fl = mlx_array_new_data(av, s2, 1, MLX_FLOAT32);
  CHECK_FAILS(mlx_gather_mm(&r, A, B, fl, R, false, S),
              "[gather_mm] Got indices with invalid dtype. Indices must be integral.");
  mlx_array Ai = mlx_array_new(), Bi = mlx_array_new();
  CHECK(mlx_astype(&Ai, A, MLX_INT32, S) == 0 && mlx_astype(&Bi, B, MLX_INT32, S) == 0);
  CHECK_FAILS(mlx_gather_mm(&r, Ai, Bi, L, R, false, S),
              "[gather_mm] Only real floating point types are supported but int32 and int32 were "
              "provided which results in int32, which is not a real floating point type.");

  mlx_array a = arange_f32(2, 3), b = arange_f32(3, 4);
  int32_t sv[6] = {0, 1, 1, 3, 2, 2};
  int ss[2] = {3, 2}, bad[2] = {2, 3};
  mlx_array seg = ints(sv, 2, ss), seg_bad = ints(sv, 2, bad);
  EXPECT(
      mlx_segmented_mm(&r_, a, b, seg, S),
      "array([[[0, 0, 0, 0],\n        [0, 3, 6, 9]],\n       [[20, 23, 26, 29],\n"
      "        [56, 65, 74, 83]],\n       [[0, 0, 0, 0],\n        [0, 0, 0, 0]]], dtype=float32)");
  CHECK_FAILS(mlx_segmented_mm(&r, A, B, seg, S), "[segmented_mm] Batched matmul not supported");
  CHECK_FAILS(mlx_segmented_mm(&r, a, b, seg_bad, S),
              "[segmented_mm] The segments should have shape (..., 2) but (2,3) was provided.");
  CHECK(r.ctx == NULL);
  mlx_array arrs[] = {A, B, L, R, g, fl, Ai, Bi, a, b, seg, seg_bad};
  for (size_t i = 0; i < sizeof arrs / sizeof arrs[0]; i++) mlx_array_free(arrs[i]);
}

static void test_block_masked(void) {
  float ones[1600];
  for (int i = 0; i < 1600; i++) ones[i] = 1.0f;
  int s40[2] = {40, 40}, s22[2] = {2, 2};
  bool mv[4] = {true, false, false, true};
  mlx_array x = mlx_array_new_data(ones, s40, 2, MLX_FLOAT32);
  mlx_array m = mlx_array_new_data(mv, s22, 2, MLX_BOOL);
  mlx_array none = mlx_array_new(), r = mlx_array_new();
  CHECK(mlx_block_masked_mm(&r, x, x, 32, m, none, none, S) == 0 && mlx_array_eval(r) == 0);
  const float *d = mlx_array_data_float32(r);
  CHECK(d && d[0] == 40.0f && d[39] == 0.0f && d[39 * 40] == 0.0f && d[1599] == 40.0f);
  /* masks on the operands: the (1, 1) tiles only, K = 8 of them */
  CHECK(mlx_block_masked_mm(&r, x, x, 32, none, m, m, S) == 0 && mlx_array_eval(r) == 0);
  d = mlx_array_data_float32(r);
  CHECK(d && d[0] == 32.0f && d[39] == 0.0f && d[1599] == 8.0f);
  CHECK_FAILS(mlx_block_masked_mm(&r, x, x, 16, m, none, none, S),
              "[block_masked_mm] Only block_sizes 32, 64 are supported.Got block size 16.");
  mlx_array_free(x);
  mlx_array_free(m);
  mlx_array_free(r);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  test_tensordot();
  test_einsum();
  test_gather_segmented();
  test_block_masked();
  mlx_stream_free(S);
  return t_finish();
}
