import * as vitest from "vitest";
import { storeConformance } from "../testing/conformance/store-conformance.js";
import { InMemoryStore } from "./in-memory-store.js";

storeConformance(
  { name: "InMemoryStore", create: async (options) => new InMemoryStore(options) },
  vitest,
);
