/* The AVX-512 quicksort of unsigned keys, written once for both lane
 * widths: backend/cpu/sort_avx512.c includes it twice, after defining
 *   S          the suffix of the generated names (32 or 64)
 *   KT, MT     the key type and the mask type of one vector
 *   L          lanes per vector (16 or 8)
 *   V_*        the intrinsics of that width, and V_SORT (sort one vector),
 *              V_MERGE (bitonic sequence to ascending) and V_REV (reverse).
 * What it defines (N: names with the suffix pasted on):
 *   N(small)   sorting network for n <= NET_MAX(L) keys
 *   N(part)    partition around a pivot, in place
 *   N(qsort)   the introsort: quicksort partitions down to the network,
 *              heapsort where it recurses too deep
 *   N(select)  quickselect on the same partition.
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
static KT N(pivot)(const KT *a, int64_t n, bool *dup) {
  KT s[L];
  for (int i = 0; i < L; i++) s[i] = a[(n - 1) * (2 * i + 1) / (2 * L)];
  V v = V_SORT(V_LOADU(s));
  V_STOREU(s, v);
  *dup = s[L / 2 - 1] == s[L / 2] || s[L / 2 + 1] == s[L / 2];
  return s[L / 2];
}

/* One vector's keys (those in `valid`) to their sides: keys < p compressed
 * to the left end, keys >= p to just below the right end.  cs: with the
 * compressing stores (one instruction each; chosen by the caller, as on
 * some CPUs they are microcoded and slow), else compress, then store. */
static inline __attribute__((always_inline)) void N(place)(KT *a, int64_t *ls, int64_t *rs,
                                                           V x, V p, MT valid, bool full_left,
                                                           bool cs) {
  MT ge = (MT)(V_CMPGE(x, p) & valid), lt = (MT)(~ge & valid);
  int nr = __builtin_popcount((unsigned)ge), nl = __builtin_popcount((unsigned)valid) - nr;
  if (cs) {
    V_CSTORE(a + *ls, lt, x);
    *ls += nl;
    *rs -= nr;
    V_CSTORE(a + *rs, ge, x);
    return;
  }
  V cl = V_COMPRESS(lt, x), cr = V_COMPRESS(ge, x);
  if (full_left) V_STOREU(a + *ls, cl); /* the lanes past nl land in free space */
  else V_MSTORE(a + *ls, (MT)(((uint32_t)1 << nl) - 1), cl);
  *ls += nl;
  *rs -= nr;
  V_MSTORE(a + *rs, (MT)(((uint32_t)1 << nr) - 1), cr);
}

/* Partition a[0, n) (n >= 2 * U * L = NET_MAX) in place: keys < p first.
 * Returns their count.  The first and last U vectors are held in
 * registers, which leaves 2 U vectors of room; each step reads U vectors
 * from the side with less room (chosen without a branch: the choice is
 * unpredictable), so afterwards both sides have U vectors of room and
 * nothing unread is overwritten.  U = 8 measured a few percent faster
 * than 4 (fewer choices per key). */
#define U 8
static inline __attribute__((always_inline)) int64_t N(part_with)(KT *a, int64_t n, KT pk,
                                                                  bool cs) {
  const V p = V_SET1(pk);
  const MT all = (MT)~(MT)0;
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
    N(place)(a, &ls, &rs, V_LOADU(a + l), p, all, true, cs);
  if (rem) {
    MT k = (MT)(((uint32_t)1 << rem) - 1);
    N(place)(a, &ls, &rs, V_MLOAD(V_SET1(0), k, a + l), p, k, true, cs);
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
    for (int i = 0; i < U; i++) N(place)(a, &ls, &rs, x[i], p, all, true, cs);
  }
#pragma GCC unroll 8
  for (int i = 0; i < U; i++) {
    N(place)(a, &ls, &rs, head[i], p, all, false, cs);
    N(place)(a, &ls, &rs, tail[i], p, all, false, cs);
  }
  return ls;
}
#undef U

static int64_t N(part_cs)(KT *a, int64_t n, KT p) { return N(part_with)(a, n, p, true); }
static int64_t N(part_reg)(KT *a, int64_t n, KT p) { return N(part_with)(a, n, p, false); }
static int64_t N(part)(KT *a, int64_t n, KT p) {
  return cstore_fast() ? N(part_cs)(a, n, p) : N(part_reg)(a, n, p);
}

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

/* Equal keys need no order among themselves: where the sample shows the
 * pivot repeated, the keys equal to it are split off the right side (a
 * second partition, around pivot + 1) and are finished, so many repeated
 * values cost a few passes, not a full sort.  Keeping a running maximum
 * instead to spot an all-equal side measured 4% slower on distinct keys.
 * Every step leaves out at least the pivot's keys, and with a pivot not
 * repeated in the sample, both sides are smaller than the range. */
static void N(qsort)(KT *a, int64_t n, int depth, int fin) {
  while (n > NET_MAX) {
    if (depth-- == 0) {
      N(heapsort)(a, n);
      N(finish)(a, n, fin);
      return;
    }
    bool dup;
    KT p = N(pivot)(a, n, &dup);
    int64_t nl = N(part)(a, n, p);
    int64_t ne = 0;
    if (dup && n - nl >= NET_MAX) { /* (a shorter side the network sorts anyway) */
      ne = p == (KT)~(KT)0 ? n - nl : N(part)(a + nl, n - nl, p + 1);
      N(finish)(a + nl, ne, fin);
    }
    int64_t r0 = nl + ne, nr = n - r0;
    if (nr >= nl) {
      N(qsort)(a, nl, depth, fin);
      a += r0, n = nr;
    } else {
      N(qsort)(a + r0, nr, depth, fin);
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

/* Quickselect with the same steps: keep the side that holds kth, then let
 * the network sort the last range.  Afterwards a[kth] is the key that
 * sorts there, with no larger key before it and no smaller one after. */
static void N(select)(KT *a, int64_t n, int64_t kth) {
  int depth = N(depth)(n);
  while (n > NET_MAX) {
    if (depth-- == 0) {
      N(heapsort)(a, n);
      return;
    }
    bool dup;
    KT p = N(pivot)(a, n, &dup);
    int64_t nl = N(part)(a, n, p), ne = 0;
    if (dup && n - nl >= NET_MAX) ne = p == (KT)~(KT)0 ? n - nl : N(part)(a + nl, n - nl, p + 1);
    if (kth < nl) {
      n = nl;
    } else if (kth < nl + ne) {
      return; /* among the keys equal to the pivot */
    } else {
      a += nl + ne, n -= nl + ne, kth -= nl + ne;
    }
  }
  if (n > 1) N(small)(a, n, 0);
}

#undef N
#undef NET_MAX
