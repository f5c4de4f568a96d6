import { FAULT_POINTS } from "@tenxgraph/core/testing";
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const modelDir = new URL("../../model/", import.meta.url);

/**
 * The `@fault <name>` tags of the model as spin sees it without defines (v1, no planted bug):
 * lines inside `#ifdef X` (or an `#if`) are skipped, those inside `#ifndef X` and the `#else` of
 * an `#ifdef` kept, so a point that exists only in v2 or in a planted bug is not counted.
 */
function v1FaultTags(source: string): string[] {
  const tags: string[] = [];
  const active: boolean[] = [];
  for (const line of source.split("\n")) {
    const directive = /^\s*#\s*(ifdef|ifndef|if|else|endif)\b/.exec(line)?.[1];
    if (directive === "ifdef" || directive === "if") active.push(false);
    else if (directive === "ifndef") active.push(true);
    else if (directive === "else") active.push(!active.pop());
    else if (directive === "endif") active.pop();
    else if (active.every(Boolean)) {
      for (const match of line.matchAll(/@fault\s+([a-z0-9_.]+)/g)) tags.push(match[1]!);
    }
  }
  return tags;
}

function modelTags(): string[] {
  const files = readdirSync(modelDir).filter((name) => name.endsWith(".pml"));
  return files.flatMap((name) => v1FaultTags(readFileSync(new URL(name, modelDir), "utf8")));
}

describe("model/*.pml and the runtime's fault points", () => {
  it("the v1 model marks exactly the fault points the code has, so neither drifts alone", () => {
    const inModel = [...new Set(modelTags())].sort();
    const inCode = [...Object.values(FAULT_POINTS)].sort();
    expect(inModel).toEqual(inCode);
  });

  it("counts a tag only where v1 has it", () => {
    const source = [
      "/* @fault a.one */",
      "#ifdef V2",
      "/* @fault b.v2_only */",
      "#else",
      "/* @fault c.v1_only */",
      "#endif",
      "#ifndef P1",
      "/* @fault d.default */",
      "#endif",
      "#if MAXRUN > 3",
      "/* @fault e.bounded */",
      "#endif",
    ].join("\n");
    expect(v1FaultTags(source)).toEqual(["a.one", "c.v1_only", "d.default"]);
  });
});
