// The ceiling: bare Express 5 answering the same JSON POST as an increment (the body is read
// and parsed as JSON, as any JSON API must) with a constant body. No auth, no store, no
// logging: what the framework alone costs on this machine. (The message comes from the built
// operation table: `npm run bench` builds first.)
import express from 'express'
import { PATH_OPERATIONS } from '../dist/shared/operation-table.js'

const body = { message: PATH_OPERATIONS.increment.message }

const app = express()
app.disable('x-powered-by')
app.set('etag', false)
app.post('/api/:username/:projectSlug/content/increment', express.json(), (_req, res) => {
  res.json(body)
})
app.get('/', (_req, res) => { res.json({ ok: true }) })
app.listen(Number(process.env.PORT), '127.0.0.1')
