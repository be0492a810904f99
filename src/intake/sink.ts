/** Where an API process commits the uploads it accepts (src/api/routes/sdk.ts). */
export interface UploadSink {
  /** `cell`: the driver's cell, whose load takes it in (null: no cells). */
  put(name: string, appId: string, acceptedAt: Date, content: Buffer, cell?: string | null): Promise<void>;
}

/**
 * The upload queue in PostgreSQL at `url` as an API process uses it: opened at its first upload,
 * and again after an open that failed (the server down then). pg is loaded only here: an API
 * process without DATABASE_URL never pays for it.
 */
export const queueSink = (url: string): UploadSink => ({
  put: async (name, appId, acceptedAt, content, cell = null) => {
    const { sharedUploadQueue } = await import('./upload-queue.js');
    await (await sharedUploadQueue(url)).put(name, appId, acceptedAt, content, cell);
  },
});

/** What waits in the queue at `url` (the API's /metrics). */
export const queueBacklog = async (url: string): Promise<{ waiting: number; oldestSeconds: number | null }> => {
  const { sharedUploadQueue } = await import('./upload-queue.js');
  return (await sharedUploadQueue(url)).backlog();
};
