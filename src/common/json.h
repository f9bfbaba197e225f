/* cJSON with a cleanup attribute: `_cleanup_json_ cJSON *root = ...;`  */
#ifndef SR_JSON_H
#define SR_JSON_H

#include <cjson/cJSON.h>

#include "common/util.h"

static inline void
sr_json_deletep (cJSON **p)
{
  cJSON_Delete (*p);
}
#define _cleanup_json_ _cleanup_ (sr_json_deletep)

#endif
