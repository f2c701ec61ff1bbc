package console

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strings"
	"time"
)

const (
	sessionCookie = "weft_console"
	// loginCookie pairs the login form with its CSRF field (double submit):
	// there is no session yet to bind the token to.
	loginCookie = "weft_console_login"
	csrfField   = "csrf"
	sessionTTL  = 12 * time.Hour
)

// auth keeps sessions without storing them: a session cookie is its
// expiry and a random nonce, signed with a key derived from the token, so
// changing WEFT_API_TOKEN ends every session, and every replica accepts
// every other's cookies.
type auth struct {
	token [sha256.Size]byte // the token's hash, for constant-time checks
	key   []byte
	now   func() time.Time
}

func newAuth(token string) *auth {
	k := sha256.Sum256([]byte("weft console session key\x00" + token))
	return &auth{token: sha256.Sum256([]byte(token)), key: k[:], now: time.Now}
}

// validToken compares in constant time; both sides are hashed first so the
// length does not leak either.
func (a *auth) validToken(got string) bool {
	sum := sha256.Sum256([]byte(got))
	return got != "" && subtle.ConstantTimeCompare(sum[:], a.token[:]) == 1
}

func (a *auth) mac(parts ...string) []byte {
	m := hmac.New(sha256.New, a.key)
	for _, p := range parts {
		m.Write([]byte(p))
		m.Write([]byte{0})
	}
	return m.Sum(nil)
}

var b64 = base64.RawURLEncoding

// newSession returns a fresh session cookie value.
func (a *auth) newSession() string {
	var raw [24]byte
	binary.BigEndian.PutUint64(raw[:8], uint64(a.now().Add(sessionTTL).Unix()))
	_, _ = rand.Read(raw[8:])
	body := b64.EncodeToString(raw[:])
	return body + "." + b64.EncodeToString(a.mac("session", body))
}

// checkSession reports whether v is a session this key signed that has not
// expired.
func (a *auth) checkSession(v string) bool {
	body, sig, ok := strings.Cut(v, ".")
	if !ok {
		return false
	}
	got, err := b64.DecodeString(sig)
	if err != nil || !hmac.Equal(got, a.mac("session", body)) {
		return false
	}
	raw, err := b64.DecodeString(body)
	if err != nil || len(raw) != 24 {
		return false
	}
	return a.now().Unix() < int64(binary.BigEndian.Uint64(raw[:8]))
}

// csrf is the CSRF token of a session: bound to it, so it cannot be
// carried over to another operator's session.
func (a *auth) csrf(session string) string { return b64.EncodeToString(a.mac("csrf", session)) }

type csrfKey struct{}

// csrfToken is the CSRF token of the request's session, for forms.
func csrfToken(ctx context.Context) string {
	s, _ := ctx.Value(csrfKey{}).(string)
	return s
}

// require lets through only requests with a valid session, and of those
// only POSTs that carry its CSRF token. A page asked for without a
// session is sent to the login form.
func (a *auth) require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ck, err := r.Cookie(sessionCookie)
		if err != nil || !a.checkSession(ck.Value) {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "not logged in", http.StatusUnauthorized)
			return
		}
		want := a.csrf(ck.Value)
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if subtle.ConstantTimeCompare([]byte(r.PostFormValue(csrfField)), []byte(want)) != 1 {
				http.Error(w, "missing or invalid CSRF token", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), csrfKey{}, want)))
	})
}

// secure reports whether the operator reached weft over TLS, directly or
// through a proxy that says so.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value, path string, maxAge time.Duration) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: int(maxAge.Seconds()),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r),
	})
}

func clearCookie(w http.ResponseWriter, r *http.Request, name, path string) {
	http.SetCookie(w, &http.Cookie{
		Name: name, Value: "", Path: path, MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: secure(r),
	})
}

// loginPage shows the login form; with ?token= (the link `weft demo`
// prints) it logs in at once, as Jupyter's does.
func (c *Console) loginPage(w http.ResponseWriter, r *http.Request) {
	if tok := r.URL.Query().Get("token"); tok != "" {
		if !c.auth.validToken(tok) {
			c.showLogin(w, r, http.StatusUnauthorized, "That token is not this server's WEFT_API_TOKEN.")
			return
		}
		c.startSession(w, r)
		return
	}
	c.showLogin(w, r, http.StatusOK, "")
}

func (c *Console) showLogin(w http.ResponseWriter, r *http.Request, status int, problem string) {
	var raw [24]byte
	_, _ = rand.Read(raw[:])
	nonce := b64.EncodeToString(raw[:])
	setCookie(w, r, loginCookie, nonce, Prefix+"/login", time.Hour)
	c.render(w, r, status, "login", loginView{CSRF: nonce, Problem: problem})
}

type loginView struct {
	CSRF    string
	Problem string
}

func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	ck, err := r.Cookie(loginCookie)
	if err != nil || ck.Value == "" ||
		subtle.ConstantTimeCompare([]byte(r.PostFormValue(csrfField)), []byte(ck.Value)) != 1 {
		c.showLogin(w, r, http.StatusForbidden, "The form expired; try again.")
		return
	}
	if !c.auth.validToken(r.PostFormValue("token")) {
		c.showLogin(w, r, http.StatusUnauthorized, "That token is not this server's WEFT_API_TOKEN.")
		return
	}
	clearCookie(w, r, loginCookie, Prefix+"/login")
	c.startSession(w, r)
}

func (c *Console) startSession(w http.ResponseWriter, r *http.Request) {
	setCookie(w, r, sessionCookie, c.auth.newSession(), Prefix, sessionTTL)
	http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	clearCookie(w, r, sessionCookie, Prefix)
	http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
}
