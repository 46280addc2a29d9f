/** Micro figures (agent loop, SSE parsing, session load, heap per thread, launch). */
import type { Section } from "./index.js";

export const MICRO_SECTIONS: Section[] = [];
