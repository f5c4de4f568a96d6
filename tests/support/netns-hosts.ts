/**
 * "Hosts" for tests as Linux network namespaces: each has an address of its own on a private
 * bridge in the root namespace, so processes in it reach servers in the root namespace only over
 * that bridge, and cutting a host's link cuts them off as a pulled cable would, while the other
 * hosts carry on. Needs root (or CAP_NET_ADMIN and CAP_SYS_ADMIN) and iproute2's `ip`.
 *
 * Nothing leaves the machine: the bridge has no uplink and forwarding is left as it was, so the
 * namespaces reach the root namespace's bridge address and each other, nothing else.
 */
import { execFile, spawn } from "node:child_process";
import type { ChildProcess, SpawnOptions } from "node:child_process";
import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { promisify } from "node:util";

const execFileAsync = promisify(execFile);

/** Debian puts `ip` in /usr/sbin, which is not on every user's PATH. */
const IP = existsSync("/usr/sbin/ip") ? "/usr/sbin/ip" : "ip";

/** The /16 the test networks' /24s come from: private, and unlikely to be in use here. */
const PREFIX = "10.231";

/** Linux's limit on an interface name (IFNAMSIZ less the terminating NUL). */
const MAX_INTERFACE_NAME = 15;

/**
 * Every name starts `tg`, then the owning process's pid and a per-process serial number (both
 * base 36, to fit the 15 characters), then what it is: `b` the bridge, `r<i>` a veth's root end,
 * `h<i>` a host's namespace (and its end of the veth), `c` the support probe. The pid is what
 * lets a later run tell a dead run's leftovers from a live parallel run's network.
 */
const NAME = /^tg([0-9a-z]+)_([0-9a-z]+)(b|c|[rh]\d+)$/;

/** How long a link may take to carry packets after it is set up. */
const LINK_UP_TIMEOUT_MS = 5_000;

let serial = 0;

/** One host: a network namespace with one address on the test network. */
export interface Host {
  /** The namespace's name (as `ip netns` lists it). */
  readonly name: string;
  /** The host's IPv4 address on the test network. */
  readonly address: string;
  /**
   * Runs `command` inside the host's namespace (`ip netns exec`), with `options` (env, cwd,
   * stdio) as `child_process.spawn` takes them. The child is the command itself (`ip` execs
   * it), so signals sent to it reach the command.
   */
  spawn(command: string, args?: readonly string[], options?: SpawnOptions): ChildProcess;
  /** Pulls the cable: no packet passes either way until {@link restore}. Open sockets stay open. */
  cut(): Promise<void>;
  /** Plugs the cable back in; resolves once the link carries packets again. */
  restore(): Promise<void>;
}

/** A bridge in the root namespace and the hosts on it. */
export interface HostNetwork {
  /** The bridge's address in the root namespace: where the hosts reach servers there. */
  readonly rootAddress: string;
  /** The network of the bridge and the hosts, e.g. `10.231.7.0/24`. */
  readonly cidr: string;
  readonly hosts: Host[];
  /**
   * SIGKILLs the processes the hosts spawned that still run, then deletes the namespaces, veths
   * and bridge. Safe to call twice.
   */
  dispose(): Promise<void>;
}

/** Options for {@link createHostNetwork}. */
export interface HostNetworkOptions {
  /**
   * The third octet of the network (`10.231.<subnet>.0/24`); by default the first free one from
   * a start that depends on the pid, so test files running side by side pick different ones.
   */
  subnet?: number;
}

/**
 * Whether this machine lets us make hosts: tries a throwaway namespace with a bridge and a veth
 * pair in it (all gone with the namespace), and says why not when it cannot.
 */
export async function netnsSupport(): Promise<{ ok: true } | { ok: false; reason: string }> {
  if (process.platform !== "linux") {
    return { ok: false, reason: `network namespaces are Linux only (this is ${process.platform})` };
  }
  const probe = `${stem(serial++)}c`;
  try {
    await ip("netns", "add", probe);
  } catch (error) {
    const uid = process.getuid?.();
    const who = uid === 0 ? "running as root" : `not root (uid ${uid})`;
    return { ok: false, reason: `cannot create a network namespace, ${who}: ${message(error)}` };
  }
  try {
    await ip("-n", probe, "link", "add", "b0", "type", "bridge");
    await ip("-n", probe, "link", "add", "v0", "type", "veth", "peer", "name", "v1");
    return { ok: true };
  } catch (error) {
    return { ok: false, reason: `cannot create a bridge and a veth pair: ${message(error)}` };
  } finally {
    await ip("netns", "delete", probe).catch(() => {});
  }
}

/**
 * A bridge in the root namespace with a /24 of its own and `count` hosts on it: the bridge is
 * `<cidr>.1`, host `i` is `<cidr>.<10 + i>`. First removes what earlier runs that were killed
 * before their `dispose` left behind. On failure removes what it made and throws.
 */
export async function createHostNetwork(
  count: number,
  options: HostNetworkOptions = {},
): Promise<HostNetwork> {
  if (!Number.isInteger(count) || count < 1 || count > 99) {
    throw new Error(`createHostNetwork: count must be 1 to 99, not ${count}`);
  }
  await removeLeftovers();
  const base = stem(serial++);
  const bridge = `${base}b`;
  const made = new Made();
  try {
    await ip("link", "add", bridge, "type", "bridge");
    made.bridge = bridge;
    const subnet = await claimSubnet(bridge, options.subnet);
    await ip("link", "set", bridge, "up");
    const hosts: NamespaceHost[] = [];
    for (let i = 0; i < count; i++) {
      const host = new NamespaceHost(
        `${base}h${i}`,
        `${base}r${i}`,
        `${PREFIX}.${subnet}.${10 + i}`,
      );
      await ip("netns", "add", host.name);
      made.namespaces.push(host.name);
      // Made inside the namespace at once: no moment when both ends sit in the root namespace.
      await ip(
        "link",
        "add",
        host.rootEnd,
        "type",
        "veth",
        "peer",
        "name",
        host.name,
        "netns",
        host.name,
      );
      made.veths.push(host.rootEnd);
      await ip("link", "set", host.rootEnd, "master", bridge, "up");
      await ip("-n", host.name, "link", "set", "lo", "up");
      await ip("-n", host.name, "addr", "add", `${host.address}/24`, "dev", host.name);
      await ip("-n", host.name, "link", "set", host.name, "up");
      made.hosts.push(host);
      hosts.push(host);
    }
    for (const host of hosts) await host.waitUntilLinked();
    return {
      rootAddress: `${PREFIX}.${subnet}.1`,
      cidr: `${PREFIX}.${subnet}.0/24`,
      hosts,
      dispose: () => made.dispose(),
    };
  } catch (error) {
    await made.dispose();
    throw error;
  }
}

class NamespaceHost implements Host {
  readonly #children = new Set<ChildProcess>();

  /** `name` is the namespace's and its veth end's (inside it, the name cannot clash). */
  constructor(
    readonly name: string,
    readonly rootEnd: string,
    readonly address: string,
  ) {}

  spawn(command: string, args: readonly string[] = [], options: SpawnOptions = {}): ChildProcess {
    const child = spawn(IP, ["netns", "exec", this.name, command, ...args], options);
    this.#children.add(child);
    child.on("exit", () => this.#children.delete(child));
    return child;
  }

  async cut(): Promise<void> {
    // The root end down is enough both ways: the bridge forwards nothing to a port that is
    // down, and the namespace's end loses its carrier, so the kernel drops what it sends.
    await ip("link", "set", this.rootEnd, "down");
  }

  async restore(): Promise<void> {
    await ip("link", "set", this.rootEnd, "up");
    await this.waitUntilLinked();
    // A connection tried during the cut left an ARP lookup that can never finish; when it
    // gives up, it fails whatever waits on it (even a connection made after this) with
    // EHOSTUNREACH. Forgetting the neighbours makes the next packet ask afresh.
    await ip("-n", this.name, "neigh", "flush", "dev", this.name);
    await ip("neigh", "flush", "to", this.address);
  }

  /** Until the namespace's end has its carrier back: before that it drops what it sends. */
  async waitUntilLinked(): Promise<void> {
    const deadline = Date.now() + LINK_UP_TIMEOUT_MS;
    for (;;) {
      const { stdout } = await ip("-n", this.name, "-j", "link", "show", "dev", this.name);
      const [link] = JSON.parse(stdout) as { operstate?: string }[];
      if (link?.operstate === "UP") return;
      if (Date.now() > deadline) {
        throw new Error(`${this.name}: link not up after ${LINK_UP_TIMEOUT_MS} ms: ${stdout}`);
      }
      await sleep(20);
    }
  }

  /** SIGKILLs what this host spawned that still runs, and waits until it has exited. */
  async killChildren(): Promise<void> {
    await Promise.all(
      [...this.#children].map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGKILL");
        await exited;
      }),
    );
  }
}

/** What {@link createHostNetwork} made so far, so that a failure halfway removes it. */
class Made {
  bridge: string | undefined;
  readonly namespaces: string[] = [];
  readonly veths: string[] = [];
  readonly hosts: NamespaceHost[] = [];
  #disposed: Promise<void> | undefined;

  dispose(): Promise<void> {
    this.#disposed ??= this.#remove();
    return this.#disposed;
  }

  async #remove(): Promise<void> {
    await Promise.all(this.hosts.map((host) => host.killChildren()));
    await removeAll({
      veths: this.veths,
      bridges: this.bridge ? [this.bridge] : [],
      namespaces: this.namespaces,
    });
  }
}

/**
 * Deletes veths (which takes their peers), bridges and namespaces, in that order; tries them
 * all and then throws the first failure, so one stuck name does not leave the others behind.
 */
async function removeAll(names: {
  veths: string[];
  bridges: string[];
  namespaces: string[];
}): Promise<void> {
  const failures: unknown[] = [];
  const attempt = async (...args: string[]) => {
    await ip(...args).catch((error: unknown) => failures.push(error));
  };
  for (const veth of names.veths) await attempt("link", "delete", veth);
  for (const bridge of names.bridges) await attempt("link", "delete", bridge);
  for (const namespace of names.namespaces) await attempt("netns", "delete", namespace);
  if (failures.length > 0) throw failures[0];
}

/**
 * Removes the bridges, veths and namespaces of runs whose process is gone: a run killed before
 * its `dispose` leaves them, and their addresses would crowd the test networks' /16. Best
 * effort: a run starting beside us may be removing the same ones.
 */
async function removeLeftovers(): Promise<void> {
  const links = JSON.parse((await ip("-j", "link", "show")).stdout) as { ifname: string }[];
  const namespaces = (await ip("netns", "list")).stdout
    .split("\n")
    .map((line) => line.split(" ")[0] ?? "");
  /** What `name` is, when it is one of ours and its run is gone. */
  const orphaned = (name: string): string | undefined => {
    const match = NAME.exec(name);
    if (!match) return undefined;
    const pid = parseInt(match[1]!, 36);
    return pid !== process.pid && !isAlive(pid) ? match[3]![0] : undefined;
  };
  const linksOf = (kind: string) =>
    links.map((link) => link.ifname).filter((name) => orphaned(name) === kind);
  await removeAll({
    veths: linksOf("r"),
    bridges: linksOf("b"),
    namespaces: namespaces.filter((name) => orphaned(name) !== undefined),
  }).catch(() => {});
}

/**
 * Puts the network's bridge address on `bridge`: `wanted`, or the first /24 of 10.231 no address
 * or route here touches, starting from one that depends on the pid. Two runs may pick the same
 * one at the same moment, so after adding ours we look again, and the run that sees another
 * interface in its /24 gives it up and tries the next.
 */
async function claimSubnet(bridge: string, wanted: number | undefined): Promise<number> {
  const candidates =
    wanted === undefined
      ? Array.from({ length: 256 }, (_, i) => (process.pid + i) % 256)
      : [wanted];
  for (const subnet of candidates) {
    if (!Number.isInteger(subnet) || subnet < 0 || subnet > 255) {
      throw new Error(`createHostNetwork: subnet must be 0 to 255, not ${subnet}`);
    }
    if (await subnetInUse(subnet, bridge)) continue;
    await ip("addr", "add", `${PREFIX}.${subnet}.1/24`, "dev", bridge);
    if (!(await subnetInUse(subnet, bridge))) return subnet;
    await ip("addr", "del", `${PREFIX}.${subnet}.1/24`, "dev", bridge);
  }
  throw new Error(
    wanted === undefined
      ? `createHostNetwork: no free /24 left in ${PREFIX}.0.0/16`
      : `createHostNetwork: ${PREFIX}.${wanted}.0/24 is in use here`,
  );
}

/** Whether an address or route in the root namespace, other than on `bridge`, overlaps the /24. */
async function subnetInUse(subnet: number, bridge: string): Promise<boolean> {
  const ours = { start: ipv4(`${PREFIX}.${subnet}.0`), bits: 24 };
  const addresses = JSON.parse((await ip("-j", "-4", "addr", "show")).stdout) as {
    ifname: string;
    addr_info?: { local: string; prefixlen: number }[];
  }[];
  for (const link of addresses) {
    if (link.ifname === bridge) continue;
    for (const info of link.addr_info ?? []) {
      if (overlaps(ours, { start: ipv4(info.local), bits: info.prefixlen })) return true;
    }
  }
  const routes = JSON.parse((await ip("-j", "-4", "route", "show", "table", "all")).stdout) as {
    dst: string;
    dev?: string;
  }[];
  for (const route of routes) {
    if (route.dev === bridge || !/^\d+\.\d+\.\d+\.\d+(\/\d+)?$/.test(route.dst)) continue;
    const [address, bits = "32"] = route.dst.split("/");
    // The default route (0.0.0.0/0) covers everything and says nothing about who uses what.
    if (bits === "0") continue;
    if (overlaps(ours, { start: ipv4(address!), bits: Number(bits) })) return true;
  }
  return false;
}

function overlaps(a: { start: number; bits: number }, b: { start: number; bits: number }): boolean {
  const bits = Math.min(a.bits, b.bits);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return (a.start & mask) >>> 0 === (b.start & mask) >>> 0;
}

function ipv4(address: string): number {
  return address.split(".").reduce((value, octet) => value * 256 + Number(octet), 0);
}

/** `tg<pid>_<serial>`, both base 36; checked here so a long one fails loudly, not as EINVAL. */
function stem(n: number): string {
  const name = `tg${process.pid.toString(36)}_${n.toString(36)}`;
  // The longest suffix is `r99`/`h99`.
  if (name.length + 3 > MAX_INTERFACE_NAME) {
    throw new Error(`netns-hosts: interface names from ${name} would pass 15 characters`);
  }
  return name;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it just is not ours to signal.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

async function ip(...args: string[]): Promise<{ stdout: string }> {
  try {
    return await execFileAsync(IP, args, { encoding: "utf8" });
  } catch (error) {
    const { code, stderr } = error as { code?: unknown; stderr?: string };
    const why = code === "ENOENT" ? `${IP} not found (install iproute2)` : (stderr ?? "").trim();
    throw new Error(`ip ${args.join(" ")}: ${why}`, { cause: error });
  }
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
