// Where the members of a JSON object's text are, without parsing their values: a scan that
// only tracks strings and nesting (indexOf finds each string's end natively). Reading a past
// version parses only the top-level members its entries touch (shared-base-replay.ts); a
// 1 MiB member nobody changed is copied into the answer as the text it already is.

/** One member of an object's text: `key` (its quoted form from `keyStart`), and its value at `text.slice(start, end)`. */
export interface MemberSpan {
  key: string
  keyStart: number
  start: number
  end: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_BRACE = 0x7b
const CLOSE_BRACE = 0x7d
const OPEN_BRACKET = 0x5b
const CLOSE_BRACKET = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

const isSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09

function skipSpace (text: string, i: number): number {
  while (i < text.length && isSpace(text.charCodeAt(i))) i++
  return i
}

/** The index after the string literal that opens at `i` (a quote). */
function stringEnd (text: string, i: number): number {
  for (let at = text.indexOf('"', i + 1); at !== -1; at = text.indexOf('"', at + 1)) {
    // Escaped when preceded by an odd number of backslashes.
    let slashes = 0
    while (text.charCodeAt(at - 1 - slashes) === BACKSLASH) slashes++
    if (slashes % 2 === 0) return at + 1
  }
  throw new SyntaxError('unterminated string in stored JSON')
}

/** The index after the JSON value that starts at `i` (no leading whitespace). */
export function valueEnd (text: string, i: number): number {
  const first = text.charCodeAt(i)
  if (first === QUOTE) return stringEnd(text, i)
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: up to the next delimiter.
    let at = i
    while (at < text.length) {
      const c = text.charCodeAt(at)
      if (c === COMMA || c === CLOSE_BRACE || c === CLOSE_BRACKET || isSpace(c)) break
      at++
    }
    return at
  }
  let depth = 0
  for (let at = i; at < text.length; at++) {
    const c = text.charCodeAt(at)
    if (c === QUOTE) at = stringEnd(text, at) - 1
    else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++
    else if ((c === CLOSE_BRACE || c === CLOSE_BRACKET) && --depth === 0) return at + 1
  }
  throw new SyntaxError('unterminated container in stored JSON')
}

/**
 * The members of the object whose text is `text` (valid JSON, as the store wrote it), in
 * order, located one at a time: a reader stops at the member it needs, and what follows is
 * copied as it is.
 */
export class MemberScanner {
  /** Where the next member's key starts, or -1 once every member was found. */
  private next: number
  /** The root's closing brace. */
  readonly close: number

  constructor (readonly text: string) {
    let i = skipSpace(text, 0)
    if (text.charCodeAt(i) !== OPEN_BRACE) throw new SyntaxError('stored content is not an object')
    i = skipSpace(text, i + 1)
    this.next = text.charCodeAt(i) === CLOSE_BRACE ? -1 : i
    this.close = text.lastIndexOf('}')
  }

  /** Where the first member not found yet starts; -1 when there is none. */
  get position (): number {
    return this.next
  }

  /** The next member, or undefined after the last. */
  scan (): MemberSpan | undefined {
    const { text } = this
    const keyStart = this.next
    if (keyStart === -1) return undefined
    let i = keyStart
    const keyEnd = stringEnd(text, i)
    const key = JSON.parse(text.slice(i, keyEnd)) as string
    i = skipSpace(text, keyEnd)
    if (text.charCodeAt(i) !== COLON) throw new SyntaxError('expected : in stored JSON')
    const start = skipSpace(text, i + 1)
    const end = valueEnd(text, start)
    i = skipSpace(text, end)
    const c = text.charCodeAt(i)
    if (c === CLOSE_BRACE) this.next = -1
    else if (c === COMMA) this.next = skipSpace(text, i + 1)
    else throw new SyntaxError('expected , or } in stored JSON')
    return { key, keyStart, start, end }
  }
}

/** The members of the object whose text is `text`, all of them, in order. */
export function memberSpans (text: string): MemberSpan[] {
  const scanner = new MemberScanner(text)
  const spans: MemberSpan[] = []
  for (let span = scanner.scan(); span; span = scanner.scan()) spans.push(span)
  return spans
}
