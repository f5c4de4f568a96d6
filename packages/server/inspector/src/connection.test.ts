import { ConnectionError, NotFoundError, PermissionDeniedError } from "@tenxgraph/client";
import { describe, expect, it } from "vitest";
import { explain, isMissingRoute, needsToken } from "./connection.js";

const notFound = (message: string) =>
  new NotFoundError({ code: "NOT_FOUND", status: 404, message });

describe("isMissingRoute", () => {
  it("tells a route the server lacks from a thread or version it lacks", () => {
    expect(isMissingRoute(notFound("No route GET /v1/threads/t/history"))).toBe(true);
    expect(isMissingRoute(notFound("Thread 't' not found"))).toBe(false);
    expect(isMissingRoute(new Error("No route"))).toBe(false);
  });
});

describe("explain", () => {
  it("says what a person can do about a failed request, with the server's code", () => {
    const down = new ConnectionError({ code: "CONNECTION_FAILED", status: 0, message: "refused" });
    expect(explain(down)).toBe("The server does not answer. Is `tenxgraph api` still running?");
    const theirs = new PermissionDeniedError({
      code: "PERMISSION_DENIED",
      status: 403,
      message: "Not authorized to read thread 'b'",
    });
    expect(explain(theirs)).toBe(
      "Not found, or not yours (PERMISSION_DENIED): Not authorized to read thread 'b'",
    );
    expect(needsToken(theirs)).toBe(false);
  });
});
