import { describe, expect, it } from "vitest";
import { decodeCheckpointRecord, encodeCheckpointRecord } from "./checkpoint-record.js";
import type { CheckpointRecord } from "./checkpointer.js";

const fields: CheckpointRecord = {
  step: 3,
  currentNode: "TOOL",
  values: { plan: ["a", "b"] },
  interrupts: [{ id: "TOOL:3", value: { ask: 1 }, node: "TOOL" }],
  resumeAnswers: { "TOOL:3": true },
};

describe("the checkpoint record", () => {
  it("round-trips every field, through JSON as a store keeps it", () => {
    const frontier = { tasks: [{ node: "A" }, { node: "B", input: { n: 1 } }], joins: {} };
    for (const written of [fields, { ...fields, frontier }]) {
      const stored = JSON.parse(JSON.stringify(encodeCheckpointRecord(written)));
      expect(decodeCheckpointRecord(stored)).toEqual(written);
    }
  });

  it("leaves out the frontier of the plain chain, null or absent, and reads it as absent", () => {
    const encoded = encodeCheckpointRecord({ ...fields, frontier: null });
    expect(encoded).not.toHaveProperty("frontier");
    expect(decodeCheckpointRecord({ ...encoded, frontier: null })).not.toHaveProperty("frontier");
  });

  it("keeps only its own fields, whatever else the write carries", () => {
    const write = { ...fields, threadId: "t", status: "running", newMessages: [] };
    expect(Object.keys(encodeCheckpointRecord(write)).sort()).toEqual(
      ["currentNode", "interrupts", "resumeAnswers", "step", "values"].sort(),
    );
  });

  it("reads a record that lacks fields (an older release's) with their defaults, ignoring unknown ones", () => {
    expect(decodeCheckpointRecord({ currentNode: "MAIN", later: { field: 1 } })).toEqual({
      step: 0,
      currentNode: "MAIN",
      values: {},
      interrupts: [],
      resumeAnswers: {},
    });
  });
});
