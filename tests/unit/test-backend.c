/* The backend setting and the registry of sandbox/backend.h: the name is
 * parsed once, a binary has only the backends its main registers, and a
 * backend's table is complete.  */
#include <config.h>

#include <string.h>

#include "common/config.h"
#include "common/error.h"
#include "sandbox/backend.h"
#include "tap.h"

static void
test_parse (void)
{
  enum sr_backend_kind k = SR_BACKEND_KIND_MAX;
  struct sr_config cfg = { 0 };
  sr_error_t err = NULL;

  ok (sr_backend_kind_parse ("native", &k, &err) == 0 && k == SR_BACKEND_NATIVE, "native parses");
  ok (sr_backend_kind_parse ("docker", &k, &err) == 0 && k == SR_BACKEND_DOCKER, "docker parses");
  ok (sr_backend_kind_parse ("Docker", &k, &err) < 0 && k == SR_BACKEND_DOCKER,
      "names are exact, and a refusal leaves the kind alone");
  ok (err && strstr (err->msg, "neither native nor docker"), "the refusal names the choices");
  sr_error_free (&err);
  is_str (sr_backend_kind_name (SR_BACKEND_DOCKER), "docker", "the name of a kind");

  ok (cfg.backend_kind == SR_BACKEND_NATIVE, "a zeroed configuration is native");
  ok (sr_config_set (&cfg, "backend", "docker", SR_ORIGIN_FLAG, "--backend", &err) == 0
          && cfg.backend_kind == SR_BACKEND_DOCKER,
      "the setting goes through the same parser");
  ok (sr_config_set (&cfg, "backend", "lxc", SR_ORIGIN_FLAG, "--backend", &err) < 0
          && cfg.backend_kind == SR_BACKEND_DOCKER,
      "a bad value is refused and changes nothing");
  sr_error_free (&err);
  sr_config_done (&cfg);
}

/* Every op a caller may reach is there (the warm ones with keeps_warm).  */
static bool
complete (const struct sr_backend *be)
{
  return be->open && be->close && be->code_dir && be->run_begin && be->run_stage && be->run_end
         && be->create && be->destroy && be->alive && be->pid && be->image && be->env
         && be->exec
         && (!be->keeps_warm
             || (be->warm_new && be->warm_current && be->warm_stage && be->warm_free));
}

static void
test_registry (void)
{
  struct sr_config cfg = { .backend_kind = SR_BACKEND_NATIVE };
  sr_error_t err = NULL;

  ok (sr_backend_find (SR_BACKEND_NATIVE) == NULL, "nothing is registered before main does");
  ok (sr_backend_get (&cfg, &err) == NULL && err, "so the native backend is missing too");
  sr_error_free (&err);

  sr_backend_register (&sr_native_backend);
  ok (sr_backend_find (SR_BACKEND_NATIVE) == &sr_native_backend, "native, once registered");
  ok (sr_backend_get (&cfg, &err) == &sr_native_backend && err == NULL,
      "is what a native configuration gets");
  ok (complete (&sr_native_backend), "the native table is complete");
  ok (sr_native_backend.keeps_warm && !sr_native_backend.shell_one_stream,
      "native keeps warm containers, and gives a shell two streams");

  cfg.backend_kind = SR_BACKEND_DOCKER;
  ok (sr_backend_get (&cfg, &err) == NULL, "docker is not in this binary");
  is_str (err ? err->msg : NULL,
          "backend docker: this binary has no Docker client; run it through "
          "sandbox-runner-full",
          "the error says which binary has it");
  sr_error_free (&err);

  /* Linked here, not registered: its table alone.  */
  ok (complete (&sr_docker_backend) && sr_docker_backend.kind == SR_BACKEND_DOCKER,
      "the Docker table is complete");
  ok (!sr_docker_backend.keeps_warm && sr_docker_backend.shell_one_stream,
      "Docker keeps nothing warm, and gives a shell one stream");
}

int
main (void)
{
  test_parse ();
  test_registry ();
  return done_testing ();
}
