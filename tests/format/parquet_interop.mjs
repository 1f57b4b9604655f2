// Independent parquet reader/writer for tests/format/parquet_interop_test.cc (hyparquet,
// hyparquet-compressors, hyparquet-writer from .tools/node_modules, installed by setup.sh).
//   node parquet_interop.mjs read <file>   -> JSON {num_rows, columns: {name: [hex of each value]}}
//   node parquet_interop.mjs write <file> [rows]  -> writes a file (2500 rows by default), prints
//                                                    the same JSON of what it wrote
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

const [mode, file] = process.argv.slice(2)
const result = mode === 'read' ? await read(file) : await write(file)
process.stdout.write(JSON.stringify(result))
