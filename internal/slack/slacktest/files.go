package slacktest

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// File is a file a user shares with a message. Its url_private is served
// by the fake as files.slack.com serves it: to a bot token of the file's
// workspace, as a Bearer; anyone else is redirected to the sign-in page.
type File struct {
	Name     string
	Mimetype string
	Content  []byte
	// Size is what the message says of the file; 0 means len(Content).
	Size int
}

// filePath is where a file is served: /files-pri/<team>-<id>/<name>.
func filePath(team, id, name string) string {
	return "/files-pri/" + team + "-" + id + "/" + url.PathEscape(name)
}

// PostFiles is a message from u sharing files (subtype file_share), as
// Post; it returns the message as stored.
func (s *Server) PostFiles(u User, channelID, threadTS, text string, files ...File) Message {
	s.mu.Lock()
	m := s.storeLocked(u, channelID, threadTS, text, nil)
	team := s.channelLocked(channelID).team
	stored := s.findLocked(channelID, m.TS)
	for _, f := range files {
		s.fileSeq++
		id := "F" + strconv.Itoa(s.fileSeq)
		if f.Size == 0 {
			f.Size = len(f.Content)
		}
		sf := sharedFile{File: f, id: id, path: filePath(team, id, f.Name), team: team}
		if s.files == nil {
			s.files = map[string]sharedFile{}
		}
		s.files[sf.path] = sf
		stored.Files = append(stored.Files, sf)
	}
	stored.Subtype = "file_share"
	m = *stored
	s.mu.Unlock()
	s.messageSent(m)
	return m
}

// sharedFile is a File as the fake holds it.
type sharedFile struct {
	File
	id, path, team string
}

// render is the file as a message event carries it.
func (f sharedFile) render(base string) map[string]any {
	return map[string]any{"id": f.id, "name": f.Name, "title": f.Name, "mimetype": f.Mimetype, "size": f.Size,
		"url_private": base + f.path, "url_private_download": base + f.path + "?download=1", "mode": "hosted"}
}

// FileDownloads are the downloads of url_private the fake answered: the
// path and the bearer token each came with.
func (s *Server) FileDownloads() []Call { return callsOf(s.calls.All(), "files-pri") }

// serveFile serves url_private: the bytes to a bot token of the file's
// workspace, the sign-in page (a redirect with redir set to the path) to
// anything else, as files.slack.com does.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request) {
	token, _ := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	s.calls.Add(Call{Method: "files-pri", Token: token, Form: url.Values{"path": {r.URL.Path}}})
	s.mu.Lock()
	f, ok := s.files[r.URL.Path]
	team := s.tokens[token]
	s.mu.Unlock()
	if !ok || token == "" || team != f.team {
		http.Redirect(w, r, "/signin?redir="+url.QueryEscape(r.URL.Path), http.StatusFound)
		return
	}
	w.Header().Set("Content-Type", f.Mimetype)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Content)))
	_, _ = w.Write(f.Content)
}

// serveSignIn is the workspace's sign-in page.
func (s *Server) serveSignIn(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte("<html><body>Sign in to slacktest</body></html>"))
}
