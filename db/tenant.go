package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// TenantLink is a tenant an operator put in an organisation.
type TenantLink struct {
	Tenant       thread.Tenant
	Organisation string
	UpdatedAt    time.Time
}

// LinkTenants puts each tenant in organisation, in one transaction, moving
// any already in another.
func (s *Store) LinkTenants(ctx context.Context, organisation string, tenants ...thread.Tenant) error {
	if err := thread.ValidateOrganisation(organisation); err != nil {
		return err
	}
	for _, t := range tenants {
		if err := t.Validate(); err != nil {
			return err
		}
	}
	return s.InTx(ctx, func(ctx context.Context, tx *Tx) error {
		for _, t := range tenants {
			err := tx.gen.LinkTenant(ctx, dbsqlc.LinkTenantParams{TenantKind: string(t.Kind), TenantID: t.ID, Organisation: organisation})
			if err != nil {
				return fmt.Errorf("link tenant %s: %w", t, translate(err))
			}
		}
		return nil
	})
}

// UnlinkTenant returns a tenant to an organisation of its own. A tenant not
// linked fails with thread.ErrNotFound.
func (q *Queries) UnlinkTenant(ctx context.Context, t thread.Tenant) error {
	n, err := q.gen.UnlinkTenant(ctx, dbsqlc.UnlinkTenantParams{TenantKind: string(t.Kind), TenantID: t.ID})
	if err != nil {
		return fmt.Errorf("unlink tenant %s: %w", t, translate(err))
	}
	if n == 0 {
		return fmt.Errorf("unlink tenant %s: %w", t, thread.ErrNotFound)
	}
	return nil
}

// TenantLinks lists the linked tenants by organisation.
func (q *Queries) TenantLinks(ctx context.Context) ([]TenantLink, error) {
	rows, err := q.gen.ListTenants(ctx)
	if err != nil {
		return nil, fmt.Errorf("list tenants: %w", translate(err))
	}
	out := make([]TenantLink, 0, len(rows))
	for _, r := range rows {
		out = append(out, TenantLink{
			Tenant:       thread.Tenant{Kind: thread.TenantKind(r.TenantKind), ID: r.TenantID},
			Organisation: r.Organisation, UpdatedAt: r.UpdatedAt,
		})
	}
	return out, nil
}

// Organisation is the organisation a tenant belongs to: the one it was
// linked into, else its own (t.OwnOrganisation()). The zero tenant is the
// operator's, "". Slack code calls it with thread.SlackTenant(teamID).
func (q *Queries) Organisation(ctx context.Context, t thread.Tenant) (string, error) {
	org, err := q.gen.TenantOrganisation(ctx, dbsqlc.TenantOrganisationParams{TenantKind: string(t.Kind), TenantID: t.ID})
	if err != nil {
		return "", fmt.Errorf("organisation of %s: %w", t, translate(err))
	}
	return org, nil
}

// ThreadTenant returns the tenant a thread lives in and its organisation;
// the zero tenant and "" for a thread on no platform (the operator's).
func (q *Queries) ThreadTenant(ctx context.Context, threadID uuid.UUID) (thread.Tenant, string, error) {
	row, err := q.gen.ThreadTenant(ctx, threadID)
	if errors.Is(err, pgx.ErrNoRows) {
		return thread.Tenant{}, "", nil
	}
	if err != nil {
		return thread.Tenant{}, "", fmt.Errorf("tenant of thread %s: %w", threadID, translate(err))
	}
	return thread.Tenant{Kind: thread.TenantKind(row.TenantKind), ID: row.TenantID}, row.Organisation, nil
}
