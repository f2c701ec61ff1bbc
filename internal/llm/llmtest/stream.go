package llmtest

import (
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

// event is one server-sent event of a streamed answer. delta marks the
// events that carry a piece of the answer (text or tool arguments): the
// ones Reply.Pace and Reply.Step space out and Reply.CutAfter counts.
type event struct {
	name  string // the SSE event field; empty for OpenAI, which sends none
	data  any    // encoded as JSON, or sent as is when a string
	delta bool
}

// stream writes events as text/event-stream, flushing each, paced and cut
// as reply says.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, p wire, events []event, reply Reply) {
	cutAfter := reply.CutAfter
	if reply.Cut && cutAfter == 0 {
		n := 0
		for _, e := range events {
			if e.delta {
				n++
			}
		}
		cutAfter = max(1, n/2)
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	sent := 0
	for _, e := range events {
		if e.delta {
			if cutAfter > 0 && sent == cutAfter {
				cut(rc)
				return
			}
			if reply.ErrorAfter > 0 && sent == reply.ErrorAfter {
				if writeEvent(w, p.streamError()) {
					_ = rc.Flush()
				}
				return
			}
			if sent > 0 && !s.pace(r, reply) {
				return
			}
			sent++
		}
		if !writeEvent(w, e) || rc.Flush() != nil {
			return
		}
	}
}

// pace waits between two deltas; false means the client or the server went
// away meanwhile.
func (s *Server) pace(r *http.Request, reply Reply) bool {
	if reply.Pace > 0 {
		elapsed := make(chan struct{})
		t := time.AfterFunc(reply.Pace, func() { close(elapsed) })
		defer t.Stop()
		if !s.await(r.Context(), elapsed) {
			return false
		}
	}
	if reply.Step != nil {
		select {
		case <-reply.Step:
		case <-r.Context().Done():
			return false
		case <-s.done:
			panic(http.ErrAbortHandler)
		}
	}
	return true
}

func writeEvent(w http.ResponseWriter, e event) bool {
	var b strings.Builder
	if e.name != "" {
		b.WriteString("event: " + e.name + "\n")
	}
	data, ok := e.data.(string)
	if !ok {
		raw, err := json.Marshal(e.data)
		if err != nil {
			return false
		}
		data = string(raw)
	}
	b.WriteString("data: " + data + "\n\n")
	_, err := w.Write([]byte(b.String()))
	return err == nil
}

// cut drops the connection mid-stream, as a proxy or provider dying would.
func cut(rc *http.ResponseController) {
	_ = rc.Flush()
	conn, _, err := rc.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	_ = conn.Close()
}

// pieces splits s into deltas of n runes, or into words (each with the
// spaces after it) when n is 0. An empty s is no pieces.
func pieces(s string, n int) []string {
	var out []string
	if n <= 0 {
		for s != "" {
			i := strings.IndexByte(s, ' ')
			if i < 0 {
				return append(out, s)
			}
			j := i
			for j < len(s) && s[j] == ' ' {
				j++
			}
			out = append(out, s[:j])
			s = s[j:]
		}
		return out
	}
	r := []rune(s)
	for len(r) > 0 {
		k := min(n, len(r))
		out = append(out, string(r[:k]))
		r = r[k:]
	}
	return out
}

// argPieces splits tool arguments: by reply.Chunk runes, or in pieces of
// eight when the text goes by words, so a call spans several deltas.
func argPieces(args string, chunk int) []string {
	if chunk <= 0 {
		chunk = 8
	}
	return pieces(args, chunk)
}
