// gunzip for icebird's Avro reader (see loader.mjs): Avro's deflate codec
// is raw deflate.
import { inflateRawSync } from 'node:zlib'

export function gunzip(data) {
  return new Uint8Array(inflateRawSync(data))
}
