// The live dashboard: static files from public/ at "/", and the compiled shared modules
// (operations, paths, event types) at "/shared/", so the page applies change events with
// exactly the server's code. No build step beyond the server's own (npm start builds dist/).
import { existsSync } from 'node:fs'
import { dirname, join } from 'node:path'
import express, { Router } from 'express'

/** The repository root: the nearest folder above this module holding package.json. */
function projectRoot (): string {
  let dir = import.meta.dirname
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir)
    if (parent === dir) throw new Error('cannot find the project root (package.json)')
    dir = parent
  }
  return dir
}

export function dashboard (): Router {
  const root = projectRoot()
  const router = Router()
  router.use(express.static(join(root, 'public'), { index: 'index.html', fallthrough: true }))
  router.use('/shared', express.static(join(root, 'dist', 'shared'), { index: false, fallthrough: true }))
  return router
}
