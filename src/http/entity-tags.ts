/**
 * Entity tags of versioned records (RFC 9110 §8.8.3, §13.1.1): `ETag: "3"` names version 3, and
 * `If-Match` turns into a version precondition for the service. `If-Match` compares strongly, so a
 * weak tag (`W/"3"`) never matches; a tag that names no version of ours matches none either, and the
 * update answers 412, as the RFC asks of a condition that is false.
 */
import type { VersionPrecondition } from '../shared/version-precondition.ts';

export function entityTag(version: number): string {
  return `"${version}"`;
}

/** The precondition of an `If-Match` header; undefined without one (the update is unconditional). */
export function ifMatchPrecondition(header: string | undefined): VersionPrecondition | undefined {
  if (header === undefined) return undefined;
  const versions: number[] = [];
  for (const part of header.split(',')) {
    const tag = part.trim();
    if (tag === '*') return { any: true };
    const match = /^"([1-9][0-9]{0,15})"$/.exec(tag);
    const version = Number(match?.[1]);
    if (Number.isSafeInteger(version)) versions.push(version);
  }
  return { versions };
}
