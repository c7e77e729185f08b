/* SHA-256 (core/sha256.h) against the FIPS 180-4 / NIST example vectors,
 * and streamed input split at every offset giving the one-shot digest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sha256.h"

#include "check.h"

static void hex(const unsigned char d[CM_SHA256_BYTES], char out[65]) {
  for (int i = 0; i < CM_SHA256_BYTES; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static int digest_is(const void *msg, size_t n, const char *want) {
  unsigned char d[CM_SHA256_BYTES];
  char h[65];
  cm_sha256_of(msg, n, d);
  hex(d, h);
  return strcmp(h, want) == 0;
}

int main(void) {
  CHECK(digest_is("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
  CHECK(digest_is("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"));
  const char *two = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"; /* 448 bits */
  CHECK(digest_is(two, strlen(two),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"));
  /* a million 'a's, fed in uneven pieces */
  cm_sha256 s;
  cm_sha256_init(&s);
  char a[1000];
  memset(a, 'a', sizeof a);
  for (size_t left = 1000000, k = 1; left; k = k % 997 + 1) {
    size_t n = k < left ? k : left;
    cm_sha256_update(&s, a, n);
    left -= n;
  }
  unsigned char d[CM_SHA256_BYTES];
  char h[65];
  cm_sha256_final(&s, d);
  hex(d, h);
  CHECK(!strcmp(h, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"));
  /* every split of messages around the padding boundaries (55, 56, 64 bytes) */
  unsigned char msg[130];
  for (size_t i = 0; i < sizeof msg; i++) msg[i] = (unsigned char)(i * 37 + 11);
  int same = 1;
  for (size_t n = 50; n <= sizeof msg; n++) {
    unsigned char one[CM_SHA256_BYTES], two_d[CM_SHA256_BYTES];
    cm_sha256_of(msg, n, one);
    for (size_t cut = 0; cut <= n; cut++) {
      cm_sha256_init(&s);
      cm_sha256_update(&s, msg, cut);
      cm_sha256_update(&s, msg + cut, n - cut);
      cm_sha256_final(&s, two_d);
      same &= !memcmp(one, two_d, sizeof one);
    }
  }
  CHECK(same);
  return check_report("test_sha256");
}
