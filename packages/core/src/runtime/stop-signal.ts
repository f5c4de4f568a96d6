/**
 * The abort reason of a stopped run. Internal: a stop is a result, never an error. `"drain"`
 * stops at a node boundary (`config.drainSignal`), the others cut the node in flight short.
 */
export class StopSignal {
  constructor(readonly source: "stop()" | "signal" | "stream closed" | "drain") {}
}

/** True for the abort reason of a stopped run. */
export function isStopSignal(value: unknown): value is StopSignal {
  return value instanceof StopSignal;
}

/**
 * The abort reason of an abandoned run (`config.abandonSignal`): another execution owns the
 * thread now, so the run ends where it is and writes no terminal status.
 */
export class AbandonSignal {
  constructor(readonly reason: string) {}
}
