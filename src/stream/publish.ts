/**
 * From committed work to stream messages (ADR 016): ingestion's commits (one `location` message per
 * device, its newest position of the commit, then the events in the order they happened) and the
 * dwell worker's events. Nothing is built, read or sent for a workspace nobody watches here or on
 * another node. For a watched one, the work runs after the commit's answer was written: the
 * devices' names are read (ingestion does not read them), then the messages go to the hub.
 * Commits of one workspace are published in the order they committed on this node, one after the
 * other.
 */
import type { Logger } from 'pino';
import type { Db, DialectCapabilities } from '../db/database.ts';
import { deviceLabels } from '../devices/device-labels.repository.ts';
import type { DeviceTrackingState } from '../devices/device-tracking.repository.ts';
import type { GeofenceEvent } from '../events/events.repository.ts';
import type { CommittedIngestion } from '../locations/ingest.service.ts';
import type { StreamHub } from './stream-hub.ts';
import { eventMessage, locationMessage } from './stream-messages.ts';

export class StreamPublisher {
  readonly #hub: StreamHub;
  readonly #db: Db;
  readonly #capabilities: DialectCapabilities;
  readonly #logger: Pick<Logger, 'warn'>;
  /** The tail of each workspace's queue of publications. */
  readonly #queues = new Map<string, Promise<void>>();

  constructor(deps: {
    hub: StreamHub;
    db: Db;
    capabilities: DialectCapabilities;
    logger: Pick<Logger, 'warn'>;
  }) {
    this.#hub = deps.hub;
    this.#db = deps.db;
    this.#capabilities = deps.capabilities;
    this.#logger = deps.logger;
  }

  /** After an ingestion committed. */
  committed(committed: CommittedIngestion): void {
    const { workspaceId, devices, events } = committed;
    if (!this.#hub.wanted(workspaceId)) return;
    this.#enqueue(workspaceId, async () => {
      await this.#positions(workspaceId, devices);
      this.#events(workspaceId, events);
    });
  }

  /** After the dwell worker committed events. */
  events(workspaceId: string, events: readonly GeofenceEvent[]): void {
    if (events.length === 0 || !this.#hub.wanted(workspaceId)) return;
    this.#enqueue(workspaceId, async () => this.#events(workspaceId, events));
  }

  /** Resolves once everything queued so far is published (tests, shutdown). */
  async idle(): Promise<void> {
    await Promise.all([...this.#queues.values()]);
  }

  #enqueue(workspaceId: string, work: () => Promise<void>): void {
    // The first step waits a turn of the event loop: the request's answer goes out first.
    const previous = this.#queues.get(workspaceId) ?? new Promise<void>((resolve) => setImmediate(resolve));
    const next = previous
      .then(work)
      .catch((error: unknown) => this.#logger.warn({ err: error }, 'stream: could not publish a commit'));
    this.#queues.set(workspaceId, next);
    void next.finally(() => {
      if (this.#queues.get(workspaceId) === next) this.#queues.delete(workspaceId);
    });
  }

  async #positions(workspaceId: string, devices: readonly DeviceTrackingState[]): Promise<void> {
    if (devices.length === 0) return;
    const labels = await deviceLabels(
      this.#db,
      this.#capabilities,
      workspaceId,
      devices.map((d) => d.id),
    );
    for (const device of devices) {
      const label = labels.get(device.id);
      const last = device.lastLocation;
      // A device deleted since has no position to show.
      if (!label || !last) continue;
      this.#hub.publish(
        workspaceId,
        locationMessage({
          deviceId: device.id,
          name: label.name,
          externalId: label.externalId,
          lng: last.point.coordinates[0],
          lat: last.point.coordinates[1],
          accuracy: last.accuracy,
          recordedAt: last.timestamp,
          insideGeofenceIds: device.insideGeofenceIds,
        }),
      );
    }
  }

  #events(workspaceId: string, events: readonly GeofenceEvent[]): void {
    // Events of a commit are stored device by device; across devices they go out as they happened.
    const ordered = [...events].sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime());
    for (const event of ordered) this.#hub.publish(workspaceId, eventMessage(event));
  }
}
