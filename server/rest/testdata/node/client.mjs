// Drives skade's REST catalog with iceberg-js, then reads tables with
// icebird. Usage: node client.mjs <rest base URL> <table>... where each
// table is namespace.name or namespace.name@ref; prints one JSON object: {created, tables:
// {name: rows}}. Local file paths in the metadata are served by a fetch
// that reads the file system (ranges included), as icebird fetches.
import { readFile } from 'node:fs/promises'
import { register } from 'node:module'
import { IcebergRestCatalog } from 'iceberg-js'

register('./loader.mjs', import.meta.url)
const { icebergRead } = await import('icebird')

const realFetch = globalThis.fetch
globalThis.fetch = async (input, init = {}) => {
  const url = String(input instanceof Request ? input.url : input)
  if (!url.startsWith('/') && !url.startsWith('file://')) return realFetch(input, init)
  const path = url.startsWith('file://') ? decodeURIComponent(new URL(url).pathname) : url
  const data = await readFile(path)
  const headers = new Headers(init.headers || {})
  if ((init.method || 'GET') === 'HEAD') {
    return new Response(null, { status: 200, headers: { 'content-length': String(data.length) } })
  }
  const range = headers.get('range')
  if (range) {
    const m = /bytes=(\d+)-(\d*)/.exec(range)
    const start = Number(m[1])
    const end = m[2] ? Number(m[2]) + 1 : data.length
    return new Response(data.subarray(start, end), { status: 206 })
  }
  return new Response(data, { status: 200, headers: { 'content-length': String(data.length) } })
}

const [base, ...tables] = process.argv.slice(2)
const catalog = new IcebergRestCatalog({ baseUrl: base, auth: { type: 'none' }, fetch: realFetch })
const out = { created: null, tables: {} }

// a namespace and a table made over REST by another client
await catalog.createNamespace({ namespace: ['fromjs'] }, { properties: { by: 'iceberg-js' } })
await catalog.createTable({ namespace: ['fromjs'] }, {
  name: 'events',
  schema: { type: 'struct', 'schema-id': 0, fields: [
    { id: 1, name: 'id', type: 'long', required: true },
    { id: 2, name: 'what', type: 'string', required: false },
  ] },
  properties: { 'write.format.default': 'parquet' },
})
const loaded = await catalog.loadTable({ namespace: ['fromjs'], name: 'events' })
out.created = { fields: loaded.schemas[0].fields.map(f => f.name), location: typeof loaded.location }

const norm = v => (typeof v === 'bigint' ? Number(v) : v)
for (const t of tables) {
  // ns.name@ref reads the branch or tag ref: icebird reads the current
  // snapshot, so it is pointed at the ref's
  const [qualified, ref] = t.split('@')
  const [ns, name] = qualified.split('.')
  const meta = await catalog.loadTable({ namespace: [ns], name })
  if (ref) {
    if (!meta.refs?.[ref]) throw new Error(`${qualified} has no ref ${ref}`)
    meta['current-snapshot-id'] = meta.refs[ref]['snapshot-id']
  }
  const rows = await icebergRead({ tableUrl: meta.location, metadata: meta })
  out.tables[t] = rows.map(r => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, norm(v)])))
}
process.stdout.write(JSON.stringify(out))
