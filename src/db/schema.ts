/**
 * The whole database as Kysely sees it. Each domain declares its own tables (`*.tables.ts`), and
 * the composition root merges them all into this interface (src/database-schema.ts), so that db/,
 * which every domain imports, imports no domain. A type-checked program that includes a repository
 * must include that file too (tsconfig.json includes src/; web/tsconfig.json names it).
 */
// biome-ignore lint/suspicious/noEmptyInterface: filled in by declaration merging (src/database-schema.ts)
export interface DatabaseSchema {}
