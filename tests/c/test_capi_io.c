/* C API: mlx/c/io.h and the GGUF container of io_types.h.  Round trips
 * through paths and through mlx_io_reader / mlx_io_writer memory streams,
 * lazy loading from a path, GGUF metadata kinds and mlx-c's return codes
 * (2 absent, 3 other kind), and clean errors for damaged files. */
#include <stdlib.h>
#include <unistd.h>

#include "capi_test.h"

static mlx_stream S;
static char dir[64];

static const char *path(const char *name) {
  static char buf[160];
  snprintf(buf, sizeof buf, "%s/%s", dir, name);
  return buf;
}

/* ---- a memory stream for readers and writers ---- */
typedef struct mem {
  char *data;
  size_t pos, size, cap;
  bool err;
  int frees;
} mem;

static bool m_open(void *d) { return d != NULL; }
static bool m_good(void *d) { return !((mem *)d)->err; }
static size_t m_tell(void *d) { return ((mem *)d)->pos; }
static void m_seek(void *d, int64_t off, int whence) {
  mem *m = d;
  size_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? m->pos : m->size;
  if ((int64_t)base + off < 0 || base + (size_t)off > m->size) m->err = true;
  else m->pos = base + (size_t)off;
}
static void m_read(void *d, char *data, size_t n) {
  mem *m = d;
  if (m->pos + n > m->size) {
    m->err = true;
    return;
  }
  memcpy(data, m->data + m->pos, n);
  m->pos += n;
}
static void m_read_at(void *d, char *data, size_t n, size_t off) {
  mem *m = d;
  if (off + n > m->size) {
    m->err = true;
    return;
  }
  memcpy(data, m->data + off, n);
}
static void m_write(void *d, const char *data, size_t n) {
  mem *m = d;
  if (m->pos + n > m->cap) {
    m->err = true;
    return;
  }
  memcpy(m->data + m->pos, data, n);
  m->pos += n;
  if (m->pos > m->size) m->size = m->pos;
}
static const char *m_label(void *d) {
  (void)d;
  return "<memory>";
}
static void m_free(void *d) { ((mem *)d)->frees++; }
static const mlx_io_vtable VT = {m_open,    m_good,  m_tell,  m_seek, m_read,
                                 m_read_at, m_write, m_label, m_free};

static mlx_array iota(int n, int rows, mlx_dtype t) {
  mlx_array a = mlx_array_new(), b = mlx_array_new();
  CHECK(mlx_arange(&a, 0, n, 1, t, S) == 0);
  int shape[2] = {rows, n / rows};
  CHECK(mlx_reshape(&b, a, shape, 2, S) == 0);
  mlx_array_free(a);
  return b;
}

static bool equal(mlx_array a, mlx_array b) {
  bool r = false;
  mlx_array e = mlx_array_new();
  if (mlx_array_equal(&e, a, b, false, S) == 0 && mlx_array_item_bool(&r, e) == 0) {
    mlx_array_free(e);
    return r && mlx_array_dtype(a) == mlx_array_dtype(b);
  }
  mlx_array_free(e);
  return false;
}

static void test_npy(void) {
  mlx_array x = iota(12, 3, MLX_FLOAT32), t = mlx_array_new(), y = mlx_array_new();
  CHECK(mlx_transpose(&t, x, S) == 0);
  CHECK(mlx_save(path("a"), t) == 0); /* ".npy" appended */
  CHECK(access(path("a.npy"), F_OK) == 0);
  CHECK(mlx_load(&y, path("a.npy"), S) == 0);
  CHECK(equal(y, t));
  /* through a writer and a reader */
  mem m = {calloc(1, 4096), 0, 0, 4096, false, 0};
  mlx_io_writer w = mlx_io_writer_new(&m, VT);
  CHECK(mlx_save_writer(w, x) == 0);
  mlx_io_writer_free(w);
  CHECK(m.frees == 1 && !m.err && m.size > 48);
  mlx_io_reader r = mlx_io_reader_new(&m, VT);
  CHECK(mlx_load_reader(&y, r, S) == 0);
  mlx_io_reader_free(r); /* the array was evaluated: it outlives the reader */
  CHECK(equal(y, x));
  /* damaged: a clear error */
  m.data[0] = 'X';
  r = mlx_io_reader_new(&m, VT);
  CHECK_FAILS(mlx_load_reader(&y, r, S), "Invalid header");
  mlx_io_reader_free(r);
  CHECK_FAILS(mlx_load(&y, path("missing.npy"), S), "Failed to open");
  free(m.data);
  mlx_array_free(x), mlx_array_free(t), mlx_array_free(y);
}

static void test_npy_lazy_truncated(void) {
  mlx_array x = iota(64, 8, MLX_INT32), y = mlx_array_new();
  CHECK(mlx_save(path("t.npy"), x) == 0);
  CHECK(truncate(path("t.npy"), 128 + 100) == 0);
  CHECK(mlx_load(&y, path("t.npy"), S) == 0); /* header only: lazy */
  CHECK_FAILS(mlx_array_eval(y), "Unable to read");
  mlx_array_free(x), mlx_array_free(y);
}

static void test_safetensors(void) {
  mlx_map_string_to_array arrs = mlx_map_string_to_array_new();
  mlx_map_string_to_string meta = mlx_map_string_to_string_new();
  mlx_array a = iota(6, 2, MLX_INT16), b = iota(4, 1, MLX_BFLOAT16);
  CHECK(mlx_map_string_to_array_insert(arrs, "a", a) == 0);
  CHECK(mlx_map_string_to_array_insert(arrs, "b", b) == 0);
  CHECK(mlx_map_string_to_string_insert(meta, "format", "mlx") == 0);
  CHECK(mlx_save_safetensors(path("s"), arrs, meta) == 0);
  mlx_map_string_to_array got = mlx_map_string_to_array_new();
  mlx_map_string_to_string gm = mlx_map_string_to_string_new();
  CHECK(mlx_load_safetensors(&got, &gm, path("s.safetensors"), S) == 0);
  mlx_array v = mlx_array_new();
  const char *sv = NULL;
  CHECK(mlx_map_string_to_array_get(&v, got, "a") == 0 && equal(v, a));
  CHECK(mlx_map_string_to_array_get(&v, got, "b") == 0 && equal(v, b));
  CHECK(mlx_map_string_to_string_get(&sv, gm, "format") == 0 && sv && !strcmp(sv, "mlx"));
  /* writer and reader */
  mem m = {calloc(1, 4096), 0, 0, 4096, false, 0};
  mlx_io_writer w = mlx_io_writer_new(&m, VT);
  CHECK(mlx_save_safetensors_writer(w, arrs, meta) == 0);
  mlx_io_writer_free(w);
  mlx_io_reader r = mlx_io_reader_new(&m, VT);
  mlx_map_string_to_array got2 = mlx_map_string_to_array_new();
  CHECK(mlx_load_safetensors_reader(&got2, &gm, r, S) == 0);
  mlx_io_reader_free(r);
  CHECK(mlx_map_string_to_array_get(&v, got2, "a") == 0 && equal(v, a));
  /* a writer too small reports, and a header length past the end fails */
  mem small = {calloc(1, 16), 0, 0, 16, false, 0};
  w = mlx_io_writer_new(&small, VT);
  CHECK_FAILS(mlx_save_safetensors_writer(w, arrs, meta), "Failed to write");
  mlx_io_writer_free(w);
  r = mlx_io_reader_new(&small, VT);
  CHECK_FAILS(mlx_load_safetensors_reader(&got2, &gm, r, S), "[load_safetensors]");
  mlx_io_reader_free(r);
  free(small.data);
  free(m.data);
  mlx_map_string_to_array_free(arrs), mlx_map_string_to_array_free(got);
  mlx_map_string_to_array_free(got2);
  mlx_map_string_to_string_free(meta), mlx_map_string_to_string_free(gm);
  mlx_array_free(a), mlx_array_free(b), mlx_array_free(v);
}

static void test_gguf(void) {
  mlx_io_gguf g = mlx_io_gguf_new();
  mlx_array w = iota(6, 2, MLX_FLOAT16), m = mlx_array_new_int(5), v = mlx_array_new();
  CHECK(mlx_io_gguf_set_array(g, "w", w) == 0);
  CHECK(mlx_io_gguf_set_metadata_string(g, "name", "tiny") == 0);
  CHECK(mlx_io_gguf_set_metadata_string(g, "name", "ignored") == 0); /* insert keeps */
  CHECK(mlx_io_gguf_set_metadata_array(g, "n", m) == 0);
  mlx_vector_string vs = mlx_vector_string_new_value("x");
  CHECK(mlx_vector_string_append_value(vs, "yz") == 0);
  CHECK(mlx_io_gguf_set_metadata_vector_string(g, "toks", vs) == 0);
  CHECK(mlx_save_gguf(path("g"), g) == 0);
  mlx_io_gguf_free(g);

  mlx_io_gguf h = mlx_io_gguf_new();
  CHECK(mlx_load_gguf(&h, path("g.gguf"), S) == 0);
  mlx_vector_string keys = mlx_vector_string_new();
  CHECK(mlx_io_gguf_get_keys(&keys, h) == 0 && mlx_vector_string_size(keys) == 1);
  CHECK(mlx_io_gguf_get_array(&v, h, "w") == 0 && equal(v, w));
  CHECK(mlx_io_gguf_get_array(&v, h, "nope") == 2);
  mlx_string s = mlx_string_new();
  CHECK(mlx_io_gguf_get_metadata_string(&s, h, "name") == 0 && !strcmp(mlx_string_data(s), "tiny"));
  CHECK(mlx_io_gguf_get_metadata_string(&s, h, "n") == 3);
  CHECK(mlx_io_gguf_get_metadata_array(&v, h, "n") == 0 && equal(v, m));
  mlx_vector_string got = mlx_vector_string_new();
  char *item = NULL;
  CHECK(mlx_io_gguf_get_metadata_vector_string(&got, h, "toks") == 0);
  CHECK(mlx_vector_string_size(got) == 2 && mlx_vector_string_get(&item, got, 1) == 0 &&
        !strcmp(item, "yz"));
  bool flag = true;
  CHECK(mlx_io_gguf_has_metadata_array(&flag, h, "name") == 0 && !flag);
  CHECK(mlx_io_gguf_has_metadata_string(&flag, h, "name") == 0 && flag);
  CHECK(mlx_io_gguf_has_metadata_vector_string(&flag, h, "absent") == 2 && !flag);
  mlx_io_gguf_free(h);

  /* metadata MLX refuses, and damaged files */
  mlx_io_gguf bad = mlx_io_gguf_new();
  mlx_array f16 = mlx_array_new();
  CHECK(mlx_astype(&f16, m, MLX_FLOAT16, S) == 0);
  CHECK(mlx_io_gguf_set_array(bad, "w", w) == 0);
  CHECK(mlx_io_gguf_set_metadata_array(bad, "h", f16) == 0);
  CHECK_FAILS(mlx_save_gguf(path("bad.gguf"), bad), "not support for metadata");
  mlx_io_gguf_free(bad);
  FILE *f = fopen(path("junk.gguf"), "wb");
  fwrite("GGUF\3\0\0\0\xff\xff\xff\xff\xff\xff\xff\x7f\0\0\0\0\0\0\0\0", 1, 24, f);
  fclose(f);
  mlx_io_gguf j = mlx_io_gguf_new();
  CHECK_FAILS(mlx_load_gguf(&j, path("junk.gguf"), S), "[load_gguf]");
  mlx_io_gguf_free(j);
  CHECK(mlx_io_gguf_free((mlx_io_gguf){0}) == 0);
  mlx_vector_string_free(vs), mlx_vector_string_free(keys), mlx_vector_string_free(got);
  mlx_string_free(s);
  mlx_array_free(w), mlx_array_free(m), mlx_array_free(v), mlx_array_free(f16);
}

/* Map iterators give mlx-c's order, that of a libstdc++ std::unordered_map
 * with the same insertions.  The expected order was printed by a C++
 * program inserting "k0".."k29" into std::unordered_map<std::string, int>
 * (g++ 12, Debian 12); 30 keys cross the rehashes at 14 and 30. */
static void test_map_order(void) {
  static const int expect[30] = {21, 10, 29, 8,  17, 27, 20, 7, 3,  22, 6, 1,  9,  12, 14,
                                 11, 2,  0,  15, 16, 18, 19, 4, 26, 24, 5, 13, 23, 25, 28};
  mlx_map_string_to_array m = mlx_map_string_to_array_new();
  mlx_map_string_to_string ms = mlx_map_string_to_string_new();
  mlx_array one = mlx_array_new_int(1), v = mlx_array_new();
  char key[8];
  for (int i = 0; i < 30; i++) {
    snprintf(key, sizeof key, "k%d", i);
    CHECK(mlx_map_string_to_array_insert(m, key, one) == 0);
    CHECK(mlx_map_string_to_string_insert(ms, key, key) == 0);
  }
  CHECK(mlx_map_string_to_array_insert(m, "k3", one) == 0); /* a replacement moves nothing */
  mlx_map_string_to_array_iterator it = mlx_map_string_to_array_iterator_new(m);
  mlx_map_string_to_string_iterator its = mlx_map_string_to_string_iterator_new(ms);
  const char *k = NULL, *sv = NULL;
  int n = 0, same = 0;
  while (mlx_map_string_to_array_iterator_next(&k, &v, it) == 0 && n < 30) {
    snprintf(key, sizeof key, "k%d", expect[n]);
    same += !strcmp(k, key);
    if (mlx_map_string_to_string_iterator_next(&k, &sv, its) == 0) same += !strcmp(sv, key);
    n++;
  }
  CHECK(n == 30 && same == 60);
  CHECK(mlx_map_string_to_array_iterator_next(&k, &v, it) == 2);
  mlx_map_string_to_array_iterator_free(it);
  mlx_map_string_to_string_iterator_free(its);
  mlx_map_string_to_array_free(m), mlx_map_string_to_string_free(ms);
  mlx_array_free(one), mlx_array_free(v);
}

int main(void) {
  t_init();
  S = mlx_default_cpu_stream_new();
  snprintf(dir, sizeof dir, "/tmp/cmlx_capi_io_XXXXXX");
  if (!mkdtemp(dir)) return 1;
  test_npy();
  test_npy_lazy_truncated();
  test_safetensors();
  test_gguf();
  test_map_order();
  mlx_stream_free(S);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) fprintf(stderr, "could not remove %s\n", dir);
  return t_finish();
}
