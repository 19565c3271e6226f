/** The example request body and answers of one operation, keyed by `METHOD /path` as documented. */
export interface OperationExample {
  /** The request body, for an operation that takes one. */
  request?: unknown;
  /** For an operation taking several content types: the example request body of each. */
  requestByType?: Record<string, unknown>;
  /** Answer bodies by status; the operation's success status at least (not for a 204). */
  responses: Record<number, unknown>;
}

export type OperationExamples = Record<string, OperationExample>;
