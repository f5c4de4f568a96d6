import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { childPids, redisCommand } from "@tenxgraph/test-servers";
import type { BenchServers } from "../servers/bench-servers.js";

/** CPU time used so far, in ms, by this process and the servers, and by the whole machine. */
export interface CpuSample {
  node: number;
  /** The PostgreSQL server's processes, when this bench started it (else null). */
  postgres: number | null;
  redis: number | null;
  /** /proc/stat: ms busy and ms in all, summed over the machine's CPUs (null off Linux). */
  machine: { busy: number; total: number } | null;
}

/** CPU used between two samples: ms of each, and the machine's busy share of its CPUs. */
export interface CpuUse {
  nodeMs: number;
  postgresMs: number | null;
  redisMs: number | null;
  /** Busy time over all time, 0..1, summed over every CPU: other tenants' work included. */
  machineBusy: number | null;
}

/**
 * Reads the CPU time of this process, the bench's servers (none for a store in this process)
 * and the machine.
 */
export async function sampleCpu(
  servers: BenchServers | undefined,
  withRedis: boolean,
): Promise<CpuSample> {
  const { user, system } = process.cpuUsage();
  return {
    node: (user + system) / 1000,
    postgres: servers?.ownPostgres ? postgresCpuMs(servers.ownPostgres.dataDir) : null,
    redis: servers && withRedis ? await redisCpuMs(servers.redisUrl) : null,
    machine: machineCpuMs(),
  };
}

export function cpuBetween(before: CpuSample, after: CpuSample): CpuUse {
  const diff = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  const { machine: m0 } = before;
  const { machine: m1 } = after;
  return {
    nodeMs: after.node - before.node,
    postgresMs: diff(before.postgres, after.postgres),
    redisMs: diff(before.redis, after.redis),
    // A span shorter than one clock tick has no /proc/stat figure.
    machineBusy:
      m0 && m1 && m1.total > m0.total ? (m1.busy - m0.busy) / (m1.total - m0.total) : null,
  };
}

let ticksPerSecond: number | undefined;

/** Clock ticks per second of /proc's CPU times (`getconf CLK_TCK`, 100 on Linux). */
export function clockTicks(): number {
  ticksPerSecond ??= Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" })) || 100;
  return ticksPerSecond;
}

/**
 * The postmaster's CPU with its reaped children's, plus its live children's (backends, WAL
 * writer, checkpointer): a backend that exits between two samples moves from one to the other.
 */
export function postgresCpuMs(dataDir: string): number | null {
  const pidFile = join(dataDir, "postmaster.pid");
  if (!existsSync(pidFile)) return null;
  const postmaster = Number(readFileSync(pidFile, "utf8").split("\n")[0]);
  const own = processTicks(postmaster, true);
  if (own === null) return null;
  const children = childPids(postmaster).reduce((sum, pid) => sum + (processTicks(pid) ?? 0), 0);
  return ((own + children) * 1000) / clockTicks();
}

/** utime + stime (and the reaped children's cutime + cstime) of a process, in clock ticks. */
export function processTicks(pid: number, withReapedChildren = false): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name in parentheses: state is the first, utime the twelfth.
    const fields = stat
      .slice(stat.lastIndexOf(")") + 2)
      .split(" ")
      .map(Number);
    const [utime = 0, stime = 0, cutime = 0, cstime = 0] = fields.slice(11, 15);
    return utime + stime + (withReapedChildren ? cutime + cstime : 0);
  } catch {
    return null;
  }
}

/** Redis's own account of its CPU (INFO cpu: used_cpu_user + used_cpu_sys). */
async function redisCpuMs(url: string): Promise<number | null> {
  try {
    const info = await redisCommand(url, ["INFO", "cpu"]);
    const seconds = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? 0);
    return (seconds("used_cpu_user") + seconds("used_cpu_sys")) * 1000;
  } catch {
    return null;
  }
}

/** The first line of /proc/stat: the machine's CPU time, busy and in all, in ms. */
export function machineCpuMs(): { busy: number; total: number } | null {
  try {
    const line = readFileSync("/proc/stat", "utf8").split("\n")[0]!;
    const [user, nice, system, idle, iowait, irq, softirq, steal] = line
      .trim()
      .split(/\s+/)
      .slice(1)
      .map(Number) as number[];
    const busy = user! + nice! + system! + irq! + softirq! + steal!;
    const toMs = (ticks: number) => (ticks * 1000) / clockTicks();
    return { busy: toMs(busy), total: toMs(busy + idle! + iowait!) };
  } catch {
    return null;
  }
}
