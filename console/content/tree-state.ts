// The tree view's state that outlives its nodes: which containers are open, which node a
// search asked to reveal, and the row element of each rendered path (to highlight changes
// and move focus without searching the DOM).
import { segmentsOf } from './edits.js'

/** Children a container shows at first, and per "show more". */
export const PAGE_SIZE = 100
/** Rows that containers opened by default may show in all; past it, containers start closed. */
export const DEFAULT_OPEN_BUDGET = 600

export class OpenState {
  private readonly explicit = new Map<string, boolean>()
  /** Defaults once decided, so that a container does not open or close by itself later. */
  private readonly decided = new Map<string, boolean>()
  private budget = DEFAULT_OPEN_BUDGET
  private mode: 'default' | 'expanded' | 'collapsed' = 'default'
  private revealTarget: string | null = null

  /**
   * Whether a container is open: the user's choice, else the mode, else the default: the
   * top level is open unless the document has many keys; below it, small containers (up to
   * 12 children) in small parents, down to depth 3. Containers opened by default show at most
   * DEFAULT_OPEN_BUDGET rows in all, so ordinary documents show at a glance and a 1 MiB one
   * renders only a first screenful (its big lists start closed).
   */
  isOpen (path: string, depth: number, size: number, parentSize: number): boolean {
    const chosen = this.explicit.get(path)
    if (chosen !== undefined) return chosen
    if (this.mode === 'expanded') return true
    if (this.mode === 'collapsed') return false
    const known = this.decided.get(path)
    if (known !== undefined) return known
    const wanted = depth <= 1 ? parentSize <= 50 : depth <= 3 && size <= 12 && parentSize <= 12
    const shown = Math.min(size, PAGE_SIZE)
    const open = wanted && shown <= this.budget
    if (open) this.budget -= shown
    this.decided.set(path, open)
    return open
  }

  set (path: string, open: boolean): void {
    this.explicit.set(path, open)
  }

  collapseAll (): void {
    this.explicit.clear()
    this.decided.clear()
    this.mode = 'collapsed'
    this.revealTarget = null
  }

  expandAll (): void {
    this.explicit.clear()
    this.decided.clear()
    this.mode = 'expanded'
    this.revealTarget = null
  }

  /** Opens every container above `path`, and makes it show enough children to include it. */
  reveal (path: string): void {
    const segments = segmentsOf(path)
    for (let n = 1; n < segments.length; n++) this.explicit.set(segments.slice(0, n).join('.'), true)
    this.revealTarget = path
  }

  /** The key or index of the child of `path` on the way to the revealed node, if any. */
  revealedChild (path: string): string | null {
    const target = this.revealTarget
    if (target === null || target === path) return null
    const prefix = path === '' ? '' : `${path}.`
    if (!target.startsWith(prefix)) return null
    return segmentsOf(target.slice(prefix.length))[0] ?? null
  }
}

/**
 * Row elements by path, kept by the rows themselves as they mount and unmount, and which of
 * them are on screen (an IntersectionObserver, where there is one): a stream of changes
 * highlights only rows the user can see, so rows scrolled away cost nothing.
 */
export class RowRegistry {
  private readonly rows = new Map<string, HTMLElement>()
  private readonly visible = new Set<Element>()
  private readonly observer = typeof IntersectionObserver === 'undefined'
    ? undefined
    : new IntersectionObserver(entries => {
      for (const entry of entries) {
        if (entry.isIntersecting) this.visible.add(entry.target)
        else this.visible.delete(entry.target)
      }
    })

  attach (path: string, element: HTMLElement | null): void {
    const before = this.rows.get(path)
    if (before && before !== element) { this.observer?.unobserve(before); this.visible.delete(before) }
    if (element) {
      this.rows.set(path, element)
      if (before !== element) this.observer?.observe(element)
    } else {
      this.rows.delete(path)
    }
  }

  get (path: string): HTMLElement | undefined {
    return this.rows.get(path)
  }

  /** Whether a row is on screen (always true without an IntersectionObserver). */
  onScreen (row: HTMLElement): boolean {
    return this.observer === undefined || this.visible.has(row)
  }

  /** The row of `path`, or of its nearest ancestor on screen (a change inside a closed container). */
  nearest (path: string): HTMLElement | undefined {
    const segments = segmentsOf(path)
    for (let n = segments.length; n >= 0; n--) {
      const row = this.rows.get(segments.slice(0, n).join('.'))
      if (row) return row
    }
    return undefined
  }

  /** Stops watching the rows (the tree is gone). */
  close (): void {
    this.observer?.disconnect()
    this.visible.clear()
  }
}

/** The running highlight of each row, so that a row changing again restarts it instead of stacking another. */
const flashes = new WeakMap<HTMLElement, Animation>()

const FLASH_MS = 1400

/**
 * Briefly highlights a row: its background, from --flash (style.css) to nothing. A row
 * changing 100 times a second keeps one animation: still bright (in its first half), it is
 * left alone; fading, it starts again. (Measured in Chromium with bench/scenarios/console.mjs:
 * this costs less than a composited opacity animation, whose start and end re-layerize the
 * page, and far less than stacking an animation per change.)
 */
export function flash (row: HTMLElement): void {
  const running = flashes.get(row)
  if (running && running.playState === 'running') {
    if (Number(running.currentTime ?? 0) >= FLASH_MS / 2) running.currentTime = 0
    return
  }
  flashes.set(row, row.animate([{ backgroundColor: 'var(--flash)' }, { backgroundColor: 'transparent' }], { duration: FLASH_MS, easing: 'ease-out' }))
}
