/**
 * The subject of a contract suite: what `make` opens for one test, closed after it. Call inside a
 * `describe`; the returned `open` makes the subject (at most one per test) and the suite's
 * `afterEach` closes it, so a failing test never leaves a connection or a file open.
 */
import { afterEach } from "vitest";

export function subjectPerTest<T extends { close(): Promise<void> }>(
  make: () => Promise<T>,
): () => Promise<T> {
  let opened: T | undefined;
  afterEach(async () => {
    await opened?.close();
    opened = undefined;
  });
  return async () => {
    opened = await make();
    return opened;
  };
}
