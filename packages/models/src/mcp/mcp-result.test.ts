import { describe, expect, it } from "vitest";
import { toToolOutput } from "./mcp-result.js";

describe("toToolOutput", () => {
  it("joins text blocks into one string", () => {
    const output = toToolOutput("t", {
      content: [
        { type: "text", text: "line 1" },
        { type: "text", text: "line 2" },
      ],
    });
    expect(output).toBe("line 1\nline 2");
  });

  it("keeps media as content blocks: images, audio and embedded resources", () => {
    const output = toToolOutput("t", {
      content: [
        { type: "text", text: "see" },
        { type: "image", data: "iVBOR", mimeType: "image/png" },
        { type: "audio", data: "UklGR", mimeType: "audio/wav" },
        {
          type: "resource",
          resource: { uri: "file:///a.pdf", blob: "JVBER", mimeType: "application/pdf" },
        },
        { type: "resource", resource: { uri: "file:///a.txt", text: "inline text" } },
        { type: "resource_link", uri: "file:///b.csv", name: "b.csv" },
      ],
    });
    expect(output).toEqual([
      { type: "text", text: "see" },
      { type: "image", data: "iVBOR", mediaType: "image/png" },
      { type: "file", data: "UklGR", mediaType: "audio/wav" },
      { type: "file", data: "JVBER", mediaType: "application/pdf", filename: "file:///a.pdf" },
      { type: "text", text: "inline text" },
      { type: "text", text: "Resource b.csv at file:///b.csv" },
    ]);
  });

  it("returns structured content when there are no blocks, and the old toolResult shape", () => {
    expect(toToolOutput("t", { content: [], structuredContent: { total: 3 } })).toEqual({
      total: 3,
    });
    expect(toToolOutput("t", { toolResult: { ok: true } })).toEqual({ ok: true });
    expect(toToolOutput("t", { content: [] })).toBe("");
  });

  it("throws the server's message for an error result", () => {
    expect(() =>
      toToolOutput("refund", { isError: true, content: [{ type: "text", text: "declined" }] }),
    ).toThrow("declined");
    expect(() => toToolOutput("refund", { isError: true, content: [] })).toThrow(
      "MCP tool 'refund' reported an error without a message",
    );
  });

  it("keeps a block type it does not know readable", () => {
    expect(toToolOutput("t", { content: [{ type: "hologram", uri: "x" }] })).toBe(
      '{"type":"hologram","uri":"x"}',
    );
  });
});
