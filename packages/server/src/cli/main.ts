import { parseArgs, type ParseArgsConfig } from "node:util";
import { runApi } from "./api.js";
import { runDev } from "./dev.js";
import { runInit } from "./init.js";
import { runWorker } from "./worker.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

const CONFIG = { config: { type: "string", short: "c" } } as const satisfies Options;
const LISTEN = {
  host: { type: "string", short: "H", default: "127.0.0.1" },
  port: { type: "string", short: "p", default: "8000" },
  "no-inspector": { type: "boolean", default: false },
  "trace-url": { type: "string" },
} as const satisfies Options;
const HELP = { help: { type: "boolean", short: "h", default: false } } as const satisfies Options;

/** Each command: what it does, its usage, and the options it takes (no other is accepted). */
const COMMANDS = {
  api: {
    about: "serve the graph over HTTP until SIGTERM or SIGINT",
    usage: `tenxgraph api [--config tenxgraph.json] [--host 127.0.0.1] [--port 8000] [--workers N]
                [--no-inspector] [--trace-url URL]
  --config, -c     the project's config (default: tenxgraph.json, looked for upwards)
  --host, -H       the address to listen on (default 127.0.0.1)
  --port, -p       the port (default 8000; 0 picks a free one)
  --workers, -w    background-run workers in this process (default 1 when runs are configured;
                   0 makes a pure API node)
  --no-inspector   do not serve the web inspector at /inspector/
  --trace-url      where the inspector links a run's trace, '{traceId}' replaced by its id
                   (e.g. 'http://localhost:16686/trace/{traceId}' for Jaeger)`,
    options: { ...CONFIG, ...LISTEN, workers: { type: "string", short: "w" } },
  },
  worker: {
    about: "run background runs from the PostgreSQL queue (runs.postgres_dsn)",
    usage: `tenxgraph worker [--config tenxgraph.json] [--concurrency N]
  --config, -c     the project's config (default: tenxgraph.json, looked for upwards)
  --concurrency    runs at once in this process (default 1)`,
    options: { ...CONFIG, concurrency: { type: "string" } },
  },
  dev: {
    about: "serve like api, and restart when a file in the project changes",
    usage: `tenxgraph dev [--config tenxgraph.json] [--host 127.0.0.1] [--port 8000] [--no-inspector]
              [--trace-url URL]
  (the options of api, without --workers)`,
    options: { ...CONFIG, ...LISTEN },
  },
  init: {
    about: "write a new project: a support agent served over HTTP, with a test",
    usage: `tenxgraph init [dir] [--force] [--from <folder>]
  dir              where to write it (default: the current folder)
  --force, -f      write into a folder that is not empty
  --from           install the @tenxgraph packages from release tarballs instead of the
                   registry: a tenxgraph clone after "npm run pack", or a folder of tarballs`,
    options: { force: { type: "boolean", short: "f", default: false }, from: { type: "string" } },
  },
} as const satisfies Record<string, { about: string; usage: string; options: Options }>;

type Command = keyof typeof COMMANDS;

const USAGE = `Usage: tenxgraph <command> [options]   (tenxgraph <command> --help for its options)

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(8)} ${command.about}`)
  .join("\n")}`;

function isCommand(name: string): name is Command {
  return Object.hasOwn(COMMANDS, name);
}

/** The `tenxgraph` command: parses arguments and runs a subcommand. */
async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === undefined || first === "--help" || first === "-h" || first === "help") {
    const topic = first === "help" ? rest[0] : undefined;
    console.log(topic !== undefined && isCommand(topic) ? COMMANDS[topic].usage : USAGE);
    return;
  }
  if (first === "--version" || first === "-v") {
    console.log(await ownVersion());
    return;
  }
  if (!isCommand(first)) throw new Error(`unknown command '${first}'\n${USAGE}`);
  const spec = COMMANDS[first];
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: first === "init",
      options: { ...spec.options, ...HELP },
    });
  } catch (error) {
    throw new Error(`${first}: ${(error as Error).message}\nUsage: ${spec.usage}`, {
      cause: error,
    });
  }
  const { values, positionals } = parsed;
  if (values.help) {
    console.log(`Usage: ${spec.usage}`);
    return;
  }
  const text = (name: string) => values[name] as string | undefined;
  const flag = (name: string) => values[name] === true;
  if (first === "init") {
    if (positionals.length > 1)
      throw new Error(`init: one folder at most, got ${positionals.join(" ")}`);
    return runInit(positionals[0] ?? ".", { force: flag("force"), from: text("from") });
  }
  if (first === "worker") {
    return runWorker({
      config: text("config"),
      concurrency: count(text("concurrency"), "--concurrency", 1),
    });
  }
  const port = Number(text("port"));
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be 0..65535, got '${text("port")}'`);
  const serveArgs = {
    config: text("config"),
    host: text("host")!,
    port,
    noInspector: flag("no-inspector"),
    traceUrl: text("trace-url"),
  };
  if (first === "dev") return runDev(serveArgs);
  return runApi({ ...serveArgs, workers: count(text("workers"), "--workers", 0) });
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

/** This package's version, from its package.json. */
async function ownVersion(): Promise<string> {
  const { readFileSync } = await import("node:fs");
  const manifest = new URL("../../package.json", import.meta.url);
  return (JSON.parse(readFileSync(manifest, "utf8")) as { version: string }).version;
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(`tenxgraph: ${(error as Error).message}`);
  process.exit(1);
});
