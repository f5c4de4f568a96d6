import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";

/** A call the in-process MCP server received. */
export interface ServerCall {
  tool: string;
  args: Record<string, unknown>;
  meta: Record<string, unknown> | undefined;
}

/** A small CRM as an MCP server, connected to a client over the SDK's in-memory transport. */
export interface CrmMcp {
  client: Client;
  /** Every call the server's tools received, in order. */
  calls: ServerCall[];
  /** Calls of `wait_for_approval` whose request was cancelled by the client. */
  cancelled: string[];
  close(): Promise<void>;
}

// A 1x1 transparent PNG.
const PIXEL =
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=";

/** Starts the server and a connected client, in this process. */
export async function startCrmMcp(): Promise<CrmMcp> {
  const calls: ServerCall[] = [];
  const cancelled: string[] = [];
  const server = new McpServer({ name: "crm", version: "1.0.0" });
  server.registerTool(
    "crm.find_customer",
    {
      description: "Find a customer by email.",
      inputSchema: { email: z.string().email() },
      annotations: { readOnlyHint: true, idempotentHint: true },
    },
    async (args, extra) => {
      calls.push({ tool: "crm.find_customer", args, meta: extra._meta });
      return { content: [{ type: "text", text: `Customer 118 <${args.email}>` }] };
    },
  );
  server.registerTool(
    "refund_payment",
    {
      description: "Refund a payment.",
      inputSchema: { payment_id: z.string(), amount_cents: z.number().int().positive() },
      annotations: { destructiveHint: true, idempotentHint: false },
    },
    async (args, extra) => {
      calls.push({ tool: "refund_payment", args, meta: extra._meta });
      if (args.payment_id === "missing") {
        return { isError: true, content: [{ type: "text", text: "No payment 'missing'" }] };
      }
      return { content: [{ type: "text", text: `Refunded ${args.amount_cents} cents` }] };
    },
  );
  server.registerTool(
    "sales_chart",
    { description: "Chart of the last week's sales.", inputSchema: {} },
    async (args, extra) => {
      calls.push({ tool: "sales_chart", args, meta: extra._meta });
      return {
        content: [
          { type: "text", text: "Sales, last 7 days" },
          { type: "image", data: PIXEL, mimeType: "image/png" },
        ],
      };
    },
  );
  server.registerTool(
    "wait_for_approval",
    { description: "Waits for a manager's approval.", inputSchema: { ticket: z.string() } },
    (args, extra) => {
      calls.push({ tool: "wait_for_approval", args, meta: extra._meta });
      // Never answers: only a cancellation from the client ends it.
      return new Promise((_, reject) =>
        extra.signal.addEventListener("abort", () => {
          cancelled.push(args.ticket);
          reject(new Error("cancelled"));
        }),
      );
    },
  );
  return { ...(await connectInMemory(server)), calls, cancelled };
}

/** Connects a client to `server` over the SDK's in-memory transport, in this process. */
export async function connectInMemory(
  server: McpServer,
): Promise<{ client: Client; close(): Promise<void> }> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const client = new Client({ name: "tenxgraph-test", version: "1.0.0" });
  await server.connect(serverSide);
  await client.connect(clientSide);
  return {
    client,
    close: async () => {
      await client.close();
      await server.close();
    },
  };
}
