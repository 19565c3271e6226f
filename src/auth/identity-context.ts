import type { Db } from '../db/database.ts';
import type { Mailer } from '../mail/mailer.ts';
import type { Clock } from '../shared/clock.ts';
import type { Authenticator } from './authenticator.ts';
import type { JwtTokens } from './jwt-tokens.ts';
import type { PasswordHashParams } from './passwords.ts';

/** What the identity services need, built once by the composition root. */
export interface IdentityContext {
  db: Db;
  clock: Clock;
  tokens: JwtTokens;
  mailer: Mailer;
  authenticator: Authenticator;
  passwordHash: PasswordHashParams;
  publicUrl: string;
  signupEnabled: boolean;
  requireEmailVerification: boolean;
}
