package api

import (
	"crypto/sha256"
	"crypto/subtle"
	"net/http"
	"strings"

	"github.com/weft-dev/weft/internal/httpapi"
)

// requireToken lets a request through only with "Authorization: Bearer
// <token>". Both sides are hashed before the constant-time comparison, so
// neither the token's bytes nor its length leak through timing.
func requireToken(token string) func(http.Handler) http.Handler {
	want := sha256.Sum256([]byte(token))
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if token == "" {
				httpapi.Encode(w, http.StatusServiceUnavailable, httpapi.ErrorBody{
					Error: "the API is off: WEFT_API_TOKEN is not set", Code: httpapi.CodeUnavailable, RequestID: httpapi.RequestID(r.Context()),
				})
				return
			}
			got, ok := bearer(r)
			sum := sha256.Sum256([]byte(got))
			if !ok || subtle.ConstantTimeCompare(sum[:], want[:]) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="weft"`)
				httpapi.Encode(w, http.StatusUnauthorized, httpapi.ErrorBody{
					Error: "missing or invalid bearer token", Code: httpapi.CodeUnauthorized, RequestID: httpapi.RequestID(r.Context()),
				})
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// bearer reads the token of an Authorization header; the scheme is
// case-insensitive (RFC 9110 §11.1).
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}
