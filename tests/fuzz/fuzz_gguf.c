/* libFuzzer target: the GGUF parser (header, metadata of every value type,
 * tensor infos, alignment, F32/F16/BF16 and Q4_0/Q4_1/Q8_0 tensors). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_named(data, size, cm_load_gguf);
}
