import { expect, it } from "vitest";
import { traceHref } from "./trace-link.js";

const ID = "4bf92f3577b34da6a3ce929d0e0e4736";

it("traceHref puts the trace id in the template, every place it is named", () => {
  expect(traceHref("https://jaeger.local/trace/{traceId}", ID)).toBe(
    `https://jaeger.local/trace/${ID}`,
  );
  expect(traceHref("https://tempo.local/explore?left={traceId}&right={traceId}", ID)).toBe(
    `https://tempo.local/explore?left=${ID}&right=${ID}`,
  );
});

it("traceHref gives no link without a template, or for anything but a trace id", () => {
  expect(traceHref(null, ID)).toBeNull();
  expect(traceHref("https://jaeger.local/trace/{traceId}", "javascript:alert(1)")).toBeNull();
  expect(traceHref("https://jaeger.local/trace/{traceId}", ID.toUpperCase())).toBeNull();
});
