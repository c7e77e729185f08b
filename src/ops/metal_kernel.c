/* mx.fast.metal_kernel without Metal (see metal_kernel.h): the generated
 * source (MLX's write_signature / write_template), the kernel name, and
 * the CustomKernel node. */
#include "ops/metal_kernel.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/export_tracing.h"
#include "core/strbuf.h"
#include "primitives/custom_kernel.h"

/* Inputs with fewer elements are passed in Metal's constant space. */
#define MAX_CONSTANT_ARRAY_SIZE 8

typedef cm_strbuf sbuf;
#define sb_addn cm_strbuf_put
#define sb_add cm_strbuf_str

static void sb_int(sbuf *b, long v) {
  char t[32];
  snprintf(t, sizeof t, "%ld", v);
  sb_add(b, t);
}

/* MLX's get_type_string. */
static const char *type_string(cm_dtype t) {
  switch (t) {
  case CM_FLOAT32: return "float";
  case CM_FLOAT16: return "float16_t";
  case CM_BFLOAT16: return "bfloat16_t";
  case CM_FLOAT64: return "double";
  case CM_COMPLEX64: return "complex64_t";
  case CM_BOOL: return "bool";
  case CM_INT8: return "int8_t";
  case CM_INT16: return "int16_t";
  case CM_INT32: return "int32_t";
  case CM_INT64: return "int64_t";
  case CM_UINT8: return "uint8_t";
  case CM_UINT16: return "uint16_t";
  case CM_UINT32: return "uint32_t";
  case CM_UINT64: return "uint64_t";
  default: return "";
  }
}

/* Metal's kernel attributes a source may use, with their types. */
static const char *const attributes[][2] = {
    {"dispatch_quadgroups_per_threadgroup", "uint"},
    {"dispatch_simdgroups_per_threadgroup", "uint"},
    {"dispatch_threads_per_threadgroup", "uint3"},
    {"grid_origin", "uint3"},
    {"grid_size", "uint3"},
    {"quadgroup_index_in_threadgroup", "uint"},
    {"quadgroups_per_threadgroup", "uint"},
    {"simdgroup_index_in_threadgroup", "uint"},
    {"simdgroups_per_threadgroup", "uint"},
    {"thread_execution_width", "uint"},
    {"thread_index_in_quadgroup", "uint"},
    {"thread_index_in_simdgroup", "uint"},
    {"thread_index_in_threadgroup", "uint"},
    {"thread_position_in_grid", "uint3"},
    {"thread_position_in_threadgroup", "uint3"},
    {"threadgroup_position_in_grid", "uint3"},
    {"threadgroups_per_grid", "uint3"},
    {"threads_per_grid", "uint3"},
    {"threads_per_simdgroup", "uint"},
    {"threads_per_threadgroup", "uint3"},
};
#define NATTR ((int)(sizeof attributes / sizeof attributes[0]))

/* Whether source mentions name followed by suffix. */
static bool mentions(const char *source, const char *name, const char *suffix) {
  size_t n = strlen(name), m = strlen(suffix);
  for (const char *p = strstr(source, name); p; p = strstr(p + 1, name))
    if (!strncmp(p + n, suffix, m)) return true;
  return false;
}

/* "<a, b>" of the template arguments' values. */
static void write_template(sbuf *b, const cm_template_arg *t, int n) {
  sb_add(b, "<");
  for (int i = 0; i < n; i++) {
    if (i) sb_add(b, ", ");
    if (t[i].kind == CM_TEMPLATE_DTYPE) sb_add(b, type_string((cm_dtype)t[i].value));
    else sb_int(b, t[i].kind == CM_TEMPLATE_BOOL ? t[i].value != 0 : t[i].value);
  }
  sb_add(b, ">");
}

/* MLX's kernel name: custom_kernel_<name>, the template's hash, then each
 * input's type (s: a scalar, c: in constant space) and each output's. */
static void kernel_name(sbuf *b, const char *name, const char *tdef, cm_array *const *in, int nin,
                        const cm_dtype *out_dtypes, int nout) {
  sb_add(b, "custom_kernel_");
  sb_add(b, name);
  if (tdef) {
    sb_add(b, "_");
    size_t n = strlen(tdef), start = b->len;
    for (size_t i = 0; i < n; i++) {
      char c = tdef[i];
      if (c == '<' || c == '>') sb_add(b, "_");
      else if (c == ',' && tdef[i + 1] == ' ') sb_add(b, "_"), i++;
      else sb_addn(b, &c, 1);
    }
    if (!b->failed && b->len > start) b->s[--b->len] = 0;
  }
  for (int i = 0; i < nin; i++) {
    sb_add(b, "_");
    sb_add(b, type_string(in[i]->dtype));
    if (in[i]->ndim == 0) sb_add(b, "s");
    else if (in[i]->size < MAX_CONSTANT_ARRAY_SIZE) sb_add(b, "c");
  }
  for (int i = 0; i < nout; i++) sb_add(b, "_"), sb_add(b, type_string(out_dtypes[i]));
}

static void buffer(sbuf *b, int *index) {
  sb_add(b, " [[buffer(");
  sb_int(b, (*index)++);
  sb_add(b, ")]]");
}

/* MLX's write_signature: header, template line, the kernel's parameters
 * (inputs with the shape data their source uses, outputs, attributes),
 * then the body. */
static void write_signature(sbuf *b, const cm_metal_kernel_def *k, const char *fname,
                            cm_array *const *in, int nin, const cm_dtype *out_dtypes,
                            const cm_template_arg *t, int nt, const uint8_t *infos) {
  static const char *const tkinds[] = {"int", "bool", "typename"};
  sb_add(b, k->header);
  if (nt) {
    sb_add(b, "template <");
    for (int i = 0; i < nt; i++) {
      if (i) sb_add(b, ", ");
      sb_add(b, tkinds[t[i].kind]), sb_add(b, " "), sb_add(b, t[i].name);
    }
    sb_add(b, ">\n");
  }
  sb_add(b, "[[kernel]] void "), sb_add(b, fname), sb_add(b, "(\n");
  int index = 0, nattr = 0;
  for (int i = 0; i < NATTR; i++) nattr += strstr(k->source, attributes[i][0]) != NULL;
  for (int i = 0; i < nin; i++) {
    const char *name = k->input_names[i];
    sb_add(b, "  const "), sb_add(b, in[i]->size < MAX_CONSTANT_ARRAY_SIZE ? "constant" : "device");
    sb_add(b, " "), sb_add(b, type_string(in[i]->dtype)), sb_add(b, in[i]->ndim ? "*" : "&");
    sb_add(b, " "), sb_add(b, name), buffer(b, &index), sb_add(b, ",\n");
    static const char *const shape_params[3][2] = {{"  const constant int* ", "_shape"},
                                                   {"  const constant int64_t* ", "_strides"},
                                                   {"  const constant int& ", "_ndim"}};
    for (int j = 0; j < 3 && in[i]->ndim; j++) {
      if (!infos[3 * i + j]) continue;
      sb_add(b, shape_params[j][0]), sb_add(b, name), sb_add(b, shape_params[j][1]);
      buffer(b, &index), sb_add(b, ",\n");
    }
  }
  for (int i = 0; i < k->noutput_names; i++) {
    sb_add(b, "  device "), sb_add(b, k->atomic_outputs ? "atomic<" : "");
    sb_add(b, type_string(out_dtypes[i])), sb_add(b, k->atomic_outputs ? ">" : "");
    sb_add(b, "* "), sb_add(b, k->output_names[i]);
    bool last = index >= nin + k->noutput_names - 1 && !nattr;
    buffer(b, &index);
    sb_add(b, last ? ") {\n" : ",\n");
  }
  for (int i = 0, n = 0; i < NATTR; i++) {
    if (!strstr(k->source, attributes[i][0])) continue;
    sb_add(b, "  "), sb_add(b, attributes[i][1]), sb_add(b, " "), sb_add(b, attributes[i][0]);
    sb_add(b, " [["), sb_add(b, attributes[i][0]), sb_add(b, "]]");
    sb_add(b, ++n < nattr ? ",\n" : ") {\n");
  }
  sb_add(b, k->source);
  sb_add(b, "\n}\n");
}

/* ---- the node -------------------------------------------------------------- */

int cm_custom_kernel(const void *p, size_t size, cm_array *const *inputs, int nin,
                     const int *out_ndims, const int32_t *const *out_shapes,
                     const cm_dtype *out_dtypes, int nout, cm_stream s, cm_array **outs) {
  for (int i = 0; i < nout; i++)
    if (cm_check_shape("metal_kernel", out_ndims[i], out_shapes[i])) return -1;
  if (nout == 1) {
    outs[0] = cm_node_new(out_dtypes[0], out_ndims[0], out_shapes[0], &cm_prim_custom_kernel, p,
                          size, inputs, nin, s);
    return outs[0] ? 0 : -1;
  }
  return cm_node_new_multi(nout, out_dtypes, out_ndims, out_shapes, &cm_prim_custom_kernel, p, size,
                           inputs, nin, s, outs);
}

static int check_size(int actual, int expected, const char *what) {
  if (actual == expected) return 0;
  return cm_error(CM_ERR_VALUE, "[metal_kernel] Expected `%s` to have size %d but got size %d.\n",
                  what, expected, actual);
}

/* MLX's stream rule without Metal: only while exporting, and only on the
 * GPU (an unspecified stream included); the node gets a placeholder GPU
 * stream. */
static int resolve_stream(cm_stream s, cm_stream *out) {
  if (!cm_in_export_tracing()) return cm_error(CM_ERR_RUNTIME, "[metal_kernel] No Metal back-end.");
  bool given = s.index >= 0 || s.device_given;
  if (given && s.device.type != CM_GPU)
    return cm_error(CM_ERR_VALUE, "[metal_kernel] Only supports the GPU.");
  *out = (cm_stream){-1, {CM_GPU, 0}, true};
  return 0;
}

int cm_fast_metal_kernel(const cm_metal_kernel_def *k, cm_array *const *inputs, int nin,
                         const int *out_ndims, const int32_t *const *out_shapes,
                         const cm_dtype *out_dtypes, int nout, const int grid[3],
                         const int threadgroup[3], const cm_template_arg *targs, int ntargs,
                         bool has_init, float init_value, bool verbose, cm_stream s,
                         cm_array **outs) {
  if (!k->noutput_names)
    return cm_error(CM_ERR_VALUE, "[metal_kernel] Must specify at least one output.");
  if (check_size(nin, k->ninput_names, "inputs") ||
      check_size(nout, k->noutput_names, "output_shapes"))
    return -1;
  cm_stream gpu;
  if (resolve_stream(s, &gpu)) return -1;
  for (int i = 0; i < nin; i++)
    if (!*type_string(inputs[i]->dtype))
      return cm_error(CM_ERR_RUNTIME, "Unsupported compilation type %s",
                      cm_dtype_name(inputs[i]->dtype));
  for (int i = 0; i < nout; i++)
    if (!*type_string(out_dtypes[i]))
      return cm_error(CM_ERR_RUNTIME, "Unsupported compilation type %s",
                      cm_dtype_name(out_dtypes[i]));
  uint8_t *infos = malloc(3 * (size_t)nin + 1);
  sbuf tdef = {0}, name = {0}, src = {0};
  if (!infos) return cm_error(CM_ERR_MEMORY, "[metal_kernel] Out of memory.");
  for (int i = 0; i < nin; i++) {
    infos[3 * i] = mentions(k->source, k->input_names[i], "_shape");
    infos[3 * i + 1] = mentions(k->source, k->input_names[i], "_strides");
    infos[3 * i + 2] = mentions(k->source, k->input_names[i], "_ndim");
  }
  if (ntargs) write_template(&tdef, targs, ntargs);
  kernel_name(&name, k->name, ntargs ? tdef.s : NULL, inputs, nin, out_dtypes, nout);
  write_signature(&src, k, name.s ? name.s : "", inputs, nin, out_dtypes, targs, ntargs, infos);
  if (ntargs) { /* the instantiation under the kernel's name */
    sb_add(&src, "\ntemplate [[host_name(\""), sb_add(&src, name.s), sb_add(&src, "\")]] ");
    sb_add(&src, "[[kernel]] decltype("), sb_add(&src, name.s), sb_add(&src, tdef.s);
    sb_add(&src, ") "), sb_add(&src, name.s), sb_add(&src, tdef.s), sb_add(&src, ";\n");
  }
  int rc = tdef.failed || name.failed || src.failed
               ? cm_error(CM_ERR_MEMORY, "[metal_kernel] Out of memory.")
               : 0;
  if (!rc && verbose) {
    printf("Generated source code for `%s`:\n```\n%s\n```\n", k->name, src.s);
    fflush(stdout);
  }
  cm_custom_kernel_params h = {
      .name_len = (uint32_t)name.len,
      .source_len = (uint32_t)src.len,
      .ninfos = (uint32_t)nin,
      .grid = {grid[0], grid[1], grid[2]},
      .threadgroup = {threadgroup[0], threadgroup[1], threadgroup[2]},
      .compile_options = k->math_mode,
      .init_value = has_init ? init_value : 0.0f,
      .has_init = has_init,
      .ensure_row_contiguous = k->ensure_row_contiguous,
  };
  size_t size = sizeof h + 3 * (size_t)nin + name.len + src.len;
  unsigned char *p = rc ? NULL : malloc(size);
  if (!rc && !p) rc = cm_error(CM_ERR_MEMORY, "[metal_kernel] Out of memory.");
  if (!rc) {
    memcpy(p, &h, sizeof h);
    memcpy(p + sizeof h, infos, 3 * (size_t)nin);
    memcpy(p + sizeof h + 3 * (size_t)nin, name.s, name.len);
    memcpy(p + sizeof h + 3 * (size_t)nin + name.len, src.s, src.len);
    rc = cm_custom_kernel(p, size, inputs, nin, out_ndims, out_shapes, out_dtypes, nout, gpu, outs);
  }
  free(p), free(infos), free(tdef.s), free(name.s), free(src.s);
  return rc;
}
