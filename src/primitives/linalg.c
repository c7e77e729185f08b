#include "primitives/linalg.h"

#include "backend/cpu/linalg.h"

const cm_prim cm_prim_svd = {.name = "SVD", .eval_cpu = cm_cpu_svd};
