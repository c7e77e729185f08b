/* Training a model through the C API: a 2-layer MLP (2 -> 16 -> 1, tanh)
 * learns which points of the square [-1, 1]^2 lie inside a circle.
 *
 * The loss is a closure over (W1, b1, W2, b2, X, Y); mlx_value_and_grad turns
 * it into a function returning the loss and the gradients of the first four
 * inputs, and plain gradient descent with momentum updates them.  Data and
 * initial weights come from mlx_random_* with a fixed key.  The program fails
 * (exit status 1) unless the loss falls to under a fifth of its initial value
 * and the training accuracy exceeds 95%.  It compiles unchanged against mlx-c. */
#include <math.h>
#include <stdio.h>

#include "mlx/c/mlx.h"

#define CHECK(call)                                                     \
  do {                                                                  \
    if ((call) != 0) {                                                  \
      fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #call); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

enum { N = 512, HIDDEN = 16, STEPS = 400, NPARAMS = 4 };

static mlx_stream g_stream;

/* logits = tanh(X @ W1 + b1) @ W2 + b2 */
static int forward(mlx_array *logits, const mlx_array *p, const mlx_array x) {
  mlx_array h = mlx_array_new();
  CHECK(mlx_matmul(&h, x, p[0], g_stream));
  CHECK(mlx_add(&h, h, p[1], g_stream));
  CHECK(mlx_tanh(&h, h, g_stream));
  CHECK(mlx_matmul(logits, h, p[2], g_stream));
  CHECK(mlx_add(logits, *logits, p[3], g_stream));
  mlx_array_free(h);
  return 0;
}

/* inputs: W1, b1, W2, b2, X, Y -> [mean binary cross-entropy with logits] */
static int loss_closure(mlx_vector_array *out, const mlx_vector_array in) {
  mlx_array p[NPARAMS + 2];
  for (int i = 0; i < NPARAMS + 2; i++) {
    p[i] = mlx_array_new();
    CHECK(mlx_vector_array_get(&p[i], in, (size_t)i));
  }
  mlx_array z = mlx_array_new(), zero = mlx_array_new_float(0.0f);
  mlx_array sp = mlx_array_new(), yz = mlx_array_new(), loss = mlx_array_new();
  CHECK(forward(&z, p, p[4]));
  CHECK(mlx_logaddexp(&sp, zero, z, g_stream)); /* softplus(z) = log(1 + e^z) */
  CHECK(mlx_multiply(&yz, p[5], z, g_stream));
  CHECK(mlx_subtract(&loss, sp, yz, g_stream));
  CHECK(mlx_mean(&loss, loss, false, g_stream));
  CHECK(mlx_vector_array_set_value(out, loss));
  mlx_array arrays[] = {z, zero, sp, yz, loss};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) mlx_array_free(arrays[i]);
  for (int i = 0; i < NPARAMS + 2; i++) mlx_array_free(p[i]);
  return 0;
}

static int accuracy(float *acc, const mlx_array *params, const mlx_array x, const mlx_array y) {
  mlx_array z = mlx_array_new(), zero = mlx_array_new_float(0.0f), hit = mlx_array_new();
  CHECK(forward(&z, params, x));
  CHECK(mlx_greater(&hit, z, zero, g_stream));
  CHECK(mlx_astype(&hit, hit, MLX_FLOAT32, g_stream));
  CHECK(mlx_equal(&hit, hit, y, g_stream));
  CHECK(mlx_astype(&hit, hit, MLX_FLOAT32, g_stream));
  CHECK(mlx_mean(&hit, hit, false, g_stream));
  CHECK(mlx_array_eval(hit));
  CHECK(mlx_array_item_float32(acc, hit));
  mlx_array_free(z);
  mlx_array_free(zero);
  mlx_array_free(hit);
  return 0;
}

/* X uniform in [-1, 1]^2, Y = 1 inside the circle of radius 0.7 */
static int make_data(mlx_array *x, mlx_array *y, mlx_array key) {
  mlx_array lo = mlx_array_new_float(-1.0f), hi = mlx_array_new_float(1.0f);
  mlx_array r2 = mlx_array_new(), radius2 = mlx_array_new_float(0.49f);
  int shape[2] = {N, 2};
  CHECK(mlx_random_uniform(x, lo, hi, shape, 2, MLX_FLOAT32, key, g_stream));
  CHECK(mlx_square(&r2, *x, g_stream));
  CHECK(mlx_sum_axis(&r2, r2, 1, true, g_stream));
  CHECK(mlx_greater(y, radius2, r2, g_stream));
  CHECK(mlx_astype(y, *y, MLX_FLOAT32, g_stream));
  mlx_array_free(lo);
  mlx_array_free(hi);
  mlx_array_free(r2);
  mlx_array_free(radius2);
  return 0;
}

int main(void) {
  g_stream = mlx_default_cpu_stream_new();
  mlx_array key = mlx_array_new(), sub = mlx_array_new();
  CHECK(mlx_random_key(&key, 7));

  mlx_array x = mlx_array_new(), y = mlx_array_new();
  CHECK(mlx_random_split(&key, &sub, key, g_stream));
  CHECK(make_data(&x, &y, sub));

  /* parameters: W1 (2, H), b1 (H), W2 (H, 1), b2 (1); velocities start at 0 */
  const int shapes[NPARAMS][2] = {{2, HIDDEN}, {HIDDEN, 0}, {HIDDEN, 1}, {1, 0}};
  const float scales[NPARAMS] = {1.0f, 0.0f, 1.0f / 4.0f, 0.0f};
  mlx_array params[NPARAMS], velocity[NPARAMS];
  for (int i = 0; i < NPARAMS; i++) {
    int ndim = shapes[i][1] ? 2 : 1;
    params[i] = mlx_array_new();
    velocity[i] = mlx_array_new();
    CHECK(mlx_random_split(&key, &sub, key, g_stream));
    CHECK(mlx_random_normal(&params[i], shapes[i], (size_t)ndim, MLX_FLOAT32, 0.0f, scales[i], sub,
                            g_stream));
    CHECK(mlx_zeros(&velocity[i], shapes[i], (size_t)ndim, MLX_FLOAT32, g_stream));
  }

  mlx_closure loss = mlx_closure_new_func(loss_closure);
  mlx_closure_value_and_grad step = mlx_closure_value_and_grad_new();
  const int argnums[NPARAMS] = {0, 1, 2, 3};
  CHECK(mlx_value_and_grad(&step, loss, argnums, NPARAMS));

  const float lr = 0.5f, momentum = 0.9f;
  mlx_array lr_a = mlx_array_new_float(lr), mom_a = mlx_array_new_float(momentum);
  mlx_vector_array inputs = mlx_vector_array_new(), value = mlx_vector_array_new();
  mlx_vector_array grads = mlx_vector_array_new(), state = mlx_vector_array_new();
  mlx_array g = mlx_array_new(), l = mlx_array_new();
  float first = NAN, last = NAN;
  for (int it = 0; it <= STEPS; it++) {
    CHECK(mlx_vector_array_set_data(&inputs, params, NPARAMS));
    CHECK(mlx_vector_array_append_value(inputs, x));
    CHECK(mlx_vector_array_append_value(inputs, y));
    CHECK(mlx_closure_value_and_grad_apply(&value, &grads, step, inputs));
    for (int i = 0; i < NPARAMS; i++) { /* v = momentum * v + g; p = p - lr * v */
      CHECK(mlx_vector_array_get(&g, grads, (size_t)i));
      CHECK(mlx_multiply(&velocity[i], velocity[i], mom_a, g_stream));
      CHECK(mlx_add(&velocity[i], velocity[i], g, g_stream));
      CHECK(mlx_multiply(&g, velocity[i], lr_a, g_stream));
      CHECK(mlx_subtract(&params[i], params[i], g, g_stream));
    }
    CHECK(mlx_vector_array_set_data(&state, params, NPARAMS));
    CHECK(mlx_vector_array_append_data(state, velocity, NPARAMS));
    CHECK(mlx_vector_array_get(&l, value, 0));
    CHECK(mlx_vector_array_append_value(state, l));
    CHECK(mlx_eval(state));
    CHECK(mlx_array_item_float32(&last, l));
    if (it == 0) first = last;
    if (it % 50 == 0) printf("step %3d  loss %.4f\n", it, last);
  }
  float acc = 0.0f;
  CHECK(accuracy(&acc, params, x, y));
  printf("loss %.4f -> %.4f, training accuracy %.3f\n", first, last, acc);
  int ok = isfinite(last) && last < first / 5.0f && acc > 0.95f;
  if (!ok) fprintf(stderr, "train_mlp: the model did not learn\n");

  mlx_vector_array vectors[] = {inputs, value, grads, state};
  for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) mlx_vector_array_free(vectors[i]);
  for (int i = 0; i < NPARAMS; i++) {
    mlx_array_free(params[i]);
    mlx_array_free(velocity[i]);
  }
  mlx_array arrays[] = {g, l, lr_a, mom_a, x, y, key, sub};
  for (size_t i = 0; i < sizeof arrays / sizeof arrays[0]; i++) mlx_array_free(arrays[i]);
  mlx_closure_value_and_grad_free(step);
  mlx_closure_free(loss);
  mlx_stream_free(g_stream);
  return ok ? 0 : 1;
}
