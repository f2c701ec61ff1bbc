package discordtest

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/bwmarrin/discordgo"
)

// File is a file a user attaches to a message; the fake serves it at the
// attachment's URL, as Discord's CDN does, to anyone who asks.
type File struct {
	Name        string
	ContentType string
	Content     []byte
	// Size is what the message says of the file; 0 means len(Content).
	Size int
}

// PostUserMessageFiles is PostUserMessage with attachments.
func (s *Server) PostUserMessageFiles(channelID string, author User, content string, files ...File) *discordgo.Message {
	s.mu.Lock()
	var atts []*discordgo.MessageAttachment
	for _, f := range files {
		id := s.newIDLocked()
		path := "/attachments/" + channelID + "/" + id + "/" + url.PathEscape(f.Name)
		if s.files == nil {
			s.files = map[string]File{}
		}
		s.files[path] = f
		size := f.Size
		if size == 0 {
			size = len(f.Content)
		}
		atts = append(atts, &discordgo.MessageAttachment{ID: id, Filename: f.Name, ContentType: f.ContentType, Size: size,
			URL: s.http.URL + path + "?ex=0&is=0&hm=signed", ProxyURL: s.http.URL + path})
	}
	s.mu.Unlock()
	return s.postUserMessage(channelID, author, content, atts)
}

// FileDownloads are the paths of the attachments downloaded, in order.
func (s *Server) FileDownloads() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.downloads...)
}

func (s *Server) serveAttachment(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	f, ok := s.files[r.URL.Path]
	s.downloads = append(s.downloads, r.URL.Path)
	s.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", f.ContentType)
	w.Header().Set("Content-Length", strconv.Itoa(len(f.Content)))
	_, _ = w.Write(f.Content)
}
