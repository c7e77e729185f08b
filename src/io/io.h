/* The array file formats of MLX 0.32: .npy, .npz (a zip of .npy members,
 * stored or deflated), safetensors and GGUF.  Both front doors (the Python
 * bindings and mlx-c's io.h) call these.
 *
 * Loading .npy, .npz members that are stored and safetensors is lazy, as in
 * MLX: the header is parsed now and each array is a Load node that reads
 * its bytes when evaluated (a file too short for its data fails there, as
 * a RuntimeError).  GGUF, deflated members and metadata are read now.
 * Every parser checks lengths, offsets, shapes and counts against the
 * source's size before it allocates or reads, so a hostile file is a clear
 * error (MLX's exception kind) and never an overread or a huge allocation. */
#ifndef CMLX_IO_IO_H
#define CMLX_IO_IO_H

#include <stdbool.h>
#include <stddef.h>

#include "core/array.h"
#include "io/stream.h"

/* ---- containers: insertion-ordered string -> value lists ---- */
typedef struct cm_named_arrays {
  size_t n, cap;
  char **keys;
  cm_array **arrs;
} cm_named_arrays;

/* Add key -> a (a's reference is taken, also on failure).  A key already
 * present is replaced when replace is set, else it is error "dup" (-1
 * with RuntimeError "[fn] Duplicate ... name <key>"). */
int cm_named_arrays_put(cm_named_arrays *m, const char *key, size_t keylen, cm_array *a,
                        bool replace, const char *fn);
cm_array *cm_named_arrays_get(const cm_named_arrays *m, const char *key); /* borrowed */
void cm_named_arrays_clear(cm_named_arrays *m);

typedef enum cm_meta_kind { CM_META_STRING, CM_META_ARRAY, CM_META_STRINGS } cm_meta_kind;
typedef struct cm_meta_value {
  cm_meta_kind kind;
  char *str; /* STRING (NUL-terminated; len bytes may hold NULs) */
  size_t len;
  cm_array *arr; /* ARRAY */
  char **strs;   /* STRINGS */
  size_t *lens;
  size_t nstrs;
} cm_meta_value;

typedef struct cm_metadata {
  size_t n, cap;
  char **keys;
  cm_meta_value *vals;
} cm_metadata;

/* Set key to a copy of the string / the array (retained) / copies of the
 * strings; an existing key is replaced. */
int cm_metadata_set_string(cm_metadata *m, const char *key, const char *s, size_t len);
int cm_metadata_set_array(cm_metadata *m, const char *key, cm_array *a);
int cm_metadata_set_strings(cm_metadata *m, const char *key, const char *const *s,
                            const size_t *lens, size_t n);
const cm_meta_value *cm_metadata_get(const cm_metadata *m, const char *key);
void cm_metadata_clear(cm_metadata *m);

/* ---- MLX's order of a map's entries (key_order.c) ---- */
/* std::hash<std::string> of GNU libstdc++ (64-bit). */
uint64_t cm_std_string_hash(const char *s, size_t len);
/* The n keys, each a char * at keys + i * stride (distinct, NUL-free),
 * inserted in that order into a libstdc++ std::unordered_map<std::string,
 * ...>: the indices in the order the map iterates them, which is MLX's
 * order for loaded and saved arrays.  malloc'd; NULL with an error set. */
size_t *cm_hash_map_order(const void *keys, size_t stride, size_t n);
/* m's entries in that order, as a view: the keys and values stay m's;
 * release only the view's two lists, with cm_map_order_view_free. */
int cm_named_arrays_map_order(const cm_named_arrays *m, cm_named_arrays *view);
int cm_metadata_map_order(const cm_metadata *m, cm_metadata *view); /* m may be NULL */
void cm_map_order_view_free(char **keys, void *vals);

/* ---- .npy ---- */
cm_array *cm_load_npy(cm_reader *r, cm_stream s);
/* cm_load_npy, also giving the offset in r where the array's bytes end
 * (npz checks a stored member's CRC-32 on the read that reaches its end). */
cm_array *cm_load_npy_span(cm_reader *r, cm_stream s, uint64_t *data_end);
cm_array *cm_load_npy_path(const char *path, cm_stream s);
int cm_save_npy(cm_writer *w, cm_array *a);
int cm_save_npy_path(const char *path, cm_array *a); /* appends ".npy" as MLX does */

/* ---- .npz ---- */
/* Member "x.npy" becomes key "x". */
int cm_load_npz(cm_reader *r, cm_stream s, cm_named_arrays *out);
/* Each array as member "<key>.npy"; compressed uses deflate (zlib). */
int cm_save_npz(cm_writer *w, const cm_named_arrays *arrays, bool compressed);

/* ---- safetensors ---- */
int cm_load_safetensors(cm_reader *r, cm_stream s, cm_named_arrays *out, cm_metadata *meta);
int cm_save_safetensors(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta);
int cm_save_safetensors_path(const char *path, const cm_named_arrays *arrays,
                             const cm_metadata *meta);

/* ---- GGUF ---- */
/* Tensors F32, F16, I8, I16, I32 as they are, BF16 to float16 as MLX's
 * loader converts it, and Q4_0, Q4_1, Q8_0 as MLX's affine quantized
 * triple "<name>" (uint32 weights), "<prefix>.scales", "<prefix>.biases"
 * (float16, group size 32).  Metadata: numbers as 0-d arrays, arrays of
 * numbers as 1-d arrays (float64 to float32, as MLX), strings, arrays of
 * strings. */
int cm_load_gguf(cm_reader *r, cm_stream s, cm_named_arrays *out, cm_metadata *meta);
int cm_save_gguf(cm_writer *w, const cm_named_arrays *arrays, const cm_metadata *meta);
int cm_save_gguf_path(const char *path, const cm_named_arrays *arrays, const cm_metadata *meta);

/* ---- shared helpers of the parsers ---- */
/* Read n bytes at off, failing with "[fn] <what> ... Perhaps an incomplete
 * download or corrupt file?" if the source is shorter. */
int cm_io_read_checked(cm_reader *r, void *dst, size_t n, uint64_t off, uint64_t size,
                       const char *fn);
/* Check a shape read from a file (each dim in [0, INT32_MAX], the total
 * byte size representable); -1 with a RuntimeError naming fn otherwise. */
int cm_io_check_shape(const char *fn, int ndim, const int64_t *dims, size_t itemsize,
                      uint64_t *nbytes);
/* The lazy Load node over r at offset (retains r). */
cm_array *cm_io_load_node(cm_reader *r, uint64_t offset, bool swap, cm_dtype dtype, int ndim,
                          const int32_t *shape, cm_stream s);
/* a evaluated and row-contiguous (a new reference). */
cm_array *cm_io_row_contiguous(cm_array *a, const char *fn);

#endif
