package webchat_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/agentloop/agentloop/events/sse/webchat"
)

// TestGuard: hosts, the token (query once, then the cookie; or a bearer
// header), origins, content types and body size, each with the status a
// request gets.
func TestGuard(t *testing.T) {
	g := webchat.NewGuard()
	g.Hosts = []string{"box.internal"}
	if len(g.Token) < 40 || webchat.NewGuard().Token == g.Token {
		t.Fatalf("token %q is not a fresh random secret", g.Token)
	}
	ok := g.Handler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		}
	}))
	bearer := "Bearer " + g.Token
	for _, tc := range []struct {
		name                                   string
		method, target, host, origin, ct, auth string
		body                                   string
		want                                   int
	}{
		{"localhost", "GET", "/", "localhost:8080", "", "", bearer, "", 200},
		{"ipv6 loopback", "GET", "/", "[::1]:8080", "", "", bearer, "", 200},
		{"an extra host", "GET", "/", "box.internal:9", "", "", bearer, "", 200},
		{"a rebound name", "GET", "/", "evil.example", "", "", bearer, "", 403},
		{"no token", "GET", "/", "127.0.0.1", "", "", "", "", 401},
		{"query token on a page load", "GET", "/?token=" + g.Token, "127.0.0.1", "", "", "", "", 200},
		{"query token on a post", "POST", "/api/send?token=" + g.Token, "127.0.0.1", "", "application/json", "", "{}", 401},
		{"same-origin JSON post", "POST", "/api/send", "127.0.0.1:1", "http://127.0.0.1:1", "application/json; charset=utf-8", bearer, "{}", 200},
		{"cross-origin post", "POST", "/api/send", "127.0.0.1:1", "http://evil.example", "application/json", bearer, "{}", 403},
		{"form post", "POST", "/api/send", "127.0.0.1:1", "", "application/x-www-form-urlencoded", bearer, "a=b", 415},
		{"large body", "POST", "/api/send", "127.0.0.1:1", "", "application/json", bearer, strings.Repeat("x", 70<<10), 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			r.Host = tc.host
			for k, v := range map[string]string{"Origin": tc.origin, "Content-Type": tc.ct, "Authorization": tc.auth} {
				if v != "" {
					r.Header.Set(k, v)
				}
			}
			w := httptest.NewRecorder()
			ok.ServeHTTP(w, r)
			if w.Code != tc.want {
				t.Fatalf("status %d, want %d: %s", w.Code, tc.want, w.Body)
			}
		})
	}
	// The query token becomes a cookie that later requests carry.
	w := httptest.NewRecorder()
	first := httptest.NewRequest("GET", "/?token="+g.Token, nil)
	first.Host = "127.0.0.1:8080"
	ok.ServeHTTP(w, first)
	cookies := w.Result().Cookies()
	if len(cookies) != 1 || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteStrictMode {
		t.Fatalf("cookies %+v", cookies)
	}
	r := httptest.NewRequest("GET", "/api/events", nil)
	r.Host = "127.0.0.1:8080"
	r.AddCookie(cookies[0])
	w = httptest.NewRecorder()
	ok.ServeHTTP(w, r)
	if w.Code != 200 {
		t.Fatalf("with the cookie: %d", w.Code)
	}
	if got := g.URL("http://127.0.0.1:8080/"); got != "http://127.0.0.1:8080/?token="+g.Token {
		t.Fatalf("URL %s", got)
	}
}
