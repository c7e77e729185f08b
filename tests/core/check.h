/* The checks the core tests (the files of tests/core) share: CHECK counts a passed
 * or failed condition (a failure prints where), check_report prints the
 * tally and gives main's exit status.  Each test is one executable, so the
 * counters are per test. */
#ifndef CMLX_TESTS_CORE_CHECK_H
#define CMLX_TESTS_CORE_CHECK_H

#include <stdio.h>

#include "core/stream.h"

static int pass, fail;

#define CHECK(c)                                                            \
  do {                                                                      \
    if (c) pass++;                                                          \
    else {                                                                  \
      fail++;                                                               \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
    }                                                                       \
  } while (0)

static inline int check_report(const char *test) {
  printf("%s: %d passed, %d failed\n", test, pass, fail);
  return fail ? 1 : 0;
}

/* The calling thread's default CPU stream. */
static inline cm_stream check_cpu_stream(void) {
  cm_stream s = CM_STREAM_DEFAULT;
  cm_stream_resolve(s, &s);
  return s;
}

#endif
