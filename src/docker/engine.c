/* The Docker Engine API over libcurl.
 *
 * Control requests (create, start, kill, inspect, remove) are short easy
 * transfers, each on a handle of its own, so that an sr_docker can serve
 * several threads.  Output comes from attach (for a run) or exec start
 * (for a session command): the daemon hijacks that connection and sends
 * the multiplexed stream format, frames of an 8-byte header (stream type,
 * three zero bytes, big-endian length) and the payload.  That transfer runs
 * in a multi handle, so one poll loop also sees the timeout and the
 * cancel fd, as the native supervisor does.  */
#include <config.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "common/curlbuf.h"
#include "common/defaults.h"
#include "common/json.h"
#include "common/util.h"
#include "docker/engine.h"
#include "runtime/supervise.h"

/* The newest API version whose fields we use; a newer daemon is spoken to
 * at this version, an older one at its own.  Init and the fields below
 * need at least SR_DOCKER_MIN_API.  */
#define MAX_API_MAJOR 1
#define MAX_API_MINOR 43
#define MIN_API_MINOR 25

#define CONNECT_TIMEOUT_MS 3000L
/* A control request that takes longer than this means a daemon in
 * trouble; create and remove can be slow on a loaded host.  */
#define CONTROL_TIMEOUT_MS 60000L
/* From the attach request to the stream's headers.  */
#define ATTACH_TIMEOUT_MS 30000u
/* After a kill, how long the stream may take to end before we stop
 * reading it.  */
#define KILL_GRACE_MS 5000u
/* After the stream ends, how long an exec may still report Running.  */
#define EXEC_SETTLE_MS 2000u
/* Of an error body, only the start is kept.  */
#define MAX_ERROR_BODY (64u << 10)
#define MAX_RESPONSE (16u << 20)
#define STREAM_HEADER_LEN 8

/* --- the connection --- */

struct sr_docker
{
  char *endpoint;     /* as given: unix:///var/run/docker.sock */
  char *socket_path;  /* NULL for tcp */
  char *base_url;     /* http://localhost/v1.41 */
  char api[16];
  char *runner;       /* the value of SR_DOCKER_LABEL_RUNNER for ours */
  char hostname[256];
  /* How the daemon enforces limits, for the result's limit report.  */
  enum sr_limit_mechanism limit_mechanism;
};

struct limits
{
  uint64_t memory, nano_cpus;
  uint32_t pids;
};

struct sr_docker_container
{
  struct sr_docker *d;
  char *id;
  char *user;         /* what execs run as, the container's user */
  int init_pid;       /* on the daemon's host */
  struct limits limits;
};

static CURL *
new_handle (const struct sr_docker *d, char *errbuf)
{
  CURL *h = curl_easy_init ();

  if (h == NULL)
    sr_oom ();
  errbuf[0] = '\0';
  curl_easy_setopt (h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt (h, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt (h, CURLOPT_USERAGENT, PACKAGE_NAME "/" PACKAGE_VERSION);
  curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, CONNECT_TIMEOUT_MS);
#if LIBCURL_VERSION_NUM >= 0x075500
  curl_easy_setopt (h, CURLOPT_PROTOCOLS_STR, "http");
#else
  curl_easy_setopt (h, CURLOPT_PROTOCOLS, (long) CURLPROTO_HTTP);
#endif
  if (d->socket_path)
    curl_easy_setopt (h, CURLOPT_UNIX_SOCKET_PATH, d->socket_path);
  return h;
}

static void
curl_cleanupp (CURL **h)
{
  if (*h)
    curl_easy_cleanup (*h);
}

static void
slist_freep (struct curl_slist **l)
{
  curl_slist_free_all (*l);
}

/* Says why a transfer to the daemon failed, in words a person can act on.  */
static int
transport_error (const struct sr_docker *d, CURL *h, CURLcode rc, const char *errbuf,
                 long timeout_ms, sr_error_t *err)
{
  long os_errno = 0;

  curl_easy_getinfo (h, CURLINFO_OS_ERRNO, &os_errno);
  if (rc == CURLE_OPERATION_TIMEDOUT)
    return sr_error_set (err, ETIMEDOUT, "the Docker daemon at %s did not answer within %ld ms",
                         d->endpoint, timeout_ms);
  if (rc == CURLE_COULDNT_CONNECT && d->socket_path)
    {
      if (os_errno == ENOENT)
        return sr_error_set (err, ENOENT,
                             "the Docker daemon is not running: %s does not exist (start dockerd, "
                             "or point DOCKER_HOST at a running daemon)",
                             d->socket_path);
      if (os_errno == EACCES || os_errno == EPERM)
        return sr_error_set (err, (int) os_errno,
                             "cannot open the Docker socket %s (add the user to the docker "
                             "group, or point DOCKER_HOST at a rootless daemon)",
                             d->socket_path);
      if (os_errno == ECONNREFUSED)
        return sr_error_set (err, ECONNREFUSED,
                             "the Docker daemon is not running: nothing listens on %s (start "
                             "dockerd)",
                             d->socket_path);
    }
  return sr_error_set (err, os_errno ? (int) os_errno : EIO, "the Docker daemon at %s: %s",
                       d->endpoint, errbuf[0] ? errbuf : curl_easy_strerror (rc));
}

struct api_version_header
{
  char *api;
  size_t size;
};

static size_t
on_ping_header (char *ptr, size_t size, size_t n, void *userdata)
{
  struct api_version_header *v = userdata;
  size_t len = size * n;
  static const char name[] = "api-version:";

  if (len > sizeof name - 1 && strncasecmp (ptr, name, sizeof name - 1) == 0)
    {
      const char *p = ptr + sizeof name - 1;
      size_t i = 0;

      while (p < ptr + len && *p == ' ')
        p++;
      while (p < ptr + len && i + 1 < v->size && (isdigit ((unsigned char) *p) || *p == '.'))
        v->api[i++] = *p++;
      v->api[i] = '\0';
    }
  return len;
}

/* method PATH (below the versioned base) with body (NULL: none).  Returns
 * the HTTP status, or -1 when the exchange itself failed.  */
static long
request (const struct sr_docker *d, const char *method, const char *path, const cJSON *body,
         long timeout_ms, struct sr_buf *resp, sr_error_t *err)
{
  _cleanup_(curl_cleanupp) CURL *h = NULL;
  _cleanup_(slist_freep) struct curl_slist *headers = NULL;
  _cleanup_free_ char *url = sr_xasprintf ("%s%s", d->base_url, path);
  _cleanup_free_ char *text = NULL;
  char errbuf[CURL_ERROR_SIZE];
  CURLcode rc;
  long status = 0;

  h = new_handle (d, errbuf);
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, timeout_ms);
  if (resp->max == 0)
    resp->max = MAX_RESPONSE;
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, sr_buf_curl_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, resp);
  if (body)
    {
      text = cJSON_PrintUnformatted (body);
      if (text == NULL)
        sr_oom ();
      headers = curl_slist_append (headers, "Content-Type: application/json");
      curl_easy_setopt (h, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt (h, CURLOPT_POSTFIELDS, text);
    }
  else if (strcmp (method, "POST") == 0)
    curl_easy_setopt (h, CURLOPT_POSTFIELDS, "");
  rc = curl_easy_perform (h);
  if (rc != CURLE_OK)
    return transport_error (d, h, rc, errbuf, timeout_ms, err);
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  return status;
}

/* An error the daemon answered with: {"message": "..."}.  */
static int
api_error (long status, const struct sr_buf *resp, int errnum, const char *what, sr_error_t *err)
{
  _cleanup_json_ cJSON *j = resp->data ? cJSON_Parse (resp->data) : NULL;
  const cJSON *m = cJSON_GetObjectItemCaseSensitive (j, "message");
  _cleanup_free_ char *body = NULL;

  if (cJSON_IsString (m))
    return sr_error_set (err, errnum, "%s: %s", what, m->valuestring);
  body = resp->data ? strndup (resp->data, 200) : NULL;
  for (char *p = body; p && *p; p++)
    if (*p == '\n' || *p == '\r')
      *p = ' ';
  return sr_error_set (err, errnum, "%s: HTTP %ld%s%s", what, status, body ? " " : "",
                       body ? body : "");
}

static int
errno_of_status (long status)
{
  switch (status)
    {
    case 404: return ENOENT;
    case 409: return EBUSY;
    case 400: return EINVAL;
    case 401:
    case 403: return EACCES;
    default: return EIO;
    }
}

/* GET path and parse the answer.  */
static int
get_json (struct sr_docker *d, const char *path, const char *what, cJSON **ret, sr_error_t *err)
{
  struct sr_buf resp = { 0 };
  long status = request (d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, err);

  if (status < 0)
    return -1;
  if (status != 200)
    {
      api_error (status, &resp, errno_of_status (status), what, err);
      sr_buf_done (&resp);
      return -1;
    }
  *ret = cJSON_Parse (resp.data ? resp.data : "");
  sr_buf_done (&resp);
  if (*ret == NULL)
    return sr_error_set (err, EPROTO, "%s: the daemon's answer is not JSON", what);
  return 0;
}

static int
json_int (const cJSON *obj, const char *key, int dflt)
{
  const cJSON *v = cJSON_GetObjectItemCaseSensitive (obj, key);

  return cJSON_IsNumber (v) ? v->valueint : dflt;
}

static bool
json_bool (const cJSON *obj, const char *key)
{
  return cJSON_IsTrue (cJSON_GetObjectItemCaseSensitive (obj, key));
}

/* A query value, percent-encoded.  */
static char *
escape (const char *s)
{
  char *e = curl_escape (s, 0);
  char *r;

  if (e == NULL)
    sr_oom ();
  r = sr_xstrdup (e);
  curl_free (e);
  return r;
}

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
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%ld/stat", (long) pid), *stat = NULL;
  unsigned long long start = 0;
  const char *p;

  if (sr_read_file (path, &stat, NULL, NULL) < 0)
    return NULL;
  /* The command may hold spaces and parentheses: fields count from the
   * last ')'.  starttime is field 22, the 20th after it.  */
  p = strrchr (stat, ')');
  if (p == NULL)
    return NULL;
  p++;
  for (int field = 2; field < 22 && p; field++)
    p = strchr (p + 1, ' ');
  if (p == NULL || sscanf (p, " %llu", &start) != 1)
    return NULL;
  return sr_xasprintf ("%s:%ld:%llu", hostname, (long) pid, start);
}

int
sr_docker_open (const char *host, struct sr_docker **ret, sr_error_t *err)
{
  struct sr_docker *d;
  _cleanup_(curl_cleanupp) CURL *h = NULL;
  _cleanup_free_ char *url = NULL;
  char errbuf[CURL_ERROR_SIZE], api[16] = "";
  struct api_version_header v = { api, sizeof api };
  struct sr_buf body = { 0 };
  CURLcode rc;
  long status = 0;

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

  /* The ping is unversioned: it tells which version to speak.  */
  url = sr_xasprintf ("%s/_ping", d->base_url);
  h = new_handle (d, errbuf);
  curl_easy_setopt (h, CURLOPT_URL, url);
  curl_easy_setopt (h, CURLOPT_TIMEOUT_MS, (long) SR_DOCKER_PING_TIMEOUT_MS);
  curl_easy_setopt (h, CURLOPT_CONNECTTIMEOUT_MS, (long) SR_DOCKER_PING_TIMEOUT_MS);
  curl_easy_setopt (h, CURLOPT_HEADERFUNCTION, on_ping_header);
  curl_easy_setopt (h, CURLOPT_HEADERDATA, &v);
  body.max = MAX_RESPONSE;
  curl_easy_setopt (h, CURLOPT_WRITEFUNCTION, sr_buf_curl_write);
  curl_easy_setopt (h, CURLOPT_WRITEDATA, &body);
  rc = curl_easy_perform (h);
  if (rc != CURLE_OK)
    {
      transport_error (d, h, rc, errbuf, (long) SR_DOCKER_PING_TIMEOUT_MS, err);
      goto fail;
    }
  curl_easy_getinfo (h, CURLINFO_RESPONSE_CODE, &status);
  if (status != 200)
    {
      api_error (status, &body, EIO, "ping the Docker daemon", err);
      sr_error_wrap (err, "%s", d->endpoint);
      goto fail;
    }
  if (choose_api (d, api, err) < 0)
    goto fail;
  {
    char *versioned = sr_xasprintf ("%s/v%s", d->base_url, d->api);

    free (d->base_url);
    d->base_url = versioned;
  }
  sr_buf_done (&body);
  {
    _cleanup_json_ cJSON *info = NULL;
    const cJSON *cgv;

    if (get_json (d, "/info", "the Docker daemon's info", &info, err) < 0)
      goto fail;
    cgv = cJSON_GetObjectItemCaseSensitive (info, "CgroupVersion");
    d->limit_mechanism = cJSON_IsString (cgv) && strcmp (cgv->valuestring, "2") == 0
                           ? SR_LIMIT_CGROUP2 : SR_LIMIT_CGROUP1;
  }
  *ret = d;
  return 0;

fail:
  sr_buf_done (&body);
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

static int
image_missing (const char *image, sr_error_t *err)
{
  return sr_error_set (err, ENOENT,
                       "the Docker daemon has no image %s (run `docker pull %s`, or make it "
                       "from a rootfs with `docker import ROOTFS.tar %s`)",
                       image, image, image);
}

int
sr_docker_image_exists (struct sr_docker *d, const char *image, sr_error_t *err)
{
  _cleanup_free_ char *esc = NULL, *path = NULL;
  struct sr_buf resp = { 0 };
  long status;

  if (image == NULL || *image == '\0')
    return sr_error_set (err, EINVAL, "no image given");
  /* The name stays one path segment: a '/' in it is part of the name.  */
  esc = escape (image);
  path = sr_xasprintf ("/images/%s/json", esc);
  status = request (d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    return -1;
  if (status == 200)
    {
      sr_buf_done (&resp);
      return 0;
    }
  if (status == 404)
    {
      sr_buf_done (&resp);
      return image_missing (image, err);
    }
  api_error (status, &resp, errno_of_status (status), "inspect image", err);
  sr_buf_done (&resp);
  return sr_error_wrap (err, "%s", image);
}

/* --- the container's JSON --- */

static void
add_strv (cJSON *obj, const char *key, char *const *v)
{
  cJSON *a = cJSON_AddArrayToObject (obj, key);

  for (; v && *v; v++)
    cJSON_AddItemToArray (a, cJSON_CreateString (*v));
}

static void
add_ulimit (cJSON *a, const char *name, uint64_t value)
{
  cJSON *u = cJSON_CreateObject ();

  cJSON_AddStringToObject (u, "Name", name);
  cJSON_AddNumberToObject (u, "Soft", (double) value);
  cJSON_AddNumberToObject (u, "Hard", (double) value);
  cJSON_AddItemToArray (a, u);
}

/* Docker's Binds and Tmpfs are ':' and ',' separated strings.  */
static bool
path_ok (const char *p)
{
  return p && p[0] == '/' && strpbrk (p, ":,\n") == NULL;
}

static const char *
user_of (const struct sr_docker_config *cfg)
{
  return cfg->user ? cfg->user : SR_DOCKER_DEFAULT_USER;
}

static void
add_env (cJSON *obj, char *const *env)
{
  static char *const default_env[] = {
    (char *) "PATH=" SR_DEFAULT_PATH, (char *) "HOME=" SR_DEFAULT_HOME,
    (char *) "LANG=" SR_DEFAULT_LANG, NULL,
  };

  add_strv (obj, "Env", env ? env : default_env);
}

static int
container_json (const struct sr_docker *d, const struct sr_docker_config *cfg,
                char *const *argv, char *const *env, const char *cwd, bool init,
                cJSON **ret, sr_error_t *err)
{
  _cleanup_json_ cJSON *c = cJSON_CreateObject ();
  cJSON *hc, *labels, *tmpfs, *binds, *sec, *ulimits, *log;
  _cleanup_free_ char *owner = NULL;

  if (cfg->image == NULL || *cfg->image == '\0')
    return sr_error_set (err, EINVAL, "no image given");
  if (argv == NULL || argv[0] == NULL)
    return sr_error_set (err, EINVAL, "no command given");

  cJSON_AddStringToObject (c, "Image", cfg->image);
  cJSON_AddStringToObject (c, "Hostname", cfg->hostname ? cfg->hostname : SR_DEFAULT_HOSTNAME);
  if (*user_of (cfg))
    cJSON_AddStringToObject (c, "User", user_of (cfg));
  add_strv (c, "Cmd", argv);
  /* An image's ENTRYPOINT would run in front of our command.  */
  cJSON_AddItemToObject (c, "Entrypoint", cJSON_CreateArray ());
  add_env (c, env);
  cJSON_AddStringToObject (c, "WorkingDir", cwd ? cwd : SR_DEFAULT_WORKDIR);
  cJSON_AddBoolToObject (c, "AttachStdin", false);
  cJSON_AddBoolToObject (c, "AttachStdout", !init);
  cJSON_AddBoolToObject (c, "AttachStderr", !init);
  cJSON_AddBoolToObject (c, "OpenStdin", false);
  cJSON_AddBoolToObject (c, "Tty", false);
  cJSON_AddBoolToObject (c, "NetworkDisabled", true);
  labels = cJSON_AddObjectToObject (c, "Labels");
  for (size_t i = 0; i < cfg->n_labels; i++)
    cJSON_AddStringToObject (labels, cfg->labels[i].key, cfg->labels[i].value);
  cJSON_AddStringToObject (labels, SR_DOCKER_LABEL, "1");
  cJSON_AddStringToObject (labels, SR_DOCKER_LABEL_RUNNER, d->runner);

  hc = cJSON_AddObjectToObject (c, "HostConfig");
  cJSON_AddStringToObject (hc, "NetworkMode", "none");
  if (cfg->memory)
    {
      cJSON_AddNumberToObject (hc, "Memory", (double) cfg->memory);
      cJSON_AddNumberToObject (hc, "MemorySwap",
                               (double) (cfg->memory_swap ? cfg->memory_swap : cfg->memory));
    }
  if (cfg->nano_cpus)
    cJSON_AddNumberToObject (hc, "NanoCpus", (double) cfg->nano_cpus);
  if (cfg->pids_limit)
    cJSON_AddNumberToObject (hc, "PidsLimit", cfg->pids_limit);
  if (cfg->shm_size)
    cJSON_AddNumberToObject (hc, "ShmSize", (double) cfg->shm_size);
  cJSON_AddBoolToObject (hc, "ReadonlyRootfs", cfg->readonly_root);
  cJSON_AddBoolToObject (hc, "Init", init);
  cJSON_AddBoolToObject (hc, "AutoRemove", false);
  cJSON_AddStringToObject (hc, "IpcMode", "private");
  /* Output comes through attach; a log driver would keep a copy on the
   * daemon's disk, without our cap.  */
  log = cJSON_AddObjectToObject (hc, "LogConfig");
  cJSON_AddStringToObject (log, "Type", "none");
  cJSON_AddItemToObject (hc, "CapDrop", cJSON_CreateStringArray ((const char *[]){ "ALL" }, 1));
  if (cfg->cap_add && cfg->cap_add[0])
    add_strv (hc, "CapAdd", cfg->cap_add);
  sec = cJSON_AddArrayToObject (hc, "SecurityOpt");
  cJSON_AddItemToArray (sec, cJSON_CreateString ("no-new-privileges:true"));
  if (cfg->seccomp_json)
    {
      _cleanup_free_ char *opt = sr_xasprintf ("seccomp=%s", cfg->seccomp_json);

      cJSON_AddItemToArray (sec, cJSON_CreateString (opt));
    }

  /* runc gives a tmpfs the mode of the directory it covers (0755 for a
   * WorkingDir Docker made), so mode alone does not make it writable for
   * a non-root user: it also gets the user as owner, when we know its
   * numeric ids.  */
  {
    unsigned uid, gid;
    char tail;
    int n = sscanf (user_of (cfg), "%u:%u%c", &uid, &gid, &tail);

    if (n == 2)
      owner = sr_xasprintf (",uid=%u,gid=%u", uid, gid);
    else if (n == 1 && strchr (user_of (cfg), ':') == NULL
             && strspn (user_of (cfg), "0123456789") == strlen (user_of (cfg)))
      owner = sr_xasprintf (",uid=%u", uid);
    else
      owner = sr_xstrdup ("");
  }
  tmpfs = cJSON_AddObjectToObject (hc, "Tmpfs");
  for (size_t i = 0; i < cfg->n_tmpfs; i++)
    {
      const struct sr_docker_tmpfs *t = &cfg->tmpfs[i];
      _cleanup_free_ char *size = t->size ? sr_xasprintf (",size=%llu", (unsigned long long) t->size)
                                          : sr_xstrdup ("");
      _cleanup_free_ char *opts = NULL;

      if (!path_ok (t->path))
        return sr_error_set (err, EINVAL, "tmpfs %s: an absolute path without ':' or ','",
                             t->path ? t->path : "(null)");
      opts = sr_xasprintf ("rw,nosuid,nodev,%s,mode=%o%s%s", t->exec ? "exec" : "noexec",
                           t->mode ? t->mode : 01777, size, owner);
      cJSON_AddStringToObject (tmpfs, t->path, opts);
    }
  binds = cJSON_AddArrayToObject (hc, "Binds");
  for (size_t i = 0; i < cfg->n_binds; i++)
    {
      const struct sr_docker_bind *b = &cfg->binds[i];
      _cleanup_free_ char *s = NULL;

      if (!path_ok (b->source) || !path_ok (b->target))
        return sr_error_set (err, EINVAL, "bind %s on %s: absolute paths without ':' or ','",
                             b->source ? b->source : "(null)", b->target ? b->target : "(null)");
      s = sr_xasprintf ("%s:%s:%s", b->source, b->target, b->readonly ? "ro" : "rw");
      cJSON_AddItemToArray (binds, cJSON_CreateString (s));
    }
  ulimits = cJSON_AddArrayToObject (hc, "Ulimits");
  if (cfg->max_file_size)
    add_ulimit (ulimits, "fsize", cfg->max_file_size);
  if (cfg->max_open_files)
    add_ulimit (ulimits, "nofile", cfg->max_open_files);
  if (cfg->max_cpu_seconds)
    add_ulimit (ulimits, "cpu", cfg->max_cpu_seconds);
  *ret = TAKE_PTR (c);
  return 0;
}

/* --- containers --- */

static int
create_container (struct sr_docker *d, const struct sr_docker_config *cfg, char *const *argv,
                  char *const *env, const char *cwd, bool init, char **ret_id, sr_error_t *err)
{
  _cleanup_json_ cJSON *body = NULL, *resp_json = NULL;
  _cleanup_free_ char *path = NULL;
  struct sr_buf resp = { 0 };
  unsigned char rnd[6] = { 0 };
  const cJSON *id;
  long status;

  if (container_json (d, cfg, argv, env, cwd, init, &body, err) < 0)
    return -1;
  if (getrandom (rnd, sizeof rnd, 0) != (ssize_t) sizeof rnd)
    for (size_t i = 0; i < sizeof rnd; i++)
      rnd[i] = (unsigned char) (sr_now_ns () >> (i * 8));
  path = sr_xasprintf ("/containers/create?name=sandbox-runner-%02x%02x%02x%02x%02x%02x", rnd[0],
                       rnd[1], rnd[2], rnd[3], rnd[4], rnd[5]);
  status = request (d, "POST", path, body, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    return -1;
  if (status == 404)
    {
      sr_buf_done (&resp);
      return image_missing (cfg->image, err);
    }
  if (status != 201)
    {
      api_error (status, &resp, errno_of_status (status), "create a container", err);
      sr_buf_done (&resp);
      return -1;
    }
  resp_json = cJSON_Parse (resp.data ? resp.data : "");
  sr_buf_done (&resp);
  id = cJSON_GetObjectItemCaseSensitive (resp_json, "Id");
  if (!cJSON_IsString (id) || strspn (id->valuestring, "0123456789abcdef") != strlen (id->valuestring))
    return sr_error_set (err, EPROTO, "create a container: the daemon's answer has no Id");
  *ret_id = sr_xstrdup (id->valuestring);
  return 0;
}

static void
remove_container (struct sr_docker *d, const char *id)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s?force=1&v=1", id);
  struct sr_buf resp = { 0 };

  (void) request (d, "DELETE", path, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
  sr_buf_done (&resp);
}

static void
kill_container (struct sr_docker *d, const char *id)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/kill?signal=KILL", id);
  struct sr_buf resp = { 0 };

  /* 409: it is not running any more, which is what we wanted.  */
  (void) request (d, "POST", path, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
  sr_buf_done (&resp);
}

/* --- the output stream --- */

struct stream
{
  const struct sr_run_options *opts;
  struct sr_capture out, err;
  long status;          /* of the stream request */
  bool headers_done;
  struct sr_buf body;      /* the body of a failed stream request */
  unsigned char head[STREAM_HEADER_LEN];
  size_t head_len;
  uint32_t left;        /* payload bytes left in the current frame */
  int type;             /* of the current frame */
};

static void
stream_deliver (struct stream *s, const char *p, size_t n)
{
  struct sr_capture *cap;
  enum sr_stream which;

  /* Type 0 is stdin, which we never attach; a type we do not know is
   * read and dropped rather than misfiled.  */
  if (s->type == 1)
    cap = &s->out, which = SR_STREAM_STDOUT;
  else if (s->type == 2)
    cap = &s->err, which = SR_STREAM_STDERR;
  else
    return;
  if (s->opts->on_output)
    s->opts->on_output (which, p, n, s->opts->userdata);
  sr_capture_add (cap, p, n);
}

static size_t
on_stream_data (char *ptr, size_t size, size_t nmemb, void *userdata)
{
  struct stream *s = userdata;
  size_t n = size * nmemb, i = 0;

  if (s->status != 200 && s->status != 101)
    {
      if (s->body.len < MAX_ERROR_BODY)
        sr_buf_append (&s->body, ptr, n);
      return n;
    }
  while (i < n)
    {
      if (s->left == 0)
        {
          size_t want = STREAM_HEADER_LEN - s->head_len, take = n - i < want ? n - i : want;

          memcpy (s->head + s->head_len, ptr + i, take);
          s->head_len += take;
          i += take;
          if (s->head_len < STREAM_HEADER_LEN)
            break;
          s->head_len = 0;
          s->type = s->head[0];
          s->left = (uint32_t) s->head[4] << 24 | (uint32_t) s->head[5] << 16
                    | (uint32_t) s->head[6] << 8 | (uint32_t) s->head[7];
          continue;
        }
      {
        size_t take = n - i < s->left ? n - i : s->left;

        stream_deliver (s, ptr + i, take);
        s->left -= (uint32_t) take;
        i += take;
      }
    }
  return n;
}

static size_t
on_stream_header (char *ptr, size_t size, size_t nmemb, void *userdata)
{
  struct stream *s = userdata;
  size_t n = size * nmemb;
  int code;

  if (n >= 12 && strncmp (ptr, "HTTP/", 5) == 0 && sscanf (ptr, "HTTP/%*s %d", &code) == 1)
    s->status = code;
  else if ((n == 2 && ptr[0] == '\r' && ptr[1] == '\n') || (n == 1 && ptr[0] == '\n'))
    s->headers_done = true;
  return n;
}

struct xfer
{
  CURLM *multi;
  CURL *h;
  struct curl_slist *headers;
  char *body_text;
  char errbuf[CURL_ERROR_SIZE];
  bool added, done;
  CURLcode result;
};

static void
xfer_done (struct xfer *x)
{
  if (x->added)
    curl_multi_remove_handle (x->multi, x->h);
  if (x->h)
    curl_easy_cleanup (x->h);
  if (x->multi)
    curl_multi_cleanup (x->multi);
  curl_slist_free_all (x->headers);
  free (x->body_text);
  memset (x, 0, sizeof *x);
}

static void
xfer_start (const struct sr_docker *d, struct xfer *x, const char *path, const cJSON *body,
            struct stream *s)
{
  _cleanup_free_ char *url = sr_xasprintf ("%s%s", d->base_url, path);

  x->multi = curl_multi_init ();
  if (x->multi == NULL)
    sr_oom ();
  x->h = new_handle (d, x->errbuf);
  curl_easy_setopt (x->h, CURLOPT_URL, url);
  curl_easy_setopt (x->h, CURLOPT_POST, 1L);
  x->body_text = body ? cJSON_PrintUnformatted (body) : sr_xstrdup ("");
  if (x->body_text == NULL)
    sr_oom ();
  curl_easy_setopt (x->h, CURLOPT_POSTFIELDS, x->body_text);
  x->headers = curl_slist_append (NULL, "Content-Type: application/json");
  curl_easy_setopt (x->h, CURLOPT_HTTPHEADER, x->headers);
  curl_easy_setopt (x->h, CURLOPT_HEADERFUNCTION, on_stream_header);
  curl_easy_setopt (x->h, CURLOPT_HEADERDATA, s);
  curl_easy_setopt (x->h, CURLOPT_WRITEFUNCTION, on_stream_data);
  curl_easy_setopt (x->h, CURLOPT_WRITEDATA, s);
  curl_multi_add_handle (x->multi, x->h);
  x->added = true;
}

/* Moves the transfer on; true once it has ended.  */
static bool
xfer_step (struct xfer *x)
{
  CURLMsg *m;
  int running, left;

  curl_multi_perform (x->multi, &running);
  while ((m = curl_multi_info_read (x->multi, &left)))
    if (m->msg == CURLMSG_DONE && m->easy_handle == x->h)
      {
        x->done = true;
        x->result = m->data.result;
      }
  return x->done;
}

/* Waits for the transfer, cancel_fd (when >= 0) or at most wait_ms.
 * Returns true when cancel_fd is readable.  */
static bool
xfer_wait (struct xfer *x, int cancel_fd, int wait_ms)
{
  struct curl_waitfd extra = { .fd = cancel_fd, .events = CURL_WAIT_POLLIN };
  int numfds;

  curl_multi_poll (x->multi, cancel_fd >= 0 ? &extra : NULL, cancel_fd >= 0 ? 1 : 0, wait_ms,
                   &numfds);
  return cancel_fd >= 0 && (extra.revents & CURL_WAIT_POLLIN);
}

/* Drives the transfer until the daemon has sent the response headers, so
 * that it is attached before anything starts.  */
static int
xfer_until_headers (const struct sr_docker *d, struct xfer *x, struct stream *s,
                    const char *what, sr_error_t *err)
{
  uint64_t deadline = sr_now_ns () + ATTACH_TIMEOUT_MS * 1000000ull;

  while (!xfer_step (x) && !s->headers_done)
    {
      if (sr_now_ns () >= deadline)
        return sr_error_set (err, ETIMEDOUT, "%s: the Docker daemon at %s did not answer within %u ms",
                             what, d->endpoint, ATTACH_TIMEOUT_MS);
      xfer_wait (x, -1, 100);
    }
  if (x->done && x->result != CURLE_OK)
    return transport_error (d, x->h, x->result, x->errbuf, ATTACH_TIMEOUT_MS, err);
  if (s->status != 200 && s->status != 101)
    {
      /* The error body may still be on its way.  */
      while (!xfer_step (x) && sr_now_ns () < deadline)
        xfer_wait (x, -1, 100);
      return api_error (s->status, &s->body, errno_of_status (s->status), what, err);
    }
  return 0;
}

struct supervise
{
  uint64_t t0;               /* when the command was started */
  uint64_t deadline;         /* of its timeout; 0: none */
  uint64_t give_up;          /* on its output, once killed */
  bool killed, timed_out, cancelled;
  void (*kill) (void *ctx);
  void *kill_ctx;
};

static void
supervise_start (struct supervise *sv, const struct sr_run_options *opts)
{
  sv->deadline = opts->timeout_ms ? sv->t0 + opts->timeout_ms * 1000000ull : 0;
}

static void
supervise_kill (struct supervise *sv)
{
  sv->killed = true;
  sv->kill (sv->kill_ctx);
  sv->give_up = sr_now_ns () + KILL_GRACE_MS * 1000000ull;
}

/* The rules of the native supervisor, one step of them: kills the command
 * at its deadline, and returns false once it was killed KILL_GRACE_MS ago
 * and its output has still not ended (something outside the command holds
 * it open; what we have is what there is).  Else *wait_ms gets how long
 * the caller may wait for its next event.  */
static bool
supervise_tick (struct supervise *sv, int *wait_ms)
{
  uint64_t now = sr_now_ns (), until;

  if (!sv->killed && sv->deadline && now >= sv->deadline)
    {
      sv->timed_out = true;
      supervise_kill (sv);
      now = sr_now_ns ();
    }
  if (sv->killed && now >= sv->give_up)
    return false;
  until = sv->killed ? sv->give_up : sv->deadline;
  *wait_ms = 1000;
  if (until && until > now && (until - now) / 1000000 < 1000)
    *wait_ms = (int) ((until - now) / 1000000) + 1;
  return true;
}

/* Reads the stream to its end, enforcing the timeout and the cancel fd.  */
static int
supervise_stream (const struct sr_docker *d, struct xfer *x, const struct sr_run_options *opts,
                  struct supervise *sv, sr_error_t *err)
{
  int wait_ms;

  supervise_start (sv, opts);
  while (!xfer_step (x))
    {
      if (!supervise_tick (sv, &wait_ms))
        return 0;
      if (xfer_wait (x, sv->killed ? -1 : opts->cancel_fd, wait_ms))
        {
          sv->cancelled = true;
          supervise_kill (sv);
        }
    }
  if (x->result != CURLE_OK && !sv->killed)
    return transport_error (d, x->h, x->result, x->errbuf, 0, err);
  return 0;
}

static struct limits
limits_of (const struct sr_docker_config *cfg)
{
  return (struct limits){ cfg->memory, cfg->nano_cpus, cfg->pids_limit };
}

static void
result_init (const struct sr_docker *d, struct sr_run_result *r, struct limits l)
{
  memset (r, 0, sizeof *r);
  r->memory_limit = l.memory;
  r->limits.memory = l.memory ? d->limit_mechanism : SR_LIMIT_NONE;
  r->limits.cpu = l.nano_cpus ? d->limit_mechanism : SR_LIMIT_NONE;
  r->limits.pids = l.pids ? d->limit_mechanism : SR_LIMIT_NONE;
}

/* The daemon reports a command killed by signal N as exit code 128+N (as a
 * shell does); native reports the signal.  An exit(130) looks the same:
 * Docker does not tell them apart.  */
static void
set_exit (struct sr_run_result *r, int code)
{
  if (code > 128 && code <= 128 + SIGRTMAX)
    {
      r->signal = code - 128;
      r->exit_code = 0;
    }
  else
    r->exit_code = code;
}

static void
set_status (struct sr_run_result *r, const struct supervise *sv, bool oom)
{
  if (sv->timed_out)
    r->status = SR_RUN_TIMEOUT;
  else if (sv->cancelled)
    r->status = SR_RUN_CANCELLED;
  else if (oom)
    r->status = SR_RUN_OOM;
  else if (r->signal == 0 && r->exit_code == 0)
    r->status = SR_RUN_SUCCESS;
  else
    r->status = SR_RUN_ERROR;
}

/* A start that failed at exec: 127 for a command that is not there, 126
 * for one that cannot run, as native and shells say.  */
static void
exec_failure_code (const char *msg, struct sr_run_result *r)
{
  if (strstr (msg, "executable file not found") || strstr (msg, "no such file or directory"))
    r->exit_code = 127;
  else if (strstr (msg, "permission denied") || strstr (msg, "exec format error"))
    r->exit_code = 126;
}

struct run_ctx
{
  struct sr_docker *d;
  const char *id;
};

static void
kill_run (void *ctx)
{
  struct run_ctx *rc = ctx;

  kill_container (rc->d, rc->id);
}

int
sr_docker_run (struct sr_docker *d, const struct sr_docker_config *cfg,
               const struct sr_exec_spec *spec, const struct sr_run_options *opts,
               struct sr_run_result *result, sr_error_t *err)
{
  _cleanup_free_ char *id = NULL, *attach = NULL, *start = NULL, *wait = NULL, *inspect = NULL;
  struct stream s = { .opts = opts };
  struct xfer x = { 0 };
  struct run_ctx rc = { .d = d };
  struct supervise sv = { .kill = kill_run, .kill_ctx = &rc };
  struct sr_buf resp = { 0 };
  _cleanup_json_ cJSON *info = NULL;
  size_t cap = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT;
  long status;
  int r = -1;

  result_init (d, result, limits_of (cfg));
  s.out.cap = s.err.cap = cap;
  if (create_container (d, cfg, spec->argv, spec->env, spec->cwd, false, &id, err) < 0)
    return -1;
  rc.id = id;

  /* Attach first: what the command writes before we listen is lost.  */
  attach = sr_xasprintf ("/containers/%s/attach?stream=1&stdout=1&stderr=1", id);
  xfer_start (d, &x, attach, NULL, &s);
  if (xfer_until_headers (d, &x, &s, "attach to the container", err) < 0)
    goto out;

  start = sr_xasprintf ("/containers/%s/start", id);
  sv.t0 = sr_now_ns ();
  status = request (d, "POST", start, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto out;
  if (status != 204 && status != 304)
    {
      api_error (status, &resp, errno_of_status (status), "start the container", err);
      if (err && *err)
        exec_failure_code ((*err)->msg, result);
      goto out;
    }
  sr_buf_done (&resp);

  if (supervise_stream (d, &x, opts, &sv, err) < 0)
    goto out;
  result->duration_ns = sr_now_ns () - sv.t0;
  if (!x.done)
    /* The grace after a kill ran out: the container must not outlive us
     * however it got stuck.  */
    kill_container (d, id);

  wait = sr_xasprintf ("/containers/%s/wait?condition=not-running", id);
  status = request (d, "POST", wait, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto out;
  if (status != 200)
    {
      api_error (status, &resp, errno_of_status (status), "wait for the container", err);
      goto out;
    }
  sr_buf_done (&resp);
  /* The exit code and the OOM flag both from the final state.  */
  inspect = sr_xasprintf ("/containers/%s/json", id);
  if (get_json (d, inspect, "inspect the container", &info, err) < 0)
    goto out;
  {
    const cJSON *state = cJSON_GetObjectItemCaseSensitive (info, "State");

    set_exit (result, json_int (state, "ExitCode", -1));
    set_status (result, &sv, json_bool (state, "OOMKilled"));
  }
  r = 0;

out:
  xfer_done (&x);
  sr_buf_done (&resp);
  result->out = sr_capture_finish (&s.out);
  result->err = sr_capture_finish (&s.err);
  sr_buf_done (&s.body);
  remove_container (d, id);
  return r;
}

/* --- sessions --- */

int
sr_docker_hold (struct sr_docker *d, const struct sr_docker_config *cfg,
                struct sr_docker_container **ret, sr_error_t *err)
{
  static char *const sleep_forever[] = { (char *) "sleep", (char *) "infinity", NULL };
  struct sr_docker_container *c = sr_xcalloc (1, sizeof *c);
  _cleanup_free_ char *start = NULL, *inspect = NULL;
  _cleanup_json_ cJSON *info = NULL;
  struct sr_buf resp = { 0 };
  const cJSON *state;
  long status;

  c->d = d;
  c->user = sr_xstrdup (user_of (cfg));
  c->limits = limits_of (cfg);
  if (create_container (d, cfg, cfg->hold_command ? cfg->hold_command : sleep_forever, NULL,
                        NULL, true, &c->id, err) < 0)
    goto fail;
  start = sr_xasprintf ("/containers/%s/start", c->id);
  status = request (d, "POST", start, NULL, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto fail;
  if (status != 204 && status != 304)
    {
      api_error (status, &resp, errno_of_status (status), "start the session's container", err);
      goto fail;
    }
  inspect = sr_xasprintf ("/containers/%s/json", c->id);
  if (get_json (d, inspect, "inspect the session's container", &info, err) < 0)
    goto fail;
  state = cJSON_GetObjectItemCaseSensitive (info, "State");
  if (!json_bool (state, "Running"))
    {
      sr_error_set (err, ESRCH, "the session's container exited at once (exit code %d): does "
                    "the image have the hold command?", json_int (state, "ExitCode", -1));
      goto fail;
    }
  c->init_pid = json_int (state, "Pid", 0);
  sr_buf_done (&resp);
  *ret = c;
  return 0;

fail:
  sr_buf_done (&resp);
  sr_docker_destroy (c);
  return -1;
}

void
sr_docker_destroy (struct sr_docker_container *c)
{
  if (c == NULL)
    return;
  if (c->id)
    remove_container (c->d, c->id);
  free (c->id);
  free (c->user);
  free (c);
}

const char *
sr_docker_container_id (const struct sr_docker_container *c)
{
  return c->id;
}

int
sr_docker_container_pid (const struct sr_docker_container *c)
{
  return c->init_pid;
}

bool
sr_docker_container_alive (struct sr_docker_container *c)
{
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/json", c->id);
  _cleanup_json_ cJSON *info = NULL;

  if (get_json (c->d, path, "inspect the session's container", &info, NULL) < 0)
    return false;
  return json_bool (cJSON_GetObjectItemCaseSensitive (info, "State"), "Running");
}

/* Whether leader leads the process group or the session of pid (fields 5
 * and 6 of /proc/PID/stat).  */
static bool
proc_led_by (const char *pid, int leader)
{
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%s/stat", pid), *stat = NULL;
  const char *p;
  int pgrp = -1, sid = -1;

  if (sr_read_file (path, &stat, NULL, NULL) < 0)
    return false;
  p = strrchr (stat, ')');
  if (p == NULL || sscanf (p + 1, " %*c %*d %d %d", &pgrp, &sid) != 2)
    return false;
  return pgrp == leader || sid == leader;
}

static bool
proc_in_container (const char *pid, const char *id)
{
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%s/cgroup", pid), *cg = NULL;

  return sr_read_file (path, &cg, NULL, NULL) == 0 && strstr (cg, id) != NULL;
}

/* The last NSpgid of pid: its process group as the container sees it.  */
static int
proc_ns_pgrp (const char *pid)
{
  _cleanup_free_ char *path = sr_xasprintf ("/proc/%s/status", pid), *st = NULL;
  const char *p;
  int v = -1;

  if (sr_read_file (path, &st, NULL, NULL) < 0 || (p = strstr (st, "\nNSpgid:")) == NULL)
    return -1;
  p += 8;
  for (;;)
    {
      char *end;
      long n = strtol (p, &end, 10);

      if (end == p)
        break;
      v = (int) n;
      p = end;
    }
  return v;
}

/* Runs `kill -KILL -- -PGRP` inside the container, as its user: for a
 * runner that may not signal the container's processes from outside.  */
static void
kill_group_inside (struct sr_docker_container *c, int ns_pgrp)
{
  _cleanup_free_ char *cmd = sr_xasprintf ("kill -KILL -- -%d", ns_pgrp);
  char *argv[] = { (char *) "sh", (char *) "-c", cmd, NULL };
  _cleanup_json_ cJSON *body = cJSON_CreateObject (), *resp_json = NULL, *start = NULL;
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/exec", c->id), *spath = NULL;
  struct sr_buf resp = { 0 };
  const cJSON *id;

  add_strv (body, "Cmd", argv);
  if (*c->user)
    cJSON_AddStringToObject (body, "User", c->user);
  if (request (c->d, "POST", path, body, CONTROL_TIMEOUT_MS, &resp, NULL) != 201)
    goto out;
  resp_json = cJSON_Parse (resp.data ? resp.data : "");
  id = cJSON_GetObjectItemCaseSensitive (resp_json, "Id");
  if (!cJSON_IsString (id))
    goto out;
  sr_buf_done (&resp);
  spath = sr_xasprintf ("/exec/%s/start", id->valuestring);
  start = cJSON_CreateObject ();
  cJSON_AddBoolToObject (start, "Detach", true);
  (void) request (c->d, "POST", spath, start, CONTROL_TIMEOUT_MS, &resp, NULL);
out:
  sr_buf_done (&resp);
}

/* Kills every process of the group and the session led by the exec's
 * process (host pid leader): runc makes each exec'd process a session and
 * group leader, so this is the command and everything it started that did
 * not leave its session (an interactive shell's jobs have groups of their
 * own).  Only processes in this container's cgroup are touched, which
 * guards against a reused pid.  Returns how many processes were found.  */
static unsigned
kill_exec_group (struct sr_docker_container *c, int leader)
{
  unsigned found = 0;
  int inside = -1;

  if (leader <= 0)
    return 0;
  /* A few rounds: a process may fork while we look.  */
  for (int round = 0; round < 5; round++)
    {
      DIR *dir = opendir ("/proc");
      struct dirent *e;
      unsigned this_round = 0;

      if (dir == NULL)
        return found;
      while ((e = readdir (dir)))
        {
          if (!isdigit ((unsigned char) e->d_name[0]) || !proc_led_by (e->d_name, leader)
              || !proc_in_container (e->d_name, c->id))
            continue;
          this_round++;
          if (kill ((pid_t) atoi (e->d_name), SIGKILL) < 0 && errno == EPERM && inside < 0)
            inside = proc_ns_pgrp (e->d_name);
        }
      closedir (dir);
      found += this_round;
      if (this_round == 0)
        break;
      if (inside > 0)
        {
          kill_group_inside (c, inside);
          inside = 0;
        }
      usleep (20000);
    }
  return found;
}

struct exec_ctx
{
  struct sr_docker_container *c;
  const char *exec_id;
  int pid;              /* the exec's process on the host, once known */
};

static int
exec_inspect (struct sr_docker_container *c, const char *exec_id, cJSON **ret, sr_error_t *err)
{
  _cleanup_free_ char *path = sr_xasprintf ("/exec/%s/json", exec_id);

  return get_json (c->d, path, "inspect the exec", ret, err);
}

static void
kill_exec (void *ctx)
{
  struct exec_ctx *ec = ctx;

  if (ec->pid <= 0)
    {
      _cleanup_json_ cJSON *info = NULL;

      if (exec_inspect (ec->c, ec->exec_id, &info, NULL) == 0)
        ec->pid = json_int (info, "Pid", 0);
    }
  /* A daemon whose processes we cannot see (another pid namespace): the
   * only way to stop the command is to stop the session.  */
  if (kill_exec_group (ec->c, ec->pid) == 0)
    {
      _cleanup_json_ cJSON *info = NULL;

      if (exec_inspect (ec->c, ec->exec_id, &info, NULL) < 0 || json_bool (info, "Running"))
        kill_container (ec->c->d, ec->c->id);
    }
}

/* How long after an exec's end its OOM event may still be on its way:
 * the daemon learns of the kill from containerd, asynchronously.  */
#define OOM_EVENT_WAIT_S 1

/* Whether the daemon has an "oom" event of the container since t0: the
 * events API with until in the near future answers what it has in the
 * window, then ends.  */
static bool
oom_event_since (struct sr_docker_container *c, struct timespec t0)
{
  _cleanup_free_ char *filter = NULL, *esc = NULL, *path = NULL;
  struct sr_buf resp = { 0 };
  long status;
  bool oom;

  filter = sr_xasprintf ("{\"container\":[\"%s\"],\"event\":[\"oom\"]}", c->id);
  esc = escape (filter);
  /* A second early: since is inclusive but the event's time is the
   * daemon's clock, which may lag ours on another host.  */
  path = sr_xasprintf ("/events?since=%lld&until=%lld&filters=%s", (long long) t0.tv_sec - 1,
                       (long long) time (NULL) + OOM_EVENT_WAIT_S, esc);
  status = request (c->d, "GET", path, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
  oom = status == 200 && resp.data && strstr (resp.data, "\"oom\"") != NULL;
  sr_buf_done (&resp);
  return oom;
}

/* --- an exec with stdin: the hijacked connection --- */

/* An exec with its stdin attached needs both directions of one
 * connection: the daemon answers the start request with 101 and then
 * relays raw bytes each way.  libcurl only connects (CONNECT_ONLY), so
 * unix and tcp endpoints work alike; the request is ours to write.  */
struct hijack
{
  CURL *h;
  curl_socket_t fd;
  char errbuf[CURL_ERROR_SIZE];
};

static void
hijack_done (struct hijack *hj)
{
  if (hj->h)
    curl_easy_cleanup (hj->h);
  hj->h = NULL;
  hj->fd = CURL_SOCKET_BAD;
}

/* Polls fd for events until deadline (sr_now_ns): > 0 when ready.  */
static int
wait_fd (int fd, short events, uint64_t deadline)
{
  for (;;)
    {
      struct pollfd p = { .fd = fd, .events = events };
      uint64_t now = sr_now_ns ();
      int r;

      if (now >= deadline)
        return 0;
      r = poll (&p, 1, (int) ((deadline - now) / 1000000) + 1);
      if (r < 0 && errno == EINTR)
        continue;
      return r;
    }
}

static int
hijack_send (const struct sr_docker *d, struct hijack *hj, const char *p, size_t n,
             uint64_t deadline, sr_error_t *err)
{
  while (n > 0)
    {
      size_t sent = 0;
      CURLcode rc = curl_easy_send (hj->h, p, n, &sent);

      if (rc == CURLE_AGAIN)
        {
          if (wait_fd (hj->fd, POLLOUT, deadline) <= 0)
            return sr_error_set (err, ETIMEDOUT, "the Docker daemon at %s takes no more input",
                                 d->endpoint);
          continue;
        }
      if (rc != CURLE_OK)
        return transport_error (d, hj->h, rc, hj->errbuf, 0, err);
      p += sent;
      n -= sent;
    }
  return 0;
}

/* Appends what the connection has to b, waiting until deadline; an end of
 * the connection is an error.  */
static int
hijack_recv_some (const struct sr_docker *d, struct hijack *hj, struct sr_buf *b,
                  uint64_t deadline, const char *what, sr_error_t *err)
{
  for (;;)
    {
      char buf[4096];
      size_t n = 0;
      CURLcode rc = curl_easy_recv (hj->h, buf, sizeof buf, &n);

      if (rc == CURLE_AGAIN)
        {
          if (wait_fd (hj->fd, POLLIN, deadline) <= 0)
            return sr_error_set (err, ETIMEDOUT,
                                 "%s: the Docker daemon at %s did not answer within %u ms", what,
                                 d->endpoint, ATTACH_TIMEOUT_MS);
          continue;
        }
      if (rc != CURLE_OK)
        return transport_error (d, hj->h, rc, hj->errbuf, 0, err);
      if (n == 0)
        return sr_error_set (err, ECONNRESET, "%s: the Docker daemon at %s closed the connection",
                             what, d->endpoint);
      sr_buf_append (b, buf, n);
      return 0;
    }
}

/* POSTs body to path on a connection of its own and reads the answer's
 * head.  On 101 (or 200, which older daemons send) the connection is the
 * stream and *early gets what already came of it; any other status is an
 * error with the daemon's message.  */
static int
hijack_start (const struct sr_docker *d, const char *path, const cJSON *body, struct hijack *hj,
              struct sr_buf *early, const char *what, sr_error_t *err)
{
  _cleanup_free_ char *text = cJSON_PrintUnformatted (body), *req = NULL;
  const char *host = d->base_url + strlen ("http://");
  size_t host_len = strcspn (host, "/");
  uint64_t deadline = sr_now_ns () + ATTACH_TIMEOUT_MS * 1000000ull;
  struct sr_buf head = { 0 }, msg = { 0 };
  const char *end;
  CURLcode rc;
  long status = 0;
  int r = -1;

  if (text == NULL)
    sr_oom ();
  hj->h = new_handle (d, hj->errbuf);
  curl_easy_setopt (hj->h, CURLOPT_URL, d->base_url);
  curl_easy_setopt (hj->h, CURLOPT_CONNECT_ONLY, 1L);
  rc = curl_easy_perform (hj->h);
  if (rc != CURLE_OK)
    return transport_error (d, hj->h, rc, hj->errbuf, CONNECT_TIMEOUT_MS, err);
  if (curl_easy_getinfo (hj->h, CURLINFO_ACTIVESOCKET, &hj->fd) != CURLE_OK
      || hj->fd == CURL_SOCKET_BAD)
    return sr_error_set (err, EIO, "%s: no connection to the Docker daemon at %s", what,
                         d->endpoint);
  req = sr_xasprintf ("POST %s%s HTTP/1.1\r\nHost: %.*s\r\nUser-Agent: " PACKAGE_NAME
                      "/" PACKAGE_VERSION "\r\nContent-Type: application/json\r\n"
                      "Content-Length: %zu\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n%s",
                      host + host_len, path, (int) host_len, host, strlen (text), text);
  if (hijack_send (d, hj, req, strlen (req), deadline, err) < 0)
    goto out;
  while (head.len == 0 || (end = memmem (head.data, head.len, "\r\n\r\n", 4)) == NULL)
    {
      if (head.len > MAX_ERROR_BODY)
        {
          sr_error_set (err, EPROTO, "%s: the Docker daemon's answer has no end of headers", what);
          goto out;
        }
      if (hijack_recv_some (d, hj, &head, deadline, what, err) < 0)
        goto out;
    }
  end += 4;
  if (sscanf (head.data, "HTTP/%*s %ld", &status) != 1)
    {
      sr_error_set (err, EPROTO, "%s: the Docker daemon's answer is not HTTP", what);
      goto out;
    }
  if (status == 101 || status == 200)
    {
      sr_buf_append (early, end, head.len - (size_t) (end - head.data));
      r = 0;
      goto out;
    }
  /* An error: its JSON body, as long as Content-Length says.  */
  {
    _cleanup_free_ char *head_only = strndup (head.data, (size_t) (end - head.data));
    const char *cl = head_only ? strcasestr (head_only, "\r\nContent-Length:") : NULL;
    size_t want = cl ? strtoul (cl + 17, NULL, 10) : 0;

    if (head_only == NULL)
      sr_oom ();
    sr_buf_append (&msg, end, head.len - (size_t) (end - head.data));
    if (want > MAX_ERROR_BODY)
      want = MAX_ERROR_BODY;
    while (msg.len < want && hijack_recv_some (d, hj, &msg, deadline, what, NULL) == 0)
      ;
    api_error (status, &msg, errno_of_status (status), what, err);
  }
out:
  sr_buf_done (&head);
  sr_buf_done (&msg);
  return r;
}

static void
deliver_raw (struct stream *s, bool tty, const char *p, size_t n)
{
  if (tty)
    {
      /* A terminal's output is one stream, the command's stdout.  */
      s->type = 1;
      stream_deliver (s, p, n);
    }
  else
    on_stream_data ((char *) p, 1, n, s);
}

/* Starts exec_id (start_path, start) on a hijacked connection and relays until
 * its output ends: opts->stdin_fd to the command's stdin, its output to s.
 * The timeout and the cancel fd are enforced as supervise_stream does.  A
 * terminal stdin is put in raw mode, so that what is typed, ^C too,
 * reaches the command's terminal in the container untouched and is
 * interpreted there.  */
static int
relay_exec (struct sr_docker_container *c, const char *exec_id, const char *start_path,
            const cJSON *start, const struct sr_run_options *opts, bool tty, struct stream *s,
            struct supervise *sv, sr_error_t *err)
{
  struct hijack hj = { .fd = CURL_SOCKET_BAD };
  struct sr_buf early = { 0 };
  bool in_open = true;
  int r = -1;

  if (tty)
    {
      struct termios t;

      if (tcgetattr (opts->stdin_fd, &t) == 0)
        {
          cfmakeraw (&t);
          (void) tcsetattr (opts->stdin_fd, TCSANOW, &t);
        }
    }
  if (hijack_start (c->d, start_path, start, &hj, &early, "start the exec", err) < 0)
    goto out;
  supervise_start (sv, opts);
  s->status = 101;
  s->headers_done = true;
  if (early.len)
    deliver_raw (s, tty, early.data, early.len);
  if (tty)
    {
      /* The size a shell's programs format their output for.  */
      _cleanup_free_ char *resize = sr_xasprintf ("/exec/%s/resize?h=50&w=200", exec_id);
      struct sr_buf resp = { 0 };

      (void) request (c->d, "POST", resize, NULL, CONTROL_TIMEOUT_MS, &resp, NULL);
      sr_buf_done (&resp);
    }
  for (;;)
    {
      struct pollfd p[3] = {
        { .fd = hj.fd, .events = POLLIN },
        { .fd = in_open && !sv->killed ? opts->stdin_fd : -1, .events = POLLIN },
        { .fd = sv->killed ? -1 : opts->cancel_fd, .events = POLLIN },
      };
      int wait_ms;

      if (!supervise_tick (sv, &wait_ms))
        break;
      if (poll (p, 3, wait_ms) < 0)
        {
          if (errno == EINTR)
            continue;
          sr_error_set (err, errno, "poll");
          goto out;
        }
      if (p[2].revents & POLLIN)
        {
          sv->cancelled = true;
          supervise_kill (sv);
        }
      if (p[1].revents)
        {
          char buf[4096];
          ssize_t n = read (opts->stdin_fd, buf, sizeof buf);

          if (n < 0 && (errno == EINTR || errno == EAGAIN))
            ;
          else if (n <= 0
                   || hijack_send (c->d, &hj, buf, (size_t) n,
                                   sr_now_ns () + ATTACH_TIMEOUT_MS * 1000000ull, NULL) < 0)
            {
              /* No more input: a pipe's end reaches the command as EOF;
               * a terminal (EIO once its master is gone) has no end.  */
              in_open = false;
              if (!tty)
                (void) shutdown (hj.fd, SHUT_WR);
            }
        }
      if (p[0].revents)
        {
          char buf[16384];
          size_t n = 0;
          CURLcode rc = curl_easy_recv (hj.h, buf, sizeof buf, &n);

          if (rc == CURLE_AGAIN)
            continue;
          if (rc != CURLE_OK)
            {
              if (sv->killed)
                break;
              transport_error (c->d, hj.h, rc, hj.errbuf, 0, err);
              goto out;
            }
          if (n == 0)
            break;
          deliver_raw (s, tty, buf, n);
        }
    }
  r = 0;
out:
  hijack_done (&hj);
  sr_buf_done (&early);
  return r;
}

int
sr_docker_exec (struct sr_docker_container *c, const struct sr_exec_spec *spec,
                const struct sr_run_options *opts, struct sr_run_result *result,
                sr_error_t *err)
{
  _cleanup_json_ cJSON *body = cJSON_CreateObject (), *created = NULL, *start = NULL;
  _cleanup_json_ cJSON *info = NULL;
  _cleanup_free_ char *path = sr_xasprintf ("/containers/%s/exec", c->id), *spath = NULL;
  _cleanup_free_ char *exec_id = NULL;
  struct stream s = { .opts = opts };
  struct xfer x = { 0 };
  struct exec_ctx ec = { .c = c };
  struct supervise sv = { .kill = kill_exec, .kill_ctx = &ec };
  struct sr_buf resp = { 0 };
  size_t cap = opts->max_output ? opts->max_output : SR_DEFAULT_MAX_OUTPUT;
  struct timespec t0_wall = { 0 };
  bool tty = opts->stdin_fd >= 0 && isatty (opts->stdin_fd);
  const cJSON *id;
  long status;
  int r = -1;

  result_init (c->d, result, c->limits);
  s.out.cap = s.err.cap = cap;
  if (spec->argv == NULL || spec->argv[0] == NULL)
    return sr_error_set (err, EINVAL, "no command given");
  add_strv (body, "Cmd", spec->argv);
  add_env (body, spec->env);
  cJSON_AddStringToObject (body, "WorkingDir", spec->cwd ? spec->cwd : SR_DEFAULT_WORKDIR);
  cJSON_AddBoolToObject (body, "AttachStdin", opts->stdin_fd >= 0);
  cJSON_AddBoolToObject (body, "AttachStdout", true);
  cJSON_AddBoolToObject (body, "AttachStderr", true);
  cJSON_AddBoolToObject (body, "Tty", tty);
  if (*c->user)
    cJSON_AddStringToObject (body, "User", c->user);
  status = request (c->d, "POST", path, body, CONTROL_TIMEOUT_MS, &resp, err);
  if (status < 0)
    goto out;
  if (status == 409 || status == 404)
    {
      api_error (status, &resp, ESRCH, "the session's container is gone", err);
      goto out;
    }
  if (status != 201)
    {
      api_error (status, &resp, errno_of_status (status), "create an exec", err);
      goto out;
    }
  created = cJSON_Parse (resp.data ? resp.data : "");
  sr_buf_done (&resp);
  id = cJSON_GetObjectItemCaseSensitive (created, "Id");
  if (!cJSON_IsString (id))
    {
      sr_error_set (err, EPROTO, "create an exec: the daemon's answer has no Id");
      goto out;
    }
  exec_id = sr_xstrdup (id->valuestring);
  ec.exec_id = exec_id;

  spath = sr_xasprintf ("/exec/%s/start", exec_id);
  start = cJSON_CreateObject ();
  cJSON_AddBoolToObject (start, "Detach", false);
  cJSON_AddBoolToObject (start, "Tty", tty);
  sv.t0 = sr_now_ns ();
  clock_gettime (CLOCK_REALTIME, &t0_wall);
  if (opts->stdin_fd >= 0)
    {
      if (relay_exec (c, exec_id, spath, start, opts, tty, &s, &sv, err) < 0)
        goto out;
    }
  else
    {
      xfer_start (c->d, &x, spath, start, &s);
      if (xfer_until_headers (c->d, &x, &s, "start the exec", err) < 0)
        goto out;
      if (supervise_stream (c->d, &x, opts, &sv, err) < 0)
        goto out;
    }
  result->duration_ns = sr_now_ns () - sv.t0;

  /* The stream ends when the command's output closes; its exit code may
   * take a moment longer to be recorded.  */
  for (uint64_t until = sr_now_ns () + EXEC_SETTLE_MS * 1000000ull;;)
    {
      cJSON_Delete (info);
      info = NULL;
      if (exec_inspect (c, exec_id, &info, err) < 0)
        goto out;
      if (!json_bool (info, "Running") || sr_now_ns () >= until)
        break;
      usleep (10000);
    }
  ec.pid = json_int (info, "Pid", ec.pid);
  if (json_bool (info, "Running"))
    kill_exec (&ec);
  else
    /* What the command left running in its group dies with it.  */
    (void) kill_exec_group (c, ec.pid);
  if (!json_bool (info, "Running") && cJSON_IsNumber (cJSON_GetObjectItemCaseSensitive (info, "ExitCode")))
    set_exit (result, json_int (info, "ExitCode", -1));
  else
    result->signal = SIGKILL;
  set_status (result, &sv,
              result->signal == SIGKILL && !sv.timed_out && !sv.cancelled
                  && oom_event_since (c, t0_wall));
  r = 0;

out:
  xfer_done (&x);
  sr_buf_done (&resp);
  result->out = sr_capture_finish (&s.out);
  result->err = sr_capture_finish (&s.err);
  sr_buf_done (&s.body);
  return r;
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
  now = runner_id (hostname, (pid_t) pid);
  return now != NULL && strcmp (now, runner) == 0;
}

int
sr_docker_reap_orphans (struct sr_docker *d, unsigned *ret_removed, sr_error_t *err)
{
  _cleanup_free_ char *filters = escape ("{\"label\":[\"" SR_DOCKER_LABEL "\"]}");
  _cleanup_free_ char *path = sr_xasprintf ("/containers/json?all=1&filters=%s", filters);
  _cleanup_json_ cJSON *list = NULL;
  const cJSON *item;
  unsigned removed = 0;

  if (get_json (d, path, "list containers", &list, err) < 0)
    return -1;
  cJSON_ArrayForEach (item, list)
  {
    const cJSON *id = cJSON_GetObjectItemCaseSensitive (item, "Id");
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive (item, "Labels");
    const cJSON *runner = cJSON_GetObjectItemCaseSensitive (labels, SR_DOCKER_LABEL_RUNNER);

    if (!cJSON_IsString (id) || !cJSON_IsString (runner)
        || runner_alive (runner->valuestring, d->hostname))
      continue;
    remove_container (d, id->valuestring);
    removed++;
  }
  if (ret_removed)
    *ret_removed = removed;
  return 0;
}
