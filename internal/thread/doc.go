// Package thread is weft's domain: threads (agent conversations), their
// stitches (steps), platform attachments, the status machine, the
// ThreadBuilder and the MemoryManager.
//
// It imports only the standard library and uuid. Persistence lives in package
// db, which takes and returns these types; adapters (Linear, Discord, the LLM
// providers) depend on this package, never the other way round.
package thread
