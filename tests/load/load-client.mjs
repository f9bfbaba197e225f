// Load for `sandbox-runner serve`: RUNS run_code calls shared round-robin
// among CLIENTS official-SDK clients that run at once, each with one call in
// flight, over stdio (every client starts its own server, as agents do) or
// Streamable HTTP (every client is a session of one server).  Most calls are
// print(1); every 100th group has one that fails, one that times out and
// one that prints a lot, each with the result it must have.
//
//   node load-client.mjs stdio SR_BIN CLIENTS RUNS
//   node load-client.mjs http URL CLIENTS RUNS SERVER_PID
//
// Prints "RESULT 0|1 name" checks and "# ..." diagnostics (the shell test
// turns them into TAP), one "SERVER PID" line per stdio server, and one
// "STATS {json}" line: per server, the highest RSS and thread count
// sampled every 100 ms, and for a stdio server its fd count and RSS after
// its first call and after its last.
import { readdirSync, readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [transportName, target, clientsArg, runsArg, httpPid] = process.argv.slice(2);
const nClients = Number(clientsArg);
const nRuns = Number(runsArg);
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 1500)}`);
};

// The max_output default (100 KiB) plus the truncation marker.
const MAX_OUTPUT = 100 * 1024;

// What call k sends and what its result must be.
const job = (k) => {
  switch (k % 100) {
    case 37:
      return {
        kind: "error", code: `import sys; print("failing", ${k}); sys.exit(3)`,
        ok: (s) => s.status === "error" && s.exit_code === 3 && s.stdout === `failing ${k}\n`,
      };
    case 73:
      return {
        kind: "timeout", code: "while True: pass", timeout: 1,
        ok: (s) => s.status === "timeout",
      };
    case 91:
      return {
        kind: "big output", code: "import sys; sys.stdout.write('x' * 2000000)",
        ok: (s) => s.status === "success" && s.stdout_truncated === true
          && s.stdout.startsWith("x".repeat(MAX_OUTPUT)) && s.stdout.length < MAX_OUTPUT + 200,
      };
    default:
      return { kind: "print(1)", code: "print(1)", ok: (s) => s.status === "success" && s.stdout === "1\n" };
  }
};

const procStats = (pid) => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    return {
      fds: readdirSync(`/proc/${pid}/fd`).length,
      rss_kb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0),
      threads: Number(/Threads:\s+(\d+)/.exec(status)?.[1] ?? 0),
    };
  } catch {
    return null;
  }
};

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
// The server's warm containers (state entries labelled "warm: ..."): one
// when its pool is full, two while the pool's thread destroys a used one,
// none while it makes the first.  Each holds a few of the server's fds.
const warmContainers = (pid) => {
  const dir = `${process.env.SANDBOX_RUNTIME_DIR}/containers`;
  let n = 0;
  try {
    for (const f of readdirSync(dir)) {
      if (!f.endsWith(".json")) continue;
      try {
        const e = JSON.parse(readFileSync(`${dir}/${f}`, "utf8"));
        if (e.runner_pid === pid && e.label?.startsWith("warm: ")) n++;
      } catch {}
    }
  } catch {}
  return n;
};
// The stats of an idle server: a call's answer goes out before its worker
// thread has closed the call's last fds and before the pool has replaced
// the warm container it used, so the count is taken once the pool holds
// one warm container and the count has held still for 1 s (a pre-started
// interpreter holds its fds from its start, and its start, on 16 servers
// at once on two cores, may take longer than a shorter pause).  Under
// load (or a sanitized build) the pool takes seconds to refill: the wait
// gives up only after 30 s, and a leak still shows, as a count that
// settles higher.
const settledStats = async (pid) => {
  let prev = procStats(pid), still = 0;
  for (let i = 0; i < 150; i++) {
    await sleep(200);
    const cur = procStats(pid);
    if (!cur || !prev) return cur;
    still = cur.fds === prev.fds && warmContainers(pid) === 1 ? still + 1 : 0;
    if (still >= 5) return cur;
    prev = cur;
  }
  return prev;
};

const connect = async (i) => {
  const transport = transportName === "stdio"
    ? new StdioClientTransport({ command: target, args: ["serve"], env: { ...process.env }, stderr: "inherit" })
    : new StreamableHTTPClientTransport(new URL(target));
  const client = new Client({ name: `sandbox-runner-load-${i}`, version: "1.0.0" });
  await client.connect(transport);
  return { client, transport, pid: transportName === "stdio" ? transport.pid : null };
};

const failures = [];
const kinds = {};
let done = 0;
const servers = httpPid ? [{ pid: Number(httpPid), max_rss_kb: 0, max_threads: 0 }] : [];
const sampler = setInterval(() => {
  for (const s of servers) {
    const st = procStats(s.pid);
    if (st) {
      s.max_rss_kb = Math.max(s.max_rss_kb, st.rss_kb);
      s.max_threads = Math.max(s.max_threads, st.threads);
    }
  }
}, 100);

const t0 = Date.now();
const worker = async (i) => {
  let conn;
  try {
    conn = await connect(i);
  } catch (e) {
    failures.push({ client: i, error: `connect: ${e}` });
    return;
  }
  let server = null;
  if (conn.pid) {
    server = { pid: conn.pid, max_rss_kb: 0, max_threads: 0 };
    servers.push(server);
    console.log(`SERVER ${conn.pid}`);
  }
  for (let k = i, first = true; k < nRuns; k += nClients, first = false) {
    const j = job(k);
    kinds[j.kind] = (kinds[j.kind] ?? 0) + 1;
    const args = { language: "python", code: j.code };
    if (j.timeout) args.timeout_seconds = j.timeout;
    try {
      const r = await conn.client.callTool({ name: "run_code", arguments: args }, undefined, { timeout: 60000 });
      const s = r.structuredContent ?? {};
      if (r.isError || !j.ok(s) || s.history !== "recorded")
        failures.push({ call: k, kind: j.kind, result: r.isError ? r.content : s });
    } catch (e) {
      failures.push({ call: k, kind: j.kind, error: String(e) });
    }
    done++;
    // Lazily opened files (the seccomp cache, SQLite's WAL) are open by
    // now: the baseline for fds.
    if (first && server) server.first = await settledStats(server.pid);
  }
  if (server) server.last = await settledStats(server.pid);
  try {
    if (transportName === "http") await conn.transport.terminateSession();
    await conn.client.close();
  } catch (e) {
    failures.push({ client: i, error: `close: ${e}` });
  }
};

await Promise.all(Array.from({ length: nClients }, (_, i) => worker(i)));
clearInterval(sampler);
const wall = Date.now() - t0;

check(done === nRuns && failures.length === 0,
  `${transportName}: ${nRuns} runs over ${nClients} concurrent clients all end as expected `
  + `(${Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ")}; ${wall} ms)`,
  { done, failures: failures.length, first: failures.slice(0, 5) });
console.log(`STATS ${JSON.stringify({ transport: transportName, runs: nRuns, clients: nClients, wall_ms: wall, servers })}`);
process.exit(0);
