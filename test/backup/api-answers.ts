/** GETs the answers of every read operation for the given users, as JSON without what varies per request. */
export interface Asker {
  url: string;
  apiKey: string;
}

const get = async (asker: Asker, path: string): Promise<{ status: number; body: unknown }> => {
  let res = await fetch(`${asker.url}${path}`, { headers: { authorization: `Bearer ${asker.apiKey}` } });
  // a server that just started on a busy machine may shed a request (503 or 429 with Retry-After),
  // as it would for any client: asked again after the wait it names, so the answers compared are the data's
  for (
    let tries = 1;
    (res.status === 503 || res.status === 429) && res.headers.has('retry-after') && tries < 10;
    tries++
  ) {
    await res.arrayBuffer();
    await new Promise((resolve) =>
      setTimeout(resolve, Math.min(Number(res.headers.get('retry-after')) || 1, 2) * 1000),
    );
    res = await fetch(`${asker.url}${path}`, { headers: { authorization: `Bearer ${asker.apiKey}` } });
  }
  const body = (await res.json()) as Record<string, unknown>;
  // the request's own id differs by request, not by data
  delete body['requestId'];
  return { status: res.status, body: withoutEvaluationTimes(body) };
};

/**
 * A score's `evaluationTime` is when score.js ran: a restore's own run of it gives its own time
 * (the evaluation date, and every value, must still be the same).
 */
function withoutEvaluationTimes(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutEvaluationTimes);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k, k === 'evaluationTime' ? typeof v : withoutEvaluationTimes(v)]),
  );
}

/**
 * Every answer of the read operations over `users` between `from` and `to` (days), keyed by the
 * request: each page of the trip list, each trip's detail and route, the statistics by day, week
 * and month, the score and its history; plus the given extra paths (a token's holder, the
 * webhook endpoint).
 */
export async function answers(
  asker: Asker,
  users: string[],
  from: string,
  to: string,
  extra: string[] = [],
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const ask = async (path: string) => {
    const answer = await get(asker, path);
    out[path] = answer;
    return answer.body as Record<string, unknown>;
  };
  for (const user of users) {
    let cursor: string | undefined;
    do {
      const page = await ask(
        `/v1/org-user/${user}/trips?limit=3&startTime=${from}&endTime=${to}${cursor ? `&nextCursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      for (const trip of (page['trips'] as { tripId: string }[] | undefined) ?? []) {
        await ask(`/v1/org-user/${user}/trip/${trip.tripId}`);
        await ask(`/v1/org-user/${user}/trip/${trip.tripId}/route?tolerance=5`);
      }
      cursor = page['nextCursor'] as string | undefined;
    } while (cursor);
    for (const type of ['day', 'week', 'month'])
      await ask(`/v1/org-user/${user}/statistics?type=${type}&startTime=${from}&endTime=${to}`);
    await ask(`/v1/org-user/${user}/safety-score?interval=30`);
    await ask(`/v1/org-user/${user}/safety-score/history?interval=30&startTime=${from}&endTime=${to}`);
  }
  for (const path of extra) await ask(path);
  return out;
}
