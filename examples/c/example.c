/* A small mlx-c program: build arrays, combine them lazily, evaluate,
 * print, and free everything.  It compiles unchanged against mlx-c. */
#include <stdio.h>

#include "mlx/c/mlx.h"

static void print_array(const char *label, mlx_array arr) {
  mlx_string str = mlx_string_new();
  if (mlx_array_tostring(&str, arr) == 0) printf("%s:\n%s\n", label, mlx_string_data(str));
  mlx_string_free(str);
}

int main(void) {
  mlx_stream stream = mlx_default_cpu_stream_new();

  float data[6] = {1, 2, 3, 4, 5, 6};
  int shape[2] = {2, 3};
  mlx_array x = mlx_array_new_data(data, shape, 2, MLX_FLOAT32);
  mlx_array two = mlx_array_new_float(2.0f);
  mlx_array w = mlx_array_new();
  mlx_array y = mlx_array_new();
  mlx_array z = mlx_array_new();

  /* Nothing is computed until a result is needed. */
  mlx_multiply(&w, x, two, stream); /* w = x * 2 + x */
  mlx_add(&w, w, x, stream);
  mlx_arange(&z, 0, 3, 1, MLX_FLOAT32, stream);
  mlx_add(&z, x, z, stream); /* broadcasts (2,3) + (3,) */
  mlx_exp(&y, z, stream);

  print_array("x", x);
  print_array("x * 2 + x", w);
  print_array("x + arange(3)", z);
  print_array("exp(x + arange(3))", y);

  mlx_vector_array outputs = mlx_vector_array_new_value(y);
  mlx_eval(outputs);
  const float *p = mlx_array_data_float32(y);
  printf("y[0][0] = %.4f\n", p[0]);

  mlx_vector_array_free(outputs);
  mlx_array_free(x);
  mlx_array_free(two);
  mlx_array_free(w);
  mlx_array_free(y);
  mlx_array_free(z);
  mlx_stream_free(stream);
  return 0;
}
