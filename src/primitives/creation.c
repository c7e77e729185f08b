#include "primitives/creation.h"

const cm_prim cm_prim_arange = {.name = "Arange", .params_size = sizeof(cm_arange_params)};
const cm_prim cm_prim_linspace = {.name = "Linspace", .params_size = sizeof(cm_linspace_params)};
const cm_prim cm_prim_eye = {.name = "Eye", .params_size = sizeof(cm_band_params)};
const cm_prim cm_prim_tri = {.name = "Tri", .params_size = sizeof(cm_band_params)};
