import type { TracingRow } from "../measure/measure-tracing.js";
import { fixed, table, times, toolsLabel } from "./format.js";

/** The tracing section: each workload untraced and traced by an SDK, per step. */
export function renderTracing(rows: TracingRow[]): string[] {
  return [
    "## Tracing: no OpenTelemetry SDK beside an SDK tracer (in-memory store)",
    "",
    ...table(
      [
        "turns",
        "tools",
        "no SDK ms/step",
        "SDK ms/step",
        "SDK / no SDK",
        "µs added per step",
        "no SDK / floor",
        "SDK / floor",
      ],
      rows.map((r) => [
        `${r.turns}`,
        toolsLabel(r.toolsPerTurn),
        fixed(r.noSdk.msPerStep, 4),
        fixed(r.sdk.msPerStep, 4),
        times(r.ratio),
        fixed((r.sdk.msPerStep - r.noSdk.msPerStep) * 1000, 0),
        times(r.noSdk.floorRatio),
        times(r.sdk.floorRatio),
      ]),
    ),
    "",
    "No SDK: the API's no-op tracer, what runs when an app registers none (the path",
    "`bench:compare` gates). SDK: a `BasicTracerProvider` tracer, every span sampled and handed to",
    "a `SimpleSpanProcessor` whose exporter discards it (no I/O), given to `compile({ tracing })`.",
    "The two take turns round by round; each run is followed by the bare loop (the floor).",
  ];
}
