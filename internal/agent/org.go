package agent

import (
	"context"
	"fmt"

	"github.com/weft-dev/weft/internal/llm"
	"github.com/weft-dev/weft/internal/thread"
)

type orgKey struct{}

// WithOrg gives the turn run with ctx its thread's organisation and what
// it chose for its agent (`weft org set`): its model answers, its fast
// model ranks (whoever asks the fast model reads it with OrgOf), and only
// the tools offered to it are offered. A turn without one runs on the
// runner's model with every tool.
func WithOrg(ctx context.Context, org thread.OrgSettings) context.Context {
	return context.WithValue(ctx, orgKey{}, org)
}

// OrgOf is the organisation WithOrg gave ctx; the zero settings (the
// operator's organisation, "") without.
func OrgOf(ctx context.Context) thread.OrgSettings {
	org, _ := ctx.Value(orgKey{}).(thread.OrgSettings)
	return org
}

// model is the provider and model that answer the turn run with ctx: its
// organisation's when it chose one, the runner's otherwise.
func (r *Runner) model(ctx context.Context) (llm.Provider, string, error) {
	org := OrgOf(ctx)
	if org.Model.IsZero() || r.Models == nil {
		return r.LLM, r.Model, nil
	}
	p, err := r.Models(org.Model.Provider)
	if err != nil {
		return nil, "", fmt.Errorf("the model %s that organisation %s chose cannot be used: %w", org.Model, org.Organisation, err)
	}
	return p, org.Model.Name, nil
}
