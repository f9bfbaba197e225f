// The MCP round trip of run_code python print(1), as an agent sees it:
// the official SDK client over stdio, one warm-up call, then RUNS timed
// calls in a row.  Prints "SYSTEM<TAB>WORKLOAD<TAB>MICROSECONDS" lines.
//   node mcp-roundtrip.mjs SR_BIN RUNS
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const [bin, runs] = [process.argv[2], Number(process.argv[3] ?? 20)];
const client = new Client({ name: "sandbox-runner-bench", version: "1.0.0" });
await client.connect(new StdioClientTransport({ command: bin, args: ["serve"], env: { ...process.env } }));
const call = () => client.callTool({ name: "run_code", arguments: { language: "python", code: "print(1)" } });
const warm = await call();
if (warm.structuredContent?.stdout !== "1\n") throw new Error("run_code did not print 1");
for (let i = 0; i < runs; i++) {
  const t0 = process.hrtime.bigint();
  await call();
  const us = (process.hrtime.bigint() - t0) / 1000n;
  console.log(`sandbox-runner MCP stdio\trun_code print(1)\t${us}`);
}
await client.close();
