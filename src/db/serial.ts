/**
 * Runs async work one piece at a time. A DuckDB connection must not run two statements at once,
 * and a transaction must not interleave with another request's statements.
 */
export class SerialQueue {
  private tail: Promise<unknown> = Promise.resolve();

  run<T>(work: () => Promise<T>): Promise<T> {
    const result = this.tail.then(work, work);
    this.tail = result.catch(() => undefined);
    return result;
  }
}
