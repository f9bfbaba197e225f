/* A run's result as the JSON object the CLI prints with --json (and the
 * shape the MCP tools reuse).  */
#ifndef SR_RESULT_JSON_H
#define SR_RESULT_JSON_H

#include <cjson/cJSON.h>

#include "common/run-result.h"

cJSON *sr_result_to_json (const struct sr_run_result *r);
/* {"status":"error","error":"pivot_root: Invalid argument", ...} for a run
 * that failed before its command ran.  */
cJSON *sr_setup_error_to_json (const struct sr_run_result *r, const char *message);

#endif
