// A JSON.parse result that depends on what was parsed before it, seen on Node 24.21 (V8 13.6) and not
// on Node 20. The two texts are PostgreSQL's jsonb output of documents from the property test
// test/db/statements.test.ts. Parsed alone, `second` has 8 keys. Parsed after `first`, its key `"` is
// missing. Run: node docs/repro/v8-json-parse-key-loss.mjs (a fresh process each time).
import fs from 'node:fs';

const { first, second } = JSON.parse(
  fs.readFileSync(new URL('./v8-json-parse-key-loss.json', import.meta.url), 'utf8'),
);
const alone = Object.keys(JSON.parse(second));
JSON.parse(first);
const after = Object.keys(JSON.parse(second));
console.log(`${process.version}: ${alone.length} keys alone, ${after.length} after parsing the first text`);
const missing = alone.filter((k) => !after.includes(k));
console.log(missing.length === 0 ? 'not reproduced' : `reproduced: missing ${JSON.stringify(missing)}`);
