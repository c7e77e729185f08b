#include "primitives/creation.h"

#include "backend/cpu/creation.h"

const cm_prim cm_prim_arange = {.name = "Arange", .eval_cpu = cm_cpu_arange};
const cm_prim cm_prim_linspace = {.name = "Linspace", .eval_cpu = cm_cpu_linspace};
const cm_prim cm_prim_eye = {.name = "Eye", .eval_cpu = cm_cpu_eye};
const cm_prim cm_prim_tri = {.name = "Tri", .eval_cpu = cm_cpu_tri};
