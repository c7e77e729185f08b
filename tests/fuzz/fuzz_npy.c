/* libFuzzer target: the .npy parser (magic, version, header dict, shape,
 * dtype, byte order). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  cm_reader *r = fuzz_reader(data, size);
  if (r) {
    cm_array *a = cm_load_npy(r, fuzz_stream());
    if (a && cm_eval(&a, 1)) cm_error_clear();
    if (a) cm_release(a);
    cm_reader_release(r);
  }
  cm_error_clear();
  return 0;
}
