import { APICallError, JSONParseError, LoadAPIKeyError, RetryError, TypeValidationError } from "ai";
import { describe, expect, it } from "vitest";
import { classifyFailure } from "./classify-failure.js";

function apiError(statusCode: number | undefined, headers?: Record<string, string>) {
  return new APICallError({
    message: `provider says ${statusCode}`,
    url: "http://127.0.0.1/v1/chat/completions",
    requestBodyValues: {},
    statusCode,
    responseHeaders: headers,
  });
}

describe("classifyFailure", () => {
  it("retries 429, 408, 409 and 5xx, with the wait a 429 asks for", () => {
    expect(classifyFailure(apiError(429, { "retry-after": "2" }))).toMatchObject({
      kind: "transient",
      statusCode: 429,
      retryAfterMs: 2000,
      message: "provider says 429",
    });
    for (const status of [408, 409, 500, 502, 503, 529]) {
      expect(classifyFailure(apiError(status)).kind).toBe("transient");
    }
  });

  it("does not retry other 4xx: the provider refused", () => {
    for (const status of [400, 401, 403, 404, 422]) {
      expect(classifyFailure(apiError(status))).toMatchObject({
        kind: "refused",
        statusCode: status,
      });
    }
  });

  it("calls a 2xx the SDK could not process, and unparsable chunks, malformed", () => {
    expect(classifyFailure(apiError(200)).kind).toBe("malformed");
    expect(classifyFailure(new JSONParseError({ text: "{", cause: new Error("x") })).kind).toBe(
      "malformed",
    );
    const invalid = new TypeValidationError({ value: {}, cause: new Error("choices missing") });
    expect(classifyFailure(invalid).kind).toBe("malformed");
  });

  it("retries connections that failed or dropped", () => {
    const reset = Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" });
    expect(classifyFailure(reset).kind).toBe("transient");
    const cutOff = new TypeError("terminated", { cause: new Error("other side closed") });
    expect(classifyFailure(cutOff).kind).toBe("transient");
    const wrapped = new Error("stream failed", {
      cause: Object.assign(new Error("socket"), { code: "UND_ERR_SOCKET" }),
    });
    expect(classifyFailure(wrapped).kind).toBe("transient");
    const network = new APICallError({
      message: "Cannot connect to API: other side closed",
      url: "u",
      requestBodyValues: {},
      isRetryable: true,
    });
    expect(classifyFailure(network)).toMatchObject({ kind: "transient", statusCode: null });
  });

  it("reads error objects a provider sends inside a started stream", () => {
    expect(classifyFailure({ message: "boom", type: "server_error" }).kind).toBe("transient");
    expect(classifyFailure({ message: "busy", type: "overloaded_error" }).kind).toBe("transient");
    expect(classifyFailure({ message: "bad", type: "invalid_request_error" })).toMatchObject({
      kind: "refused",
      message: "bad",
    });
  });

  it("retries a body cut off mid-stream, though it failed under a 200", () => {
    const cut = new APICallError({
      message: "Failed to process successful response",
      url: "u",
      requestBodyValues: {},
      statusCode: 200,
      isRetryable: true,
      cause: new TypeError("terminated"),
    });
    expect(classifyFailure(cut)).toMatchObject({ kind: "transient", statusCode: 200 });
  });

  it("refuses a 429 that says insufficient_quota: no wait refills an account", () => {
    const body = {
      error: { message: "You exceeded your current quota", type: "insufficient_quota" },
    };
    const quota = new APICallError({
      message: "You exceeded your current quota",
      url: "u",
      requestBodyValues: {},
      statusCode: 429,
      responseBody: JSON.stringify(body),
    });
    expect(classifyFailure(quota)).toMatchObject({ kind: "refused", statusCode: 429 });
    const inStream = { message: "quota", type: "requests", code: "insufficient_quota" };
    expect(classifyFailure(inStream).kind).toBe("refused");
  });

  it("reads an HTTP status in a stream error object's code or status", () => {
    const litellm = { message: "Service Unavailable", type: "None", code: "503" };
    expect(classifyFailure(litellm)).toMatchObject({ kind: "transient", statusCode: 503 });
    const vllm = { message: "boom", type: "InternalServerError", code: 500 };
    expect(classifyFailure(vllm)).toMatchObject({ kind: "transient", statusCode: 500 });
    expect(classifyFailure({ message: "slow down", status: 429 }).kind).toBe("transient");
    const bad = { message: "bad", type: "BadRequestError", code: "400" };
    expect(classifyFailure(bad)).toMatchObject({ kind: "refused", statusCode: 400 });
    // Not a status: the words decide.
    expect(classifyFailure({ message: "x", code: "server_error_1234" }).kind).toBe("transient");
  });

  it("calls a missing API key unusable, and unwraps the SDK's retry wrapper", () => {
    const noKey = new LoadAPIKeyError({ message: "OpenAI API key is missing." });
    expect(classifyFailure(noKey).kind).toBe("unusable");
    const wrapped = new RetryError({
      message: "failed",
      reason: "errorNotRetryable",
      errors: [apiError(401)],
    });
    expect(classifyFailure(wrapped)).toMatchObject({ kind: "refused", statusCode: 401 });
  });

  it("does not retry errors it does not know", () => {
    expect(classifyFailure(new Error("a bug")).kind).toBe("failed");
    expect(classifyFailure("text").message).toBe("text");
  });
});
