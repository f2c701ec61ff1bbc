package githubtest

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// maxJWTLifetime is the longest an app JWT may live: GitHub refuses an
// exp more than ten minutes after iat.
const maxJWTLifetime = 10 * time.Minute

// GitHub's messages for an app JWT it refuses.
const (
	msgJWTDecode  = "A JSON web token could not be decoded"
	msgJWTExpired = "'Expiration time' claim ('exp') must be a numeric value representing the future time at which the assertion expires"
	msgJWTTooLong = "'Expiration time' claim ('exp') is too far in the future"
	msgJWTIssued  = "'Issued at' claim ('iat') must be an Integer representing the time that the assertion was issued"
	msgJWTIssuer  = "'Issuer' claim ('iss') must be an Integer"
)

// verifyJWT checks an app JWT as GitHub does: RS256 signed with the app's
// key, issued by the app, not expired, issued in the past and living at
// most ten minutes. It returns GitHub's message for a refused one, "" for
// a good one.
func (s *Server) verifyJWT(header string) string {
	raw, ok := strings.CutPrefix(header, "Bearer ")
	if !ok {
		return msgJWTDecode
	}
	now := s.Now()
	claims := jwt.MapClaims{}
	_, err := jwt.ParseWithClaims(raw, claims, func(*jwt.Token) (any, error) { return &s.key.PublicKey, nil },
		jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(func() time.Time { return now }),
		jwt.WithExpirationRequired(), jwt.WithIssuedAt())
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return msgJWTExpired
	case errors.Is(err, jwt.ErrTokenUsedBeforeIssued):
		return msgJWTIssued
	case err != nil:
		return msgJWTDecode
	}
	exp, _ := claims.GetExpirationTime()
	iat, _ := claims.GetIssuedAt()
	if iat == nil {
		return msgJWTIssued
	}
	if exp.Sub(iat.Time) > maxJWTLifetime {
		return msgJWTTooLong
	}
	// GitHub takes the app id as a number or a string of it.
	var iss string
	switch v := claims["iss"].(type) {
	case string:
		iss = v
	case float64:
		iss = strconv.FormatFloat(v, 'f', -1, 64)
	}
	if iss != strconv.Itoa(AppID) {
		return msgJWTIssuer
	}
	return ""
}

// tokenInstallation is the live installation whose unexpired token the
// header carries ("token X" or "Bearer X").
func (s *Server) tokenInstallation(header string) (*installation, bool) {
	tok, ok := strings.CutPrefix(header, "token ")
	if !ok {
		tok, ok = strings.CutPrefix(header, "Bearer ")
	}
	if !ok {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.tokens[tok]
	if !ok || !s.clock().Before(t.expires) {
		return nil, false
	}
	in := s.insts[t.inst]
	if in == nil || in.deleted || in.suspended {
		return nil, false
	}
	return in, true
}

// createToken mints an installation access token, good for TokenTTL.
func (s *Server) createToken(q *request) {
	id, _ := strconv.ParseInt(q.r.PathValue("installation_id"), 10, 64)
	s.mu.Lock()
	in := s.insts[id]
	if in == nil || in.deleted {
		s.mu.Unlock()
		writeError(q.w, http.StatusNotFound, "Not Found")
		return
	}
	if in.suspended {
		s.mu.Unlock()
		writeError(q.w, http.StatusForbidden, "This installation has been suspended")
		return
	}
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	tok := "ghs_" + hex.EncodeToString(b)
	expires := s.clock().Add(s.ttl).UTC().Truncate(time.Second)
	s.tokens[tok] = token{inst: id, expires: expires}
	s.mu.Unlock()
	writeJSON(q.w, http.StatusCreated, map[string]any{
		"token": tok, "expires_at": expires.Format(time.RFC3339),
		"permissions":          map[string]string{"issues": "write", "pull_requests": "write", "contents": "read", "metadata": "read"},
		"repository_selection": "selected",
	})
}
