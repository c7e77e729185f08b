/* Single-threaded BLAS sections (blas_single.h), on OpenBLAS's global
 * thread count: a counter of open sections under a lock, the count saved
 * by the first and restored by the last. */
#include "backend/cpu/blas_single.h"

#include <cblas.h>
#include <pthread.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int open_sections, saved_threads;

void cm_blas_single_begin(void) {
  pthread_mutex_lock(&lock);
  if (open_sections++ == 0) {
    saved_threads = openblas_get_num_threads();
    if (saved_threads > 1) openblas_set_num_threads(1);
  }
  pthread_mutex_unlock(&lock);
}

void cm_blas_single_end(void) {
  pthread_mutex_lock(&lock);
  if (--open_sections == 0 && saved_threads > 1) openblas_set_num_threads(saved_threads);
  pthread_mutex_unlock(&lock);
}
