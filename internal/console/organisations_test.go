package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/thread"
)

// organisations names acme (its own model and a persona with a script in
// it) and globex (linked tenants, nothing set).
func (g *rig) organisations(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	const persona = `You are Acme's release agent. <script>document.title="pwned"</script>` + "\nAnswer in one line."
	_, err := g.store.UpdateOrgSettings(ctx, "acme", func(s *thread.OrgSettings) error {
		s.Model, s.Persona = thread.ModelRef{Provider: "anthropic", Name: "claude-sonnet-4-5"}, persona+strings.Repeat(" More.", 40)
		return nil
	})
	require.NoError(t, err)
	require.NoError(t, g.store.LinkTenants(ctx, "globex", thread.SlackTenant("T1"), thread.LinearTenant("org-2")))
	return persona
}

func TestOrganisationsPage(t *testing.T) {
	g := newRig(t)
	c := client(t)
	login(t, g, c)
	_, page := get(t, c, g.srv.URL+"/console/organisations")
	require.Contains(t, page, "No organisation is named yet")

	g.organisations(t)
	resp, page := get(t, c, g.srv.URL+"/console/organisations")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	row := func(id string) string {
		m := regexp.MustCompile(`(?s)<tr id="org-` + id + `">(.*?)</tr>`).FindStringSubmatch(page)
		require.NotNil(t, m, id)
		return m[1]
	}
	acme := row("acme")
	require.Contains(t, acme, "<strong>anthropic/claude-sonnet-4-5</strong>")
	require.Contains(t, acme, "openai/gpt-4o-mini (global)")
	require.Contains(t, acme, "You are Acme&#39;s release agent. &lt;script&gt;")
	require.Contains(t, acme, "whole persona", "a long persona is excerpted")
	require.Contains(t, acme, "deploys, shared")
	require.Contains(t, acme, "none linked")
	globex := row("globex")
	require.Contains(t, globex, "linear:org-2, slack:T1")
	require.Contains(t, globex, "openai/gpt-4o (global)")
	require.Contains(t, globex, ">global<", "its persona is the global one")
	require.Contains(t, globex, "never")
	require.NotContains(t, globex, "deploys")
	require.NotContains(t, page, "<script>document")

	resp, _ = get(t, client(t), g.srv.URL+"/console/organisations")
	require.Equal(t, http.StatusSeeOther, resp.StatusCode, "logged out, the page sends to the login")
}

// TestBrowserOrganisations opens the organisations page from the
// console's navigation in a real browser.
func TestBrowserOrganisations(t *testing.T) {
	ctx := browser(t)
	g := newRig(t)
	g.organisations(t)
	require.NoError(t, chromedp.Do(ctx,
		chromedp.Navigate(g.srv.URL+"/console/"),
		chromedp.WaitVisible(chromedp.ID("token")),
		chromedp.SendKeys(chromedp.ID("token"), token),
		chromedp.Click(chromedp.ID("login")),
		chromedp.WaitVisible(chromedp.ID("threads")),
		chromedp.Click(`//nav/a[text()="Organisations"]`),
		chromedp.WaitVisible(chromedp.ID("org-acme")),
	), "open the organisations page")
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#org-acme td")].map(e => e.innerText.trim())`))
	require.NoError(t, err)
	require.Equal(t, "acme", cells[0])
	require.Equal(t, "anthropic/claude-sonnet-4-5", cells[2])
	require.Equal(t, "openai/gpt-4o-mini (global)", cells[3])
	require.True(t, strings.HasPrefix(cells[4], `You are Acme's release agent. <script>`), cells[4])
	require.Equal(t, "deploys, shared", cells[5])
	title, err := chromedp.Run(ctx, chromedp.Title())
	require.NoError(t, err)
	require.NotEqual(t, "pwned", title)
	g.screenshot(ctx, t, "console-organisations.png")
}
