#include "primitives/creation.h"
#include "primitives/export_desc.h"

const cm_prim cm_prim_arange = {
    .name = "Arange", .export = &cm_export_arange, CM_PARAMS_OF(cm_arange_params)};
const cm_prim cm_prim_linspace = {.name = "Linspace", CM_PARAMS_OF(cm_linspace_params)};
const cm_prim cm_prim_eye = {.name = "Eye", CM_PARAMS_OF(cm_band_params)};
const cm_prim cm_prim_tri = {.name = "Tri", CM_PARAMS_OF(cm_band_params)};
