import { describe, expect, it } from "vitest";
import { FaultPoints } from "./fault-points.js";

const at = (toolName: string) => ({ threadId: "t", runId: "r", node: "TOOL", toolName });

describe("FaultPoints", () => {
  it("fires every arming whose filter holds, each at most `times` times, in arming order", async () => {
    const fired: string[] = [];
    const faults = new FaultPoints()
      .arm("tool.after_return", () => void fired.push("charge"), {
        when: (c) => c.toolName === "charge_card",
        times: 1,
      })
      .arm("tool.after_return", (c) => void fired.push(`any ${c.toolName}`), { times: 2 });

    await faults.hit("tool.after_return", at("lookup_order"));
    await faults.hit("tool.after_return", at("charge_card"));
    await faults.hit("tool.after_return", at("charge_card"));

    expect(fired).toEqual(["any lookup_order", "charge", "any charge_card"]);
    expect(faults.hits("tool.after_return")).toBe(3);
    expect(faults.hits("step.before_write")).toBe(0);
  });

  it("stops firing once disarmed, and a throwing action rejects the hit", async () => {
    const faults = new FaultPoints().arm("step.before_write", () => {
      throw new Error("crash");
    });
    await expect(faults.hit("step.before_write", at("x"))).rejects.toThrow("crash");
    faults.disarm("step.before_write");
    await expect(faults.hit("step.before_write", at("x"))).resolves.toBeUndefined();
    expect(faults.hits("step.before_write")).toBe(2);
  });
});
