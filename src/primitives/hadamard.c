/* The Hadamard primitive: descriptor, rules and the size decomposition.
 *
 *   vjp, jvp  hadamard_transform(cotangent / tangent, scale): the matrix
 *             is symmetric, so the transform is its own adjoint
 *   vmap      the batch axis anywhere but last stays where it is; on the
 *             last axis it is moved to the front first (MLX's rule) */
#include "primitives/hadamard.h"
#include "primitives/export_desc.h"

#include "ops/hadamard.h"
#include "ops/shape.h"

/* Sloane's matrices (http://neilsloane.com/hadamard/), the ones MLX uses. */
static const char h12[] = "+-++++++++++"
                          "--+-+-+-+-+-"
                          "+++-++----++"
                          "+---+--+-++-"
                          "+++++-++----"
                          "+-+---+--+-+"
                          "++--+++-++--"
                          "+--++---+--+"
                          "++----+++-++"
                          "+--+-++---+-"
                          "++++----+++-"
                          "+-+--+-++---";

static const char h20[] = "+----+----++--++-++-"
                          "-+----+---+++---+-++"
                          "--+----+---+++-+-+-+"
                          "---+----+---+++++-+-"
                          "----+----++--++-++-+"
                          "-+++++-----+--+++--+"
                          "+-+++-+---+-+--+++--"
                          "++-++--+---+-+--+++-"
                          "+++-+---+---+-+--+++"
                          "++++-----++--+-+--++"
                          "--++-+-++-+-----++++"
                          "---++-+-++-+---+-+++"
                          "+---++-+-+--+--++-++"
                          "++---++-+----+-+++-+"
                          "-++---++-+----+++++-"
                          "-+--+--++-+----+----"
                          "+-+-----++-+----+---"
                          "-+-+-+---+--+----+--"
                          "--+-+++------+----+-"
                          "+--+--++------+----+";

static const char h28[] = "+------++----++-+--+-+--++--"
                          "-+-----+++-----+-+--+-+--++-"
                          "--+-----+++---+-+-+----+--++"
                          "---+-----+++---+-+-+-+--+--+"
                          "----+-----+++---+-+-+++--+--"
                          "-----+-----++++--+-+--++--+-"
                          "------++----++-+--+-+--++--+"
                          "--++++-+-------++--+++-+--+-"
                          "---++++-+-----+-++--+-+-+--+"
                          "+---+++--+----++-++--+-+-+--"
                          "++---++---+----++-++--+-+-+-"
                          "+++---+----+----++-++--+-+-+"
                          "++++--------+-+--++-++--+-+-"
                          "-++++--------+++--++--+--+-+"
                          "-+-++-++--++--+--------++++-"
                          "+-+-++--+--++--+--------++++"
                          "-+-+-++--+--++--+----+---+++"
                          "+-+-+-++--+--+---+---++---++"
                          "++-+-+-++--+------+--+++---+"
                          "-++-+-+-++--+------+-++++---"
                          "+-++-+---++--+------+-++++--"
                          "-++--++-+-++-+++----++------"
                          "+-++--++-+-++-+++-----+-----"
                          "++-++---+-+-++-+++-----+----"
                          "-++-++-+-+-+-+--+++-----+---"
                          "--++-++++-+-+----+++-----+--"
                          "+--++-+-++-+-+----+++-----+-"
                          "++--++-+-++-+-+----++------+";

const char *cm_hadamard_matrix(int m) {
  switch (m) {
  case 12: return h12;
  case 20: return h20;
  case 28: return h28;
  default: return NULL;
  }
}

int cm_hadamard_decompose(int n, int *m, int *pow2) {
  static const int factors[] = {1, 12, 20, 28};
  for (int i = 0; i < 4; i++) {
    int f = factors[i];
    if (n % f) continue;
    int q = n / f;
    if (q & (q - 1)) {
      if (f == 1) continue;
      break; /* MLX takes the first factor that divides n */
    }
    if (q > (1 << 26))
      return cm_error(CM_ERR_VALUE, "[hadamard] Only supports n = m*2^k where k <= 26");
    *m = f;
    *pow2 = q;
    return 0;
  }
  return cm_error(CM_ERR_VALUE, "[hadamard] Only supports n = m*2^k where m in (1, 12, 20, 28).");
}

static float scale_of(const cm_array *node) { return cm_hadamard_params_of(node)->scale; }

static int hadamard_vjp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                        cm_array *cotan, const int *argnums, int nargs, cm_array **grads,
                        cm_stream s) {
  (void)in, (void)nin, (void)p, (void)argnums, (void)nargs;
  grads[0] = cm_hadamard_transform(cotan, true, scale_of(out), s);
  return grads[0] ? 0 : -1;
}

static int hadamard_jvp(cm_array *out, cm_array *const *in, int nin, const cm_params *p,
                        cm_array *const *tangents, cm_array **tangent, cm_stream s) {
  (void)in, (void)nin, (void)p;
  *tangent = cm_hadamard_transform(tangents[0], true, scale_of(out), s);
  return *tangent ? 0 : -1;
}

static int hadamard_vmap(const cm_array *node, cm_array *const *in, int nin, const cm_params *p,
                         const int *axes, cm_array **out, int *out_axis, cm_stream s) {
  (void)nin, (void)p;
  cm_array *a = in[0];
  int ax = axes[0];
  cm_array *moved = ax == a->ndim - 1 ? cm_moveaxis(a, ax, 0, s) : cm_retain(a);
  *out = moved ? cm_hadamard_transform(moved, true, scale_of(node), s) : NULL;
  cm_release(moved);
  *out_axis = ax == a->ndim - 1 ? 0 : ax;
  return *out ? 0 : -1;
}

const cm_prim cm_prim_hadamard = {
    .name = "Hadamard",
    .export = &cm_export_hadamard,
    CM_PARAMS_OF(cm_hadamard_params),
    .vjp = hadamard_vjp,
    .jvp = hadamard_jvp,
    .vmap = hadamard_vmap,
};
