/* sandbox-runner image import|pull|list|inspect|rm|prune  */
#include "config.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/commands.h"
#include "common/config.h"
#include "common/util.h"
#include "image/store.h"

struct progress_view
{
  bool tty;
  enum sr_progress_stage last_stage;
  char last_digest[SR_DIGEST_LEN + 1];
};

static void
human_size (uint64_t n, char *buf, size_t len)
{
  if (n >= (1ull << 30))
    snprintf (buf, len, "%.1f GiB", (double) n / (double) (1ull << 30));
  else if (n >= (1ull << 20))
    snprintf (buf, len, "%.1f MiB", (double) n / (double) (1ull << 20));
  else if (n >= 1024)
    snprintf (buf, len, "%.1f KiB", (double) n / 1024.0);
  else
    snprintf (buf, len, "%llu B", (unsigned long long) n);
}

/* A bar redrawn in place on a terminal; one line per step otherwise.  */
static void
show_progress (const struct sr_progress *p, void *userdata)
{
  struct progress_view *v = userdata;
  const char *verb = p->stage == SR_PROGRESS_FETCH ? "fetch" : "extract";
  char done[32], total[32], what[64];
  bool new_step = strcmp (v->last_digest, p->digest) != 0 || v->last_stage != p->stage;

  human_size (p->current, done, sizeof done);
  human_size (p->total, total, sizeof total);
  if (p->layer)
    snprintf (what, sizeof what, "layer %zu/%zu %.19s", p->layer, p->n_layers, p->digest);
  else
    snprintf (what, sizeof what, "blob %.19s", p->digest);

  if (v->tty)
    {
      int width = 30, filled = p->total ? (int) ((double) p->current / (double) p->total * width)
                                        : 0;

      if (filled > width)
        filled = width;
      if (p->stage == SR_PROGRESS_DONE)
        fprintf (stderr, "\r\033[Kextracted %s (%s)\n", what, total);
      else
        fprintf (stderr, "\r\033[K%-7s %s [%.*s%*s] %s / %s", verb, what, filled,
                 "##############################", width - filled, "", done, total);
      fflush (stderr);
    }
  else if (p->stage == SR_PROGRESS_DONE)
    fprintf (stderr, "extracted %s (%s)\n", what, total);
  else if (new_step && p->stage == SR_PROGRESS_EXTRACT)
    fprintf (stderr, "extracting %s (%s)\n", what, total);
  else if (p->stage == SR_PROGRESS_FETCH && p->current == p->total)
    fprintf (stderr, "fetched %s (%s)\n", what, total);
  v->last_stage = p->stage;
  snprintf (v->last_digest, sizeof v->last_digest, "%s", p->digest);
}

static void
show_warning (const char *msg, void *userdata)
{
  struct progress_view *v = userdata;

  fprintf (stderr, "%swarning: %s\n", v && v->tty ? "\r\033[K" : "", msg);
}

void
sr_cli_show_progress (struct sr_store *s, bool quiet)
{
  static struct progress_view view;

  view.tty = isatty (STDERR_FILENO);
  if (!quiet)
    sr_store_set_progress (s, show_progress, &view);
  sr_store_set_warn (s, show_warning, &view);
}

int
sr_cli_open_store (const struct sr_config *cfg, bool create, struct sr_store **ret)
{
  sr_error_t err = NULL;

  if (sr_store_open_all (cfg->image_store, cfg->image_stores_readonly, create, ret, &err) < 0)
    {
      sr_cli_error ("%s", err->msg);
      sr_error_free (&err);
      return -1;
    }
  sr_store_set_caps (*ret, cfg->max_image_size, cfg->max_image_entries);
  return 0;
}

/* Prints the error and returns -1; but `sandbox-runner COMMAND --help`
 * still shows the usage, with the built-in defaults where the
 * configuration could not be read: a warning then, and 0.  */
static int
config_error (sr_error_t *err)
{
  bool help = sr_cli_argv[1] && sr_cli_argv[2]
              && (strcmp (sr_cli_argv[2], "--help") == 0 || strcmp (sr_cli_argv[2], "-h") == 0);

  sr_cli_error ("%s%s", help ? "warning: " : "", (*err)->msg);
  sr_error_free (err);
  return help ? 0 : -1;
}

int
sr_cli_read_config (struct sr_config *cfg)
{
  sr_error_t err = NULL;

  if (sr_config_read (cfg, NULL, NULL, &err) == 0 || config_error (&err) == 0)
    return 0;
  sr_config_done (cfg);
  return -1;
}

int
sr_cli_check_config (const struct sr_config *cfg)
{
  sr_error_t err = NULL;

  return sr_config_check (cfg, &err) < 0 ? config_error (&err) : 0;
}

int
sr_cli_load_config (struct sr_config *cfg)
{
  if (sr_cli_read_config (cfg) < 0)
    return -1;
  if (sr_cli_check_config (cfg) == 0)
    return 0;
  sr_config_done (cfg);
  return -1;
}

static int
fail (sr_error_t *err)
{
  sr_cli_error ("%s", (*err)->msg);
  sr_error_free (err);
  return SR_EXIT_RUNNER;
}

static void
format_time (time_t t, char *buf, size_t len)
{
  struct tm tm;

  gmtime_r (&t, &tm);
  strftime (buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

static cJSON *
strv_json (char *const *v)
{
  cJSON *a = cJSON_CreateArray ();

  for (; v && *v; v++)
    cJSON_AddItemToArray (a, cJSON_CreateString (*v));
  return a;
}

/* with_rootfs: also the path of its rootfs (inspect).  */
static cJSON *
info_json (const struct sr_image_info *i, bool with_rootfs)
{
  cJSON *o = cJSON_CreateObject ();
  char created[32];

  format_time (i->created, created, sizeof created);
  cJSON_AddStringToObject (o, "id", i->id);
  cJSON_AddItemToObject (o, "names", strv_json (i->names));
  cJSON_AddStringToObject (o, "manifest", i->manifest_digest);
  cJSON_AddStringToObject (o, "source", i->source);
  cJSON_AddStringToObject (o, "created", created);
  cJSON_AddNumberToObject (o, "size", (double) i->size);
  cJSON_AddNumberToObject (o, "layers", (double) i->n_layers);
  cJSON_AddStringToObject (o, "os", i->os ? i->os : "");
  cJSON_AddStringToObject (o, "architecture", i->architecture ? i->architecture : "");
  cJSON_AddItemToObject (o, "env", strv_json (i->env));
  cJSON_AddItemToObject (o, "entrypoint", strv_json (i->entrypoint));
  cJSON_AddItemToObject (o, "cmd", strv_json (i->cmd));
  cJSON_AddStringToObject (o, "working_dir", i->working_dir ? i->working_dir : "");
  cJSON_AddStringToObject (o, "user", i->user ? i->user : "");
  if (i->version)
    cJSON_AddStringToObject (o, "version", i->version);
  cJSON_AddStringToObject (o, "store", i->store);
  cJSON_AddBoolToObject (o, "read_only", i->readonly);
  if (with_rootfs)
    {
      _cleanup_free_ char *rootfs = sr_xasprintf ("%s/images/%s/rootfs", i->store, i->id);

      cJSON_AddStringToObject (o, "rootfs", rootfs);
    }
  return o;
}

static void
print_json (cJSON *o)
{
  _cleanup_free_ char *text = cJSON_Print (o);

  puts (text);
  cJSON_Delete (o);
}

/* s: NULL for a store not made yet, which has no images.  */
static int
cmd_list (int argc, char **argv, struct sr_store *s)
{
  struct sr_image_info *images = NULL;
  size_t n = 0;
  sr_error_t err = NULL;
  bool json = argc > 1 && strcmp (argv[1], "--json") == 0;

  if (argc > 2 || (argc == 2 && !json))
    {
      sr_cli_error ("usage: sandbox-runner image list [--json]");
      return SR_EXIT_RUNNER;
    }
  if (s && sr_store_list (s, &images, &n, &err) < 0)
    return fail (&err);
  if (json)
    {
      cJSON *a = cJSON_CreateArray ();

      for (size_t i = 0; i < n; i++)
        cJSON_AddItemToArray (a, info_json (&images[i], false));
      print_json (a);
    }
  else
    {
      printf ("%-32s %-12s %10s %6s  %-20s  %s\n", "NAME", "ID", "SIZE", "LAYERS", "CREATED",
              "STORE");
      for (size_t i = 0; i < n; i++)
        {
          char size[32], created[32];
          /* Where it comes from: one's own store, or another's read-only.  */
          _cleanup_free_ char *store = sr_xasprintf ("%s%s", images[i].store,
                                                     images[i].readonly ? " (read-only)" : "");

          human_size (images[i].size, size, sizeof size);
          format_time (images[i].created, created, sizeof created);
          if (images[i].names[0] == NULL)
            printf ("%-32s %.12s %10s %6zu  %-20s  %s\n", "<none>", images[i].id, size,
                    images[i].n_layers, created, store);
          for (char **name = images[i].names; *name; name++)
            printf ("%-32s %.12s %10s %6zu  %-20s  %s\n", *name, images[i].id, size,
                    images[i].n_layers, created, store);
        }
    }
  sr_image_info_free_array (images, n);
  return 0;
}

static int
cmd_inspect (int argc, char **argv, struct sr_store *s)
{
  cJSON *a = cJSON_CreateArray ();
  sr_error_t err = NULL;

  if (argc < 2)
    {
      cJSON_Delete (a);
      sr_cli_error ("usage: sandbox-runner image inspect NAME|ID...");
      return SR_EXIT_RUNNER;
    }
  for (int i = 1; i < argc; i++)
    {
      struct sr_image_info info = { 0 };

      if (sr_store_lookup (s, argv[i], &info, &err) < 0)
        {
          cJSON_Delete (a);
          return fail (&err);
        }
      cJSON_AddItemToArray (a, info_json (&info, true));
      sr_image_info_done (&info);
    }
  print_json (a);
  return 0;
}

static int
cmd_rm (int argc, char **argv, struct sr_store *s)
{
  bool force = false;
  int first = 1, status = 0;

  if (argc > 1 && (strcmp (argv[1], "-f") == 0 || strcmp (argv[1], "--force") == 0))
    {
      force = true;
      first = 2;
    }
  if (first >= argc)
    {
      sr_cli_error ("usage: sandbox-runner image rm [--force] NAME|ID...");
      return SR_EXIT_RUNNER;
    }
  for (int i = first; i < argc; i++)
    {
      sr_error_t err = NULL;

      if (sr_store_remove (s, argv[i], force, &err) < 0)
        status = fail (&err);
      else
        printf ("removed %s\n", argv[i]);
    }
  return status;
}

static int
cmd_prune (int argc, char **argv, struct sr_store *s)
{
  size_t images, blobs;
  uint64_t bytes;
  char size[32];
  sr_error_t err = NULL;

  if (argc != 1)
    {
      sr_cli_error ("usage: sandbox-runner image prune");
      return SR_EXIT_RUNNER;
    }
  if (sr_store_prune (s, &images, &blobs, &bytes, &err) < 0)
    return fail (&err);
  human_size (bytes, size, sizeof size);
  printf ("removed %zu images without a name and %zu unused blobs; %s freed\n", images, blobs,
          size);
  return 0;
}

static void
image_usage (FILE *f)
{
  fprintf (f, "usage: sandbox-runner image COMMAND [ARGS]\n"
              "  import [--name NAME] PATH    import an OCI layout or docker-save archive\n"
              "  pull REF                     pull from a registry\n"
              "  list [--json]                list the images in the store\n"
              "  inspect NAME|ID...           show an image (JSON)\n"
              "  rm [--force] NAME|ID...      remove a name, and the image with its last name\n"
              "  prune                        remove unnamed images and unused blobs\n");
}

int
sr_cmd_image (int argc, char **argv)
{
  static const struct
  {
    const char *name;
    int (*fn) (int argc, char **argv, struct sr_store *s);
    const char *help;
  } commands[] = {
    { "list", cmd_list, "Usage: sandbox-runner image list [--json]\n\n"
                        "Lists the images in the store, and in the read-only stores behind it\n"
                        "(image_stores_readonly), with their names, size, age and store.\n" },
    { "ls", cmd_list, "Usage: sandbox-runner image ls [--json]\n\nThe same as image list.\n" },
    { "inspect", cmd_inspect, "Usage: sandbox-runner image inspect NAME|ID...\n\n"
                              "Shows images as JSON.\n" },
    { "rm", cmd_rm, "Usage: sandbox-runner image rm [--force] NAME|ID...\n\n"
                    "Removes names; an image goes with its last name (at once with\n"
                    "--force).  An image a run is using is refused.\n" },
    { "prune", cmd_prune, "Usage: sandbox-runner image prune\n\n"
                          "Removes the images without a name and the blobs no image uses.\n" },
  };
  struct sr_config config = { 0 };
  struct sr_store *s = NULL;
  int status = SR_EXIT_RUNNER;

  if (argc < 2 || strcmp (argv[1], "--help") == 0 || strcmp (argv[1], "-h") == 0)
    {
      image_usage (argc < 2 ? stderr : stdout);
      return argc < 2 ? SR_EXIT_RUNNER : 0;
    }
  if (strcmp (argv[1], "pull") == 0)
    return sr_cmd_image_pull (argc - 1, argv + 1);
  if (strcmp (argv[1], "import") == 0)
    return sr_cmd_image_import (argc - 1, argv + 1);
  for (size_t i = 0; i < SR_ARRAY_SIZE (commands); i++)
    if (strcmp (argv[1], commands[i].name) == 0)
      {
        /* Before the store is opened: help needs no configuration.  */
        if (argc > 2 && (strcmp (argv[2], "--help") == 0 || strcmp (argv[2], "-h") == 0))
          {
            fputs (commands[i].help, stdout);
            return 0;
          }
        optind = 1;
        if (sr_cli_load_config (&config) == 0)
          {
            sr_error_t err = NULL;

            if (sr_store_open_all (config.image_store, config.image_stores_readonly, false, &s,
                                   &err) == 0)
              status = commands[i].fn (argc - 1, argv + 1, s);
            /* No store made yet, nor one to read: list shows none, and
             * does not make one.  */
            else if (commands[i].fn == cmd_list && err->errnum == ENOENT)
              {
                sr_error_free (&err);
                status = cmd_list (argc - 1, argv + 1, NULL);
              }
            else
              status = fail (&err);
          }
        sr_store_close (s);
        sr_config_done (&config);
        return status;
      }
  sr_cli_error ("image: unknown command '%s'", argv[1]);
  image_usage (stderr);
  return SR_EXIT_RUNNER;
}
