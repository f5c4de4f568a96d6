import { buildApp, runOnce } from "./react-loop.js";
const w = { turns: 50, toolsPerTurn: Number(process.argv[2] ?? 4) };
const app = buildApp(w);
const xs: number[] = [];
for (let i = 0; i < 300; i++) { const r = await runOnce(app, w, "m" + i); if (i > 50) xs.push(r.ms / r.steps); }
xs.sort((a, b) => a - b);
console.log(`tools=${w.toolsPerTurn} min=${xs[0]!.toFixed(4)} p25=${xs[Math.floor(xs.length / 4)]!.toFixed(4)} med=${xs[xs.length >> 1]!.toFixed(4)}`);
