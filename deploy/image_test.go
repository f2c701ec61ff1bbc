package deploy

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDockerfileBuildsAsMake: the image's weft is built with `make build`'s
// flags (static, -trimpath, stripped, the version stamped), so that what is
// measured and tested here is what ships.
func TestDockerfileBuildsAsMake(t *testing.T) {
	mk, err := os.ReadFile("../Makefile")
	require.NoError(t, err)
	m := regexp.MustCompile(`(?m)^BUILD_FLAGS = (.+)$`).FindSubmatch(mk)
	require.NotNil(t, m, "Makefile sets BUILD_FLAGS")
	makeFlags := strings.ReplaceAll(string(m[1]), "$(VERSION)", "VERSION")
	require.Regexp(t, `(?m)^\s+CGO_ENABLED=0 \$\(GO\) build \$\(BUILD_FLAGS\) -o bin/weft \./cmd/weft$`, string(mk))

	df, err := os.ReadFile("../Dockerfile")
	require.NoError(t, err)
	d := regexp.MustCompile(`CGO_ENABLED=0 go build (.+) -o /out/weft \./cmd/weft`).FindSubmatch(df)
	require.NotNil(t, d, "Dockerfile builds ./cmd/weft statically")
	require.Equal(t, makeFlags, strings.ReplaceAll(string(d[1]), "${VERSION}", "VERSION"))
	require.Contains(t, makeFlags, "-trimpath")
	require.Contains(t, makeFlags, "-X main.version=VERSION")

	// Non-root by number, so that Kubernetes' runAsNonRoot can verify it.
	require.Regexp(t, `(?m)^USER [1-9][0-9]*:[1-9][0-9]*$`, string(df))
	require.Regexp(t, `(?m)^FROM gcr\.io/distroless/static`, string(df))

	compose, err := os.ReadFile("../docker-compose.yml")
	require.NoError(t, err)
	require.NotContains(t, string(compose), "dockerfile_inline", "compose builds the Dockerfile")
}
