import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresServer } from "@tenxgraph/test-servers";
import {
  createHostNetwork,
  netnsSupport,
  type Host,
  type HostNetwork,
} from "../support/netns-hosts.js";

const IP = existsSync("/usr/sbin/ip") ? "/usr/sbin/ip" : "ip";
const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

const support = await netnsSupport();
// CI runs as root, where a missing namespace is a broken machine and must fail, not pass quietly.
const asRoot = process.getuid?.() === 0;
if (!support.ok)
  console.warn(`netns-hosts: hosts as network namespaces untested: ${support.reason}`);

/**
 * Connects from `host` to `dsn` and asks who it is: the client address PostgreSQL saw, or the
 * error. The short connect timeout is what turns a cut link (packets silently dropped) into an
 * error rather than a wait for the kernel's SYN retries.
 */
async function connectFrom(
  host: Host,
  dsn: string,
): Promise<{ ok: true; clientAddress: string } | { ok: false; error: string }> {
  const script = `
    const pg = require("pg");
    const client = new pg.Client({ connectionString: process.env.DSN, connectionTimeoutMillis: 2000 });
    client.on("error", () => {});
    client.connect()
      .then(() => client.query("select 1 as one, host(inet_client_addr()) as client"))
      .then(({ rows }) => {
        if (rows[0].one !== 1) throw new Error("select 1 gave " + JSON.stringify(rows));
        console.log(JSON.stringify({ ok: true, clientAddress: rows[0].client }));
        return client.end();
      })
      .catch((error) => {
        console.log(JSON.stringify({ ok: false, error: String(error && error.message || error) }));
        process.exitCode = 1;
      });
  `;
  const child = host.spawn(process.execPath, ["-e", script], {
    cwd: repoRoot,
    env: { ...process.env, DSN: dsn },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
  // Guards against a client that never gives up: the test then fails instead of hanging.
  const guard = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const exit = await new Promise<number | null>((resolve) => child.on("close", resolve));
  clearTimeout(guard);
  const line = stdout.trim().split("\n").at(-1) ?? "";
  try {
    return JSON.parse(line) as Awaited<ReturnType<typeof connectFrom>>;
  } catch {
    throw new Error(`client in ${host.name} exited ${exit} without an answer\n${stdout}${stderr}`);
  }
}

describe("network namespace support", () => {
  // Not skipped either way, so CI (root) counts no skipped test: it fails there without them.
  it("is there when running as root, as in CI", () => {
    if (support.ok) return;
    if (asRoot) expect.fail(`running as root, but: ${support.reason}`);
    console.warn(`host tests skipped: ${support.reason}`);
  });
});

describe.skipIf(!support.ok)(
  "hosts as network namespaces, PostgreSQL in the root namespace",
  () => {
    let network: HostNetwork;
    let server: PostgresServer;
    beforeAll(async () => {
      network = await createHostNetwork(2);
      server = await PostgresServer.start({
        name: "netns",
        fsync: false,
        listenAddresses: ["127.0.0.1", network.rootAddress],
        trustCidrs: [network.cidr],
      });
    }, 60_000);
    afterAll(async () => {
      await server?.destroy();
      await network?.dispose();
    });

    it("a cut host cannot connect while the other still can, and can again once restored", async () => {
      const [one, two] = network.hosts as [Host, Host];
      const dsn = server.dsnFor(network.rootAddress);

      expect(await connectFrom(one, dsn)).toEqual({ ok: true, clientAddress: one.address });
      expect(await connectFrom(two, dsn)).toEqual({ ok: true, clientAddress: two.address });

      await one.cut();
      const cutOff = await connectFrom(one, dsn);
      expect(cutOff.ok).toBe(false);
      // Failing for the reason under test, not for one (say a missing module) that hides it.
      expect(cutOff.ok ? "" : cutOff.error).toMatch(/timeout|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT/i);
      expect(await connectFrom(two, dsn)).toEqual({ ok: true, clientAddress: two.address });

      await one.restore();
      expect(await connectFrom(one, dsn)).toEqual({ ok: true, clientAddress: one.address });
    }, 60_000);

    it("dispose removes the namespaces, veths and bridge, and may be called twice", async () => {
      const extra = await createHostNetwork(1);
      const [host] = extra.hosts as [Host];
      const names = () => ({
        namespaces: execFileSync(IP, ["netns", "list"], { encoding: "utf8" }),
        links: execFileSync(IP, ["-o", "link", "show"], { encoding: "utf8" }),
      });
      expect(names().namespaces).toContain(host.name);
      const sleeper = host.spawn("sleep", ["600"]);
      const sleeperExit = new Promise((resolve) =>
        sleeper.on("exit", (_, signal) => resolve(signal)),
      );

      await extra.dispose();
      await extra.dispose();

      expect(await sleeperExit).toBe("SIGKILL");
      const after = names();
      expect(after.namespaces).not.toContain(host.name);
      const prefix = host.name.replace(/h0$/, "");
      expect(after.links).not.toContain(prefix);
    }, 30_000);
  },
);
