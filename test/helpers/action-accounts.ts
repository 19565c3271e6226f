/**
 * The accounts that workflow-action tests configure and the stand-ins check (fake-aws.ts,
 * fake-twilio.ts), and a customer database for `database` actions: a login role of its own and a
 * schema of its name (the role's search path `"$user"` puts new tables there) in the local
 * PostgreSQL, whatever database the app under test uses.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const REGION = 'eu-west-1';
export const KEY_ID = 'AKIAIOSFODNN7EXAMPLE';
export const SECRET_KEY = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
export const FUNCTION = 'geofence-events';
export const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:geofence-events';
export const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const AUTH_TOKEN = 'f3c1b2a4d5e6978812aa34bb56cc78dd';

const PG_URL = process.env.WORKFLOW_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

export class CustomerDatabase {
  /** The role's and the schema's name. */
  readonly name: string;
  /** A superuser session, to look at what the actions wrote. */
  readonly admin = new pg.Client({ connectionString: PG_URL });
  private readonly password: string;

  private constructor(name: string, password: string) {
    this.name = name;
    this.password = password;
  }

  /**
   * A new role and schema named `<prefix>_<random>`. `password` only goes into `url()`: the local
   * server trusts loopback connections and ignores it, but an action shows it masked.
   */
  static async create(prefix: string, password = ''): Promise<CustomerDatabase> {
    const db = new CustomerDatabase(`${prefix}_${randomBytes(6).toString('hex')}`, password);
    await db.admin.connect();
    await db.admin.query(`create role ${db.name} login`);
    await db.admin.query(`create schema ${db.name} authorization ${db.name}`);
    return db;
  }

  /** The connection URL an action is given: the role, its password, the local database. */
  url(): string {
    const url = new URL(PG_URL);
    url.username = this.name;
    url.password = this.password;
    url.search = '';
    return url.toString();
  }

  /** Drops the schema and the role; close the app's pools of the role first. */
  async drop(): Promise<void> {
    await this.admin.query(`drop schema if exists ${this.name} cascade`);
    await this.admin.query(`drop role if exists ${this.name}`);
    await this.admin.end();
  }
}
