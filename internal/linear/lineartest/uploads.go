package lineartest

import (
	"net/http"
	"slices"
	"strconv"
)

// Upload is a file of a workspace, as uploads.linear.app keeps the images
// of issues and comments.
type Upload struct {
	ContentType string
	Content     []byte
}

// AddUpload serves content at /uploads/<organizationID>/<name> on the
// fake's host to a token of that workspace alone, as uploads.linear.app
// does; it returns the URL.
func (s *Server) AddUpload(organizationID, name string, u Upload) string {
	path := "/uploads/" + organizationID + "/" + name
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.uploads == nil {
		s.uploads = map[string]upload{}
	}
	s.uploads[path] = upload{Upload: u, org: organizationID}
	return s.srv.URL + path
}

type upload struct {
	Upload
	org string
}

// UploadRequests are the paths of the uploads asked for, in order.
func (s *Server) UploadRequests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.uploadRequests)
}

// serveUpload answers an upload: 401 without a token of its workspace.
func (s *Server) serveUpload(w http.ResponseWriter, r *http.Request) {
	org, ok := s.organization(r.Header.Get("Authorization"))
	s.mu.Lock()
	u, found := s.uploads[r.URL.Path]
	s.uploadRequests = append(s.uploadRequests, r.URL.Path)
	s.mu.Unlock()
	switch {
	case !found:
		http.NotFound(w, r)
	case !ok || org != u.org:
		http.Error(w, "Unauthorized", http.StatusUnauthorized)
	default:
		w.Header().Set("Content-Type", u.ContentType)
		w.Header().Set("Content-Length", strconv.Itoa(len(u.Content)))
		_, _ = w.Write(u.Content)
	}
}
