/* Row loops of the binary ops that compare or work on bits: the six
 * comparisons (any dtype -> bool), logical and/or/xor (bool), bitwise
 * and/or/xor (bool and integers) and the shifts (integers). */
#include "backend/cpu/binary_impl.h"

/* Comparisons: X(suffix, type). */
#define CMP_ROWS(S, T)                \
  CM_BIN_ROW(eq_##S, T, bool, x == y) \
  CM_BIN_ROW(ne_##S, T, bool, x != y) \
  CM_BIN_ROW(lt_##S, T, bool, x < y)  \
  CM_BIN_ROW(le_##S, T, bool, x <= y) \
  CM_BIN_ROW(gt_##S, T, bool, x > y)  \
  CM_BIN_ROW(ge_##S, T, bool, x >= y)

CMP_ROWS(b8, bool)
#define INT_CMP(S, T, U, W) CMP_ROWS(S, T)
CM_INT_TYPES(INT_CMP)
#define FLOAT_CMP(S, T, M) CMP_ROWS(S, T)
CM_FLOAT_TYPES(FLOAT_CMP)
/* float16 and bfloat16 compare as float32 (the widening is exact) */
CM_HALF_ROWS(eq, false)
CM_HALF_ROWS(ne, false)
CM_HALF_ROWS(lt, false)
CM_HALF_ROWS(le, false)
CM_HALF_ROWS(gt, false)
CM_HALF_ROWS(ge, false)

/* complex: equality on both parts, order lexicographic (real, then imag) */
CM_BIN_ROW(eq_c64, cm_c64_t, bool, x == y)
CM_BIN_ROW(ne_c64, cm_c64_t, bool, x != y)
CM_BIN_ROW(lt_c64, cm_c64_t, bool, cm_c_lt(x, y))
CM_BIN_ROW(le_c64, cm_c64_t, bool, cm_c_le(x, y))
CM_BIN_ROW(gt_c64, cm_c64_t, bool, cm_c_gt(x, y))
CM_BIN_ROW(ge_c64, cm_c64_t, bool, cm_c_ge(x, y))

/* logical ops see bool inputs (the op casts them) */
CM_BIN_ROW(land_b8, bool, bool, x & y)
CM_BIN_ROW(lor_b8, bool, bool, x | y)
CM_BIN_ROW(lxor_b8, bool, bool, x ^ y)

/* bitwise on bool is the logical op */
#define band_b8 land_b8
#define bor_b8 lor_b8
#define bxor_b8 lxor_b8

/* Shifts: the count is masked to the width of the type the value is
 * widened to (31 up to 32-bit types, 63 for 64-bit), as x86 does for
 * MLX's scalar loop; so 3 << 100 is 48 for int32, and 1 << 8 is 0 for int8. */
#define INT_BIT_ROWS(S, T, U, W)              \
  CM_BIN_ROW(band_##S, T, T, (T)(x & y))      \
  CM_BIN_ROW(bor_##S, T, T, (T)(x | y))       \
  CM_BIN_ROW(bxor_##S, T, T, (T)(x ^ y))      \
  CM_BIN_ROW(shl_##S, T, T, cm_shl_##S(x, y)) \
  CM_BIN_ROW(shr_##S, T, T, cm_shr_##S(x, y))
CM_INT_TYPES(INT_BIT_ROWS)

/* the rows of the ops whose file column is CMP (backend/cpu/binary_table.h) */
CM_ROW_TABLE(cmp_table, CMP);
#undef band_b8
#undef bor_b8
#undef bxor_b8

cm_binary_row_fn CM_ROW_LOOKUP(cm_binary_cmp_row)(cm_binary_op op, cm_dtype t) {
  if ((unsigned)op >= CM_BINARY_NUM_OPS || (unsigned)t >= CM_NUM_DTYPES) return NULL;
  return cmp_table[op][t];
}
