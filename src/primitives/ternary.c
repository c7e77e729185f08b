#include "primitives/ternary.h"
#include "primitives/export_desc.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

#include "backend/cpu/ternary.h"

const cm_prim cm_prim_select = {.name = "Select",
                                .export = &cm_export_select,
                                .output_shape = cm_shape_of_broadcast,
                                .eval_cpu = cm_cpu_select,
                                .vjp = cm_rule_select_vjp,
                                .jvp = cm_rule_select_jvp,
                                .vmap = cm_rule_select_vmap};
