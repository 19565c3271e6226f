/**
 * "Connect a tracker": a phone app (OwnTracks, Traccar Client, GPSLogger, Overland) reports this
 * device with a device token of its own. The token is made here and shown once, with the exact
 * settings to type into the chosen app, each copyable, and the address as a QR code. The device's
 * tokens are listed (never their secrets) and can be revoked.
 */
import { useState } from 'react';
import { errorMessage, type Schemas, thrownMessage } from '../../api/client.ts';
import { failureMessage, useInvalidate } from '../../api/queries.ts';
import { ConfirmButton } from '../../ui/ConfirmButton.tsx';
import { formatTime } from '../../ui/format.ts';
import { Notice } from '../../ui/forms.tsx';
import { QrCode } from '../../ui/QrCode.tsx';
import { createDeviceToken, revokeDeviceToken, tokenKeys, useDeviceTokens } from './devicesApi.ts';
import { TRACKER_APPS, type TrackerAppId, tokenName, trackerAppName, trackerSetup } from './trackerApps.ts';

type DeviceToken = Schemas['DeviceToken'];

interface Props {
  deviceId: string;
  deviceName: string;
  externalId: string | null;
}

export function TrackerConnect({ deviceId, deviceName, externalId }: Props) {
  const [app, setApp] = useState<TrackerAppId>('owntracks');
  const [created, setCreated] = useState<Schemas['CreatedDeviceToken'] | null>(null);
  const list = useDeviceTokens(deviceId);
  const tokens = list.data?.results ?? null;
  const invalidate = useInvalidate();
  const load = (): void => invalidate(tokenKeys.of(deviceId));
  const [problem, setError] = useState<string | null>(null);
  const error = problem ?? failureMessage(list.error);
  const [busy, setBusy] = useState(false);

  const create = async (): Promise<void> => {
    setBusy(true);
    try {
      const { data, error: failure } = await createDeviceToken(deviceId, tokenName(app, deviceName));
      if (!data) {
        setError(errorMessage(failure));
        return;
      }
      setError(null);
      setCreated(data);
      load();
    } catch (thrown) {
      setError(thrownMessage(thrown));
    } finally {
      setBusy(false);
    }
  };

  const revoke = async (token: DeviceToken): Promise<void> => {
    const { error: failure } = await revokeDeviceToken(deviceId, token.id);
    if (failure) setError(errorMessage(failure));
    else if (created?.id === token.id) setCreated(null);
    load();
  };

  return (
    <section className="tracker-connect" aria-labelledby="tracker-connect-title">
      <h3 id="tracker-connect-title">Connect a tracker</h3>
      <p className="hint">
        A phone app reports this device’s locations with a device token of its own, which can write this
        device’s locations and nothing else.
      </p>
      <fieldset className="tracker-apps">
        <legend>Tracker app</legend>
        {TRACKER_APPS.map((option) => (
          <label key={option.id} className="check">
            <input
              type="radio"
              name={`tracker-app-${deviceId}`}
              value={option.id}
              checked={app === option.id}
              onChange={() => setApp(option.id)}
            />
            {option.name} <span className="hint">({option.platforms})</span>
          </label>
        ))}
      </fieldset>
      {created ? (
        <NewToken
          app={app}
          token={created}
          deviceName={deviceName}
          externalId={externalId}
          onDone={() => setCreated(null)}
        />
      ) : (
        <button type="button" className="primary" disabled={busy} onClick={() => void create()}>
          Create device token
        </button>
      )}
      <Notice kind="error">{error}</Notice>
      <TokenList tokens={tokens} onRevoke={revoke} />
    </section>
  );
}

function NewToken({
  app,
  token,
  deviceName,
  externalId,
  onDone,
}: {
  app: TrackerAppId;
  token: Schemas['CreatedDeviceToken'];
  deviceName: string;
  externalId: string | null;
  onDone(): void;
}) {
  const [copied, setCopied] = useState<string | null>(null);
  const [copyError, setCopyError] = useState<string | null>(null);
  const setup = trackerSetup(app, {
    origin: window.location.origin,
    token: token.token,
    deviceName,
    externalId,
  });
  const qr = setup.settings.find((s) => s.key === setup.qrKey);
  const appName = trackerAppName(app);

  const copy = async (what: string, value: string): Promise<void> => {
    try {
      await navigator.clipboard.writeText(value);
      setCopyError(null);
      setCopied(`The ${what} is on your clipboard.`);
    } catch {
      // Denied (no permission, or the page is not focused): the value is shown, so it can be selected.
      setCopied(null);
      setCopyError(`Could not copy to the clipboard: select the ${what} and copy it yourself.`);
    }
  };

  return (
    <section className="new-key tracker-token" aria-labelledby="tracker-token-title">
      <h4 id="tracker-token-title">Token “{token.name ?? token.prefix}” created</h4>
      <p className="tracker-warning">
        <strong>Copy it now: the token is shown once.</strong> Only its first characters are kept, to
        recognise it in the list below.
      </p>
      <div className="copy-row">
        <code data-testid="device-token">{token.token}</code>
        <button type="button" onClick={() => void copy('token', token.token)}>
          Copy<span className="visually-hidden"> token</span>
        </button>
      </div>
      <h4>Settings for {appName}</h4>
      <p className="hint">{setup.where}</p>
      <dl className="tracker-settings">
        {setup.settings.map((setting) => (
          <div key={setting.key} className="tracker-setting">
            <dt>{setting.label}</dt>
            <dd>
              {setting.value === undefined ? null : (
                <div className="copy-row">
                  <code data-testid={`tracker-${setting.key}`}>{setting.value}</code>
                  {setting.pick ? null : (
                    <button type="button" onClick={() => void copy(setting.label, setting.value ?? '')}>
                      Copy<span className="visually-hidden"> {setting.label}</span>
                    </button>
                  )}
                </div>
              )}
              {setting.note ? <p className="hint">{setting.note}</p> : null}
            </dd>
          </div>
        ))}
      </dl>
      {setup.notes.map((note) => (
        <p key={note} className="hint">
          {note}
        </p>
      ))}
      {qr?.value ? (
        <figure className="tracker-qr">
          <QrCode text={qr.value} label={`QR code of the ${qr.label} for ${appName}`} />
          <figcaption className="hint">
            Scan it with the phone to bring the {qr.label} over without typing it.
          </figcaption>
        </figure>
      ) : null}
      <p role="status">{copied ?? ''}</p>
      <Notice kind="error">{copyError}</Notice>
      <button type="button" onClick={onDone}>
        Done<span className="visually-hidden">: hide the token</span>
      </button>
    </section>
  );
}

function TokenList({
  tokens,
  onRevoke,
}: {
  tokens: DeviceToken[] | null;
  onRevoke(token: DeviceToken): Promise<void>;
}) {
  return (
    <>
      <h4 id="device-tokens-title">Device tokens</h4>
      {tokens === null ? (
        <p className="hint">Loading the tokens…</p>
      ) : tokens.length === 0 ? (
        <p className="hint">No tokens yet: nothing but the API reports this device.</p>
      ) : (
        <div className="table-wrap">
          <table aria-labelledby="device-tokens-title" className="device-tokens">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((token) => (
                <tr key={token.id}>
                  <td>{token.name ?? '—'}</td>
                  <td>
                    <code>{token.prefix}…</code>
                  </td>
                  <td>{token.last_used_at ? formatTime(token.last_used_at) : 'Never'}</td>
                  <td>
                    <ConfirmButton
                      danger
                      question={`Revoke “${token.name ?? token.prefix}”? The app using it stops reporting at once.`}
                      confirmLabel="Revoke"
                      onConfirm={() => onRevoke(token)}
                    >
                      Revoke<span className="visually-hidden"> {token.name ?? token.prefix}</span>
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
