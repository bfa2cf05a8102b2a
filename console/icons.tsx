// The few icons the console draws: inline SVG in the text colour, hidden from screen readers
// (the control they sit in carries the name).
const common = { 'aria-hidden': true, viewBox: '0 0 16 16', width: 14, height: 14, fill: 'none', stroke: 'currentColor', 'stroke-width': 1.5, 'stroke-linecap': 'round', 'stroke-linejoin': 'round' } as const

export function TrashIcon () {
  return <svg {...common}><path d="M2.5 4h11M6 4V2.5h4V4M4 4l.7 9.5h6.6L12 4M6.5 6.5v5M9.5 6.5v5" /></svg>
}

export function KeyIcon () {
  return <svg {...common}><circle cx="5" cy="8" r="2.75" /><path d="M7.75 8h6M11.5 8v2.5M13.75 8v2" /></svg>
}

export function ExternalIcon () {
  return <svg {...common}><path d="M9.5 2.5h4v4M13.5 2.5 7.5 8.5M12 9.5v4H2.5V4h4" /></svg>
}
