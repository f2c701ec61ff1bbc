// Package surface is the seam every platform implements: the interface a
// platform offers the rest of weft, the one
// vocabulary its inbound traffic is mapped to, and the shapes every
// platform shares (the error kind, OAuth state, installations, webhook
// helpers). A platform's implementation lives in internal/surface/<name>;
// its API client and fake live in internal/<name>.
package surface
