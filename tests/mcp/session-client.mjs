// Sessions, artifacts and file tools through the official MCP TypeScript
// SDK client, over stdio (or HTTP with --http URL, where the artifacts'
// download_url is fetched too).  Prints "RESULT 0|1 name" lines and
// "# ..." diagnostics for the shell test.
//   node session-client.mjs SR_BIN HOST_SECRET_FILE
//   node session-client.mjs --http URL TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const argv = process.argv.slice(2);
const http = argv[0] === "--http";
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const connect = async (env = {}) => {
  const transport = http
    ? new StreamableHTTPClientTransport(new URL(argv[1]),
      { requestInit: { headers: { Authorization: `Bearer ${argv[2]}` } } })
    : new StdioClientTransport({ command: argv[0], args: ["serve"], env: { ...process.env, ...env },
      stderr: "inherit" });
  const client = new Client({ name: "sandbox-runner-session-test", version: "1.0.0" });
  await client.connect(transport);
  // The SDK client checks every structuredContent against the output
  // schemas tools/list gave it.
  await client.listTools();
  return client;
};
const call = (client, name, args) => client.callTool({ name, arguments: args });
const errorCode = (r) => {
  try {
    return r.isError ? JSON.parse(r.content?.[0]?.text ?? "{}").error?.code : undefined;
  } catch {
    return undefined;
  }
};
const b64 = (s) => Buffer.from(s).toString("base64");

const client = await connect();

if (http) {
  // The download route: an artifact's download_url serves its bytes, with
  // its signature and without; the bare URL only under the bearer token.
  const csv = "a,b\n1,2\n";
  let r = await call(client, "upload_file", { filename: "in.csv", content_base64: b64(csv) });
  const sid = r.structuredContent?.session_id;
  r = await call(client, "list_artifacts", { session_id: sid });
  const signed = r.structuredContent?.artifacts?.[0]?.download_url ?? "";
  const url = signed.split("?")[0];
  check(/\/files\/[A-Za-z0-9_-]+\.[0-9a-f]{32}\/in\.csv$/.test(url) && url.endsWith(`.${sid}/in.csv`),
    "artifacts carry a download_url, /files/{server_id}.{session}/{path}", r);
  let res = await fetch(url, { headers: { Authorization: `Bearer ${argv[2]}` } });
  check(res.status === 200 && (await res.text()) === csv, "GET download_url serves the artifact's bytes");
  res = await fetch(url);
  check(res.status === 401, "without the bearer token nor the signature the download is refused", res.status);
  res = await fetch(url.replace("in.csv", "..%2F..%2Fetc%2Fpasswd"),
    { headers: { Authorization: `Bearer ${argv[2]}` } });
  check(res.status === 403 || res.status === 404, "a download path escaping /mnt/data is refused", res.status);
  res = await fetch(url.replace(sid, "0".repeat(32)), { headers: { Authorization: `Bearer ${argv[2]}` } });
  check(res.status === 404, "a download from an unknown session is 404", res.status);
  // A name of invalid UTF-8: valid JSON, and its download_url serves it.
  await call(client, "run_code", { session_id: sid, language: "python",
    code: "open(b'/mnt/data/bad\\xff.txt', 'wb').write(b'bad bytes')" });
  r = await call(client, "list_artifacts", { session_id: sid });
  const bad = r.structuredContent?.artifacts?.find((x) => x.path === "bad\\xff.txt");
  check(bad?.path_base64 === Buffer.from("bad\xff.txt", "latin1").toString("base64")
    && bad.download_url?.split("?")[0].endsWith(`.${sid}/bad%FF.txt`), "a name of invalid UTF-8 over HTTP: escaped, its download_url percent-encoded", r);
  res = await fetch(bad?.download_url ?? url);
  check(res.status === 200 && (await res.text()) === "bad bytes", "GET its download_url serves it, signed for the name's bytes");
  res = await fetch(url.replace("in.csv", "nope%FF.txt"), { headers: { Authorization: `Bearer ${argv[2]}` } });
  let body;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(await res.arrayBuffer()));
  } catch (e) {
    body = String(e);
  }
  check(res.status === 404 && typeof body?.error?.message === "string",
    "a missing name of invalid UTF-8 is 404, its error valid UTF-8 JSON", [res.status, body]);
  r = await call(client, "close_session", { session_id: sid });
  check(r.structuredContent?.closed === true, "close_session over HTTP");
  await client.close();
  process.exit(0);
}

const hostSecret = argv[1];

// The data workflow: upload a CSV, analyse and plot it, read the chart back.
const csv = "x,y\n" + Array.from({ length: 20 }, (_, i) => `${i},${i * i}`).join("\n") + "\n";
let r = await call(client, "upload_file", { filename: "data.csv", content_base64: b64(csv) });
const sid = r.structuredContent?.session_id;
check(!r.isError && /^[0-9a-f]{32}$/.test(sid ?? "") && r.structuredContent?.path === "/mnt/data/data.csv",
  "upload_file without a session creates one and returns its id and the path", r);

r = await call(client, "upload_file", { session_id: sid, filename: "data.csv", content_base64: b64("x") });
check(errorCode(r) === "file_exists", "uploading over an existing file is file_exists", r);

r = await call(client, "run_code", {
  session_id: sid, language: "python", code: [
    "import pandas as pd, matplotlib",
    "matplotlib.use('Agg')",
    "import matplotlib.pyplot as plt",
    "df = pd.read_csv('data.csv')",
    "print(int(df.y.sum()))",
    "df.plot(x='x', y='y'); plt.savefig('chart.png')",
  ].join("\n"),
});
const arts = r.structuredContent?.artifacts ?? [];
check(r.structuredContent?.status === "success" && r.structuredContent?.stdout === "2470\n",
  "run_code in the session reads the uploaded CSV with pandas", r.structuredContent);
check(arts.length === 1 && arts[0].path === "chart.png" && arts[0].mime_type === "image/png" && arts[0].size > 1000,
  "the result lists chart.png, and only it, as a new image/png artifact", arts);

const link = r.content?.find((b) => b.type === "resource_link");
check(r.content?.[0]?.type === "text" && /chart\.png \(image\/png, \d+ bytes\)/.test(r.content[0].text)
  && link?.uri === `sandbox://sessions/${sid}/files/chart.png` && link.name === "chart.png"
  && link.mimeType === "image/png" && link.size === arts[0]?.size && arts[0]?.uri === link.uri,
  "the run's new file comes as a resource_link block (uri, name, mimeType, size), named in the text", r.content);

r = await call(client, "read_artifact", { session_id: sid, path: "chart.png" });
const image = r.content?.[1];
const png = Buffer.from(image?.data ?? "", "base64");
const onDisk = await call(client, "run_code", { session_id: sid, language: "python",
  code: "import base64; print(base64.b64encode(open('chart.png','rb').read()).decode())" });
check(r.content?.length === 2 && r.content[0].type === "text" && image?.type === "image"
  && image.mimeType === "image/png" && png.equals(Buffer.from(onDisk.structuredContent?.stdout?.trim() ?? "", "base64"))
  && png.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
  "read_artifact of the chart is an image block whose bytes are the PNG", r.content?.map((b) => b.type));
check(r.structuredContent?.mime_type === "image/png" && r.structuredContent.size === png.length
  && r.structuredContent.delivery === "image" && r.structuredContent.content_base64 === undefined
  && /^chart\.png: image\/png, \d+ bytes/.test(r.content[0].text),
  "its structuredContent says where the bytes are and does not repeat them", r.structuredContent);
r = await call(client, "read_artifact", { session_id: sid, path: "data.csv" });
check(r.structuredContent?.delivery === "text" && r.content?.[1]?.type === "text" && r.content[1].text === csv,
  "read_artifact of a CSV is its text", r.content);

r = await call(client, "list_artifacts", { session_id: sid });
check(JSON.stringify((r.structuredContent?.artifacts ?? []).map((a) => a.path)) === JSON.stringify(["chart.png", "data.csv"])
  && r.structuredContent.artifacts.every((a) => a.mime_type && /^\d{4}-\d\d-\d\dT/.test(a.mtime)),
  "list_artifacts lists both files with MIME types and times", r.structuredContent);

// State persists from call to call; the working directory is /mnt/data.
await call(client, "run_code", { session_id: sid, language: "python", code: "open('state.txt','w').write('kept')\nimport os\nos.makedirs('/work/w', exist_ok=True)\nopen('/work/w/t','w').write('w')" });
r = await call(client, "run_code", { session_id: sid, language: "python", code: "import os\nprint(open('state.txt').read(), open('/work/w/t').read(), os.getcwd())" });
check(r.structuredContent?.stdout === "kept w /mnt/data\n", "files persist across run_code calls, in /mnt/data and /work", r.structuredContent);
check((r.structuredContent?.artifacts ?? []).length === 0, "a call that changes nothing lists no artifacts", r.structuredContent?.artifacts);

// One call at a time per session.
const slow = call(client, "run_code", { session_id: sid, language: "python", code: "import time; time.sleep(2); print('slow')" });
await sleep(500);
r = await call(client, "run_code", { session_id: sid, language: "python", code: "print(1)" });
check(errorCode(r) === "session_busy", "a call while the session runs another is session_busy", r);
r = await slow;
check(r.structuredContent?.stdout === "slow\n", "and the first call completes", r.structuredContent);

// File tools.
r = await call(client, "file_write", { session_id: sid, path: "src/app.py", content: "a = 1\nb = 2\nprint(a + b)\n" });
check(!r.isError && r.structuredContent?.path === "/mnt/data/src/app.py", "file_write creates parents", r);
r = await call(client, "file_read", { session_id: sid, path: "src/app.py", offset: 2, limit: 1 });
check(r.structuredContent?.content === "     2\tb = 2\n" && r.structuredContent?.total_lines === 3,
  "file_read returns numbered lines from an offset", r.structuredContent);
r = await call(client, "file_patch", { session_id: sid, path: "src/app.py", old_string: "b = 2", new_string: "b = 40" });
check(r.structuredContent?.replacements === 1, "file_patch replaces a unique string", r);
r = await call(client, "file_patch", { session_id: sid, path: "src/app.py", old_string: "nothing", new_string: "x" });
check(errorCode(r) === "no_match", "file_patch of a missing string is no_match", r);
r = await call(client, "file_patch", { session_id: sid, path: "src/app.py",
  diff: "--- a/src/app.py\n+++ b/src/app.py\n@@ -1,3 +1,3 @@\n-a = 1\n+a = 2\n b = 40\n print(a + b)\n" });
check(r.structuredContent?.replacements === 1, "file_patch applies a unified diff", r);
r = await call(client, "run_code", { session_id: sid, language: "python", code: "exec(open('src/app.py').read())" });
check(r.structuredContent?.stdout === "42\n", "the patched file runs", r.structuredContent);
r = await call(client, "file_search", { session_id: sid, pattern: "^b = [0-9]+", glob: "*.py" });
check(r.structuredContent?.matches?.length === 1 && r.structuredContent.matches[0].line === 2
  && r.structuredContent.matches[0].path === "/mnt/data/src/app.py", "file_search finds the line", r.structuredContent);
// Sizes: file_read of a 1 MB file comes back capped with a hint to
// page; file_search counts what it left out; a binary file is an
// embedded resource, and one over 1 MiB a resource_link.
await call(client, "run_code", { session_id: sid, language: "python", code: [
  "open('big.log', 'w').write(''.join(f'line {i} ' + 'z' * 90 + '\\n' for i in range(10000)))",
  "open('one.line', 'w').write('q' * 1000000)",
  "open('blob.bin', 'wb').write(bytes(range(256)) * 8)",
  "open('huge.bin', 'wb').write(bytes(2 << 20))",
].join("\n") });
r = await call(client, "file_read", { session_id: sid, path: "big.log" });
const next = r.structuredContent?.next_offset;
check(r.structuredContent?.truncated === true && Buffer.byteLength(r.structuredContent.content) <= 51200
  && next > 1 && r.structuredContent.content.endsWith("\n") && r.content?.[0]?.text?.includes(`offset=${next}`),
  "file_read of a 1 MB file is capped at 50 KiB, its text ending with a hint to page with offset", r.structuredContent?.hint);
r = await call(client, "file_read", { session_id: sid, path: "big.log", offset: next, limit: 1 });
check(r.structuredContent?.content?.startsWith(`${String(next).padStart(6)}\tline ${next - 1} `)
  && r.structuredContent.truncated === false, "and offset=next_offset reads on where it stopped", r.structuredContent);
r = await call(client, "file_read", { session_id: sid, path: "one.line" });
check(r.structuredContent?.truncated === true && Buffer.byteLength(r.structuredContent.content) <= 51200
  && /read_artifact/.test(r.structuredContent.hint ?? ""), "a single line over the cap is cut, the hint says how to read it", r.structuredContent?.hint);
r = await call(client, "file_search", { session_id: sid, pattern: "^line", path: "/mnt/data", glob: "big.log" });
const shown = r.structuredContent?.matches?.length ?? 0;
check(shown > 0 && r.structuredContent.omitted > 0 && shown + r.structuredContent.omitted === 1000
  && /left out/.test(r.content?.[0]?.text ?? ""), `file_search returns ${shown} matches within the cap and counts the ${r.structuredContent?.omitted} it left out`, r.structuredContent?.omitted);
r = await call(client, "read_artifact", { session_id: sid, path: "blob.bin" });
check(r.structuredContent?.delivery === "resource" && r.content?.[1]?.type === "resource"
  && r.content[1].resource.uri === `sandbox://sessions/${sid}/files/blob.bin`
  && Buffer.from(r.content[1].resource.blob, "base64").equals(Buffer.from(Array.from({ length: 2048 }, (_, i) => i % 256))),
  "read_artifact of a binary is an embedded resource blob, byte for byte", r.structuredContent);
r = await call(client, "read_artifact", { session_id: sid, path: "huge.bin" });
check(r.structuredContent?.delivery === "link" && r.content?.[1]?.type === "resource_link"
  && r.content[1].size === 2 << 20 && JSON.stringify(r).length < 4096,
  "read_artifact of a file over 1 MiB is a resource_link, not its bytes", r.structuredContent);
await call(client, "run_code", { session_id: sid, language: "python", code: "import os\nfor f in ('big.log', 'one.line', 'blob.bin', 'huge.bin'): os.remove(f)" });

r = await call(client, "file_read", { session_id: sid, path: "/etc/os-release" });
check(/Debian/.test(r.structuredContent?.content ?? ""), "file_read of an absolute path reads the container's file", r);
r = await call(client, "file_write", { session_id: sid, path: "/etc/passwd", content: "x" });
check(r.isError && ["path_outside_sandbox", "io_error"].includes(errorCode(r)), "file_write to the read-only root is refused", r);

// Nothing escapes to the host.
const secret = hostSecret;
await call(client, "run_code", { session_id: sid, language: "python", code: [
  "import os",
  `os.symlink('${secret}', 'abs-link')`,
  `os.symlink('../../../../../../..${secret}', 'rel-link')`,
  "os.symlink('/proc/self/root' + " + JSON.stringify(secret) + ", 'proc-link')",
  "os.symlink('/', 'root-link')",
  "os.mkfifo('fifo')",
].join("\n") });
for (const path of ["abs-link", "rel-link", "proc-link", `root-link${secret}`, `../../../../..${secret}`,
  secret, `/proc/1/root${secret}`, "fifo"]) {
  r = await call(client, "read_artifact", { session_id: sid, path });
  check(r.isError && !/host-secret \d/.test(JSON.stringify(r)), `read_artifact ${path} is refused (${errorCode(r)})`, r);
  r = await call(client, "file_read", { session_id: sid, path });
  check(!(r.structuredContent?.content ?? "").includes("host-secret"), `file_read ${path} never reads the host`, r);
}
r = await call(client, "upload_file", { session_id: sid, filename: "../escape.txt", content_base64: b64("x") });
check(["path_outside_sandbox", "invalid_path"].includes(errorCode(r)), "upload_file with .. is refused", r);
r = await call(client, "upload_file", { session_id: sid, filename: "abs-link", content_base64: b64("pwned"), overwrite: true });
r = await call(client, "run_code", { session_id: sid, language: "python", code: "import os; print(os.path.islink('abs-link'))" });
check(r.structuredContent?.stdout === "False\n", "overwriting a symlink replaces the link, never its target", r.structuredContent);

// A name that is not valid UTF-8 comes as valid JSON: path escaped
// (bad\xff.txt), its bytes in path_base64, which the tools take back.
const tried = (p) => p.catch((e) => ({ thrown: String(e) }));
const callSoon = (name, args) => tried(client.callTool({ name, arguments: args }, undefined, { timeout: 20000 }));
const badName = Buffer.from("bad\xff.txt", "latin1");
const badPath = Buffer.concat([Buffer.from("/mnt/data/"), badName]);
r = await callSoon("run_code", { session_id: sid, language: "python",
  code: "open(b'/mnt/data/bad\\xff.txt', 'wb').write(b'needle in a bad name\\n')" });
let bad = r.structuredContent?.artifacts?.find((x) => x.path_base64 === badName.toString("base64"));
check(r.structuredContent?.status === "success" && bad?.path === "bad\\xff.txt",
  "run_code names a file of invalid UTF-8 as valid JSON, escaped, its bytes in path_base64", r);
r = await callSoon("list_artifacts", { session_id: sid });
bad = r.structuredContent?.artifacts?.find((x) => x.path_base64 === badName.toString("base64"));
check(bad?.path === "bad\\xff.txt", "and so does list_artifacts", r);
r = await callSoon("file_search", { session_id: sid, pattern: "needle in a bad" });
const hit = r.structuredContent?.matches?.[0];
check(r.structuredContent?.matches?.length === 1 && hit.path === "/mnt/data/bad\\xff.txt"
  && hit.path_base64 === badPath.toString("base64"), "and so does file_search", r);
r = await callSoon("read_artifact", { session_id: sid, path: bad?.path ?? "", path_base64: bad?.path_base64 });
check(r.content?.[1]?.text === "needle in a bad name\n"
  && r.structuredContent?.path_base64 === badName.toString("base64"), "the name round-trips to read_artifact", r);
r = await callSoon("file_read", { session_id: sid, path: hit?.path ?? "", path_base64: hit?.path_base64 });
check(/needle in a bad name/.test(r.structuredContent?.content ?? ""), "and to file_read", r);
r = await callSoon("read_artifact", { session_id: sid, path: "x", path_base64: b64("a\0b") });
check(errorCode(r) === "invalid_path", "a path_base64 holding a NUL is invalid_path", r);
await call(client, "run_code", { session_id: sid, language: "python", code: "import os; os.remove(b'bad\\xff.txt')" });

// file_search reads a file of 1000 hard links once: about 1 MiB, not 1 GiB.
r = await call(client, "run_code", { session_id: sid, language: "python", code: [
  "import os",
  "os.makedirs('/tmp/hl')",
  "open('/tmp/hl/0', 'w').write('needle\\n' + ('x' * 1023 + '\\n') * 1024)",
  "for i in range(1, 1000): os.link('/tmp/hl/0', f'/tmp/hl/{i}')",
].join("\n") });
r = await callSoon("file_search", { session_id: sid, pattern: "needle", path: "/tmp/hl" });
check(r.structuredContent?.matches?.length === 1 && r.structuredContent.files_read === 1
  && r.structuredContent.bytes_read === 7 + (1 << 20) && !r.structuredContent.truncated,
  `file_search reads a file of 1000 hard links once (${r.structuredContent?.bytes_read} bytes read)`, r.structuredContent ?? r);
// A search of a tree that would take long (a regular expression slow on
// every file) is cancelled promptly: its session is free again long
// before the search would have ended, and the server answers meanwhile.
r = await call(client, "run_code", { session_id: sid, language: "python", code: [
  "import os",
  "os.makedirs('/tmp/slow')",
  "for i in range(400): open(f'/tmp/slow/{i:03}', 'w').write('x' * 10000)",
].join("\n") });
const stop = new AbortController();
const slowSearch = client.callTool({ name: "file_search", arguments: { session_id: sid, pattern: "(x+)+y", path: "/tmp/slow" } },
  undefined, { signal: stop.signal, timeout: 120000 }).catch((e) => e);
await sleep(1000);
r = await callSoon("list_sessions", {});
check(r.structuredContent?.sessions?.some((x) => x.session_id === sid), "the server answers during a long search", r);
stop.abort();
await slowSearch;
let freed = false;
for (const end = Date.now() + 8000; !freed && Date.now() < end; await sleep(200)) {
  r = await callSoon("run_code", { session_id: sid, language: "python", code: "print('free')" });
  freed = r.structuredContent?.stdout === "free\n";
}
check(freed, "a cancelled file_search stops and frees its session", r);
await call(client, "run_code", { session_id: sid, language: "python", code: "import shutil; shutil.rmtree('/tmp/hl'); shutil.rmtree('/tmp/slow')" });

// The bytes one search reads are capped (max_search_bytes): truncated.
const capped = await connect({ SANDBOX_MAX_SEARCH_BYTES: "2M" });
r = await call(capped, "run_code", { language: "python", session_id: (await call(capped, "create_session", {})).structuredContent?.session_id,
  code: "import os\nos.makedirs('/tmp/cap')\nfor i in range(5): open(f'/tmp/cap/{i}', 'w').write('needle\\n' * 100000)" });
r = await call(capped, "file_search", { session_id: r.structuredContent?.session_id, pattern: "nothing", path: "/tmp/cap" });
check(r.structuredContent?.truncated === true && r.structuredContent.bytes_read <= 2 << 20
  && r.structuredContent.files_read === 2, `file_search stops at max_search_bytes, truncated (${r.structuredContent?.bytes_read} bytes)`, r.structuredContent ?? r);
await capped.close();


// Persistent shells: state kept between commands, Ctrl-C, stdin, timeouts.
r = await call(client, "shell_new", { session_id: sid });
const shell = r.structuredContent?.shell_id;
check(!r.isError && shell?.startsWith(sid) && r.structuredContent?.state === "ready", "shell_new starts a shell in the session", r);
r = await call(client, "shell_exec", { shell_id: shell, command: "cd /tmp && export GREETING=hello && mkdir -p d" });
check(r.structuredContent?.exit_code === 0 && r.structuredContent?.state === "ready", "shell_exec runs a command", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "pwd; echo $GREETING; ls /mnt/data/data.csv; echo err >&2" });
check(r.structuredContent?.output?.includes("/tmp\nhello\n/mnt/data/data.csv\n") && r.structuredContent?.output?.includes("err\n"),
  "the working directory and variables persist, stdout and stderr both come back", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "false" });
check(r.structuredContent?.exit_code === 1, "the exit code of a failing command is returned", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "for i in 1 2 3; do\n  echo line$i\ndone\nX=$(printf '%5000s' | tr ' ' y); echo ${#X}" });
check(r.structuredContent?.output === "line1\nline2\nline3\n5000\n", "multi-line and long commands work", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "python3 -m venv --without-pip /tmp/venv && . /tmp/venv/bin/activate" });
r = await call(client, "shell_exec", { shell_id: shell, command: "echo $VIRTUAL_ENV; command -v python3" });
check(r.structuredContent?.output === "/tmp/venv\n/tmp/venv/bin/python3\n", "an activated venv stays active", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "sleep 30; echo never", wait: false });
check(r.structuredContent?.state === "waiting", "wait=false returns at once with state waiting", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "echo again" });
check(errorCode(r) === "shell_busy", "a second command while one runs is shell_busy", r);
// Prompt: well within the 30 s the command would take, with room for a
// loaded machine.
const t0 = Date.now();
r = await call(client, "write_stdin", { shell_id: shell, data: "\\x03" });
check(r.structuredContent?.bytes === 1, "write_stdin sends Ctrl-C", r);
r = await call(client, "shell_read", { shell_id: shell });
for (const end = t0 + 20000; r.structuredContent?.state !== "ready" && Date.now() < end;) {
  await sleep(100);
  r = await call(client, "shell_read", { shell_id: shell });
}
check(r.structuredContent?.state === "ready" && r.structuredContent?.exit_code === 130 && Date.now() - t0 < 20000
  && !(r.structuredContent?.output ?? "").includes("never"), "Ctrl-C interrupts the running command (exit 130)", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "read -r name; echo hi $name", wait: false });
await call(client, "write_stdin", { shell_id: shell, data: "agent\n" });
for (const end = Date.now() + 20000; r.structuredContent?.state !== "ready" && Date.now() < end;) {
  await sleep(100);
  r = await call(client, "shell_read", { shell_id: shell });
}
check(r.structuredContent?.output === "hi agent\n", "write_stdin feeds a command reading its input", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "sleep 30", timeout_seconds: 1 });
check(r.structuredContent?.timed_out === true && r.structuredContent?.state === "ready", "a command past its timeout is interrupted", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "echo still $GREETING" });
check(r.structuredContent?.output === "still hello\n", "and the shell keeps its state after that", r.structuredContent);
r = await call(client, "shell_list", {});
check(r.structuredContent?.shells?.some((s) => s.shell_id === shell && s.state === "ready"), "shell_list shows the shell", r.structuredContent);
r = await call(client, "shell_exec", { shell_id: shell, command: "exit 3" });
r = await call(client, "shell_read", { shell_id: shell });
check(r.structuredContent?.state === "terminated", "exit ends the shell: state terminated", r.structuredContent);
r = await call(client, "shell_remove", { shell_id: shell });
check(r.structuredContent?.removed === true, "shell_remove removes it", r);
r = await call(client, "shell_read", { shell_id: shell });
check(errorCode(r) === "shell_not_found", "a removed shell is shell_not_found", r);

r = await call(client, "list_sessions", {});
check(r.structuredContent?.sessions?.some((s) => s.session_id === sid), "list_sessions shows the session", r);
r = await call(client, "close_session", { session_id: sid });
check(r.structuredContent?.closed === true, "close_session closes it", r);
r = await call(client, "run_code", { session_id: sid, language: "python", code: "print(1)" });
check(errorCode(r) === "session_not_found", "a closed session is session_not_found", r);

// C++ in a session of the cpp image: compiled in the session, output kept.
r = await call(client, "create_session", { image: "cpp" });
const cpp = r.structuredContent?.session_id;
r = await call(client, "run_code", { session_id: cpp, language: "cpp",
  code: "#include <fstream>\nint main() { std::ofstream(\"out.txt\") << \"from c++\\n\"; }" });
check(r.structuredContent?.status === "success" && r.structuredContent?.artifacts?.[0]?.path === "out.txt",
  "run_code cpp in a session compiles, runs and leaves its file", r.structuredContent);
r = await call(client, "run_code", { session_id: cpp, language: "cpp", code: "int main() { return nope; }" });
check(r.structuredContent?.status === "compile_error", "a compile failure in a session is compile_error", r.structuredContent);
r = await call(client, "create_session", { image: "no-such-image" });
check(errorCode(r) === "image_missing", "a session of a missing image is image_missing", r);

// A result no argument bounds (10000 long names, each a long URI) is
// refused with its code instead of going past the 10 MiB the SDK
// accepts: the connection and the session live on.
r = await call(client, "create_session", { image: "python" });
const wide = r.structuredContent?.session_id;
r = await call(client, "run_code", { session_id: wide, language: "python",
  code: "for i in range(10000): open('\u00e9' * 120 + str(i), 'w').close()" });
check(errorCode(r) === "result_too_large"
      && /about \d+ bytes, over the 9437184 a client accepts.*read_artifact's offset and length/.test(r.content?.[0]?.text),
      "a run_code result over 9 MiB is result_too_large, naming its size and how to ask for less",
      r.content?.[0]?.text?.slice(0, 300));
r = await call(client, "list_artifacts", { session_id: wide });
check(errorCode(r) === "result_too_large", "and so is such a list_artifacts", r.content?.[0]?.text?.slice(0, 300));
r = await call(client, "run_code", { session_id: wide, language: "python", code: "import os; print(len(os.listdir()))" });
check(r.structuredContent?.stdout === "10000\n", "the connection and the session serve on", r.structuredContent);
await call(client, "close_session", { session_id: wide });
await client.close();

// Limits, quota and expiry, in a server configured for them.
const small = await connect({ SANDBOX_MAX_SESSIONS: "2", SANDBOX_SESSION_IDLE_TIMEOUT: "2",
  SANDBOX_SESSION_DATA_SIZE: "1M", SANDBOX_SESSION_IMAGE: "python", SANDBOX_SESSION_QUEUE_TIMEOUT: "5",
  SANDBOX_MAX_CONCURRENT: "2" });
const a = (await call(small, "create_session", {})).structuredContent?.session_id;
const b = (await call(small, "create_session", {})).structuredContent?.session_id;
r = await call(small, "create_session", {});
check(a && b && errorCode(r) === "session_limit", "past max_sessions a new session is session_limit", r);
r = await call(small, "upload_file", { session_id: a, filename: "big", content_base64: Buffer.alloc(2 << 20).toString("base64") });
check(errorCode(r) === "quota_exceeded", "an upload over the session's quota is quota_exceeded", r);
r = await call(small, "run_code", { session_id: a, language: "python", code: "open('big','wb').write(b'x' * (2 << 20))" });
check(r.structuredContent?.status === "error" && /No space left/.test(r.structuredContent?.stderr ?? ""),
  "code writing past the quota fails with ENOSPC", r.structuredContent);
r = await call(small, "run_code", { session_id: a, language: "python", code: "import os; os.remove('big'); print('ok')" });
check(r.structuredContent?.stdout === "ok\n", "and the session keeps working", r.structuredContent);
// With session_queue_timeout, a call for a busy session waits its turn.
const first = call(small, "run_code", { session_id: a, language: "python", code: "import time; time.sleep(1.5); print('first')" });
await sleep(300);
const queuedAt = Date.now();
r = await call(small, "run_code", { session_id: a, language: "python", code: "print('second')" });
const waited = Date.now() - queuedAt;
check(r.structuredContent?.stdout === "second\n" && waited >= 800,
  `with session_queue_timeout a call for a busy session waits its turn (${waited} ms)`, r);
r = await first;
check(r.structuredContent?.stdout === "first\n", "and the call it waited for completed first", r.structuredContent);
// A queued call that is cancelled gives up its place, and with it its run
// slot (this server has two), instead of waiting its turn: the run after
// the cancel ends while the long one runs on (15 s: room for starting a
// container on a loaded machine).
let longDone = false;
const long = call(small, "run_code", { session_id: a, language: "python", code: "import time; time.sleep(15); print('long')", timeout_seconds: 25 })
  .then((x) => { longDone = true; return x; });
await sleep(300);
const abort = new AbortController();
const queued = small.callTool({ name: "run_code", arguments: { session_id: a, language: "python", code: "print('queued')" } },
  undefined, { signal: abort.signal }).catch((e) => e);
await sleep(300);
abort.abort();
await queued;
r = await call(small, "run_code", { language: "python", code: "print(3)" });
check(r.structuredContent?.stdout === "3\n" && !longDone,
  "a cancelled call queued for a busy session gives up its place at once", r.structuredContent);
r = await long;
check(r.structuredContent?.stdout === "long\n", "and the call it queued behind is unharmed", r.structuredContent);
// A queued call whose turn does not come within session_queue_timeout
// (5 s here) is refused as session_busy, while the busy call runs on: not
// before the 5 s, and (the busy call taking 15 s) well before its turn
// would come, with room for a loaded machine.
const longer = call(small, "run_code", { session_id: a, language: "python", code: "import time; time.sleep(15); print('longer')", timeout_seconds: 25 });
await sleep(300);
const busyAt = Date.now();
r = await call(small, "run_code", { session_id: a, language: "python", code: "print('too late')" });
const busyWaited = Date.now() - busyAt;
check(errorCode(r) === "session_busy" && busyWaited >= 4800 && busyWaited < 12000,
  `a call queued past session_queue_timeout is session_busy (${busyWaited} ms)`, r);
r = await longer;
check(r.structuredContent?.stdout === "longer\n", "and the busy call completes", r.structuredContent);
await sleep(3500);
r = await call(small, "run_code", { session_id: b, language: "python", code: "print(1)" });
check(errorCode(r) === "session_not_found", "a session idle past session_idle_timeout is closed", r);
r = await call(small, "create_session", {});
check(!r.isError, "and its place is free again", r);
await small.close();
