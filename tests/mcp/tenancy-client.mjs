// Sessions belong to whoever made them, through the official MCP
// TypeScript SDK client over HTTP: two callers (two bearer tokens, or two
// MCP sessions when the server has no tokens) cannot see, use or close
// each other's sandbox sessions, and an artifact's download_url, built
// from the Host the client used, works from a plain client without the
// bearer header until it expires.  Prints "RESULT 0|1 name" lines and
// "# ..." diagnostics for the shell test.
//   node tenancy-client.mjs tokens URL TOKEN_A TOKEN_B TTL_SECONDS
//   node tenancy-client.mjs mcp-sessions URL
// URL names the server as http://localhost:PORT/mcp.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [mode, url, tokenA, tokenB, ttl] = process.argv.slice(2);
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const b64 = (s) => Buffer.from(s).toString("base64");
const bearer = (token) => (token ? { Authorization: `Bearer ${token}` } : {});

const connect = async (token) => {
  const transport = new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: bearer(token) } });
  const client = new Client({ name: "sandbox-runner-tenancy-test", version: "1.0.0" });
  await client.connect(transport);
  return { client, transport };
};
const call = (c, name, args) => c.client.callTool({ name, arguments: args });
const errorCode = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error?.code : undefined;
  } catch {
    return undefined;
  }
};
const listed = async (c) =>
  ((await call(c, "list_sessions", {})).structuredContent?.sessions ?? []).map((s) => s.session_id);

// quota: a server with max_sessions_per_owner = 2.  A client gets two
// sessions, not a third; another client still gets its own.
if (mode === "quota") {
  const qa = await connect(tokenA);
  const qb = await connect(tokenB);
  const make = async (c) => call(c, "create_session", {});
  const r1 = await make(qa), r2 = await make(qa), r3 = await make(qa);
  check(!r1.isError && !r2.isError && errorCode(r3) === "session_limit"
    && JSON.parse(r3.content[0].text).error.message.includes("max_sessions_per_owner"),
  "a client past max_sessions_per_owner is refused with session_limit, naming the setting", r3);
  const rb = await make(qb);
  check(!rb.isError, "while another client still gets a session", rb);
  await call(qa, "close_session", { session_id: r1.structuredContent?.session_id });
  check(!(await make(qa)).isError, "and a client that closed one may make another");
  await qa.client.close();
  await qb.client.close();
  process.exit(0);
}

const tokens = mode === "tokens";
const who = tokens ? "token" : "MCP session";
const a = await connect(tokenA);
const b = await connect(tokenB);

// A makes a session with a file in it; B makes one of its own.
const csv = "x,y\n1,2\n";
let r = await call(a, "upload_file", { filename: "data.csv", content_base64: b64(csv) });
const sid = r.structuredContent?.session_id;
check(typeof sid === "string", `${who} A makes a session`, r);
r = await call(b, "create_session", {});
const bsid = r.structuredContent?.session_id;
check(typeof bsid === "string", `${who} B makes one`, r);

check((await listed(a)).includes(sid) && !(await listed(a)).includes(bsid),
  `list_sessions of A lists A's session and not B's`);
check(!(await listed(b)).includes(sid) && (await listed(b)).includes(bsid),
  `list_sessions of B lists B's session and not A's`);

// Every tool that takes a session_id answers B as for a missing session.
const tries = [
  ["run_code", { session_id: sid, language: "python", code: "print(1)" }],
  ["list_artifacts", { session_id: sid }],
  ["read_artifact", { session_id: sid, path: "data.csv" }],
  ["upload_file", { session_id: sid, filename: "b.txt", content_base64: b64("b") }],
  ["file_read", { session_id: sid, path: "data.csv" }],
  ["file_write", { session_id: sid, path: "b.txt", content: "b" }],
  ["file_search", { session_id: sid, pattern: "x" }],
  ["shell_new", { session_id: sid }],
  ["close_session", { session_id: sid }],
];
for (const [tool, args] of tries) {
  r = await call(b, tool, args);
  check(errorCode(r) === "session_not_found", `${tool} by B on A's session is session_not_found`, r);
}
r = await call(b, "run_code", { session_id: "0".repeat(32), language: "python", code: "print(1)" });
const missing = JSON.parse(r.content?.[0]?.text ?? "{}").error?.message ?? "";
check(errorCode(r) === "session_not_found", "a session that does not exist is session_not_found too", r);
// The same words, but for the id: nothing tells B that A's exists.
r = await call(b, "run_code", { session_id: sid, language: "python", code: "print(1)" });
check(JSON.parse(r.content?.[0]?.text ?? "{}").error?.message === missing.replaceAll("0".repeat(32), sid),
  "and the refusal reads the same as for a missing session (no existence oracle)", [r, missing]);

// Resources go through the same lookup: B lists none of A's files and
// cannot read one by its URI.
const uri = `sandbox://sessions/${sid}/files/data.csv`;
const listedUris = async (c) => {
  const uris = [];
  let cursor;
  do {
    const page = await c.client.listResources(cursor ? { cursor } : {});
    uris.push(...page.resources.map((x) => x.uri));
    cursor = page.nextCursor;
  } while (cursor && uris.length < 5000);
  return uris;
};
check((await listedUris(a)).includes(uri), "resources/list of A lists A's file");
check(!(await listedUris(b)).some((u) => u.includes(sid)), "resources/list of B lists none of A's files");
const readErr = await b.client.readResource({ uri }).then(() => undefined, (e) => e);
check(readErr !== undefined, "resources/read by B of A's file is refused", readErr?.message);

// A's shells are A's: B cannot use or remove one by its id.
r = await call(a, "shell_new", { session_id: sid });
const shell = r.structuredContent?.shell_id;
check(typeof shell === "string", "A starts a shell in its session", r);
r = await call(b, "shell_exec", { shell_id: shell, command: "echo hi" });
check(errorCode(r) === "shell_not_found", "shell_exec by B on A's shell is shell_not_found", r);
r = await call(b, "shell_remove", { shell_id: shell });
check(errorCode(r) === "shell_not_found", "shell_remove by B on A's shell is shell_not_found", r);
r = await call(b, "shell_list", {});
check(!(r.structuredContent?.shells ?? []).some((s) => s.shell_id === shell),
  "shell_list of B does not list A's shell", r);

// The run history is A's and B's apart: each lists only its own runs.
r = await call(a, "run_code", { language: "python", code: "print('run of A')" });
const runA = r.structuredContent?.run_id;
r = await call(b, "run_code", { language: "python", code: "print('run of B')" });
const runB = r.structuredContent?.run_id;
const history = async (c) => ((await call(c, "get_execution_history", { limit: 1000 })).structuredContent
  ?.runs ?? []).map((x) => x.run_id ?? x.id);
const ha = await history(a), hb = await history(b);
check(typeof runA === "string" && ha.includes(runA) && !ha.includes(runB),
  `get_execution_history of A lists A's run, not B's (${who})`, ha);
check(typeof runB === "string" && hb.includes(runB) && !hb.includes(runA),
  `and B's lists B's only (${who})`, hb);

// The download URL: from the Host A used, signed, usable without headers.
r = await call(a, "list_artifacts", { session_id: sid });
const link = r.structuredContent?.artifacts?.find((x) => x.path === "data.csv")?.download_url ?? "";
const origin = new URL(url).origin;
check(link.startsWith(`${origin}/files/`) && link.includes(`.${sid}/data.csv?expires=`)
    && /&sig=[0-9a-f]{64}$/.test(link),
  "download_url is built from the Host the client used and carries expires and sig", link);
let res = await fetch(link);
check(res.status === 200 && (await res.text()) === csv,
  "a plain client (no bearer header, no MCP session) downloads the file by its download_url", res.status);
const bare = link.split("?")[0];
res = await fetch(bare, { headers: { ...bearer(tokenA), "Mcp-Session-Id": a.transport.sessionId } });
check(res.status === 200, "A downloads the bare URL as itself (its token or its MCP session)", res.status);
res = await fetch(bare, { headers: { ...bearer(tokenB), "Mcp-Session-Id": b.transport.sessionId } });
check(res.status === 404, "B downloading A's file without the signature is 404", res.status);
res = await fetch(bare);
check(res.status === (tokens ? 401 : 404), `without the signature nor ${tokens ? "a token" : "an MCP session"} it is ${tokens ? 401 : 404}`, res.status);
const sig = link.slice(-64);
const flipped = link.slice(0, -1) + (link.endsWith("0") ? "1" : "0");
res = await fetch(flipped);
check(res.status === 403, "a download_url with its signature changed is 403", res.status);
res = await fetch(link.replace("/data.csv?", "/other.csv?"));
check(res.status === 403, "the signature of one path does not open another (403)", res.status);
const later = link.replace(/expires=(\d+)/, (_, t) => `expires=${Number(t) + 3600}`);
res = await fetch(later);
check(res.status === 403, "moving the expiry later breaks the signature (403)", res.status);
check(sig.length === 64, "the signature is 64 hex digits");

// A's session is untouched by B's attempts.
r = await call(a, "run_code", { session_id: sid, language: "python",
  code: "print(open('/mnt/data/data.csv').read(), end='')" });
check(r.structuredContent?.stdout === csv, "A's session still works after B's attempts", r);

if (tokens) {
  // A token's MCP session is the token's: B cannot speak in it.
  res = await fetch(url, { method: "POST",
    headers: { ...bearer(tokenB), "Mcp-Session-Id": a.transport.sessionId,
      "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call",
      params: { name: "list_sessions", arguments: {} } }) });
  check(res.status === 404, "B's token on A's Mcp-Session-Id is 404 (Session not found)", res.status);
  // A new MCP session of the same token sees the token's sessions.
  const a2 = await connect(tokenA);
  check((await listed(a2)).includes(sid), "another MCP session of token A sees A's session");
  await a2.client.close();
  // The link expires.
  await sleep((Number(ttl) + 1.5) * 1000);
  res = await fetch(link);
  check(res.status === 403, `after download_url_ttl (${ttl} s) the download_url is refused (403)`, res.status);
  r = await call(a, "close_session", { session_id: sid });
  check(r.structuredContent?.closed === true, "A closes its session");
} else {
  // The MCP session ends: its sandbox sessions go with it.
  await a.transport.terminateSession();
  await a.client.close();
  let gone = false;
  for (let i = 0; i < 50 && !gone; i++) {
    await sleep(200);
    gone = (await fetch(link)).status === 404;
  }
  check(gone, "when A's MCP session ends (DELETE), its sandbox session is closed within 10 s");
  check((await listed(b)).includes(bsid), "and B's session stays");
}
r = await call(b, "close_session", { session_id: bsid });
check(r.structuredContent?.closed === true, "B closes its own session", r);
await b.client.close();
if (tokens) await a.client.close();
process.exit(0);
