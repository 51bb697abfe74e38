import { ELEMENT_NAME } from './element'

/**
 * The standalone page, served at `<admin prefix>/portal/`: the admin API is the prefix itself,
 * so its base is this page's path without the trailing `/portal…`.
 */
export function apiBaseOf(pathname: string): string {
  const at = pathname.lastIndexOf('/portal')
  return at === -1 ? '' : pathname.slice(0, at)
}

const portal = document.createElement(ELEMENT_NAME)
portal.setAttribute('api-base', apiBaseOf(location.pathname))
portal.setAttribute('heading-level', '1')
document.getElementById('portal')?.replaceChildren(portal)
