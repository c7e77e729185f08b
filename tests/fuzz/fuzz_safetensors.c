/* libFuzzer target: the safetensors parser (header JSON, dtypes, offsets). */
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  return fuzz_named(data, size, cm_load_safetensors);
}
