/* The registry of the op families' signature tables: each ops_<family>.c
 * defines pycm_ops_<family>[] and its count, and ops_module.c adds them all
 * to the module (pycm_init_ops).  Each defining file includes this header,
 * so a table and its declaration cannot drift apart. */
#ifndef CMLX_PY_OPS_TABLES_H
#define CMLX_PY_OPS_TABLES_H

#include "argparse.h"

#define PYCM_OP_TABLE(family)         \
  extern pycm_op pycm_ops_##family[]; \
  extern const int pycm_ops_##family##_count;
PYCM_OP_TABLE(creation)   /* ops_creation.c */
PYCM_OP_TABLE(unary)      /* ops_unary.c */
PYCM_OP_TABLE(binary)     /* ops_binary.c */
PYCM_OP_TABLE(misc)       /* ops_misc.c */
PYCM_OP_TABLE(shape)      /* ops_shape.c */
PYCM_OP_TABLE(shape_join) /* ops_shape_join.c */
PYCM_OP_TABLE(reduce)     /* ops_reduce.c */
PYCM_OP_TABLE(sortscan)   /* ops_sortscan.c */
PYCM_OP_TABLE(matmul)     /* ops_matmul.c */
PYCM_OP_TABLE(contract)   /* ops_contract.c */
PYCM_OP_TABLE(quantized)  /* ops_quantized.c */
PYCM_OP_TABLE(conv)       /* ops_conv.c */
PYCM_OP_TABLE(array_api)  /* ops_array_api.c */
#undef PYCM_OP_TABLE

#endif
