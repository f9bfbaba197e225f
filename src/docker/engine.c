/* The connection to the Docker daemon: its endpoint, the API version
 * spoken, the runner id our containers are labelled with; images; and the
 * containers that dead runners left behind.  */
#include <config.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine-internal.h"

/* The newest API version whose fields we use; a newer daemon is spoken to
 * at this version, an older one at its own.  Init and the fields below
 * need at least SR_DOCKER_MIN_API.  */
#define MAX_API_MAJOR 1
#define MAX_API_MINOR 43
#define MIN_API_MINOR 25

static int
parse_endpoint (struct sr_docker *d, const char *host, sr_error_t *err)
{
  if (strncmp (host, "unix://", 7) == 0)
    {
      if (host[7] != '/')
        return sr_error_set (err, EINVAL, "DOCKER_HOST %s: the socket path must be absolute",
                             host);
      d->socket_path = sr_xstrdup (host + 7);
      d->base_url = sr_xstrdup ("http://localhost");
      return 0;
    }
  if (strncmp (host, "tcp://", 6) == 0 || strncmp (host, "http://", 7) == 0)
    {
      const char *hp = strchr (host, '/') + 2;
      size_t n = strcspn (hp, "/");

      if (n == 0)
        return sr_error_set (err, EINVAL, "DOCKER_HOST %s: no host", host);
      if (getenv ("DOCKER_TLS_VERIFY") && *getenv ("DOCKER_TLS_VERIFY"))
        return sr_error_set (err, ENOTSUP,
                             "DOCKER_HOST %s with DOCKER_TLS_VERIFY: TLS to the daemon is not "
                             "supported (use its unix socket)",
                             host);
      d->base_url = sr_xasprintf ("http://%.*s", (int) n, hp);
      return 0;
    }
  return sr_error_set (err, ENOTSUP,
                       "DOCKER_HOST %s: only unix:// and tcp:// endpoints are supported", host);
}

/* Picks min(daemon, ours); refuses a daemon older than MIN_API_MINOR.  */
static int
choose_api (struct sr_docker *d, const char *daemon_api, sr_error_t *err)
{
  unsigned major = 0, minor = 0;

  if (daemon_api[0] == '\0' || sscanf (daemon_api, "%u.%u", &major, &minor) != 2)
    {
      major = 1;
      minor = MIN_API_MINOR;
    }
  if (major > MAX_API_MAJOR || (major == MAX_API_MAJOR && minor > MAX_API_MINOR))
    {
      major = MAX_API_MAJOR;
      minor = MAX_API_MINOR;
    }
  if (major < 1 || (major == 1 && minor < MIN_API_MINOR))
    return sr_error_set (err, ENOTSUP,
                         "the Docker daemon at %s speaks API %s; at least 1.%d is needed",
                         d->endpoint, daemon_api, MIN_API_MINOR);
  snprintf (d->api, sizeof d->api, "%u.%u", major, minor);
  return 0;
}

/* "HOSTNAME:PID:STARTTIME" for pid, or NULL when it is gone.  */
static char *
runner_id (const char *hostname, pid_t pid)
{
  uint64_t start = sr_process_start_time (pid);

  if (start == 0)
    return NULL;
  return sr_xasprintf ("%s:%ld:%llu", hostname, (long) pid, (unsigned long long) start);
}

int
sr_docker_open (const char *host, struct sr_docker **ret, sr_error_t *err)
{
  struct sr_docker *d;
  char api[16] = "";

  if (host == NULL || *host == '\0')
    host = getenv ("DOCKER_HOST");
  if (host == NULL || *host == '\0')
    host = SR_DOCKER_DEFAULT_HOST;
  if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
    return sr_error_set (err, ENOMEM, "curl_global_init");
  d = sr_xcalloc (1, sizeof *d);
  d->endpoint = sr_xstrdup (host);
  if (parse_endpoint (d, host, err) < 0)
    goto fail;
  if (gethostname (d->hostname, sizeof d->hostname - 1) < 0)
    snprintf (d->hostname, sizeof d->hostname, "localhost");
  d->runner = runner_id (d->hostname, getpid ());
  if (d->runner == NULL)
    d->runner = sr_xasprintf ("%s:%ld:0", d->hostname, (long) getpid ());

  if (sr_docker_ping_ (d, api, sizeof api, err) < 0)
    goto fail;
  if (choose_api (d, api, err) < 0)
    goto fail;
  {
    char *versioned = sr_xasprintf ("%s/v%s", d->base_url, d->api);

    free (d->base_url);
    d->base_url = versioned;
  }
  {
    _cleanup_json_ cJSON *info = NULL;
    const cJSON *cgv;

    if (sr_docker_get_json_ (d, "/info", "the Docker daemon's info", &info, err) < 0)
      goto fail;
    cgv = cJSON_GetObjectItemCaseSensitive (info, "CgroupVersion");
    d->limit_mechanism = cJSON_IsString (cgv) && strcmp (cgv->valuestring, "2") == 0
                           ? SR_LIMIT_CGROUP2 : SR_LIMIT_CGROUP1;
  }
  *ret = d;
  return 0;

fail:
  sr_docker_close (d);
  return -1;
}

void
sr_docker_close (struct sr_docker *d)
{
  if (d == NULL)
    return;
  free (d->endpoint);
  free (d->socket_path);
  free (d->base_url);
  free (d->runner);
  free (d);
  curl_global_cleanup ();
}

const char *
sr_docker_endpoint (const struct sr_docker *d)
{
  return d->endpoint;
}

const char *
sr_docker_api_version (const struct sr_docker *d)
{
  return d->api;
}

/* --- images --- */

int
sr_docker_image_missing_ (const char *image, sr_error_t *err)
{
  return sr_error_set (err, ENOENT,
                       "the Docker daemon has no image %s (run `docker pull %s`, or make it "
                       "from a rootfs with `docker import ROOTFS.tar %s`)",
                       image, image, image);
}

int
sr_docker_image_exists (struct sr_docker *d, const char *image, char **ret_id,
                        sr_error_t *err)
{
  _cleanup_free_ char *esc = NULL, *path = NULL;
  struct sr_buf resp = { 0 };
  long status;

  if (image == NULL || *image == '\0')
    return sr_error_set (err, EINVAL, "no image given");
  /* The name stays one path segment: a '/' in it is part of the name.  */
  esc = sr_docker_escape_ (image);
  path = sr_xasprintf ("/images/%s/json", esc);
  status = sr_docker_request_ (d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    return -1;
  if (status == 200)
    {
      if (ret_id)
        {
          cJSON *o = cJSON_Parse (resp.data ? resp.data : "");
          const cJSON *id = cJSON_GetObjectItemCaseSensitive (o, "Id");

          *ret_id = cJSON_IsString (id) ? sr_xstrdup (id->valuestring) : NULL;
          cJSON_Delete (o);
        }
      sr_buf_done (&resp);
      return 0;
    }
  if (status == 404)
    {
      sr_buf_done (&resp);
      return sr_docker_image_missing_ (image, err);
    }
  sr_docker_status_error_ (status, &resp, "inspect image", err);
  sr_buf_done (&resp);
  return sr_error_wrap (err, "%s", image);
}

/* --- orphans --- */

static bool
runner_alive (const char *runner, const char *hostname)
{
  _cleanup_free_ char *copy = sr_xstrdup (runner), *now = NULL;
  char *pid_s, *host_end;
  long pid;

  host_end = strrchr (copy, ':');
  if (host_end == NULL)
    return true;
  *host_end = '\0';
  pid_s = strrchr (copy, ':');
  if (pid_s == NULL)
    return true;
  *pid_s++ = '\0';
  /* Another host's runner: we cannot tell, so it is alive.  */
  if (strcmp (copy, hostname) != 0)
    return true;
  pid = strtol (pid_s, NULL, 10);
  if (pid <= 0)
    return true;
  /* A runner that could not read its start time (sr_docker_open) is
   * known by its pid alone.  */
  if (strcmp (host_end + 1, "0") == 0)
    return kill ((pid_t) pid, 0) == 0 || errno == EPERM;
  now = runner_id (hostname, (pid_t) pid);
  return now != NULL && strcmp (now, runner) == 0;
}

int
sr_docker_reap_orphans (struct sr_docker *d, unsigned *ret_removed, sr_error_t *err)
{
  _cleanup_free_ char *filters = sr_docker_escape_ ("{\"label\":[\"" SR_DOCKER_LABEL "\"]}");
  _cleanup_free_ char *path = sr_xasprintf ("/containers/json?all=1&filters=%s", filters);
  _cleanup_json_ cJSON *list = NULL;
  const cJSON *item;
  unsigned removed = 0;

  if (sr_docker_get_json_ (d, path, "list containers", &list, err) < 0)
    return -1;
  cJSON_ArrayForEach (item, list)
  {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive (item, "Id");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive (item, "Labels");
    const cJSON *runner = cJSON_GetObjectItemCaseSensitive (labels, SR_DOCKER_LABEL_RUNNER);

    if (!cJSON_IsString (id) || !cJSON_IsString (runner)
        || runner_alive (runner->valuestring, d->hostname))
      continue;
    sr_docker_remove_container_ (d, id->valuestring);
    removed++;
  }
  if (ret_removed)
    *ret_removed = removed;
  return 0;
}
