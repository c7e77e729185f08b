/* Byte sources and sinks for the file formats (npy, npz, safetensors,
 * gguf).  A reader is shared, counted and read by position: the Load
 * primitive keeps one and reads its array's bytes when it is evaluated
 * (possibly on a stream's worker thread), so a lazily loaded array holds
 * no copy of the file.  Readers come from a path (pread), from memory,
 * from a window of another reader (a stored npz member) or from callbacks
 * (a Python file object, an mlx-c reader); callbacks are serialised by the
 * reader's lock.  A writer is a sequential sink that counts its bytes. */
#ifndef CMLX_IO_STREAM_H
#define CMLX_IO_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cm_reader_ops {
  /* Read exactly n bytes at off (from the start of the source): 0, or -1
   * with the error set (a short read is an error). */
  int (*read_at)(void *ctx, void *dst, size_t n, uint64_t off);
  /* The source's size in bytes: 0, or -1 with the error set. */
  int (*size)(void *ctx, uint64_t *out);
  void (*close)(void *ctx); /* may be NULL */
} cm_reader_ops;

typedef struct cm_reader {
  atomic_long refs;
  cm_reader_ops ops;
  void *ctx;
  bool locked; /* serialise calls to ops (callback readers) */
  pthread_mutex_t lock;
  char label[256]; /* "file <path>", "python file object", ... */
} cm_reader;

/* A new reader (one reference) over ctx; NULL with the error set (ctx is
 * then closed).  serialise: every call takes the reader's lock. */
cm_reader *cm_reader_new(const cm_reader_ops *ops, void *ctx, bool serialise, const char *label);
/* Open path for reading; NULL with MLX's error ("[fn] Failed to open
 * file <path>") when it cannot be opened. */
cm_reader *cm_reader_file(const char *fn, const char *path);
/* Over n bytes at data, which the reader frees with free_fn (may be NULL). */
cm_reader *cm_reader_memory(void *data, size_t n, void (*free_fn)(void *), const char *label);
/* Bytes [off, off + n) of base (retained). */
cm_reader *cm_reader_window(cm_reader *base, uint64_t off, uint64_t n, const char *label);
cm_reader *cm_reader_retain(cm_reader *r);
void cm_reader_release(cm_reader *r);
int cm_reader_read(cm_reader *r, void *dst, size_t n, uint64_t off);
int cm_reader_size(cm_reader *r, uint64_t *out);

/* Sequential sink: write n bytes (0, or -1 with the error set). */
typedef struct cm_writer {
  int (*write)(void *ctx, const void *src, size_t n);
  void *ctx;
  uint64_t pos; /* bytes written so far */
  const char *label;
} cm_writer;

int cm_writer_put(cm_writer *w, const void *src, size_t n);
/* A writer over a new file at path (created or truncated); close it with
 * cm_writer_file_close, which reports a failed flush. */
int cm_writer_file(const char *fn, const char *path, cm_writer *w);
int cm_writer_file_close(cm_writer *w);
/* cm_writer_file on path with ext appended unless present (MLX's save
 * functions do this). */
int cm_writer_path(const char *fn, const char *path, const char *ext, cm_writer *w);
/* Close a file writer after a save that returned rc: the first failure. */
int cm_writer_finish(cm_writer *w, int rc);

/* path with ext appended unless it already ends with it (MLX's save
 * functions do this); a malloc'd string or NULL (MemoryError set). */
char *cm_io_with_ext(const char *path, const char *ext);

#endif
