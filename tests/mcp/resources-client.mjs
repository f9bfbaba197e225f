// Session files as MCP resources through the official MCP TypeScript SDK
// client, over stdio (or HTTP with --http URL TOKEN): the template, a
// chart listed and read back byte for byte, paging (the server runs with
// resource_page_size 2), refusals, subscriptions and their notifications.
// Prints "RESULT 0|1 name" lines and "# ..." diagnostics for the shell test.
//   node resources-client.mjs SR_BIN
//   node resources-client.mjs --http URL TOKEN
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  ResourceListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const http = argv[0] === "--http";
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const transport = http
  ? new StreamableHTTPClientTransport(new URL(argv[1]),
    { requestInit: { headers: { Authorization: `Bearer ${argv[2]}` } } })
  : new StdioClientTransport({ command: argv[0], args: ["serve"], env: process.env, stderr: "inherit" });
const client = new Client({ name: "sandbox-runner-resources-test", version: "1.0.0" });

// Every notification, in order.
const updated = [];
let listChanged = 0;
client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => { updated.push(n.params.uri); });
client.setNotificationHandler(ResourceListChangedNotificationSchema, () => { listChanged++; });
// Waits up to ms for cond() to hold.
const waitFor = async (cond, ms = 5000) => {
  for (const end = Date.now() + ms; !cond() && Date.now() < end;) await sleep(50);
  return cond();
};
const call = (name, args) => client.callTool({ name, arguments: args });
const rpcError = (p) => p.then(() => undefined, (e) => e);
const uriOf = (sid, path) => `sandbox://sessions/${sid}/files/${path.split("/").map(encodeURIComponent).join("/")}`;

await client.connect(transport);
const caps = client.getServerCapabilities();
check(caps?.resources?.subscribe === true && caps?.resources?.listChanged === true,
  "initialize advertises resources with subscribe and listChanged", caps);

let t = await client.listResourceTemplates();
check(t.resourceTemplates?.length === 1
  && t.resourceTemplates[0].uriTemplate === "sandbox://sessions/{session_id}/files/{path}"
  && typeof t.resourceTemplates[0].name === "string",
  "resources/templates/list gives the session file template", t);

// A chart made with matplotlib in a python-data session.
let r = await call("create_session", { image: "python-data" });
const sid = r.structuredContent?.session_id;
r = await call("run_code", { session_id: sid, language: "python", code: [
  "import matplotlib",
  "matplotlib.use('Agg')",
  "import matplotlib.pyplot as plt",
  "plt.plot([1, 2, 3], [1, 4, 9]); plt.savefig('chart.png')",
  "open('notes.txt', 'w').write('a chart of squares\\n')",
].join("\n") });
check(r.structuredContent?.status === "success", "run_code draws chart.png in a python-data session", r);
r = await call("read_artifact", { session_id: sid, path: "chart.png" });
const png = Buffer.from(r.content?.find((b) => b.type === "image")?.data ?? "", "base64");

// Every page, following nextCursor.
const listAll = async () => {
  const pages = [];
  let cursor;
  do {
    const page = await client.listResources(cursor ? { cursor } : {});
    pages.push(page);
    cursor = page.nextCursor;
  } while (cursor && pages.length < 50);
  return pages;
};
let pages = await listAll();
let all = pages.flatMap((p) => p.resources);
const chart = all.find((x) => x.uri === uriOf(sid, "chart.png"));
check(chart?.mimeType === "image/png" && chart.size === png.length && chart.name === "chart.png",
  "resources/list lists the chart with its URI, MIME type and size", all);

const read = await client.readResource({ uri: uriOf(sid, "chart.png") });
const blob = Buffer.from(read.contents?.[0]?.blob ?? "", "base64");
check(png.length > 1000 && blob.equals(png) && read.contents[0].mimeType === "image/png"
  && read.contents[0].uri === uriOf(sid, "chart.png"),
  "resources/read of the chart is a blob of the same bytes read_artifact gives", read.contents?.[0]?.mimeType);
const text = await client.readResource({ uri: uriOf(sid, "notes.txt") });
check(text.contents?.[0]?.text === "a chart of squares\n" && text.contents[0].mimeType === "text/plain",
  "resources/read of a text file is text", text);

// Paging: five more files in a directory whose name needs escaping.
await call("run_code", { session_id: sid, language: "python",
  code: "import os\nos.makedirs('out dir', exist_ok=True)\nfor i in range(5): open(f'out dir/f{i}.txt', 'w').write(str(i))" });
pages = await listAll();
all = pages.flatMap((p) => p.resources).filter((x) => x.uri.includes(sid));
const uris = all.map((x) => x.uri);
const want = ["chart.png", "notes.txt", ...[0, 1, 2, 3, 4].map((i) => `out dir/f${i}.txt`)].map((p) => uriOf(sid, p));
check(pages.length >= 4 && pages.every((p) => p.resources.length <= 2)
  && pages.slice(0, -1).every((p) => typeof p.nextCursor === "string") && !pages.at(-1).nextCursor,
  `resources/list pages by 2 with an opaque nextCursor (${pages.length} pages)`, pages.map((p) => [p.resources.length, p.nextCursor]));
check(uris.length === want.length && new Set(uris).size === uris.length && want.every((u) => uris.includes(u)),
  "the pages together list every file once", uris);
check(uris.includes(`sandbox://sessions/${sid}/files/out%20dir/f0.txt`),
  "a path segment is percent-encoded in the URI", uris);
const f3 = await client.readResource({ uri: uriOf(sid, "out dir/f3.txt") });
check(f3.contents?.[0]?.text === "3", "a percent-encoded URI reads back its file", f3);

// Refusals.
let e = await rpcError(client.listResources({ cursor: "not-a-cursor!" }));
check(e?.code === -32602, "an invalid cursor is -32602", String(e));
for (const [uri, what] of [
  [uriOf(sid, "missing.txt"), "a file that is not there"],
  [uriOf("0".repeat(32), "chart.png"), "an unknown session"],
  [`sandbox://sessions/${sid}/files/../../etc/passwd`, "a path with .."],
  [`sandbox://sessions/${sid}/files/%2Fetc%2Fpasswd`, "an escaped path outside /mnt/data"],
  ["file:///etc/passwd", "another scheme"],
]) {
  e = await rpcError(client.readResource({ uri }));
  check(e?.code === -32002, `resources/read of ${what} is -32002 resource not found`, String(e));
}

// Subscriptions: a file that does not exist yet, written by a run.
const watched = uriOf(sid, "live/result.txt");
await client.subscribeResource({ uri: watched });
const changesBefore = listChanged;
await call("run_code", { session_id: sid, language: "python",
  code: "import os\nos.makedirs('live', exist_ok=True)\nopen('live/result.txt', 'w').write('one')" });
check(await waitFor(() => updated.includes(watched)),
  "a run that creates a subscribed file sends notifications/resources/updated", updated);
check(await waitFor(() => listChanged > changesBefore),
  "and notifications/resources/list_changed, as a file came", listChanged);
updated.length = 0;
const changesAfter = listChanged;
await call("file_write", { session_id: sid, path: "live/result.txt", content: "two" });
check(await waitFor(() => updated.includes(watched)), "file_write of a subscribed file sends updated", updated);
const now = await client.readResource({ uri: watched });
check(now.contents?.[0]?.text === "two", "and resources/read then reads the new content", now);
await call("run_code", { session_id: sid, language: "python", code: "print(open('notes.txt').read())" });
await sleep(500);
check(listChanged === changesAfter && updated.length === 1,
  "a run that changes no file sends nothing, and a changed file no list_changed", [listChanged, changesAfter, updated]);

updated.length = 0;
await client.unsubscribeResource({ uri: watched });
await call("file_write", { session_id: sid, path: "live/result.txt", content: "three" });
await sleep(500);
check(updated.length === 0, "after resources/unsubscribe no updated comes", updated);

// A shell command in the session counts as a run.
await client.subscribeResource({ uri: watched });
updated.length = 0;
r = await call("shell_new", { session_id: sid });
// Replaced, not rewritten in place: a rootless runner's file_write left
// the file the runner's, which the user the shell runs as may replace
// in its own directory but not modify (sandbox-runner.conf(5), user).
await call("shell_exec", { shell_id: r.structuredContent?.shell_id,
  command: "echo four > live/.result.new && mv -f live/.result.new live/result.txt" });
check(await waitFor(() => updated.includes(watched)), "shell_exec that writes a subscribed file sends updated", updated);

// upload_file without a session makes one, whose file is news.
const beforeUpload = listChanged;
r = await call("upload_file", { filename: "in.csv", content_base64: Buffer.from("a,b\n").toString("base64") });
const sid2 = r.structuredContent?.session_id;
check(await waitFor(() => listChanged > beforeUpload), "upload_file into a new session sends list_changed", listChanged);
all = (await listAll()).flatMap((p) => p.resources);
check(all.some((x) => x.uri === uriOf(sid2, "in.csv") && x.size === 4), "and its file is listed", all.map((x) => x.uri));
await call("close_session", { session_id: sid2 });

// Closing the session takes its files away.
const beforeClose = listChanged;
await call("close_session", { session_id: sid });
check(await waitFor(() => listChanged > beforeClose), "close_session sends list_changed", listChanged);
all = (await listAll()).flatMap((p) => p.resources);
check(!all.some((x) => x.uri.includes(sid)), "and the session's files are no longer listed", all);

await client.close();
process.exit(0);
