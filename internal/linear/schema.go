package linear

import _ "embed"

//go:embed schema.graphql
var schemaSDL string

// SchemaSDL returns the subset of Linear's schema this package's operations
// are generated from and checked against, for lineartest to validate
// requests with.
func SchemaSDL() string { return schemaSDL }
