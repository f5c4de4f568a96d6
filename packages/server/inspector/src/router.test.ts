import { expect, it } from "vitest";
import { hrefOf, parseRoute } from "./router.js";

it("parseRoute reads the view from the path under /inspector, and hrefOf writes it back", () => {
  expect(parseRoute("/inspector/")).toEqual({ view: "threads" });
  expect(parseRoute("/inspector")).toEqual({ view: "threads" });
  expect(parseRoute("/inspector/graph")).toEqual({ view: "graph" });
  expect(parseRoute("/inspector/threads/order%2F9")).toEqual({
    view: "thread",
    threadId: "order/9",
  });
  expect(parseRoute("/inspector/nope/x")).toEqual({ view: "missing", path: "/inspector/nope/x" });
  expect(hrefOf({ view: "thread", threadId: "order/9" })).toBe("/inspector/threads/order%2F9");
});
