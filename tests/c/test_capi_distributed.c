/* C API: mlx/c/distributed.h and distributed_group.h on the singleton group
 * (no MLX_RANK / MLX_HOSTFILE in the environment): the collectives are
 * identities, send / recv and split are MLX's errors. */
#include <stdlib.h>

#include "capi_test.h"

static mlx_stream S;

static void test_groups(void) {
  mlx_distributed_group g = mlx_distributed_group_new(), g2 = mlx_distributed_group_new();
  CHECK(g.ctx == NULL);
  CHECK(mlx_distributed_init(&g, false, "any") == 0 && g.ctx);
  CHECK(mlx_distributed_group_rank(g) == 0 && mlx_distributed_group_size(g) == 1);
  CHECK(mlx_distributed_init(&g2, false, "any") == 0 && mlx_distributed_group_size(g2) == 1);
  CHECK_FAILS(mlx_distributed_init(&g2, true, "nccl"), "Cannot initialize nccl");
  CHECK_FAILS(mlx_distributed_init(&g2, false, "foo"), "The only valid values for backend");
  CHECK_FAILS(mlx_distributed_init(&g2, true, "ring"), "MLX_RANK");
  CHECK_FAILS(mlx_distributed_group_split(&g2, g, 0, -1),
              "Cannot split the distributed group further.");
  CHECK_FAILS(mlx_distributed_group_size(mlx_distributed_group_new()) != -1 ? 0 : 1, "empty");
  CHECK_FAILS(mlx_distributed_init(NULL, false, "any"), "non-NULL result");
  CHECK(mlx_distributed_is_available("ring") && !mlx_distributed_is_available("jaccl"));
  CHECK(mlx_distributed_group_free(g) == 0 && mlx_distributed_group_free(g2) == 0);
}

static void test_collectives(void) {
  const float x[] = {1, 2, 3, 4, 5, 6};
  int shape[] = {2, 3};
  mlx_array a = mlx_array_new_data(x, shape, 2, MLX_FLOAT32), r = mlx_array_new();
  mlx_distributed_group g = mlx_distributed_group_new(), none = mlx_distributed_group_new();
  CHECK(mlx_distributed_init(&g, false, "any") == 0);
  const char *want = "array([[1, 2, 3],\n       [4, 5, 6]], dtype=float32)";
  EXPECT(mlx_distributed_all_sum(&r_, a, g, S), want);
  EXPECT(mlx_distributed_all_max(&r_, a, none, S), want);
  EXPECT(mlx_distributed_all_min(&r_, a, g, S), want);
  EXPECT(mlx_distributed_all_gather(&r_, a, g, S), want);
  EXPECT(mlx_distributed_sum_scatter(&r_, a, g, S), want);
  CHECK_FAILS(mlx_distributed_send(&r, a, 0, g, S), "Cannot send to a singleton group");
  CHECK_FAILS(mlx_distributed_recv(&r, shape, 2, MLX_FLOAT32, 0, g, S),
              "Cannot recv from a singleton group");
  CHECK_FAILS(mlx_distributed_recv_like(&r, a, 0, g, S), "Cannot recv from a singleton group");
  CHECK_FAILS(mlx_distributed_all_sum(&r, mlx_array_new(), g, S), "non-empty mlx_array");
  CHECK_FAILS(mlx_distributed_all_sum(NULL, a, g, S), "non-NULL result");
  mlx_array_free(r);
  mlx_array_free(a);
}

int main(void) {
  unsetenv("MLX_RANK");
  unsetenv("MLX_HOSTFILE");
  t_init();
  S = mlx_default_cpu_stream_new();
  test_groups();
  test_collectives();
  mlx_stream_free(S);
  return t_finish();
}
