/** One curl per endpoint for the demo's printout (and the README shows the same calls). */
export function demoCurlExamples(
  base: string,
  apiKey: string,
  user: string,
  days?: { first: string; last: string },
): string[] {
  const auth = `-H "Authorization: Bearer ${apiKey}"`;
  const [from, to] = days ? [days.first, days.last] : ['<YYYY-MM-DD>', '<YYYY-MM-DD>'];
  return [
    `  open ${base}/docs in a browser for the API reference`,
    `  curl -s ${auth} "${base}/v1/org-user/${user}/trips?limit=5"`,
    `  curl -s ${auth} "${base}/v1/org-user/${user}/trip/<tripId from the list>"`,
    `  curl -s ${auth} "${base}/v1/org-user/${user}/statistics?type=week&startTime=${from}&endTime=${to}"`,
    `  curl -s ${auth} "${base}/v1/org-user/${user}/safety-score?interval=30"`,
    `  curl -s ${auth} "${base}/v1/org-user/${user}/safety-score/history?interval=30"`,
    `  curl -s -X POST ${auth} "${base}/v1/org-user/${user}/token"`,
    `  curl -s ${auth} "${base}/v1/token/<token from the call above>"`,
    `  curl -s "${base}/v1/openapi.json"`,
  ];
}
