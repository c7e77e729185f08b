#include "primitives/unary.h"

#include "backend/cpu/unary.h"

static const char *const names[CM_UNARY_NUM_OPS] = {
    [CM_UNARY_NEGATIVE] = "Negative",
    [CM_UNARY_EXP] = "Exp",
};

const char *cm_unary_op_name(cm_unary_op op) { return names[op]; }

static const char *op_name(const cm_params *p) {
  return cm_unary_op_name(((const cm_unary_params *)p)->op);
}

const cm_prim cm_prim_unary = {.name = "Unary", .op_name = op_name, .eval_cpu = cm_cpu_unary};
