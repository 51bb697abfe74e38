import { render } from 'preact'
import { App } from './app'
import styles from './styles/portal.css?inline'

export const ELEMENT_NAME = 'workforce-integrations-portal'
/** Fired on the element (bubbling, through shadow roots) when the admin API answers 401. */
export const SIGNED_OUT_EVENT = 'workforce-portal-signed-out'
const DEFAULT_HEADING_LEVEL = 2

/**
 * `<workforce-integrations-portal api-base="/settings/integrations/api">`: the integrations
 * screens in a shadow root, for a host's own settings page. Attributes: `api-base` (the admin
 * prefix), `heading-level` (of the portal's title, 1–5, default 2). Property: `headers`, sent
 * with every request (e.g. the host's CSRF header when it sets workforceAdmin's `csrf`).
 * Colours, radii and fonts come from `--wfa-*` custom properties (src/styles/portal.css).
 */
export class WorkforceIntegrationsPortal extends HTMLElement {
  static readonly observedAttributes = ['api-base', 'heading-level']
  #mount: HTMLElement | null = null
  #headers: Record<string, string> = {}

  get headers(): Record<string, string> {
    return { ...this.#headers }
  }

  set headers(value: Record<string, string>) {
    this.#headers = { ...value }
    this.#render()
  }

  connectedCallback(): void {
    if (this.#mount === null) {
      const root = this.attachShadow({ mode: 'open' })
      adoptStyles(root)
      // Preact owns this node only: a fallback <style> stays its sibling.
      this.#mount = document.createElement('div')
      root.append(this.#mount)
    }
    this.#render()
  }

  disconnectedCallback(): void {
    if (this.#mount !== null) render(null, this.#mount)
  }

  attributeChangedCallback(): void {
    this.#render()
  }

  #render(): void {
    if (this.#mount === null || !this.isConnected) return
    const apiBase = this.getAttribute('api-base') ?? ''
    const level = Number.parseInt(this.getAttribute('heading-level') ?? '', 10)
    const headingLevel = level >= 1 && level <= 5 ? level : DEFAULT_HEADING_LEVEL
    const onSignedOut = () => this.dispatchEvent(new CustomEvent(SIGNED_OUT_EVENT, { bubbles: true, composed: true }))
    // Keyed by what the client is made of: a new base or new headers start afresh.
    const key = `${apiBase}\n${JSON.stringify(this.#headers)}`
    render(<App key={key} apiBase={apiBase} headers={this.#headers} headingLevel={headingLevel} onSignedOut={onSignedOut} />, this.#mount)
  }
}

let sheet: CSSStyleSheet | undefined

/**
 * A constructed stylesheet, which a Content-Security-Policy's `style-src` does not govern (a
 * `<style>` element would need 'unsafe-inline' or a hash); a `<style>` only where a browser
 * cannot adopt sheets (Safari before 16.4).
 */
function adoptStyles(root: ShadowRoot): void {
  if ('adoptedStyleSheets' in root && 'replaceSync' in CSSStyleSheet.prototype) {
    sheet ??= new CSSStyleSheet()
    if (sheet.cssRules.length === 0) sheet.replaceSync(styles)
    root.adoptedStyleSheets = [sheet]
    return
  }
  const style = document.createElement('style')
  style.textContent = styles
  ;(root as ShadowRoot).append(style)
}

declare global {
  interface HTMLElementTagNameMap {
    [ELEMENT_NAME]: WorkforceIntegrationsPortal
  }
}

if (customElements.get(ELEMENT_NAME) === undefined) customElements.define(ELEMENT_NAME, WorkforceIntegrationsPortal)
