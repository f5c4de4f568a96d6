import type { CheckpointWrite } from "@tenxgraph/core/storage";

/** A write that creates `threadId` (a running thread at MAIN, empty state), with `overrides`. */
export function newThreadWrite(
  threadId: string,
  overrides: Partial<CheckpointWrite> = {},
): CheckpointWrite {
  return {
    threadId,
    incarnation: "first-life",
    userId: null,
    expectedVersion: 0,
    step: 0,
    currentNode: "MAIN",
    status: "running",
    values: {},
    interrupts: [],
    resumeAnswers: {},
    newMessages: [],
    ...overrides,
  };
}
