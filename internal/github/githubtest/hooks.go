package githubtest

import (
	"bytes"
	"cmp"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/fakekit"
)

// hookTimeout is how long GitHub waits for a webhook's answer.
const hookTimeout = 10 * time.Second

// Delivery is one signed webhook request and, once sent, its answer.
type Delivery struct {
	// ID is X-GitHub-Delivery: the same on a redelivery.
	ID     string
	Event  string
	Body   []byte
	Header http.Header
	// Redelivery marks a second send of the same delivery.
	Redelivery bool
	// Status is weft's answer, 0 if the request failed.
	Status int
	Err    error
}

// Request is the delivery as an incoming request to target, for calling a
// handler's ServeHTTP directly.
func (d Delivery) Request(target string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, target, bytes.NewReader(d.Body))
	for k, v := range d.Header {
		r.Header[k] = v
	}
	return r
}

type sentHook struct {
	event string
	body  []byte
}

// hooks sends webhook deliveries to weft as GitHub does: once each, a
// redelivery only when asked (GitHub does not retry by itself).
type hooks struct {
	s      *Server
	client *http.Client

	mu   sync.Mutex
	url  string
	sent map[string]sentHook
	log  fakekit.Log[Delivery]
}

// DeliverTo sends deliveries to url (weft's /webhooks/github).
func (s *Server) DeliverTo(url string) {
	s.hooks.mu.Lock()
	defer s.hooks.mu.Unlock()
	s.hooks.url = url
}

// Deliveries is the log of deliveries sent, to read or wait on.
func (s *Server) Deliveries() *fakekit.Log[Delivery] { return &s.hooks.log }

// Sign is a delivery of event with body signed with WebhookSecret and a
// fresh delivery id, with the headers GitHub sends; it is not sent.
func (s *Server) Sign(event string, body []byte) Delivery {
	return SignWith(WebhookSecret, newGUID(), event, body)
}

// SignWith signs with another secret (a forgery, in tests) under id.
func SignWith(secret, id, event string, body []byte) Delivery {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write(body)
	return Delivery{ID: id, Event: event, Body: body, Header: http.Header{
		"Content-Type":                           {"application/json"},
		"User-Agent":                             {"GitHub-Hookshot/weft"},
		"X-Github-Event":                         {event},
		"X-Github-Delivery":                      {id},
		"X-Github-Hook-Id":                       {"1"},
		"X-Github-Hook-Installation-Target-Type": {"integration"},
		"X-Github-Hook-Installation-Target-Id":   {fmt.Sprint(AppID)},
		"X-Hub-Signature":                        {"sha1=" + hex.EncodeToString(m.Sum(nil))},
		"X-Hub-Signature-256":                    {"sha256=" + fakekit.HMACHex([]byte(secret), body)},
	}}
}

// Deliver signs payload as a delivery of event and sends it to DeliverTo's
// URL, returning it with weft's answer.
func (s *Server) Deliver(event string, payload any) Delivery {
	body, err := json.Marshal(payload)
	if err != nil {
		panic("githubtest: marshal payload: " + err.Error())
	}
	return s.DeliverBody(event, body)
}

// DeliverBody signs body, exactly as it is, as a delivery of event and
// sends it to DeliverTo's URL (a vendored example, say).
func (s *Server) DeliverBody(event string, body []byte) Delivery {
	d := s.Sign(event, body)
	s.hooks.mu.Lock()
	s.hooks.sent[d.ID] = sentHook{event: event, body: body}
	s.hooks.mu.Unlock()
	return s.hooks.send(d)
}

// Redeliver sends delivery id again, as "Redeliver" in the app's settings
// does: the same body and the same X-GitHub-Delivery.
func (s *Server) Redeliver(id string) Delivery {
	s.hooks.mu.Lock()
	h, ok := s.hooks.sent[id]
	s.hooks.mu.Unlock()
	if !ok {
		panic("githubtest: no delivery " + id)
	}
	d := SignWith(WebhookSecret, id, h.event, h.body)
	d.Redelivery = true
	return s.hooks.send(d)
}

func (h *hooks) send(d Delivery) Delivery {
	h.mu.Lock()
	url := h.url
	h.mu.Unlock()
	if url == "" {
		d.Err = fmt.Errorf("githubtest: no webhook url")
	} else {
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.Body))
		if err == nil {
			req.Header = d.Header.Clone()
			var resp *http.Response
			if resp, err = h.client.Do(req); err == nil {
				d.Status = resp.StatusCode
				_ = resp.Body.Close()
			}
		}
		d.Err = err
	}
	h.log.Add(d)
	return d
}

// newGUID is a delivery id as GitHub makes them, a random UUID.
func newGUID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	x := hex.EncodeToString(b)
	return strings.Join([]string{x[:8], x[8:12], x[12:16], x[16:20], x[20:]}, "-")
}

// installationJSON is the installation a delivery names.
func installationJSON(inst int64) map[string]any {
	return map[string]any{"id": inst, "node_id": "MDIz" + fmt.Sprint(inst)}
}

// CommentPayload is the issue_comment payload of action ("created",
// "edited", "deleted") on comment c of an issue, as installation inst's
// app receives it.
func (s *Server) CommentPayload(inst int64, action, full string, number int, c Comment) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(full)
	is := r.issues[number]
	return map[string]any{"action": action, "issue": issueJSON(r, is), "comment": commentJSON(r, is, &c),
		"repository": repoJSON(r), "sender": userJSON(cmp.Or(c.Author, Bot)), "installation": installationJSON(inst)}
}

// ReviewCommentPayload is the pull_request_review_comment payload of
// action on review comment c.
func (s *Server) ReviewCommentPayload(inst int64, action, full string, number int, c Comment) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(full)
	is := r.issues[number]
	return map[string]any{"action": action, "pull_request": pullJSON(r, is), "comment": reviewCommentJSON(r, is, &c),
		"repository": repoJSON(r), "sender": userJSON(c.Author), "installation": installationJSON(inst)}
}

// IssuesPayload is the issues payload of action by sender; assignee is
// set for assigned and unassigned.
func (s *Server) IssuesPayload(inst int64, action, full string, number int, sender User, assignee *User) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.repoLocked(full)
	p := map[string]any{"action": action, "issue": issueJSON(r, r.issues[number]), "repository": repoJSON(r),
		"sender": userJSON(sender), "installation": installationJSON(inst)}
	if assignee != nil {
		p["assignee"] = userJSON(*assignee)
	}
	return p
}

// InstallationPayload is the installation payload of action ("created",
// "deleted", "suspend", ...) for installation inst.
func (s *Server) InstallationPayload(inst int64, action string, sender User) map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	in := s.insts[inst]
	var repos []any
	for _, r := range s.repos {
		if in.repos[r.id] {
			repos = append(repos, map[string]any{"id": r.id, "node_id": "R_" + fmt.Sprint(r.id), "name": r.name,
				"full_name": r.owner + "/" + r.name, "private": r.private})
		}
	}
	return map[string]any{"action": action, "installation": map[string]any{
		"id": inst, "account": userJSON(in.account), "app_id": AppID, "app_slug": AppSlug,
		"target_type": in.account.Type, "repository_selection": "selected",
		"permissions": map[string]string{"issues": "write", "pull_requests": "write", "contents": "read", "metadata": "read"},
		"events":      []string{"issue_comment", "issues", "pull_request", "pull_request_review", "pull_request_review_comment"},
	}, "repositories": repos, "sender": userJSON(sender)}
}
