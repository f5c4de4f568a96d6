import { parseArgs } from "node:util";
import { runApi } from "./api.js";
import { runDev } from "./dev.js";
import { runInit } from "./init.js";

const USAGE = `Usage:
  tenxgraph api  [--config tenxgraph.json] [--host 127.0.0.1] [--port 8000]
  tenxgraph dev  [--config tenxgraph.json] [--host 127.0.0.1] [--port 8000]   (reloads on file changes)
  tenxgraph init [dir] [--force]`;

/** The `tenxgraph` command: parses arguments and runs a subcommand. */
async function main(argv: string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: {
      config: { type: "string", short: "c" },
      host: { type: "string", short: "H", default: "127.0.0.1" },
      port: { type: "string", short: "p", default: "8000" },
      force: { type: "boolean", short: "f", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help || command === undefined || command === "help") {
    console.log(USAGE);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0..65535, got '${values.port}'`);
  const serveArgs = { config: values.config, host: values.host, port };
  if (command === "api") return runApi(serveArgs);
  if (command === "dev") return runDev(serveArgs);
  if (command === "init") return runInit(positionals[0] ?? ".", { force: values.force });
  throw new Error(`Unknown command '${command}'\n${USAGE}`);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`tenxgraph: ${(error as Error).message}`);
  process.exit(1);
});
