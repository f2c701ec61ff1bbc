package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"text/tabwriter"
	"time"

	"github.com/weft-dev/weft/internal/app"
	"github.com/weft-dev/weft/internal/thread"
)

const tenantUsage = `usage: weft tenant link ORGANISATION KIND:ID...
       weft tenant unlink KIND:ID
       weft tenant list

A tenant is a Linear workspace (linear:<organization id>), a Discord server
(discord:<guild id>), a Slack workspace (slack:<team id>) or the GitHub
account the GitHub App is installed on (github:<account id>). link puts the
tenants in one organisation (moving any from another): they then share
memory, /continue reaches across them, and the agent reads across them.
A tenant never linked is an organisation of its own, named KIND:ID, and
shares nothing. unlink returns a tenant to that. list prints the links.
ORGANISATION is 1 to 64 of a-z, 0-9, '_', '.', '-'.
`

// tenantCmd links tenants into organisations, or lists the links.
func tenantCmd(ctx context.Context, cfg *app.Config, logger *slog.Logger, args []string, stdout, stderr io.Writer) error {
	switch {
	case len(args) >= 3 && args[0] == "link", len(args) == 2 && args[0] == "unlink", len(args) == 1 && args[0] == "list":
	default:
		return badUsage(stderr, "tenant")
	}
	var tenants []thread.Tenant
	if args[0] != "list" {
		from := map[string]int{"link": 2, "unlink": 1}[args[0]]
		for _, a := range args[from:] {
			t, err := thread.ParseTenant(a)
			if err != nil {
				return err
			}
			tenants = append(tenants, t)
		}
	}
	store, pool, err := app.Open(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer pool.Close()
	switch args[0] {
	case "link":
		if err := store.LinkTenants(ctx, args[1], tenants...); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "Linked %d tenant(s) into %s.\n", len(tenants), args[1])
		return nil
	case "unlink":
		if err := store.UnlinkTenant(ctx, tenants[0]); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s is an organisation of its own again.\n", tenants[0])
		return nil
	}
	links, err := store.TenantLinks(ctx)
	if err != nil {
		return err
	}
	if len(links) == 0 {
		fmt.Fprintln(stdout, "No tenants are linked: each is an organisation of its own.")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ORGANISATION\tTENANT\tLINKED")
	for _, l := range links {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", l.Organisation, l.Tenant, l.UpdatedAt.UTC().Format(time.RFC3339))
	}
	return tw.Flush()
}
