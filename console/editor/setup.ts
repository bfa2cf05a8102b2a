// The CodeMirror 6 editor behind the JSON tab and the Schema tab (docs/console.md, "Editors").
// Loaded only with import() from code-editor.tsx, so the first page does not fetch CodeMirror
// (some 15 packages, served from node_modules through the page's import map).
//
// What it adds to plain text: JSON highlighting, syntax errors marked at their place as you
// type, and the schema-aware help of schema-assist.ts (completion and hints), which needs to
// know the path of the place the cursor is at: read from the syntax tree here.
import { autocompletion, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete'
import { json, jsonParseLinter } from '@codemirror/lang-json'
import { bracketMatching, foldGutter, indentOnInput, syntaxTree } from '@codemirror/language'
import { forceLinting, linter, lintGutter, type Diagnostic } from '@codemirror/lint'
import { Compartment, EditorState, type Extension } from '@codemirror/state'
import { EditorView, lineNumbers } from '@codemirror/view'
import { minimalSetup } from 'codemirror'
import type { Json, JsonSchema } from '../../shared/client/index.js'
import { keySuggestions, schemaEditingSuggestions, schemaIssues, valueSuggestions, type PathStep, type Suggestion } from './schema-assist.js'

/** The syntax tree's node (only what is used here; @lezer/common's SyntaxNode has it). */
interface TreeNode {
  name: string
  from: number
  to: number
  parent: TreeNode | null
  firstChild: TreeNode | null
  nextSibling: TreeNode | null
  getChildren (type: string): TreeNode[]
}

export interface EditorOptions {
  /** Read from the element's own `aria-label`. */
  label: string
  text: string
  readOnly: boolean
  /** 'content': hints from `schema` (when there is one); 'schema': help writing a schema. */
  mode: 'content' | 'schema'
  schema: JsonSchema | null
  onChange: (text: string) => void
}

/** A refusal that names a place in the document: its path (JSON steps) and the message. */
export interface PlacedProblem { path: PathStep[], message: string }

export interface EditorHandle {
  setText (text: string): void
  setReadOnly (readOnly: boolean): void
  /** The schema the hints follow (it may arrive after the editor). */
  setSchema (schema: JsonSchema | null): void
  setInvalid (invalid: boolean, describedBy: string | undefined): void
  /** What the server refused, marked at its place in the text (an error there); null clears it. */
  setProblem (problem: PlacedProblem | null): void
  focus (): void
  destroy (): void
}

/** The page's style nonce (dashboard.ts puts it in <meta property="csp-nonce">): CodeMirror's <style> carries it. */
function styleNonce (): string {
  const meta = document.querySelector('meta[property="csp-nonce"]')
  return meta instanceof HTMLMetaElement ? meta.nonce ?? '' : ''
}

/** Text of a PropertyName or String node, unquoted. */
function stringValue (state: EditorState, node: TreeNode): string {
  const raw = state.sliceDoc(node.from, node.to)
  try {
    return JSON.parse(raw) as string
  } catch {
    return raw.replace(/^"|"$/g, '')
  }
}

/** The JSON path of the value `node` is in (or is), read up the tree. */
function pathOf (state: EditorState, node: TreeNode | null): PathStep[] {
  const path: PathStep[] = []
  let child: TreeNode | null = null
  for (let at = node; at; child = at, at = at.parent) {
    if (at.name === 'Property') {
      const name = at.getChildren('PropertyName')[0]
      // The name itself is not inside the member's value.
      if (name && child !== name) path.unshift(stringValue(state, name))
    } else if (at.name === 'Array' && child) {
      let index = 0
      for (let item = at.firstChild; item && item.from < child.from; item = item.nextSibling) {
        if (!['[', ']', ',', '⚠', 'LineComment', 'BlockComment'].includes(item.name)) index++
      }
      path.unshift(index)
    }
  }
  return path
}

/** Keys already in the object node. */
function keysOf (state: EditorState, object: TreeNode): string[] {
  return object.getChildren('Property').map(p => p.getChildren('PropertyName')[0]).filter((n): n is TreeNode => n !== undefined).map(n => stringValue(state, n))
}

const toCompletion = (s: Suggestion, type: string): Completion => ({ label: s.label, type, ...(s.detail ? { detail: s.detail } : {}), ...(s.info ? { info: s.info } : {}) })

/** Completion at the cursor: keys of the object it is in, or a value where the schema lists them. */
function completionSource (mode: EditorOptions['mode'], schema: () => JsonSchema | null) {
  return (context: CompletionContext): CompletionResult | null => {
    const state = context.state
    const node = syntaxTree(state).resolveInner(context.pos, -1) as unknown as TreeNode
    const word = context.matchBefore(/"?[\w$-]*/)
    const from = word ? word.from : context.pos
    if (!context.explicit && (!word || word.from === word.to)) return null
    // A key: in a property name, or in an object between members (on a brace, a comma, or
    // a half-typed name the parser marks as an error).
    let at: TreeNode | null = node
    while (at && !['Object', 'Array', 'Property', 'PropertyName'].includes(at.name)) at = at.parent
    const object = at?.name === 'PropertyName' ? at.parent?.parent ?? null : at?.name === 'Object' ? at : null
    if (object) {
      const path = pathOf(state, object)
      const present = keysOf(state, object)
      const suggestions = mode === 'schema' ? schemaEditingSuggestions(path, 'key', present) : schemaOrNone(schema(), s => keySuggestions(s, path, present))
      if (suggestions.length === 0) return null
      return { from, options: suggestions.map(s => ({ ...toCompletion(s, 'property'), apply: JSON.stringify(s.label) })), validFor: /^"?[\w$-]*$/ }
    }
    // A value: where the schema lists the values it takes.
    const path = pathOf(state, node)
    const suggestions = mode === 'schema' ? schemaEditingSuggestions(path, 'value', []) : schemaOrNone(schema(), s => valueSuggestions(s, path))
    if (suggestions.length === 0) return null
    return { from, options: suggestions.map(s => toCompletion(s, 'constant')), validFor: /^"?[\w$-]*$/ }
  }
}

function schemaOrNone<T> (schema: JsonSchema | null, f: (schema: JsonSchema) => T[]): T[] {
  return schema === null ? [] : f(schema)
}

/** Where a path's value is in the text: its node, or its property's name for a member. */
function placeOf (state: EditorState, path: PathStep[]): { from: number, to: number } {
  let node = (syntaxTree(state).topNode as unknown as TreeNode).firstChild
  let place = node ? { from: node.from, to: node.to } : { from: 0, to: 0 }
  for (const step of path) {
    if (!node) break
    let next: TreeNode | null = null
    if (typeof step === 'string' && node.name === 'Object') {
      const property = node.getChildren('Property').find(p => { const name = p.getChildren('PropertyName')[0]; return name !== undefined && stringValue(state, name) === step })
      const name = property?.getChildren('PropertyName')[0]
      if (property && name) {
        place = { from: name.from, to: name.to }
        // The ":" between name and value is a node of its own (@lezer/json names its punctuation).
        next = name.nextSibling
        while (next && next.name === ':') next = next.nextSibling
      }
    } else if (typeof step === 'number' && node.name === 'Array') {
      let index = 0
      for (let item = node.firstChild; item; item = item.nextSibling) {
        if (['[', ']', ','].includes(item.name)) continue
        if (index++ === step) { next = item; place = { from: item.from, to: item.to }; break }
      }
    }
    if (!next) break
    node = next
  }
  return place
}

/** Hints from the schema's simple keywords, as warnings (the server decides; these say early). */
function schemaLinter (schema: () => JsonSchema | null) {
  return (view: EditorView): Diagnostic[] => {
    const current = schema()
    if (current === null) return []
    let value: Json
    try {
      value = JSON.parse(view.state.doc.toString()) as Json
    } catch {
      return [] // jsonParseLinter says where
    }
    return schemaIssues(current, value).map(issue => ({ ...placeOf(view.state, issue.path), severity: 'warning', source: 'schema', message: `${issue.path.join('.') || '(the whole content)'}: ${issue.message}` }))
  }
}

const theme = EditorView.theme({
  '&': { fontSize: '.86rem', border: '1px solid var(--border, #ccc)', borderRadius: '6px', background: 'var(--field, transparent)' },
  '&.cm-focused': { outline: '2px solid var(--accent, #4b6bfb)', outlineOffset: '1px' },
  '.cm-scroller': { fontFamily: 'var(--mono, ui-monospace, monospace)', lineHeight: '1.45', minHeight: '16rem', maxHeight: '70vh' },
  '.cm-gutters': { background: 'transparent', borderRight: '1px solid var(--border, #ddd)' },
  // Brackets marked by an outline, not a background: text typed over a marked bracket made
  // Chrome carry its background into an inline style, which the page's CSP refuses (a console error).
  '&.cm-focused .cm-matchingBracket': { backgroundColor: 'transparent', outline: '1px solid var(--accent, #4b6bfb)', borderRadius: '2px' },
  '&.cm-focused .cm-nonmatchingBracket': { backgroundColor: 'transparent', outline: '1px solid var(--bad, #c0392b)', borderRadius: '2px' }
})

/** Mounts an editor into `parent`. */
export function createEditor (parent: HTMLElement, options: EditorOptions): EditorHandle {
  const attributes = new Compartment()
  const editable = new Compartment()
  let currentSchema = options.schema
  let problem: PlacedProblem | null = null
  const schema = () => currentSchema
  // tabindex: a read-only editor is not contenteditable, so without it a keyboard could not
  // reach (and scroll) a long text; axe's scrollable-region-focusable counts only tabbable content.
  const attrs = (extra: Record<string, string>) => EditorView.contentAttributes.of({ 'aria-label': options.label, tabindex: '0', ...extra })
  const readOnlyExtensions = (readOnly: boolean): Extension => [EditorState.readOnly.of(readOnly), EditorView.editable.of(!readOnly)]
  let quiet = false
  const view = new EditorView({
    parent,
    state: EditorState.create({
      doc: options.text,
      extensions: [
        EditorView.cspNonce.of(styleNonce()),
        minimalSetup,
        lineNumbers(),
        foldGutter(),
        bracketMatching(),
        indentOnInput(),
        json(),
        linter(jsonParseLinter(), { delay: 300 }),
        linter(schemaLinter(schema), { delay: 500 }),
        // The server's refusal, where it names a place (the Rules tab's INVALID_RULES): shown until the text changes.
        linter(view => problem ? [{ ...placeOf(view.state, problem.path), severity: 'error', source: 'server', message: problem.message }] : [], { delay: 0 }),
        lintGutter(),
        autocompletion({ override: [completionSource(options.mode, schema)] }),
        EditorState.tabSize.of(2),
        theme,
        attributes.of(attrs({})),
        editable.of(readOnlyExtensions(options.readOnly)),
        EditorView.updateListener.of(update => { if (update.docChanged && !quiet) options.onChange(update.state.doc.toString()) })
      ]
    })
  })
  return {
    setText (text) {
      if (text === view.state.doc.toString()) return
      quiet = true
      try {
        view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } })
      } finally {
        quiet = false
      }
    },
    setReadOnly (readOnly) { view.dispatch({ effects: editable.reconfigure(readOnlyExtensions(readOnly)) }) },
    setInvalid (invalid, describedBy) {
      view.dispatch({ effects: attributes.reconfigure(attrs({ ...(invalid ? { 'aria-invalid': 'true' } : {}), ...(describedBy ? { 'aria-describedby': describedBy } : {}) })) })
    },
    setProblem (next) {
      if (next === problem) return
      problem = next
      forceLinting(view)
    },
    setSchema (next) {
      if (next === currentSchema) return
      currentSchema = next
      forceLinting(view)
    },
    focus () { view.focus() },
    destroy () { view.destroy() }
  }
}
