package linear

import (
	"html"
	"strings"
)

// InitialPrompt is the text that starts the agent's work on a created
// session: Linear's promptContext when present, which already holds the
// issue, the thread and the guidance. Otherwise it renders the structured
// fields in the same tagged shape, so the agent's prompt reads alike either
// way. For prompted events it is the user's message.
func (e *AgentSessionEvent) InitialPrompt() string {
	if e.Prompt != nil {
		return e.Prompt.Body
	}
	if strings.TrimSpace(e.PromptContext) != "" {
		return e.PromptContext
	}
	var b strings.Builder
	if in := e.Issue; in != nil {
		b.WriteString(`<issue identifier="` + attr(in.Identifier) + "\">\n")
		b.WriteString("<title>" + in.Title + "</title>\n")
		if in.Description != "" {
			b.WriteString("<description>" + in.Description + "</description>\n")
		}
		if in.TeamName != "" {
			b.WriteString(`<team name="` + attr(in.TeamName) + "\"/>\n")
		}
		b.WriteString("</issue>\n")
	}
	if e.Comment != nil || len(e.PreviousComments) > 0 {
		id := ""
		if e.Comment != nil {
			id = e.Comment.ID
		}
		b.WriteString(`<primary-directive-thread comment-id="` + attr(id) + "\">\n")
		if e.Comment != nil {
			e.writeComment(&b, *e.Comment)
		}
		for _, c := range e.PreviousComments {
			if e.Comment == nil || c.ID != e.Comment.ID {
				e.writeComment(&b, c)
			}
		}
		b.WriteString("</primary-directive-thread>\n")
	}
	if len(e.Guidance) > 0 {
		b.WriteString("<guidance>\n")
		for _, g := range e.Guidance {
			b.WriteString(`<guidance-rule origin="` + attr(g.Origin) + `"`)
			if g.TeamName != "" {
				b.WriteString(` team-name="` + attr(g.TeamName) + `"`)
			}
			b.WriteString(">" + g.Body + "</guidance-rule>\n")
		}
		b.WriteString("</guidance>\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// writeComment names the author when the webhook says who it is: only the
// session's creator comes with a name.
func (e *AgentSessionEvent) writeComment(b *strings.Builder, c CommentRef) {
	b.WriteString("<comment")
	if e.Creator != nil && c.UserID == e.Creator.ID {
		b.WriteString(` author="` + attr(e.Creator.Name) + `"`)
	}
	b.WriteString(">" + c.Body + "</comment>\n")
}

// attr escapes a value for an attribute; bodies stay Markdown as written,
// as in Linear's own promptContext.
func attr(s string) string { return html.EscapeString(s) }
