package console

import (
	"net/http"
	"time"
)

// orgsView is the organisations page: the global agent, then each
// organisation an operator named with what it set of its own.
type orgsView struct {
	Global orgView
	Orgs   []orgView
}

// orgView is one organisation's agent as its conversations get it: each
// setting its own, or the global one (Own* false).
type orgView struct {
	Name                          string
	Tenants                       []string
	Model, FastModel, Persona     string
	OwnModel, OwnFast, OwnPersona bool
	Servers                       []string
	// UpdatedAt is when its settings last changed; zero: never set.
	UpdatedAt time.Time
}

func (c *Console) organisations(w http.ResponseWriter, r *http.Request) {
	orgs, err := c.d.Store.Organisations(r.Context())
	if err != nil {
		c.fail(w, r, err)
		return
	}
	g := c.d.Agent
	servers := func(org string) []string {
		if g.Servers == nil {
			return nil
		}
		return g.Servers(org)
	}
	v := orgsView{Global: orgView{Name: "global", Model: g.Model, FastModel: g.FastModel, Persona: g.Persona, Servers: servers("")}}
	for _, o := range orgs {
		ov := orgView{Name: o.Organisation, Tenants: o.Tenants, Model: g.Model, FastModel: g.FastModel, Persona: g.Persona,
			Servers: servers(o.Organisation), UpdatedAt: o.UpdatedAt}
		if !o.Model.IsZero() {
			ov.Model, ov.OwnModel = o.Model.String(), true
		}
		if !o.FastModel.IsZero() {
			ov.FastModel, ov.OwnFast = o.FastModel.String(), true
		}
		if o.Persona != "" {
			ov.Persona, ov.OwnPersona = o.Persona, true
		}
		v.Orgs = append(v.Orgs, ov)
	}
	c.render(w, r, http.StatusOK, "organisations", v)
}
