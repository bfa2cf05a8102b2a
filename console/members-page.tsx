// The Members tab (owner only): who else can read or change the project.
import { useCallback, useEffect, useState } from 'preact/hooks'
import type { Member, MemberRole } from '../shared/client/index.js'
import { useApp } from './app-context.js'
import { Badge, ConfirmButton, EmptyState, ErrorText, Loading, valueOf } from './ui.js'

const ROLE_HELP: Record<MemberRole, string> = { viewer: 'reads the content', editor: 'reads and changes the content' }

export function MembersPage ({ project, owner }: { project: string, owner: string }) {
  const { session, failure, announce } = useApp()
  const client = session.client.project(project)
  const [members, setMembers] = useState<Member[] | null>(null)
  const [loadError, setLoadError] = useState<string | null>(null)
  const [username, setUsername] = useState('')
  const [role, setRole] = useState<MemberRole>('editor')
  const [addError, setAddError] = useState<string | null>(null)
  const [rowErrors, setRowErrors] = useState<Record<string, string>>({})
  const [busy, setBusy] = useState(false)

  const load = useCallback(async () => {
    try { setMembers(await client.members()); setLoadError(null) } catch (e) { setLoadError(failure(e)) }
  }, [project])
  useEffect(() => { void load() }, [load])

  const add = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setAddError(null)
    try {
      const member = await client.setMember(username.trim(), role)
      announce(`${member.username} is now ${member.role === 'editor' ? 'an editor' : 'a viewer'} of ${project}.`)
      setUsername('')
      await load()
    } catch (e) {
      setAddError(failure(e))
    } finally {
      setBusy(false)
    }
  }
  const change = async (member: Member, next: MemberRole) => {
    setRowErrors(errors => ({ ...errors, [member.username]: '' }))
    try {
      await client.setMember(member.username, next)
      announce(`${member.username} is now ${next === 'editor' ? 'an editor' : 'a viewer'}.`)
      await load()
    } catch (e) {
      setRowErrors(errors => ({ ...errors, [member.username]: failure(e) }))
    }
  }
  const remove = async (member: Member) => {
    try {
      await client.removeMember(member.username)
      announce(`${member.username} removed from ${project}.`)
      await load()
    } catch (e) {
      setRowErrors(errors => ({ ...errors, [member.username]: failure(e) }))
    }
  }

  return (
    <div class="members">
      <form class="panel add-member" onSubmit={add} aria-labelledby="add-member-title">
        <h2 id="add-member-title">Add a member</h2>
        <div class="form-row">
          <div class="field grow">
            <label for="member-username">Username</label>
            <input id="member-username" required autocomplete="off" autoCapitalize="none" spellcheck={false} placeholder="@bob"
              value={username} onInput={e => setUsername(valueOf(e))} aria-describedby="member-hint" />
          </div>
          <div class="field">
            <label for="member-role">Role</label>
            <select id="member-role" value={role} onChange={e => setRole(valueOf(e) as MemberRole)}>
              <option value="editor">Editor</option>
              <option value="viewer">Viewer</option>
            </select>
          </div>
          <button type="submit" class="button primary" disabled={busy || username.trim() === ''}>Add member</button>
        </div>
        <p id="member-hint" class="hint">They need an account on this server. An editor {ROLE_HELP.editor}; a viewer {ROLE_HELP.viewer}.</p>
        <ErrorText message={addError} />
      </form>

      <section class="panel" aria-labelledby="member-list-title">
        <h2 id="member-list-title">People with access</h2>
        <ErrorText message={loadError} />
        {!members && !loadError && <Loading what="members" />}
        {members && (
          <ul class="people">
            <li class="person">
              <span class="avatar" aria-hidden="true">{owner.slice(1, 2).toUpperCase()}</span>
              <span class="person-name">{owner}</span>
              <Badge tone="accent">owner</Badge>
            </li>
            {members.map(member => (
              <li key={member.username} class="person">
                <span class="avatar" aria-hidden="true">{member.username.slice(1, 2).toUpperCase()}</span>
                <span class="person-name">{member.username}</span>
                <label class="visually-hidden" for={`role-${member.username}`}>Role of {member.username}</label>
                <select id={`role-${member.username}`} value={member.role} onChange={e => { void change(member, valueOf(e) as MemberRole) }}>
                  <option value="editor">Editor</option>
                  <option value="viewer">Viewer</option>
                </select>
                <ConfirmButton label={`Remove ${member.username}`} confirmLabel="Remove" question={`Remove ${member.username}? Their live views end at once.`} onConfirm={() => { void remove(member) }}>Remove</ConfirmButton>
                <ErrorText message={rowErrors[member.username] || null} />
              </li>
            ))}
          </ul>
        )}
        {members && members.length === 0 && (
          <EmptyState title="Only you, so far" icon="☺">
            <p>Add people by username above: editors change the content with you, viewers watch it live.</p>
          </EmptyState>
        )}
      </section>
    </div>
  )
}
