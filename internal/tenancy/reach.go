// Package tenancy is the organisation boundary's policy: Reach decides
// which threads a conversation's tools may read, so that nothing carries
// one organisation's conversation into another's. Tenants and
// organisations themselves are thread.Tenant, stored and resolved by db.
package tenancy

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/weft-dev/weft/db"
	"github.com/weft-dev/weft/internal/thread"
)

// ReachStore is what Reach reads of stored threads. *db.Store implements it.
type ReachStore interface {
	Organisations
	Thread(ctx context.Context, id uuid.UUID) (*thread.Thread, error)
}

// Organisations finds which organisation a thread or a tenant belongs to.
// *db.Store implements it.
type Organisations interface {
	// ThreadTenant returns a thread's tenant and organisation: none and ""
	// for a thread on no platform.
	ThreadTenant(ctx context.Context, threadID uuid.UUID) (thread.Tenant, string, error)
	// Organisation returns a tenant's organisation: linked, else its own.
	Organisation(ctx context.Context, t thread.Tenant) (string, error)
}

var _ ReachStore = (*db.Store)(nil)

// Locator finds the organisation of a conversation named by a platform's
// own id rather than weft's (a platform's thread id): found is false when
// target is not such an id or names nothing the platform knows, for the
// reader to answer; org "" is a conversation of no organisation, out of
// reach of every tenant. A missing conversation may also fail wrapping
// thread.ErrNotFound. Each platform with such ids has one.
type Locator func(ctx context.Context, target string) (org string, found bool, err error)

// Locate names the tenant a conversation reads in, given the asker's own
// tenant (a platform may take it as the default), or fails wrapping
// thread.ErrNotFound when it knows of none.
type Locate func(ctx context.Context, asker thread.Tenant) (thread.Tenant, error)

// ErrOutOfReach refuses a conversation another organisation's thread.
var ErrOutOfReach = errors.New("that thread belongs to another organisation than this conversation")

// Reach decides which threads a conversation's tools may read, so that a
// model (or text injected into its context) cannot carry one organisation's
// conversation into another's: its own thread, and threads (weft's, or a
// platform's that its Locators find) of its organisation. A tenant no
// operator linked is an organisation of its own. A conversation on no
// platform (the CLI, the API) is the operator's and reads any thread, as
// the REST API and MCP do.
type Reach struct {
	Store ReachStore
	// Locators find the conversations named by a platform's own ids, asked
	// in turn; without one, only weft's thread ids are known.
	Locators []Locator
}

// Check returns nil when the conversation of thread from may read target
// (a weft thread id or a platform's, as its Locator knows it), and
// ErrOutOfReach when it may not. A target that is no thread at all is left
// to the reader to refuse.
func (r *Reach) Check(ctx context.Context, from uuid.UUID, target string) error {
	if target == "" || target == from.String() {
		return nil
	}
	_, mine, err := r.Store.ThreadTenant(ctx, from)
	if err != nil || mine == "" {
		return err
	}
	theirs, found, err := r.resolve(ctx, target)
	if err != nil || !found {
		return err
	}
	if theirs != mine {
		return ErrOutOfReach
	}
	return nil
}

// Within decides whether the conversation of thread from may read in the
// tenant locate names, and returns that tenant: it must be of the asker's
// organisation, and one locate knows of none is out of reach
// (ErrOutOfReach). A conversation on no platform is the operator's and
// reads in any tenant: locate is not asked, and the zero Tenant leaves the
// choice to the reader.
func (r *Reach) Within(ctx context.Context, from uuid.UUID, locate Locate) (thread.Tenant, error) {
	asker, mine, err := r.Store.ThreadTenant(ctx, from)
	if err != nil || mine == "" {
		return thread.Tenant{}, err
	}
	t, err := locate(ctx, asker)
	switch {
	case errors.Is(err, thread.ErrNotFound):
		return thread.Tenant{}, ErrOutOfReach
	case err != nil:
		return thread.Tenant{}, err
	}
	theirs, err := r.Store.Organisation(ctx, t)
	if err != nil {
		return thread.Tenant{}, err
	}
	if theirs != mine {
		return thread.Tenant{}, ErrOutOfReach
	}
	return t, nil
}

// resolve finds the organisation of target: a stored thread's, or that of
// the conversation the first Locator to know it finds. found is false when
// there is neither.
func (r *Reach) resolve(ctx context.Context, target string) (org string, found bool, err error) {
	if parsed, perr := uuid.Parse(target); perr == nil {
		if _, err := r.Store.Thread(ctx, parsed); err != nil {
			return "", false, ignoreNotFound(err)
		}
		_, org, err := r.Store.ThreadTenant(ctx, parsed)
		return org, err == nil, err
	}
	for _, locate := range r.Locators {
		org, found, err := locate(ctx, target)
		if err = ignoreNotFound(err); err != nil || found {
			return org, found, err
		}
	}
	return "", false, nil
}

// ignoreNotFound lets a missing thread through to the reader, which
// answers it as not found.
func ignoreNotFound(err error) error {
	if errors.Is(err, thread.ErrNotFound) {
		return nil
	}
	return err
}
