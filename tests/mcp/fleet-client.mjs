// Ten clients of the official MCP TypeScript SDK through HAProxy in front
// of three servers (tests/integration/fleet.sh): each keeps its MCP
// session on one server across a sandbox session with files; one server
// is drained while they work.  Prints "RESULT 0|1 name" lines and "# ..."
// diagnostics for the shell test.
//   node fleet-client.mjs URL TOKEN DRAIN_PID DRAIN_ID DRAIN_HEALTH_URL
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token, drainPid, drainId, drainHealth] = process.argv.slice(2);
const CLIENTS = 10;
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const auth = { Authorization: `Bearer ${token}` };
const serverOf = (id) => (id ?? "").split(".")[0];

// A client and the servers that answered its POSTs (the
// Sandbox-Runner-Server header of each response).
const connect = async (name) => {
  const c = { name, answered: new Set() };
  c.transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: auth },
    fetch: async (u, init) => {
      const res = await fetch(u, init);
      if (init?.method === "POST")
        c.answered.add(res.headers.get("sandbox-runner-server"));
      return res;
    },
  });
  c.client = new Client({ name, version: "1.0.0" });
  await c.client.connect(c.transport);
  c.session = c.transport.sessionId;
  c.server = serverOf(c.session);
  return c;
};
const call = async (c, name, args) => {
  const r = await c.client.callTool({ name, arguments: args });
  if (r.isError) throw new Error(`${name}: ${r.content?.[0]?.text}`);
  return r.structuredContent;
};

// One piece of work in a sandbox session: open it, upload a file, run code on it,
// read the result back, fetch it by its download link (through HAProxy
// too), close the session.
const job = async (c, n) => {
  const text = `${c.name} job ${n}\n`;
  let r = await call(c, "create_session", { image: "python" });
  const sid = r.session_id;
  r = await call(c, "upload_file", { session_id: sid, filename: "in.txt",
    content_base64: Buffer.from(text).toString("base64") });
  r = await call(c, "run_code", { session_id: sid, language: "python",
    code: "open('out.txt','w').write(open('in.txt').read().upper())" });
  if (r.status !== "success") throw new Error(`run_code: ${JSON.stringify(r)}`);
  // For the test to find each run in the fleet's history.
  console.log(`RUN ${c.server} ${sid}`);
  r = await call(c, "file_read", { session_id: sid, path: "out.txt" });
  if (!r.content.includes(text.trim().toUpperCase())) throw new Error(`file_read: ${JSON.stringify(r)}`);
  r = await call(c, "list_artifacts", { session_id: sid });
  const link = r.artifacts.find((a) => a.path === "out.txt")?.download_url ?? "";
  if (!link.includes(`/files/${c.server}.${sid}/out.txt?`)) throw new Error(`download_url: ${link}`);
  const res = await fetch(link);
  const body = await res.text();
  if (res.status !== 200 || body !== text.toUpperCase() || res.headers.get("sandbox-runner-server") !== c.server)
    throw new Error(`download: ${res.status} ${res.headers.get("sandbox-runner-server")} ${body}`);
  await call(c, "close_session", { session_id: sid });
};
const is404 = (e) => e?.code === 404 || /\b404\b|Session not found/.test(String(e?.message ?? e));

// --- affinity: ten clients, two jobs each ---
const clients = await Promise.all(Array.from({ length: CLIENTS }, (_, i) => connect(`client-${i}`)));
const failures = [];
await Promise.all(clients.map(async (c) => {
  for (let n = 0; n < 2; n++)
    await job(c, n).catch((e) => failures.push(`${c.name}: ${e.message}`));
}));
check(failures.length === 0, `ten clients each run two sandbox jobs with files through HAProxy (${failures.length} failed)`, failures);
const stray = clients.filter((c) => c.answered.size !== 1 || !c.answered.has(c.server));
check(clients.every((c) => /^[A-Za-z0-9_-]+\.[0-9a-f]{32}$/.test(c.session)) && stray.length === 0,
  "every request of an MCP session was answered by the server its id names",
  stray.map((c) => [c.session, [...c.answered]]));
const spread = new Set(clients.map((c) => c.server));
console.log(`# sessions per server: ${JSON.stringify(clients.reduce((m, c) => ({ ...m, [c.server]: (m[c.server] ?? 0) + 1 }), {}))}`);
check(spread.size >= 2, `leastconn spreads new sessions over the servers (${spread.size} used)`, [...spread]);

// The drained server must hold sessions: top it up with new clients.
for (let i = 0; !clients.some((c) => c.server === drainId) && i < 20; i++)
  clients.push(await connect(`client-extra-${i}`));
const onDrained = clients.filter((c) => c.server === drainId);
check(onDrained.length > 0, `${onDrained.length} of the clients are on ${drainId}, the server to drain`);

// --- drain: SIGTERM while every client works ---
let stopWork = false;
const lost = [];
let jobsDone = 0;
const workers = clients.map(async (c) => {
  for (let n = 2; !stopWork; n++)
    await job(c, n).then(() => jobsDone++).catch((e) => lost.push(`${c.name}@${c.server}: ${e.message}`));
});
await sleep(500);
const drainedAt = Date.now();
process.kill(Number(drainPid), "SIGTERM");
await sleep(300);
let h = await fetch(drainHealth).then(async (r) => ({ status: r.status, body: await r.json() })).catch((e) => ({ error: e.message }));
check(h.status === 503 && h.body?.draining === true && h.body?.accepting === false && h.body?.server_id === drainId
  && h.body?.mcp_sessions >= onDrained.length,
  "the drained server's /healthz says draining (503) and counts its sessions", h);

// New sessions while it drains go to the others (HAProxy retries an
// initialize refused with 503 elsewhere until its check marks it down).
const fresh = [];
for (let i = 0; i < 6; i++) fresh.push(await connect(`fresh-${i}`));
check(fresh.every((c) => c.server !== drainId), "new sessions go to the other servers while one drains",
  fresh.map((c) => c.server));
await Promise.all(fresh.map((c) => job(c, 0).catch((e) => lost.push(`${c.name}: ${e.message}`))));

// The sessions it holds carry on for a while, then their clients stop.
await sleep(2000);
stopWork = true;
await Promise.all(workers);
check(lost.length === 0, `no call of a session already going is lost while its server drains (${jobsDone} jobs done)`, lost);

// Its clients but one leave (DELETE); the last keeps its session idle,
// so the server waits out drain_grace, then exits.
const stayer = onDrained[0];
await Promise.all(onDrained.slice(1).map((c) => c.transport.terminateSession().catch(() => {})));
let gone = false;
for (let i = 0; i < 300 && !gone; i++) {
  try {
    process.kill(Number(drainPid), 0);
    await sleep(100);
  } catch {
    gone = true;
  }
}
const took = (Date.now() - drainedAt) / 1000;
console.log(`# the drained server exited ${took.toFixed(1)} s after SIGTERM`);
check(gone, `after drain_grace the drained server exits (${took.toFixed(1)} s)`);

// Its last client gets 404 for its session (from another server), then
// initializes again and carries on.
let status = "no error";
try {
  await job(stayer, 100);
} catch (e) {
  status = is404(e) ? 404 : String(e?.message ?? e);
}
check(status === 404, "the client of the stopped server gets 404 for its session", status);
const again = await connect(`${stayer.name}-again`);
let ok = true;
await job(again, 0).catch((e) => { ok = false; console.log(`# ${e.message}`); });
check(ok && again.server !== drainId, `it initializes again on ${again.server} and carries on`);

// The others are untouched.
const others = clients.filter((c) => c.server !== drainId);
const after = [];
await Promise.all(others.map((c) => job(c, 200).catch((e) => after.push(`${c.name}: ${e.message}`))));
check(after.length === 0, "the clients of the other servers carry on", after);

for (const c of [...clients, ...fresh, again])
  if (c.server !== drainId) await c.transport.terminateSession().catch(() => {});
for (const c of [...clients, ...fresh, again]) await c.client.close().catch(() => {});
process.exit(0);
