/* Every op constructor, for the front doors (C API, Python). */
#ifndef CMLX_OPS_OPS_H
#define CMLX_OPS_OPS_H

#include "ops/array_api.h"
#include "ops/binary.h"
#include "ops/common.h"
#include "ops/creation.h"
#include "ops/dtype_query.h"
#include "ops/indexing.h"
#include "ops/matmul.h"
#include "ops/quantized.h"
#include "ops/reduce.h"
#include "ops/scan.h"
#include "ops/shape.h"
#include "ops/sort.h"
#include "ops/ternary.h"
#include "ops/unary.h"
#include "transforms/eval.h"

#endif
