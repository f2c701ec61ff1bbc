package thread

import (
	"fmt"
	"regexp"
	"strings"
	"time"
)

// ModelRef names a model at a provider, as `weft org set` takes it:
// "anthropic/claude-sonnet-4-5". The provider is the first segment, so a
// model name may hold slashes of its own ("openai/meta-llama/Llama-3").
// The zero ModelRef is none: the global model.
type ModelRef struct {
	Provider, Name string
}

var providerPattern = regexp.MustCompile(`^[a-z]{1,32}$`)

// maxModelName bounds a model's name (the database holds it to this).
const maxModelName = 200

// ParseModelRef reads provider/model. Whether weft knows the provider is
// the llm package's to say.
func ParseModelRef(s string) (ModelRef, error) {
	p, name, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok || !providerPattern.MatchString(p) || name == "" || len(name) > maxModelName ||
		strings.ContainsFunc(name, func(r rune) bool { return r < ' ' || r == 0x7f }) {
		return ModelRef{}, newError(ErrInvalid, fmt.Sprintf("a model is provider/model, such as anthropic/claude-sonnet-4-5, not %q", s))
	}
	return ModelRef{Provider: p, Name: name}, nil
}

// String is the model as ParseModelRef reads it; "" for none.
func (m ModelRef) String() string {
	if m.IsZero() {
		return ""
	}
	return m.Provider + "/" + m.Name
}

// IsZero reports whether m names no model.
func (m ModelRef) IsZero() bool { return m == ModelRef{} }

// MaxPersona bounds an organisation's persona, in bytes (the database
// holds it to this): it opens every system prompt of its threads.
const MaxPersona = 64 << 10

// OrgSettings are what an organisation chose for its agent (`weft org
// set`). An empty setting is the global one.
type OrgSettings struct {
	Organisation string
	// Model answers its conversations; FastModel ranks relevant threads.
	Model, FastModel ModelRef
	// Persona opens the system prompt of its new threads.
	Persona   string
	UpdatedAt time.Time
}

// IsZero reports whether s sets nothing.
func (s OrgSettings) IsZero() bool {
	return s.Model.IsZero() && s.FastModel.IsZero() && s.Persona == ""
}

// CheckOrganisation checks that name can name an organisation: one an
// operator chose (ValidateOrganisation) or a tenant's own, kind:id.
func CheckOrganisation(name string) error {
	if strings.Contains(name, ":") {
		t, err := ParseTenant(name)
		if err != nil {
			return err
		}
		return t.Validate()
	}
	return ValidateOrganisation(name)
}
