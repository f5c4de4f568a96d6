/** The abort reason of a stopped run. Internal: a stop is a result, never an error. */
export class StopSignal {
  constructor(readonly source: "stop()" | "signal" | "stream closed") {}
}

/** True for the abort reason of a stopped run. */
export function isStopSignal(value: unknown): value is StopSignal {
  return value instanceof StopSignal;
}
