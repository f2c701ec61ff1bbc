package lineartest

import "slices"

// AllActivities returns every session's activities in the order they were
// created: a benchmark that opened thousands of sessions reads them in one
// pass rather than session by session.
func (s *Server) AllActivities() []Activity {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.activities)
}

// Shown returns the session's activities as Linear shows them: an
// ephemeral activity stays only until the agent's next activity replaces
// it. Activities (every activity as received) is the record of what was
// sent; Shown is what a person reading the session sees.
func (s *Server) Shown(sessionID string) []Activity {
	acts := s.Activities(sessionID)
	var out []Activity
	for i, a := range acts {
		if a.Ephemeral && slices.ContainsFunc(acts[i+1:], func(b Activity) bool { return b.Type != "prompt" }) {
			continue
		}
		out = append(out, a)
	}
	return out
}

// Ephemeral returns the session's ephemeral activities as received, each
// one whether or not a later activity has replaced it since.
func Ephemeral(acts []Activity) []Activity {
	var out []Activity
	for _, a := range acts {
		if a.Ephemeral {
			out = append(out, a)
		}
	}
	return out
}
