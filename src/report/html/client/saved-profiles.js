/// <reference lib="dom" />
// Raw profiles embedded on request (--report-profile): each button saves one as a file, from the page.
/* global document, URL, Blob */

export function listenProfileDownloads () {
  for (const button of /** @type {NodeListOf<HTMLElement>} */ (document.querySelectorAll('.hr-save-profile'))) {
    button.addEventListener('click', () => {
      const source = document.getElementById('hotpath-raw-profiles')
      if (!source) return
      const entry = JSON.parse(source.textContent || '[]')[Number(button.dataset.profile)]
      if (!entry) return
      const url = URL.createObjectURL(new Blob([JSON.stringify(entry.profile)], { type: 'application/json' }))
      const a = document.createElement('a')
      a.href = url
      a.download = entry.name
      document.body.appendChild(a)
      a.click()
      a.remove()
      setTimeout(() => URL.revokeObjectURL(url), 10000)
    })
  }
}
