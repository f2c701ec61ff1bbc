package db

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/weft-dev/weft/db/internal/dbsqlc"
	"github.com/weft-dev/weft/internal/thread"
)

// Organisation is an organisation an operator named (tenants linked into
// it, or settings of its own), with its tenants and settings.
type Organisation struct {
	thread.OrgSettings
	// Tenants are the tenants linked into it, as kind:id.
	Tenants []string
}

// UpdateOrgSettings changes an organisation's settings under their row
// lock: change gets them as stored (the zero settings when none are) and
// edits them. Settings left with nothing set are deleted, so the
// organisation is on the global ones again.
func (s *Store) UpdateOrgSettings(ctx context.Context, organisation string, change func(*thread.OrgSettings) error) (thread.OrgSettings, error) {
	if err := thread.CheckOrganisation(organisation); err != nil {
		return thread.OrgSettings{}, err
	}
	var out thread.OrgSettings
	err := s.InTx(ctx, func(ctx context.Context, tx *Tx) error {
		row, err := tx.gen.OrgSettingsForUpdate(ctx, organisation)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
			out = thread.OrgSettings{Organisation: organisation}
		case err != nil:
			return translate(err)
		default:
			out = orgSettingsOf(row)
		}
		if err := change(&out); err != nil {
			return err
		}
		out.Organisation = organisation
		if out.IsZero() {
			out.UpdatedAt = time.Time{}
			return translate(tx.gen.DeleteOrgSettings(ctx, organisation))
		}
		row, err = tx.gen.PutOrgSettings(ctx, dbsqlc.PutOrgSettingsParams{Organisation: organisation,
			Provider: out.Model.Provider, Model: out.Model.Name, FastProvider: out.FastModel.Provider, FastModel: out.FastModel.Name,
			Persona: out.Persona})
		if err != nil {
			return translate(err)
		}
		out = orgSettingsOf(row)
		return nil
	})
	if err != nil {
		return thread.OrgSettings{}, fmt.Errorf("organisation %s: %w", organisation, err)
	}
	return out, nil
}

// Organisations lists the organisations an operator named, by name: those
// tenants were linked into and those with settings.
func (q *Queries) Organisations(ctx context.Context) ([]Organisation, error) {
	return q.organisations(ctx, nil)
}

// OrganisationOf is one organisation as Organisations lists it; one
// nobody named (no tenant linked, no settings) has only its name.
func (q *Queries) OrganisationOf(ctx context.Context, name string) (Organisation, error) {
	if err := thread.CheckOrganisation(name); err != nil {
		return Organisation{}, err
	}
	list, err := q.organisations(ctx, &name)
	if err != nil || len(list) == 0 {
		return Organisation{OrgSettings: thread.OrgSettings{Organisation: name}}, err
	}
	return list[0], nil
}

func (q *Queries) organisations(ctx context.Context, only *string) ([]Organisation, error) {
	rows, err := q.gen.Organisations(ctx, only)
	if err != nil {
		return nil, fmt.Errorf("list organisations: %w", translate(err))
	}
	out := make([]Organisation, 0, len(rows))
	for _, r := range rows {
		o := Organisation{Tenants: r.Tenants, OrgSettings: thread.OrgSettings{Organisation: r.Organisation,
			Model:     thread.ModelRef{Provider: r.Provider, Name: r.Model},
			FastModel: thread.ModelRef{Provider: r.FastProvider, Name: r.FastModel},
			Persona:   r.Persona}}
		if r.UpdatedAt != nil {
			o.UpdatedAt = *r.UpdatedAt
		}
		out = append(out, o)
	}
	return out, nil
}

func orgSettingsOf(r dbsqlc.OrganisationSetting) thread.OrgSettings {
	return thread.OrgSettings{Organisation: r.Organisation,
		Model:     thread.ModelRef{Provider: r.Provider, Name: r.Model},
		FastModel: thread.ModelRef{Provider: r.FastProvider, Name: r.FastModel},
		Persona:   r.Persona, UpdatedAt: r.UpdatedAt}
}
