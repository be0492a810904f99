// Kept apart from the store so that signing (src/webhooks/signature.ts) needs no state store.

/** A secret replaced by a rotation, and until when it still signs. */
export interface PreviousSecret {
  secret: string;
  validUntil: string;
}

/** Every secret an app's rotations replaced, newest first, the form of earlier releases included. */
export function previousSecretsOf(app: {
  previousSecrets?: PreviousSecret[];
  previousSecret?: PreviousSecret | null;
}): PreviousSecret[] {
  const listed = app.previousSecrets ?? [];
  const legacy = app.previousSecret;
  return legacy && !listed.some((p) => p.secret === legacy.secret) ? [...listed, legacy] : listed;
}

/** Until when the last of the previous secrets still signs (what `previousSecretValidUntil` shows), or null. */
export function previousSecretsUntil(app: {
  previousSecrets?: PreviousSecret[];
  previousSecret?: PreviousSecret | null;
}): string | null {
  const ends = previousSecretsOf(app)
    .map((p) => p.validUntil)
    .sort();
  return ends[ends.length - 1] ?? null;
}
