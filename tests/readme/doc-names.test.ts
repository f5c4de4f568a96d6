import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { END, Message, StateGraph } from "@tenxgraph/core";
import { createApp } from "@tenxgraph/server";
import { describe, expect, it } from "vitest";
import { docPages, ROOT } from "./doc-blocks.js";

/** Names the docs quote that belong to other programs. */
const OTHER_PROGRAMS_NAMES = new Set([
  "GC_JOB_QUEUES", // graphile-worker's cleanup task
  "REVOKED_TOKEN", // 10xGraph's server's code for a missing token (ours: MISSING_TOKEN)
]);

/** Routes the docs name that are not Hono routes: the WebSocket is upgraded by `serve()`. */
const NOT_HONO_ROUTES = new Set(["WS /v1/graph/ws"]);

/** Every `.ts` file of the code, the tests and the scripts, as one text to search. */
function allCode(): string {
  const texts: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
      if (entry.name === "node_modules" || entry.name === "dist") continue;
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|cjs|js)$/.test(entry.name))
        texts.push(readFileSync(join(ROOT, path), "utf8"));
    }
  };
  for (const dir of ["packages", "scripts", "tests", "examples", "bench/src"]) walk(dir);
  return texts.join("\n");
}

/** `[page, quoted]` for every match of `pattern`'s first group inside backticks on every page. */
function quoted(pattern: RegExp): [string, string][] {
  return docPages().flatMap((page) =>
    [...readFileSync(join(ROOT, page), "utf8").matchAll(pattern)].map(
      (m) => [page, m[1]!] as [string, string],
    ),
  );
}

// What the docs name (error codes, environment variables, routes) is what the code has.
describe("names in the docs", () => {
  it("quotes only error codes, constants and variables the code has", () => {
    const codes = new Set(
      [...readFileSync(join(ROOT, "docs/error-codes.md"), "utf8").matchAll(/^\| `(\w+)`/gm)].map(
        (m) => m[1]!,
      ),
    );
    const code = allCode();
    const unknown = quoted(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/g).filter(
      ([, name]) =>
        !codes.has(name) &&
        !OTHER_PROGRAMS_NAMES.has(name) &&
        !new RegExp(`\\b${name}\\b`).test(code),
    );
    expect(unknown.map(([page, name]) => `${page}: ${name}`)).toEqual([]);
  });

  it("names only routes the server registers", () => {
    const graph = new StateGraph()
      .addNode("MAIN", () => Message.assistant("ok"))
      .addEdge("MAIN", END)
      .setEntryPoint("MAIN")
      .compile();
    const shape = (path: string) => path.replace(/\/(?::\w+|\{\w+\})/g, "/{}").replace(/\/$/, "");
    const registered = new Set(
      createApp({ graph })
        .routes.filter((r) => r.method !== "ALL")
        .map((r) => `${r.method} ${shape(r.path.replace(/\/\*$/, ""))}`),
    );
    const unknown = quoted(/`((?:GET|POST|PUT|DELETE|PATCH|WS) \/[^`\s?]*)/g).filter(
      ([, route]) => {
        const [method, path] = route.split(" ") as [string, string];
        return !NOT_HONO_ROUTES.has(route) && !registered.has(`${method} ${shape(path)}`);
      },
    );
    expect(unknown.map(([page, route]) => `${page}: ${route}`)).toEqual([]);
  });
});
