#include "primitives/creation.h"

#include "backend/cpu/creation.h"

const cm_prim cm_prim_arange = {
    .name = "Arange", CM_PARAMS_OF(cm_arange_params), .eval_cpu = cm_cpu_arange};
const cm_prim cm_prim_linspace = {
    .name = "Linspace", CM_PARAMS_OF(cm_linspace_params), .eval_cpu = cm_cpu_linspace};
const cm_prim cm_prim_eye = {
    .name = "Eye", CM_PARAMS_OF(cm_band_params), .eval_cpu = cm_cpu_eye};
const cm_prim cm_prim_tri = {
    .name = "Tri", CM_PARAMS_OF(cm_band_params), .eval_cpu = cm_cpu_tri};
