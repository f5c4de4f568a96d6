import { execFile, execFileSync } from "node:child_process";
import { appendFile, chown, mkdtemp } from "node:fs/promises";
import { existsSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { childPids, waitUntilGone } from "./server-process.js";
import { TestServer, type ServerCommand } from "./test-server.js";

const execFileAsync = promisify(execFile);

/** Options for {@link PostgresServer.start}. */
export interface PostgresServerOptions {
  /** Goes into the temporary directory's name, to tell servers apart when debugging. */
  name?: string;
  /**
   * Whether the server fsyncs its WAL and data files. On by default: the checkpointer's
   * durability is what the crash tests and benchmarks measure, so the default must be real.
   */
  fsync?: boolean;
  /**
   * The addresses the server listens on. 127.0.0.1 alone by default; a test that runs clients
   * in network namespaces adds the address its bridge has in the root namespace, since those
   * clients cannot reach this namespace's loopback. 127.0.0.1 must stay among them: `dsn` and
   * the check that the server is up use it.
   */
  listenAddresses?: string[];
  /**
   * Networks (CIDR, e.g. `10.231.7.0/24`) whose clients log in without a password, besides
   * 127.0.0.1 and ::1, which always may. Only the test's own private network belongs here:
   * listening on an address is not enough to keep everyone else out.
   */
  trustCidrs?: string[];
}

/** Who runs initdb and postgres: they refuse to run as root, so root hands them to `postgres`. */
interface ServiceUser {
  uid: number;
  gid: number;
}

/**
 * A private PostgreSQL server for tests: its own data directory under the OS temp directory,
 * listening on 127.0.0.1 only (unless given more addresses), with trust authentication for the
 * `postgres` role from there (and from networks it is told to trust). It can be
 * stopped, killed and started again on the same port and data, to test restarts and crashes.
 */
export class PostgresServer extends TestServer {
  /** The data directory; its `server.log` has everything the server printed. */
  readonly dataDir: string;
  /** Fast shutdown: rolls back open transactions. */
  protected readonly stopSignal = "SIGINT";
  readonly #fsync: boolean;
  readonly #user: ServiceUser | undefined;
  readonly #listenAddresses: string[];
  readonly #trustCidrs: string[];

  private constructor(
    rootDir: string,
    options: PostgresServerOptions,
    user: ServiceUser | undefined,
  ) {
    super(rootDir);
    this.dataDir = join(rootDir, "data");
    this.#fsync = options.fsync ?? true;
    this.#user = user;
    this.#listenAddresses = options.listenAddresses ?? ["127.0.0.1"];
    this.#trustCidrs = options.trustCidrs ?? [];
  }

  /**
   * Creates a fresh cluster (initdb) and starts it on a free port; resolves once it accepts
   * connections.
   */
  static async start(options: PostgresServerOptions = {}): Promise<PostgresServer> {
    // A space or comma would make a pg_hba.conf line or a setting say something else entirely.
    for (const value of [...(options.listenAddresses ?? []), ...(options.trustCidrs ?? [])]) {
      if (!/^[0-9A-Za-z.:/-]+$/.test(value)) {
        throw new Error(`PostgresServer: not an address or CIDR: ${JSON.stringify(value)}`);
      }
    }
    if (options.listenAddresses && !options.listenAddresses.includes("127.0.0.1")) {
      throw new Error("PostgresServer: listenAddresses must include 127.0.0.1");
    }
    const user = serviceUser();
    const rootDir = await mkdtemp(join(tmpdir(), `tenxgraph-pg-${options.name ?? "test"}-`));
    const server = new PostgresServer(rootDir, options, user);
    try {
      if (user) await chown(rootDir, user.uid, user.gid);
      await server.#initdb();
      await server.#trustNetworks();
      await server.startOnFreePort();
      return server;
    } catch (error) {
      await server.destroy();
      throw error;
    }
  }

  /** A connection string for the `postgres` database as the `postgres` superuser. */
  get dsn(): string {
    return this.dsnFor("127.0.0.1");
  }

  /**
   * {@link dsn}, but reaching the server at `host`: one of its `listenAddresses`, for a client
   * that cannot use 127.0.0.1 (one in another network namespace).
   */
  dsnFor(host: string): string {
    const hostPart = host.includes(":") ? `[${host}]` : host;
    return `postgres://postgres@${hostPart}:${this.port}/postgres`;
  }

  get logFile(): string {
    return join(this.dataDir, "server.log");
  }

  /**
   * SIGKILLs the postmaster and its worker processes at once, as a crash would: no shutdown
   * checkpoint is written, so the next `start` replays the WAL. The workers go too because on
   * their own they would linger until they noticed, and the next start would refuse to run
   * beside them.
   */
  override async kill(): Promise<void> {
    let workers: number[] = [];
    await this.signal("SIGKILL", (pid) => {
      // Stopped first, so that it forks no worker between our listing them and killing them.
      process.kill(pid, "SIGSTOP");
      workers = childPids(pid);
      for (const worker of workers) killQuietly(worker);
    });
    await waitUntilGone(workers);
  }

  /** Creates an empty database on this server and returns a connection string for it. */
  async createDatabase(name: string): Promise<string> {
    return createDatabase(this.dsn, name);
  }

  protected serverCommand(): ServerCommand {
    const settings = {
      listen_addresses: this.#listenAddresses.join(","),
      port: String(this.port),
      unix_socket_directories: this.rootDir,
      fsync: this.#fsync ? "on" : "off",
      // Multi-process tests open a pool per process; the default 100 runs out.
      max_connections: "200",
    };
    return {
      command: postgresBinary("postgres"),
      args: [
        "-D",
        this.dataDir,
        ...Object.entries(settings).flatMap(([k, v]) => ["-c", `${k}=${v}`]),
      ],
      ...(this.#user ? { user: this.#user } : {}),
    };
  }

  protected isReady(): Promise<boolean> {
    return servesDataDir(this.dsn, this.dataDir);
  }

  /** Adds a trust line per extra network; the file initdb wrote is left as it was otherwise. */
  async #trustNetworks(): Promise<void> {
    if (this.#trustCidrs.length === 0) return;
    const lines = this.#trustCidrs.map((cidr) => `host all all ${cidr} trust\n`).join("");
    await appendFile(join(this.dataDir, "pg_hba.conf"), lines);
  }

  async #initdb(): Promise<void> {
    const args = ["-D", this.dataDir, "--auth=trust", "-U", "postgres", "--no-sync"];
    // C locale: fast, and the same on every machine whatever its environment says.
    args.push("--encoding=UTF8", "--locale=C");
    try {
      await execFileAsync(postgresBinary("initdb"), args, { cwd: this.rootDir, ...this.#user });
    } catch (error) {
      const { code, stdout, stderr } = error as {
        code?: unknown;
        stdout?: string;
        stderr?: string;
      };
      const why =
        code === "ENOENT"
          ? "initdb not found in /usr/lib/postgresql/*/bin nor on PATH (install PostgreSQL)"
          : `${stdout ?? ""}${stderr ?? ""}`;
      throw new Error(`initdb failed in ${this.dataDir}\n${why}`, { cause: error });
    }
  }
}

/**
 * Creates an empty database named `name` on the server of `adminDsn` (a superuser connection)
 * and returns `adminDsn` pointed at the new database.
 */
export async function createDatabase(adminDsn: string, name: string): Promise<string> {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new Error(`database name ${JSON.stringify(name)}: use lowercase letters, digits and _`);
  }
  const client = new pg.Client({ connectionString: adminDsn });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const dsn = new URL(adminDsn);
  dsn.pathname = `/${name}`;
  return dsn.toString();
}

/**
 * The path of a PostgreSQL program: from the newest /usr/lib/postgresql/VERSION/bin (Debian's
 * layout, not on PATH), or else the bare name for PATH to resolve.
 */
export function postgresBinary(program: string): string {
  const versionsDir = "/usr/lib/postgresql";
  if (!existsSync(versionsDir)) return program;
  const newestFirst = readdirSync(versionsDir)
    .filter((version) => /^\d+(\.\d+)?$/.test(version))
    .sort((a, b) => Number(b) - Number(a));
  for (const version of newestFirst) {
    const path = join(versionsDir, version, "bin", program);
    if (existsSync(path)) return path;
  }
  return program;
}

/** The `postgres` system user when we are root; nobody (run as ourselves) otherwise. */
function serviceUser(): ServiceUser | undefined {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) =>
      Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }));
    return { uid: id("-u"), gid: id("-g") };
  } catch (error) {
    throw new Error(
      "running as root, but there is no 'postgres' system user to run PostgreSQL as " +
        "(install the postgresql package, or run the tests as a normal user)",
      { cause: error },
    );
  }
}

/**
 * True once the server at `dsn` accepts queries and serves `dataDir`: an answer alone could come
 * from another server that took the port first, while ours is still failing to bind it.
 */
async function servesDataDir(dsn: string, dataDir: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: dsn, connectionTimeoutMillis: 2_000 });
  // An error event after connect failed would otherwise be an unhandled 'error'.
  client.on("error", () => {});
  try {
    await client.connect();
    const { rows } = await client.query<{ data_directory: string }>("SHOW data_directory");
    return rows[0]?.data_directory === dataDir;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

function killQuietly(pid: number): void {
  try {
    process.kill(pid, "SIGKILL");
  } catch {
    // Already gone: that is what we wanted.
  }
}
