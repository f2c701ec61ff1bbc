package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// version is stamped in at build time by `make build` and the Dockerfile
// (-ldflags "-X main.version=..."); a plain `go build` leaves it "dev".
var version = "dev"

const versionUsage = `usage: weft version

Prints the version weft was built as, its commit and its Go toolchain.
`

// printVersion writes "weft VERSION (commit REV, GOVERSION OS/ARCH)"; the
// commit is the one Go recorded at build, absent where the build had no
// repository (a Docker build context without .git).
func printVersion(w io.Writer) {
	rev := ""
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" {
				rev = "commit " + s.Value + ", "
			}
		}
	}
	fmt.Fprintf(w, "weft %s (%s%s %s/%s)\n", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
