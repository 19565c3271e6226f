/**
 * One attempt of an AWS action and its outcome (contract §6): the client is built for the attempt
 * and destroyed after it, the attempt is bounded by the runtime's timeout as a whole, and what
 * happened is told in an operator's words: AWS's own error name, message and HTTP status, a
 * network error as webhooks tell it, the SSRF guard's refusal as written. The secret access key
 * is never part of the outcome.
 */
import { describeNetworkError, EXCERPT_BYTES } from '../../outbound/http-response.ts';
import type { ActionOutcome, ActionRuntime } from './action.ts';
import { type AwsClientOptions, type AwsConnection, awsClientOptions } from './aws-client-options.ts';

export type AwsServiceLabel = 'Lambda' | 'SNS';

/** What a successful call reports: the HTTP status and the answer's fields worth keeping. */
export interface AwsAnswer {
  statusCode: number | null;
  excerpt: Record<string, unknown>;
}

/** The configured connection, with a secret that may be missing in a stored config. */
export interface AwsActionConfig {
  region: string;
  access_key_id: string;
  secret_access_key?: string | undefined;
  endpoint?: string | undefined;
}

export async function awsAttempt(
  service: AwsServiceLabel,
  config: AwsActionConfig,
  runtime: ActionRuntime,
  call: (options: AwsClientOptions, abortSignal: AbortSignal) => Promise<AwsAnswer>,
): Promise<ActionOutcome> {
  const secret = config.secret_access_key;
  if (secret === undefined || secret === '') {
    return failure(`The ${service} action has no secret access key; set it again`, null, null);
  }
  const connection: AwsConnection = { ...config, secret_access_key: secret };
  const setup = awsClientOptions(connection, runtime);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), runtime.timeoutMs);
  try {
    const answer = await call(setup.options, controller.signal);
    return {
      success: true,
      statusCode: answer.statusCode,
      errorMessage: null,
      responseExcerpt: capped(withoutSecret(json(answer.excerpt), secret)),
    };
  } catch (error) {
    if (controller.signal.aborted || isRequestTimeout(error)) {
      return failure(
        `Timed out after ${runtime.timeoutMs} ms without a response from ${service}`,
        null,
        null,
      );
    }
    const outcome = serviceFailure(service, error) ?? failure(describeNetworkError(error), null, null);
    return {
      ...outcome,
      errorMessage: withoutSecret(outcome.errorMessage, secret),
      responseExcerpt: capped(withoutSecret(outcome.responseExcerpt, secret)),
    };
  } finally {
    clearTimeout(timer);
    setup.destroy();
  }
}

/** The SDK handler's own bound (`requestTimeout`), which may fire before ours: same meaning. */
function isRequestTimeout(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  return error.name === 'TimeoutError' && error.message.includes('requestTimeout');
}

interface ServiceErrorLike {
  name?: unknown;
  message?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown; requestId?: unknown };
}

/**
 * An error after an HTTP answer (the SDK gives it the status); null for anything else. AWS's own
 * errors carry `$fault`; without it the answer could not be read as the service's (a proxy's
 * HTML page, an endpoint that is not AWS).
 */
function serviceFailure(service: AwsServiceLabel, error: unknown): ActionOutcome | null {
  if (typeof error !== 'object' || error === null) return null;
  const { name, message, $fault, $metadata } = error as ServiceErrorLike;
  const status = $metadata?.httpStatusCode;
  if (typeof status !== 'number') return null;
  const text = typeof message === 'string' && message !== '' ? message : null;
  if ($fault === undefined) {
    // The SDK appends a debugging hint on the following lines; the first line is the reason.
    const reason = text?.split('\n')[0] ?? 'no details';
    return failure(
      `${service} answered HTTP ${status} with a response that is not ${service}'s (${reason})`,
      status,
      null,
    );
  }
  const code = typeof name === 'string' && name !== '' ? name : 'UnknownError';
  const detail = text !== null && text !== code ? text : null;
  const requestId = typeof $metadata?.requestId === 'string' ? $metadata.requestId : undefined;
  return failure(
    `${service} answered HTTP ${status} ${code}${detail === null ? '' : `: ${detail}`}`,
    status,
    json({ Error: code, Message: detail ?? undefined, RequestId: requestId }),
  );
}

function failure(
  errorMessage: string,
  statusCode: number | null,
  responseExcerpt: string | null,
): ActionOutcome {
  return { success: false, statusCode, errorMessage, responseExcerpt };
}

function json(fields: Record<string, unknown>): string | null {
  const text = JSON.stringify(fields);
  return text === '{}' ? null : text;
}

/** At most 1 KiB, cut after the secret is removed so that no part of it survives the cut. */
function capped(text: string | null): string | null {
  if (text === null) return null;
  return Buffer.from(text, 'utf8').subarray(0, EXCERPT_BYTES).toString('utf8');
}

/**
 * AWS never echoes the secret key, but an outcome is stored and shown: make sure of it. Very short
 * "secrets" are left alone, replacing every occurrence of one letter would garble the text.
 */
function withoutSecret(text: string | null, secret: string): string | null {
  if (text === null || secret.length < 8) return text;
  return text.replaceAll(secret, '…');
}
