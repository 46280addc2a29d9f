/**
 * Time as a dependency of the extension layer (approval timeouts, notice memory); the shared
 * `Clock` of `src/agent/clock.ts`, so one manual clock serves the renderer and the extensions.
 */
export { type Clock, systemClock } from "../agent/clock.js";
