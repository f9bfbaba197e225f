// Both protocol eras against one server, over stdio (or HTTP with --http
// URL TOKEN): the official v2 client (@modelcontextprotocol/client), told
// to negotiate, settles on 2026-07-28 through server/discover and works
// with no initialize and no MCP session (over HTTP a sandbox session made
// in one request is found by the next); the 1.x SDK (@modelcontextprotocol
// /sdk) still negotiates 2025-11-25 with initialize.
// Prints "RESULT 0|1 name" lines and "# ..." diagnostics for the shell test.
//   node eras-client.mjs SR_BIN
//   node eras-client.mjs --http URL TOKEN
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { Client as Client1 } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport as StdioClientTransport1 } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport as StreamableHTTPClientTransport1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const http = argv[0] === "--http";
const how = http ? "HTTP" : "stdio";
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name} (${how})`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const requestInit = http ? { headers: { Authorization: `Bearer ${argv[2]}` } } : undefined;
const transport2 = () => http
  ? new StreamableHTTPClientTransport(new URL(argv[1]), { requestInit })
  : new StdioClientTransport({ command: argv[0], args: ["serve"], env: process.env, stderr: "inherit" });
const transport1 = () => http
  ? new StreamableHTTPClientTransport1(new URL(argv[1]), { requestInit })
  : new StdioClientTransport1({ command: argv[0], args: ["serve"], env: process.env, stderr: "inherit" });
const structured = (r) => r?.structuredContent ?? {};

// --- the v2 client, negotiating ---
const client = new Client({ name: "eras-test", version: "1.0.0" },
  { versionNegotiation: { mode: "auto" } });
const t2 = transport2();
await client.connect(t2);
check(client.getNegotiatedProtocolVersion() === "2026-07-28" && client.getProtocolEra() === "modern",
  "the v2 client negotiates 2026-07-28", client.getNegotiatedProtocolVersion());
check(client.getServerVersion()?.name === "sandbox-runner" && client.getServerCapabilities()?.tools,
  "server/discover names the server and its tools", client.getDiscoverResult?.());
check(!http || t2.sessionId === undefined, "with no MCP session", t2.sessionId);
const { tools } = await client.listTools();
check(tools.some((t) => t.name === "run_code"), "tools/list lists run_code",
  tools.map((t) => t.name));
let r = await client.callTool({ name: "run_code", arguments: { language: "python", code: "print(6*7)" } });
check(!r.isError && structured(r).stdout === "42\n", "run_code runs over 2026-07-28", r);
r = await client.callTool({ name: "create_session", arguments: { image: "python" } });
const sid = structured(r).session_id;
check(typeof sid === "string", "create_session over 2026-07-28", r);
r = await client.callTool({ name: "run_code", arguments: { language: "python", session_id: sid,
  code: "open('/mnt/data/kept.txt','w').write('kept')" } });
r = await client.callTool({ name: "run_code", arguments: { language: "python", session_id: sid,
  code: "print(open('/mnt/data/kept.txt').read())" } });
check(structured(r).stdout === "kept\n",
  "a sandbox session keeps its files from one stateless request to the next", r);
r = await client.callTool({ name: "close_session", arguments: { session_id: sid } });
check(!r.isError, "close_session over 2026-07-28", r);
let failed;
try {
  await client.readResource({ uri: "sandbox://sessions/nope/files/x" });
} catch (e) {
  failed = e;
}
check(failed?.code === -32602, "a resource not found is -32602 (SEP-2164)", failed?.code);
await client.close();

// --- the 1.x SDK ---
const client1 = new Client1({ name: "eras-test-1", version: "1.0.0" });
const t1 = transport1();
// The client hands the negotiated version to a transport that takes it.
let v1;
const setVersion = t1.setProtocolVersion?.bind(t1);
t1.setProtocolVersion = (v) => { v1 = v; setVersion?.(v); };
await client1.connect(t1);
check(v1 === "2025-11-25", "the 1.x SDK still negotiates 2025-11-25", v1);
r = await client1.callTool({ name: "run_code", arguments: { language: "python", code: "print(1)" } });
check(structured(r).stdout === "1\n", "and runs code as before", r);
await client1.close();
