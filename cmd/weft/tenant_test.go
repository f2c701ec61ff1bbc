package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
)

func TestTenantLinkListUnlink(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := env(map[string]string{"DATABASE_URL": dbtest.URL(t), "WEFT_LOG_LEVEL": "error"})
	tenant := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(ctx, append([]string{"weft", "tenant"}, args...), e, &out, &bytes.Buffer{})
		return out.String(), err
	}
	out, err := tenant("list")
	require.NoError(t, err)
	require.Contains(t, out, "No tenants are linked")

	out, err = tenant("link", "acme", "linear:org-1", "discord:100000000000000001", "slack:T0123")
	require.NoError(t, err)
	require.Contains(t, out, "Linked 3 tenant(s) into acme.")
	out, err = tenant("list")
	require.NoError(t, err)
	require.Regexp(t, `(?m)^acme\s+discord:100000000000000001\s`, out)
	require.Regexp(t, `(?m)^acme\s+linear:org-1\s`, out)
	require.Regexp(t, `(?m)^acme\s+slack:T0123\s`, out)

	out, err = tenant("unlink", "slack:T0123")
	require.NoError(t, err)
	require.Contains(t, out, "slack:T0123 is an organisation of its own again.")
	out, err = tenant("list")
	require.NoError(t, err)
	require.NotContains(t, out, "slack:T0123")

	for _, bad := range [][]string{{}, {"link", "acme"}, {"unlink"}, {"list", "x"}, {"rename"}} {
		_, err := tenant(bad...)
		require.ErrorIs(t, err, errUsage, "%v", bad)
	}
	for _, bad := range [][]string{{"link", "acme", "teams:1"}, {"link", "acme", "org-1"}, {"link", "Not Valid", "linear:org-1"}, {"unlink", "linear:nobody"}} {
		_, err := tenant(bad...)
		require.Error(t, err, "%v", bad)
		require.NotErrorIs(t, err, errUsage, "%v", bad)
	}
}
