/**
 * Turns the geometry of a request body into a validated, normalised fence (contract §3). The
 * body's JSON schema only asks for an object with a string `type`, so that every other problem
 * is reported by the geometry engine in the contract's order: structure (422, `loc` under
 * `body.geometry`) before geometric validity (400 INVALID_GEOMETRY with a reason).
 */
import { type GeometryValid, validateGeometry } from '../geo/index.ts';
import { FieldValidationError, InvalidGeometryError } from '../shared/errors.ts';

/** `at`: where the geometry sits in the request (a batch item's geometry is deeper in the body). */
export function parseGeometryInput(
  input: unknown,
  at: ReadonlyArray<string | number> = ['body', 'geometry'],
): GeometryValid {
  const result = validateGeometry(input);
  if (result.ok) return result;
  if (result.kind === 'schema') {
    throw new FieldValidationError(
      result.errors.map((e) => ({ type: e.type, loc: [...at, ...e.loc], msg: e.msg })),
    );
  }
  throw new InvalidGeometryError(result.message, result.reason, result.location);
}
