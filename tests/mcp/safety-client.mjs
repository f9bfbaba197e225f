// The audit trail and the safety nets of the file tools through the
// official MCP TypeScript SDK client: audit_query finding the calls just
// made; the syntax check refusing broken JSON, YAML and TOML with their
// line numbers and writing nothing; a sensitive-path warning; fuzzy
// file_patch; file_search newest first.  Over stdio, or over HTTP with
// --http URL TOKEN_A TOKEN_B, where the clients of two tokens each see
// only their own calls.
// Prints "RESULT 0|1 name" lines and "# ..." diagnostics for the shell test.
//   node safety-client.mjs SR_BIN SECRET
//   node safety-client.mjs --http URL TOKEN_A TOKEN_B
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const http = argv[0] === "--http";
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};

const connect = async (token = argv[2]) => {
  const transport = http
    ? new StreamableHTTPClientTransport(new URL(argv[1]),
      { requestInit: { headers: { Authorization: `Bearer ${token}` } } })
    : new StdioClientTransport({ command: argv[0], args: ["serve"], env: process.env, stderr: "inherit" });
  const client = new Client({ name: "sandbox-runner-safety-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
};
const call = (client, name, args) => client.callTool({ name, arguments: args });
const errorOf = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error : undefined;
  } catch {
    return undefined;
  }
};

if (http) {
  // The clients of two tokens: each audit_query shows its own calls only
  // (a token is one caller, whatever MCP session it opens).
  const a = await connect(argv[2]);
  const b = await connect(argv[3]);
  await call(a, "list_supported_languages", {});
  await call(b, "list_sessions", {});
  const ra = await call(a, "audit_query", {});
  const rb = await call(b, "audit_query", {});
  const ta = (ra.structuredContent?.calls ?? []).map((c) => c.tool);
  const tb = (rb.structuredContent?.calls ?? []).map((c) => c.tool);
  check(ta.includes("list_supported_languages") && !ta.includes("list_sessions"),
    "over HTTP, audit_query shows a client its own calls only", ta);
  check(tb.includes("list_sessions") && !tb.includes("list_supported_languages"),
    "and the other client its own", tb);
  const clients = new Set([...(ra.structuredContent?.calls ?? []), ...(rb.structuredContent?.calls ?? [])]
    .map((c) => c.client));
  check(clients.size === 2 && [...clients].every((c) => /^client:[0-9a-f]{16}$/.test(c)),
    "each client is recorded as a hash of its own", [...clients]);
  await a.close();
  await b.close();
  process.exit(0);
}

const secret = argv[1];
const client = await connect();
let r = await call(client, "create_session", { image: "python" });
const sid = r.structuredContent?.session_id;
check(typeof sid === "string", "create_session", r);

// --- the audit trail ---
await call(client, "run_code", { session_id: sid, language: "python", code: `print("${secret}")` });
await call(client, "file_write", { session_id: sid, path: "notes.txt", content: `${secret} in a file\n` });
await call(client, "run_code", { language: "no-such-language", code: "x" });
r = await call(client, "audit_query", { since: 600 });
let calls = r.structuredContent?.calls ?? [];
check(calls.length >= 4 && calls[0].tool === "run_code" && calls[1].tool === "file_write",
  "audit_query finds the calls just made, newest first", calls);
check(calls.every((c) => c.client === "stdio"), "over stdio the client is 'stdio'", calls);
check(calls[0]?.status === "unknown_language" && calls[1]?.status === "ok",
  "each call's status: ok or its error code", calls);
check(calls[1]?.machine === sid && calls[3]?.tool === "create_session" && calls[3]?.machine === sid,
  "the machine: the session a call named, or the one it created", calls);
check(calls.every((c) => /^sha256:[0-9a-f]{64}$/.test(c.args_sha256) && typeof c.duration_ms === "number"
  && /^\d{4}-\d\d-\d\dT/.test(c.timestamp)), "each row has a time, a duration and an arguments digest", calls);
check(!JSON.stringify(r).includes(secret), "no code nor file content in audit_query's answer");
r = await call(client, "audit_query", { tool: "file_write", machine: sid, status: "ok", limit: 1 });
calls = r.structuredContent?.calls ?? [];
check(calls.length === 1 && calls[0].tool === "file_write", "audit_query filters by tool, machine, status, limit", calls);
r = await call(client, "audit_query", { since: "2000-01-01T00:00:00Z", tool: "create_session" });
check(r.structuredContent?.calls?.length === 1, "since takes an ISO 8601 time", r.structuredContent);
r = await call(client, "shell_new", { session_id: sid });
await call(client, "shell_exec", { shell_id: r.structuredContent?.shell_id, command: "true" });
r = await call(client, "audit_query", { tool: "shell_exec" });
check(r.structuredContent?.calls?.[0]?.machine === sid, "a shell's call is recorded on its session", r);
r = await call(client, "audit_query", { since: "last tuesday" });
check(errorOf(r)?.code === "invalid_arguments", "a since it cannot read is invalid_arguments", r);

// --- the syntax check ---
const lint = async (path, content, syntax, line) => {
  const w = await call(client, "file_write", { session_id: sid, path, content });
  const e = errorOf(w);
  check(e?.code === "lint_failed" && e.message.includes(`line ${line},`) && e.message.includes(syntax),
    `broken ${syntax} is refused with lint_failed at line ${line}`, w);
  const rd = await call(client, "file_read", { session_id: sid, path });
  check(errorOf(rd)?.code === "not_found", `and the ${syntax} file is not written`, rd);
};
await lint("bad.json", '{\n  "a": 1,\n  "b" 2\n}\n', "JSON", 3);
await lint("bad.yaml", "a: 1\nb: [1, 2\nc: 3\n", "YAML", 3);
await lint("cfg/bad.toml", 'title = "x"\n[server]\nport = = 80\n', "TOML", 3);
for (const [path, content] of [["good.json", '{"a": [1, 2]}\n'], ["good.yml", "a:\n  - 1\n"],
  ["good.toml", '[server]\nport = 8080\nhosts = ["a", "b"]\n']]) {
  r = await call(client, "file_write", { session_id: sid, path, content });
  check(!r.isError && r.structuredContent?.size === content.length, `valid ${path} is written`, r);
}
r = await call(client, "file_patch", { session_id: sid, path: "good.json", old_string: "[1, 2]", new_string: "[1, 2" });
check(errorOf(r)?.code === "lint_failed", "file_patch refuses a result that is not JSON", r);
r = await call(client, "file_read", { session_id: sid, path: "good.json" });
check(r.structuredContent?.content?.includes("[1, 2]}"), "and leaves the file as it was", r);

// --- sensitive paths ---
r = await call(client, "file_write", { session_id: sid, path: ".env", content: "TOKEN=x\n" });
check(!r.isError && r.structuredContent?.warnings?.length === 1 && r.structuredContent.warnings[0].includes(".env"),
  "writing .env succeeds with a sensitive-path warning", r);
r = await call(client, "file_read", { session_id: sid, path: "/mnt/data/.env" });
check(r.structuredContent?.warnings?.length === 1, "reading it warns too", r);
r = await call(client, "file_read", { session_id: sid, path: "notes.txt" });
check(Array.isArray(r.structuredContent?.warnings) && r.structuredContent.warnings.length === 0,
  "an ordinary file has no warning", r);
r = await call(client, "file_search", { session_id: sid, pattern: "TOKEN" });
check(r.structuredContent?.warnings?.length === 1, "file_search warns of a sensitive file it matched", r);

// --- fuzzy file_patch ---
await call(client, "file_write", { session_id: sid, path: "w.py", content: "def f():\r\n    if x:\r\n        return 1\r\n    return 2\r\n" });
r = await call(client, "file_patch", { session_id: sid, path: "w.py", old_string: "if x:\nreturn 1\n", new_string: "if y:\n    return 10\n" });
check(!r.isError && r.structuredContent?.match === "fuzzy" && r.structuredContent?.replacements === 1,
  "file_patch matches ignoring indentation and CRLF, and says fuzzy", r);
r = await call(client, "file_read", { session_id: sid, path: "w.py" });
check(r.structuredContent?.content === "     1\tdef f():\r\n     2\t    if y:\r\n     3\t        return 10\r\n     4\t    return 2\r\n",
  "the new lines take the file's indentation and CRLF", r.structuredContent?.content);
r = await call(client, "file_patch", { session_id: sid, path: "w.py", old_string: "return 2", new_string: "return 3" });
check(r.structuredContent?.match === "exact", "an exact match says exact", r);
await call(client, "file_write", { session_id: sid, path: "amb.py", content: "if a:\n    pass\nif b:\n        pass\n" });
r = await call(client, "file_patch", { session_id: sid, path: "amb.py", old_string: "  pass", new_string: "x" });
check(errorOf(r)?.code === "ambiguous_match", "an ambiguous fuzzy match is refused", r);

// --- file_search newest first ---
await call(client, "run_code", { session_id: sid, language: "python", code: [
  "import os",
  "os.makedirs('/mnt/data/t', exist_ok=True)",
  "for name, t in (('a.txt', 1_000_000_000), ('b.txt', 1_700_000_000), ('c.txt', 1_600_000_000)):",
  "    open('/mnt/data/t/' + name, 'w').write('needle\\n')",
  "    os.utime('/mnt/data/t/' + name, (t, t))",
].join("\n") });
r = await call(client, "file_search", { session_id: sid, pattern: "needle", path: "t" });
const order = (r.structuredContent?.matches ?? []).map((m) => m.path.replace("/mnt/data/t/", ""));
check(order.join(",") === "b.txt,c.txt,a.txt", "file_search lists the newest files first", r);
check(r.structuredContent?.matches?.[0]?.mtime?.startsWith("2023-11-14T"), "with each file's mtime", r);
r = await call(client, "file_search", { session_id: sid, pattern: "needle", path: "t", limit: 1 });
check(r.structuredContent?.matches?.length === 1 && r.structuredContent.matches[0].path.endsWith("b.txt")
  && r.structuredContent.truncated === true, "a limit keeps the newest", r);

await call(client, "close_session", { session_id: sid });
await client.close();
