/* Typed parameter access (primitives/primitive.h): a block is read through
 * its struct's accessor, which checks the block's size in every build and,
 * in debug builds, that the node's descriptor declared that struct.  A
 * failed check is a bug in cmlx, so it aborts with a message: those cases
 * run in a forked child, and the parent checks that the child died of
 * SIGABRT and said why. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/array.h"
#include "ops/creation.h"
#include "ops/shape.h"
#include "primitives/binary.h"
#include "primitives/reduce.h"
#include "primitives/shape.h"
#include "primitives/unary.h"

#include "check.h"


static cm_stream cpu(void) { return check_cpu_stream(); }

/* Runs fn(arg) in a child with its stderr captured; true when the child
 * was killed by SIGABRT and wrote every one of want (NULL-terminated). */
static bool aborts_saying(void (*fn)(const void *), const void *arg, const char *const *want) {
  int fds[2];
  if (pipe(fds)) return false;
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    close(fds[0]);
    dup2(fds[1], STDERR_FILENO);
    fn(arg);
    _exit(0); /* the check let it through */
  }
  close(fds[1]);
  char msg[1024];
  size_t len = 0;
  ssize_t r;
  while (len < sizeof msg - 1 && (r = read(fds[0], msg + len, sizeof msg - 1 - len)) > 0)
    len += (size_t)r;
  msg[len] = 0;
  close(fds[0]);
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return false;
  bool ok = WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
  for (int i = 0; ok && want[i]; i++) ok = strstr(msg, want[i]) != NULL;
  if (!ok) fprintf(stderr, "child status %d, said: %s\n", status, msg);
  return ok;
}

static volatile int sink;

/* ---- what the children do ---- */

static void read_binary_as_reduce(const void *node) {
  sink = (int)cm_reduce_params_of(node)->op; /* 4 bytes read as a larger struct */
}
static void read_short_block(const void *node) {
  const cm_array *a = node;
  sink = (int)cm_unary_params_of_block(a->params, sizeof(cm_unary_params) - 1)->op;
}
static void read_null_block(const void *unused) {
  (void)unused;
  sink = (int)cm_binary_params_of_block(NULL, sizeof(cm_binary_params))->op;
}
#ifndef NDEBUG
static void read_binary_as_view(const void *node) {
  sink = (int)cm_view_params_of(node)->dtype; /* the same size: only the type differs */
}
#endif

static void test_reads(void) {
  cm_array *x = cm_array_scalar_double(1.0, CM_FLOAT32);
  cm_array *ins[2] = {x, x};
  cm_binary_params bp = {CM_BINARY_MULTIPLY};
  cm_array *b = cm_node_new(CM_FLOAT32, 0, NULL, &cm_prim_binary, &bp, sizeof bp, ins, 2, cpu());
  cm_unary_params up;
  memset(&up, 0, sizeof up);
  up.op = CM_UNARY_EXP;
  cm_array *u = cm_node_new(CM_FLOAT32, 0, NULL, &cm_prim_unary, &up, sizeof up, &x, 1, cpu());
  CHECK(b && u);
  if (!b || !u) return;

  /* the right struct: the node's own block */
  CHECK(cm_binary_params_of(b)->op == CM_BINARY_MULTIPLY);
  CHECK((const void *)cm_unary_params_of(u) == (const void *)u->params);
  CHECK(cm_unary_params_of_block(u->params, u->params_size)->op == CM_UNARY_EXP);
  CHECK(strcmp(cm_prim_unary.params_type, "cm_unary_params") == 0);
  /* op_name gets the block's size */
  CHECK(strcmp(cm_prim_name(u->prim, u->params, u->params_size), "Exp") == 0);
  CHECK(strcmp(cm_prim_name(b->prim, b->params, b->params_size), "Multiply") == 0);

  /* too small a block: caught in every build */
  CHECK(aborts_saying(read_binary_as_reduce, b,
                      (const char *const[]){"internal error", "Binary", "cm_reduce_params", NULL}));
  CHECK(aborts_saying(read_short_block, u, (const char *const[]){"cm_unary_params", NULL}));
  CHECK(aborts_saying(read_null_block, NULL, (const char *const[]){"cm_binary_params", NULL}));

  /* another family's struct of the same size: caught in debug builds */
  _Static_assert(sizeof(cm_view_params) == sizeof(cm_binary_params), "same-size structs");
#ifndef NDEBUG
  CHECK(aborts_saying(read_binary_as_view, b,
                      (const char *const[]){"internal error", "Binary", "cm_view_params", NULL}));
#else
  CHECK(cm_view_params_of(b) != NULL); /* release: the size check only */
#endif
  cm_release(b);
  cm_release(u);
  cm_release(x);
}

/* A variable-length block is shorter than its struct: the accessor checks
 * for the header, and the node holds the entries its header counts. */
static void test_variable_block(void) {
  int32_t shape[2] = {4, 6};
  cm_array *x = cm_zeros(2, shape, CM_FLOAT32, cpu());
  int32_t start[2] = {1, 0}, stop[2] = {3, 6};
  cm_array *s = cm_slice(x, 2, start, 2, stop, 0, NULL, cpu());
  CHECK(s && s->prim == &cm_prim_slice);
  if (s && s->prim == &cm_prim_slice) {
    CHECK(s->params_size < sizeof(cm_slice_params));
    const cm_slice_params *sp = cm_slice_params_of(s);
    CHECK(sp->n == 1 && sp->ax[0].axis == 0 && sp->ax[0].start == 1 && sp->ax[0].len == 2);
    CHECK(cm_slice_params_size((const cm_params *)(const void *)sp) == s->params_size);
  }
  cm_release(s);
  cm_release(x);
}

int main(void) {
  test_reads();
  test_variable_block();
  return check_report("test_param_access");
}
