/** Percentiles of samples, and the median/min/max summary of one figure over several runs. */

export function percentile(samples: readonly number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const s = [...samples].sort((a, b) => a - b);
  const i = Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1));
  return s[i] as number;
}

export interface Summary {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

/** The middle value (the mean of the two middle values for an even count). */
export function median(samples: readonly number[]): number {
  const s = [...samples].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function summarize(runs: readonly number[]): Summary {
  return { median: median(runs), min: Math.min(...runs), max: Math.max(...runs), runs: [...runs] };
}

/** One row of the results: a figure over several runs, its unit, and an optional target. */
export interface Figure {
  section: string;
  name: string;
  unit: string;
  summary: Summary;
  /** `{ op: "<=", value }`: the median must be at most value (or at least, for ">="). */
  target?: { op: "<=" | ">="; value: number };
  note?: string;
}

/** "met", or by how much the median misses the target. */
export function verdict(f: Figure): string {
  if (!f.target) return "";
  const m = f.summary.median;
  const { op, value } = f.target;
  const ok = op === "<=" ? m <= value : m >= value;
  if (ok) return `met (${op} ${value})`;
  const factor = op === "<=" ? m / value : value / m;
  return `MISSED ${op} ${value} by ${fmt(Math.abs(m - value))} (${factor.toFixed(2)}×)`;
}

export function fmt(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const a = Math.abs(n);
  if (a >= 1000) return n.toFixed(0);
  if (a >= 100) return n.toFixed(1);
  if (a >= 1) return n.toFixed(2);
  return n.toPrecision(3);
}
