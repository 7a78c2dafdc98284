/**
 * The package a file belongs to, from its path (the last node_modules folder in it); null for the app's own files.
 * @param {string} file
 * @returns {string | null}
 */
export function packageName (file) {
  const i = file.lastIndexOf('/node_modules/')
  if (i === -1) return null
  const rest = file.slice(i + '/node_modules/'.length).split('/')
  return rest[0].startsWith('@') && rest.length > 1 ? `${rest[0]}/${rest[1]}` : rest[0]
}
