// Package migrations holds weft's schema as goose SQL files, embedded in the
// binary so that `weft migrate` and `weft serve` need nothing on disk.
//
// Files are numbered sequentially and never edited once landed: a schema
// change is a new file.
package migrations

import "embed"

// FS is every migration, in goose's file format.
//
//go:embed *.sql
var FS embed.FS
