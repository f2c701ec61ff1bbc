package ingest_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

// TestPersona: WEFT_PERSONA (Deps.Persona) opens new threads' system
// prompts in place of the default; unset, the default does.
func TestPersona(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, tc := range []struct{ name, persona, want string }{
		{"Configured", "You are Ada, Acme's release engineer.", "You are Ada, Acme's release engineer."},
		{"Default", "", thread.DefaultPersona},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := newLinearBundle(t, dbtest.NewPool(t), dbtest.Logger(t), tc.persona)
			th, err := b.ing.StartThread(ctx, b.ing.Builder().WithGoal("write the standup"))
			require.NoError(t, err)
			ss, err := b.store.Stitches(ctx, th.ID, db.StitchPage{})
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(ss[0].Content, tc.want), ss[0].Content)
		})
	}
}
