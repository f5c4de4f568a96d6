import os from "node:os";
import { renderHttp } from "../report/render-http.js";
import { httpPlan } from "./http-plan.js";
import { measureHttp } from "./measure-http.js";

/**
 * `npm run bench:http [-- --quick]`: only the HTTP part of the bench, printed (nothing is
 * written): for a look at the API's overhead without the hour the whole bench takes.
 */
const plan = httpPlan(process.argv.includes("--quick"));
const loadAtStart = os.loadavg()[0]!;
const results = await measureHttp(plan);
console.log(
  [
    `1-minute load average ${loadAtStart.toFixed(1)} at the start, ${os.loadavg()[0]!.toFixed(1)} at the end.`,
    "",
    ...renderHttp(results, plan),
  ].join("\n"),
);
