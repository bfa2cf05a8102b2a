// The `format`s a schema may use (docs/design.md §13b): ajv-formats' full set, checked on every
// write, each in time linear in the string, except the ones refused at PUT.
//
// Why each kept format is linear (test/schema/format-bounds.test.ts runs each against
// strings of about 1 MiB in the shapes that make its expression backtrack):
// - date, time, date-time, iso-time, iso-date-time, ipv4, ipv6, uuid, hostname: anchored
//   expressions whose repetitions are bounded ({1,4}, {0,61}, fixed digit counts) or a single
//   `\d+` followed by a fixed suffix; hostname's lookahead caps the length at 253 first.
// - duration, email, uri, uri-reference, uri-template, json-pointer,
//   json-pointer-uri-fragment, relative-json-pointer, byte: every repetition is delimited by a
//   character it cannot contain (".", "/", "@", a letter after digits, a group of four), so a
//   failed match backtracks each repetition once: O(n) steps in all. `regex` parses the string
//   as a regular expression once (V8's parser is linear) and never runs it.
// - int32, int64, float, double, password, binary: constant time.
//
// Refused, named in the 400: `url`. Its expression (dperini's) lets `\S+(?::\S*)?@` and the
// host's `(?:[a-z0-9…]+-)*…(?:\.…)*` try every split of the string: a 59 KiB string held the
// event loop for 3.6-6.2 s. `uri` checks the same strings (RFC 3986) in linear time.
import { formatNames, type FormatName } from 'ajv-formats/dist/formats.js'
import { eachSubschema, hasOwn } from './schema-refs.js'

/** Formats a schema may not name, with why and what to use instead. */
export const REFUSED_FORMATS: Readonly<Record<string, string>> = {
  url: 'its check takes time quadratic in the length of the string; use "uri"'
}

/** Every ajv-formats format but the refused ones: what compile.ts registers with Ajv. */
export const LINEAR_FORMATS: FormatName[] = formatNames.filter(name => !hasOwn(REFUSED_FORMATS, name))

/** The first refused format the schema names, with the reason; null when there is none. */
export function refusedFormat (root: unknown): string | null {
  let problem: string | null = null
  eachSubschema(root, '', (schema, pointer) => {
    const format = schema.format
    if (problem === null && typeof format === 'string' && hasOwn(REFUSED_FORMATS, format)) {
      problem = `format "${format}" (at "#${pointer}") is not supported: ${REFUSED_FORMATS[format]}`
    }
  })
  return problem
}
