// The live dashboard: plain ES modules, no build step. It uses only the public HTTP API and
// the Socket.IO protocol (docs/design.md §6-§7), and replays change events with the server's own
// operation code (served from /shared/), so what it shows is exactly the stored content.
import { io } from '/socket.io/socket.io.esm.min.js'
import { EVENTS, operationOfChange } from '/shared/events.js'
import { PresenceRoster } from '/shared/presence.js'
import { applyContentOperation } from '/shared/compound.js'

/** @typedef {import('../shared/events.js').ChangeEvent} ChangeEvent */
/** @typedef {import('../shared/events.js').SubscribeAck} SubscribeAck */
/** @typedef {import('../shared/events.js').RevokedEvent} RevokedEvent */
/** @typedef {import('../shared/presence.js').PresenceEvent} PresenceEvent */
/** @typedef {import('../shared/presence.js').PresenceMember} PresenceMember */

const $ = (id) => /** @type {HTMLElement} */ (document.getElementById(id))
const HIGHLIGHT_MS = 1500
const TOKEN_KEY = 'contentd.token'
const USER_KEY = 'contentd.username'

const state = {
  token: sessionStorage.getItem(TOKEN_KEY),
  username: sessionStorage.getItem(USER_KEY),
  /** @type {import('socket.io-client').Socket | null} */
  socket: null,
  /** The open project: its reference, version and content as last known. */
  project: /** @type {{ ref: string, version: number, content: object } | null} */ (null),
  /** Paths of containers the user collapsed, kept across re-renders. */
  collapsed: new Set(),
  /** The path selected in the tree (shown to the project's other viewers), or null. */
  selected: /** @type {string | null} */ (null),
  /** Who else has the open project open (docs/realtime.md#presence). */
  viewers: new PresenceRoster()
}

// ---- HTTP ---------------------------------------------------------------------------

async function api (method, path, body) {
  const headers = { accept: 'application/json' }
  if (state.token) headers.authorization = `Bearer ${state.token}`
  if (body !== undefined) headers['content-type'] = 'application/json'
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) })
  const text = await response.text()
  const data = text ? JSON.parse(text) : null
  if (!response.ok) throw Object.assign(new Error(data?.message ?? response.statusText), { code: data?.code, status: response.status })
  return data
}

function say (message, isError = false) {
  const status = $('status')
  status.textContent = message
  status.classList.toggle('error', isError)
}

// ---- signing in and out -------------------------------------------------------------

$('auth-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const submitter = /** @type {SubmitEvent} */ (event).submitter
  const action = submitter?.getAttribute('value') === 'signup' ? 'signup' : 'login'
  const username = /** @type {HTMLInputElement} */ ($('auth-username')).value.trim()
  const password = /** @type {HTMLInputElement} */ ($('auth-password')).value
  try {
    const grant = await api('POST', `/api/auth/${action}`, { username, password })
    state.token = grant.token
    state.username = grant.username
    sessionStorage.setItem(TOKEN_KEY, grant.token)
    sessionStorage.setItem(USER_KEY, grant.username)
    const passwordInput = /** @type {HTMLInputElement} */ ($('auth-password'))
    passwordInput.value = ''
    say(action === 'signup' ? `Welcome, ${grant.username}.` : `Signed in as ${grant.username}.`)
    await enterWorkspace()
  } catch (e) {
    say(e.message, true)
  }
})

$('sign-out').addEventListener('click', async () => {
  try { await api('POST', '/api/auth/logout') } catch { /* the session may already be gone */ }
  leaveWorkspace('Signed out.')
})

function leaveWorkspace (message) {
  state.socket?.disconnect()
  state.socket = null
  state.token = null
  state.username = null
  state.project = null
  sessionStorage.removeItem(TOKEN_KEY)
  sessionStorage.removeItem(USER_KEY)
  $('workspace').hidden = true
  $('account').hidden = true
  $('auth-panel').hidden = false
  setConnection('offline', 'Not connected')
  say(message)
  $('auth-username').focus()
}

async function enterWorkspace () {
  $('auth-panel').hidden = true
  $('workspace').hidden = false
  $('account').hidden = false
  $('whoami').textContent = state.username ?? ''
  connectSocket()
  await Promise.all([loadProjects(), loadKeys()])
}

// ---- projects -----------------------------------------------------------------------

/** Every item of a paginated list (docs/api.md#pages), page after page. */
async function everyPage (path, field) {
  const items = []
  let cursor = null
  do {
    const page = await api('GET', cursor ? `${path}?cursor=${encodeURIComponent(cursor)}` : path)
    items.push(...page[field])
    cursor = page.nextCursor ?? null
  } while (cursor !== null)
  return items
}

async function loadProjects () {
  const projects = await everyPage('/api/projects', 'projects')
  const list = $('project-list')
  list.replaceChildren()
  if (projects.length === 0) list.append(item('No projects yet.'))
  for (const p of projects) {
    const ref = `${p.username}/${p.slug}`
    const button = document.createElement('button')
    button.type = 'button'
    button.className = 'link'
    button.textContent = ref
    button.dataset.project = ref
    if (state.project?.ref === ref) button.setAttribute('aria-current', 'true')
    button.addEventListener('click', () => openProject(ref))
    const li = item('')
    li.append(button, ` ${p.role ?? ''}`)
    list.append(li)
  }
}

$('project-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const slug = /** @type {HTMLInputElement} */ ($('project-slug')).value.trim()
  const name = /** @type {HTMLInputElement} */ ($('project-name')).value.trim()
  try {
    const project = await api('POST', '/api/projects', name ? { slug, name } : { slug })
    const form = /** @type {HTMLFormElement} */ (event.target)
    form.reset()
    say(`Project ${project.username}/${project.slug} created.`)
    await loadProjects()
    await openProject(`${project.username}/${project.slug}`)
  } catch (e) {
    say(e.message, true)
  }
})

// ---- realtime -----------------------------------------------------------------------

function setConnection (kind, text) {
  $('connection').dataset.state = kind
  $('connection-text').textContent = text
}

function connectSocket () {
  state.socket?.disconnect()
  setConnection('connecting', 'Connecting…')
  const socket = io({ auth: { token: state.token }, transports: ['websocket', 'polling'] })
  state.socket = socket
  socket.on('connect', () => {
    setConnection('online', 'Live')
    // After a reconnect the server has forgotten our subscription: take it again.
    if (state.project) void subscribe(state.project.ref)
  })
  socket.on('disconnect', (reason) => {
    setConnection('offline', reason === 'io client disconnect' ? 'Not connected' : 'Disconnected, retrying…')
    clearViewers()
  })
  socket.on('connect_error', (error) => {
    const data = /** @type {any} */ (error).data
    if (data?.code === 'INVALID_TOKEN' || data?.code === 'AUTH_REQUIRED') { leaveWorkspace('Your session ended; please sign in again.'); return }
    setConnection('offline', data?.message ?? 'Cannot connect, retrying…')
  })
  socket.on(EVENTS.change, (/** @type {ChangeEvent} */ change) => onChange(change))
  socket.on(EVENTS.presence, (/** @type {PresenceEvent} */ event) => {
    if (event.project === state.project?.ref && state.viewers.receive(event)) renderViewers()
  })
  socket.on(EVENTS.revoked, (/** @type {RevokedEvent} */ event) => {
    if (!event.project) { leaveWorkspace(`Access ended: ${event.message}`); return }
    if (state.project?.ref === event.project) closeProject(`Access to ${event.project} ended: ${event.message}`)
  })
}

/** @returns {Promise<void>} */
async function subscribe (ref) {
  const socket = state.socket
  if (!socket) return
  /** @type {SubscribeAck} */
  const ack = await socket.timeout(10_000).emitWithAck(EVENTS.subscribe, { project: ref }).catch(() => ({ ok: false, message: 'No answer from the server' }))
  if (!ack.ok) { say(ack.message, true); return }
  if (state.project?.ref !== ref && state.project?.ref !== ack.project) return
  state.project = { ref: ack.project, version: ack.version, content: ack.content }
  renderContent()
  await joinPresence(socket, ack.project)
}

// ---- presence: who else is viewing, and which path each has selected ---------------------

/** Shows this tab to the project's other viewers and lists them (events meanwhile are replayed over the list). */
async function joinPresence (socket, ref) {
  state.viewers.listing()
  socket.emit(EVENTS.presenceSet, { project: ref, state: presenceState() })
  const ack = await socket.timeout(10_000).emitWithAck(EVENTS.presenceList, { project: ref }).catch(() => ({ ok: false }))
  if (state.socket !== socket || state.project?.ref !== ref) return
  state.viewers.listed(ack.ok ? ack.members : [])
  renderViewers()
}

function presenceState () {
  return state.selected === null ? {} : { path: state.selected }
}

/** Selects a path in the tree (or unselects it) and tells the other viewers. */
function select (path) {
  state.selected = state.selected === path ? null : path
  markSelection()
  if (state.project) state.socket?.emit(EVENTS.presenceSet, { project: state.project.ref, state: presenceState() })
}

function clearViewers () {
  state.viewers.clear()
  renderViewers()
}

function viewerName (/** @type {PresenceMember} */ member) {
  const name = member.actor.type === 'key' ? `key ${member.actor.name}` : member.actor.name
  return member.id === state.socket?.id ? `${name} (you)` : name
}

function renderViewers () {
  const members = state.project ? state.viewers.members : []
  $('viewers').hidden = members.length === 0
  const list = $('viewer-list')
  list.replaceChildren()
  for (const member of members) {
    const path = typeof member.state.path === 'string' ? member.state.path : null
    const li = item(path === null ? viewerName(member) : `${viewerName(member)} · ${path || 'content'}`)
    li.className = 'viewer'
    li.dataset.viewer = member.id
    list.append(li)
  }
  markWatched()
}

/** Marks in the tree the paths the other viewers have selected, with who selected each. */
function markWatched () {
  for (const marked of document.querySelectorAll('#tree .watched')) {
    marked.classList.remove('watched')
    marked.removeAttribute('title')
  }
  const byPath = new Map()
  for (const member of state.viewers.members) {
    if (member.id === state.socket?.id || typeof member.state.path !== 'string') continue
    byPath.set(member.state.path, [...(byPath.get(member.state.path) ?? []), viewerName(member)])
  }
  for (const [path, names] of byPath) {
    const target = pathElement(path)
    if (!target) continue
    target.classList.add('watched')
    target.title = `Selected by ${names.join(', ')}`
  }
}

function markSelection () {
  for (const marked of document.querySelectorAll('#tree .selected')) marked.classList.remove('selected')
  if (state.selected !== null) pathElement(state.selected)?.classList.add('selected')
}

/** The row (a leaf) or the summary (an object or array) showing a path. */
function pathElement (path) {
  const found = document.querySelector(`#tree [data-path="${CSS.escape(path)}"]`)
  return found?.tagName === 'DETAILS' ? found.querySelector('summary') : found
}

async function openProject (ref) {
  if (state.project && state.project.ref !== ref) state.socket?.emit(EVENTS.unsubscribe, { project: state.project.ref })
  state.project = { ref, version: -1, content: {} }
  state.collapsed.clear()
  state.selected = null
  clearViewers()
  $('content-title').textContent = ref
  $('content-meta').textContent = 'Loading…'
  $('tree').replaceChildren()
  for (const b of document.querySelectorAll('#project-list button')) {
    if (/** @type {HTMLElement} */ (b).dataset.project === ref) b.setAttribute('aria-current', 'true')
    else b.removeAttribute('aria-current')
  }
  await subscribe(ref)
}

function closeProject (message) {
  state.project = null
  state.selected = null
  clearViewers()
  $('content-title').textContent = 'Content'
  $('content-meta').textContent = 'Open a project to see its content live.'
  $('tree').replaceChildren()
  say(message, true)
  void loadProjects()
}

/** @param {ChangeEvent} change */
function onChange (change) {
  const project = state.project
  if (!project || change.project !== project.ref || change.version <= project.version) return
  if (change.version !== project.version + 1) {
    // A gap: something was missed (the protocol's rule is to re-subscribe).
    void subscribe(project.ref)
    return
  }
  try {
    project.content = applyContentOperation(project.content, operationOfChange(change))
    project.version = change.version
  } catch {
    void subscribe(project.ref)
    return
  }
  renderContent(change.path ?? '')
}

// ---- the JSON tree ------------------------------------------------------------------

function renderContent (changedPath) {
  const project = state.project
  if (!project) return
  $('content-meta').textContent = `Version ${project.version}`
  const tree = $('tree')
  tree.replaceChildren(renderValue(null, project.content, ''))
  markSelection()
  markWatched()
  if (changedPath !== undefined) highlight(changedPath)
}

function renderValue (key, value, path) {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v]) : Object.entries(value)
    const details = document.createElement('details')
    details.open = !state.collapsed.has(path)
    details.dataset.path = path
    details.addEventListener('toggle', () => {
      if (details.open) state.collapsed.delete(path)
      else state.collapsed.add(path)
    })
    const summary = document.createElement('summary')
    const label = key === null ? 'content' : key
    summary.append(span('key', label), span('kind', Array.isArray(value) ? ` [${entries.length}]` : ` {${entries.length}}`))
    // Clicking the summary also opens or closes it; the selection follows the click either way.
    summary.addEventListener('click', () => select(path))
    const list = document.createElement('ul')
    for (const [k, v] of entries) {
      const childPath = path ? `${path}.${k}` : k
      const li = document.createElement('li')
      li.append(renderValue(k, v, childPath))
      list.append(li)
    }
    details.append(summary, list)
    return details
  }
  const row = document.createElement('div')
  row.className = 'leaf'
  row.dataset.path = path
  const shown = span(`value ${value === null ? 'null' : typeof value}`, JSON.stringify(value))
  shown.dataset.path = path
  row.append(span('key', key ?? 'content'), ': ', shown)
  // Focusable and selectable with the keyboard, like the summaries.
  row.tabIndex = 0
  row.addEventListener('click', () => select(path))
  row.addEventListener('keydown', (event) => { if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); select(path) } })
  return row
}

/** Briefly marks what changed: the element at the path, or its nearest ancestor still there. */
function highlight (path) {
  const segments = path ? path.split('.') : []
  for (let n = segments.length; n >= 0; n--) {
    const target = document.querySelector(`#tree [data-path="${CSS.escape(segments.slice(0, n).join('.'))}"]`)
    if (!target) continue
    const mark = target.tagName === 'DETAILS' ? target.querySelector('summary') : target
    mark?.classList.add('changed')
    setTimeout(() => mark?.classList.remove('changed'), HIGHLIGHT_MS)
    return
  }
}

function span (className, text) {
  const s = document.createElement('span')
  s.className = className
  s.textContent = text
  return s
}

function item (text) {
  const li = document.createElement('li')
  li.textContent = text
  return li
}

// ---- API keys -----------------------------------------------------------------------

async function loadKeys () {
  const keys = await everyPage('/api/keys', 'keys')
  const list = $('key-list')
  list.replaceChildren()
  if (keys.length === 0) list.append(item('No API keys.'))
  for (const k of keys) {
    const li = item('')
    const text = span('key-text', `${k.name} · ${k.permission} · ${k.prefix}…`)
    const revoke = document.createElement('button')
    revoke.type = 'button'
    revoke.className = 'secondary'
    revoke.textContent = 'Revoke'
    revoke.setAttribute('aria-label', `Revoke key ${k.name}`)
    revoke.addEventListener('click', async () => {
      try {
        await api('DELETE', `/api/keys/${encodeURIComponent(k.id)}`)
        say(`Key ${k.name} revoked.`)
        await loadKeys()
      } catch (e) { say(e.message, true) }
    })
    li.append(text, revoke)
    list.append(li)
  }
}

$('key-form').addEventListener('submit', async (event) => {
  event.preventDefault()
  const name = /** @type {HTMLInputElement} */ ($('key-name')).value.trim()
  const permission = /** @type {HTMLSelectElement} */ ($('key-permission')).value
  try {
    const created = await api('POST', '/api/keys', { name, permission })
    const form = /** @type {HTMLFormElement} */ (event.target)
    form.reset()
    const value = /** @type {HTMLInputElement} */ ($('new-key-value'))
    value.value = created.key
    $('new-key').hidden = false
    value.focus()
    value.select()
    say(`Key ${created.name} created. Copy it now: it will not be shown again.`)
    await loadKeys()
  } catch (e) {
    say(e.message, true)
  }
})

$('copy-key').addEventListener('click', async () => {
  const value = /** @type {HTMLInputElement} */ ($('new-key-value'))
  try {
    await navigator.clipboard.writeText(value.value)
    say('Key copied to the clipboard.')
  } catch {
    value.select()
    say('Press Ctrl+C (⌘C) to copy the selected key.')
  }
})

// ---- start --------------------------------------------------------------------------

if (state.token) {
  enterWorkspace().catch(() => leaveWorkspace('Your session ended; please sign in again.'))
}
