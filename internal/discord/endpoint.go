package discord

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// discordHost is the host discordgo's endpoint variables point at.
const discordHost = "discord.com"

// rewriteTransport sends requests meant for discord.com to another base URL,
// and can answer the gateway lookup itself. discordgo's endpoints are package
// variables computed at init (discord.md §1.9); changing them would affect
// every session in the process and race in parallel tests, whereas a
// transport is per session.
type rewriteTransport struct {
	base       *url.URL // scheme, host and optional path prefix; nil keeps discord.com
	gatewayURL string   // answer to GET /gateway and /gateway/bot; "" asks the API
	next       http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *rewriteTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL.Host != discordHost {
		return t.next.RoundTrip(req)
	}
	if t.gatewayURL != "" && req.Method == http.MethodGet && isGatewayPath(req.URL.Path) {
		return gatewayAnswer(req, t.gatewayURL), nil
	}
	if t.base == nil {
		return t.next.RoundTrip(req)
	}
	out := req.Clone(req.Context())
	out.URL.Scheme = t.base.Scheme
	out.URL.Host = t.base.Host
	out.URL.Path = strings.TrimSuffix(t.base.Path, "/") + req.URL.Path
	out.URL.RawPath = ""
	out.Host = ""
	return t.next.RoundTrip(out)
}

// isGatewayPath reports whether path is the gateway lookup, with or without
// the bot variant.
func isGatewayPath(path string) bool {
	return strings.HasSuffix(path, "/gateway") || strings.HasSuffix(path, "/gateway/bot")
}

// gatewayAnswer is a Get Gateway (Bot) response naming url.
func gatewayAnswer(req *http.Request, url string) *http.Response {
	body, _ := json.Marshal(map[string]any{
		"url":    url,
		"shards": 1,
		"session_start_limit": map[string]int{
			"total": 1000, "remaining": 1000, "reset_after": 0, "max_concurrency": 1,
		},
	})
	return &http.Response{
		Status:        "200 OK",
		StatusCode:    http.StatusOK,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        http.Header{"Content-Type": []string{"application/json"}},
		Body:          io.NopCloser(bytes.NewReader(body)),
		ContentLength: int64(len(body)),
		Request:       req,
	}
}
