/* Reference parsing (image/reference.c), the WWW-Authenticate parser of
 * image/registry-auth.c and the loopback test of image/registry.c.  They
 * are static, so the files are included whole; libsandbox.a's copies of
 * their objects are then never pulled in, as this object defines all they
 * export.  */
#include "image/reference.c"
#include "image/registry-auth.c"
#include "image/registry.c"

#include "tap.h"

static void
ref_ok (const char *s, const char *host, const char *repo, const char *tag, const char *digest,
        const char *name)
{
  struct sr_image_ref r = { 0 };
  sr_error_t err = NULL;
  _cleanup_free_ char *n = NULL;

  if (!ok (sr_image_ref_parse (s, &r, &err) == 0, "'%s' parses", s))
    {
      printf ("#   %s\n", err->msg);
      sr_error_free (&err);
      return;
    }
  is_str (r.host, host, "  host");
  is_str (r.repository, repo, "  repository");
  is_str (r.tag, tag, "  tag");
  is_str (r.digest, digest, "  digest");
  n = sr_image_ref_name (&r);
  is_str (n, name, "  name");
  sr_image_ref_done (&r);
}

static void
ref_bad (const char *s, const char *want)
{
  struct sr_image_ref r = { 0 };
  sr_error_t err = NULL;

  if (ok (sr_image_ref_parse (s, &r, &err) < 0, "'%s' is refused", s))
    {
      if (!ok (strstr (err->msg, want) != NULL, "  saying '%s'", want))
        printf ("#   got: %s\n", err->msg);
      sr_error_free (&err);
    }
  else
    sr_image_ref_done (&r);
}

static void
challenge_ok (const char *h, const char *scheme, const char *realm, const char *service,
              const char *scope)
{
  struct challenge c = { 0 };

  if (!ok (parse_www_authenticate (h, &c) == 0, "challenge [%s] parses", h))
    return;
  is_str (c.scheme, scheme, "  scheme");
  is_str (c.realm, realm, "  realm");
  is_str (c.service, service, "  service");
  is_str (c.scope, scope, "  scope");
  challenge_done (&c);
}

#define D "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

int
main (void)
{
  ref_ok ("busybox", DOCKER_HUB_HOST, "library/busybox", "latest", NULL, "busybox:latest");
  ref_ok ("python:3.12", DOCKER_HUB_HOST, "library/python", "3.12", NULL, "python:3.12");
  ref_ok ("user/app:v1", DOCKER_HUB_HOST, "user/app", "v1", NULL, "user/app:v1");
  ref_ok ("docker.io/library/python:3.12-slim", DOCKER_HUB_HOST, "library/python", "3.12-slim",
          NULL, "python:3.12-slim");
  ref_ok ("docker.io/python", DOCKER_HUB_HOST, "library/python", "latest", NULL,
          "python:latest");
  ref_ok ("127.0.0.1:5000/test/busybox:1", "127.0.0.1:5000", "test/busybox", "1", NULL,
          "127.0.0.1:5000/test/busybox:1");
  ref_ok ("localhost/a", "localhost", "a", "latest", NULL, "localhost/a:latest");
  ref_ok ("localhost:5000/a/b/c", "localhost:5000", "a/b/c", "latest", NULL,
          "localhost:5000/a/b/c:latest");
  ref_ok ("ghcr.io/o/r@" D, "ghcr.io", "o/r", NULL, D, "ghcr.io/o/r@" D);
  ref_ok ("ghcr.io/o/r:t@" D, "ghcr.io", "o/r", "t", D, "ghcr.io/o/r:t");
  ref_ok ("alpine@" D, DOCKER_HUB_HOST, "library/alpine", NULL, D, "alpine@" D);
  ref_ok ("my-reg.example:443/a_b/c.d-e:T_1.x", "my-reg.example:443", "a_b/c.d-e", "T_1.x",
          NULL, "my-reg.example:443/a_b/c.d-e:T_1.x");

  ref_bad ("", "empty");
  ref_bad ("Busybox", "invalid repository");
  ref_bad ("a//b", "invalid repository");
  ref_bad ("a/", "invalid repository");
  ref_bad ("-a", "invalid repository");
  ref_bad ("a-", "invalid repository");
  ref_bad ("a:", "invalid tag");
  ref_bad ("a:.x", "invalid tag");
  ref_bad ("a:b c", "invalid tag");
  ref_bad ("a@sha256:abc", "not a sha256 digest");
  ref_bad ("a@md5:0123", "not a sha256 digest");
  ref_bad ("ex ample.com/a", "invalid registry host");

  challenge_ok ("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
                "scope=\"repository:library/busybox:pull\"",
                "bearer", "https://auth.docker.io/token", "registry.docker.io",
                "repository:library/busybox:pull");
  challenge_ok ("Basic realm=\"Registry Realm\"", "basic", "Registry Realm", NULL, NULL);
  challenge_ok ("bearer  realm = \"http://x/t?a=1\" , scope=\"repository:a/b:pull,push\"",
                "bearer", "http://x/t?a=1", NULL, "repository:a/b:pull,push");
  challenge_ok ("Bearer realm=\"a\\\"b\\\\c\",service=svc", "bearer", "a\"b\\c", "svc", NULL);
  challenge_ok ("Basic realm=\"r\", Bearer realm=\"t\",service=\"s\"", "bearer", "t", "s", NULL);
  challenge_ok ("Bearer realm=\"t\", Basic realm=\"r\"", "bearer", "t", NULL, NULL);
  challenge_ok ("Negotiate abc==, Basic realm=\"r\"", "basic", "r", NULL, NULL);
  challenge_ok ("Bearer realm=\"t\",error=\"insufficient_scope\",scope=\"s\"", "bearer", "t",
                NULL, "s");
  challenge_ok ("Bearer realm=\"unterminated", "bearer", "unterminated", NULL, NULL);
  {
    struct challenge c = { 0 };

    ok (parse_www_authenticate ("Negotiate", &c) < 0, "a scheme we do not speak is refused");
    ok (parse_www_authenticate ("", &c) < 0, "an empty challenge is refused");
    ok (parse_www_authenticate (",,, =\"x\"", &c) < 0, "junk is refused");
  }

  {
    _cleanup_free_ char *a = sr_base64_encode ("alice:s3cret", 12), *b = sr_base64_encode ("a", 1),
                        *c = sr_base64_encode ("ab", 2);

    is_str (a, "YWxpY2U6czNjcmV0", "base64 of a multiple of three");
    is_str (b, "YQ==", "base64 with two pads");
    is_str (c, "YWI=", "base64 with one pad");
  }
  {
    _cleanup_free_ char *o1 = sr_registry_url_origin_ ("https://Reg.Example/v2/x");
    _cleanup_free_ char *o2 = sr_registry_url_origin_ ("https://reg.example:443/other");
    _cleanup_free_ char *o3 = sr_registry_url_origin_ ("http://reg.example/v2/x");

    is_str (o1, "https://reg.example:443", "the origin of a URL has the default port");
    is_str (o2, o1, "the same origin with the port spelt out");
    ok (strcmp (o1, o3) != 0, "http is another origin than https");
  }
  is_int (loopback_host ("127.0.0.1:5000"), 1, "127.0.0.1 is loopback");
  is_int (loopback_host ("localhost"), 1, "localhost is loopback");
  is_int (loopback_host ("localhost.evil.com"), 0, "localhost.evil.com is not");
  is_int (loopback_host ("127.evil.com:80"), 0, "127.evil.com is not");
  is_int (loopback_host ("[::1]:5000"), 1, "[::1]:5000 is loopback");
  is_int (loopback_host ("[::1]x"), 0, "[::1]x is not");
  is_int (loopback_host ("registry-1.docker.io"), 0, "Docker Hub is not");
  return done_testing ();
}
