import { describe, expect, it } from "vitest";
import { refuseChildThreadId } from "./subgraph-threads.js";

describe("refuseChildThreadId", () => {
  it("refuses the ids core gives a subgraph's thread (422 CHILD_THREAD_ID), not look-alikes", () => {
    expect(() => refuseChildThreadId("order-7|WORKER@0")).toThrow(
      expect.objectContaining({ status: 422, code: "CHILD_THREAD_ID" }),
    );
    expect(() => refuseChildThreadId("bob|notes@home")).not.toThrow();
    expect(() => refuseChildThreadId("order-7")).not.toThrow();
  });
});
