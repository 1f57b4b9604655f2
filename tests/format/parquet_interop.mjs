// Independent parquet reader/writer for tests/format/parquet_interop_test.cc (hyparquet,
// hyparquet-compressors, hyparquet-writer from .tools/node_modules, installed by setup.sh).
//   node parquet_interop.mjs read <file>   -> JSON {num_rows, columns: {name: [hex of each value]}}
//   node parquet_interop.mjs write <file> [rows]  -> writes a file (2500 rows by default), prints
//                                                    the same JSON of what it wrote
//   node parquet_interop.mjs encodings <file> [rows] -> the same, of columns in each value
//                                                    encoding hyparquet-writer has (BOOLEAN RLE and
//                                                    PLAIN, DELTA_*, BYTE_STREAM_SPLIT)
// Each value is printed as the bytes a parquet PLAIN page stores for it (little-endian numbers,
// raw byte arrays), so the C++ side compares bytes, never floating-point text; null is "".
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'

const tools = process.env.DLIO_TOOLS_DIR
const require = createRequire(path.join(tools, 'node_modules', 'x.js'))
const load = (name) => import(require.resolve(name))

function hex(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')
}

// float -> IEEE half bits (exact for values that came from a half).
function halfBits(v) {
  const f = new Float32Array([v])
  const u = new Uint32Array(f.buffer)[0]
  const sign = (u >>> 16) & 0x8000
  const exp = ((u >>> 23) & 0xff) - 127 + 15
  const mant = u & 0x7fffff
  if (v === 0) return sign
  if (exp <= 0) return sign | ((mant | 0x800000) >>> (14 - exp))  // subnormal half
  return sign | (exp << 10) | (mant >>> 13)
}

function stored(el, v) {
  if (v === null || v === undefined) return ''
  const dv = (n) => new DataView(new ArrayBuffer(n))
  switch (el.type) {
    case 'INT32': { const d = dv(4); d.setUint32(0, Number(v) >>> 0, true); return hex(new Uint8Array(d.buffer)) }
    case 'INT64': { const d = dv(8); d.setBigUint64(0, BigInt.asUintN(64, BigInt(v)), true); return hex(new Uint8Array(d.buffer)) }
    case 'FLOAT': { const d = dv(4); d.setFloat32(0, v, true); return hex(new Uint8Array(d.buffer)) }
    case 'DOUBLE': { const d = dv(8); d.setFloat64(0, v, true); return hex(new Uint8Array(d.buffer)) }
    case 'FIXED_LEN_BYTE_ARRAY':
      if (el.logical_type?.type === 'FLOAT16') { const d = dv(2); d.setUint16(0, halfBits(v), true); return hex(new Uint8Array(d.buffer)) }
      return hex(v)
    case 'BOOLEAN':
      return v ? '01' : '00'
    case 'BYTE_ARRAY':
      return typeof v === 'string' ? Buffer.from(v, 'utf8').toString('hex') : hex(v)
    default:
      throw new Error(`type ${el.type} not handled`)
  }
}

async function read(file) {
  const { parquetMetadata, parquetReadObjects } = await load('hyparquet')
  const { compressors } = await load('hyparquet-compressors')
  const buf = readFileSync(file)
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength)
  const meta = parquetMetadata(ab)
  const out = { num_rows: Number(meta.num_rows), columns: {} }
  for (const el of meta.schema.slice(1)) {
    // Column by column, as a columnar reader reads a selection.
    const rows = await parquetReadObjects({ file: ab, compressors, columns: [el.name], utf8: false })
    out.columns[el.name] = rows.map((r) => stored(el, r[el.name]))
  }
  return out
}

async function write(file) {
  const { parquetWriteFile } = await load('hyparquet-writer')
  const n = Number(process.argv[4] ?? 2500)
  const i32 = [], i64 = [], f32 = [], f64 = [], s = [], b = [], opt = []
  for (let i = 0; i < n; i++) {
    i32.push((i * 7919) % 100003 - 50000)
    i64.push(BigInt(i) * 1000000007n - 5n)
    f32.push(Math.fround(i / 8))
    f64.push(i / 3)
    s.push(`key${i % 17}`)  // repeats: dictionary-encoded
    b.push(new Uint8Array([i & 255, (i >> 8) & 255, 7]))
    opt.push(i % 5 === 0 ? null : i)
  }
  const columnData = [
    { name: 'i32', data: i32, type: 'INT32', nullable: false },
    { name: 'i64', data: i64, type: 'INT64' },
    { name: 'f32', data: f32, type: 'FLOAT' },
    { name: 'f64', data: f64, type: 'DOUBLE' },
    { name: 's', data: s, type: 'STRING' },
    { name: 'b', data: b, type: 'BYTE_ARRAY' },
    { name: 'opt', data: opt, type: 'INT32' },
  ]
  parquetWriteFile({ filename: file, columnData, rowGroupSize: 1000 })
  const el = (t) => ({ type: t })
  const types = { i32: 'INT32', i64: 'INT64', f32: 'FLOAT', f64: 'DOUBLE', s: 'BYTE_ARRAY', b: 'BYTE_ARRAY', opt: 'INT32' }
  const out = { num_rows: n, columns: {} }
  for (const c of columnData) out.columns[c.name] = c.data.map((v) => stored(el(types[c.name]), v))
  return out
}

// One column per value encoding (names say which); 2 row groups; OPTIONAL ones with nulls.
async function encodings(file) {
  const { parquetWriteFile, schemaFromColumnData } = await load('hyparquet-writer')
  const n = Number(process.argv[4] ?? 3000)
  const cols = { b_rle: [], b_plain: [], ob_rle: [], s_dba: [], os_dba: [], s_dlba: [],
    i32_dbp: [], i64_dbp: [], i32_bss: [], i64_bss: [], f32_bss: [], fl_bss: [], b_dba: [] }
  for (let i = 0; i < n; i++) {
    cols.b_rle.push(i % 3 === 0 || (i >> 6) % 2 === 1)  // runs and scattered values
    cols.b_plain.push(i % 7 < 3)
    cols.ob_rle.push(i % 5 === 0 ? null : i % 2 === 0)
    cols.s_dba.push(`prefix/${String(Math.floor(i / 10)).padStart(5, '0')}/item${i % 10}`)
    cols.os_dba.push(i % 4 === 0 ? null : `k${(i * 37) % 101}`)
    cols.s_dlba.push('x'.repeat(i % 13) + String(i))
    cols.i32_dbp.push(((i * 7919) % 100003) - 50000)
    cols.i64_dbp.push(BigInt.asIntN(64, BigInt(i) * 0x9e3779b97f4a7c15n))  // full-width deltas
    cols.i32_bss.push((i * 2654435761) | 0)
    cols.i64_bss.push(BigInt(i) * -1000000007n)
    cols.f32_bss.push(Math.fround(Math.sin(i) * 1000))
    cols.fl_bss.push(new Uint8Array([i & 255, (i >> 8) & 255, 0x5a]))
    cols.b_dba.push(new Uint8Array([0x41, 0x42, i & 255, (i >> 3) & 255].slice(0, 2 + (i % 3))))
  }
  const types = { b_rle: 'BOOLEAN', b_plain: 'BOOLEAN', ob_rle: 'BOOLEAN', s_dba: 'STRING',
    os_dba: 'STRING', s_dlba: 'STRING', i32_dbp: 'INT32', i64_dbp: 'INT64', i32_bss: 'INT32',
    i64_bss: 'INT64', f32_bss: 'FLOAT', b_dba: 'BYTE_ARRAY' }
  const enc = (name) => ({ b_rle: 'RLE', ob_rle: 'RLE', b_plain: 'PLAIN', s_dlba: 'DELTA_LENGTH_BYTE_ARRAY' })[name] ??
    (name.endsWith('_dba') ? 'DELTA_BYTE_ARRAY' : name.endsWith('_dbp') ? 'DELTA_BINARY_PACKED' : 'BYTE_STREAM_SPLIT')
  const fixed = (name, len) => ({ name, type: 'FIXED_LEN_BYTE_ARRAY', type_length: len, repetition_type: 'REQUIRED' })
  const schemaOverrides = { fl_bss: fixed('fl_bss', 3) }
  const columnData = Object.keys(cols).map((name) => ({
    name, data: cols[name], encoding: enc(name),
    ...(types[name] ? { type: types[name], nullable: name.startsWith('o') } : {}),
  }))
  const schema = schemaFromColumnData({ columnData, schemaOverrides })
  columnData.forEach((c) => { delete c.type; delete c.nullable })  // the schema says them
  parquetWriteFile({ filename: file, columnData, schema, rowGroupSize: Math.ceil(n / 2) })
  const out = { num_rows: n, columns: {} }
  for (const [name, values] of Object.entries(cols)) {
    const t = { STRING: 'BYTE_ARRAY' }[types[name]] ?? types[name] ?? 'FIXED_LEN_BYTE_ARRAY'
    out.columns[name] = values.map((v) => stored({ type: t }, v))
  }
  return out
}

const [mode, file] = process.argv.slice(2)
const result = mode === 'read' ? await read(file) : mode === 'encodings' ? await encodings(file) : await write(file)
process.stdout.write(JSON.stringify(result))
