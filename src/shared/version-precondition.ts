/**
 * A condition on the version of a record an update is based on: HTTP's `If-Match`, as the services
 * see it. `any` is `*` (the record must exist); otherwise the record's version must be one listed.
 */
export type VersionPrecondition = { any: true } | { versions: readonly number[] };

export function satisfies(precondition: VersionPrecondition, version: number): boolean {
  return 'any' in precondition || precondition.versions.includes(version);
}
