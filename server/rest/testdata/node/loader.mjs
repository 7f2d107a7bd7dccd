// A module resolve hook for client.mjs: icebird 0.3.1's Avro reader
// inflates manifests with hyparquet-compressors' gunzip, which fails
// ("offset is out of bounds") on the empty stored block that Go's
// compress/flate ends every deflate stream with (iceberg-go writes
// manifests so). The reader gets node:zlib's raw inflate instead;
// everything else icebird reads (metadata, Parquet, deletes) is its own.
export async function resolve(specifier, context, next) {
  if (specifier === 'hyparquet-compressors' && context.parentURL?.includes('/icebird/src/avro/')) {
    return { url: new URL('./inflate-shim.mjs', import.meta.url).href, shortCircuit: true }
  }
  return next(specifier, context)
}
