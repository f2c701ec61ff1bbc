// Command weft-bench measures weft against the targets of
// docs/architecture.md, each beside a baseline measured in the same run.
// It is a command of its own so that the weft binary carries none of the
// fakes the benchmarks drive it with; `weft bench ARGS` runs it. The
// benchmarks live in internal/bench.
package main

import (
	"os"

	"github.com/weft-dev/weft/internal/bench"
)

func main() { os.Exit(bench.Main()) }
