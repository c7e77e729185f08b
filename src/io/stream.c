/* Readers and writers (see stream.h). */
#include "io/stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/error.h"

cm_reader *cm_reader_new(const cm_reader_ops *ops, void *ctx, bool serialise, const char *label) {
  cm_reader *r = calloc(1, sizeof *r);
  if (!r) {
    if (ops->close) ops->close(ctx);
    cm_error(CM_ERR_MEMORY, "[load] Out of memory.");
    return NULL;
  }
  atomic_init(&r->refs, 1);
  r->ops = *ops;
  r->ctx = ctx;
  r->locked = serialise;
  if (serialise) pthread_mutex_init(&r->lock, NULL);
  snprintf(r->label, sizeof r->label, "%s", label ? label : "stream");
  return r;
}

cm_reader *cm_reader_retain(cm_reader *r) {
  if (r) atomic_fetch_add_explicit(&r->refs, 1, memory_order_relaxed);
  return r;
}

void cm_reader_release(cm_reader *r) {
  if (!r || atomic_fetch_sub_explicit(&r->refs, 1, memory_order_acq_rel) != 1) return;
  if (r->ops.close) r->ops.close(r->ctx);
  if (r->locked) pthread_mutex_destroy(&r->lock);
  free(r);
}

int cm_reader_read(cm_reader *r, void *dst, size_t n, uint64_t off) {
  if (n == 0) return 0;
  if (r->locked) pthread_mutex_lock(&r->lock);
  int rc = r->ops.read_at(r->ctx, dst, n, off);
  if (r->locked) pthread_mutex_unlock(&r->lock);
  return rc;
}

int cm_reader_size(cm_reader *r, uint64_t *out) {
  if (r->locked) pthread_mutex_lock(&r->lock);
  int rc = r->ops.size(r->ctx, out);
  if (r->locked) pthread_mutex_unlock(&r->lock);
  return rc;
}

/* ---- files: pread on a descriptor, safe from any thread ---- */

static int fd_read_at(void *ctx, void *dst, size_t n, uint64_t off) {
  int fd = (int)(intptr_t)ctx;
  char *p = dst;
  while (n) {
    if (off > (uint64_t)INT64_MAX)
      return cm_error(CM_ERR_RUNTIME, "[read] Unable to read from file.");
    size_t chunk = n < (1u << 30) ? n : (1u << 30);
    ssize_t m = pread(fd, p, chunk, (off_t)off);
    if (m < 0 && errno == EINTR) continue;
    if (m <= 0) return cm_error(CM_ERR_RUNTIME, "[read] Unable to read %zu bytes from file.", n);
    p += m, n -= (size_t)m, off += (uint64_t)m;
  }
  return 0;
}

static int fd_size(void *ctx, uint64_t *out) {
  struct stat st;
  if (fstat((int)(intptr_t)ctx, &st) != 0)
    return cm_error(CM_ERR_RUNTIME, "[load] Unable to stat file: %s", strerror(errno));
  *out = (uint64_t)st.st_size;
  return 0;
}

static void fd_close(void *ctx) { close((int)(intptr_t)ctx); }

cm_reader *cm_reader_file(const char *fn, const char *path) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd >= 0 && (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode))) {
    close(fd);
    fd = -1;
  }
  if (fd < 0) {
    cm_error(CM_ERR_RUNTIME, "[%s] Failed to open file %s", fn, path);
    return NULL;
  }
  static const cm_reader_ops ops = {fd_read_at, fd_size, fd_close};
  char label[256];
  snprintf(label, sizeof label, "file %s", path);
  return cm_reader_new(&ops, (void *)(intptr_t)fd, false, label);
}

/* ---- memory ---- */

typedef struct mem_src {
  unsigned char *data;
  size_t n;
  void (*free_fn)(void *);
} mem_src;

static int mem_read_at(void *ctx, void *dst, size_t n, uint64_t off) {
  mem_src *m = ctx;
  if (off > m->n || n > m->n - off)
    return cm_error(CM_ERR_RUNTIME, "[read] Unable to read %zu bytes at offset %llu.", n,
                    (unsigned long long)off);
  memcpy(dst, m->data + off, n);
  return 0;
}

static int mem_size(void *ctx, uint64_t *out) {
  *out = ((mem_src *)ctx)->n;
  return 0;
}

static void mem_close(void *ctx) {
  mem_src *m = ctx;
  if (m->free_fn) m->free_fn(m->data);
  free(m);
}

cm_reader *cm_reader_memory(void *data, size_t n, void (*free_fn)(void *), const char *label) {
  mem_src *m = malloc(sizeof *m);
  if (!m) {
    if (free_fn) free_fn(data);
    cm_error(CM_ERR_MEMORY, "[load] Out of memory.");
    return NULL;
  }
  *m = (mem_src){data, n, free_fn};
  static const cm_reader_ops ops = {mem_read_at, mem_size, mem_close};
  return cm_reader_new(&ops, m, false, label);
}

/* ---- a window of another reader ---- */

typedef struct window_src {
  cm_reader *base;
  uint64_t off, n;
} window_src;

static int win_read_at(void *ctx, void *dst, size_t n, uint64_t off) {
  window_src *w = ctx;
  if (off > w->n || n > w->n - off)
    return cm_error(CM_ERR_RUNTIME, "[read] Unable to read %zu bytes at offset %llu.", n,
                    (unsigned long long)off);
  return cm_reader_read(w->base, dst, n, w->off + off);
}

static int win_size(void *ctx, uint64_t *out) {
  *out = ((window_src *)ctx)->n;
  return 0;
}

static void win_close(void *ctx) {
  window_src *w = ctx;
  cm_reader_release(w->base);
  free(w);
}

cm_reader *cm_reader_window(cm_reader *base, uint64_t off, uint64_t n, const char *label) {
  window_src *w = malloc(sizeof *w);
  if (!w) {
    cm_error(CM_ERR_MEMORY, "[load] Out of memory.");
    return NULL;
  }
  *w = (window_src){cm_reader_retain(base), off, n};
  static const cm_reader_ops ops = {win_read_at, win_size, win_close};
  return cm_reader_new(&ops, w, false, label);
}

/* ---- writers ---- */

int cm_writer_put(cm_writer *w, const void *src, size_t n) {
  if (n == 0) return 0;
  if (w->write(w->ctx, src, n)) return -1;
  w->pos += n;
  return 0;
}

static int fd_write(void *ctx, const void *src, size_t n) {
  int fd = (int)(intptr_t)ctx;
  const char *p = src;
  while (n) {
    size_t chunk = n < (1u << 30) ? n : (1u << 30);
    ssize_t m = write(fd, p, chunk);
    if (m < 0 && errno == EINTR) continue;
    if (m <= 0)
      return cm_error(CM_ERR_RUNTIME, "[save] Unable to write to file: %s", strerror(errno));
    p += m, n -= (size_t)m;
  }
  return 0;
}

int cm_writer_file(const char *fn, const char *path, cm_writer *w) {
  /* Not O_TRUNC: the file is cut to what was written when it is closed.
   * Truncating an existing file to 0 first makes ext4 flush it to disk on
   * close (its auto_da_alloc heuristic), which doubles the time to save. */
  int fd = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0644);
  if (fd < 0) return cm_error(CM_ERR_RUNTIME, "[%s] Failed to open file %s", fn, path);
  *w = (cm_writer){fd_write, (void *)(intptr_t)fd, 0, path};
  return 0;
}

int cm_writer_file_close(cm_writer *w) {
  int fd = (int)(intptr_t)w->ctx;
  if (fd < 0) return 0;
  w->ctx = (void *)(intptr_t)-1;
  struct stat st;
  int trunc = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? ftruncate(fd, (off_t)w->pos) : 0;
  if (close(fd) != 0 || trunc != 0)
    return cm_error(CM_ERR_RUNTIME, "[save] Unable to write to file: %s", strerror(errno));
  return 0;
}

int cm_writer_path(const char *fn, const char *path, const char *ext, cm_writer *w) {
  char *p = cm_io_with_ext(path, ext);
  if (!p) return -1;
  int rc = cm_writer_file(fn, p, w);
  free(p);
  return rc;
}

int cm_writer_finish(cm_writer *w, int rc) {
  int rc2 = cm_writer_file_close(w);
  return rc ? rc : rc2;
}

char *cm_io_with_ext(const char *path, const char *ext) {
  size_t n = strlen(path), e = strlen(ext);
  bool has = n >= e && strcmp(path + n - e, ext) == 0;
  char *out = malloc(n + e + 1);
  if (!out) {
    cm_error(CM_ERR_MEMORY, "[save] Out of memory.");
    return NULL;
  }
  memcpy(out, path, n);
  memcpy(out + n, has ? "" : ext, has ? 1 : e + 1);
  return out;
}
