package webchat

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// Guard admits only the requests of a page's owner to a local server: the
// page, its API and its event stream. Handler requires one, and wraps the
// page with it; wrap any other handler of the same server with
// Guard.Handler.
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
//     send);
//   - a body declared larger than MaxBody (one that turns out larger
//     stops there).
//
// Every refusal is answered at once and closes the connection, whatever
// body the request declared: the server never waits for a body it will
// not read. So does any answer the guarded handler gives before reading
// the body to its end (a 405 from a ServeMux, say); a body it does read
// must arrive within BodyTimeout.
//
// Serve it on a loopback address, with the timeouts of NewServer.
type Guard struct {
	// Token is the secret; NewGuard makes a random one.
	Token string
	// Hosts are Host values accepted besides the loopback names (a port
	// is ignored).
	Hosts []string
	// MaxBody bounds a request's body; 0 means DefaultMaxBody.
	MaxBody int64
	// BodyTimeout bounds the time to read a request's body, from when
	// the Guard admits it; 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
}

// Defaults for a Guard's bounds.
const (
	DefaultMaxBody     = 64 << 10
	DefaultBodyTimeout = 30 * time.Second
)

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

// The texts of the Guard's refusals.
const (
	refusedHost   = "this server answers only to localhost"
	refusedToken  = "a token is required: open the address the server printed"
	refusedOrigin = "cross-origin requests are refused"
	refusedType   = "the body must be application/json"
	refusedSize   = "the body is larger than %d bytes"
)

// Handler returns next behind the guard.
func (g *Guard) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		max := g.MaxBody
		if max <= 0 {
			max = DefaultMaxBody
		}
		switch {
		case !g.hostAllowed(r.Host):
			refuse(w, refusedHost, http.StatusForbidden)
			return
		case !g.authorized(w, r):
			refuse(w, refusedToken, http.StatusUnauthorized)
			return
		case r.Method != http.MethodGet && r.Method != http.MethodHead && !sameOrigin(r.Header.Get("Origin"), r.Host):
			refuse(w, refusedOrigin, http.StatusForbidden)
			return
		case r.Method != http.MethodGet && r.Method != http.MethodHead && !isJSON(r.Header.Get("Content-Type")):
			refuse(w, refusedType, http.StatusUnsupportedMediaType)
			return
		case r.ContentLength > max:
			refuse(w, fmt.Sprintf(refusedSize, max), http.StatusRequestEntityTooLarge)
			return
		}
		if r.ContentLength == 0 {
			next.ServeHTTP(w, r)
			return
		}
		// A body: bounded in bytes and in time, and an answer that does
		// not wait for the part of it the handler leaves.
		timeout := g.BodyTimeout
		if timeout <= 0 {
			timeout = DefaultBodyTimeout
		}
		_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(timeout))
		body := &watchedBody{ReadCloser: http.MaxBytesReader(w, r.Body, max)}
		r.Body = body
		defer func() {
			if !body.eof.Load() {
				abandonBody(w)
			}
		}()
		next.ServeHTTP(&closeUnread{ResponseWriter: w, body: body}, r)
	})
}

// refuse answers a request with an error at once and closes the
// connection: the server does not first wait for a body the request
// declared and never sent.
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	http.Error(w, msg, code)
	abandonBody(w)
}

// abandonBody bounds the time the server goes on reading the rest of a
// request's body (up to 256 KiB, which it does after the answer went out
// and before it closes the connection) to bodyGrace: a client that sends
// its body gets the answer rather than a reset connection, and one that
// never sends it does not hold the connection open.
func abandonBody(w http.ResponseWriter) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(bodyGrace))
}

// bodyGrace is how long a refused request's body may go on arriving.
const bodyGrace = 500 * time.Millisecond

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && mt == "application/json"
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

// sameOrigin reports whether a request's Origin (none counts) is the
// server's own.
func sameOrigin(origin, host string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && strings.EqualFold(u.Host, host)
}

// watchedBody is a request body that knows whether it was read to its end.
type watchedBody struct {
	io.ReadCloser
	eof atomic.Bool
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof.Store(true)
	}
	return n, err
}

// closeUnread is a response that closes the connection when it starts
// before the handler read the request's body to its end: the server would
// otherwise wait for the rest of a body that may never come before it
// answers.
type closeUnread struct {
	http.ResponseWriter
	body    *watchedBody
	started bool
}

func (w *closeUnread) WriteHeader(code int) {
	if !w.started && code >= 200 {
		w.started = true
		if !w.body.eof.Load() {
			w.Header().Set("Connection", "close")
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *closeUnread) Write(p []byte) (int, error) {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(p)
}

// Flush and FlushError serve http.Flusher and http.ResponseController.
func (w *closeUnread) Flush() { _ = w.FlushError() }

func (w *closeUnread) FlushError() error {
	if !w.started {
		w.WriteHeader(http.StatusOK)
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap serves http.ResponseController's other methods.
func (w *closeUnread) Unwrap() http.ResponseWriter { return w.ResponseWriter }
