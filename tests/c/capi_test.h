/* A tiny harness for the C API tests: CHECK counts, an error handler that
 * records instead of exiting, and the closing "N passed, N failed" line.
 * Tests include only the public headers plus this file. */
#ifndef CMLX_TESTS_CAPI_TEST_H
#define CMLX_TESTS_CAPI_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "mlx/c/mlx.h"

static int t_pass, t_fail;
static int t_errors;          /* handler calls so far */
static char t_last_error[2048]; /* the last message the handler got */

#define CHECK(cond)                                                               \
  do {                                                                            \
    if (cond) {                                                                   \
      t_pass++;                                                                   \
    } else {                                                                      \
      t_fail++;                                                                   \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);    \
    }                                                                             \
  } while (0)

#define CHECK_CLOSE(a, b, tol) CHECK(fabs((double)(a) - (double)(b)) <= (tol))

static void t_handler(const char *msg, void *data) {
  (void)data;
  t_errors++;
  snprintf(t_last_error, sizeof t_last_error, "%s", msg);
}

static void t_init(void) { mlx_set_error_handler(t_handler, NULL, NULL); }

/* Expect the call that follows (its status in rc) to have failed through
 * the handler with a message containing `needle`. */
#define CHECK_FAILS(rc, needle)                                                    \
  do {                                                                             \
    int errs_ = t_errors;                                                          \
    int rc_ = (rc);                                                                \
    CHECK(rc_ != 0);                                                               \
    CHECK(t_errors == errs_ + 1);                                                  \
    if (!strstr(t_last_error, (needle))) {                                         \
      t_fail++;                                                                    \
      fprintf(stderr, "%s:%d: error '%s' lacks '%s'\n", __FILE__, __LINE__,        \
              t_last_error, (needle));                                             \
    } else {                                                                       \
      t_pass++;                                                                    \
    }                                                                              \
  } while (0)

/* Compare an array's printed form. */
#define CHECK_PRINTS(arr, expected)                                                \
  do {                                                                             \
    mlx_string s_ = mlx_string_new();                                              \
    int rc_ = mlx_array_tostring(&s_, (arr));                                      \
    const char *got_ = rc_ ? NULL : mlx_string_data(s_);                           \
    if (got_ && strcmp(got_, (expected)) == 0) {                                   \
      t_pass++;                                                                    \
    } else {                                                                       \
      t_fail++;                                                                    \
      fprintf(stderr, "%s:%d: printed\n%s\nexpected\n%s\n", __FILE__, __LINE__,    \
              got_ ? got_ : "(error)", (expected));                                \
    }                                                                              \
    mlx_string_free(s_);                                                           \
  } while (0)

/* r_ = the mlx_array the call writes (it must return 0), then compare its
 * printed form and free it: EXPECT(mlx_abs(&r_, a, S), "array(...)"). */
#define EXPECT(call, expected)                                                     \
  do {                                                                             \
    mlx_array r_ = mlx_array_new();                                                \
    CHECK((call) == 0);                                                            \
    CHECK_PRINTS(r_, expected);                                                    \
    mlx_array_free(r_);                                                            \
  } while (0)

/* 1-d arrays from C data (inline: not every test uses them). */
static inline mlx_array vec_i32(const int32_t *v, int n) {
  int shape[1] = {n};
  return mlx_array_new_data(v, shape, 1, MLX_INT32);
}

static inline mlx_array vec_f32(const float *v, int n) {
  int shape[1] = {n};
  return mlx_array_new_data(v, shape, 1, MLX_FLOAT32);
}

static int t_finish(void) {
  printf("%d passed, %d failed\n", t_pass, t_fail);
  return t_fail ? 1 : 0;
}

#endif
