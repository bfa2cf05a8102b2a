// The resolve hook of module-log.mjs (runs on the loader's own thread).
let port

export function initialize (data) {
  port = data.port
}

export async function resolve (specifier, context, next) {
  const resolved = await next(specifier, context)
  port.postMessage(resolved.url)
  return resolved
}
