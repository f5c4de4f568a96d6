#!/usr/bin/env node
/* global URL, console, process */
// The `tenxgraph` command. A committed file, so npm links it on install even before the first
// build; the CLI itself is compiled to dist/. In a clone before `npm run build`, say so in one
// line instead of a module-not-found trace.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(cli)) {
  const root = new URL("../../..", import.meta.url).pathname;
  console.error(`tenxgraph: @tenxgraph/server is not built yet: run "npm run build" in ${root}`);
  process.exit(1);
}
await import(cli.href);
