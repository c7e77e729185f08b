/* The MPI transport (src/distributed/mpi.c) across real processes.
 *
 * Started plainly (by ctest), it checks the transport reports itself
 * unavailable, then runs itself under `mpirun -np 1`, `-np 2` and `-np 4` (and once
 * with a libmpi that does not exist); without mpirun it skips those.  Under
 * mpirun every rank checks all_reduce (sum, max, min on every dtype, in and
 * out of place, empty), all_gather, reduce_scatter, send/recv around the ring
 * and split groups against values computed locally. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/dtype.h"
#include "core/error.h"
#include "distributed/comm.h"

static int failures = 0;
static int world_rank = -1;

#define CHECK(cond, ...)                                                    \
  do {                                                                      \
    if (!(cond)) {                                                          \
      fprintf(stderr, "[rank %d] %s:%d: ", world_rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                         \
      fprintf(stderr, "\n");                                                \
      failures++;                                                           \
    }                                                                       \
  } while (0)

/* Element i of rank r: small integers, exact in every dtype. */
static double value(cm_dtype dt, int r, size_t i) {
  if (dt == CM_BOOL) return (i + (size_t)r) % 3 == 0;
  double v = (double)((i * 7 + (size_t)r * 3) % 11);
  bool is_unsigned = dt >= CM_UINT8 && dt <= CM_UINT64;
  return is_unsigned ? v : v - 5;
}
static double imag_value(int r, size_t i) { return (double)((i + (size_t)r) % 5) - 2; }

static void fill(void *buf, cm_dtype dt, int r, size_t n) {
  size_t es = cm_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    cm_store_double((char *)buf + i * es, dt, value(dt, r, i));
    if (dt == CM_COMPLEX64) ((cm_complex64 *)buf)[i].im = (float)imag_value(r, i);
  }
}

/* The reduction over ranks [0, size) of element i (complex: re, im). */
static void expected(cm_dtype dt, cm_reduce_op op, const int *ranks, int size, size_t i, double *re,
                     double *im) {
  *re = value(dt, ranks[0], i);
  *im = imag_value(ranks[0], i);
  for (int k = 1; k < size; k++) {
    double a = value(dt, ranks[k], i), b = imag_value(ranks[k], i);
    bool greater = a > *re || (dt == CM_COMPLEX64 && a == *re && b > *im);
    bool less = a < *re || (dt == CM_COMPLEX64 && a == *re && b < *im);
    if (op == CM_REDUCE_SUM) {
      *re += a;
      *im += b;
    } else if ((op == CM_REDUCE_MAX && greater) || (op == CM_REDUCE_MIN && less)) {
      *re = a;
      *im = b;
    }
  }
  if (dt == CM_BOOL) *re = *re != 0;
}

static void check_reduced(const void *out, cm_dtype dt, cm_reduce_op op, const int *ranks, int size,
                          size_t offset, size_t n, const char *what) {
  size_t es = cm_dtype_size(dt);
  for (size_t i = 0; i < n; i++) {
    double re, im;
    expected(dt, op, ranks, size, offset + i, &re, &im);
    double got = cm_load_as_double((const char *)out + i * es, dt);
    CHECK(got == re, "%s %s op %d [%zu]: got %g, want %g", what, cm_dtype_name(dt), (int)op, i, got,
          re);
    if (dt == CM_COMPLEX64) {
      double gi = ((const cm_complex64 *)out)[i].im;
      CHECK(gi == im, "%s complex op %d [%zu] imag: got %g, want %g", what, (int)op, i, gi, im);
    }
    if (got != re) return;
  }
}

static const cm_reduce_op OPS[3] = {CM_REDUCE_SUM, CM_REDUCE_MAX, CM_REDUCE_MIN};

static void test_all_reduce(cm_comm *c, const int *ranks) {
  const size_t sizes[] = {0, 1, 37, 4099};
  for (int d = 0; d < CM_NUM_DTYPES; d++) {
    cm_dtype dt = (cm_dtype)d;
    size_t es = cm_dtype_size(dt);
    for (int k = 0; k < 3; k++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t n = sizes[s];
        cm_reduce_op op = OPS[k];
        char *in = malloc(n * es + 1), *out = malloc(n * es + 1);
        fill(in, dt, ranks[c->rank], n);
        CHECK(c->ops->all_reduce(c, in, out, n, dt, op) == 0, "all_reduce: %s", cm_error_message());
        check_reduced(out, dt, op, ranks, c->size, 0, n, "all_reduce");
        /* in place */
        CHECK(c->ops->all_reduce(c, in, in, n, dt, op) == 0, "in place: %s", cm_error_message());
        check_reduced(in, dt, op, ranks, c->size, 0, n, "all_reduce in place");
        free(in);
        free(out);
      }
  }
}

static void test_reduce_scatter(cm_comm *c, const int *ranks) {
  const cm_dtype dts[] = {CM_FLOAT32, CM_FLOAT16, CM_BFLOAT16, CM_INT32, CM_COMPLEX64};
  const size_t count = 53;
  for (size_t d = 0; d < sizeof dts / sizeof dts[0]; d++) {
    size_t es = cm_dtype_size(dts[d]);
    char *in = malloc(count * (size_t)c->size * es), *out = malloc(count * es);
    fill(in, dts[d], ranks[c->rank], count * (size_t)c->size);
    for (int k = 0; k < 3; k++) {
      cm_reduce_op op = OPS[k];
      CHECK(c->ops->reduce_scatter(c, in, out, count, dts[d], op) == 0, "reduce_scatter: %s",
            cm_error_message());
      check_reduced(out, dts[d], op, ranks, c->size, count * (size_t)c->rank, count,
                    "reduce_scatter");
    }
    free(in);
    free(out);
  }
}

static void test_all_gather(cm_comm *c, const int *ranks) {
  const size_t sizes[] = {1, 13, 100003};
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
    size_t n = sizes[s];
    unsigned char *in = malloc(n), *out = malloc(n * (size_t)c->size);
    for (size_t i = 0; i < n; i++) in[i] = (unsigned char)(i * 31 + (size_t)ranks[c->rank]);
    CHECK(c->ops->all_gather(c, in, out, n) == 0, "all_gather: %s", cm_error_message());
    int bad = 0;
    for (int r = 0; r < c->size; r++)
      for (size_t i = 0; i < n; i++)
        bad += out[(size_t)r * n + i] != (unsigned char)(i * 31 + (size_t)ranks[r]);
    CHECK(bad == 0, "all_gather of %zu bytes: %d wrong", n, bad);
    free(in);
    free(out);
  }
}

/* Each rank sends to the next and receives from the previous; even ranks
 * send first, so large blocking messages cannot deadlock. */
static void test_send_recv(cm_comm *c) {
  const size_t n = 3 << 20;
  unsigned char *out = malloc(n), *in = malloc(n);
  int next = (c->rank + 1) % c->size, prev = (c->rank + c->size - 1) % c->size;
  for (size_t i = 0; i < n; i++) out[i] = (unsigned char)(i + (size_t)c->rank * 5);
  if (c->rank % 2 == 0) {
    CHECK(c->ops->send(c, out, n, next) == 0, "send: %s", cm_error_message());
    CHECK(c->ops->recv(c, in, n, prev) == 0, "recv: %s", cm_error_message());
  } else {
    CHECK(c->ops->recv(c, in, n, prev) == 0, "recv: %s", cm_error_message());
    CHECK(c->ops->send(c, out, n, next) == 0, "send: %s", cm_error_message());
  }
  int bad = 0;
  for (size_t i = 0; i < n; i++) bad += in[i] != (unsigned char)(i + (size_t)prev * 5);
  CHECK(bad == 0, "recv from %d: %d bytes wrong", prev, bad);
  CHECK(c->ops->send(c, out, 1, c->rank) == -1, "send to self must fail");
  CHECK(c->ops->send(c, out, 1, c->size) == -1, "send out of range must fail");
  CHECK(c->ops->recv(c, in, 1, -1) == -1, "recv from -1 must fail");
  free(out);
  free(in);
}

static void test_split(cm_comm *c) {
  /* Groups by parity, in reverse rank order. */
  cm_comm *sub = NULL;
  CHECK(c->ops->split(c, c->rank % 2, c->size - c->rank, &sub) == 0, "split: %s",
        cm_error_message());
  if (!sub) return;
  int members[16], m = 0;
  for (int r = c->size - 1; r >= 0; r--)
    if (r % 2 == c->rank % 2) members[m++] = r;
  CHECK(sub->size == m, "split size %d, want %d", sub->size, m);
  CHECK(members[sub->rank] == c->rank, "split rank %d of world rank %d", sub->rank, c->rank);
  if (sub->size > 1) {
    test_all_reduce(sub, members);
    test_all_gather(sub, members);
  }
  sub->ops->free(sub);
  /* key < 0: ordered by current rank; one color: the same group. */
  CHECK(c->ops->split(c, 0, -1, &sub) == 0, "split: %s", cm_error_message());
  if (sub) {
    CHECK(sub->rank == c->rank && sub->size == c->size, "split(0) rank %d size %d", sub->rank,
          sub->size);
    sub->ops->free(sub);
  }
  CHECK(c->ops->split(c, -3, 0, &sub) == -1 && sub == NULL, "negative color must fail");
}

static int run_under_mpirun(void) {
  if (getenv("CMLX_MPI_TEST_BADLIB")) {
    cm_comm *c = (cm_comm *)1;
    CHECK(!cm_mpi_available(), "available with a missing libmpi");
    CHECK(cm_mpi_init(false, &c) == 0 && c == NULL, "non-strict init with a missing libmpi");
    CHECK(cm_mpi_init(true, &c) == -1 && strstr(cm_error_message(), "libmpi"),
          "strict init with a missing libmpi: %s", cm_error_message());
    return failures ? 1 : 0;
  }
  CHECK(cm_mpi_available(), "MPI unavailable under mpirun");
  cm_comm *c = NULL;
  const char *world = getenv("OMPI_COMM_WORLD_SIZE");
  if (world && strcmp(world, "1") == 0) { /* mpirun -np 1: no distributed group */
    CHECK(cm_mpi_init(false, &c) == 0 && c == NULL, "non-strict init of a world of one");
    CHECK(cm_mpi_init(true, &c) == -1 && strstr(cm_error_message(), "single process"),
          "strict init of a world of one: %s", cm_error_message());
    return failures ? 1 : 0;
  }
  if (cm_mpi_init(true, &c) != 0 || !c) {
    fprintf(stderr, "cm_mpi_init: %s\n", cm_error_message());
    return 1;
  }
  world_rank = c->rank;
  CHECK(strcmp(c->ops->name, "mpi") == 0, "name %s", c->ops->name);
  int ranks[16];
  for (int r = 0; r < c->size && r < 16; r++) ranks[r] = r;
  test_all_reduce(c, ranks);
  float x = 1, y = 0;
  CHECK(c->ops->all_reduce(c, &x, &y, 1, CM_FLOAT32, CM_REDUCE_PROD) == -1,
        "a product reduction must be refused");
  test_reduce_scatter(c, ranks);
  test_all_gather(c, ranks);
  test_send_recv(c);
  test_split(c);
  /* A second init gives the same world again. */
  cm_comm *again = NULL;
  CHECK(cm_mpi_init(true, &again) == 0 && again && again->size == c->size, "second init");
  if (again) again->ops->free(again);
  int ok = failures == 0, all_ok = 0;
  c->ops->all_reduce(c, &ok, &all_ok, 1, CM_INT32, CM_REDUCE_MIN);
  if (c->rank == 0) printf("mpi transport, %d ranks: %s\n", c->size, all_ok ? "ok" : "FAILED");
  c->ops->free(c);
  return failures ? 1 : 0;
}

static const char *find_mpirun(void) {
  static char path[4096];
  const char *env = getenv("PATH");
  if (!env) return NULL;
  while (*env) {
    size_t n = strcspn(env, ":");
    snprintf(path, sizeof path, "%.*s/mpirun", (int)n, env);
    if (access(path, X_OK) == 0) return path;
    env += n + (env[n] == ':');
  }
  return NULL;
}

int main(int argc, char **argv) {
  (void)argc;
  if (getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK")) return run_under_mpirun();

  /* Not started by mpirun: unavailable, non-strict init gives no group. */
  cm_comm *c = (cm_comm *)1;
  CHECK(!cm_mpi_available(), "available outside mpirun");
  CHECK(cm_mpi_init(false, &c) == 0 && c == NULL, "non-strict init outside mpirun");
  CHECK(cm_mpi_init(true, &c) == -1 && c == NULL, "strict init outside mpirun");
  const char *mpirun = find_mpirun();
  if (!mpirun) {
    printf("test_mpi_transport: mpirun not found, multi-process checks skipped\n");
    return failures ? 1 : 0;
  }
  /* Under ASan the ranks skip leak checking: Open MPI keeps allocations
   * for the process lifetime (in components it unloads, so they cannot be
   * suppressed by name).  Memory errors are still caught; this process's
   * checks above keep leak checking. */
  char opts[4096];
  const char *old = getenv("ASAN_OPTIONS");
  snprintf(opts, sizeof opts, "%s%sdetect_leaks=0", old ? old : "", old && *old ? ":" : "");
  setenv("ASAN_OPTIONS", opts, 1);
  const char *runs[] = {"-np 1", "-np 2", "-np 4",
                        "-np 2 -x CMLX_MPI_TEST_BADLIB=1 -x "
                        "MPI_LIBNAME=/nonexistent/libmpi.so"};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    char cmd[8192];
    snprintf(cmd, sizeof cmd,
             "'%s' --allow-run-as-root --oversubscribe --mca btl self,vader %s '%s'", mpirun,
             runs[i], argv[0]);
    int rc = system(cmd);
    CHECK(rc == 0, "'%s' exited with %d", cmd, rc);
  }
  printf("test_mpi_transport: %s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
