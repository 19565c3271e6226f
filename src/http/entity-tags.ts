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

/** `*`, or an entity tag: opaque text in double quotes, `W/` before it when weak. */
const ELEMENT = /^(\*|(W\/)?"[\x21\x23-\x7e\x80-\uffff]*")$/;

/**
 * The precondition of an `If-Match` header: undefined without one (the update is unconditional),
 * `malformed` when it is not `*` or a list of entity tags (`If-Match: 3` forgets the quotes), so the
 * client hears why instead of a 412 that no version could have avoided.
 */
export function ifMatchPrecondition(
  header: string | undefined,
): VersionPrecondition | 'malformed' | undefined {
  if (header === undefined) return undefined;
  // A list may hold empty elements (RFC 9110 §5.6.1); it must hold at least one tag.
  const elements = header
    .split(',')
    .map((part) => part.trim())
    .filter((part) => part !== '');
  if (elements.length === 0 || !elements.every((element) => ELEMENT.test(element))) return 'malformed';
  if (elements.includes('*')) return { any: true };
  const versions: number[] = [];
  for (const element of elements) {
    const match = /^"([1-9][0-9]{0,15})"$/.exec(element);
    const version = Number(match?.[1]);
    if (Number.isSafeInteger(version)) versions.push(version);
  }
  return { versions };
}
