import { describe, expect, it } from "vitest";
import { z } from "zod";
import { tool, type ToolDefinition } from "./tool.js";

const schema = z.object({ order_id: z.string(), amount_cents: z.number().int() });

function definition(
  overrides: Partial<Record<keyof ToolDefinition<typeof schema>, unknown>> = {},
): ToolDefinition<typeof schema> {
  return {
    name: "charge_card",
    description: "Charge the customer's saved card for an order.",
    schema,
    execute: (args) => `Charged ${args.amount_cents / 100} USD`,
    ...overrides,
  } as ToolDefinition<typeof schema>;
}

describe("tool()", () => {
  it("returns a frozen tool with the definition's fields and the retry policy by default", () => {
    const charge = tool(definition({ timeout: 5 }));
    expect(charge.name).toBe("charge_card");
    expect(charge.description).toBe("Charge the customer's saved card for an order.");
    expect(charge.schema).toBe(schema);
    expect(charge.timeout).toBe(5);
    expect(charge.onInDoubt).toBe("retry");
    expect(charge.idempotencyKey).toBeUndefined();
    expect(Object.isFrozen(charge)).toBe(true);
    expect(charge.execute({ order_id: "4821", amount_cents: 4200 }, {} as never)).toBe(
      "Charged 42 USD",
    );
  });

  it("keeps the declared policy, domain key and a null timeout", () => {
    const reconcile = { reconcile: () => undefined };
    const keyed = tool(
      definition({
        timeout: null,
        onInDoubt: reconcile,
        idempotencyKey: (args: { order_id: string }) => `order-${args.order_id}-charge`,
      }),
    );
    expect(keyed.timeout).toBeNull();
    expect(keyed.onInDoubt).toBe(reconcile);
    expect(keyed.idempotencyKey?.({ order_id: "4821", amount_cents: 1 })).toBe("order-4821-charge");
    for (const policy of ["retry", "fail", "interrupt"] as const) {
      expect(tool(definition({ onInDoubt: policy })).onInDoubt).toBe(policy);
    }
  });

  it("accepts names of 1 to 64 letters, digits, '_' and '-'", () => {
    for (const name of ["a", "lookup-order", "Send_Receipt2", "x".repeat(64)]) {
      expect(tool(definition({ name })).name).toBe(name);
    }
  });

  it.each([
    ["an empty name", ""],
    ["a name with a space", "charge card"],
    ["a name with a dot", "payments.charge"],
    ["a name of 65 characters", "x".repeat(65)],
    ["a non-string name", 42],
  ])("rejects %s with a TypeError naming the rule", (_label, name) => {
    expect(() => tool(definition({ name }))).toThrow(TypeError);
    expect(() => tool(definition({ name }))).toThrow(
      "name must be 1-64 letters, digits, '_' or '-'",
    );
  });

  it.each([
    ["missing", undefined],
    ["empty", ""],
    ["blank", "   "],
  ])("rejects a %s description", (_label, description) => {
    expect(() => tool(definition({ description }))).toThrow(
      new TypeError(
        "tool('charge_card'): description must be a non-empty string (the model reads it)",
      ),
    );
  });

  it.each([
    ["a plain object", { type: "object", properties: {} }],
    ["a missing schema", undefined],
    ["a string", "z.object()"],
  ])("rejects %s as schema: it must be a zod schema", (_label, badSchema) => {
    expect(() => tool(definition({ schema: badSchema }))).toThrow(
      new TypeError("tool('charge_card'): schema must be a zod schema, e.g. z.object({ ... })"),
    );
  });

  it.each([
    ["an unknown word", "maybe"],
    ["an object without reconcile", { reconcile: "yes" }],
    ["null", null],
    ["a function", () => "retry"],
  ])("rejects %s as onInDoubt", (_label, onInDoubt) => {
    expect(() => tool(definition({ onInDoubt }))).toThrow(
      new TypeError(
        "tool('charge_card'): onInDoubt must be 'retry', 'fail', 'interrupt' or { reconcile }",
      ),
    );
  });

  it("rejects a missing execute, a non-numeric timeout and a non-function idempotencyKey", () => {
    expect(() => tool(definition({ execute: undefined }))).toThrow(
      new TypeError("tool('charge_card'): execute must be a function"),
    );
    expect(() => tool(definition({ timeout: "60" }))).toThrow(
      new TypeError("tool('charge_card'): timeout must be a number of seconds, or null"),
    );
    expect(() => tool(definition({ timeout: Number.NaN }))).toThrow(TypeError);
    expect(() => tool(definition({ idempotencyKey: "order-1" }))).toThrow(
      new TypeError("tool('charge_card'): idempotencyKey must be a function of the arguments"),
    );
  });

  it("rejects a definition that is not an object", () => {
    expect(() => tool(null as never)).toThrow(TypeError);
    expect(() => tool(null as never)).toThrow("definition must be an object");
  });
});

describe("Tool.jsonSchema()", () => {
  it("returns the arguments as an object JSON Schema, with descriptions and required fields", () => {
    const described = tool(
      definition({
        schema: z.object({
          order_id: z.string().describe("The order to charge"),
          amount_cents: z.number().int(),
          note: z.string().optional(),
        }),
      }),
    );
    const json = described.jsonSchema();
    expect(json.type).toBe("object");
    expect(json.properties).toEqual({
      order_id: { type: "string", description: "The order to charge" },
      amount_cents: expect.objectContaining({ type: "integer" }),
      note: { type: "string" },
    });
    expect(json.required).toEqual(["order_id", "amount_cents"]);
    expect(JSON.parse(JSON.stringify(json))).toEqual(json);
  });

  it("computes the schema once and returns the same object", () => {
    const charge = tool(definition());
    expect(charge.jsonSchema()).toBe(charge.jsonSchema());
  });
});
