/** Schemas of the delivery operations (contract §5 "Operating deliveries", ADR 018) and their JSON forms. */
import { Type } from 'typebox';
import { component } from '../http/components.ts';
import { Id, Nullable, StringEnum, Timestamp } from '../http/schemas.ts';
import { DELIVERY_EVENT_TYPES } from './deliveries.schemas.ts';
import { HEALTH_SAMPLE, HEALTH_WINDOWS, type WebhookHealth } from './delivery-health.service.ts';
import type { RetryJob } from './dlq-retry-jobs.repository.ts';
import { RETRY_MATCHING_MAX } from './dlq-retry-jobs.service.ts';

export const RetryJobParams = Type.Object({ job_id: Type.String() });

export const RetryMatchingRequest = component(
  'DeadLetterRetryMatchingRequest',
  Type.Object(
    {
      webhook_id: Type.Optional(Type.String({ description: 'Only entries of this webhook' })),
      event_type: Type.Optional(
        StringEnum(DELIVERY_EVENT_TYPES, {
          description: 'Only entries of this event type (beyond the contract: the dead-letter list has it)',
        }),
      ),
      from: Type.Optional(Type.String({ format: 'date-time', description: 'queued_at ≥ from (inclusive)' })),
      to: Type.Optional(Type.String({ format: 'date-time', description: 'queued_at ≤ to (inclusive)' })),
      error_contains: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 200,
          description:
            'Only entries whose `error_message` contains this text, compared case-insensitively (`%` and ' +
            '`_` are plain characters)',
        }),
      ),
    },
    {
      additionalProperties: false,
      description: 'Which dead-letter entries to retry; every field optional, combined with AND',
    },
  ),
);

export const RetryJobAccepted = component(
  'DeadLetterRetryJobAccepted',
  Type.Object(
    {
      job_id: Id,
      matched: Type.Integer({
        description: `Entries the job will retry (at most ${RETRY_MATCHING_MAX.toLocaleString('en')})`,
      }),
    },
    { description: 'A "retry all matching" job was started' },
  ),
);

export const RetryJobSchema = component(
  'DeadLetterRetryJob',
  Type.Object(
    {
      job_id: Id,
      status: StringEnum(['running', 'done'], { description: '`done` once every matched entry was handled' }),
      matched: Type.Integer({ description: 'Entries the job took on when it was asked' }),
      queued: Type.Integer({ description: 'Entries retried so far: a new delivery each' }),
      failed: Type.Integer({
        description: 'Entries refused as the single retry would refuse them (their webhook was deleted)',
      }),
      created_at: Timestamp,
      finished_at: Nullable(Timestamp),
    },
    {
      description:
        'Progress of a "retry all matching" job. When done, `queued + failed` can be below `matched` by ' +
        'the entries retried by another request meanwhile (they are not retried twice).',
    },
  ),
);

export const HealthQuery = Type.Object({
  window: Type.Optional(
    StringEnum(Object.keys(HEALTH_WINDOWS) as Array<keyof typeof HEALTH_WINDOWS>, {
      description: 'How far back from now (default `24h`)',
    }),
  ),
});

export const WebhookHealthSchema = component(
  'WebhookHealth',
  Type.Object(
    {
      window: StringEnum(Object.keys(HEALTH_WINDOWS) as Array<keyof typeof HEALTH_WINDOWS>),
      attempts: Type.Integer({ description: 'Attempts started in the window' }),
      success_rate: Nullable(
        Type.Number({
          description:
            'Attempts answered 2xx / attempts, 0..1; null when the window holds no attempt (no data is ' +
            'not 0 % and not 100 %)',
        }),
      ),
      p50_ms: Nullable(
        Type.Number({ description: 'Median attempt duration (nearest rank); null without attempts' }),
      ),
      p95_ms: Nullable(Type.Number({ description: '95th percentile of attempt durations (nearest rank)' })),
      last_failure_at: Nullable(Timestamp),
      last_failure_message: Nullable(
        Type.String({ description: "The last failed attempt's error, e.g. `HTTP 503 Service Unavailable`" }),
      ),
      consecutive_failures: Type.Integer({
        description: 'Failed attempts since the most recent successful one, counted within the window',
      }),
    },
    {
      description:
        `A webhook's delivery health over the attempts started in the window. Percentiles and the run ` +
        `of failures are read from the newest ${HEALTH_SAMPLE.toLocaleString('en')} attempts of the window ` +
        '(computed by the service, the same on both databases); counts cover every attempt.',
    },
  ),
);

export function retryJobOut(job: RetryJob) {
  return {
    job_id: job.id,
    status: job.status,
    matched: job.matched,
    queued: job.queued,
    failed: job.failed,
    created_at: job.createdAt.toISOString(),
    finished_at: job.finishedAt?.toISOString() ?? null,
  };
}

export function healthOut(h: WebhookHealth) {
  return {
    window: h.window,
    attempts: h.attempts,
    success_rate: h.successRate,
    p50_ms: h.p50Ms,
    p95_ms: h.p95Ms,
    last_failure_at: h.lastFailureAt?.toISOString() ?? null,
    last_failure_message: h.lastFailureMessage,
    consecutive_failures: h.consecutiveFailures,
  };
}
