import { describe, expect, it } from "vitest";
import type { McpClient, McpToolInfo } from "./mcp-client.js";
import { mcpTools } from "./mcp-tools.js";

/** A client whose server lists `pages` of tools, one page per `listTools` call. */
function pagedClient(pages: McpToolInfo[][]): McpClient & { cursors: (string | undefined)[] } {
  const cursors: (string | undefined)[] = [];
  return {
    cursors,
    async listTools(params) {
      cursors.push(params?.cursor);
      const index = params?.cursor === undefined ? 0 : Number(params.cursor);
      const next = index + 1 < pages.length ? String(index + 1) : undefined;
      return { tools: pages[index]!, ...(next !== undefined && { nextCursor: next }) };
    },
    async callTool() {
      return { content: [] };
    },
  };
}

const info = (name: string, extra: Partial<McpToolInfo> = {}): McpToolInfo => ({
  name,
  description: `The ${name} tool.`,
  inputSchema: { type: "object", properties: {} },
  ...extra,
});

describe("mcpTools listing", () => {
  it("follows nextCursor until the last page", async () => {
    const client = pagedClient([[info("a"), info("b")], [info("c")], [info("d")]]);
    const tools = await mcpTools(client);
    expect(tools.map((t) => t.name)).toEqual(["a", "b", "c", "d"]);
    expect(client.cursors).toEqual([undefined, "1", "2"]);
  });

  it("refuses two MCP tools that become one name, naming both", async () => {
    const client = pagedClient([[info("crm.find"), info("crm_find")]]);
    await expect(mcpTools(client)).rejects.toThrow(
      "mcpTools: MCP tools 'crm.find' and 'crm_find' both become 'crm_find'",
    );
  });

  it("refuses a name longer than a tool name may be", async () => {
    const client = pagedClient([[info("x".repeat(60))]]);
    await expect(mcpTools(client, { prefix: "server_" })).rejects.toThrow(
      "is not 1-64 letters, digits, '_' or '-'",
    );
  });

  it("describes a tool without a description by its title or name", async () => {
    const client = pagedClient([
      [info("a", { description: undefined, title: "Alpha" }), info("b", { description: "  " })],
    ]);
    const tools = await mcpTools(client);
    expect(tools.map((t) => t.description)).toEqual(["Alpha", "b"]);
  });

  it("checks only for an object when zod cannot read the server's schema", async () => {
    const schema = {
      type: "object",
      properties: { a: { $ref: "#/definitions/x" } },
      definitions: { x: { type: "string" } },
    };
    const [tool] = await mcpTools(pagedClient([[info("refs", { inputSchema: schema })]]));
    expect(tool!.jsonSchema()).toBe(schema);
    expect(tool!.schema.safeParse({ a: "s" }).success).toBe(true);
    expect(tool!.schema.safeParse("not an object").success).toBe(false);
  });

  it("leaves pattern and format to the server, and checks the rest of its schema", async () => {
    const schema = {
      type: "object",
      properties: {
        name: { type: "string", pattern: "^\\p{L}+$" },
        email: { type: "string", format: "email" },
        // A property named like the keywords is a property, not a keyword.
        pattern: { type: "string" },
        tags: { type: "array", items: { type: "string", pattern: "^[a-z]+$" } },
      },
      required: ["name", "pattern"],
    };
    const [tool] = await mcpTools(pagedClient([[info("greet", { inputSchema: schema })]]));
    expect(tool!.jsonSchema()).toBe(schema);
    const args = { name: "José", email: "not checked here", pattern: "p", tags: ["Ünï"] };
    expect(tool!.schema.safeParse(args).success).toBe(true);
    expect(tool!.schema.safeParse({ name: "José" }).success).toBe(false);
    expect(tool!.schema.safeParse({ name: 7, pattern: "p" }).success).toBe(false);
  });
});
