package lineartest

import (
	"sync"

	"github.com/vektah/gqlparser/v2/ast"
)

// document is an operation document that parsed and passed validation
// against the schema. Once cached it is only read: requests share it.
type document struct {
	query string
	doc   *ast.QueryDocument
}

// maxDocuments bounds the cache. weft sends about ten distinct documents
// and a test a few of its own, so eviction is for a client gone wrong,
// such as one splicing values into its query text.
const maxDocuments = 256

// documents caches valid documents by their exact text. genqlient sends the
// same text for every call of an operation, and validating it costs several
// times what answering it does; invalid documents are not cached, so they
// are rejected afresh each time.
type documents struct {
	mu      sync.RWMutex
	byQuery map[string]*document
}

func (c *documents) get(query string) (*document, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	d, ok := c.byQuery[query]
	return d, ok
}

func (c *documents) put(d *document) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byQuery == nil {
		c.byQuery = map[string]*document{}
	}
	if _, ok := c.byQuery[d.query]; !ok && len(c.byQuery) >= maxDocuments {
		// Map order is random, so this evicts an arbitrary document.
		for q := range c.byQuery {
			delete(c.byQuery, q)
			break
		}
	}
	c.byQuery[d.query] = d
}

func (c *documents) len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.byQuery)
}
