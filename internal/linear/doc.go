// Package linear is weft's adapter for Linear's Agents API.
//
// It holds four things, each usable on its own:
//   - webhook verification and parsing (Verify, Parse, Event and its types),
//     which the webhook handler calls on the raw request body;
//   - a GraphQL client (Client) for the calls an agent makes: activities,
//     session updates, issues, the session's history, the app user and
//     moving a delegated issue to started. It is built on genqlient, whose
//     generated functions stay unexported behind domain-level methods;
//   - the OAuth app flow (AuthorizeURL, OAuthClient);
//   - the classification of Linear's failures into *surface.Error, whose
//     Kind callers switch on to decide between retrying later,
//     re-authorizing and giving up.
//
// Of weft's packages it imports only thread, surface and retry; a fake of
// the Linear API for tests lives in lineartest.
package linear
