/** E-mail addresses are compared and stored lower-cased, so uniqueness and invitations ignore letter case. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
