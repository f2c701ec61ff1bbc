// Package github is weft's client of GitHub as a GitHub App: the app JWT
// exchanged for installation access tokens, the REST calls weft makes
// (through google/go-github, pointed at GITHUB_API_URL), webhook
// verification and parsing into small domain events, and replies that
// carry a hidden marker so that a retried post leaves exactly one comment.
// Failures are *surface.Error, as for the other platforms.
//
// It knows nothing of threads, jobs or the database: internal/surface/github
// builds weft's door on top of it.
package github
