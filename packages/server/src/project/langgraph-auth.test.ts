import { Auth, HTTPException } from "@langchain/langgraph-sdk/auth";
import { describe, expect, it } from "vitest";
import { ApiError } from "../http/api-error.js";
import { fromLangGraphAuth, isLangGraphAuth } from "./langgraph-auth.js";

const request = (token?: string) =>
  new Request("http://localhost/threads", {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });

/** LangGraph's own `Auth`, as a langgraph.json's auth.path exports it. */
function bearerAuth() {
  return new Auth().authenticate((req: Request) => {
    const token = req.headers.get("authorization")?.replace(/^Bearer /, "");
    if (token === "alice-token") return { identity: "alice", permissions: ["read"], tier: "pro" };
    if (token === "bob-token") return "bob";
    if (token === "banned") throw new HTTPException(403, { message: "banned user" });
    throw new HTTPException(401, { message: "unknown token" });
  });
}

describe("a LangGraph Auth object as auth.path", () => {
  it("is told from a plain function by its shape", () => {
    expect(isLangGraphAuth(bearerAuth())).toBe(true);
    expect(isLangGraphAuth(() => null)).toBe(false);
    expect(isLangGraphAuth(null)).toBe(false);
  });

  it("names the user its authenticate() returns, its fields kept as claims", async () => {
    const authenticate = fromLangGraphAuth(bearerAuth(), "auth.path");
    expect(await authenticate(request("alice-token"))).toEqual({
      id: "alice",
      claims: { identity: "alice", permissions: ["read"], tier: "pro" },
    });
    expect(await authenticate(request("bob-token"))).toEqual({
      id: "bob",
      claims: { identity: "bob", permissions: [] },
    });
  });

  it("answers an HTTPException with its status and message", async () => {
    const authenticate = fromLangGraphAuth(bearerAuth(), "auth.path");
    const refused = await Promise.resolve(authenticate(request("nope"))).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ status: 401, code: "INVALID_TOKEN", message: "unknown token" });
    await expect(authenticate(request("banned"))).rejects.toMatchObject({
      status: 403,
      code: "PERMISSION_DENIED",
    });
  });

  it("refuses authorization handlers at start-up instead of ignoring them", () => {
    const withHandlers = bearerAuth().on("threads:create", () => ({ owner: "x" }));
    expect(() => fromLangGraphAuth(withHandlers, "auth.path")).toThrow(
      /auth\.path: the Auth object registers authorization handlers \(\.on\("threads:create"\)\)/,
    );
    expect(() => fromLangGraphAuth(new Auth(), "auth.path")).toThrow(/no authenticate\(\) handler/);
  });
});
