/* Per-op cost of the C API's handle layer: N times { r = mlx_array_new();
 * mlx_add(&r, a, b, s); mlx_array_free(r); } on 0-d arrays (graph building
 * only, no eval: the path where a handle check weighs most), plus the same
 * with the result reused in place, and built, evaluated and freed (the
 * per-op cost of a program that runs its ops).  Prints the median of REPS runs in ns per
 * op; compare builds before and after a change (speed is never asserted).
 *   cc -O2 -std=c11 -I include benchmarks/bench_capi_handles.c -Lbuild -lcmlx \
 *      -Wl,-rpath,$PWD/build -o /tmp/bench_capi_handles && /tmp/bench_capi_handles
 * What cells cost: build the library a second time without them
 * (cmake -B build-nocell -DCMAKE_C_FLAGS=-DCMLX_MEASURE_NO_CELLS, target
 * cmlx; see handle.h) and compare, in ns here and in instructions with
 * callgrind on a -fno-inline build of this file:
 *   valgrind --tool=callgrind --toggle-collect=fresh ./bench N 1
 * for two N (the difference divided by the difference of N is the steady
 * state per op, without start-up and the ring's first lap). */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mlx/c/mlx.h"

/* argv[1]: ops per run (default 1e6); argv[2]: runs (default 7); argv[3]
 * "cpu": time this thread's CPU time instead of the wall clock, which on
 * a loaded machine is far steadier (graph building runs on this thread). */
static int N = 1000000, REPS = 7;
static clockid_t clk = CLOCK_MONOTONIC;

static double now(void) {
  struct timespec t;
  clock_gettime(clk, &t);
  return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp(const void *x, const void *y) {
  double a = *(const double *)x, b = *(const double *)y;
  return (a > b) - (a < b);
}

static double fresh(mlx_array a, mlx_array b, mlx_stream s) {
  double t0 = now();
  for (int i = 0; i < N; i++) {
    mlx_array r = mlx_array_new();
    if (mlx_add(&r, a, b, s)) exit(1);
    mlx_array_free(r);
  }
  return (now() - t0) / N;
}

/* The op as a program runs it: built and evaluated, then freed (the
 * per-op cost the cells' share is measured against). */
static double evaluated(mlx_array a, mlx_array b, mlx_stream s) {
  double t0 = now();
  int n = N / 10 > 0 ? N / 10 : 1;
  for (int i = 0; i < n; i++) {
    mlx_array r = mlx_array_new();
    if (mlx_add(&r, a, b, s) || mlx_array_eval(r)) exit(1);
    mlx_array_free(r);
  }
  return (now() - t0) / n;
}

static double reused(mlx_array a, mlx_array b, mlx_stream s) {
  mlx_array r = mlx_array_new();
  double t0 = now();
  for (int i = 0; i < N; i++)
    if (mlx_add(&r, a, b, s)) exit(1);
  double dt = (now() - t0) / N;
  mlx_array_free(r);
  return dt;
}

int main(int argc, char **argv) {
  if (argc > 1) N = atoi(argv[1]);
  if (argc > 2) REPS = atoi(argv[2]);
  if (argc > 3 && strcmp(argv[3], "cpu") == 0) clk = CLOCK_THREAD_CPUTIME_ID;
  if (N < 1 || REPS < 1 || REPS > 101) return 2;
  mlx_stream s = mlx_default_cpu_stream_new();
  mlx_array a = mlx_array_new_float32(1), b = mlx_array_new_float32(2);
  double t1[101], t2[101], t3[101];
  for (int k = 0; k < REPS; k++) {
    t1[k] = fresh(a, b, s);
    t2[k] = reused(a, b, s);
    t3[k] = evaluated(a, b, s);
  }
  qsort(t1, REPS, sizeof *t1, cmp);
  qsort(t2, REPS, sizeof *t2, cmp);
  qsort(t3, REPS, sizeof *t3, cmp);
  printf("add+free, new result:   %.1f ns/op (median of %d x %d%s)\n", t1[REPS / 2], REPS, N,
         clk == CLOCK_MONOTONIC ? "" : ", CPU time");
  printf("add, result reused:     %.1f ns/op\n", t2[REPS / 2]);
  printf("add+eval+free:          %.1f ns/op (N / 10 ops a run)\n", t3[REPS / 2]);
  mlx_array_free(a), mlx_array_free(b), mlx_stream_free(s);
  return 0;
}
