// DuckDB (@duckdb/node-api from .tools/node_modules, installed by setup.sh) as the second
// independent parquet implementation of tests/format/parquet_interop_test.cc:
//   node parquet_duckdb.mjs sums <file>    -> JSON {rows, sums: {column: sum as text}}
//   node parquet_duckdb.mjs write <file>   -> writes 5000 rows with COPY ... (FORMAT parquet)
//                                             and prints the same JSON of what it wrote
//   node parquet_duckdb.mjs v2 <file> <codec> [rows] -> writes 5000 rows (by default) with
//                                             PARQUET_VERSION v2 (DELTA_*,
//                                             BYTE_STREAM_SPLIT, BOOLEAN), reads them back and
//                                             prints {rows, columns: {name: [hex of each value as
//                                             a PLAIN page stores it, "" for null]}, chunks:
//                                             ["name ENCODINGS CODEC", ...]}
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

// A value as the bytes a PLAIN page stores it (BOOLEAN: one byte), by DuckDB type.
function stored(type, v) {
  if (v === null) return ''
  const d = new DataView(new ArrayBuffer(8))
  const hex = (n) => Buffer.from(d.buffer, 0, n).toString('hex')
  switch (type) {
    case 'BOOLEAN': return v ? '01' : '00'
    case 'INTEGER': d.setInt32(0, v, true); return hex(4)
    case 'BIGINT': d.setBigInt64(0, v, true); return hex(8)
    case 'FLOAT': d.setFloat32(0, v, true); return hex(4)
    case 'DOUBLE': d.setFloat64(0, v, true); return hex(8)
    case 'VARCHAR': return Buffer.from(v, 'utf8').toString('hex')
    default: throw new Error(`type ${type}`)
  }
}

// Row groups of 2048 rows; every column nullable (DuckDB writes them OPTIONAL), some with nulls.
async function writeV2(c, file, codec, rows) {
  await c.run(`COPY (SELECT ((range * 7919) % 100003 - 50000)::INTEGER AS i32,
      ((hash(range) >> 1)::BIGINT - 4611686018427387904) AS i64,
      CASE WHEN range % 6 = 0 THEN NULL ELSE (range * 3 - 7000)::INTEGER END AS oi32,
      (sin(range) * 1000)::FLOAT AS f32, cos(range)::DOUBLE AS f64,
      range % 3 = 0 AS b, CASE WHEN range % 5 = 0 THEN NULL ELSE range % 2 = 0 END AS ob,
      repeat('x', (range % 13)::INTEGER) || range::VARCHAR AS s,
      CASE WHEN range % 4 = 0 THEN NULL ELSE md5(range::VARCHAR) END AS os
    FROM range(${rows})) TO ${quote(file)}
    (FORMAT parquet, PARQUET_VERSION v2, COMPRESSION ${codec}, ROW_GROUP_SIZE 2048)`)
  const reader = await c.runAndReadAll(`SELECT * FROM read_parquet(${quote(file)})`)
  const names = reader.columnNames()
  const types = reader.columnTypes().map((t) => t.toString())
  const out = { rows: 0, columns: {}, chunks: [] }
  names.forEach((n) => { out.columns[n] = [] })
  for (const row of reader.getRows()) {
    names.forEach((n, k) => out.columns[n].push(stored(types[k], row[k])))
    ++out.rows
  }
  const meta = await c.runAndReadAll(`SELECT path_in_schema, encodings, compression
    FROM parquet_metadata(${quote(file)}) WHERE row_group_id = 0`)
  out.chunks = meta.getRows().map((r) => r.join(' '))
  return out
}

const [mode, file, codec, rows] = process.argv.slice(2)
const db = await DuckDBInstance.create(':memory:')
const c = await db.connect()
await c.run('SET threads = 1')  // rows read back in file order
if (mode === 'v2') {
  console.log(JSON.stringify(await writeV2(c, file, codec, Number(rows ?? 5000))))
  process.exit(0)
}
if (mode === 'write') {
  // i32 and i64 plain, f32 with 7 distinct values (dictionary pages), f64 plain; snappy.
  await c.run(`COPY (SELECT range::INTEGER AS i32, (range * 3 - 7000)::BIGINT AS i64,
                            (range % 7)::FLOAT AS f32, (range * 0.25)::DOUBLE AS f64
                     FROM range(5000)) TO ${quote(file)} (FORMAT parquet)`)
} else if (mode !== 'sums') {
  throw new Error(`mode ${mode}: sums, write or v2`)
}
console.log(JSON.stringify(await sums(c, file)))
