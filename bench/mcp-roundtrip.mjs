// The MCP side of bench/run.sh, as an agent sees it: the official SDK
// client over stdio (it starts `SR_BIN serve`) or Streamable HTTP (a
// server bench/run.sh started, whose pid it is given).  In this order:
//   - the server's memory idle (just listening, HTTP only; then initialized);
//   - one warm-up call of run_code python print(1) (or SR_BENCH_LANGUAGE's
//     SR_BENCH_CODE, timed as SR_BENCH_WORKLOAD), then RUNS timed calls
//     in a row: the round trip (SR_BENCH_GAP_MS apart, default 0: the
//     pause an agent leaves between calls, in which the warm pool refills);
//   - N calls at each CONCURRENCY (calls in flight at once): throughput,
//     with the server's memory sampled throughout (the peak);
//   - the largest CONCURRENCY of calls that sleep, all in flight at once:
//     the server's memory under a steady load, which gives what each
//     running container costs the server;
//   - the server's memory idle again, after all that.
// Memory is read from /proc/PID/smaps_rollup (one address space, so all
// the server's threads are in it) and /proc/PID/status (Threads).
// SYSTEM is "sandbox-runner MCP TRANSPORT", with " (BACKEND)" after it
// when SANDBOX_BACKEND names one other than native (the stdio server
// inherits it).  With no CONCURRENCY, only the memory and the round trip.
// SR_BENCH_WARM=1 (stdio, native backend, not with SR_BENCH_TPUT_ONLY):
// after the round trips, the memory of the server's warm container of the
// language, ready for the next call: its init and the interpreter it
// pre-started with the language's preloads.
// SR_BENCH_TPUT_ONLY=1, for bench/run.sh's throughput rounds after the
// first: the throughput alone (P lines), after a gap and the warm-up call
// as the round trips leave it: no round trip, no memory, no steady load.
// Prints tab-separated lines, each with a tag:
//   T SYSTEM WORKLOAD MICROSECONDS
//   P SYSTEM CONCURRENCY CALLS SECONDS FAILURES
//   M SYSTEM STATE RSS_KIB PSS_KIB THREADS
//   W LANGUAGE PROCESSES RSS_KIB PSS_KIB
//
//   node mcp-roundtrip.mjs stdio SR_BIN RUNS N CONCURRENCY,...
//   node mcp-roundtrip.mjs http URL SERVER_PID RUNS N CONCURRENCY,...
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const mode = process.argv[2];
let transport, pid, rest;
if (mode === "stdio") {
  transport = new StdioClientTransport({ command: process.argv[3], args: ["serve"], env: { ...process.env } });
  rest = process.argv.slice(4);
} else if (mode === "http") {
  transport = new StreamableHTTPClientTransport(new URL(process.argv[3]));
  pid = Number(process.argv[4]);
  rest = process.argv.slice(5);
} else {
  console.error("usage: mcp-roundtrip.mjs stdio SR_BIN RUNS N C,... | http URL PID RUNS N C,...");
  process.exit(2);
}
const runs = Number(rest[0] ?? 20), calls = Number(rest[1] ?? 0);
const levels = (rest[2] ?? "").split(",").filter(Boolean).map(Number);
const backend = process.env.SANDBOX_BACKEND ?? "native";
const system = `sandbox-runner MCP ${mode}` + (backend && backend !== "native" ? ` (${backend})` : "");
const tputOnly = process.env.SR_BENCH_TPUT_ONLY === "1";
const out = (...fields) => console.log(fields.join("\t"));
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// field(text, name): the number after "name:" on a line of a /proc file.
const field = (text, name) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1] ?? NaN);
// rollup(p): { rss, pss } of process p, in KiB (smaps_rollup: all its
// threads); null once it is gone.
const rollup = (p) => {
  try {
    const text = readFileSync(`/proc/${p}/smaps_rollup`, "utf8");
    return { rss: field(text, "Rss"), pss: field(text, "Pss") };
  } catch {
    return null;
  }
};
// memory(): { rss, pss, threads } of the server, in KiB; null once it is gone.
const memory = () => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = rollup(pid);
    return m && { ...m, threads: field(status, "Threads") };
  } catch {
    return null;
  }
};
const report = (state, m) => m && !tputOnly && out("M", system, state, m.rss, m.pss, m.threads);
// sampler(): samples every 20 ms until stopped; stop() gives the peak of each.
const sampler = () => {
  const peak = { rss: 0, pss: 0, threads: 0 };
  const take = () => {
    const m = memory();
    if (m) for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
  };
  take();
  const timer = setInterval(take, 20);
  return () => {
    clearInterval(timer);
    take();
    return peak;
  };
};

// tree(root): root's pid and its descendants', from /proc/PID/task/PID/children.
const tree = (root) => {
  const pids = [root];
  for (let i = 0; i < pids.length; i++) {
    try {
      const kids = readFileSync(`/proc/${pids[i]}/task/${pids[i]}/children`, "utf8");
      pids.push(...kids.split(" ").filter(Boolean).map(Number));
    } catch {}
  }
  return pids;
};
// treeMemory(root): { processes, rss, pss } summed over root's tree.
const treeMemory = (root) => {
  const sizes = tree(root).map(rollup).filter(Boolean);
  return { processes: sizes.length, rss: sizes.reduce((a, m) => a + m.rss, 0),
           pss: sizes.reduce((a, m) => a + m.pss, 0) };
};
// warmMemory(): treeMemory of the server's warm container whose init has
// started its interpreter (a child), once its preloads are in (two samples
// 300 ms apart within 1%); waits up to 20 s for the pool to make it, null
// when none comes.  `ps --json` names the warm containers ("warm: ...")
// and their runner.
const warmMemory = async () => {
  const deadline = Date.now() + 20000;
  let last = null;
  while (Date.now() < deadline) {
    const listed = JSON.parse(execFileSync(process.argv[3], ["ps", "--json"]).toString());
    const m = listed.filter((c) => c.runner_pid === pid && String(c.command).startsWith("warm:"))
      .map((c) => treeMemory(c.pid)).find((t) => t.processes > 1) ?? null;
    if (m && last && m.processes === last.processes && Math.abs(m.rss - last.rss) <= m.rss / 100) return m;
    last = m;
    await sleep(300);
  }
  return null;
};

if (mode === "http") report("idle, listening", memory());
const client = new Client({ name: "sandbox-runner-bench", version: "1.0.0" });
await client.connect(transport);
if (mode === "stdio") pid = transport.pid;
await sleep(200);
report("idle, initialized", memory());

// The timed call: run_code python print(1), or SR_BENCH_LANGUAGE's
// SR_BENCH_CODE (which must print 1) under the name SR_BENCH_WORKLOAD.
const language = process.env.SR_BENCH_LANGUAGE ?? "python";
const timedCode = process.env.SR_BENCH_CODE ?? "print(1)";
const workload = process.env.SR_BENCH_WORKLOAD ?? "run_code print(1)";
const call = (code = timedCode) =>
  client.callTool({ name: "run_code", arguments: { language, code } }, undefined, { timeout: 120000 });
const printed = (r, text = "1\n") => r.structuredContent?.status === "success" && r.structuredContent?.stdout === text;
const gap = Number(process.env.SR_BENCH_GAP_MS ?? 0);
// Throughput alone: the pool as the round trips leave it, a gap and a call.
if (tputOnly && gap) await sleep(gap);
const warm = await call();
if (!printed(warm)) throw new Error(`run_code did not print 1: ${JSON.stringify(warm).slice(0, 400)}`);

for (let i = 0; i < (tputOnly ? 0 : runs); i++) {
  if (gap) await sleep(gap);
  const t0 = process.hrtime.bigint();
  const r = await call();
  const us = (process.hrtime.bigint() - t0) / 1000n;
  if (!printed(r)) throw new Error(`run_code failed: ${JSON.stringify(r).slice(0, 400)}`);
  out("T", system, workload, us);
}

// The Docker backend's warm containers are not ours to list; a throughput
// round leaves the memory to the first.
if (process.env.SR_BENCH_WARM === "1" && mode === "stdio" && (!backend || backend === "native") && !tputOnly) {
  const m = await warmMemory();
  if (m) out("W", language, m.processes, m.rss, m.pss);
  else console.error(`mcp-roundtrip: no warm ${language} container with its interpreter started`);
}

// CONCURRENCY workers take the CALLS calls one by one.
for (const c of levels) {
  let next = 0, failures = 0;
  const worker = async () => {
    while (next < calls) {
      next++;
      try {
        if (!printed(await call())) failures++;
      } catch {
        failures++;
      }
    }
  };
  const stop = sampler();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.min(c, calls) }, worker));
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  report(`peak, throughput at concurrency ${c}`, stop());
  out("P", system, c, calls, seconds.toFixed(6), failures);
}

// A steady load: every call sleeps long enough for all of them to have
// started their containers before the samples are taken.
if (levels.length && !tputOnly) {
  const c = Math.max(...levels);
  const sleeping = Array.from({ length: c }, (_, i) => call(`import time; time.sleep(3); print(${i})`));
  await sleep(1500);
  const stop = sampler();
  await sleep(500);
  report(`${c} runs in flight`, stop());
  const done = await Promise.all(sleeping);
  const ok = done.filter((r, i) => printed(r, `${i}\n`)).length;
  if (ok !== c) console.error(`mcp-roundtrip: ${c - ok} of the ${c} sleeping calls failed`);
}
if (!tputOnly) {
  await sleep(200);
  report("idle, after the runs", memory());
}

if (mode === "http") await transport.terminateSession().catch(() => {});
await client.close();
