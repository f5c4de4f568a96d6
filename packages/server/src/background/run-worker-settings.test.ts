import { END, Message, StateGraph } from "@tenxgraph/core";
import { describe, expect, it } from "vitest";
import { PgRunStore } from "./run-store.js";
import { RunWorker, type RunWorkerOptions } from "./run-worker.js";

// Never connected: the settings are checked before anything is.
const store = new PgRunStore({ postgresDsn: "postgres://nobody@127.0.0.1:1/none" });
const graph = new StateGraph()
  .addNode("reply", () => Message.assistant("hi"))
  .addEdge("reply", END)
  .setEntryPoint("reply")
  .compile();

function worker(settings: Partial<RunWorkerOptions>): RunWorker {
  return new RunWorker({ graph, store, ...settings });
}

describe("RunWorker settings", () => {
  it("refuses a setting below its least, or not a whole number, naming it", () => {
    for (const name of ["concurrency", "heartbeatMs", "staleAfterMs", "pollIntervalMs"]) {
      for (const bad of [0, -1, 1.5, Number.NaN])
        expect(() => worker({ staleAfterMs: 100_000, [name]: bad }), `${name}: ${bad}`).toThrow(
          new RegExp(`RunWorker: ${name} must be a positive integer`),
        );
    }
    for (const bad of [-1, 2.5])
      expect(() => worker({ eventBatchMs: bad })).toThrow(
        /RunWorker: eventBatchMs must be a whole number of ms/,
      );
    expect(() => worker({ heartbeatMs: 1000, staleAfterMs: 1999 })).toThrow(/at least twice/);
  });

  it("takes 0 for the event batch (each event written at once) and the defaults", () => {
    expect(worker({ eventBatchMs: 0 }).workerId).toBeTruthy();
    expect(worker({}).workerId).toBeTruthy();
  });
});
