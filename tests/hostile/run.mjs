// The hostile-snippet suite: every case of tests/hostile/cases/ goes to
// one `sandbox-runner serve` (stdio) through the official MCP TypeScript
// SDK client, as an agent would send it, and its result is checked
// against the case's expected contained outcome.  Then the host is
// checked unchanged: no process, mount, cgroup or scratch file left by
// the server, and the server still answers.
//
//   node run.mjs --bin SR_BIN [--cases DIR] [--jobs N] [--only A,B] [--report]
//
// Prints TAP, or with --report the table: case, expected, observed,
// contained.  Exits 0 only when every case held and the host is clean.
//
// A case is one file, NAME.py or NAME.cpp, whose leading comment lines
// ("# " or "// ") hold its metadata, one "key: value" a line:
//   hostile:  what the snippet attempts (required)
//   expected: the contained outcome, in words, for the report (required)
//   expect:   a check on the result; expect[COND]: only where COND holds
//             status=A|B          the run's status is one of these
//             stdout=/RE/ stdout!=/RE/ stderr=/RE/ stderr!=/RE/
//                                 (stdout is base64-decoded first)
//             stdout_truncated=true|false  stderr_truncated=...
//             stdout_encoding=utf-8|base64
//             max_ms=N            the call returned within N ms
//   check:    a host-side check run after the call (see hostChecks)
//   timeout:  timeout_seconds of the call
//   skip[COND]: REASON  skip the case where COND holds
// COND is KEY=VALUE with KEY one of memory, pids (the limit mechanism the
// runtime reports, cgroup or rlimit) and rootless (yes or no).
// The code may use @TOKEN@ (a short name unique to this suite run, used
// as the comm of processes a case leaves behind on purpose), @SERVER_PID@,
// @HOST_PORT@ (a TCP listener on the host's 127.0.0.1), @HOST_ABSTRACT@ (an
// abstract unix socket of the host), @HOST_ADDRS@ (the host's own
// non-loopback addresses, a JSON list) and @HOST_MARKER@ (a host file).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const bin = opt("--bin", process.env.SR_BIN);
const casesDir = opt("--cases", path.join(path.dirname(fileURLToPath(import.meta.url)), "cases"));
const jobs = Number(opt("--jobs", "3"));
const only = opt("--only", "")?.split(",").filter(Boolean) ?? [];
const report = argv.includes("--report");
if (!bin) {
  console.error("usage: node run.mjs --bin SR_BIN [--cases DIR] [--jobs N] [--only A,B] [--report]");
  process.exit(2);
}

// ---- the cases -------------------------------------------------------

const languageOf = { ".py": "python", ".cpp": "cpp" };

function parseCase(file) {
  const ext = path.extname(file);
  const code = fs.readFileSync(path.join(casesDir, file), "utf8");
  const prefix = ext === ".py" ? "#" : "//";
  const c = { name: file, language: languageOf[ext], code, expect: [], checks: [], skips: [] };
  for (const line of code.split("\n")) {
    if (!line.startsWith(prefix)) break;
    const m = /^(\w+)(?:\[(\w+)=([\w-]+)\])?:\s*(.*)$/.exec(line.slice(prefix.length).trim());
    if (!m) continue;
    const [, key, condKey, condValue, value] = m;
    const cond = condKey ? { key: condKey, value: condValue } : null;
    if (key === "hostile") c.hostile = value;
    else if (key === "expected") c.expected = value;
    else if (key === "expect") c.expect.push({ cond, ...parseExpect(value, file) });
    else if (key === "check") c.checks.push(value);
    else if (key === "timeout") c.timeout = Number(value);
    else if (key === "skip") c.skips.push({ cond, reason: value });
  }
  if (!c.hostile || !c.expected || c.expect.length === 0)
    throw new Error(`${file}: a case needs hostile:, expected: and at least one expect:`);
  return c;
}

function parseExpect(s, file) {
  const m = /^(\w+)(!?=)(.*)$/.exec(s);
  if (!m) throw new Error(`${file}: bad expect: ${s}`);
  const [, field, op, raw] = m;
  if (field === "stdout" || field === "stderr") {
    const r = /^\/(.*)\/([a-z]*)$/.exec(raw);
    if (!r) throw new Error(`${file}: ${field} wants /regex/: ${s}`);
    // Compiled once the placeholders are known (see judge).
    return { field, negate: op === "!=", source: r[1], flags: r[2], text: s };
  }
  return { field, negate: op === "!=", value: raw, text: s };
}

// ---- the host around the server ---------------------------------------

const token = "hx" + process.pid.toString(36) + Date.now().toString(36).slice(-4);
const marker = fs.mkdtempSync(path.join(os.tmpdir(), "hostile-marker-")) + "/host-secret";
fs.writeFileSync(marker, "host secret " + token + "\n");
fs.chmodSync(path.dirname(marker), 0o755);
const hostAddrs = Object.values(os.networkInterfaces()).flat()
  .filter((a) => !a.internal && a.family === "IPv4").map((a) => a.address);

// A TCP listener on the host's loopback and an abstract unix socket: a
// run that reaches either has left its network namespace.
let listenerHits = 0;
const onHit = (sock) => { listenerHits++; sock.destroy(); };
const tcp = net.createServer(onHit);
await new Promise((res) => tcp.listen(0, "127.0.0.1", res));
const abstractName = "hostile-" + token;
const abstract = net.createServer(onHit);
await new Promise((res) => abstract.listen("\0" + abstractName, res));

// The limit mechanisms this host gives a run (the MCP result does not
// carry them): from one run-code --json of the same binary.
const mechanisms = { rootless: process.getuid() === 0 ? "no" : "yes" };
try {
  const probe = JSON.parse(execFileSync(bin, ["run-code", "--json", "-l", "python"],
    { input: "pass\n", encoding: "utf8", stdio: ["pipe", "pipe", "pipe"] }));
  for (const k of ["memory", "pids", "cpu"])
    mechanisms[k] = /^cgroup/.test(probe.limits?.[k] ?? "") ? "cgroup" : "rlimit";
} catch (e) {
  console.log(`Bail out! run-code --json does not run: ${String(e.stdout ?? "")}${String(e.stderr ?? e)}`.slice(0, 400));
  process.exit(1);
}
const holds = (cond) => !cond || mechanisms[cond.key] === cond.value;

const runtimeDir = process.env.SANDBOX_RUNTIME_DIR;
// A root runner's one-shot code directory, a tmpfs of its own mounted on
// RUNTIME_DIR/scratch/code-XXXXXX: its runtime dir, name and device.
const codeDirMount = (l) => {
  const f = l.split(" ");
  const m = /^(.*)\/scratch\/(code-[A-Za-z0-9]{6})$/.exec(f[4] ?? "");
  return m ? { base: m[1], name: m[2], dev: f[2] } : null;
};
// Other suites' mounts come and go when they run beside this one (make
// -j): Docker's state directories (dockerd binds /var/lib/docker onto
// itself) and what is below them, faults.sh's small tmpfs (source
// sr-faults) that it fills to test a full disk, and the code directories
// of other runners.
const othersMount = (l) => / \/(var\/lib|run)\/(docker|containerd)[/ ]/.test(l)
  || / - tmpfs sr-faults /.test(l)
  || (codeDirMount(l) !== null && codeDirMount(l).base !== runtimeDir);
const mountinfo = () => new Set(fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n")
  .filter((l) => l && !othersMount(l)));
const mountsBefore = mountinfo();
// Host-wide kernel counts a snippet could take for good (native AIO
// contexts are counted against fs.aio-max-nr for the whole host).
const aioNr = () => fs.readFileSync("/proc/sys/fs/aio-nr", "utf8").trim();
const aioBefore = aioNr();

// Every process descended from pid, by the children lists of its threads.
function descendants(pid) {
  const out = [];
  const walk = (p) => {
    let tasks = [];
    try { tasks = fs.readdirSync(`/proc/${p}/task`); } catch { return; }
    for (const t of tasks) {
      let kids = "";
      try { kids = fs.readFileSync(`/proc/${p}/task/${t}/children`, "utf8"); } catch { }
      for (const k of kids.split(/\s+/).filter(Boolean)) { out.push(Number(k)); walk(k); }
    }
  };
  walk(pid);
  return out;
}

// Host processes whose name is this run's token: what a case left behind.
function tokenProcesses() {
  const found = [];
  for (const p of fs.readdirSync("/proc")) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (fs.readFileSync(`/proc/${p}/comm`, "utf8").trim().startsWith(token)) found.push(Number(p));
    } catch { }
  }
  return found;
}

// The cgroups of the server's containers (named sr-PID-N) in every
// hierarchy, v1 and v2, under the server's own cgroup there.
function serverCgroups(pid) {
  const own = new Map();
  let lines = [];
  try { lines = fs.readFileSync(`/proc/${pid}/cgroup`, "utf8").split("\n").filter(Boolean); } catch { }
  for (const line of lines) {
    const [, ctl, p] = line.split(":");
    own.set(ctl, p);
  }
  const found = [];
  for (const line of mountinfo()) {
    const f = line.split(" ");
    const sep = f.indexOf("-");
    const fstype = f[sep + 1], root = f[3], mnt = f[4], superOpts = f[sep + 3] ?? "";
    let rel = null;
    if (fstype === "cgroup2") rel = own.get("");
    else if (fstype === "cgroup") {
      for (const [ctl, p] of own) if (ctl && ctl.split(",").every((c) => superOpts.split(",").includes(c))) rel = p;
    }
    if (rel === null || rel === undefined || !rel.startsWith(root)) continue;
    const dir = path.join(mnt, rel.slice(root.length));
    try {
      for (const d of fs.readdirSync(dir)) if (d.startsWith(`sr-${pid}-`)) found.push(path.join(dir, d));
    } catch { }
  }
  return found;
}

const leftovers = (sub) => {
  if (!runtimeDir) return [];
  try { return fs.readdirSync(path.join(runtimeDir, sub)); } catch { return []; }
};

// The server's warm containers (state label "warm: ..."), which wait for
// a run and belong to the server, not to a case: their state entries,
// processes (the init and what it started: a pre-started interpreter),
// cgroups and code directories (the source of their /scratch:
// a directory of the runtime dir, or the tmpfs a root runner mounted on
// one, known by its device).
function warmContainers() {
  const w = { states: new Set(), pids: new Set(), cgroups: new Set(), scratch: new Set() };
  const codeDirs = new Map([...mountinfo()].map(codeDirMount).filter(Boolean).map((c) => [c.dev, c.name]));
  for (const name of leftovers("containers")) {
    let st;
    try { st = JSON.parse(fs.readFileSync(path.join(runtimeDir, "containers", name), "utf8")); } catch { continue; }
    if (!st.label?.startsWith("warm: ")) continue;
    w.states.add(name);
    w.pids.add(st.init_pid);
    for (const p of descendants(st.init_pid)) w.pids.add(p);
    if (st.cgroup) w.cgroups.add(st.cgroup);
    try {
      for (const line of fs.readFileSync(`/proc/${st.init_pid}/mountinfo`, "utf8").split("\n")) {
        const f = line.split(" ");
        if (f[4] === "/scratch") w.scratch.add(f[3] === "/" ? codeDirs.get(f[2]) : path.basename(f[3]));
      }
    } catch { }
  }
  return w;
}

// ---- the server --------------------------------------------------------

const transport = new StdioClientTransport({ command: bin, args: ["serve"], env: { ...process.env }, stderr: "pipe" });
let serverStderr = "";
transport.stderr?.on("data", (d) => { serverStderr = (serverStderr + d).slice(-4000); });
const client = new Client({ name: "sandbox-runner-hostile", version: "1.0.0" });
await client.connect(transport);
const serverPid = transport.pid;
const cgroupsBefore = serverCgroups(serverPid);

const subst = (code) => code.replaceAll("@TOKEN@", token).replaceAll("@SERVER_PID@", String(serverPid))
  .replaceAll("@HOST_PORT@", String(tcp.address().port)).replaceAll("@HOST_ABSTRACT@", abstractName)
  .replaceAll("@HOST_ADDRS@", JSON.stringify(hostAddrs)).replaceAll("@HOST_MARKER@", marker);

const call = async (language, code, timeout) => {
  const args = { language, code };
  if (timeout) args.timeout_seconds = timeout;
  return client.callTool({ name: "run_code", arguments: args }, undefined, { timeout: 120000 });
};

const decode = (r, which) => {
  const s = r?.[which] ?? "";
  return r?.[`${which}_encoding`] === "base64" ? Buffer.from(s, "base64") : Buffer.from(s, "utf8");
};

async function waitFor(pred, ms) {
  const end = Date.now() + ms;
  for (;;) {
    if (pred()) return true;
    if (Date.now() > end) return false;
    await new Promise((res) => setTimeout(res, 50));
  }
}

// Host-side checks a case can ask for, each returning null or a failure.
const hostChecks = {
  // Nothing the case started survives it on the host.
  "no-token-process": async () => (await waitFor(() => tokenProcesses().length === 0, 3000))
    ? null : `processes named ${token} still run on the host: ${tokenProcesses().join(" ")}`,
  // The host's loopback listener and abstract socket saw no connection.
  "listener-untouched": async () => listenerHits === 0 ? null : `the host listeners got ${listenerHits} connection(s)`,
  // The server is alive and answers the next run.
  "server-answers": async () => {
    let r;
    try { r = await call("python", "print('still here')"); } catch (e) { return `the server no longer answers: ${e}`; }
    return r.structuredContent?.stdout === "still here\n" ? null : `the server no longer answers: ${JSON.stringify(r).slice(0, 200)}`;
  },
  // The server did not keep the output it was told to drop.
  "server-memory-bounded": async () => {
    let status = "";
    try { status = fs.readFileSync(`/proc/${serverPid}/status`, "utf8"); } catch { return "the server is gone"; }
    const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return hwm < 96 * 1024 ? null : `the server's peak RSS is ${hwm} KiB`;
  },
  // Exactly the 256 byte values, in order, came back.
  "all-bytes": async (sc) => {
    const want = Buffer.from([...Array(256).keys()]);
    return decode(sc, "stdout").equals(want) ? null : `stdout is not bytes 0..255: ${decode(sc, "stdout").toString("hex").slice(0, 80)}`;
  },
};

function judge(c, r, ms) {
  const sc = r.structuredContent;
  const fails = [];
  if (r.isError || !sc) return [`the call failed: ${r.content?.[0]?.text?.slice(0, 300)}`];
  for (const e of c.expect) {
    if (!holds(e.cond)) continue;
    let good;
    if (e.source !== undefined) good = new RegExp(subst(e.source), e.flags).test(decode(sc, e.field).toString(sc[`${e.field}_encoding`] === "base64" ? "latin1" : "utf8"));
    else if (e.field === "status") good = e.value.split("|").includes(sc.status);
    else if (e.field === "max_ms") good = ms <= Number(e.value);
    else good = String(sc[e.field]) === e.value;
    if (e.negate) good = !good;
    if (!good) fails.push(`wanted ${e.text}`);
  }
  return fails;
}

function observed(sc, ms) {
  if (!sc) return "no result";
  const lines = decode(sc, "stdout").toString("utf8").split("\n").filter((l) => l.trim() && !/^\[sandbox-runner:/.test(l));
  const cut = decode(sc, "stdout").toString("utf8").match(/\[sandbox-runner: output truncated[^\]]*\]/)?.[0];
  const last = cut ?? (sc.stdout_encoding === "base64" ? `${decode(sc, "stdout").length} bytes (base64)` : (lines.at(-1) ?? ""));
  const errLines = decode(sc, "stderr").toString("utf8").trim().split("\n");
  const err = errLines.findLast((l) => /error|Error|limit|Killed/.test(l)) ?? errLines.at(-1) ?? "";
  // Cases that try many things print "WHAT: denied|refused ERRNO" each.
  const refused = lines.map((l) => /: (?:denied|refused) ([A-Z0-9]+)/.exec(l)?.[1]).filter(Boolean);
  const tally = [...new Set(refused)].map((e) => `${e} x${refused.filter((x) => x === e).length}`).join(", ");
  let s = `${sc.status} (exit ${sc.exit_code}, ${ms} ms)`;
  if (sc.stdout_truncated) s += " stdout truncated";
  if (refused.length > 1) s += `: ${refused.length} refused (${tally})`;
  else if (last) s += `: ${last}`;
  else if (err) s += `: stderr ${err.trim()}`;
  return s.replace(/\s+/g, " ").slice(0, 140);
}

async function runCase(c) {
  const skip = c.skips.find((s) => s.cond ? holds(s.cond) : true);
  if (skip) return { c, skip: skip.reason };
  const t0 = Date.now();
  let r;
  try {
    r = await call(c.language, subst(c.code), c.timeout);
  } catch (e) {
    return { c, fails: [`the call was rejected: ${e}`], obs: "rejected", ms: Date.now() - t0 };
  }
  const ms = Date.now() - t0;
  const fails = judge(c, r, ms);
  for (const name of c.checks) {
    const f = hostChecks[name] ? await hostChecks[name](r.structuredContent) : `no host check named ${name}`;
    if (f) fails.push(f);
  }
  return { c, r, ms, fails, obs: observed(r.structuredContent, ms) };
}

// ---- the run -------------------------------------------------------------

const files = fs.readdirSync(casesDir).filter((f) => languageOf[path.extname(f)]).sort();
const cases = files.map(parseCase).filter((c) => only.length === 0 || only.includes(c.name));
const results = new Array(cases.length);
const t0 = Date.now();
let next = 0;
// The timing-sensitive cases (a flood, the timeouts) run concurrently with
// at most jobs-1 others: the server's max_concurrent is above that.
await Promise.all(Array.from({ length: Math.max(1, jobs) }, async () => {
  while (next < cases.length) {
    const i = next++;
    results[i] = await runCase(cases[i]);
  }
}));
const suiteMs = Date.now() - t0;

// ---- the host afterwards --------------------------------------------------

const after = [];
const hostCheck = (name, failure) => after.push({ name, failure });
// The server's spawner (runtime/spawner.h): its child for its whole life.
const spawnerPid = () => {
  let kids = "";
  try { kids = fs.readFileSync(`/proc/${serverPid}/task/${serverPid}/children`, "utf8"); } catch { }
  return kids.split(/\s+/).filter(Boolean).map(Number).find((p) => {
    try { return fs.readFileSync(`/proc/${p}/comm`, "utf8").trim() === "sr-spawner"; } catch { return false; }
  });
};
// What is below the server and not a warm container's, nor its spawner.
const leftBehind = () => {
  const warm = warmContainers();
  const spawner = spawnerPid();
  return {
    kids: descendants(serverPid).filter((p) => !warm.pids.has(p) && p !== spawner),
    cgs: serverCgroups(serverPid).filter((d) => !cgroupsBefore.includes(d) && !warm.cgroups.has(path.basename(d))),
    scratch: runtimeDir ? leftovers("scratch").filter((d) => !warm.scratch.has(d)) : [],
    states: runtimeDir ? leftovers("containers").filter((n) => !warm.states.has(n)) : [],
    mounts: [...mountinfo()].filter((l) => !mountsBefore.has(l) && !warm.scratch.has(codeDirMount(l)?.name)),
  };
};
// The pool makes the next warm container right after the last run took
// one, and a killed container takes a moment to go: wait until nothing is
// left (up to 20 s, room for a loaded machine; the cases' daemons would
// stay 600 s), and judge that look.  A second look could catch the pool
// making a warm container whose code dir is mounted before its state
// says it is warm.
let left;
await waitFor(() => Object.values(left = leftBehind()).every((l) => l.length === 0), 20000);
hostCheck("the server has no process left once the runs are over", left.kids.length ? `pids ${left.kids.join(" ")}` : null);
hostCheck("no cgroup of the server's containers is left in any hierarchy", left.cgs.length ? left.cgs.join(" ") : null);
hostCheck("no new mount on the host (/proc/self/mountinfo)", left.mounts.length ? left.mounts.join(" | ") : null);
if (runtimeDir) {
  hostCheck("the runtime dir's scratch is empty", left.scratch.length ? left.scratch.join(" ") : null);
  hostCheck("no container state is left in the runtime dir", left.states.length ? left.states.join(" ") : null);
}
hostCheck("the host's count of AIO contexts (fs.aio-nr) is as before", aioNr() === aioBefore ? null : `${aioBefore} -> ${aioNr()}`);
hostCheck("no process named for this run is left on the host", await hostChecks["no-token-process"]());
hostCheck("the host listeners saw no connection", await hostChecks["listener-untouched"]());
hostCheck("the server still answers a run after the suite", await hostChecks["server-answers"]());
hostCheck("the server's peak memory stayed under 96 MiB", await hostChecks["server-memory-bounded"]());
hostCheck(`the suite ran in ${Math.round(suiteMs / 1000)} s (under 90 s)`, suiteMs < 90000 ? null : `${suiteMs} ms`);
try { await client.close(); } catch { }
const exited = await waitFor(() => !fs.existsSync(`/proc/${serverPid}`) ||
  /^State:\s+Z/m.test(fs.readFileSync(`/proc/${serverPid}/status`, "utf8")), 5000);
hostCheck("the server exits when the client closes", exited ? null : `pid ${serverPid} still runs`);
tcp.close();
abstract.close();
fs.rmSync(path.dirname(marker), { recursive: true, force: true });

// ---- output -------------------------------------------------------------

let failed = 0;
if (report) {
  const rows = results.map((x) => [x.c.name, x.c.expected, x.skip ? "skipped" : x.obs,
    x.skip ? `skipped: ${x.skip}` : x.fails.length ? "NO" : "yes"]);
  const head = ["case", "expected", "observed", "contained"];
  const w = head.map((h, i) => Math.min(i === 0 ? 28 : 60, Math.max(h.length, ...rows.map((r) => r[i].length))));
  const fmt = (r) => r.map((v, i) => (i < 3 ? v.slice(0, w[i]).padEnd(w[i]) : v)).join("  ");
  console.log(fmt(head));
  console.log(w.map((n) => "-".repeat(n)).join("  "));
  for (const r of rows) console.log(fmt(r));
  for (const x of results) if (x.fails?.length) { failed++; console.log(`\n${x.c.name}: ${x.fails.join("; ")}`); }
  for (const h of after) if (h.failure) { failed++; console.log(`\nhost: ${h.name}: ${h.failure}`); }
  const n = results.filter((x) => !x.skip).length;
  console.log(`\n${n - results.filter((x) => x.fails?.length).length} of ${n} cases contained` +
    `, ${results.length - n} skipped; host ${after.every((h) => !h.failure) ? "unchanged" : "CHANGED"}` +
    ` (limits: ${JSON.stringify(mechanisms)}, ${Math.round(suiteMs / 1000)} s)`);
} else {
  let n = 0;
  console.log(`# ${cases.length} hostile cases, token ${token}, server pid ${serverPid}, limits ${JSON.stringify(mechanisms)}`);
  for (const x of results) {
    n++;
    if (x.skip) { console.log(`ok ${n} - ${x.c.name} # SKIP ${x.skip}`); continue; }
    console.log(`${x.fails.length ? "not ok" : "ok"} ${n} - ${x.c.name}: ${x.c.hostile} -> ${x.c.expected}`);
    if (x.fails.length) {
      failed++;
      for (const f of x.fails) console.log(`#   ${f}`);
      console.log(`#   observed: ${x.obs}`);
      const sc = x.r?.structuredContent;
      if (sc) console.log(`#   stdout: ${JSON.stringify(decode(sc, "stdout").toString("utf8").slice(-400))}` +
        `\n#   stderr: ${JSON.stringify(decode(sc, "stderr").toString("utf8").slice(-400))}`);
    }
  }
  for (const h of after) {
    n++;
    console.log(`${h.failure ? "not ok" : "ok"} ${n} - host: ${h.name}`);
    if (h.failure) { failed++; console.log(`#   ${h.failure.slice(0, 1000)}`); }
  }
  if (failed) console.log(`# server stderr (tail): ${JSON.stringify(serverStderr.slice(-600))}`);
  console.log(`1..${n}`);
}
process.exit(failed ? 1 : 0);
