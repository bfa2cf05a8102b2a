// "Viewing now" (docs/realtime.md#presence): who else has the project's content open, and
// which path each has selected. Through the SDK's project.presence: opening the content
// shows this tab to the others (an empty state), selecting a value shares its path, and
// leaving the content takes the tab out of the list.
import { useEffect, useState } from 'preact/hooks'
import type { PresenceMember, ProjectClient } from '../../shared/client/index.js'
import { useApp } from '../app-context.js'
import { actorName } from '../panels/history-text.js'
import { ErrorText } from '../ui.js'

export interface Presence {
  members: PresenceMember[]
  /** This tab's own member id, once the server shows it. */
  selfId: string | undefined
  /** The path this tab shares (null: none). */
  selected: string | null
  select (path: string | null): void
  error: string | null
}

/** The path a member has selected, when it shows one. */
export function selectedPath (member: PresenceMember): string | null {
  return typeof member.state.path === 'string' ? member.state.path : null
}

export function usePresence (client: ProjectClient): Presence {
  const { failure } = useApp()
  const [members, setMembers] = useState<PresenceMember[]>([])
  const [selected, setSelected] = useState<string | null>(null)
  const [error, setError] = useState<string | null>(null)
  const presence = client.presence

  useEffect(() => {
    const stopChange = presence.on('change', list => setMembers(list))
    const stopError = presence.on('error', e => setError(failure(e)))
    presence.set({}).catch(e => setError(failure(e)))
    return () => {
      stopChange()
      stopError()
      presence.leave().catch(() => { /* the connection may be gone already */ })
    }
  }, [presence])

  const select = (path: string | null) => {
    if (path === selected) return
    setSelected(path)
    presence.set(path === null ? {} : { path }).then(() => setError(null), e => setError(failure(e)))
  }
  return { members, selfId: presence.self?.id, selected, select, error }
}

export function ViewingNow ({ presence }: { presence: Presence }) {
  const { members, selfId } = presence
  return (
    <section class="viewing" aria-labelledby="viewing-title">
      <h2 id="viewing-title" class="viewing-title">Viewing now</h2>
      <ul class="viewer-list">
        {members.map(member => {
          const path = selectedPath(member)
          const mine = member.id === selfId
          return (
            <li key={member.id} class={`viewer${mine ? ' viewer-self' : ''}`} data-viewer={member.id}>
              <span class="avatar" aria-hidden="true">{actorName(member.actor).replace(/^(key )?@?/, '').slice(0, 1).toUpperCase()}</span>
              <span class="viewer-name">{actorName(member.actor)}{mine ? ' (you)' : ''}</span>
              {path !== null && <span class="mono viewer-path">{path === '' ? 'content' : path}</span>}
            </li>
          )
        })}
      </ul>
      <ErrorText message={presence.error} />
    </section>
  )
}
