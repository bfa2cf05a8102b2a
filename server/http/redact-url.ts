// A request's URL as logs show it: the credential an EventSource passes as ?access_token=
// (docs/design.md §9) never reaches a log line.
const ACCESS_TOKEN = /([?&]access_token=)[^&#]*/gi

export function redactUrl (url: string): string {
  return /access_token=/i.test(url) ? url.replace(ACCESS_TOKEN, '$1[REDACTED]') : url
}
