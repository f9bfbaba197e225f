#!/bin/sh
# Every tool schema of src/mcp/schemas is valid JSON Schema 2020-12: its
# inputSchema and outputSchema pass Draft202012Validator.check_schema
# (python3-jsonschema), and the file holds what tools/list says of the
# tool named as the file is.
src=${SR_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
python3 -c 'import jsonschema; jsonschema.Draft202012Validator' 2>/dev/null ||
  { echo "1..0 # SKIP python3-jsonschema (4.10 or later) is not installed"; exit 0; }
exec python3 - "$src"/src/mcp/schemas/*.json <<'PY'
import json, os, sys
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

n = failed = 0
def check(cond, name, why=""):
    global n, failed
    n += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, name))
    if not cond:
        failed += 1
        for line in str(why).splitlines()[:20]:
            print("#   " + line)

for path in sys.argv[1:]:
    tool = os.path.basename(path)[:-len(".json")]
    try:
        with open(path, encoding="utf-8") as f:
            t = json.load(f)
    except ValueError as e:
        check(False, "%s is JSON" % tool, e)
        continue
    check(isinstance(t, dict) and t.get("name") == tool, "%s names the tool of its file" % tool)
    if not isinstance(t, dict):
        continue
    for key in ("title", "description"):
        check(isinstance(t.get(key), str) and t[key] != "", "%s has a %s" % (tool, key))
    check(isinstance(t.get("annotations"), dict), "%s has annotations" % tool)
    for key in ("inputSchema", "outputSchema"):
        schema = t.get(key)
        try:
            Draft202012Validator.check_schema(schema)
            valid, why = isinstance(schema, dict) and schema.get("type") == "object", "not of type object"
        except SchemaError as e:
            valid, why = False, e
        check(valid, "%s's %s is a valid JSON Schema 2020-12 of an object" % (tool, key), why)
check(n > 0, "there are tool schemas")
print("1..%d" % n)
sys.exit(1 if failed else 0)
PY
