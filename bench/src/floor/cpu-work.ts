/**
 * The child side of {@link measureCpuScaling}: on `{ go: units }` it does that many units of
 * CPU-bound work, then answers its wall and CPU time. Started by `fork` with `--import tsx`.
 */
import { cpuUnit } from "./cpu-scaling.js";

const WARM_UP_UNITS = 50;

process.on("message", (message: { go: number }) => {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  let sink = 0;
  for (let unit = 0; unit < message.go; unit++) sink += cpuUnit(unit);
  const cpu = process.cpuUsage(cpuBefore);
  process.send!({
    wallMs: performance.now() - started,
    cpuMs: (cpu.user + cpu.system) / 1000,
    sink,
  });
  process.disconnect();
});
// Warmed first, so the compiler's work is not timed.
for (let unit = 0; unit < WARM_UP_UNITS; unit++) cpuUnit(unit);
process.send!({ ready: true });
