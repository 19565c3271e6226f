/**
 * What to type into each tracker app so that it reports this device (contract §4.6): the address of
 * its route on this server and where the device token goes, with the fields named as the app names
 * them. The server's address is the dashboard's own origin: the API serves the dashboard.
 */

export type TrackerAppId = 'owntracks' | 'traccar' | 'gpslogger' | 'overland';

export interface TrackerSetting {
  /** Stable, for tests and React keys. */
  key: string;
  /** The field as the app labels it. */
  label: string;
  /** What to type; absent when any value does (the note says so). */
  value?: string;
  /** A one-word choice (a mode, a switch) that is picked rather than typed: no copy button. */
  pick?: boolean;
  note?: string;
}

export interface TrackerSetup {
  /** Where in the app the settings are. */
  where: string;
  settings: TrackerSetting[];
  /** The setting drawn as a QR code (the long address, awkward to type on a phone). */
  qrKey: string;
  notes: string[];
}

export interface TrackerContext {
  origin: string;
  token: string;
  deviceName: string;
  externalId: string | null;
}

export const TRACKER_APPS: ReadonlyArray<{ id: TrackerAppId; name: string; platforms: string }> = [
  { id: 'owntracks', name: 'OwnTracks', platforms: 'Android and iPhone' },
  { id: 'traccar', name: 'Traccar Client', platforms: 'Android and iPhone' },
  { id: 'gpslogger', name: 'GPSLogger', platforms: 'Android' },
  { id: 'overland', name: 'Overland', platforms: 'iPhone' },
];

export function trackerAppName(id: TrackerAppId): string {
  return TRACKER_APPS.find((app) => app.id === id)?.name ?? id;
}

/** The token's name: which app on which device, so the token list says what each one is for. */
export function tokenName(app: TrackerAppId, deviceName: string): string {
  return `${trackerAppName(app)} on ${deviceName}`.slice(0, 255);
}

export function trackerSetup(app: TrackerAppId, context: TrackerContext): TrackerSetup {
  const ingest = `${context.origin}/api/v1/ingest`;
  const token = encodeURIComponent(context.token);
  const identifier: TrackerSetting = {
    key: 'device-id',
    label: '',
    ...(context.externalId ? { value: context.externalId } : {}),
    note: 'Any value: the token tells the service which device this is.',
  };
  switch (app) {
    case 'owntracks':
      return {
        where: 'Android: Preferences → Connection. iPhone: Settings.',
        qrKey: 'url',
        settings: [
          { key: 'mode', label: 'Mode', value: 'HTTP', pick: true },
          { key: 'url', label: 'URL', value: `${ingest}/owntracks` },
          {
            key: 'username',
            label: 'Username',
            value: userName(context),
            note: 'Any name (on iPhone: UserID, with Authentication on). The app sends the password only with a user name.',
          },
          { key: 'password', label: 'Password', value: context.token },
          { ...identifier, label: 'Device ID' },
        ],
        notes: [],
      };
    case 'traccar':
      return {
        where: 'Settings (on the main screen).',
        qrKey: 'url',
        settings: [
          { key: 'url', label: 'Server URL', value: `${ingest}/osmand?token=${token}` },
          { ...identifier, label: 'Device identifier' },
        ],
        notes: ['The token rides in the Server URL: Traccar Client has no field for a password.'],
      };
    case 'gpslogger':
      return {
        where: 'Settings → Logging details → Log to custom URL.',
        qrKey: 'url',
        settings: [
          { key: 'enable', label: 'Log to custom URL', value: 'On', pick: true },
          {
            key: 'url',
            label: 'URL',
            value:
              `${ingest}/osmand?token=${token}` +
              '&lat=%LAT&lon=%LON&timestamp=%TIMESTAMP&accuracy=%ACC&altitude=%ALT&bearing=%DIR&batt=%BATT',
          },
          { key: 'method', label: 'HTTP Method', value: 'GET', pick: true },
        ],
        notes: [
          'Speed is left out on purpose: GPSLogger’s %SPD is in metres per second, and this address reads speed in knots (the OsmAnd protocol).',
        ],
      };
    case 'overland':
      return {
        where: 'Settings.',
        qrKey: 'url',
        settings: [
          { key: 'url', label: 'Receiver Endpoint', value: `${ingest}/overland` },
          { key: 'token', label: 'Access Token', value: context.token },
          { ...identifier, label: 'Device ID' },
        ],
        notes: ['Keep Points per Batch at 1000 or fewer: a larger batch is refused.'],
      };
  }
}

/** A user name for OwnTracks from the device's name: lower case letters, digits and dashes. */
function userName(context: TrackerContext): string {
  const slug = context.deviceName
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return slug || 'tracker';
}
