/** Where forwarded records go: the shared intake's queue (src/intake/upload-queue.ts). */
export interface Forwarder {
  put(name: string, appId: string, acceptedAt: Date, content: Buffer, cell: string | null): Promise<void>;
}

export interface SplitResult {
  /** Landing files read to find their drivers' cells. */
  checked: number;
  /** Files that held records of other cells. */
  split: number;
  /** Records sent to their drivers' cells, and the pieces they went in. */
  forwarded: number;
  pieces: number;
}
