/* The AVX-512 quicksort of unsigned keys, written once for both lane
 * widths: backend/cpu/sort_avx512.c includes it twice, after defining
 *   S          the suffix of the generated names (32 or 64)
 *   KT, MT     the key type and the mask type of one vector
 *   L          lanes per vector (16 or 8)
 *   V_*        the intrinsics of that width, and V_SORT (sort one vector),
 *              V_MERGE (bitonic sequence to ascending) and V_REV (reverse).
 * What it defines (N: names with the suffix pasted on):
 *   N(small)   sorting network for n <= NET_MAX(L) keys
 *   N(part)    partition around a pivot, with the bounds of both sides
 *   N(qsort)   the introsort: quicksort partitions down to the network,
 *              heapsort where it recurses too deep.
 * fin: a transform of the keys applied as each one reaches its place
 * (V_FIN: keys back to values), saving a pass over the row; 0 for none. */

#define N(name) CM_CAT3(name, _, S)
#define NET_MAX (16 * L) /* keys the network sorts: 16 vectors */

/* Sort m = 1, 2, 4, 8 or 16 vectors, each already loaded, as one sequence
 * of m * L keys; the vectors from r on are padding (all the largest key).
 * Each vector is sorted by itself, then sorted runs of w vectors are
 * merged in pairs: the first run against the reversed second (which
 * leaves two bitonic halves, the low keys all in the first), then
 * half-cleaners between vectors, then the last steps inside each vector.
 * A pair whose second run is all padding is already merged, so it is
 * skipped: a row that fills 9 of 16 vectors costs little more than 8.
 * Called with a constant m and inlined, so the vectors stay in registers. */
static inline __attribute__((always_inline)) void N(net)(V *v, int m, int r) {
#pragma GCC unroll 16
  for (int i = 0; i < m; i++)
    if (i < r) v[i] = V_SORT(v[i]);
#pragma GCC unroll 4
  for (int w = 1; w < m; w *= 2) {
#pragma GCC unroll 16
    for (int s = 0; s < m; s += 2 * w) {
      if (s + w >= r) continue;
#pragma GCC unroll 8
      for (int i = 0; i < (w + 1) / 2; i++) { /* the pairs i, j of both runs at once */
        int j = w - 1 - i;
        V ai = v[s + i], aj = v[s + j], bi = V_REV(v[s + w + i]), bj = V_REV(v[s + w + j]);
        v[s + i] = V_MIN(ai, bj), v[s + w + i] = V_MAX(ai, bj);
        v[s + j] = V_MIN(aj, bi), v[s + w + j] = V_MAX(aj, bi);
      }
#pragma GCC unroll 4
      for (int d = w / 2; d > 0; d /= 2) {
#pragma GCC unroll 16
        for (int i = s; i < s + 2 * w; i++) {
          if (i & d) continue;
          V x = v[i], y = v[i + d];
          v[i] = V_MIN(x, y);
          v[i + d] = V_MAX(x, y);
        }
      }
#pragma GCC unroll 16
      for (int i = s; i < s + 2 * w; i++) v[i] = V_MERGE(v[i]);
    }
  }
}

/* n <= NET_MAX keys in m vectors (a power of two, a constant where it is
 * inlined): padded with the largest key, which sorts last, so the first n
 * lanes are the answer. */
static inline __attribute__((always_inline)) void N(small_m)(KT *a, int64_t n, int m, int fin) {
  V v[16];
  const V pad = V_SET1((KT)~(KT)0);
#pragma GCC unroll 16
  for (int i = 0; i < m; i++) {
    int64_t left = n - (int64_t)i * L;
    MT k = left >= L ? (MT)~(MT)0 : left > 0 ? (MT)(((uint32_t)1 << left) - 1) : 0;
    v[i] = V_MLOAD(pad, k, a + (int64_t)i * L);
  }
  N(net)(v, m, (int)((n + L - 1) / L));
#pragma GCC unroll 16
  for (int i = 0; i < m; i++) {
    int64_t left = n - (int64_t)i * L;
    MT k = left >= L ? (MT)~(MT)0 : left > 0 ? (MT)(((uint32_t)1 << left) - 1) : 0;
    V_MSTORE(a + (int64_t)i * L, k, fin ? V_FIN(v[i], fin) : v[i]);
  }
}

static void N(small)(KT *a, int64_t n, int fin) {
  if (n <= L) N(small_m)(a, n, 1, fin);
  else if (n <= 2 * L) N(small_m)(a, n, 2, fin);
  else if (n <= 4 * L) N(small_m)(a, n, 4, fin);
  else if (n <= 8 * L) N(small_m)(a, n, 8, fin);
  else N(small_m)(a, n, 16, fin);
}

/* fin over keys already in place */
static void N(finish)(KT *a, int64_t n, int fin) {
  if (!fin) return;
  for (int64_t i = 0; i < n; i += L) {
    int64_t left = n - i;
    MT k = left >= L ? (MT)~(MT)0 : (MT)(((uint32_t)1 << left) - 1);
    V_MSTORE(a + i, k, V_FIN(V_MLOAD(V_SET1(0), k, a + i), fin));
  }
}

/* The pivot: the upper median of L keys spread over the range. */
static KT N(pivot)(const KT *a, int64_t n) {
  KT s[L];
  for (int i = 0; i < L; i++) s[i] = a[(n - 1) * (2 * i + 1) / (2 * L)];
  V v = V_SORT(V_LOADU(s));
  V_STOREU(s, v);
  return s[L / 2];
}

/* One vector's keys (those in `valid`) to their sides: keys < p compressed
 * to the left end, keys >= p to just below the right end. */
static inline __attribute__((always_inline)) void N(place)(KT *a, int64_t *ls, int64_t *rs,
                                                           V x, V p, MT valid, bool full_left,
                                                           V *rmax) {
  MT ge = (MT)(V_CMPGE(x, p) & valid), lt = (MT)(~ge & valid);
  int nr = __builtin_popcount((unsigned)ge), nl = __builtin_popcount((unsigned)lt);
  *rmax = V_MASK_MAX(*rmax, ge, *rmax, x);
  V cl = V_COMPRESS(lt, x), cr = V_COMPRESS(ge, x);
  if (full_left) V_STOREU(a + *ls, cl); /* the lanes past nl land in free space */
  else V_MSTORE(a + *ls, (MT)(((uint32_t)1 << nl) - 1), cl);
  *ls += nl;
  *rs -= nr;
  V_MSTORE(a + *rs, (MT)(((uint32_t)1 << nr) - 1), cr);
}

/* Partition a[0, n) (n >= 2 * U * L) in place: keys < p first.  Returns
 * their count, and in *max the largest key.  The first and last U vectors
 * are held in registers, which leaves 2 U vectors of room; each step reads
 * U vectors from the side with less room (chosen without a branch: the
 * choice is unpredictable), so afterwards both sides have U vectors of
 * room and nothing unread is overwritten.  U = 8 measured a few percent
 * faster than 4 (fewer choices per key). */
#define U 8
static int64_t N(part)(KT *a, int64_t n, KT pk, KT *max) {
  const V p = V_SET1(pk);
  const MT all = (MT)~(MT)0;
  V rmax = V_SET1(0);
  V head[U], tail[U];
#pragma GCC unroll 8
  for (int i = 0; i < U; i++) {
    head[i] = V_LOADU(a + i * L);
    tail[i] = V_LOADU(a + n - (U - i) * L);
  }
  int64_t l = U * L, r = n - U * L; /* unread: [l, r) */
  int64_t ls = 0, rs = n;           /* written: [0, ls) and [rs, n) */
  int64_t rem = (r - l) % (U * L);  /* the odd part first, so whole steps remain */
  for (; rem >= L; rem -= L, l += L)
    N(place)(a, &ls, &rs, V_LOADU(a + l), p, all, true, &rmax);
  if (rem) {
    MT k = (MT)(((uint32_t)1 << rem) - 1);
    N(place)(a, &ls, &rs, V_MLOAD(V_SET1(0), k, a + l), p, k, true, &rmax);
    l += rem;
  }
  while (l < r) {
    bool left = l - ls <= rs - r;
    int64_t at = left ? l : r - U * L;
    l += left ? U * L : 0;
    r -= left ? 0 : U * L;
    V x[U];
#pragma GCC unroll 8
    for (int i = 0; i < U; i++) x[i] = V_LOADU(a + at + i * L);
#pragma GCC unroll 8
    for (int i = 0; i < U; i++) N(place)(a, &ls, &rs, x[i], p, all, true, &rmax);
  }
#pragma GCC unroll 8
  for (int i = 0; i < U; i++) {
    N(place)(a, &ls, &rs, head[i], p, all, false, &rmax);
    N(place)(a, &ls, &rs, tail[i], p, all, false, &rmax);
  }
  *max = V_RMAX(rmax);
  return ls;
}
#undef U

static void N(sift)(KT *a, int64_t i, int64_t n) {
  KT x = a[i];
  for (int64_t c; (c = 2 * i + 1) < n; i = c) {
    if (c + 1 < n && a[c + 1] > a[c]) c++;
    if (a[c] <= x) break;
    a[i] = a[c];
  }
  a[i] = x;
}

/* The guard against quadratic time (a pivot that keeps splitting off a
 * few keys); never reached on ordinary data. */
static void N(heapsort)(KT *a, int64_t n) {
  for (int64_t i = n / 2; i-- > 0;) N(sift)(a, i, n);
  for (int64_t e = n - 1; e > 0; e--) {
    KT t = a[0];
    a[0] = a[e], a[e] = t;
    N(sift)(a, 0, e);
  }
}

/* Equal keys need no order among themselves, so a right side whose
 * largest key is the pivot (all its keys equal) is finished: many repeated
 * values cost a few passes, not a full sort.  A pivot that is the smallest
 * key leaves the left side empty: then the keys equal to it are split off
 * instead (pivot + 1 cannot overflow, as some key is larger). */
static void N(qsort)(KT *a, int64_t n, int depth, int fin) {
  while (n > NET_MAX) {
    if (depth-- == 0) {
      N(heapsort)(a, n);
      N(finish)(a, n, fin);
      return;
    }
    KT p = N(pivot)(a, n), rmax;
    int64_t nl = N(part)(a, n, p, &rmax);
    if (nl == 0) {
      if (rmax == p) {
        N(finish)(a, n, fin);
        return;
      }
      nl = N(part)(a, n, p + 1, &rmax);
      N(finish)(a, nl, fin);
      a += nl, n -= nl;
    } else if (rmax == p) {
      N(finish)(a + nl, n - nl, fin);
      n = nl;
    } else if (n - nl >= nl) { /* recurse on the smaller side, loop on the larger */
      N(qsort)(a, nl, depth, fin);
      a += nl, n -= nl;
    } else {
      N(qsort)(a + nl, n - nl, depth, fin);
      n = nl;
    }
  }
  if (n > 1) N(small)(a, n, fin);
  else N(finish)(a, n, fin);
}

static int N(depth)(int64_t n) {
  int d = 8;
  for (int64_t m = n; m > 1; m >>= 1) d += 2;
  return d;
}

#undef N
#undef NET_MAX
