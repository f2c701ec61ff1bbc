package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
)

const benchUsage = `usage: weft bench store|turns|linear|replies|discord|slack|github|console|stream|tools|soak|scale [flags]

The benchmarks are their own command, weft-bench, so that the weft binary
carries none of their fakes; "weft bench ARGS" runs "weft-bench ARGS" when
it finds it beside weft or on PATH ("make build" puts it in bin/). Else run
"go run ./cmd/weft-bench ARGS" in the repository. README.md lists the
benchmarks and their figures.
`

// bench hands `weft bench ARGS` to weft-bench, replacing this process so
// that signals and the exit status are weft-bench's own.
func bench(args []string, stdout, stderr io.Writer) error {
	path, err := benchBinary()
	if err != nil {
		if slices.ContainsFunc(args, isHelp) {
			fmt.Fprint(stdout, benchUsage)
			return nil
		}
		fmt.Fprintf(stderr, "weft bench: %v\n\n%s", err, benchUsage)
		return errUsage
	}
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}

// benchBinary finds weft-bench: beside this executable, else on PATH.
func benchBinary() (string, error) {
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "weft-bench")
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
	}
	p, err := exec.LookPath("weft-bench")
	if err != nil {
		return "", errors.New("weft-bench not found beside weft or on PATH")
	}
	return p, nil
}
