import { parseArgs } from "node:util";
import { runApi } from "./api.js";
import { runDev } from "./dev.js";
import { runInit } from "./init.js";
import { runWorker } from "./worker.js";

const USAGE = `Usage:
  tenxgraph api    [--config tenxgraph.json] [--host 127.0.0.1] [--port 8000] [--workers N]
                   [--no-inspector]   (the web inspector is served at /inspector unless this is given)
  tenxgraph worker [--config tenxgraph.json] [--concurrency N]   (background runs, PostgreSQL)
  tenxgraph dev    [--config tenxgraph.json] [--host 127.0.0.1] [--port 8000] [--no-inspector]
                   (reloads on file changes)
  tenxgraph init   [dir] [--force]`;

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
      workers: { type: "string", short: "w" },
      "no-inspector": { type: "boolean", default: false },
      concurrency: { type: "string" },
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
  const serveArgs = {
    config: values.config,
    host: values.host,
    port,
    noInspector: values["no-inspector"],
  };
  const workers = count(values.workers, "--workers", 0);
  const concurrency = count(values.concurrency, "--concurrency", 1);
  if (command === "api") return runApi({ ...serveArgs, workers });
  if (command === "worker") return runWorker({ config: values.config, concurrency });
  if (command === "dev") return runDev(serveArgs);
  if (command === "init") return runInit(positionals[0] ?? ".", { force: values.force });
  throw new Error(`Unknown command '${command}'\n${USAGE}`);
}

/** A whole-number option of at least `min`, or `undefined` when not given. */
function count(raw: string | undefined, name: string, min: number): number | undefined {
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) {
    throw new Error(`${name} must be a whole number of at least ${min}, got '${raw}'`);
  }
  return value;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`tenxgraph: ${(error as Error).message}`);
  process.exit(1);
});
