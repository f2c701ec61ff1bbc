package lineartest

import (
	"net/http"

	"github.com/google/uuid"
)

// tokenLifetime is Linear's access token lifetime in seconds (24 h less one
// second, as Linear sends it).
const tokenLifetime = 86399

// handleToken is Linear's OAuth token endpoint: authorization codes and
// refresh tokens for a token pair; each refresh rotates the refresh token.
// Linear's 30-minute replay grace for refresh tokens is not modelled.
func (s *Server) handleToken(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, oauthError("invalid_request", err.Error()))
		return
	}
	id, secret, basic := r.BasicAuth()
	if !basic {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if id != ClientID || secret != ClientSecret {
		writeJSON(w, http.StatusUnauthorized, oauthError("invalid_client", "Client authentication failed"))
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	org := ""
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		code := r.PostForm.Get("code")
		redirect, ok := s.codes[code]
		if !ok || redirect != r.PostForm.Get("redirect_uri") {
			writeJSON(w, http.StatusBadRequest, oauthError("invalid_grant", "The authorization code is invalid or expired"))
			return
		}
		delete(s.codes, code)
		org = OrganizationID
	case "refresh_token":
		rt := r.PostForm.Get("refresh_token")
		var ok bool
		if org, ok = s.refreshTokens[rt]; !ok {
			writeJSON(w, http.StatusBadRequest, oauthError("invalid_grant", "The refresh token is invalid"))
			return
		}
		delete(s.refreshTokens, rt)
	default:
		writeJSON(w, http.StatusBadRequest, oauthError("unsupported_grant_type", "Unsupported grant type"))
		return
	}
	access, refresh := "lin_oauth_"+uuid.NewString(), "lin_refresh_"+uuid.NewString()
	s.tokens[access] = org
	s.refreshTokens[refresh] = org
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": access, "token_type": "Bearer", "expires_in": tokenLifetime,
		"scope": "read write app:assignable app:mentionable", "refresh_token": refresh,
	})
}

func oauthError(code, description string) map[string]string {
	return map[string]string{"error": code, "error_description": description}
}
