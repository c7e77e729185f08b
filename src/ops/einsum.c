/* einsum and einsum_path, following MLX's einsum.cpp (itself after
 * NumPy's and opt_einsum's): the same parsing (implicit outputs sorted,
 * ellipses filled from the unused letters, taken from the end of the
 * alphabet), the same messages, the same greedy contraction order and
 * cost figures, and the same evaluation: per step, repeated subscripts
 * become diagonals, subscripts found in one term only are summed, then two
 * terms that share a summed subscript are one batched matmul and anything
 * else a broadcast multiply and sum.
 *
 * Subscript sets are bit masks over the 52 letters.  Where MLX iterates a
 * hash set (the order of an intermediate term's axes), this file uses
 * letter order, sorted by size as MLX sorts them: the layout of an
 * intermediate may differ, never a value beyond rounding. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/binary.h"
#include "ops/contract.h"
#include "ops/matmul.h"
#include "ops/reduce.h"
#include "ops/shape.h"

#define NLETTERS 52
#define TERM_CAP 128 /* longest subscript kept: more than CM_MAX_DIMS */

typedef uint64_t cset;

typedef struct term {
  char str[TERM_CAP + 1];
  int len;
  cset set;
} term;

static int bit(char c) { return c >= 'a' && c <= 'z' ? c - 'a' : c - 'A' + 26; }
static cset set_of(const char *s, int n) {
  cset r = 0;
  for (int i = 0; i < n; i++) r |= (cset)1 << bit(s[i]);
  return r;
}
static void term_set(term *t, const char *s, int n) {
  memcpy(t->str, s, (size_t)n);
  t->str[n] = 0;
  t->len = n;
  t->set = set_of(s, n);
}

/* Everything a path and an evaluation need. */
typedef struct ein {
  const char *fn; /* "einsum" or "einsum_path" */
  int n;          /* operands */
  term *in;       /* n input terms */
  term out;
  uint64_t dim[NLETTERS];
} ein;

static uint64_t set_size(const ein *e, cset s) {
  uint64_t r = 1;
  for (int c = 0; c < NLETTERS; c++)
    if (s >> c & 1) r *= e->dim[c];
  return r;
}

static uint64_t str_size(const ein *e, const term *t) {
  uint64_t r = 1;
  for (int i = 0; i < t->len; i++) r *= e->dim[bit(t->str[i])];
  return r;
}

static uint64_t flop_count(const ein *e, cset s, bool inner, int nterms) {
  uint64_t f = nterms - 1 > 1 ? (uint64_t)(nterms - 1) : 1;
  return set_size(e, s) * (f + (inner ? 1 : 0));
}

/* ---- parsing ---- */

static int ein_fail(const ein *e, const char *fmt, const char *detail) {
  char msg[512];
  snprintf(msg, sizeof msg, fmt, detail);
  return cm_error(CM_ERR_VALUE, "[%s] %s", e->fn, msg);
}

/* Split "a,b->c" (spaces removed) into the input list and the output;
 * the implicit output is every letter used once, sorted, after "..." if
 * any subscript has an ellipsis. */
static int parse(const char *subs, char *buf, char **lhs, char *rhs) {
  size_t n = 0;
  for (const char *p = subs; *p; p++)
    if (*p != ' ') buf[n++] = *p;
  buf[n] = 0;
  char *arrow = strstr(buf, "->");
  *lhs = buf;
  if (arrow) {
    *arrow = 0;
    strcpy(rhs, arrow + 2);
    return 0;
  }
  int counts[256] = {0};
  size_t r = 0;
  for (const char *p = buf; *p; p++) {
    if (*p == ',') continue;
    if (*p == '.' && r == 0) {
      memcpy(rhs, "...", 3), r = 3;
      continue;
    }
    counts[(unsigned char)*p]++;
  }
  for (int c = 0; c < 256; c++)
    if (counts[c] == 1) rhs[r++] = (char)c;
  rhs[r] = 0;
  /* sort everything after the dots (the dots sort first anyway) */
  for (size_t i = 1; i < r; i++)
    for (size_t j = i; j > 0 && (unsigned char)rhs[j - 1] > (unsigned char)rhs[j]; j--) {
      char t = rhs[j];
      rhs[j] = rhs[j - 1], rhs[j - 1] = t;
    }
  return 0;
}

/* Check one subscript's characters and replace its ellipsis by the last
 * len characters of spare; ndim < 0: the output (uses *maxlen). */
static int expand(const ein *e, const char *sub, int ndim, int idx, const cm_array *op,
                  const char *spare, int *maxlen, term *t) {
  int n = (int)strlen(sub), before = 0, after = 0, dots = -1;
  for (int i = 0; i < n; i++) {
    if (!isalpha((unsigned char)sub[i])) {
      if (i + 2 >= n || sub[i] != '.' || sub[i + 1] != '.' || sub[i + 2] != '.') {
        char c[2] = {sub[i], 0};
        return ein_fail(e, "Subscripts must be letters, but got '%s'.", c);
      }
      if (dots >= 0)
        return ein_fail(e, "Only one ellipsis per subscript is allowed but found more in '%s'.",
                        sub);
      dots = i;
      i += 2;
      continue;
    }
    if (dots >= 0) after++;
    else before++;
  }
  char s[TERM_CAP + 1];
  int len = 0;
  if (dots >= 0) {
    int el = *maxlen;
    if (ndim >= 0) {
      el = ndim - before - after;
      if (el < 0) {
        char shp[256];
        return cm_error(CM_ERR_VALUE,
                        "[%s] Operand %d with shape %s has insufficient dimensions for subscript "
                        "'%s'. The ellipsis requires at least %d dimensions but the operand has %d "
                        "dimensions.",
                        e->fn, idx, cm_shape_str(shp, sizeof shp, op->ndim, op->shape), sub,
                        before + after, op->ndim);
      }
      if (el > *maxlen) *maxlen = el;
    }
    int ns = (int)strlen(spare);
    if (el > ns || before + after + el > TERM_CAP)
      return cm_error(CM_ERR_VALUE, "[%s] Too many dimensions for the ellipsis in '%s'.", e->fn,
                      sub);
    memcpy(s, sub, (size_t)before);
    memcpy(s + before, spare + ns - el, (size_t)el);
    memcpy(s + before + el, sub + dots + 3, (size_t)after);
    len = before + el + after;
  } else {
    if (n > TERM_CAP) {
      if (ndim < 0) return ein_fail(e, "%s", "Too many output subscripts.");
      return cm_error(CM_ERR_VALUE,
                      "[%s] Invalid number of subscripts %d for input %d with %d dimensions.",
                      e->fn, n, idx, ndim);
    }
    memcpy(s, sub, (size_t)n);
    len = n;
  }
  term_set(t, s, len);
  return 0;
}

static int ein_init(ein *e, const char *fn, const char *subscripts, cm_array *const *ops, int n) {
  memset(e, 0, sizeof *e);
  e->fn = fn;
  e->n = n;
  if (n == 0) return cm_error(CM_ERR_VALUE, "[%s] At least one operand is required.", fn);
  size_t sl = strlen(subscripts);
  char *buf = malloc(2 * sl + 8), *rhs = buf ? buf + sl + 2 : NULL, *lhs;
  e->in = calloc((size_t)n, sizeof(term));
  int rc = -1;
  if (!buf || !e->in) {
    cm_error(CM_ERR_MEMORY, "[%s] Out of memory.", fn);
    goto done;
  }
  parse(subscripts, buf, &lhs, rhs);
  /* the input subscripts: getline's split (no token after a final comma) */
  char *subs[1024];
  int ns = 0;
  for (char *p = lhs; *p && ns < 1024;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = 0;
    subs[ns++] = p;
    if (!comma) break;
    p = comma + 1;
  }
  if (ns != n) {
    cm_error(CM_ERR_VALUE,
             "[%s] Number of operands, %d, does not match number of input subscripts, %d", fn, n,
             ns);
    goto done;
  }
  /* spare letters: the unused ones, a-z then A-Z */
  bool used[256] = {false};
  for (const char *p = subscripts; *p; p++) used[(unsigned char)*p] = true;
  char spare[NLETTERS + 1];
  int nsp = 0;
  for (char c = 'a'; c <= 'z'; c++)
    if (!used[(unsigned char)c]) spare[nsp++] = c;
  for (char c = 'A'; c <= 'Z'; c++)
    if (!used[(unsigned char)c]) spare[nsp++] = c;
  spare[nsp] = 0;
  int maxlen = 0;
  for (int i = 0; i < n; i++)
    if (expand(e, subs[i], ops[i]->ndim, i, ops[i], spare, &maxlen, &e->in[i])) goto done;
  if (expand(e, rhs, -1, -1, NULL, spare, &maxlen, &e->out)) goto done;
  for (int i = 0; i < e->out.len; i++)
    if (strchr(e->out.str + i + 1, e->out.str[i])) {
      cm_error(CM_ERR_VALUE, "[%s] Repeat indices not allowed in output.", fn);
      goto done;
    }
  bool seen[NLETTERS] = {false};
  for (int i = 0; i < n; i++) {
    const term *t = &e->in[i];
    const cm_array *a = ops[i];
    if (t->len != a->ndim) {
      cm_error(CM_ERR_VALUE,
               "[%s] Invalid number of subscripts %d for input %d with %d dimensions.", fn, t->len,
               i, a->ndim);
      goto done;
    }
    for (int j = 0; j < t->len; j++)
      for (int k = 0; k < j; k++)
        if (t->str[k] == t->str[j] && a->shape[k] != a->shape[j]) {
          cm_error(CM_ERR_VALUE,
                   "[%s] Dimensions of repeated subscripts do not have the same size (%d != %d).",
                   fn, a->shape[k], a->shape[j]);
          goto done;
        }
    for (int j = 0; j < t->len; j++) {
      int c = bit(t->str[j]);
      uint64_t d = (uint64_t)a->shape[j];
      if (seen[c] && d != 1 && e->dim[c] != 1 && e->dim[c] != d) {
        char shp[256];
        cm_error(CM_ERR_VALUE,
                 "[%s] Cannot broadcast dimension %d of input %d with shape %s to "
                 "size %llu.",
                 fn, j, i, cm_shape_str(shp, sizeof shp, a->ndim, a->shape),
                 (unsigned long long)e->dim[c]);
        goto done;
      }
      if (!seen[c] || d > e->dim[c]) e->dim[c] = d;
      seen[c] = true;
    }
  }
  for (int i = 0; i < e->out.len; i++)
    if (!seen[bit(e->out.str[i])]) {
      char c[2] = {e->out.str[i], 0};
      ein_fail(e, "Output subscript '%s' does not appear in the inputs.", c);
      goto done;
    }
  rc = 0;
done:
  free(buf);
  return rc;
}

static void ein_free(ein *e) {
  free(e->in);
  e->in = NULL;
}

/* ---- the contraction path ---- */

typedef struct pnode {
  int npos;
  int *pos;  /* positions into the current operand list, increasing */
  term *ins; /* npos input terms */
  term out;
} pnode;

typedef struct path {
  int n;
  pnode *nodes;
  uint64_t naive_cost, opt_cost;
  int naive_scaling, opt_scaling;
} path;

static void path_free(path *p) {
  for (int i = 0; i < p->n; i++) free(p->nodes[i].pos), free(p->nodes[i].ins);
  free(p->nodes);
  p->nodes = NULL;
  p->n = 0;
}

/* A node over terms[0..n) at positions 0..n-1. */
static int add_node(path *p, const term *terms, const int *pos, int n, const term *out) {
  pnode *nd = &p->nodes[p->n];
  nd->pos = malloc(sizeof(int) * (size_t)n);
  nd->ins = malloc(sizeof(term) * (size_t)n);
  if (!nd->pos || !nd->ins) {
    free(nd->pos), free(nd->ins);
    return cm_error(CM_ERR_MEMORY, "[einsum] Out of memory.");
  }
  nd->npos = n;
  for (int i = 0; i < n; i++) nd->pos[i] = pos ? pos[i] : i, nd->ins[i] = terms[i];
  nd->out = *out;
  p->n++;
  return 0;
}

static void cost_and_scaling(const ein *e, const term *ins, int n, const term *out, uint64_t *cost,
                             int *scaling) {
  cset all = 0;
  for (int i = 0; i < n; i++) all |= ins[i].set;
  bool inner = (all & ~out->set) != 0;
  *cost = flop_count(e, all, inner, n);
  *scaling = __builtin_popcountll(all);
}

typedef struct cand {
  int64_t size; /* elements removed (may be negative) */
  uint64_t cost;
  cset out;
  int dims, x, y;
} cand;

/* The letters of an intermediate term, smallest dimension first. */
static void term_from_set(const ein *e, cset s, term *t) {
  char buf[NLETTERS];
  int n = 0;
  for (int c = 0; c < NLETTERS; c++)
    if (s >> c & 1) buf[n++] = (char)(c < 26 ? 'a' + c : 'A' + c - 26);
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && e->dim[bit(buf[j - 1])] > e->dim[bit(buf[j])]; j--) {
      char x = buf[j];
      buf[j] = buf[j - 1], buf[j - 1] = x;
    }
  term_set(t, buf, n);
}

/* MLX's greedy_path, step for step. */
static int greedy(const ein *e, path *p, uint64_t cost_limit, uint64_t memory_limit) {
  int n = e->n, cap = 2 * n * n + 8;
  term *ins = malloc(sizeof(term) * (size_t)(n + 1));
  cand *cs = malloc(sizeof(cand) * (size_t)cap), *next = malloc(sizeof(cand) * (size_t)cap);
  int *pairs = malloc(sizeof(int) * 2 * (size_t)(n * n + 1));
  int rc = -1;
  if (!ins || !cs || !next || !pairs) {
    cm_error(CM_ERR_MEMORY, "[einsum] Out of memory.");
    goto done;
  }
  memcpy(ins, e->in, sizeof(term) * (size_t)n);
  int nin = n, ncs = 0, npairs = 0;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++) pairs[2 * npairs] = i, pairs[2 * npairs + 1] = j, npairs++;
  uint64_t path_cost = 0;
  int path_scaling = 0;
  for (int it = 0; it < n - 1; it++) {
    /* pairs sharing a subscript; outer products only when nothing else is
     * left */
    for (int pass = 0; pass < 2 && (pass == 0 || ncs == 0); pass++)
      for (int q = 0; q < npairs; q++) {
        int p1 = pairs[2 * q], p2 = pairs[2 * q + 1];
        if (pass == 0 && !(ins[p1].set & ins[p2].set)) continue;
        cset con = ins[p1].set | ins[p2].set, keep = 0;
        for (int i = 0; i < nin; i++)
          if (i != p1 && i != p2) keep |= ins[i].set & con;
        keep |= e->out.set & con;
        uint64_t new_size = set_size(e, keep);
        if (new_size > memory_limit) continue;
        int64_t removed = (int64_t)(set_size(e, ins[p1].set) + set_size(e, ins[p2].set) - new_size);
        uint64_t cost = flop_count(e, con, con != keep, 2);
        if (path_cost + cost > cost_limit) continue;
        cs[ncs++] = (cand){removed, cost, keep, __builtin_popcountll(con), p1, p2};
      }
    if (ncs == 0) { /* the rest in one naive step */
      uint64_t cost;
      int sc;
      cost_and_scaling(e, ins, nin, &e->out, &cost, &sc);
      if (add_node(p, ins, NULL, nin, &e->out)) goto done;
      path_cost += cost;
      if (sc > path_scaling) path_scaling = sc;
      break;
    }
    int best = 0;
    for (int i = 1; i < ncs; i++)
      if (cs[i].size > cs[best].size || (cs[i].size == cs[best].size && cs[i].cost < cs[best].cost))
        best = i;
    cand b = cs[best];
    if (b.dims > path_scaling) path_scaling = b.dims;
    term nt, pair[2] = {ins[b.x], ins[b.y]};
    term_from_set(e, b.out, &nt);
    int pos[2] = {b.x, b.y};
    if (add_node(p, pair, pos, 2, &nt)) goto done;
    memmove(ins + b.y, ins + b.y + 1, sizeof(term) * (size_t)(nin - b.y - 1));
    memmove(ins + b.x, ins + b.x + 1, sizeof(term) * (size_t)(nin - 2 - b.x));
    nin -= 2;
    ins[nin++] = nt;
    int nn = 0;
    for (int i = 0; i < ncs; i++) {
      cand c = cs[i];
      if (c.x == b.x || c.x == b.y || c.y == b.x || c.y == b.y) continue;
      c.x -= (c.x > b.x) + (c.x > b.y);
      c.y -= (c.y > b.x) + (c.y > b.y);
      next[nn++] = c;
    }
    memcpy(cs, next, sizeof(cand) * (size_t)nn);
    ncs = nn;
    npairs = 0;
    for (int i = 0; i < nin - 1; i++)
      pairs[2 * npairs] = i, pairs[2 * npairs + 1] = nin - 1, npairs++;
    path_cost += b.cost;
  }
  p->opt_cost = path_cost;
  p->opt_scaling = path_scaling;
  p->nodes[p->n - 1].out = e->out;
  rc = 0;
done:
  free(ins), free(cs), free(next), free(pairs);
  return rc;
}

static int compute_path(const ein *e, path *p) {
  memset(p, 0, sizeof *p);
  p->nodes = calloc((size_t)e->n, sizeof(pnode));
  if (!p->nodes) return cm_error(CM_ERR_MEMORY, "[einsum] Out of memory.");
  uint64_t max_size = str_size(e, &e->out);
  for (int i = 0; i < e->n; i++) {
    uint64_t sz = str_size(e, &e->in[i]);
    if (sz > max_size) max_size = sz;
  }
  cost_and_scaling(e, e->in, e->n, &e->out, &p->naive_cost, &p->naive_scaling);
  int rc;
  if (e->n <= 2) {
    rc = add_node(p, e->in, NULL, e->n, &e->out);
    p->opt_cost = p->naive_cost;
    p->opt_scaling = p->naive_scaling;
  } else {
    rc = greedy(e, p, p->naive_cost, max_size);
  }
  if (rc) path_free(p);
  return rc;
}

int cm_einsum_path_compute(const char *subscripts, cm_array *const *operands, int n,
                           cm_einsum_path *out) {
  memset(out, 0, sizeof *out);
  ein e;
  path p;
  if (ein_init(&e, "einsum_path", subscripts, operands, n) || compute_path(&e, &p))
    return ein_free(&e), -1;
  ein_free(&e);
  size_t cap = strlen(subscripts) + 256;
  out->nsteps = p.n;
  out->npos = calloc((size_t)p.n, sizeof(int));
  out->pos = calloc((size_t)p.n, sizeof(int *));
  out->info = malloc(cap);
  bool ok = out->npos && out->pos && out->info;
  for (int i = 0; ok && i < p.n; i++) {
    out->npos[i] = p.nodes[i].npos;
    out->pos[i] = p.nodes[i].pos;
    p.nodes[i].pos = NULL; /* moved */
  }
  if (ok)
    snprintf(out->info, cap,
             "  Complete contraction:  %s\n         Naive scaling:  %d\n     Optimized scaling:  "
             "%d\n      Naive FLOP count:  %llu\n  Optimized FLOP count:  %llu\n",
             subscripts, p.naive_scaling, p.opt_scaling, (unsigned long long)p.naive_cost,
             (unsigned long long)p.opt_cost);
  path_free(&p);
  if (!ok) {
    cm_einsum_path_free(out);
    return cm_error(CM_ERR_MEMORY, "[einsum_path] Out of memory.");
  }
  return 0;
}

void cm_einsum_path_free(cm_einsum_path *p) {
  for (int i = 0; p->pos && i < p->nsteps; i++) free(p->pos[i]);
  free(p->pos), free(p->npos), free(p->info);
  memset(p, 0, sizeof *p);
}

/* ---- evaluation ---- */

/* Replace *x by y (taking y's reference); false if y is NULL. */
static bool step(cm_array **x, cm_array *y) {
  if (!y) return false;
  cm_release(*x);
  *x = y;
  return true;
}

/* Repeated subscripts of t become one axis (a diagonal, moved last). */
static bool collapse_repeats(cm_array **x, term *t, cm_stream s) {
  for (int i = 0; i < t->len; i++) {
    char *dup;
    while ((dup = strchr(t->str + i + 1, t->str[i]))) {
      char c = t->str[i];
      int j = (int)(dup - t->str);
      if (!step(x, cm_diagonal(*x, 0, i, j, s))) return false;
      char buf[TERM_CAP + 1];
      int n = 0;
      for (int k = 0; k < t->len; k++)
        if (k != i && k != j) buf[n++] = t->str[k];
      buf[n++] = c;
      term_set(t, buf, n);
    }
  }
  return true;
}

/* Sum the subscripts of each term that no other term and not the output
 * has. */
static bool sum_singles(cm_array **ops, pnode *nd, cm_stream s) {
  int counts[NLETTERS] = {0};
  for (int i = 0; i < nd->npos; i++)
    for (int c = 0; c < NLETTERS; c++) counts[c] += (int)(nd->ins[i].set >> c & 1);
  for (int c = 0; c < NLETTERS; c++) counts[c] += (int)(nd->out.set >> c & 1);
  for (int i = 0; i < nd->npos; i++) {
    term *t = &nd->ins[i];
    int axes[CM_MAX_DIMS], na = 0, n = 0;
    char buf[TERM_CAP + 1];
    for (int k = 0; k < t->len; k++) {
      if (counts[bit(t->str[k])] == 1) axes[na++] = k;
      else buf[n++] = t->str[k];
    }
    if (!na) continue;
    cm_array **x = &ops[nd->pos[i]];
    if (!step(x, cm_sum(*x, cm_axes_list(axes, na), false, s))) return false;
    term_set(t, buf, n);
  }
  return true;
}

/* x transposed to (i.., j.., k..) and reshaped to (i.., prod j, prod k). */
static cm_array *group_axes(cm_array *x, const int *i, int ni, const int *j, int nj, const int *k,
                            int nk, cm_stream s) {
  int perm[CM_MAX_DIMS];
  int32_t shape[CM_MAX_DIMS];
  int64_t s1 = 1, s2 = 1;
  for (int q = 0; q < ni; q++) perm[q] = i[q], shape[q] = x->shape[i[q]];
  for (int q = 0; q < nj; q++) perm[ni + q] = j[q], s1 *= x->shape[j[q]];
  for (int q = 0; q < nk; q++) perm[ni + nj + q] = k[q], s2 *= x->shape[k[q]];
  if (cm_shape_dim("einsum", s1, &shape[ni]) || cm_shape_dim("einsum", s2, &shape[ni + 1]))
    return NULL;
  cm_array *t = cm_transpose(x, ni + nj + nk, perm, s);
  cm_array *r = t ? cm_reshape(t, ni + 2, shape, s) : NULL;
  cm_release(t);
  return r;
}

/* Two terms sharing a summed subscript: one batched matmul. */
static cm_array *dot_step(cm_array *a, cm_array *b, const term *ta, const term *tb, const term *out,
                          cm_stream s) {
  int ac[CM_MAX_DIMS], ab[CM_MAX_DIMS], ax[CM_MAX_DIMS], nc = 0, nbt = 0, nx = 0;
  int bc[CM_MAX_DIMS], bb[CM_MAX_DIMS], bx[CM_MAX_DIMS], nbx = 0;
  for (int i = 0; i < ta->len; i++) {
    cset c = (cset)1 << bit(ta->str[i]);
    if (!(out->set & c)) ac[nc++] = i;
    else if (tb->set & c) ab[nbt++] = i;
    else ax[nx++] = i;
  }
  for (int i = 0; i < nc; i++) bc[i] = (int)(strchr(tb->str, ta->str[ac[i]]) - tb->str);
  for (int i = 0; i < nbt; i++) bb[i] = (int)(strchr(tb->str, ta->str[ab[i]]) - tb->str);
  for (int i = 0; i < tb->len; i++) {
    cset c = (cset)1 << bit(tb->str[i]);
    if ((out->set & c) && !(ta->set & c)) bx[nbx++] = i;
  }
  /* broadcast the contracted and batch axes against each other */
  int32_t sa[CM_MAX_DIMS], sb[CM_MAX_DIMS];
  memcpy(sa, a->shape, sizeof(int32_t) * (size_t)a->ndim);
  memcpy(sb, b->shape, sizeof(int32_t) * (size_t)b->ndim);
  for (int i = 0; i < nc; i++) {
    int32_t d = sa[ac[i]] > sb[bc[i]] ? sa[ac[i]] : sb[bc[i]];
    sa[ac[i]] = sb[bc[i]] = d;
  }
  for (int i = 0; i < nbt; i++) {
    int32_t d = sa[ab[i]] > sb[bb[i]] ? sa[ab[i]] : sb[bb[i]];
    sa[ab[i]] = sb[bb[i]] = d;
  }
  int32_t oshape[CM_MAX_DIMS];
  char ochars[CM_MAX_DIMS];
  int no = 0;
  for (int i = 0; i < nbt; i++) ochars[no] = ta->str[ab[i]], oshape[no++] = sa[ab[i]];
  for (int i = 0; i < nx; i++) ochars[no] = ta->str[ax[i]], oshape[no++] = sa[ax[i]];
  for (int i = 0; i < nbx; i++) ochars[no] = tb->str[bx[i]], oshape[no++] = sb[bx[i]];
  cm_array *x = cm_broadcast_to(a, a->ndim, sa, s);
  cm_array *y = x ? cm_broadcast_to(b, b->ndim, sb, s) : NULL;
  cm_array *gx = y ? group_axes(x, ab, nbt, ax, nx, ac, nc, s) : NULL;
  cm_array *gy = gx ? group_axes(y, bb, nbt, bc, nc, bx, nbx, s) : NULL;
  cm_array *p = gy ? cm_matmul(gx, gy, s) : NULL;
  cm_array *r = p ? cm_reshape(p, no, oshape, s) : NULL;
  cm_release(x), cm_release(y), cm_release(gx), cm_release(gy), cm_release(p);
  if (!r) return NULL;
  int perm[CM_MAX_DIMS];
  for (int i = 0; i < out->len; i++)
    perm[i] = (int)((char *)memchr(ochars, out->str[i], (size_t)no) - ochars);
  cm_array *o = cm_transpose(r, out->len, perm, s);
  cm_release(r);
  return o;
}

/* Anything else: broadcast every term over all the step's subscripts,
 * multiply, sum what the output lacks, order as the output. */
static cm_array *naive_step(cm_array **ops, const pnode *nd, cm_stream s) {
  char chars[NLETTERS];
  int nch = 0, canon[NLETTERS];
  for (int c = 0; c < NLETTERS; c++) canon[c] = -1;
  for (int i = 0; i < nd->npos; i++)
    for (int k = 0; k < nd->ins[i].len; k++) {
      int c = bit(nd->ins[i].str[k]);
      if (canon[c] < 0) canon[c] = nch, chars[nch++] = nd->ins[i].str[k];
    }
  cm_array *acc = NULL;
  for (int i = 0; i < nd->npos; i++) {
    const term *t = &nd->ins[i];
    cm_array *x = cm_retain(ops[nd->pos[i]]);
    if (x->ndim != nch) {
      int32_t shape[CM_MAX_DIMS];
      memcpy(shape, x->shape, sizeof(int32_t) * (size_t)x->ndim);
      for (int k = x->ndim; k < nch; k++) shape[k] = 1;
      if (!step(&x, cm_reshape(x, nch, shape, s))) goto fail_x;
    }
    int perm[NLETTERS], extra = t->len;
    bool identity = true;
    for (int q = 0; q < nch; q++) {
      const char *at = memchr(t->str, chars[q], (size_t)t->len);
      perm[q] = at ? (int)(at - t->str) : extra++;
      identity &= perm[q] == q;
    }
    if (!identity && !step(&x, cm_transpose(x, nch, perm, s))) goto fail_x;
    if (!acc) {
      acc = x;
      continue;
    }
    if (!step(&acc, cm_multiply(acc, x, s))) goto fail_x;
    cm_release(x);
    continue;
  fail_x:
    cm_release(x);
    cm_release(acc);
    return NULL;
  }
  int axes[NLETTERS], na = 0;
  for (int q = 0; q < nch; q++)
    if (!(nd->out.set >> bit(chars[q]) & 1)) axes[na++] = q;
  if (na && !step(&acc, cm_sum(acc, cm_axes_list(axes, na), false, s))) {
    cm_release(acc);
    return NULL;
  }
  int perm[NLETTERS];
  for (int i = 0; i < nd->out.len; i++) {
    int r = canon[bit(nd->out.str[i])], off = 0;
    for (int q = 0; q < na; q++) off += r > axes[q];
    perm[i] = r - off;
  }
  cm_array *o = cm_transpose(acc, nd->out.len, perm, s);
  cm_release(acc);
  return o;
}

static bool can_dot(const pnode *nd) {
  return nd->npos == 2 && (nd->ins[0].set & ~nd->out.set) != 0;
}

cm_array *cm_einsum(const char *subscripts, cm_array *const *operands, int n, cm_stream s) {
  if (cm_op_stream(&s)) return NULL;
  if (!subscripts) return cm_error(CM_ERR_VALUE, "[einsum] Got no subscripts."), NULL;
  for (int i = 0; i < n; i++)
    if (!operands[i]) return cm_error(CM_ERR_VALUE, "[einsum] Got a null array."), NULL;
  ein e;
  path p;
  if (ein_init(&e, "einsum", subscripts, operands, n)) return ein_free(&e), NULL;
  if (compute_path(&e, &p)) return ein_free(&e), NULL;
  ein_free(&e);
  cm_array **ops = calloc((size_t)n + 1, sizeof(cm_array *));
  if (!ops) return path_free(&p), cm_error(CM_ERR_MEMORY, "[einsum] Out of memory."), NULL;
  int nops = n;
  for (int i = 0; i < n; i++) ops[i] = cm_retain(operands[i]);
  bool ok = true;
  for (int k = 0; k < p.n && ok; k++) {
    pnode *nd = &p.nodes[k];
    for (int i = 0; i < nd->npos && ok; i++)
      if (__builtin_popcountll(nd->ins[i].set) < nd->ins[i].len)
        ok = collapse_repeats(&ops[nd->pos[i]], &nd->ins[i], s);
    ok = ok && sum_singles(ops, nd, s);
    cm_array *r = NULL;
    if (ok) {
      r = can_dot(nd)
              ? dot_step(ops[nd->pos[0]], ops[nd->pos[1]], &nd->ins[0], &nd->ins[1], &nd->out, s)
              : naive_step(ops, nd, s);
      ok = r != NULL;
    }
    if (!ok) break;
    /* drop the used operands (positions increase), append the result */
    for (int i = nd->npos - 1; i >= 0; i--) {
      int q = nd->pos[i];
      cm_release(ops[q]);
      memmove(ops + q, ops + q + 1, sizeof(cm_array *) * (size_t)(nops - q - 1));
      nops--;
    }
    ops[nops++] = r;
  }
  cm_array *out = ok ? ops[0] : NULL;
  for (int i = ok ? 1 : 0; i < nops; i++) cm_release(ops[i]);
  free(ops);
  path_free(&p);
  return out;
}
