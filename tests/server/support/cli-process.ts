import { spawn, type ChildProcess } from "node:child_process";

const BIN = new URL("../../../packages/server/bin/tenxgraph.js", import.meta.url).pathname;

/** The `tenxgraph` command in a child process, with its output kept for waiting and messages. */
export class CliProcess {
  readonly child: ChildProcess;
  readonly exited: Promise<number | null>;
  output = "";
  readonly #waiters = new Set<() => void>();

  constructor(args: string[], options: { cwd: string; env?: Record<string, string> }) {
    this.child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const collect = (chunk: Buffer) => {
      this.output += chunk.toString();
      for (const wake of [...this.#waiters]) wake();
    };
    this.child.stdout!.on("data", collect);
    this.child.stderr!.on("data", collect);
    this.exited = new Promise((resolve) =>
      this.child.on("close", (code) => {
        resolve(code);
        for (const wake of [...this.#waiters]) wake();
      }),
    );
  }

  /** The `n`-th match (1-based) of `pattern` in the output, once it is there. */
  waitFor(pattern: RegExp, n = 1, timeoutMs = 60_000): Promise<RegExpMatchArray> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => finish(() => reject(new Error(`no ${pattern} (#${n}) in:\n${this.output}`))),
        timeoutMs,
      );
      const finish = (settle: () => void) => {
        clearTimeout(timer);
        this.#waiters.delete(check);
        settle();
      };
      const check = () => {
        const matches = [...this.output.matchAll(new RegExp(pattern.source, "g"))];
        if (matches.length >= n) return finish(() => resolve(matches[n - 1]!));
        if (this.child.exitCode !== null)
          finish(() => reject(new Error(`exited before ${pattern}:\n${this.output}`)));
      };
      this.#waiters.add(check);
      check();
    });
  }

  /** The URL of the `n`-th "serving … on <url>" line. */
  async url(n = 1): Promise<string> {
    return (await this.waitFor(/serving .* on (http:\/\/\S+)/, n))[1]!;
  }

  stop(signal: NodeJS.Signals = "SIGTERM"): Promise<number | null> {
    if (this.child.exitCode === null) this.child.kill(signal);
    return this.exited;
  }
}
