import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../", import.meta.url));

/** The Markdown a reader is sent through: the README, docs/, and each package's and folder's README. */
function documents(): string[] {
  const docs = readdirSync(join(root, "docs"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".md"))
    .map((file) => join("docs", file));
  const packages = readdirSync(join(root, "packages"))
    .map((name) => join("packages", name, "README.md"))
    .filter((file) => existsSync(join(root, file)));
  return ["README.md", "bench/README.md", "model/README.md", ...docs, ...packages];
}

/** Markdown without fenced code blocks and inline code, where a `[x](y)` is not a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "").replace(/`[^`\n]*`/g, "");
}

/** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces to hyphens. */
export function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of text.replace(/^```[\s\S]*?^```/gm, "").matchAll(/^#{1,6} (.*)$/gm)) {
    const slug = heading!
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** Every relative link of `file` that does not lead to an existing file, or heading in it. */
function brokenLinks(file: string): string[] {
  const text = readFileSync(join(root, file), "utf8");
  const broken: string[] = [];
  for (const [, target] of prose(text).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    if (/^[a-z]+:/i.test(target!)) continue; // https:, mailto:
    const [path, anchor] = target!.split("#") as [string, string | undefined];
    const resolved = path === "" ? join(root, file) : join(root, dirname(file), path);
    if (!existsSync(resolved)) {
      broken.push(`${target} (no file ${relative(root, resolved)})`);
    } else if (anchor !== undefined && statSync(resolved).isFile() && resolved.endsWith(".md")) {
      if (!anchors(readFileSync(resolved, "utf8")).has(anchor)) {
        broken.push(`${target} (no heading #${anchor} in ${relative(root, resolved)})`);
      }
    }
  }
  return broken;
}

describe("relative links in the docs", () => {
  it("finds the documents and the links in them", () => {
    expect(documents()).toEqual(expect.arrayContaining(["README.md", "docs/README.md"]));
    expect(anchors("# A `b` c: d\n## Two\n## Two\n```\n# not\n```")).toEqual(
      new Set(["a-b-c-d", "two", "two-1"]),
    );
  });

  it.each(documents())("%s: every relative link points at an existing file and heading", (file) => {
    expect(brokenLinks(file)).toEqual([]);
  });
});

/** The scripts of the package.json in `folder` ("" for the root). */
function scripts(folder: string): Record<string, string> {
  const json = JSON.parse(readFileSync(join(root, folder, "package.json"), "utf8")) as {
    scripts?: Record<string, string>;
  };
  return json.scripts ?? {};
}

describe("npm commands in the docs", () => {
  it.each(documents())("%s: every `npm run <script>` names a script that exists", (file) => {
    const text = readFileSync(join(root, file), "utf8");
    const missing: string[] = [];
    for (const [command, script, workspace] of text.matchAll(
      /npm run ([\w:.-]+)(?: --workspace ([\w@/.-]+))?/g,
    )) {
      const folder = workspace === undefined ? "" : workspace.replace(/^@tenxgraph\//, "packages/");
      if (!(script! in scripts(folder))) missing.push(command);
    }
    expect(missing).toEqual([]);
  });
});
