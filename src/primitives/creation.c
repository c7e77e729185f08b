#include "primitives/creation.h"
#include "primitives/export_desc.h"

#include "backend/cpu/creation.h"

const cm_prim cm_prim_arange = {.name = "Arange",
                                .export = &cm_export_arange,
                                .params_size = sizeof(cm_arange_params),
                                .eval_cpu = cm_cpu_arange};
const cm_prim cm_prim_linspace = {
    .name = "Linspace", .params_size = sizeof(cm_linspace_params), .eval_cpu = cm_cpu_linspace};
const cm_prim cm_prim_eye = {
    .name = "Eye", .params_size = sizeof(cm_band_params), .eval_cpu = cm_cpu_eye};
const cm_prim cm_prim_tri = {
    .name = "Tri", .params_size = sizeof(cm_band_params), .eval_cpu = cm_cpu_tri};
