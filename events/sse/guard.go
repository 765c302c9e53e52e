package sse

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Guard admits only the requests of a page's owner to a local server: the
// page, its API and its event stream. Wrap a server's handler with it
// (Guard.Handler); webchat requires one.
//
// A web page the user visits can send requests to any address, their
// machine's included, and a DNS name it controls can point at 127.0.0.1.
// The Guard refuses:
//   - a Host other than localhost, 127.0.0.1, [::1] or one of Hosts
//     (DNS rebinding);
//   - a request without the Token: the page's URL carries it once
//     (?token=...), which the Guard turns into a cookie that browsers send
//     only with the page's own requests (SameSite=Strict, HttpOnly);
//     programs send "Authorization: Bearer TOKEN";
//   - a state-changing request (not GET or HEAD) from another origin, or
//     whose body is not application/json (what a cross-site form can
//     send), or larger than MaxBody.
//
// Serve it on a loopback address, with the timeouts of NewServer.
type Guard struct {
	// Token is the secret; NewGuard makes a random one.
	Token string
	// Hosts are Host values accepted besides the loopback names (a port
	// is ignored).
	Hosts []string
	// MaxBody bounds a request's body; 0 means 64 KiB.
	MaxBody int64
}

// bodyTimeout bounds the time to read a state-changing request's body.
const bodyTimeout = 30 * time.Second

// cookieName is the cookie that carries the token after the first visit.
const cookieName = "agentloop_token"

// NewGuard returns a Guard with a random 256-bit token.
func NewGuard() *Guard {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // crypto/rand never fails on supported systems
	return &Guard{Token: base64.RawURLEncoding.EncodeToString(b)}
}

// URL returns the address to open: base (like "http://127.0.0.1:8080/")
// with the token.
func (g *Guard) URL(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	q.Set("token", g.Token)
	u.RawQuery = q.Encode()
	return u.String()
}

// Handler returns next behind the guard.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostAllowed(r.Host) {
			http.Error(w, "this server answers only to localhost", http.StatusForbidden)
			return
		}
		if !g.authorized(w, r) {
			http.Error(w, "a token is required: open the address the server printed", http.StatusUnauthorized)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			if o := r.Header.Get("Origin"); o != "" && !sameOrigin(o, r.Host) {
				http.Error(w, "cross-origin requests are refused", http.StatusForbidden)
				return
			}
			if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
				http.Error(w, "the body must be application/json", http.StatusUnsupportedMediaType)
				return
			}
			max := g.MaxBody
			if max <= 0 {
				max = 64 << 10
			}
			r.Body = http.MaxBytesReader(w, r.Body, max)
			// A body must arrive in time (an event stream reads none).
			_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyTimeout))
		}
		next.ServeHTTP(w, r)
	})
}

func (g *Guard) hostAllowed(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.Trim(h, "[]")
	switch strings.ToLower(h) {
	case "localhost", "127.0.0.1", "::1":
		return true
	}
	for _, a := range g.Hosts {
		if strings.EqualFold(h, a) || strings.EqualFold(host, a) {
			return true
		}
	}
	return false
}

// authorized checks the token from the cookie, the Authorization header
// or, on a page load, the query; a valid query token becomes the cookie.
func (g *Guard) authorized(w http.ResponseWriter, r *http.Request) bool {
	if g.Token == "" {
		return false
	}
	if c, err := r.Cookie(cookieName); err == nil && g.matches(c.Value) {
		return true
	}
	if bearer, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok && g.matches(bearer) {
		return true
	}
	if r.Method == http.MethodGet && g.matches(r.URL.Query().Get("token")) {
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: g.Token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		return true
	}
	return false
}

func (g *Guard) matches(token string) bool {
	return token != "" && subtle.ConstantTimeCompare([]byte(token), []byte(g.Token)) == 1
}

func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// NewServer returns an http.Server for a local page with timeouts that
// keep half-sent requests and idle connections from piling up: 10 s to
// read a request's headers (the Guard gives a body 30 s), 2 minutes idle,
// 64 KiB of headers. It sets no read or write timeout on the connection as
// a whole, which would end event streams.
func NewServer(addr string, h http.Handler) *http.Server {
	return &http.Server{Addr: addr, Handler: h, ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
}
