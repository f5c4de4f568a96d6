#!/usr/bin/env node
// The `tenxgraph` command. A committed file, so npm links it on install even before the first
// build; the CLI itself is compiled to dist/.
import "../dist/cli/main.js";
