import { fork, type ChildProcess } from "node:child_process";

const WORKER = new URL("./cpu-work.ts", import.meta.url);

/** Fixed CPU-bound work done by `processes` processes at once. */
export interface CpuScalingRow {
  processes: number;
  /** Units finished per second, all processes together (first "go" to the last one done). */
  unitsPerSecond: number;
  /** CPU ms per unit, all processes together: above 1 process's, the cores slow each other. */
  cpuMsPerUnit: number;
}

/**
 * One unit of the floor's work, about a millisecond of what a worker does between its round
 * trips: objects made, turned into JSON and back, kept in a map. Returns a number so the
 * work cannot be optimised away.
 */
export function cpuUnit(seed: number): number {
  const kept = new Map<string, unknown>();
  let total = 0;
  for (let i = 0; i < 250; i++) {
    const message = {
      id: `m-${seed}-${i}`,
      role: "assistant",
      content: `echo ${seed * 250 + i}`,
      toolCalls: [{ id: `call_${i}`, name: "echo", arguments: JSON.stringify({ n: i }) }],
    };
    const text = JSON.stringify(message);
    kept.set(message.id, JSON.parse(text));
    total += text.length;
  }
  return total + kept.size;
}

/**
 * The machine's own parallel scaling, the floor of the workers' throughput: `units` of
 * {@link cpuUnit} in each of N processes at once, for each N of `counts`. With nothing but CPU
 * work and no shared state, N processes can finish at most min(N, cores) times the work of one;
 * on a shared or virtual machine they finish less, and that shortfall bounds any runtime's.
 */
export async function measureCpuScaling(counts: number[], units: number): Promise<CpuScalingRow[]> {
  const rows: CpuScalingRow[] = [];
  for (const processes of counts) {
    const children = await Promise.all(Array.from({ length: processes }, startChild));
    const started = performance.now();
    const done = await Promise.all(children.map((child) => runUnits(child, units)));
    const wallMs = performance.now() - started;
    const cpuMs = done.reduce((sum, d) => sum + d.cpuMs, 0);
    rows.push({
      processes,
      unitsPerSecond: (processes * units * 1000) / wallMs,
      cpuMsPerUnit: cpuMs / (processes * units),
    });
  }
  return rows;
}

async function startChild(): Promise<ChildProcess> {
  const child = fork(WORKER, [], { execArgv: ["--import", "tsx"], stdio: "inherit" });
  await new Promise<void>((resolve, reject) => {
    child.once("message", () => resolve());
    child.once("exit", (code) => reject(new Error(`cpu floor process exited (${code}) early`)));
  });
  return child;
}

async function runUnits(child: ChildProcess, units: number): Promise<{ cpuMs: number }> {
  const answer = new Promise<{ cpuMs: number }>((resolve) =>
    child.once("message", (message: { cpuMs: number }) => resolve(message)),
  );
  child.send({ go: units });
  const result = await answer;
  await new Promise((resolve) =>
    child.exitCode === null ? child.once("exit", resolve) : resolve(null),
  );
  return result;
}
