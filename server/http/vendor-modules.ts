// The browser modules the console takes from node_modules, found at start-up by following
// the imports of a few entry packages (the console is served without a bundler, see
// dashboard.ts). CodeMirror is some 15 small packages that import each other by bare name;
// listing them by hand would break on the next minor version, so the graph is read from the
// files npm installed: each module's `import … from 'x'` and `export … from 'x'`.
//
// Each package is served from the file its package.json gives for `import` (exports, else
// module, else main), under /vendor/<package>/<path in the package>, so relative imports
// inside a package resolve beside it.
import { existsSync, readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { dirname, join, relative, sep } from 'node:path'

export interface VendorModule {
  /** The bare name the console (or another module) imports: "@codemirror/view". */
  specifier: string
  /** Where the browser fetches it: "/vendor/@codemirror/view/dist/index.js". */
  url: string
  /** The file served. */
  file: string
}

const require = createRequire(import.meta.url)

/** "@codemirror/view/x" → "@codemirror/view"; "preact/hooks" → "preact". */
function packageName (specifier: string): string {
  const parts = specifier.split('/')
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0] as string
}

/** The folder of an installed package: up from the file Node resolves it to, to its package.json. */
function packageFolder (name: string): string {
  let dir = dirname(require.resolve(name))
  for (;;) {
    const manifest = join(dir, 'package.json')
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === name) return dir
    const parent = dirname(dir)
    if (parent === dir) throw new Error(`cannot find the folder of ${name}`)
    dir = parent
  }
}

type Exports = string | { [condition: string]: Exports | undefined } | undefined

/** The ESM entry among the export conditions a browser would use. */
function importTarget (exports: Exports): string | undefined {
  if (exports === undefined || typeof exports === 'string') return exports
  for (const condition of ['browser', 'import', 'default']) {
    const target = importTarget(exports[condition])
    if (target !== undefined) return target
  }
  return undefined
}

/** The file a bare specifier without a subpath loads in a browser. */
function entryFile (name: string): string {
  const folder = packageFolder(name)
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { exports?: Exports & object, module?: string, main?: string }
  const exports = manifest.exports
  const fromExports = exports === undefined ? undefined : importTarget(typeof exports === 'object' && '.' in exports ? exports['.'] : exports)
  const target = fromExports ?? manifest.module ?? manifest.main
  if (target === undefined) throw new Error(`${name} names no module entry`)
  return join(folder, target)
}

/**
 * What a module imports or re-exports: bare names and relative paths. Only statements that
 * start a line count (`import … from 'x'`, `export … from 'x'`, `import 'x'`), as the packages'
 * dist files write them, so "from \"module\"" in a comment is not taken for one.
 */
export function moduleImports (source: string): string[] {
  const found = new Set<string>()
  const pattern = /^(?:import|export)\b(?:[^'";]*?\bfrom)?\s*['"]([^'"]+)['"]/gm
  for (const match of source.matchAll(pattern)) found.add(match[1] as string)
  return [...found]
}

export interface VendorPackage { name: string, folder: string }

/**
 * The packages reached from `entries` (package names without a subpath), each once, and the
 * import map's entries for them. Relative imports are followed too (a package split into
 * files); they load from the package's folder, which is served whole under /vendor/<name>/.
 */
export function vendorGraph (entries: string[]): { modules: VendorModule[], packages: VendorPackage[] } {
  const modules = new Map<string, VendorModule>()
  const files = new Set<string>()
  const visitFile = (file: string) => {
    if (files.has(file)) return
    files.add(file)
    for (const imported of moduleImports(readFileSync(file, 'utf8'))) {
      if (imported.startsWith('.')) visitFile(join(dirname(file), imported))
      else visitPackage(imported)
    }
  }
  const visitPackage = (specifier: string) => {
    if (modules.has(specifier)) return
    if (specifier !== packageName(specifier)) throw new Error(`vendor module ${specifier}: only whole packages are mapped`)
    const file = entryFile(specifier)
    const path = relative(packageFolder(specifier), file).split(sep).join('/')
    modules.set(specifier, { specifier, url: `/vendor/${specifier}/${path}`, file })
    visitFile(file)
  }
  for (const entry of entries) visitPackage(entry)
  return { modules: [...modules.values()], packages: [...modules.keys()].map(name => ({ name, folder: packageFolder(name) })) }
}
