#include "primitives/ternary.h"
#include "primitives/export_desc.h"
#include "primitives/rules.h"
#include "primitives/rules_util.h"

const cm_prim cm_prim_select = {.name = "Select",
                                .export = &cm_export_select,
                                .output_shape = cm_shape_of_broadcast,
                                .vjp = cm_rule_select_vjp,
                                .jvp = cm_rule_select_jvp,
                                .vmap = cm_rule_select_vmap};
