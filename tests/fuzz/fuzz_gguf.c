/* libFuzzer target: the GGUF parser (header, metadata of every value type,
 * tensor infos, alignment, F32/F16/BF16 and Q4_0/Q4_1/Q8_0 tensors), and
 * valid files of fuzzer-chosen tensors of the dtypes MLX writes to GGUF
 * (float32, float16, int8, int16, int32), which must load back exactly. */
#include "fuzz_roundtrip.h"

static int save(cm_writer *w, const cm_named_arrays *arrays, bool flag) {
  (void)flag;
  return cm_save_gguf(w, arrays, NULL);
}

static int load(cm_reader *r, cm_stream s, cm_named_arrays *out) {
  return cm_load_gguf(r, s, out, NULL);
}

static const fuzz_format gguf = {
    .name = "gguf",
    .dtypes = 1u << CM_FLOAT32 | 1u << CM_FLOAT16 | 1u << CM_INT8 | 1u << CM_INT16 | 1u << CM_INT32,
    .nonempty = true,
    .save = save,
    .load = load,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  fuzz_named(data, size, cm_load_gguf);
  fuzz_round_trip(data, size, &gguf);
  return 0;
}
