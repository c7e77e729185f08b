/* mlx/c/error.h.  As in mlx-c, the default handler prints
 * "MLX error: <message>" to stdout and exits the process with status -1;
 * programs that want to recover install their own handler.  The handler's
 * data is owned here once set with a destructor, and destroyed when it is
 * replaced. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "capi/capi.h"

static void default_handler(const char *msg, void *data) {
  (void)data;
  printf("MLX error: %s\n", msg);
  exit(-1);
}

static pthread_mutex_t handler_mu = PTHREAD_MUTEX_INITIALIZER;
static mlx_error_handler_func handler = default_handler;
static void *handler_data;
static void (*handler_dtor)(void *);

void mlx_set_error_handler(mlx_error_handler_func h, void *data, void (*dtor)(void *)) {
  pthread_mutex_lock(&handler_mu);
  void *old_data = handler_data;
  void (*old_dtor)(void *) = handler_dtor;
  handler = h ? h : default_handler;
  handler_data = data;
  handler_dtor = dtor;
  pthread_mutex_unlock(&handler_mu);
  if (old_dtor) old_dtor(old_data);
}

void capi_report(const char *msg) {
  pthread_mutex_lock(&handler_mu);
  mlx_error_handler_func h = handler;
  void *data = handler_data;
  pthread_mutex_unlock(&handler_mu);
  h(msg, data);
}

int capi_fail(void) {
  const char *msg = cm_error_message();
  capi_report(msg[0] ? msg : "[cmlx] Unknown error.");
  cm_error_clear();
  return 1;
}

static int vreport(const char *fmt, va_list ap) {
  char msg[1024];
  vsnprintf(msg, sizeof msg, fmt, ap);
  capi_report(msg);
  return 1;
}

int capi_errorf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(fmt, ap);
  va_end(ap);
  return 1;
}

int capi_null_result(const char *fn) {
  return capi_errorf("[%s] expected a non-NULL result pointer", fn);
}

int capi_empty_stream(const char *fn, const void *ctx) {
  return capi_need_handle(fn, ctx, CAPI_H_STREAM);
}

int capi_count(const char *fn, const char *what, long long n) {
  if (n >= 0) return 0;
  return capi_errorf("[%s] cannot create std::vector larger than max_size() (%s = %lld)", fn,
                     what, n);
}

int capi_not_impl(const char *name) { return capi_errorf("%s: not implemented yet in cmlx", name); }

/* mlx-c appends the source location to messages raised this way. */
void _mlx_error(const char *file, const int line, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (n < 0) n = 0;
  if ((size_t)n < sizeof msg) snprintf(msg + n, sizeof msg - (size_t)n, " at %s:%d", file, line);
  capi_report(msg);
}
