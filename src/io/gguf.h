/* GGUF internals shared by gguf.c and gguf_quants.c. */
#ifndef CMLX_IO_GGUF_H
#define CMLX_IO_GGUF_H

#include "io/io.h"

enum {
  GGUF_T_F32 = 0,
  GGUF_T_F16 = 1,
  GGUF_T_Q4_0 = 2,
  GGUF_T_Q4_1 = 3,
  GGUF_T_Q8_0 = 8,
  GGUF_T_Q2_K = 10,
  GGUF_T_Q4_K = 12,
  GGUF_T_Q6_K = 14,
  GGUF_T_I8 = 24,
  GGUF_T_I16 = 25,
  GGUF_T_I32 = 26,
  GGUF_T_BF16 = 30,
};

/* An evaluated array of the given shape whose bytes are read from r at
 * off (nbytes of them, checked against the file by the caller). */
cm_array *cm_gguf_read_array(cm_reader *r, uint64_t off, cm_dtype dtype, int ndim,
                             const int32_t *shape);

/* Q4_0, Q4_1, Q8_0 tensor "name" (MLX shape `shape`, last dim a multiple
 * of 32, bytes at off) as MLX's triple: name -> uint32 weights,
 * <name minus its last 7 characters> + ".scales" / ".biases" (float16). */
int cm_gguf_load_quantized(cm_reader *r, uint64_t off, uint32_t type, const char *name,
                           size_t namelen, int ndim, const int32_t *shape, cm_named_arrays *out);

/* Q2_K, Q4_K, Q6_K (256-weight super-blocks): bytes per super-block, 0
 * for other types. */
int cm_gguf_kquant_bytes(uint32_t type);
/* Such a tensor dequantized to float16, as MLX's loader gives it. */
int cm_gguf_load_kquant(cm_reader *r, uint64_t off, uint32_t type, int ndim, const int32_t *shape,
                        cm_array **out);

#endif
