/**
 * The body of the `webhook.test` delivery of contract §5. Built once, when the delivery is
 * created, and stored: every attempt sends (and signs) the very same bytes.
 */
export function testEventId(now: Date): string {
  return `webhook_test_${Math.floor(now.getTime() / 1000)}`;
}

export function testPayload(
  idempotencyKey: string,
  now: Date,
  webhook: { id: string; name: string },
): string {
  return JSON.stringify({
    id: idempotencyKey,
    event: 'webhook.test',
    timestamp: now.toISOString(),
    data: {
      event_id: testEventId(now),
      webhook_id: webhook.id,
      webhook_name: webhook.name,
      message: 'This is a test delivery from the geofencing service.',
    },
  });
}
