/* Pure logic of the image code: entry-name sanitising, the expansion
 * budget, digests, and the OCI document parsers with their platform
 * choice.  */
#include <config.h>

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include "common/util.h"
#include "image/digest.h"
#include "image/layer.h"
#include "image/oci.h"
#include "tap.h"

static void
clean_ok (const char *name, const char *want, bool want_absolute)
{
  char out[PATH_MAX];
  bool absolute = !want_absolute;

  ok (sr_layer_clean_path (name, out, sizeof out, &absolute) == 0 && strcmp (out, want) == 0
          && absolute == want_absolute,
      "entry '%s' is '%s'%s", name, want, want_absolute ? " (was absolute)" : "");
}

static void
clean_bad (const char *name)
{
  char out[PATH_MAX];
  bool absolute;

  ok (sr_layer_clean_path (name, out, sizeof out, &absolute) < 0, "entry '%s' is refused", name);
}

#define DIGEST_A "sha256:" "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define DIGEST_B "sha256:" "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"

int
main (void)
{
  char d[SR_DIGEST_LEN + 1];
  sr_error_t err = NULL;

  clean_ok ("./etc/passwd", "etc/passwd", false);
  clean_ok ("etc//passwd/", "etc/passwd", false);
  clean_ok ("/usr/./bin/sh", "usr/bin/sh", true);
  clean_ok ("./", "", false);
  clean_ok ("a/..b/c..", "a/..b/c..", false);
  clean_bad ("../etc/passwd");
  clean_bad ("usr/../../etc");
  clean_bad ("/..");
  clean_bad ("a/b/..");
  {
    char longname[PATH_MAX + 16];

    memset (longname, 'a', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    {
      char out[PATH_MAX];
      bool absolute;

      ok (sr_layer_clean_path (longname, out, sizeof out, &absolute) < 0,
          "an entry name longer than PATH_MAX is refused");
    }
  }

  {
    uint64_t used = 0;

    ok (sr_layer_budget_take (&used, 10, 4) == 0 && sr_layer_budget_take (&used, 10, 6) == 0
            && used == 10,
        "a budget takes up to its cap exactly");
    ok (sr_layer_budget_take (&used, 10, 1) < 0 && used == 10,
        "one more past the cap is refused, the count unchanged");
    used = 3;
    ok (sr_layer_budget_take (&used, 10, UINT64_MAX) < 0 && used == 3,
        "a block larger than the cap cannot wrap the count round");
    used = UINT64_MAX - 1;
    ok (sr_layer_budget_take (&used, UINT64_MAX, 2) < 0 && used == UINT64_MAX - 1,
        "nor can a count near the top");
    used = 5;
    ok (sr_layer_budget_take (&used, 0, 1u << 30) == 0 && used == 5 + (1u << 30),
        "a cap of 0 is no cap, and still counts");
  }

  ok (sr_digest_valid (DIGEST_A), "a sha256 digest is valid");
  ok (!sr_digest_valid ("sha256:0123"), "a short digest is not");
  ok (!sr_digest_valid ("sha512:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
      "another algorithm is not");
  ok (!sr_digest_valid ("sha256:0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789abcdef"),
      "upper-case hex is not");
  ok (sr_digest_hex ("sha256:../../etc", &err) == NULL && strstr (err->msg, "not a sha256 digest"),
      "a digest with a path in it is refused by name");
  sr_error_free (&err);
  sr_sha256_buf ("abc", 3, d);
  is_str (d, "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
          "sha256 of 'abc'");
  sr_sha256_buf ("", 0, d);
  is_str (d, "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
          "sha256 of nothing");
  {
    const char *m = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";

    sr_sha256_buf (m, strlen (m), d);
    is_str (d, "sha256:248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
            "sha256 of 56 bytes, padding into a second block");
  }
  {
    struct sr_sha256 *h = sr_sha256_new ();
    char chunk[997];

    memset (chunk, 'a', sizeof chunk);
    for (size_t left = 1000000; left > 0;)
      {
        size_t n = left < sizeof chunk ? left : sizeof chunk;

        sr_sha256_update (h, chunk, n);
        left -= n;
      }
    sr_sha256_finish (h, d);
    is_str (d, "sha256:cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
            "sha256 of a million 'a' fed in odd chunks");
  }
  {
    _cleanup_free_ char *b0 = sr_base64_encode ("", 0), *b1 = sr_base64_encode ("f", 1),
                        *b2 = sr_base64_encode ("fo", 2), *b3 = sr_base64_encode ("foobar", 6),
                        *b4 = sr_base64_encode ("\xff\xfe ok", 5);

    is_str (b0, "", "base64 of nothing");
    is_str (b1, "Zg==", "base64 of one byte");
    is_str (b2, "Zm8=", "base64 of two bytes");
    is_str (b3, "Zm9vYmFy", "base64 of six bytes");
    is_str (b4, "//4gb2s=", "base64 of bytes that are not UTF-8");
  }
  {
    const char *cases[][2] = { { "Zm9vYmFy", "foobar" }, { "Zg==", "f" }, { "Zm8", "fo" },
                               { "Zm9v\nYmFy\n", "foobar" }, { "", "" } };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
      {
        _cleanup_free_ char *out = NULL;
        size_t n = 0;
        int r = sr_base64_decode (cases[i][0], strlen (cases[i][0]), &out, &n);

        ok (r == 0 && n == strlen (cases[i][1]) && memcmp (out, cases[i][1], n) == 0,
            "base64 decodes '%s'", cases[i][0]);
      }
    {
      const char *bad[] = { "Zm9v!mFy", "Z", "Zg=a", "Zg===", "Zm9=v" };

      for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        {
          _cleanup_free_ char *out = NULL;
          size_t n;

          ok (sr_base64_decode (bad[i], strlen (bad[i]), &out, &n) < 0 && errno == EINVAL,
              "base64 refuses '%s'", bad[i]);
        }
    }
  }

  {
    const char *idx = "{\"schemaVersion\":2,\"manifests\":["
                      "{\"mediaType\":\"" SR_MT_OCI_MANIFEST "\",\"digest\":\"" DIGEST_A "\","
                      "\"size\":10,\"platform\":{\"os\":\"linux\",\"architecture\":\"s390x\"}},"
                      "{\"mediaType\":\"" SR_MT_OCI_MANIFEST "\",\"digest\":\"" DIGEST_B "\","
                      "\"size\":20,\"platform\":{\"os\":\"linux\",\"architecture\":\"amd64\"}}]}";
    struct sr_oci_index index = { 0 };
    const struct sr_descriptor *sel;

    ok (sr_oci_sniff (idx, strlen (idx)) == SR_OCI_INDEX, "an index is sniffed as one");
    ok (sr_oci_parse_index (idx, strlen (idx), &index, &err) == 0 && index.n_manifests == 2,
        "an index with two platforms parses");
    sel = sr_oci_index_select (&index, &err);
    if (strcmp (sr_oci_host_arch (), "amd64") == 0)
      ok (sel && strcmp (sel->digest, DIGEST_B) == 0 && sel->size == 20,
          "the host's platform is chosen, whatever the order");
    else
      ok (sel == NULL, "no entry for this host's architecture");
    sr_error_free (&err);
    sr_oci_index_done (&index);
  }
  {
    const char *idx = "{\"schemaVersion\":2,\"manifests\":[{\"digest\":\"" DIGEST_A "\","
                      "\"size\":1,\"platform\":{\"os\":\"windows\",\"architecture\":\"amd64\"}}]}";
    struct sr_oci_index index = { 0 };

    ok (sr_oci_parse_index (idx, strlen (idx), &index, &err) == 0
            && sr_oci_index_select (&index, &err) == NULL && strstr (err->msg, "windows/amd64"),
        "an index without linux says which platforms it offers");
    sr_error_free (&err);
    sr_oci_index_done (&index);
  }
  {
    const char *m = "{\"schemaVersion\":2,\"config\":{\"digest\":\"" DIGEST_A "\",\"size\":5},"
                    "\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+gzip\","
                    "\"digest\":\"" DIGEST_B "\",\"size\":7}]}";
    struct sr_oci_manifest man = { 0 };

    ok (sr_oci_sniff (m, strlen (m)) == SR_OCI_MANIFEST, "a manifest without mediaType is sniffed");
    ok (sr_oci_parse_manifest (m, strlen (m), &man, &err) == 0 && man.n_layers == 1
            && man.layers[0].size == 7,
        "a manifest parses");
    sr_oci_manifest_done (&man);
  }
  {
    const char *m = "{\"schemaVersion\":2,\"config\":{\"digest\":\"" DIGEST_A "\",\"size\":5},"
                    "\"layers\":[{\"mediaType\":\"application/vnd.oci.image.layer.v1.tar+encrypted\","
                    "\"digest\":\"" DIGEST_B "\",\"size\":7}]}";
    struct sr_oci_manifest man = { 0 };

    ok (sr_oci_parse_manifest (m, strlen (m), &man, &err) < 0
            && strstr (err->msg, "layers[0]: media type application/vnd.oci.image.layer.v1.tar+encrypted"),
        "a layer type we cannot apply is refused by name");
    sr_error_free (&err);
  }
  {
    const char *m = "{\"schemaVersion\":1,\"name\":\"x\"}";
    struct sr_oci_manifest man = { 0 };

    ok (sr_oci_parse_manifest (m, strlen (m), &man, &err) < 0 && strstr (err->msg, "schema 1"),
        "a schema 1 manifest is refused");
    sr_error_free (&err);
  }
  {
    const char *m = "{\"schemaVersion\":2,\"config\":{\"digest\":\"sha256:zz\",\"size\":5},\"layers\":[]}";
    struct sr_oci_manifest man = { 0 };

    ok (sr_oci_parse_manifest (m, strlen (m), &man, &err) < 0
            && strstr (err->msg, "config: digest 'sha256:zz'"),
        "a malformed digest is refused, naming the field");
    sr_error_free (&err);
  }
  {
    const char *c = "{\"os\":\"linux\",\"config\":{\"Env\":[\"A=1\",\"B=2\"],\"Cmd\":[\"sh\"],"
                    "\"WorkingDir\":\"/w\"},\"rootfs\":{\"diff_ids\":[\"" DIGEST_A "\"]}}";
    struct sr_oci_config cfg = { 0 };

    ok (sr_oci_parse_config (c, strlen (c), &cfg, &err) == 0 && sr_strv_length (cfg.env) == 2
            && strcmp (cfg.working_dir, "/w") == 0 && cfg.n_diff_ids == 1,
        "a config parses with Env, Cmd, WorkingDir");
    ok (cfg.version == NULL, "a config without the version label has no version");
    sr_oci_config_done (&cfg);
  }
  {
    const char *c = "{\"config\":{\"Labels\":{\"org.opencontainers.image.version\":\"Python 3.13.5\","
                    "\"other\":\"x\"}}}";
    struct sr_oci_config cfg = { 0 };

    ok (sr_oci_parse_config (c, strlen (c), &cfg, &err) == 0 && cfg.version
            && strcmp (cfg.version, "Python 3.13.5") == 0,
        "the org.opencontainers.image.version label is the image's version");
    sr_oci_config_done (&cfg);
  }
  {
    const char *c = "{\"config\":{\"Labels\":{\"org.opencontainers.image.version\":3}}}";
    struct sr_oci_config cfg = { 0 };

    ok (sr_oci_parse_config (c, strlen (c), &cfg, &err) < 0 && strstr (err->msg, "version"),
        "a version label that is not a string is refused, naming it");
    sr_error_free (&err);
  }
  {
    const char *c = "{\"config\":{\"Env\":\"A=1\"}}";
    struct sr_oci_config cfg = { 0 };

    ok (sr_oci_parse_config (c, strlen (c), &cfg, &err) < 0 && strstr (err->msg, "Env is not an array"),
        "a config with a wrong type is refused, naming the field");
    sr_error_free (&err);
  }
  ok (sr_oci_parse_index ("{", 1, &(struct sr_oci_index) { 0 }, &err) < 0
          && strstr (err->msg, "not valid JSON"),
      "broken JSON is refused");
  sr_error_free (&err);
  return done_testing ();
}
