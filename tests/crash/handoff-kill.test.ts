/**
 * SIGKILL between a handoff and the parent's step: Alice's child thread wrote its last step
 * (the handoff to Bob, `Command.PARENT`), then the process died before the swarm's step was
 * written. A fresh process replays the swarm's step: it reads the handoff from the child's
 * write and goes to Bob, without running Alice's handoff tool again.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const WORKER = fileURLToPath(new URL("./support/handoff-worker.ts", import.meta.url));

function runWorker(env: Record<string, string>) {
  return spawnSync(process.execPath, ["--import", "tsx", WORKER], {
    env: { ...process.env, ...env },
    encoding: "utf8",
    timeout: 60_000,
  });
}

describe("handoff crash (real processes, SIGKILL)", () => {
  it("replays the parent's step from the child's recorded handoff, running no tool again", () => {
    const dir = mkdtempSync(join(tmpdir(), "tenxgraph-handoff-"));
    const env = { DB: join(dir, "threads.db"), LOG: join(dir, "effects.log") };
    try {
      const killed = runWorker({ ...env, KILL: "1" });
      expect(killed.signal, killed.stderr).toBe("SIGKILL");
      expect(readFileSync(env.LOG, "utf8")).toBe("handoff\n");

      const resumed = runWorker(env);
      expect(resumed.status, resumed.stderr).toBe(0);
      const result = JSON.parse(resumed.stdout) as {
        status: string;
        state: { activeAgent: string; messages: { content: unknown }[] };
      };
      expect(result.status).toBe("completed");
      expect(result.state.activeAgent).toBe("Bob");
      expect(result.state.messages.map((m) => m.content)).toEqual([
        "to Bob",
        "",
        "Successfully transferred to Bob",
        "Bob here",
      ]);
      // The handoff tool ran once, before the kill; Bob ran once, after it.
      expect(readFileSync(env.LOG, "utf8")).toBe("handoff\nbob\n");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
