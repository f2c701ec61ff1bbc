package thread

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// TenantKind is the kind of place weft serves: a Linear workspace, a
// Discord server or a Slack workspace.
type TenantKind string

// Tenant kinds. Their strings are stored (tenants.tenant_kind).
const (
	TenantLinear  TenantKind = "linear"
	TenantDiscord TenantKind = "discord"
	TenantSlack   TenantKind = "slack"
	TenantGitHub  TenantKind = "github"
)

// Tenant is one Linear workspace (organization id), Discord server (guild
// id) or Slack workspace (team id). The zero Tenant is none: a thread
// started by the operator through the API or CLI.
type Tenant struct {
	Kind TenantKind
	ID   string
}

// SlackTenant is the tenant of a Slack workspace (team id).
func SlackTenant(teamID string) Tenant { return Tenant{Kind: TenantSlack, ID: teamID} }

// GitHubTenant is the tenant of a GitHub App installation's account (the
// user's or organization's id).
func GitHubTenant(accountID int64) Tenant {
	return Tenant{Kind: TenantGitHub, ID: strconv.FormatInt(accountID, 10)}
}

// DiscordTenant is the tenant of a Discord server (guild id).
func DiscordTenant(guildID string) Tenant { return Tenant{Kind: TenantDiscord, ID: guildID} }

// LinearTenant is the tenant of a Linear workspace (organization id).
func LinearTenant(workspaceID string) Tenant { return Tenant{Kind: TenantLinear, ID: workspaceID} }

var (
	tenantIDPattern     = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	organisationPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9_.-]{0,63}$`)
)

// Validate checks the kind is known and the id could be one.
func (t Tenant) Validate() error {
	switch t.Kind {
	case TenantLinear, TenantDiscord, TenantSlack, TenantGitHub:
	default:
		return newError(ErrInvalid, fmt.Sprintf("tenant kind must be linear, discord, slack or github, not %q", t.Kind))
	}
	if !tenantIDPattern.MatchString(t.ID) {
		return newError(ErrInvalid, "tenant id must be 1 to 64 letters, digits, '_' or '-'")
	}
	return nil
}

// String is the tenant as `weft tenant` takes it: kind:id.
func (t Tenant) String() string {
	if t.Kind == "" {
		return ""
	}
	return string(t.Kind) + ":" + t.ID
}

// OwnOrganisation is the organisation of a tenant no operator linked: its
// own, alone (as the database's tenant_organisation names it).
func (t Tenant) OwnOrganisation() string { return t.String() }

// ParseTenant reads kind:id, e.g. discord:123456789012345678.
func ParseTenant(s string) (Tenant, error) {
	kind, id, ok := strings.Cut(s, ":")
	if !ok {
		return Tenant{}, newError(ErrInvalid, fmt.Sprintf("a tenant is kind:id (linear:<organization id>, discord:<guild id> slack:<team id> or github:<account id>), not %q", s))
	}
	t := Tenant{Kind: TenantKind(kind), ID: id}
	return t, t.Validate()
}

// ValidateOrganisation checks an organisation name an operator chose: short,
// lowercase, and without ':' so it never names a tenant's own organisation.
func ValidateOrganisation(name string) error {
	if !organisationPattern.MatchString(name) {
		return newError(ErrInvalid, "an organisation name is 1 to 64 of a-z, 0-9, '_', '.', '-', starting with a letter or digit")
	}
	return nil
}
