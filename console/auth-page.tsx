// Sign in, or create an account while the server's sign-up is open (SIGNUP=open).
import { useRef, useState } from 'preact/hooks'
import { ContentdError, type SessionGrant } from '../shared/client/index.js'
import { anonymousClient, messageOf } from './session.js'
import { ErrorText, valueOf } from './ui.js'

type Mode = 'login' | 'signup'

export function AuthPage ({ onSignedIn, notice }: { onSignedIn: (grant: SessionGrant) => void, notice: string | null }) {
  const [mode, setMode] = useState<Mode>('login')
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const usernameInput = useRef<HTMLInputElement>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    const client = anonymousClient()
    try {
      const grant = mode === 'signup' ? await client.signup(username.trim(), password) : await client.login(username.trim(), password)
      onSignedIn(grant)
    } catch (e) {
      if (e instanceof ContentdError && e.code === 'SIGNUP_DISABLED') setError('Sign-up is closed on this server. Ask its operator for an account (they create one with the contentd CLI), then sign in.')
      else setError(messageOf(e))
      usernameInput.current?.focus()
    } finally {
      setBusy(false)
      client.close()
    }
  }

  const switchTo = (next: Mode) => { setMode(next); setError(null) }

  return (
    <main class="auth" id="main">
      <div class="auth-card">
        <div class="brand brand-large"><span class="logo" aria-hidden="true">{'{·}'}</span> contentd</div>
        <p class="auth-tagline">Live JSON content for your apps: change it over REST, watch it update everywhere.</p>
        <div class="segmented" role="group" aria-label="Account">
          <button type="button" aria-pressed={mode === 'login'} onClick={() => switchTo('login')}>Sign in</button>
          <button type="button" aria-pressed={mode === 'signup'} onClick={() => switchTo('signup')}>Create account</button>
        </div>
        {notice && <p class="notice" role="status">{notice}</p>}
        <form class="stack" onSubmit={submit} aria-labelledby="auth-heading">
          <h1 id="auth-heading" class="visually-hidden">{mode === 'login' ? 'Sign in' : 'Create an account'}</h1>
          <label for="auth-username">Username</label>
          <input id="auth-username" ref={usernameInput} name="username" autocomplete="username" required maxLength={39}
            autoCapitalize="none" spellcheck={false} value={username} onInput={e => setUsername(valueOf(e))}
            aria-describedby={mode === 'signup' ? 'username-hint' : undefined} />
          {mode === 'signup' && <p id="username-hint" class="hint">Letters, digits and -, up to 39 characters. Your projects live under @{username.trim().toLowerCase() || 'you'}.</p>}
          <label for="auth-password">Password</label>
          <input id="auth-password" name="password" type="password" required minLength={8} maxLength={1024}
            autocomplete={mode === 'login' ? 'current-password' : 'new-password'} value={password} onInput={e => setPassword(valueOf(e))}
            aria-describedby={mode === 'signup' ? 'password-hint' : undefined} />
          {mode === 'signup' && <p id="password-hint" class="hint">At least 8 characters; a passphrase is best.</p>}
          <ErrorText message={error} />
          <button type="submit" class="button primary wide" disabled={busy}>{busy ? 'One moment…' : mode === 'login' ? 'Sign in' : 'Create account'}</button>
        </form>
        <p class="auth-foot"><a href="/docs">API reference</a></p>
      </div>
    </main>
  )
}
