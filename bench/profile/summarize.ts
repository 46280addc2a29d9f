/** Self time of a .cpuprofile grouped by package / source folder, largest first. */
import { readFileSync } from "node:fs";

interface Node {
  id: number;
  callFrame: { url: string; functionName: string };
}
interface Profile {
  nodes: Node[];
  samples: number[];
  timeDeltas: number[];
}

const file = process.argv[2];
if (!file) throw new Error("usage: summarize.ts <file.cpuprofile>");
const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
const byId = new Map(p.nodes.map((n) => [n.id, n]));

function group(url: string, fn: string): string {
  if (!url) return fn.startsWith("(") ? fn : "(native)";
  const nm = url.lastIndexOf("node_modules/");
  if (nm >= 0) {
    const rest = url.slice(nm + 13).split("/");
    return (rest[0]?.startsWith("@") ? `${rest[0]}/${rest[1]}` : rest[0]) ?? url;
  }
  if (url.startsWith("node:")) return url;
  const m = /\/(src|test|bench)\/(.*)\/[^/]+$/.exec(url);
  return m ? `${m[1]}/${m[2]}` : url;
}

const self = new Map<string, number>();
const fns = new Map<string, number>();
let total = 0;
p.samples.forEach((id, i) => {
  const n = byId.get(id);
  const dt = p.timeDeltas[i] ?? 0;
  if (!n) return;
  total += dt;
  const g = group(n.callFrame.url, n.callFrame.functionName);
  self.set(g, (self.get(g) ?? 0) + dt);
  const f = `${g} ${n.callFrame.functionName || "(anonymous)"}`;
  fns.set(f, (fns.get(f) ?? 0) + dt);
});
const print = (m: Map<string, number>, k: number) =>
  [...m.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, k)
    .forEach(([g, t]) => {
      process.stdout.write(
        `${((100 * t) / total).toFixed(1).padStart(5)}%  ${(t / 1000).toFixed(0).padStart(6)} ms  ${g}\n`,
      );
    });
process.stdout.write(`total sampled ${(total / 1000).toFixed(0)} ms\n-- by package/folder\n`);
print(self, 25);
process.stdout.write("-- top functions\n");
print(fns, 25);
