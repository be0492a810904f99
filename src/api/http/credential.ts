/** What authenticated a request: an API key (the API-key operations) or a passport token (SDK upload). */
export type Credential =
  | { kind: 'apiKey'; bucket: string }
  | { kind: 'passportToken'; bucket: string; owner: { appId: string; platformUserId: number; orgUserId: string } };
