#include "config.h"

#include "mcp/tool-args.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

static const char *
keyword_string (const cJSON *schema, const char *name)
{
  const cJSON *k = cJSON_GetObjectItemCaseSensitive (schema, name);

  return cJSON_IsString (k) ? k->valuestring : NULL;
}

static const cJSON *
keyword_number (const cJSON *schema, const char *name)
{
  const cJSON *k = cJSON_GetObjectItemCaseSensitive (schema, name);

  return cJSON_IsNumber (k) ? k : NULL;
}

/* Appends to *s (NULL: empty).  */
static void __attribute__ ((format (printf, 2, 3)))
append (char **s, const char *fmt, ...)
{
  _cleanup_free_ char *old = *s, *more = NULL;
  va_list ap;

  va_start (ap, fmt);
  more = sr_xvasprintf (fmt, ap);
  va_end (ap);
  *s = sr_xasprintf ("%s%s", old ? old : "", more);
}

/* " from 1 to 1000", " of at least 1", " above 0 and at most 5", or "".  */
static void
describe_range (char **s, const cJSON *schema)
{
  const cJSON *min = keyword_number (schema, "minimum");
  const cJSON *xmin = keyword_number (schema, "exclusiveMinimum");
  const cJSON *max = keyword_number (schema, "maximum");
  const cJSON *xmax = keyword_number (schema, "exclusiveMaximum");
  const char *sep = " ";

  if (min && max && !xmin && !xmax)
    {
      append (s, " from %g to %g", min->valuedouble, max->valuedouble);
      return;
    }
  if (min || (max && !xmin))
    sep = " of ";
  if (min)
    append (s, "%sat least %g", sep, min->valuedouble);
  if (xmin)
    append (s, "%sabove %g", min ? " and " : sep, xmin->valuedouble);
  if (max)
    append (s, "%sat most %g", min || xmin ? " and " : sep, max->valuedouble);
  if (xmax)
    append (s, "%sbelow %g", min || xmin || max ? " and " : sep, xmax->valuedouble);
}

static void
describe_length (char **s, const cJSON *schema)
{
  const cJSON *min = keyword_number (schema, "minLength");
  const cJSON *max = keyword_number (schema, "maxLength");

  if (min && max)
    append (s, " of %g to %g characters", min->valuedouble, max->valuedouble);
  else if (min)
    append (s, " of at least %g characters", min->valuedouble);
  else if (max)
    append (s, " of at most %g characters", max->valuedouble);
}

/* What a value of schema is, for a message: "a string", "true or false",
 * "an integer from 1 to 1000", "one of \"a\", \"b\"".  */
static char *
describe (const cJSON *schema)
{
  const cJSON *values = cJSON_GetObjectItemCaseSensitive (schema, "enum"), *v;
  const char *type = keyword_string (schema, "type");
  char *s = NULL;

  if (cJSON_IsArray (values))
    {
      const char *sep = "one of ";

      cJSON_ArrayForEach (v, values)
        {
          _cleanup_free_ char *text = cJSON_PrintUnformatted (v);

          append (&s, "%s%s", sep, text);
          sep = ", ";
        }
      return s ? s : sr_xstrdup ("one of no value");
    }
  if (type == NULL)
    return sr_xstrdup ("valid");
  if (strcmp (type, "boolean") == 0)
    return sr_xstrdup ("true or false");
  if (strcmp (type, "integer") == 0 || strcmp (type, "number") == 0)
    {
      append (&s, "a%s %s", *type == 'i' ? "n" : "", type);
      describe_range (&s, schema);
      return s;
    }
  append (&s, "%s %s", strchr ("aeiou", *type) ? "an" : "a", type);
  if (strcmp (type, "string") == 0)
    describe_length (&s, schema);
  return s;
}

static bool
has_type (const cJSON *v, const char *type)
{
  if (strcmp (type, "string") == 0)
    return cJSON_IsString (v);
  if (strcmp (type, "boolean") == 0)
    return cJSON_IsBool (v);
  if (strcmp (type, "object") == 0)
    return cJSON_IsObject (v);
  if (strcmp (type, "array") == 0)
    return cJSON_IsArray (v);
  if (strcmp (type, "null") == 0)
    return cJSON_IsNull (v);
  if (!cJSON_IsNumber (v) || !isfinite (v->valuedouble))
    return false;
  if (strcmp (type, "number") == 0)
    return true;
  return strcmp (type, "integer") == 0 && v->valuedouble == floor (v->valuedouble)
         && fabs (v->valuedouble) <= SR_MCP_INTEGER_MAX;
}

static bool
in_range (const cJSON *schema, double x)
{
  const cJSON *k;

  return (!(k = keyword_number (schema, "minimum")) || x >= k->valuedouble)
         && (!(k = keyword_number (schema, "exclusiveMinimum")) || x > k->valuedouble)
         && (!(k = keyword_number (schema, "maximum")) || x <= k->valuedouble)
         && (!(k = keyword_number (schema, "exclusiveMaximum")) || x < k->valuedouble);
}

/* In characters (code points), as JSON Schema counts; s is UTF-8.  */
static bool
in_length (const cJSON *schema, const char *s)
{
  const cJSON *min = keyword_number (schema, "minLength");
  const cJSON *max = keyword_number (schema, "maxLength");
  double n = 0;

  for (; *s; s++)
    n += ((unsigned char) *s & 0xC0) != 0x80;
  return (!min || n >= min->valuedouble) && (!max || n <= max->valuedouble);
}

static bool
in_enum (const cJSON *schema, const cJSON *v)
{
  const cJSON *values = cJSON_GetObjectItemCaseSensitive (schema, "enum"), *e;

  if (values == NULL)
    return true;
  cJSON_ArrayForEach (e, values)
    if (cJSON_Compare (v, e, true))
      return true;
  return false;
}

/* Whether v meets the rules of schema on itself (not on its members).  */
static bool
meets_own_rules (const cJSON *schema, const cJSON *v)
{
  const char *type = keyword_string (schema, "type");

  if (type && !has_type (v, type))
    return false;
  if (!in_enum (schema, v))
    return false;
  if (cJSON_IsNumber (v) && !in_range (schema, v->valuedouble))
    return false;
  return !cJSON_IsString (v) || in_length (schema, v->valuestring);
}

static char *check_value (const cJSON *schema, const cJSON *v, const char *path, bool required);

/* The name of member name of the object at path ("" for the arguments).  */
static char *
member_path (const char *path, const char *name)
{
  return *path ? sr_xasprintf ("%s.%s", path, name) : sr_xstrdup (name);
}

static bool
is_required (const cJSON *schema, const char *name)
{
  const cJSON *required = cJSON_GetObjectItemCaseSensitive (schema, "required"), *r;

  cJSON_ArrayForEach (r, required)
    if (cJSON_IsString (r) && strcmp (r->valuestring, name) == 0)
      return true;
  return false;
}

/* The members of object v that properties does not name.  */
static char *
check_additional (const cJSON *schema, const cJSON *v, const char *path)
{
  const cJSON *properties = cJSON_GetObjectItemCaseSensitive (schema, "properties");
  const cJSON *extra = cJSON_GetObjectItemCaseSensitive (schema, "additionalProperties");
  const cJSON *m;

  if (extra == NULL || cJSON_IsTrue (extra))
    return NULL;
  cJSON_ArrayForEach (m, v)
    {
      _cleanup_free_ char *name = NULL;
      char *msg;

      if (cJSON_GetObjectItemCaseSensitive (properties, m->string))
        continue;
      if (!cJSON_IsObject (extra))
        return *path ? sr_xasprintf ("unknown property '%s' in %s", m->string, path)
                     : sr_xasprintf ("unknown argument '%s'", m->string);
      name = member_path (path, m->string);
      if ((msg = check_value (extra, m, name, false)))
        return msg;
    }
  return NULL;
}

static char *
check_object (const cJSON *schema, const cJSON *v, const char *path)
{
  const cJSON *properties = cJSON_GetObjectItemCaseSensitive (schema, "properties");
  const cJSON *required = cJSON_GetObjectItemCaseSensitive (schema, "required");
  const cJSON *p, *r;
  char *msg;

  if ((msg = check_additional (schema, v, path)))
    return msg;
  cJSON_ArrayForEach (p, properties)
    {
      _cleanup_free_ char *name = member_path (path, p->string);

      if ((msg = check_value (p, cJSON_GetObjectItemCaseSensitive (v, p->string), name,
                              is_required (schema, p->string))))
        return msg;
    }
  cJSON_ArrayForEach (r, required)
    {
      const cJSON *m = cJSON_IsString (r) ? cJSON_GetObjectItemCaseSensitive (v, r->valuestring)
                                         : NULL;

      if (cJSON_IsString (r) && (m == NULL || cJSON_IsNull (m))
          && !cJSON_GetObjectItemCaseSensitive (properties, r->valuestring))
        {
          _cleanup_free_ char *name = member_path (path, r->valuestring);

          return sr_xasprintf ("%s is required", name);
        }
    }
  return NULL;
}

static char *
check_items (const cJSON *schema, const cJSON *v, const char *path)
{
  const cJSON *items = cJSON_GetObjectItemCaseSensitive (schema, "items"), *e;
  size_t i = 0;
  char *msg;

  if (!cJSON_IsObject (items))
    return NULL;
  cJSON_ArrayForEach (e, v)
    {
      _cleanup_free_ char *name = sr_xasprintf ("%s[%zu]", path, i++);

      if ((msg = check_value (items, e, name, false)))
        return msg;
    }
  return NULL;
}

/* v (NULL or null: absent) of schema, named path.  */
static char *
check_value (const cJSON *schema, const cJSON *v, const char *path, bool required)
{
  if (v == NULL || cJSON_IsNull (v))
    v = NULL;
  if (v == NULL && !required)
    return NULL;
  if (v == NULL || !meets_own_rules (schema, v))
    {
      _cleanup_free_ char *what = describe (schema);

      return sr_xasprintf ("%s %smust be %s", path, required ? "is required and " : "", what);
    }
  if (cJSON_IsObject (v))
    return check_object (schema, v, path);
  if (cJSON_IsArray (v))
    return check_items (schema, v, path);
  return NULL;
}

char *
sr_mcp_args_check (const cJSON *schema, const cJSON *args)
{
  if (args == NULL)
    {
      static const cJSON none = { .type = cJSON_Object };

      args = &none;
    }
  if (!cJSON_IsObject (args))
    return sr_xstrdup ("arguments must be an object");
  return check_object (schema, args, "");
}

void
sr_mcp_schema_add_aliases (cJSON *schema, const struct sr_mcp_arg_alias *v, size_t n)
{
  cJSON *properties = cJSON_GetObjectItemCaseSensitive (schema, "properties");

  for (size_t i = 0; i < n; i++)
    {
      const cJSON *target = cJSON_GetObjectItemCaseSensitive (properties, v[i].name);
      const char *what;
      _cleanup_free_ char *text = NULL;
      cJSON *alias, *m, *next;

      if (target == NULL || cJSON_GetObjectItemCaseSensitive (properties, v[i].alias))
        continue;
      what = keyword_string (target, "description");
      text = what ? sr_xasprintf ("Alias of %s: %s", v[i].name, what)
                  : sr_xasprintf ("Alias of %s", v[i].name);
      alias = cJSON_Duplicate (target, true);
      cJSON_DeleteItemFromObjectCaseSensitive (alias, "description");
      cJSON_AddStringToObject (alias, "description", text);
      /* Added last, then the members after its name moved after it, so
       * that it follows its name.  */
      cJSON_AddItemToObject (properties, v[i].alias, alias);
      for (m = target->next; m && m != alias; m = next)
        {
          next = m->next;
          cJSON_AddItemToArray (properties, cJSON_DetachItemViaPointer (properties, m));
        }
    }
}

char *
sr_mcp_args_unalias (const cJSON *schema, cJSON *args, const struct sr_mcp_arg_alias *v,
                     size_t n)
{
  const cJSON *properties = cJSON_GetObjectItemCaseSensitive (schema, "properties");

  if (!cJSON_IsObject (args))
    return NULL;
  for (size_t i = 0; i < n; i++)
    {
      cJSON *alias = cJSON_GetObjectItemCaseSensitive (args, v[i].alias);
      const cJSON *name = sr_mcp_arg (args, v[i].name);

      /* An alias the tool does not take stays, for the check to name; so
       * does an argument of the tool's own of that name (default_set's
       * machine is no session_id).  */
      if (alias == NULL || !cJSON_GetObjectItemCaseSensitive (properties, v[i].alias)
          || !cJSON_GetObjectItemCaseSensitive (properties, v[i].name))
        continue;
      if (cJSON_IsNull (alias) || (name && cJSON_Compare (alias, name, true)))
        {
          cJSON_DeleteItemFromObjectCaseSensitive (args, v[i].alias);
          continue;
        }
      if (name)
        return sr_xasprintf ("%s and %s are both given, with different values", v[i].alias,
                             v[i].name);
      cJSON_DeleteItemFromObjectCaseSensitive (args, v[i].name);
      cJSON_DetachItemViaPointer (args, alias);
      cJSON_AddItemToObject (args, v[i].name, alias);
    }
  return NULL;
}

static const char *const supported_keywords[] = {
  "type",    "enum",      "minimum",    "maximum",  "exclusiveMinimum",     "exclusiveMaximum",
  "minLength", "maxLength", "properties", "required", "additionalProperties", "items",
  "title",   "description",
};

char *
sr_mcp_schema_check_supported (const cJSON *schema)
{
  const cJSON *k, *p;
  char *msg;

  if (cJSON_IsBool (schema))
    return NULL;
  if (!cJSON_IsObject (schema))
    return sr_xstrdup ("a schema must be an object or a boolean");
  cJSON_ArrayForEach (k, schema)
    {
      bool known = false;

      for (size_t i = 0; i < SR_ARRAY_SIZE (supported_keywords); i++)
        known |= strcmp (k->string, supported_keywords[i]) == 0;
      if (!known)
        return sr_xasprintf ("the keyword %s is not enforced", k->string);
    }
  cJSON_ArrayForEach (p, cJSON_GetObjectItemCaseSensitive (schema, "properties"))
    if ((msg = sr_mcp_schema_check_supported (p)))
      return msg;
  if ((k = cJSON_GetObjectItemCaseSensitive (schema, "additionalProperties"))
      && (msg = sr_mcp_schema_check_supported (k)))
    return msg;
  if ((k = cJSON_GetObjectItemCaseSensitive (schema, "items")))
    return sr_mcp_schema_check_supported (k);
  return NULL;
}

const cJSON *
sr_mcp_arg (const cJSON *args, const char *name)
{
  const cJSON *a = cJSON_GetObjectItemCaseSensitive (args, name);

  return cJSON_IsNull (a) ? NULL : a;
}

const char *
sr_mcp_arg_string (const cJSON *args, const char *name)
{
  const cJSON *a = sr_mcp_arg (args, name);

  return cJSON_IsString (a) ? a->valuestring : NULL;
}

bool
sr_mcp_arg_bool (const cJSON *args, const char *name, bool absent)
{
  const cJSON *a = sr_mcp_arg (args, name);

  return cJSON_IsBool (a) ? cJSON_IsTrue (a) : absent;
}

uint64_t
sr_mcp_arg_count (const cJSON *args, const char *name, uint64_t absent)
{
  const cJSON *a = sr_mcp_arg (args, name);

  if (!cJSON_IsNumber (a) || !(a->valuedouble >= 0 && a->valuedouble <= SR_MCP_INTEGER_MAX))
    return absent;
  return (uint64_t) a->valuedouble;
}

bool
sr_mcp_arg_number (const cJSON *args, const char *name, double *ret)
{
  const cJSON *a = sr_mcp_arg (args, name);

  if (!cJSON_IsNumber (a))
    return false;
  *ret = a->valuedouble;
  return true;
}
