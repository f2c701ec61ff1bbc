package db_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/db/dbtest"
	"github.com/weft-dev/weft/internal/thread"
)

func TestTenants(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	store := dbtest.NewStore(t)
	lin, dis, slk := thread.LinearTenant("org-1"), thread.DiscordTenant("100000000000000001"), thread.SlackTenant("T0123")

	t.Run("UnlinkedIsItsOwn", func(t *testing.T) {
		for _, tn := range []thread.Tenant{lin, dis, slk} {
			org, err := store.Organisation(ctx, tn)
			require.NoError(t, err)
			require.Equal(t, tn.OwnOrganisation(), org)
		}
		org, err := store.Organisation(ctx, thread.Tenant{})
		require.NoError(t, err)
		require.Empty(t, org, "no tenant is the operator's")
	})

	t.Run("ThreadTenant", func(t *testing.T) {
		lt := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Linear: dbtest.LinearAttachment()})
		datt := dbtest.DiscordAttachment()
		dt := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Discord: datt})
		st := dbtest.Thread(ctx, t, store, &dbtest.ThreadOpts{Slack: &thread.SlackAttachment{
			TeamID: "T0123", ChannelID: "C0123", ThreadTS: "1700000000.000100", CreatedBy: "U0123"}})
		auto := dbtest.Thread(ctx, t, store, nil)
		for _, tt := range []struct {
			name string
			id   [16]byte
			want thread.Tenant
		}{
			{"Linear", lt.ID, thread.LinearTenant("org-1")},
			{"Discord", dt.ID, thread.DiscordTenant(datt.GuildID)},
			{"Slack", st.ID, thread.SlackTenant("T0123")},
			{"NoPlatform", auto.ID, thread.Tenant{}},
		} {
			got, org, err := store.ThreadTenant(ctx, tt.id)
			require.NoError(t, err, tt.name)
			require.Equal(t, tt.want, got, tt.name)
			require.Equal(t, tt.want.OwnOrganisation(), org, tt.name)
		}
	})

	t.Run("LinkListUnlink", func(t *testing.T) {
		require.NoError(t, store.LinkTenants(ctx, "acme", lin, dis, slk))
		for _, tn := range []thread.Tenant{lin, dis, slk} {
			org, err := store.Organisation(ctx, tn)
			require.NoError(t, err)
			require.Equal(t, "acme", org)
		}
		// Relinking moves a tenant.
		require.NoError(t, store.LinkTenants(ctx, "globex", slk))
		links, err := store.TenantLinks(ctx)
		require.NoError(t, err)
		var got []string
		for _, l := range links {
			got = append(got, l.Organisation+"="+l.Tenant.String())
		}
		require.Equal(t, []string{"acme=discord:100000000000000001", "acme=linear:org-1", "globex=slack:T0123"}, got)
		require.NoError(t, store.UnlinkTenant(ctx, slk))
		org, err := store.Organisation(ctx, slk)
		require.NoError(t, err)
		require.Equal(t, "slack:T0123", org)
		require.ErrorIs(t, store.UnlinkTenant(ctx, slk), thread.ErrNotFound)
	})

	t.Run("Invalid", func(t *testing.T) {
		for _, tt := range []struct {
			org string
			t   thread.Tenant
		}{
			{"acme", thread.Tenant{Kind: "teams", ID: "x"}},
			{"acme", thread.Tenant{Kind: thread.TenantDiscord, ID: ""}},
			{"acme", thread.Tenant{Kind: thread.TenantDiscord, ID: "1; DROP TABLE tenants"}},
			{"discord:1", dis}, // a tenant's own name cannot be taken
			{"Acme", dis},
			{"", dis},
		} {
			require.ErrorIs(t, store.LinkTenants(ctx, tt.org, tt.t), thread.ErrInvalid, "%s %v", tt.org, tt.t)
		}
	})
}
