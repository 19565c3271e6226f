/**
 * The claim policy on its own (ADR 010 "Rate limit windows"): which due deliveries are leased and
 * when the others are due again. The engine's behaviour through real HTTP and a real database is
 * covered by delivery-rate-limit.test.ts; this pins the arithmetic at the window's edges.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type DueDelivery, planClaims, type RateLimitedWebhook } from '../../src/webhooks/claim-policy.ts';

const now = new Date('2026-03-10T12:00:00.400Z');
const second = Math.floor(now.getTime() / 1000);

function hook(id: string, rateLimitPerMinute: number, enabled = true): RateLimitedWebhook {
  return { id, enabled, rateLimitPerMinute, timeoutSeconds: 5 };
}

function due(id: string, webhookId: string, origin: DueDelivery['origin'] = 'subscription'): DueDelivery {
  return { id, webhookId, origin };
}

describe('claim policy', () => {
  test('leases up to the limit over the last 61 seconds; the rest wait for the oldest counted second to leave', () => {
    const plan = planClaims(
      [due('a', 'h'), due('b', 'h'), due('c', 'h')],
      new Map([['h', hook('h', 3)]]),
      [
        { webhookId: 'h', second: second - 60, sends: 1 },
        { webhookId: 'h', second: second - 10, sends: 1 },
      ],
      now,
      1000,
    );
    assert.deepEqual(plan.decisions, [
      { kind: 'lease', id: 'a', webhookId: 'h', leaseUntil: new Date(now.getTime() + 5000 + 1000) },
      { kind: 'defer', id: 'b', dueAt: new Date((second + 1) * 1000) },
      { kind: 'defer', id: 'c', dueAt: new Date((second + 1) * 1000) },
    ]);
    assert.equal(plan.second, second);
    assert.deepEqual([...plan.sends], [['h', 1]]);
  });

  test('each webhook has its own window; a webhook not read gets no decision', () => {
    const plan = planClaims(
      [due('a', 'full'), due('b', 'free'), due('c', 'gone')],
      new Map([
        ['full', hook('full', 2)],
        ['free', hook('free', 2)],
      ]),
      [{ webhookId: 'full', second: second - 5, sends: 2 }],
      now,
      0,
    );
    assert.deepEqual(
      plan.decisions.map((d) => [d.id, d.kind]),
      [
        ['a', 'defer'],
        ['b', 'lease'],
      ],
    );
    assert.deepEqual(plan.decisions[0], { kind: 'defer', id: 'a', dueAt: new Date((second + 56) * 1000) });
    assert.deepEqual([...plan.sends], [['free', 1]]);
  });

  test("a disabled webhook's deliveries wait a minute, its test deliveries are sent", () => {
    const plan = planClaims(
      [due('a', 'off'), due('t', 'off', 'test')],
      new Map([['off', hook('off', 10, false)]]),
      [],
      now,
      0,
    );
    assert.deepEqual(plan.decisions, [
      { kind: 'defer', id: 'a', dueAt: new Date(now.getTime() + 60_000) },
      { kind: 'lease', id: 't', webhookId: 'off', leaseUntil: new Date(now.getTime() + 5000) },
    ]);
  });
});
