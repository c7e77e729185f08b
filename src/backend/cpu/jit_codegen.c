/* C source for a fused elementwise region (see fused.h).
 *
 * The generated cm_fused_main walks its n elements in blocks of BLK.  A
 * block runs the region's ops as steps: runs of inline ops form one loop
 * over the block (values in registers, one local per value), and each
 * call-out op is one call of a project row function on block buffers.  A
 * value crossing steps lives in a block buffer of its dtype; outputs are
 * stored by the last step, after every read of the inputs (an output may
 * have taken over an input's buffer).  The body is stamped twice: for unit
 * input strides (gcc vectorises it) and for any strides.
 *
 * Inline ops are the ones whose op-by-op kernel is one exact C expression
 * (add, multiply, compare, select, sqrt, casts between floats, ...): the
 * same expression, in the same precision, with float16/bfloat16 rounded
 * after every op as the unfused kernels store them.  The generated file
 * is compiled with -ffp-contract=off so no product is fused into an add. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/cpu/binary_impl.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/fused.h"
#include "backend/cpu/unary_impl.h"

/* ---- a growing string ------------------------------------------------------ */
typedef struct sbuf {
  char *s;
  size_t len, cap;
  bool oom;
} sbuf;

static void put(sbuf *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->oom = true;
      return;
    }
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->len + (size_t)n + 1) cap *= 2;
    char *s = realloc(b->s, cap);
    if (!s) {
      b->oom = true;
      return;
    }
    b->s = s, b->cap = cap;
  }
}

/* ---- types ----------------------------------------------------------------- */
static const char *storage_type(cm_dtype t) {
  switch (t) {
  case CM_BOOL: return "uint8_t";
  case CM_UINT8: return "uint8_t";
  case CM_UINT16: return "uint16_t";
  case CM_UINT32: return "uint32_t";
  case CM_UINT64: return "uint64_t";
  case CM_INT8: return "int8_t";
  case CM_INT16: return "int16_t";
  case CM_INT32: return "int32_t";
  case CM_INT64: return "int64_t";
  case CM_FLOAT16: return "uint16_t";
  case CM_BFLOAT16: return "uint16_t";
  case CM_FLOAT32: return "float";
  case CM_FLOAT64: return "double";
  case CM_COMPLEX64: return "float _Complex";
  default: return NULL;
  }
}

static bool is_half(cm_dtype t) { return t == CM_FLOAT16 || t == CM_BFLOAT16; }
/* complex64 values are C's float _Complex (the kernels' cm_c64_t).  Only
 * negative, ==, != and select are inline: even an add's result for two
 * NaN parts depends on which operand the compiler puts first (it keeps
 * that one's sign and payload), so arithmetic calls the unfused rows. */
static bool is_cplx(cm_dtype t) { return t == CM_COMPLEX64; }
static bool is_float(cm_dtype t) { return cm_dtype_is_float(t); }
static bool is_sint(cm_dtype t) { return t >= CM_INT8 && t <= CM_INT64; }
static bool is_int(cm_dtype t) { return t >= CM_UINT8 && t <= CM_INT64; }

/* The type values are computed in: float for the halves. */
static const char *compute_type(cm_dtype t) { return is_half(t) ? "float" : storage_type(t); }

/* Unsigned work type of integer arithmetic (wraps instead of overflowing). */
static const char *work_type(cm_dtype t) { return cm_dtype_size(t) == 8 ? "uint64_t" : "uint32_t"; }

/* ---- which ops are inline -------------------------------------------------- */
static bool unary_inline(int op, cm_dtype t) {
  bool f = is_float(t);
  if (is_cplx(t)) return (cm_unary_op)op == CM_UNARY_NEGATIVE;
  switch ((cm_unary_op)op) {
  case CM_UNARY_NEGATIVE:
  case CM_UNARY_ABS:
  case CM_UNARY_SQUARE: return t != CM_COMPLEX64;
  case CM_UNARY_SQRT:
  case CM_UNARY_RSQRT:
  case CM_UNARY_RECIPROCAL:
  case CM_UNARY_FLOOR:
  case CM_UNARY_CEIL:
  case CM_UNARY_ROUND:
  case CM_UNARY_SIGN:
  case CM_UNARY_ISNAN:
  case CM_UNARY_ISINF:
  case CM_UNARY_ISFINITE: return f;
  case CM_UNARY_LOGICAL_NOT: return t != CM_COMPLEX64;
  default: return false;
  }
}

static bool binary_inline(int op, cm_dtype t) {
  if (is_cplx(t)) return op == CM_BINARY_EQUAL || op == CM_BINARY_NOT_EQUAL;
  switch ((cm_binary_op)op) {
  case CM_BINARY_ADD:
  case CM_BINARY_SUBTRACT:
  case CM_BINARY_MULTIPLY:
  case CM_BINARY_MAXIMUM:
  case CM_BINARY_MINIMUM:
  case CM_BINARY_EQUAL:
  case CM_BINARY_NOT_EQUAL:
  case CM_BINARY_LESS:
  case CM_BINARY_LESS_EQUAL:
  case CM_BINARY_GREATER:
  case CM_BINARY_GREATER_EQUAL: return true;
  case CM_BINARY_DIVIDE: return is_float(t);
  case CM_BINARY_LOGICAL_AND:
  case CM_BINARY_LOGICAL_OR:
  case CM_BINARY_LOGICAL_XOR: return t == CM_BOOL;
  case CM_BINARY_BITWISE_AND:
  case CM_BINARY_BITWISE_OR:
  case CM_BINARY_BITWISE_XOR: return t == CM_BOOL || is_int(t);
  default: return false;
  }
}

/* Float to integer casts go through the project's conversion rows (MLX's
 * x86 results); every other cast is a C conversion. */
static bool cast_inline(cm_dtype from, cm_dtype to) {
  return !(is_float(from) && is_int(to)) && !is_cplx(from) && !is_cplx(to);
}

static cm_dtype value_dtype(const cm_fused_program *p, int v) { return cm_fused_value_dtype(p, v); }

bool cm_fused_inline(cm_fused_op_kind kind, int op, cm_dtype in, cm_dtype out) {
  switch (kind) {
  case CM_FUSED_UNARY: return unary_inline(op, in);
  case CM_FUSED_BINARY: return binary_inline(op, in);
  case CM_FUSED_SELECT: return true;
  case CM_FUSED_CAST: return cast_inline(in, out);
  default: return false;
  }
}

static bool op_inline(const cm_fused_program *p, const cm_fused_op *o) {
  return cm_fused_inline(o->kind, o->op, value_dtype(p, o->arg[0]), o->dtype);
}

bool cm_fused_supports(cm_fused_op_kind kind, int op, cm_dtype in, cm_dtype out) {
  if (!storage_type(in) || !storage_type(out)) return false;
  switch (kind) {
  case CM_FUSED_UNARY: return cm_unary_row((cm_unary_op)op, in) != NULL;
  case CM_FUSED_BINARY: return cm_binary_row_for((cm_binary_op)op, in) != NULL;
  case CM_FUSED_SELECT: return true;
  case CM_FUSED_CAST: return cast_inline(in, out) || cm_cpu_convert_row(in, out) != NULL;
  default: return false;
  }
}

int cm_fused_calls_for(const cm_fused_program *p, cm_fused_calls *calls) {
  int n = 0;
  for (int j = 0; j < p->nops; j++) {
    const cm_fused_op *o = &p->ops[j];
    if (op_inline(p, o)) continue;
    cm_dtype a = value_dtype(p, o->arg[0]);
    void *fn = NULL;
    const void *prm = NULL;
    if (o->kind == CM_FUSED_UNARY) {
      cm_unary_row_fn f = cm_unary_simd((cm_unary_op)o->op, a);
      if (!f) f = cm_unary_row((cm_unary_op)o->op, a);
      fn = (void *)f;
      prm = &o->up;
    } else if (o->kind == CM_FUSED_BINARY) {
      fn = (void *)cm_binary_row_for((cm_binary_op)o->op, a);
    } else if (o->kind == CM_FUSED_CAST) {
      fn = (void *)cm_cpu_convert_row(a, o->dtype);
    }
    if (!fn) return -1;
    calls->fn[n] = fn;
    calls->params[n] = prm;
    n++;
  }
  calls->n = n;
  return 0;
}

/* ---- expressions ------------------------------------------------------------ */
/* name of value v inside a loop step */
#define V "v%d"

/* Round the compute value of expression e to dtype t where needed. */
static void put_rounded(sbuf *b, cm_dtype t, const char *e) {
  if (t == CM_FLOAT16) put(b, "rh(%s)", e);
  else if (t == CM_BFLOAT16) put(b, "rb(%s)", e);
  else if (t == CM_BOOL) put(b, "(uint8_t)((%s) != 0)", e); /* isnan() may give any nonzero */
  else put(b, "(%s)(%s)", compute_type(t), e);
}

static void unary_expr(sbuf *b, const cm_fused_op *o, cm_dtype t, int x) {
  char e[96];
  const char *fx = t == CM_FLOAT64 ? "" : "f"; /* libm suffix */
  const char *one = t == CM_FLOAT64 ? "1.0" : "1.0f";
  switch ((cm_unary_op)o->op) {
  case CM_UNARY_NEGATIVE:
    if (is_float(t) || is_cplx(t)) snprintf(e, sizeof e, "-" V, x);
    else snprintf(e, sizeof e, "0 - (%s)" V, work_type(t), x);
    break;
  case CM_UNARY_ABS:
    if (is_float(t)) snprintf(e, sizeof e, "fabs%s(" V ")", fx, x);
    else if (is_sint(t))
      snprintf(e, sizeof e, V " < 0 ? 0 - (uint64_t)" V " : (uint64_t)" V, x, x, x);
    else snprintf(e, sizeof e, V, x);
    break;
  case CM_UNARY_SQUARE:
    if (is_float(t)) snprintf(e, sizeof e, V " * " V, x, x);
    else if (t == CM_BOOL) snprintf(e, sizeof e, V, x);
    else snprintf(e, sizeof e, "(uint64_t)" V " * (uint64_t)" V, x, x);
    break;
  case CM_UNARY_SQRT: snprintf(e, sizeof e, "sqrt%s(" V ")", fx, x); break;
  case CM_UNARY_RSQRT: snprintf(e, sizeof e, "%s / sqrt%s(" V ")", one, fx, x); break;
  case CM_UNARY_RECIPROCAL: snprintf(e, sizeof e, "%s / " V, one, x); break;
  case CM_UNARY_FLOOR: snprintf(e, sizeof e, "floor%s(" V ")", fx, x); break;
  case CM_UNARY_CEIL: snprintf(e, sizeof e, "ceil%s(" V ")", fx, x); break;
  case CM_UNARY_ROUND: snprintf(e, sizeof e, "rint%s(" V ")", fx, x); break;
  case CM_UNARY_SIGN:
    snprintf(e, sizeof e, V " > 0 ? %s : " V " < 0 ? -%s : 0", x, one, x, one);
    break;
  case CM_UNARY_ISNAN: snprintf(e, sizeof e, "isnan((double)" V ")", x); break;
  case CM_UNARY_ISINF: snprintf(e, sizeof e, "isinf((double)" V ")", x); break;
  case CM_UNARY_ISFINITE: snprintf(e, sizeof e, "isfinite((double)" V ")", x); break;
  case CM_UNARY_LOGICAL_NOT: snprintf(e, sizeof e, V " == 0", x); break;
  default: snprintf(e, sizeof e, "0"); break;
  }
  put_rounded(b, o->dtype, e);
}

/* maximum (cmp ">", bool "|") or minimum ("<", "&"): a NaN on either side
 * wins, x's by the first test, y's since every comparison with it fails. */
static void minmax(char *e, size_t cap, cm_dtype t, int x, int y, const char *cmp,
                   const char *bool_op) {
  if (is_float(t))
    snprintf(e, cap, V " != " V " ? " V " : (" V " %s " V " ? " V " : " V ")", x, x, x, x, cmp, y,
             x, y);
  else if (t == CM_BOOL) snprintf(e, cap, V " %s " V, x, bool_op, y);
  else snprintf(e, cap, V " %s " V " ? " V " : " V, x, cmp, y, x, y);
}

static void binary_expr(sbuf *b, const cm_fused_op *o, cm_dtype t, int x, int y) {
  char e[160];
  bool f = is_float(t) || is_cplx(t), bl = t == CM_BOOL;
  const char *w = work_type(t);
  switch ((cm_binary_op)o->op) {
  case CM_BINARY_ADD:
    if (f) snprintf(e, sizeof e, V " + " V, x, y);
    else if (bl) snprintf(e, sizeof e, V " | " V, x, y);
    else snprintf(e, sizeof e, "(%s)" V " + (%s)" V, w, x, w, y);
    break;
  case CM_BINARY_SUBTRACT:
    if (f) snprintf(e, sizeof e, V " - " V, x, y);
    else if (bl) snprintf(e, sizeof e, V " ^ " V, x, y);
    else snprintf(e, sizeof e, "(%s)" V " - (%s)" V, w, x, w, y);
    break;
  case CM_BINARY_MULTIPLY:
    if (f) snprintf(e, sizeof e, V " * " V, x, y);
    else if (bl) snprintf(e, sizeof e, V " & " V, x, y);
    else snprintf(e, sizeof e, "(%s)" V " * (%s)" V, w, x, w, y);
    break;
  case CM_BINARY_DIVIDE: snprintf(e, sizeof e, V " / " V, x, y); break;
  case CM_BINARY_MAXIMUM: minmax(e, sizeof e, t, x, y, ">", "|"); break;
  case CM_BINARY_MINIMUM: minmax(e, sizeof e, t, x, y, "<", "&"); break;
  case CM_BINARY_EQUAL: snprintf(e, sizeof e, V " == " V, x, y); break;
  case CM_BINARY_NOT_EQUAL: snprintf(e, sizeof e, V " != " V, x, y); break;
  case CM_BINARY_LESS: snprintf(e, sizeof e, V " < " V, x, y); break;
  case CM_BINARY_LESS_EQUAL: snprintf(e, sizeof e, V " <= " V, x, y); break;
  case CM_BINARY_GREATER: snprintf(e, sizeof e, V " > " V, x, y); break;
  case CM_BINARY_GREATER_EQUAL: snprintf(e, sizeof e, V " >= " V, x, y); break;
  case CM_BINARY_LOGICAL_AND:
  case CM_BINARY_BITWISE_AND: snprintf(e, sizeof e, V " & " V, x, y); break;
  case CM_BINARY_LOGICAL_OR:
  case CM_BINARY_BITWISE_OR: snprintf(e, sizeof e, V " | " V, x, y); break;
  case CM_BINARY_LOGICAL_XOR:
  case CM_BINARY_BITWISE_XOR: snprintf(e, sizeof e, V " ^ " V, x, y); break;
  default: snprintf(e, sizeof e, "0"); break;
  }
  put_rounded(b, o->dtype, e);
}

static void cast_expr(sbuf *b, const cm_fused_op *o, cm_dtype from, int x) {
  char e[64];
  if (o->dtype == CM_BOOL) snprintf(e, sizeof e, V " != 0", x);
  else if (is_half(o->dtype)) snprintf(e, sizeof e, "(float)" V, x);
  else snprintf(e, sizeof e, V, x);
  (void)from;
  put_rounded(b, o->dtype, e);
}

/* Load expression (compute type) of element expression e of storage dtype t. */
static void put_load(sbuf *b, cm_dtype t, const char *e) {
  if (t == CM_FLOAT16) put(b, "h2f(%s)", e);
  else if (t == CM_BFLOAT16) put(b, "b2f(%s)", e);
  else if (t == CM_BOOL) put(b, "(uint8_t)(%s != 0)", e);
  else put(b, "%s", e);
}
static void put_store(sbuf *b, cm_dtype t, const char *dst, int v) {
  if (t == CM_FLOAT16) put(b, "      %s = f2h(" V ");\n", dst, v);
  else if (t == CM_BFLOAT16) put(b, "      %s = f2b(" V ");\n", dst, v);
  else put(b, "      %s = " V ";\n", dst, v);
}

/* ---- the prelude: half conversions as the kernels do them ------------------ */
static const char prelude[] =
    "#include <complex.h>\n#include <math.h>\n#include <stdint.h>\n#include <string.h>\n"
    "#define BLK 256\n"
    "typedef void (*urow_t)(void *, int64_t, const void *, int64_t, int64_t, const void *);\n"
    "typedef struct { int64_t n, rows; int64_t s[3], r[3]; } brun_t;\n"
    "typedef void (*brow_t)(void *, const void *, const void *, const brun_t *);\n"
    "typedef void (*crow_t)(void *, int64_t, const void *, int64_t, int64_t);\n"
    "static inline uint32_t fbits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }\n"
    "static inline float bitsf(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }\n"
    "static inline uint32_t msk(int c) { return 0u - (uint32_t)(c != 0); }\n"
    /* float16 <-> float: the F16C conversions where the compiler has them
     * (gcc then vectorises the loops), else branch-free bit operations;
     * both round to nearest even and quiet NaNs, as the kernels do */
    "#if defined(__FLT16_MAX__) && defined(__F16C__)\n"
    "static inline float h2f(uint16_t h) { _Float16 f; memcpy(&f, &h, 2); return (float)f; }\n"
    "static inline uint16_t f2h(float x) {\n"
    "  _Float16 f = (_Float16)x; uint16_t h; memcpy(&h, &f, 2); return h;\n}\n"
    "#else\n"
    "static inline float h2f(uint16_t h) {\n"
    "  uint32_t em = (uint32_t)(h & 0x7fffu) << 13, e = em & 0x0f800000u;\n"
    "  uint32_t norm = em + 0x38000000u;\n"
    "  uint32_t special = (em + 0x70000000u) | (msk(em > 0x0f800000u) & 0x00400000u);\n"
    "  uint32_t sub = fbits(bitsf(em + 0x38800000u) - bitsf(0x38800000u));\n"
    "  uint32_t is_sp = msk(e == 0x0f800000u), is_sub = msk(e == 0);\n"
    "  uint32_t r = (special & is_sp) | (sub & is_sub) | (norm & ~(is_sp | is_sub));\n"
    "  return bitsf(r | ((uint32_t)(h & 0x8000u) << 16));\n}\n"
    "static inline uint16_t f2h(float f) {\n"
    "  uint32_t u = fbits(f), sign = (u >> 16) & 0x8000u, a = u & 0x7fffffffu;\n"
    "  uint32_t norm = (a + 0xc8000fffu + ((a >> 13) & 1u)) >> 13;\n"
    "  uint32_t sub = fbits(bitsf(a) + 0.5f) - 0x3f000000u;\n"
    "  uint32_t big = 0x7c00u | (msk(a > 0x7f800000u) & (0x200u | ((a >> 13) & 0x3ffu)));\n"
    "  uint32_t is_big = msk(a >= 0x477ff000u), is_sub = msk(a < 0x38800000u);\n"
    "  uint32_t r = (big & is_big) | (sub & is_sub) | (norm & ~(is_big | is_sub));\n"
    "  return (uint16_t)(sign | r);\n}\n"
    "#endif\n"
    "static inline float b2f(uint16_t h) { return bitsf((uint32_t)h << 16); }\n"
    "static inline uint16_t f2b(float f) {\n"
    "  uint32_t u = fbits(f);\n"
    "  uint32_t nan = (u >> 16) | 0x40u, rnd = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;\n"
    "  return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rnd);\n}\n"
    "static inline float rh(float x) { return h2f(f2h(x)); }\n"
    "static inline float rb(float x) { return b2f(f2b(x)); }\n";

/* ---- the program's steps ---------------------------------------------------- */
typedef struct plan {
  const cm_fused_program *p;
  int nsteps;
  int *step;      /* per op: its step */
  bool *inl;      /* per op: inline */
  bool *buffered; /* per value: lives in a block buffer (ops) */
  int *call;      /* per op: call-out index, or -1 */
  int final;      /* the step that stores the outputs */
} plan;

static bool is_output(const cm_fused_program *p, int j) {
  for (int k = 0; k < p->nout; k++)
    if (p->outs[k] == j) return true;
  return false;
}

static int make_plan(plan *pl, const cm_fused_program *p) {
  int nv = p->nin + p->nops;
  pl->p = p;
  pl->step = calloc((size_t)p->nops + 1, sizeof(int));
  pl->inl = calloc((size_t)p->nops + 1, sizeof(bool));
  pl->call = calloc((size_t)p->nops + 1, sizeof(int));
  pl->buffered = calloc((size_t)nv + 1, sizeof(bool));
  if (!pl->step || !pl->inl || !pl->call || !pl->buffered) return -1;
  int s = 0, ncall = 0;
  bool open = false; /* the current step is an inline loop */
  for (int j = 0; j < p->nops; j++) {
    pl->inl[j] = op_inline(p, &p->ops[j]);
    pl->call[j] = -1;
    if (pl->inl[j]) {
      if (!open) s++, open = true;
    } else {
      s++, open = false;
      pl->call[j] = ncall++;
    }
    pl->step[j] = s;
  }
  pl->final = open ? s : s + 1;
  pl->nsteps = pl->final;
  for (int j = 0; j < p->nops; j++) {
    int v = p->nin + j;
    bool buf = !pl->inl[j] || (is_output(p, j) && pl->step[j] != pl->final);
    for (int c = j + 1; !buf && c < p->nops; c++)
      for (int a = 0; a < p->ops[c].nargs; a++)
        if (p->ops[c].arg[a] == v && (!pl->inl[c] || pl->step[c] != pl->step[j])) buf = true;
    pl->buffered[v] = buf;
  }
  return 0;
}

static void free_plan(plan *pl) {
  free(pl->step), free(pl->inl), free(pl->call), free(pl->buffered);
}

/* Whether value v is read by step s (by an op in it, or as an output). */
static bool used_in_step(const plan *pl, int v, int s) {
  const cm_fused_program *p = pl->p;
  for (int j = 0; j < p->nops; j++)
    if (pl->step[j] == s && pl->inl[j])
      for (int a = 0; a < p->ops[j].nargs; a++)
        if (p->ops[j].arg[a] == v) return true;
  if (s == pl->final)
    for (int k = 0; k < p->nout; k++)
      if (p->nin + p->outs[k] == v) return true;
  return false;
}

static void emit_loop_step(sbuf *b, const plan *pl, int s) {
  const cm_fused_program *p = pl->p;
  put(b,
      "    for (int64_t j = 0; j < m; j++) {\n      const int64_t i = b0 + j;\n      (void)i;\n");
  /* values from earlier steps and inputs */
  for (int v = 0; v < p->nin + p->nops; v++) {
    bool here = v >= p->nin && pl->step[v - p->nin] == s && pl->inl[v - p->nin];
    if (here || !used_in_step(pl, v, s)) continue;
    cm_dtype t = value_dtype(p, v);
    char e[64];
    if (v < p->nin) snprintf(e, sizeof e, "i%d[i * s%d]", v, v);
    else snprintf(e, sizeof e, "t%d[j]", v);
    put(b, "      const %s " V " = ", compute_type(t), v);
    if (v < p->nin && p->in_scalar[v]) put(b, "c%d", v);
    else if (v < p->nin && p->in_rowconst[v]) {
      put(b, "contig ? c%d : ", v);
      put_load(b, t, e);
    } else put_load(b, t, e);
    put(b, ";\n");
  }
  for (int j = 0; j < p->nops; j++) {
    if (pl->step[j] != s || !pl->inl[j]) continue;
    const cm_fused_op *o = &p->ops[j];
    int v = p->nin + j;
    cm_dtype a = value_dtype(p, o->arg[0]);
    put(b, "      const %s " V " = ", compute_type(o->dtype), v);
    switch (o->kind) {
    case CM_FUSED_UNARY: unary_expr(b, o, a, o->arg[0]); break;
    case CM_FUSED_BINARY: binary_expr(b, o, a, o->arg[0], o->arg[1]); break;
    case CM_FUSED_SELECT: put(b, V " ? " V " : " V, o->arg[0], o->arg[1], o->arg[2]); break;
    case CM_FUSED_CAST: cast_expr(b, o, a, o->arg[0]); break;
    }
    put(b, ";\n");
    if (pl->buffered[v]) {
      char d[32];
      snprintf(d, sizeof d, "t%d[j]", v);
      put_store(b, o->dtype, d, v);
    }
  }
  if (s == pl->final)
    for (int k = 0; k < p->nout; k++) {
      char d[32];
      snprintf(d, sizeof d, "o%d[i]", k);
      put_store(b, p->ops[p->outs[k]].dtype, d, p->nin + p->outs[k]);
    }
  put(b, "    }\n");
}

/* Pointer expression of call-out operand v: a block buffer, an input run
 * (unit strides), or an input staged into its buffer u<v>. */
static void emit_operand(sbuf *b, const plan *pl, int v, int a) {
  const cm_fused_program *p = pl->p;
  if (v >= p->nin) {
    put(b, "    const void *a%d = t%d;\n", a, v);
    return;
  }
  put(b, "    const void *a%d;\n", a);
  if (!p->in_scalar[v] && !p->in_rowconst[v])
    put(b, "    if (contig) a%d = i%d + b0;\n    else ", a, v);
  else put(b, "    ");
  put(b,
      "{\n      for (int64_t j = 0; j < m; j++) u%d[j] = i%d[(b0 + j) * s%d];\n"
      "      a%d = u%d;\n    }\n",
      v, v, v, a, v);
}

static void emit_call_step(sbuf *b, const plan *pl, int j) {
  const cm_fused_program *p = pl->p;
  const cm_fused_op *o = &p->ops[j];
  int v = p->nin + j, c = pl->call[j];
  put(b, "    {\n");
  for (int a = 0; a < o->nargs; a++) emit_operand(b, pl, o->arg[a], a);
  if (o->kind == CM_FUSED_UNARY)
    put(b, "    ((urow_t)fn[%d])(t%d, 1, a0, 1, m, pp[%d]);\n", c, v, c);
  else if (o->kind == CM_FUSED_BINARY)
    put(b,
        "    brun_t ru = {m, 1, {1, 1, 1}, {0, 0, 0}};\n"
        "    ((brow_t)fn[%d])(t%d, a0, a1, &ru);\n",
        c, v);
  else put(b, "    ((crow_t)fn[%d])(t%d, 1, a0, 1, m);\n", c, v);
  put(b, "    }\n");
}

char *cm_fused_source(const cm_fused_program *p, int *ncalls) {
  plan pl = {0};
  sbuf b = {0};
  if (make_plan(&pl, p)) {
    free_plan(&pl);
    return NULL;
  }
  put(&b, "/* cmlx fused kernel: %d inputs, %d ops, %d outputs; inputs", p->nin, p->nops, p->nout);
  for (int k = 0; k < p->nin; k++)
    put(&b, " %s%s", cm_dtype_name(p->in_dtype[k]),
        p->in_scalar[k]     ? ":scalar"
        : p->in_rowconst[k] ? ":row"
                            : "");
  put(&b, " */\n");
  /* the call-outs by name (they are pointers at run time) */
  int nc = 0;
  for (int j = 0; j < p->nops; j++) {
    if (pl.inl[j]) continue;
    const cm_fused_op *o = &p->ops[j];
    put(&b, "/* call %d: kind %d op %d %s -> %s", nc++, (int)o->kind, o->op,
        cm_dtype_name(value_dtype(p, o->arg[0])), cm_dtype_name(o->dtype));
    if (o->kind == CM_FUSED_UNARY) {
      const unsigned char *u = (const unsigned char *)&o->up;
      put(&b, " params ");
      for (size_t k = 0; k < sizeof o->up; k++) put(&b, "%02x", u[k]);
    }
    put(&b, " */\n");
  }
  put(&b, "%s", prelude);
  put(&b, "static inline __attribute__((always_inline)) void body(int64_t n, const char *const *in,"
          " const int64_t *is, char *const *out, void *const *fn, const void *const *pp,"
          " const int contig) {\n  (void)fn, (void)pp, (void)is;\n");
  for (int k = 0; k < p->nin; k++) {
    const char *st = storage_type(p->in_dtype[k]);
    put(&b, "  const %s *i%d = (const %s *)in[%d];\n", st, k, st, k);
    if (p->in_rowconst[k]) {
      put(&b, "  const int64_t s%d = contig ? 0 : is[%d];\n  (void)s%d;\n  const %s c%d = ", k, k,
          k, compute_type(p->in_dtype[k]), k);
      char e[32];
      snprintf(e, sizeof e, "i%d[0]", k);
      put_load(&b, p->in_dtype[k], e);
      put(&b, ";\n  (void)c%d;\n", k);
    } else if (p->in_scalar[k]) {
      put(&b, "  const int64_t s%d = 0;\n  (void)s%d;\n  const %s c%d = ", k, k,
          compute_type(p->in_dtype[k]), k);
      char e[32];
      snprintf(e, sizeof e, "i%d[0]", k);
      put_load(&b, p->in_dtype[k], e);
      put(&b, ";\n  (void)c%d;\n", k);
    } else {
      put(&b, "  const int64_t s%d = contig ? 1 : is[%d];\n  (void)s%d;\n", k, k, k);
    }
  }
  for (int k = 0; k < p->nout; k++) {
    const char *st = storage_type(p->ops[p->outs[k]].dtype);
    put(&b, "  %s *o%d = (%s *)out[%d];\n", st, k, st, k);
  }
  /* block buffers: op values that cross steps, inputs staged for calls */
  for (int v = p->nin; v < p->nin + p->nops; v++)
    if (pl.buffered[v])
      put(&b, "  _Alignas(64) %s t%d[BLK];\n", storage_type(value_dtype(p, v)), v);
  for (int v = 0; v < p->nin; v++) {
    bool staged = false;
    for (int j = 0; j < p->nops && !staged; j++)
      for (int a = 0; !pl.inl[j] && a < p->ops[j].nargs; a++)
        if (p->ops[j].arg[a] == v) staged = true;
    if (staged) put(&b, "  _Alignas(64) %s u%d[BLK];\n", storage_type(p->in_dtype[v]), v);
  }
  put(&b, "  for (int64_t b0 = 0; b0 < n; b0 += BLK) {\n"
          "    const int64_t m = n - b0 < BLK ? n - b0 : BLK;\n");
  for (int s = 1; s <= pl.nsteps; s++) {
    int call = -1;
    bool loop = s == pl.final;
    for (int j = 0; j < p->nops; j++)
      if (pl.step[j] == s) {
        if (pl.inl[j]) loop = true;
        else call = j;
      }
    if (call >= 0) emit_call_step(&b, &pl, call);
    else if (loop) emit_loop_step(&b, &pl, s);
  }
  put(&b, "  }\n}\n");
  put(&b, "void cm_fused_main(int64_t n, const char *const *in, const int64_t *is,"
          " char *const *out, void *const *fn, const void *const *pp) {\n  int contig = 1;\n");
  for (int k = 0; k < p->nin; k++)
    if (p->in_rowconst[k]) put(&b, "  if (is[%d] != 0) contig = 0;\n", k);
    else if (!p->in_scalar[k]) put(&b, "  if (is[%d] != 1) contig = 0;\n", k);
  put(&b, "  if (contig) body(n, in, is, out, fn, pp, 1);\n"
          "  else body(n, in, is, out, fn, pp, 0);\n}\n");
  free_plan(&pl);
  if (b.oom) {
    free(b.s);
    return NULL;
  }
  *ncalls = nc;
  return b.s;
}
