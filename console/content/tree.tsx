// The content as a tree of nodes that updates live and edits in place. Each node re-renders
// only when its value or the revision of its path changed (live-document.ts), so a stream
// of changes touches just the nodes on the changed paths; closed containers render nothing
// below them, and open ones show their children a page at a time.
import { Component, createContext } from 'preact'
import { useCallback, useContext, useEffect, useRef, useState } from 'preact/hooks'
import type { Json } from '../../shared/client/index.js'
import { TrashIcon } from '../icons.js'
import { ActionError, ConflictNote, useAction } from './conflict.js'
import { AddForm, ValueEditor, type Addition } from './editors.js'
import { childPath, type Edit } from './edits.js'
import type { LiveDocument } from './live-document.js'
import { PAGE_SIZE, type OpenState, type RowRegistry } from './tree-state.js'

export interface TreeContextValue {
  doc: LiveDocument
  canWrite: boolean
  open: OpenState
  rows: RowRegistry
  /** Re-renders every node (after collapse all, expand all, reveal). */
  relayout (): void
  /** Watches a path live (path-watch.tsx); without it, rows offer no menu (a past version's tree). */
  watch?: (path: string) => void
}

export const TreeContext = createContext<TreeContextValue | null>(null)

function useTree (): TreeContextValue {
  const tree = useContext(TreeContext)
  if (!tree) throw new Error('tree node outside a TreeContext')
  return tree
}

export interface NodeProps {
  /** The key, or the index in an array. */
  name: string
  /** How many children the parent has (big lists start closed). */
  parentSize: number
  path: string
  value: Json
  depth: number
  inArray: boolean
  /** The path's revision and the document's epoch (live-document.ts). */
  rev: number
  epoch: number
  /** Bumped by collapse all, expand all and reveal. */
  layout: number
}

/** The render boundary: skips nodes whose value and revision did not change. */
export class TreeNode extends Component<NodeProps> {
  override shouldComponentUpdate (next: NodeProps): boolean {
    const p = this.props
    return p.value !== next.value || p.rev !== next.rev || p.epoch !== next.epoch || p.layout !== next.layout ||
      p.path !== next.path || p.name !== next.name || p.depth !== next.depth || p.parentSize !== next.parentSize
  }

  override render () {
    return <NodeView {...this.props} />
  }
}

/** Children of a container, as TreeNodes, the first `count` of them. */
export function Children ({ path, value, depth, count, layout }: { path: string, value: Json[] | { [key: string]: Json }, depth: number, count: number, layout: number }) {
  const { doc } = useTree()
  const isArray = Array.isArray(value)
  const keys = isArray ? null : Object.keys(value)
  const size = isArray ? value.length : (keys as string[]).length
  const nodes = []
  for (let i = 0; i < Math.min(count, size); i++) {
    const key = isArray ? String(i) : (keys as string[])[i] as string
    const child = childPath(path, key)
    const childValue = isArray ? value[i] as Json : (value as { [key: string]: Json })[key] as Json
    nodes.push(<TreeNode key={key} name={key} parentSize={size} path={child} value={childValue} depth={depth + 1} inArray={isArray} rev={doc.revisions.of(child)} epoch={doc.revisions.epoch} layout={layout} />)
  }
  return <>{nodes}</>
}

function sizeOf (value: Json[] | { [key: string]: Json }): number {
  return Array.isArray(value) ? value.length : Object.keys(value).length
}

/** How a scalar shows: strings quoted, long ones cut. */
function shown (value: Json): string {
  const text = JSON.stringify(value)
  return text.length > 300 ? `${text.slice(0, 299)}…` : text
}

function NodeView ({ name, path, value, depth, inArray, layout, parentSize }: NodeProps) {
  const tree = useTree()
  const { doc, canWrite, open: openState, rows } = tree
  const action = useAction(doc)
  const [mode, setMode] = useState<'view' | 'edit' | 'add' | 'confirm-delete'>('view')
  const [menuOpen, setMenuOpen] = useState(false)
  const menuButton = useRef<HTMLButtonElement>(null)
  const [, rerender] = useState(0)
  const [pages, setPages] = useState(1)
  /** The version and value when the user started editing: what If-Match and a conflict refer to. */
  const base = useRef<{ version: number, value: Json }>({ version: 0, value: null })
  const valueButton = useRef<HTMLButtonElement>(null)
  const rowRef = useCallback((element: HTMLDivElement | null) => rows.attach(path, element), [rows, path])

  const isContainer = value !== null && typeof value === 'object'
  const size = isContainer ? sizeOf(value) : 0
  const open = isContainer && openState.isOpen(path, depth, size, parentSize)

  const begin = (next: 'edit' | 'add' | 'confirm-delete') => {
    base.current = { version: doc.version ?? 0, value }
    action.clear()
    setMode(next)
  }
  const finish = () => {
    setMode('view')
    action.clear()
    queueMicrotask(() => valueButton.current?.focus())
  }
  const send = async (edit: Edit, before: Json | undefined = base.current.value) => {
    if (await action.run(edit, base.current.version, before)) finish()
  }
  const step = (op: 'increment' | 'decrement') => {
    base.current = { version: doc.version ?? 0, value }
    void action.run({ op, path, by: 1 }, base.current.version, value)
  }
  const remove = () => {
    if (mode !== 'confirm-delete') {
      // Deleting a container with something in it asks first.
      if (isContainer && size > 0) { begin('confirm-delete'); return }
      base.current = { version: doc.version ?? 0, value }
    }
    void send({ op: 'delete', path })
  }
  const add = (addition: Addition) => {
    if (addition.kind === 'key') void send({ op: 'set', path: childPath(path, addition.key), value: addition.value }, undefined)
    else if (addition.kind === 'push') void send({ op: 'push', path, value: addition.value })
    else void send({ op: 'insert', path, index: addition.index, value: addition.value })
  }
  const toggle = () => {
    openState.set(path, !open)
    rerender(n => n + 1)
  }

  // Enough pages to include a node a search is revealing.
  let count = pages * PAGE_SIZE
  const revealed = open ? openState.revealedChild(path) : null
  if (revealed !== null && isContainer) {
    const position = Array.isArray(value) ? Number(revealed) : Object.keys(value).indexOf(revealed)
    count = Math.max(count, (Math.floor(position / PAGE_SIZE) + 1) * PAGE_SIZE)
  }

  const closeMenu = (refocus: boolean) => {
    setMenuOpen(false)
    if (refocus) queueMicrotask(() => menuButton.current?.focus())
  }
  // The row's context menu: right click, the context-menu key or Shift+F10 on the row, or its ⋯ button.
  const openMenu = (event: MouseEvent) => {
    if (!tree.watch || mode === 'edit') return
    event.preventDefault()
    setMenuOpen(true)
  }

  const kind = value === null ? 'null' : Array.isArray(value) ? 'array' : typeof value
  const writing = canWrite && mode !== 'edit'
  return (
    <li class={`node node-${kind}`}>
      <div class="row" ref={rowRef} data-path={path} onContextMenu={openMenu}>
        {isContainer
          ? (
            <button type="button" class="toggle" aria-expanded={open} onClick={toggle}>
              <span class="caret" aria-hidden="true" />
              <span class={inArray ? 'index' : 'key'}>{name}</span>
            </button>
            )
          : <span class={inArray ? 'index leaf-key' : 'key leaf-key'}>{name}</span>}
        <span class="colon" aria-hidden="true">:</span>
        {isContainer && (
          <span class="summary">{Array.isArray(value) ? `[ ${size} item${size === 1 ? '' : 's'} ]` : `{ ${size} key${size === 1 ? '' : 's'} }`}</span>
        )}
        {!isContainer && mode !== 'edit' && (canWrite
          ? (
            <button type="button" ref={valueButton} class={`value v-${kind}`} data-path={path} onClick={() => begin('edit')} title={typeof value === 'string' && value.length > 60 ? value : undefined}>
              <span class="visually-hidden">Edit {path}, now </span><span class="shown">{shown(value)}</span>
            </button>
            )
          : <span class={`value v-${kind}`} data-path={path}><span class="shown">{shown(value)}</span></span>)}
        {mode === 'edit' && <ValueEditor path={path} value={value} busy={action.busy} onSave={v => send({ op: 'set', path, value: v })} onCancel={finish} />}
        {(writing || (tree.watch && mode !== 'edit')) && (
          <span class="row-actions">
            {writing && typeof value === 'number' && (
              <>
                <button type="button" class="icon-button" aria-label={`Decrease ${path} by 1`} title="Decrement by 1" disabled={action.busy} onClick={() => step('decrement')}>−</button>
                <button type="button" class="icon-button" aria-label={`Increase ${path} by 1`} title="Increment by 1" disabled={action.busy} onClick={() => step('increment')}>+</button>
              </>
            )}
            {writing && isContainer && (
              <button type="button" class="text-button" aria-label={Array.isArray(value) ? `Add an item to ${path}` : `Add a key to ${path}`} onClick={() => begin('add')}>
                + {Array.isArray(value) ? 'item' : 'key'}
              </button>
            )}
            {writing && (
              <button type="button" class="icon-button danger-icon" aria-label={`Delete ${path}`} title="Delete" disabled={action.busy} onClick={remove}>
                <TrashIcon />
              </button>
            )}
            {tree.watch && (
              <span class="row-menu-anchor">
                <button type="button" ref={menuButton} class="icon-button" aria-label={`More actions for ${path}`} title="More actions" aria-haspopup="menu" aria-expanded={menuOpen}
                  onClick={() => setMenuOpen(open => !open)}>⋯</button>
                {menuOpen && <RowMenu path={path} onClose={closeMenu} onWatch={() => { closeMenu(false); tree.watch?.(path) }} />}
              </span>
            )}
          </span>
        )}
      </div>
      {mode === 'confirm-delete' && (
        <ConfirmDelete path={path} what={`the ${size} ${Array.isArray(value) ? 'items' : 'keys'} in it`} busy={action.busy} onConfirm={remove} onCancel={finish} />
      )}
      {mode === 'add' && isContainer && <AddForm path={path} container={value} busy={action.busy} onAdd={add} onCancel={finish} />}
      <ActionError action={action} doc={doc} />
      {action.conflict && <ConflictNote doc={doc} conflict={action.conflict} busy={action.busy} onRetry={async () => { if (await action.retry()) finish() }} onDiscard={finish} />}
      {open && size > 0 && (
        <ul class="children">
          <Children path={path} value={value} depth={depth} count={count} layout={layout} />
          {size > count && (
            <li class="more">
              <button type="button" class="text-button" onClick={() => setPages(p => p + 1)}>
                Show {Math.min(PAGE_SIZE, size - count)} more of {path} ({size - count} not shown)
              </button>
            </li>
          )}
        </ul>
      )}
      {open && size === 0 && <p class="empty-container">{Array.isArray(value) ? 'Empty array' : 'Empty object'}</p>}
    </li>
  )
}

/**
 * The row's menu (WAI-ARIA menu button pattern): opens with the focus on its first item;
 * arrows move between items, Escape closes it and gives the focus back to its button, and
 * it closes when the focus leaves it.
 */
function RowMenu ({ path, onClose, onWatch }: { path: string, onClose: (refocus: boolean) => void, onWatch: () => void }) {
  const menu = useRef<HTMLDivElement>(null)
  useEffect(() => { menu.current?.querySelector<HTMLElement>('[role="menuitem"]')?.focus() }, [])
  const items = (): HTMLElement[] => menu.current ? Array.from(menu.current.querySelectorAll<HTMLElement>('[role="menuitem"]')) : []
  const onKeyDown = (event: KeyboardEvent) => {
    const all = items()
    const at = all.indexOf(document.activeElement as HTMLElement)
    if (event.key === 'Escape') { event.preventDefault(); event.stopPropagation(); onClose(true) } else if (event.key === 'ArrowDown' || event.key === 'ArrowUp') {
      event.preventDefault()
      all[(at + (event.key === 'ArrowDown' ? 1 : all.length - 1)) % all.length]?.focus()
    } else if (event.key === 'Tab') onClose(false)
  }
  const onFocusOut = (event: FocusEvent) => {
    // To the menu's own button: its click toggles the menu (closing it here would reopen it).
    const anchor = menu.current?.parentElement
    if (!anchor?.contains(event.relatedTarget as Node | null)) onClose(false)
  }
  return (
    <div class="row-menu" role="menu" aria-label={`Actions for ${path}`} ref={menu} onKeyDown={onKeyDown} onFocusOut={onFocusOut}>
      <button type="button" role="menuitem" tabIndex={-1} onClick={onWatch}>Watch this path</button>
    </div>
  )
}

function ConfirmDelete ({ path, what, busy, onConfirm, onCancel }: { path: string, what: string, busy: boolean, onConfirm: () => void, onCancel: () => void }) {
  const confirm = useRef<HTMLButtonElement>(null)
  useEffect(() => confirm.current?.focus(), [])
  return (
    <div class="confirm-row" role="group" aria-label={`Delete ${path}?`} onKeyDown={e => { if (e.key === 'Escape') onCancel() }}>
      <span>Delete <code>{path}</code> and {what}?</span>
      <button type="button" ref={confirm} class="button danger small" disabled={busy} onClick={onConfirm}>Delete</button>
      <button type="button" class="button ghost small" onClick={onCancel}>Cancel</button>
    </div>
  )
}
