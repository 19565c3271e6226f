/**
 * The package's public entry point for webhook receivers: `import { verifySignature } from
 * 'geofence-service'`. Only pure helpers live here; nothing imported from this file opens a
 * database, reads configuration or starts a server.
 */
export { signBody, verifySignature } from './webhooks/signature.ts';
