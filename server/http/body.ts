// JSON bodies, parsed only once a route has authenticated and authorized the caller (so an
// anonymous caller learns nothing from body errors, docs/design.md §4). Any Content-Type is read
// as JSON: curl users forget the header, and JSON is all this API speaks.
import express, { type RequestHandler } from 'express'

export function jsonBody (limitBytes: number): RequestHandler {
  return express.json({ limit: limitBytes, strict: false, type: () => true })
}
