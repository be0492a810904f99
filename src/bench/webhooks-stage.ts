import { record, type BenchContext } from './context.js';

export interface WebhooksBenchResult {
  skipped?: string;
}

/**
 * Webhooks: deliveries per second to a fast loopback receiver, and with one endpoint timing out.
 * A placeholder until the deliverer exists: whoever lands issue 4 replaces this function's body
 * (`ctx` has the run's options, work folder, app and API key, and `record` for the table).
 */
export async function benchWebhooks(ctx: BenchContext): Promise<WebhooksBenchResult> {
  const result: WebhooksBenchResult = { skipped: 'the deliverer lands with issue 4' };
  record(ctx, { stage: 'webhooks', metric: 'deliveries/s (fast receiver; one endpoint timing out)', value: `skipped: ${result.skipped}`, unit: '' });
  return result;
}
