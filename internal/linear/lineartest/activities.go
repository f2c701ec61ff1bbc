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
