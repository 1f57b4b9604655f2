// DuckDB (@duckdb/node-api from .tools/node_modules, installed by setup.sh) as the second
// independent parquet implementation of tests/format/parquet_interop_test.cc:
//   node parquet_duckdb.mjs sums <file>    -> JSON {rows, sums: {column: sum as text}}
//   node parquet_duckdb.mjs write <file>   -> writes 5000 rows with COPY ... (FORMAT parquet)
//                                             and prints the same JSON of what it wrote
// Integer sums are exact (HUGEINT as text); float sums are DuckDB's double sum, as text.
import { createRequire } from 'node:module'
import path from 'node:path'

const require = createRequire(path.join(process.env.DLIO_TOOLS_DIR, 'node_modules', 'x.js'))
const { DuckDBInstance } = await import(require.resolve('@duckdb/node-api'))

const quote = (s) => "'" + s.replaceAll("'", "''") + "'"

async function sums(c, file) {
  const cols = (await c.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet(${quote(file)})`))
    .getRows().map((r) => r[0])
  const exprs = cols.map((n) => `sum("${n}")::VARCHAR`).join(', ')
  const row = (await c.runAndReadAll(
    `SELECT count(*)::VARCHAR, ${exprs} FROM read_parquet(${quote(file)})`)).getRows()[0]
  const out = { rows: Number(row[0]), sums: {} }
  cols.forEach((n, k) => { out.sums[n] = row[k + 1] })
  return out
}

const [mode, file] = process.argv.slice(2)
const db = await DuckDBInstance.create(':memory:')
const c = await db.connect()
if (mode === 'write') {
  // i32 and i64 plain, f32 with 7 distinct values (dictionary pages), f64 plain; snappy.
  await c.run(`COPY (SELECT range::INTEGER AS i32, (range * 3 - 7000)::BIGINT AS i64,
                            (range % 7)::FLOAT AS f32, (range * 0.25)::DOUBLE AS f64
                     FROM range(5000)) TO ${quote(file)} (FORMAT parquet)`)
} else if (mode !== 'sums') {
  throw new Error(`mode ${mode}: sums or write`)
}
console.log(JSON.stringify(await sums(c, file)))
