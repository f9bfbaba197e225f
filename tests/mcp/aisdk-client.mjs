// The data-science seed workflow through another real client: the Vercel
// AI SDK's MCP client (@ai-sdk/mcp), as an agent built on it runs tools,
// over stdio (or HTTP with --http URL TOKEN).  Upload sales.csv, chart it
// with pandas and matplotlib, read the chart back, close.  The chart must
// reach the model as an image whose bytes are the PNG, not as base64 in
// JSON text; the resources API must give the same bytes.
// Prints "RESULT 0|1 name" lines and "# ..." diagnostics for the shell test.
//   node aisdk-client.mjs SR_BIN
//   node aisdk-client.mjs --http URL TOKEN
import { createHash } from "node:crypto";
import { createMCPClient } from "@ai-sdk/mcp";
import { Experimental_StdioMCPTransport } from "@ai-sdk/mcp/mcp-stdio";

const argv = process.argv.slice(2);
const http = argv[0] === "--http";
const check = (cond, name, detail) => {
  console.log(`RESULT ${cond ? 0 : 1} ${name}`);
  if (!cond && detail !== undefined) console.log(`# ${JSON.stringify(detail).slice(0, 800)}`);
};
const transport = http
  ? { type: "http", url: argv[1], headers: { Authorization: `Bearer ${argv[2]}` } }
  : new Experimental_StdioMCPTransport({ command: argv[0], args: ["serve"], env: process.env });
// It asks server/discover first (2026-07-28) and falls back to initialize
// only when that fails: an error it reports on the way is a failed connect.
const errors = [];
const client = await createMCPClient({ transport, onUncaughtError: (e) => errors.push(String(e)) });
check(client.protocolVersion === "2026-07-28", "the AI SDK client speaks 2026-07-28",
  client.protocolVersion);
const tools = await client.tools();
let calls = 0;
// What the agent loop does with a tool: execute it, then turn its result
// into what the model is given.
const run = async (name, args) => {
  const output = await tools[name].execute(args, { toolCallId: `call-${++calls}`, messages: [] });
  const model = await tools[name].toModelOutput({ toolCallId: `call-${calls}`, input: args, output });
  return { output, model };
};
// The bytes of the model's text parts.
const textBytes = (model) => (model.value ?? []).filter((p) => p.type === "text")
  .reduce((n, p) => n + Buffer.byteLength(p.text), 0);

check(["run_code", "upload_file", "read_artifact", "close_session"].every((n) => tools[n]),
  "the AI SDK client sees the tools", Object.keys(tools));

let { output, model } = await run("run_code", { language: "python", code: "print(1)" });
check(output.structuredContent?.stdout === "1\n" && !JSON.stringify(model).includes("structuredContent"),
  "run_code print(1): the model reads text, not the result's JSON", model);
console.log(`# bytes the model sees for run_code print(1): ${textBytes(model)}`);

const csv = "month,sales\njan,120\nfeb,135\nmar,150\napr,142\nmay,170\n";
({ output } = await run("upload_file", { filename: "sales.csv",
  content_base64: Buffer.from(csv).toString("base64") }));
const sid = output.structuredContent?.session_id;
check(typeof sid === "string" && !output.isError, "upload sales.csv opens a session", output);

({ output } = await run("run_code", { session_id: sid, language: "python", code: [
  "import hashlib",
  "import pandas as pd",
  "import matplotlib",
  "matplotlib.use('Agg')",
  "import matplotlib.pyplot as plt",
  "df = pd.read_csv('sales.csv')",
  "df.plot(x='month', y='sales', kind='bar', legend=False)",
  "plt.savefig('chart.png')",
  "print(hashlib.sha256(open('chart.png', 'rb').read()).hexdigest())",
].join("\n") }));
const digest = (output.structuredContent?.stdout ?? "").trim();
check(output.structuredContent?.status === "success" && /^[0-9a-f]{64}$/.test(digest),
  "pandas and matplotlib chart it in the session", output.structuredContent);

({ output, model } = await run("read_artifact", { session_id: sid, path: "chart.png" }));
const files = (model.value ?? []).filter((p) => p.type === "file");
const png = Buffer.from(files[0]?.data?.data ?? "", "base64");
check(files.length === 1 && files[0].mediaType === "image/png"
  && createHash("sha256").update(png).digest("hex") === digest,
  "the chart reaches the model as one image whose bytes are the PNG", model);
check(textBytes(model) < 300, "beside a short text, not base64 in JSON", textBytes(model));
console.log(`# bytes the model sees for the chart: ${textBytes(model)} of text and an image of ${png.length}`);

const listed = await client.listResources();
const uri = `sandbox://sessions/${sid}/files/chart.png`;
const read = await client.readResource({ uri });
check(listed.resources?.some((r) => r.uri === uri && r.mimeType === "image/png"),
  "resources/list lists the chart", listed);
check(createHash("sha256").update(Buffer.from(read.contents?.[0]?.blob ?? "", "base64")).digest("hex")
  === digest, "resources/read gives the same bytes", read.contents?.[0]?.mimeType);

({ output } = await run("close_session", { session_id: sid }));
check(!output.isError, "close_session closes it", output);
({ output } = await run("read_artifact", { session_id: sid, path: "chart.png" }));
check(output.isError && JSON.stringify(output).includes("session_not_found"),
  "and its files are gone with it", output);
await client.close();
check(errors.length === 0, "the AI SDK client reported no error", errors);
